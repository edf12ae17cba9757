//! Shell completions and man pages, both generated from the clap tree of `cli.rs`.
//!
//! The completion scripts for bash, zsh and fish are small and the same in spirit: they
//! hand the words typed so far to a hidden entry point, `git-loop __complete -- WORD...`
//! (the last word is the one being completed), which walks the real command tree with
//! clap's own introspection and prints the candidates. So the flags, subcommands and enum
//! values offered are always the binary's own, and the names that live in the workspace
//! (loop ids, vaults, sandbox profiles) are read when TAB is pressed. Hidden commands are
//! never offered. Where an argument is a path, the entry point prints `:files` (or
//! `:dirs`) and the shell completes file names itself.
//!
//! Why the scripts are written here rather than by clap_complete: its static scripts
//! offer hidden commands and cannot know the workspace's names, and its dynamic engine is
//! behind an unstable feature whose bash registration defines no `_git_loop`, which is
//! the function git's own completion calls for `git loop ...`. The walk below is still
//! clap's: it reads the same `Command` that parses the command line. elvish and
//! powershell get clap_complete's static scripts.

use std::path::PathBuf;

use clap::builder::ValueHint;
use clap::{Arg, Command};
use clap_complete::Shell;

use crate::error::{Context, Error, Result};
use crate::ui::Ui;

const BASH: &str = include_str!("../../templates/completion.bash");
const ZSH: &str = include_str!("../../templates/completion.zsh");
const FISH: &str = include_str!("../../templates/completion.fish");

/// Print a shell completion script (bash, zsh, fish, elvish, powershell).
///
/// `scripts/install` puts them where the shells find them. By hand:
/// bash: `git loop completions bash > ~/.local/share/bash-completion/completions/git-loop`;
/// zsh: `git loop completions zsh > DIR/_git-loop` with DIR in $fpath;
/// fish: `git loop completions fish > ~/.config/fish/completions/git-loop.fish`.
/// The bash script completes `git loop ...` (through git's own completion) and `git-loop ...`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    pub shell: Shell,
}

/// Print the man page of `git loop` (roff), or write a page per command.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write every page (git-loop.1, git-loop-new.1, ...) into this folder, made if missing.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The candidates for the last of the words typed after `git-loop` (or `git loop`).
#[derive(Debug, clap::Args)]
pub struct CompleteArgs {
    /// The words after the command's name; the last is the one being completed.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

pub fn run(ui: &mut Ui, args: CompletionsArgs) -> Result<u8> {
    let mut buf = Vec::new();
    completion(args.shell, &mut buf);
    ui.out().write_all(&buf)?;
    Ok(0)
}

/// The completion script for `shell`, as shipped in `completions/`.
pub fn completion(shell: Shell, out: &mut Vec<u8>) {
    match shell {
        Shell::Bash => out.extend_from_slice(BASH.as_bytes()),
        Shell::Zsh => out.extend_from_slice(ZSH.as_bytes()),
        Shell::Fish => out.extend_from_slice(FISH.as_bytes()),
        // clap's static scripts (elvish, powershell).
        other => {
            let mut cmd = crate::cli::command();
            clap_complete::generate(other, &mut cmd, "git-loop", out);
        }
    }
}

/// The man pages: `(file name, roff)` for `git-loop.1` and one page per command that is
/// not hidden, nested ones included (`git-loop-vault-set.1`), as shipped in `man/`.
pub fn man_pages() -> Result<Vec<(String, Vec<u8>)>> {
    fn walk(cmd: Command, out: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
        let man = clap_mangen::Man::new(cmd.clone());
        let mut buf = Vec::new();
        man.render(&mut buf)
            .map_err(|e| Error::failure("cannot render the man pages").with_source(e))?;
        out.push((man.get_filename(), buf));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub.clone(), out)?;
        }
        Ok(())
    }
    // As clap_mangen::generate_to does: `help` has no page of its own (`git loop help X`
    // is `git loop X --help`), and the tree is built so every page knows its full name.
    let mut cmd = crate::cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(cmd, &mut out)?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

pub fn run_man(ui: &mut Ui, args: ManArgs) -> Result<u8> {
    let pages = man_pages()?;
    let Some(dir) = args.dir else {
        let (_, root) = pages
            .iter()
            .find(|(name, _)| name == "git-loop.1")
            .expect("the root page");
        ui.out().write_all(root)?;
        return Ok(0);
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        Error::failure(format!("cannot create {}", dir.display()))
            .with_source(e)
            .hint("give a folder you can write to: git loop man --dir DIR")
    })?;
    for (name, roff) in &pages {
        let path = dir.join(name);
        std::fs::write(&path, roff).context(|| format!("cannot write {}", path.display()))?;
    }
    ui.status(format!(
        "wrote {} man pages to {}",
        pages.len(),
        dir.display()
    ))?;
    Ok(0)
}

/// What a word may be completed with.
#[derive(Debug, PartialEq, Eq)]
pub enum Candidates {
    Words(Vec<String>),
    /// A path: the shell completes file names.
    Files,
    /// A folder: the shell completes folder names.
    Dirs,
}

pub fn run_complete(ui: &mut Ui, args: CompleteArgs) -> Result<u8> {
    match candidates(&args.words) {
        Candidates::Files => writeln!(ui.out(), ":files")?,
        Candidates::Dirs => writeln!(ui.out(), ":dirs")?,
        Candidates::Words(words) => {
            for w in words {
                writeln!(ui.out(), "{w}")?;
            }
        }
    }
    Ok(0)
}

/// The candidates for the last of `words` (the words after `git-loop`; the last one is
/// being completed and may be empty), read from the command tree as clap parses it: a
/// subcommand, then options (which may take a value: the next word, or `--name=value`)
/// and positionals in order, `--` ending the options.
pub fn candidates(words: &[String]) -> Candidates {
    let mut root = crate::cli::command();
    // Built, so that global options and --help are on every subcommand.
    root.build();
    let (cur, before) = match words.split_last() {
        Some((cur, before)) => (cur.as_str(), before),
        None => ("", &[][..]),
    };
    let mut cmd = &root;
    let mut help = false;
    let mut positionals = 0usize;
    let mut pending: Option<&Arg> = None;
    let mut options_ended = false;
    for word in before {
        if pending.take().is_some() {
            continue;
        }
        if !options_ended && word == "--" {
            options_ended = true;
            continue;
        }
        if !options_ended && word.len() > 1 && word.starts_with('-') {
            pending = option_awaiting_value(cmd, word);
            continue;
        }
        if positionals == 0 && cmd.has_subcommands() && !options_ended {
            if !help && word == "help" && cmd.find_subcommand("help").is_some() {
                help = true;
                continue;
            }
            if let Some(sub) = cmd.find_subcommand(word) {
                cmd = sub;
                continue;
            }
        }
        positionals += 1;
    }
    let filter = |all: Vec<String>| {
        Candidates::Words(all.into_iter().filter(|c| c.starts_with(cur)).collect())
    };
    if help {
        // `git loop help vault set`: only commands.
        return filter(if positionals == 0 {
            subcommand_names(cmd)
        } else {
            Vec::new()
        });
    }
    if let Some(arg) = pending {
        return values(arg, cmd, "", cur);
    }
    if !options_ended && cur.starts_with("--") {
        if let Some((name, _)) = cur.split_once('=') {
            return match long(cmd, &name[2..]) {
                Some(arg) => values(arg, cmd, &format!("{name}="), cur),
                None => Candidates::Words(Vec::new()),
            };
        }
    }
    if !options_ended && cur.starts_with('-') {
        return filter(option_names(cmd));
    }
    if positionals == 0 && cmd.has_subcommands() && !options_ended {
        // `agent ID` or `agent login`: a command may take either.
        let mut all = subcommand_names(cmd);
        if let Some(Candidates::Words(first)) = positional(cmd, 0).map(|a| values(a, cmd, "", "")) {
            all.extend(first);
        }
        return filter(all);
    }
    match positional(cmd, positionals) {
        Some(arg) => values(arg, cmd, "", cur),
        None => Candidates::Words(Vec::new()),
    }
}

/// The option a word names (`--net`, `-m`, `-qm`) when its value is the next word.
fn option_awaiting_value<'a>(cmd: &'a Command, word: &str) -> Option<&'a Arg> {
    if let Some(name) = word.strip_prefix("--") {
        if name.contains('=') {
            return None;
        }
        return long(cmd, name).filter(|a| takes_value(a));
    }
    let shorts: Vec<char> = word[1..].chars().collect();
    for (i, c) in shorts.iter().enumerate() {
        let arg = cmd.get_arguments().find(|a| a.get_short() == Some(*c))?;
        if takes_value(arg) {
            // `-mMESSAGE` holds its value; `-m` takes the next word.
            return (i + 1 == shorts.len()).then_some(arg);
        }
    }
    None
}

fn long<'a>(cmd: &'a Command, name: &str) -> Option<&'a Arg> {
    cmd.get_arguments().find(|a| {
        a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|v| v.contains(&name))
    })
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.takes_values())
}

fn subcommand_names(cmd: &Command) -> Vec<String> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

fn option_names(cmd: &Command) -> Vec<String> {
    let mut names: Vec<String> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    names.sort();
    names
}

/// The positional that the `n`th positional word fills (the last one takes the rest when
/// it takes many).
fn positional(cmd: &Command, n: usize) -> Option<&Arg> {
    let all: Vec<&Arg> = cmd.get_positionals().collect();
    all.get(n).copied().or_else(|| {
        all.last()
            .copied()
            .filter(|a| a.get_num_args().is_some_and(|r| r.max_values() > 1))
    })
}

/// What a value of `arg` may be, each prefixed with `prefix` (`--net=`) and starting
/// with `cur`. The names that live in the workspace are read without creating anything:
/// completing must never make a workspace.
fn values(arg: &Arg, cmd: &Command, prefix: &str, cur: &str) -> Candidates {
    let possible: Vec<String> = arg
        .get_possible_values()
        .into_iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    let all = if !possible.is_empty() {
        possible
    } else {
        match (arg.get_id().as_str(), cmd.get_name()) {
            ("id" | "ids", _) => workspace_names(|ws| ws.loop_ids().ok()),
            ("vault", _) => workspace_names(|ws| crate::vault::Vault::names(ws).ok()),
            ("sandbox", _) => workspace_names(|ws| Some(crate::config::profile::names(ws))),
            ("key", "get" | "set" | "unset") => crate::config::schema::known_keys()
                .iter()
                .map(|k| k.to_string())
                .collect(),
            _ => match arg.get_value_hint() {
                ValueHint::DirPath => return Candidates::Dirs,
                ValueHint::AnyPath
                | ValueHint::FilePath
                | ValueHint::ExecutablePath
                | ValueHint::CommandName
                | ValueHint::CommandWithArguments => return Candidates::Files,
                _ => Vec::new(),
            },
        }
    };
    Candidates::Words(
        all.into_iter()
            .map(|v| format!("{prefix}{v}"))
            .filter(|v| v.starts_with(cur))
            .collect(),
    )
}

fn workspace_names(
    read: impl Fn(&crate::workspace::Workspace) -> Option<Vec<String>>,
) -> Vec<String> {
    crate::workspace::Workspace::from_env()
        .ok()
        .filter(|ws| ws.root().is_dir())
        .and_then(|ws| read(&ws))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        let mut w: Vec<String> = line.split(' ').map(str::to_string).collect();
        if line.is_empty() {
            w = vec![String::new()];
        }
        w
    }

    fn complete(line: &str) -> Vec<String> {
        match candidates(&words(line)) {
            Candidates::Words(w) => w,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn commands_and_never_the_hidden_ones() {
        let all = complete("");
        for c in ["new", "review", "rm", "vault", "help"] {
            assert!(all.contains(&c.to_string()), "{c}: {all:?}");
        }
        for hidden in ["__connect", "__complete", "hook", "man"] {
            assert!(!all.contains(&hidden.to_string()), "{hidden}");
        }
        assert_eq!(complete("re"), ["review"]);
        assert_eq!(complete("vault rek"), ["rekey"]);
        assert_eq!(complete("agent lo"), ["login"]);
        assert_eq!(complete("help vault re"), ["recipients", "rekey"]);
    }

    #[test]
    fn options_and_their_values() {
        assert_eq!(complete("run x --ne"), ["--net"]);
        assert_eq!(complete("run x --net "), ["host", "none", "proxy"]);
        assert_eq!(complete("run x --net=p"), ["--net=proxy"]);
        assert_eq!(complete("--color n"), ["never"]);
        assert!(complete("new --").contains(&"--quiet".to_string()));
        assert_eq!(complete("completions f"), ["fish"]);
        assert_eq!(complete("config get network.m"), ["network.mode"]);
        // An option's value is not a positional.
        assert_eq!(complete("run --net none x --backend n"), ["none"]);
        assert_eq!(complete("merge x -m msg --sq"), ["--squash"]);
    }

    #[test]
    fn paths_are_left_to_the_shell() {
        assert_eq!(candidates(&words("grant x --ro ")), Candidates::Files);
        assert_eq!(candidates(&words("man --dir ")), Candidates::Files);
        assert_eq!(candidates(&words("run x -- ma")), Candidates::Files);
    }
}
