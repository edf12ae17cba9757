//! The candidates `git-loop __complete` prints for the shells' completion scripts: the
//! real command tree walked with clap's own introspection (subcommands, options, enum
//! values, never a hidden command), and the names that live in the workspace (loop ids,
//! vaults, sandbox profiles) read when TAB is pressed. See `commands/completions.rs` for
//! why the scripts are written here rather than by clap_complete.

use clap::builder::ValueHint;
use clap::{Arg, Command};

/// What a word may be completed with.
#[derive(Debug, PartialEq, Eq)]
pub enum Candidates {
    Words(Vec<String>),
    /// A path: the shell completes file names.
    Files,
    /// A folder: the shell completes folder names.
    Dirs,
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
            ("group", _) => workspace_names(|ws| {
                crate::fanout::groups(ws)
                    .ok()
                    .map(|g| g.into_iter().map(|(name, _)| name).collect())
            }),
            ("vault", _) => {
                workspace_names(|ws| crate::vault::Vault::names(ws).ok().map(|(names, _)| names))
            }
            ("action", "recipients") => ["list", "add", "rm", "accept", "refuse"]
                .map(String::from)
                .to_vec(),
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
        assert_eq!(complete("re"), ["rebase", "review"]);
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
        assert_eq!(complete("vault recipients a"), ["add", "accept"]);
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
