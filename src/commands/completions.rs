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

use clap::Command;
use clap_complete::Shell;

use crate::cli::completion::{candidates, Candidates};
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
        let buf = man_page(&cmd)
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

/// One page, as clap_mangen renders one, with an EXAMPLES section (the examples the
/// command's long help ends with: `crate::cli::examples`) before what else that help says.
fn man_page(cmd: &Command) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut w = Vec::new();
    man.render_title(&mut w)?;
    man.render_name_section(&mut w)?;
    man.render_synopsis_section(&mut w)?;
    man.render_description_section(&mut w)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut w)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut w)?;
    }
    let after = cmd
        .get_after_long_help()
        .or_else(|| cmd.get_after_help())
        .map(|t| t.to_string());
    let (examples, rest) = match after {
        Some(text) => crate::cli::examples::split(&text),
        None => (None, None),
    };
    if let Some(examples) = examples {
        w.extend_from_slice(b".SH EXAMPLES\n.RS 4\n.nf\n");
        for line in examples.lines() {
            w.extend_from_slice(roff_line(line).as_bytes());
            w.push(b'\n');
        }
        w.extend_from_slice(b".fi\n.RE\n");
    }
    if let Some(rest) = rest {
        clap_mangen::Man::new(cmd.clone().after_help(rest.clone()).after_long_help(rest))
            .render_extra_section(&mut w)?;
    }
    if cmd
        .get_version()
        .or_else(|| cmd.get_long_version())
        .is_some()
    {
        man.render_version_section(&mut w)?;
    }
    Ok(w)
}

/// A line of text as roff shows it verbatim: backslashes and minus signs escaped (a plain
/// `-` may be typeset as a hyphen, which a pasted `--flag` would not survive), and a line
/// that would start with a control character made text.
fn roff_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    if line.starts_with('.') || line.starts_with('\'') {
        out.push_str("\\&");
    }
    for c in line.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            c => out.push(c),
        }
    }
    out
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
