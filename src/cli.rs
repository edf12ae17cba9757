//! The command tree (clap derive) and the one dispatch `match`. Help, the man page and
//! the shell completions are all generated from these definitions.

use clap::{CommandFactory, Parser, Subcommand};

use crate::commands;
use crate::error::Result;
use crate::ui::{ColorWhen, Ui};

/// Give every piece of agent work its own loop: a branch and working tree of the code,
/// per-loop branches of the team's notes, a credential vault and a sandbox.
#[derive(Debug, Parser)]
#[command(
    name = "git-loop",
    bin_name = "git loop",
    version,
    propagate_version = true,
    max_term_width = 100,
    after_help = "Exit codes: 0 ok, 1 error, 2 usage, 3 sandbox unavailable.\n\
                  The workspace is $GIT_LOOP_HOME (default: $XDG_DATA_HOME/git-loop)."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// The options every command takes.
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// When to use colors: auto (on a terminal, unless NO_COLOR), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,

    /// Print less: no status lines.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

/// Parses a command line (the program name first).
///
/// `git loop run` is paid on every sandboxed command, and clap building even a
/// one-command tree costs a tenth of a millisecond: the plain forms of `run` are read by
/// [`fast_run`]. Anything it is not sure of (help, a mistake, an unusual spelling) goes to
/// the full tree, so every message, and every meaning, is the full tree's.
pub fn parse_from(args: Vec<std::ffi::OsString>) -> std::result::Result<Cli, clap::Error> {
    if let Some(cli) = fast_run(&args) {
        return Ok(cli);
    }
    Cli::try_parse_from(args)
}

/// `git-loop run [OPTIONS] ID [--] CMD...` with the options of [`GlobalArgs`] and
/// [`commands::run::RunArgs`], each spelled `--name value`, `--name=value` or `-q`; `None`
/// for anything else. The values are read by the options' own `ValueEnum`s; the tests
/// check, over every combination of a vocabulary of words, that whatever this accepts
/// clap parses the same.
fn fast_run(args: &[std::ffi::OsString]) -> Option<Cli> {
    use clap::ValueEnum;
    fn value<T: ValueEnum>(v: &str) -> Option<T> {
        T::from_str(v, false).ok()
    }
    fn once<T>(slot: &mut Option<T>, v: Option<T>) -> Option<()> {
        if slot.is_some() {
            return None;
        }
        *slot = Some(v?);
        Some(())
    }
    let words: Vec<&str> = args.iter().map(|a| a.to_str()).collect::<Option<_>>()?;
    let (&"run", rest) = words.get(1..)?.split_first()? else {
        return None;
    };
    let (mut color, mut quiet, mut print_argv) = (None, None, None);
    let (mut mode, mut net, mut backend) = (None, None, None);
    let mut allow_domain = Vec::new();
    let mut id: Option<&str> = None;
    let mut i = 0;
    let command: Vec<String> = loop {
        let word = *rest.get(i)?;
        i += 1;
        if word == "--" {
            // Before the loop's id, `--` would make the id a positional after it.
            id?;
            break rest[i..].iter().map(|w| w.to_string()).collect();
        }
        if !word.starts_with('-') {
            if id.is_none() {
                id = Some(word);
                continue;
            }
            let command = &rest[i - 1..];
            // A later `--` among the command's words: leave its meaning to clap.
            if command.contains(&"--") {
                return None;
            }
            break command.iter().map(|w| w.to_string()).collect();
        }
        if word == "-q" || word == "--quiet" {
            once(&mut quiet, Some(true))?;
            continue;
        }
        if word == "--print-argv" {
            once(&mut print_argv, Some(true))?;
            continue;
        }
        let (name, val) = match word.split_once('=') {
            Some((name, val)) => (name, val),
            None => {
                let val = *rest.get(i)?;
                i += 1;
                (word, val)
            }
        };
        if val.is_empty() || val.starts_with('-') {
            return None;
        }
        match name {
            "--color" => once(&mut color, value(val))?,
            "--mode" => once(&mut mode, value(val))?,
            "--net" => once(&mut net, value(val))?,
            "--backend" => once(&mut backend, value(val))?,
            "--allow-domain" => allow_domain.push(val.to_string()),
            _ => return None,
        }
    };
    if command.is_empty() {
        return None;
    }
    Some(Cli {
        global: GlobalArgs {
            color: color.unwrap_or_default(),
            quiet: quiet.unwrap_or(false),
        },
        command: Command::Run(commands::run::RunArgs {
            id: id?.to_string(),
            sandbox: commands::SandboxFlags {
                mode,
                net,
                allow_domain,
                backend,
            },
            print_argv: print_argv.unwrap_or(false),
            command,
        }),
    })
}

/// `git loop help CMD...` on a terminal shows the command's man page (`git-loop-CMD(1)`)
/// when man finds one, as `git help` does; anywhere else, or without the page, clap's
/// help text. Returns man's exit code when it showed the page.
pub fn help_page(args: &[std::ffi::OsString]) -> Option<u8> {
    use std::io::IsTerminal;
    let words: Vec<&str> = args.iter().map(|a| a.to_str()).collect::<Option<_>>()?;
    let (&"help", path) = words.get(1..)?.split_first()? else {
        return None;
    };
    if path.is_empty() || !std::io::stdout().is_terminal() {
        return None;
    }
    let mut cmd = &command();
    let mut page = String::from("git-loop");
    for word in path {
        cmd = cmd
            .get_subcommands()
            .find(|s| s.get_name() == *word && !s.is_hide_set())?;
        page.push('-');
        page.push_str(word);
    }
    // `man -w` says whether the page is there without showing anything.
    let found = std::process::Command::new("man")
        .args(["-w", &page])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        return None;
    }
    let status = std::process::Command::new("man").arg(&page).status().ok()?;
    Some(status.code().map_or(1, |c| c.clamp(0, 255) as u8))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Init(commands::init::InitArgs),
    New(commands::new::NewArgs),
    List(commands::list::ListArgs),
    Show(commands::show::ShowArgs),
    Rm(commands::rm::RmArgs),
    Gc(commands::gc::GcArgs),
    Config(commands::config::ConfigArgs),
    Run(commands::run::RunArgs),
    Shell(commands::shell::ShellArgs),
    Grant(commands::grant::GrantArgs),
    Agent(commands::agent::AgentArgs),
    Log(commands::log::LogArgs),
    Vault(commands::vault::VaultArgs),
    Publish(commands::publish::PublishArgs),
    Merge(commands::merge::MergeArgs),
    Review(commands::review::ReviewArgs),
    Pr(commands::pr::PrArgs),
    Sync(commands::sync::SyncArgs),
    Distill(commands::distill::DistillArgs),
    Autocommit(commands::autocommit::AutocommitArgs),
    Cron(commands::cron::CronArgs),
    Hooks(commands::hooks::HooksArgs),
    Doctor(commands::doctor::DoctorArgs),
    Demo(commands::demo::DemoArgs),
    Completions(commands::completions::CompletionsArgs),
    #[command(hide = true)]
    Man(commands::completions::ManArgs),
    /// The completion scripts' source of candidates (see commands/completions.rs).
    #[command(name = "__complete", hide = true)]
    Complete(commands::completions::CompleteArgs),
    /// ssh's ProxyCommand inside a proxy-mode sandbox.
    #[command(name = "__connect", hide = true)]
    Connect(commands::relay::ConnectArgs),
    #[command(hide = true)]
    Hook(commands::hook::HookArgs),
}

pub fn command() -> clap::Command {
    Cli::command()
}

pub fn dispatch(cli: Cli, ui: &mut Ui) -> Result<u8> {
    match cli.command {
        Command::Init(args) => commands::init::run(ui, args),
        Command::New(args) => commands::new::run(ui, args),
        Command::List(args) => commands::list::run(ui, args),
        Command::Show(args) => commands::show::run(ui, args),
        Command::Rm(args) => commands::rm::run(ui, args),
        Command::Gc(args) => commands::gc::run(ui, args),
        Command::Config(args) => commands::config::run(ui, args),
        Command::Run(args) => commands::run::run(ui, args),
        Command::Shell(args) => commands::shell::run(ui, args),
        Command::Grant(args) => commands::grant::run(ui, args),
        Command::Agent(args) => commands::agent::run(ui, args),
        Command::Log(args) => commands::log::run(ui, args),
        Command::Vault(args) => commands::vault::run(ui, args),
        Command::Publish(args) => commands::publish::run(ui, args),
        Command::Merge(args) => commands::merge::run(ui, args),
        Command::Review(args) => commands::review::run(ui, args),
        Command::Pr(args) => commands::pr::run(ui, args),
        Command::Distill(args) => commands::distill::run(ui, args),
        Command::Autocommit(args) => commands::autocommit::run(ui, args),
        Command::Sync(args) => commands::sync::run(ui, args),
        Command::Cron(args) => commands::cron::run(ui, args),
        Command::Hooks(args) => commands::hooks::run(ui, args),
        Command::Doctor(args) => commands::doctor::run(ui, args),
        Command::Demo(args) => commands::demo::run(ui, args),
        Command::Completions(args) => commands::completions::run(ui, args),
        Command::Man(args) => commands::completions::run_man(ui, args),
        Command::Complete(args) => commands::completions::run_complete(ui, args),
        Command::Connect(args) => commands::relay::run_connect(ui, args),
        Command::Hook(args) => commands::hook::run(ui, args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn the_command_tree_is_consistent() {
        Cli::command().debug_assert();
    }

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn the_fast_path_takes_the_plain_forms_of_run() {
        for line in [
            "git-loop run abc -- true",
            "git-loop run -q abc --net none -- sh -c x",
            "git-loop run abc --print-argv --mode review -- ls -la",
            "git-loop run --color never abc --allow-domain a.com --allow-domain b.org -- x",
            "git-loop run abc --backend none -q -- --weird -x",
            "git-loop run abc --net=host make test",
        ] {
            let fast = fast_run(&words(line)).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(
                format!("{fast:?}"),
                format!("{:?}", Cli::try_parse_from(words(line)).unwrap()),
                "{line}"
            );
        }
    }

    #[test]
    fn whatever_the_fast_path_takes_clap_parses_the_same() {
        use clap::FromArgMatches;
        let groups: &[&[&str]] = &[
            &["abc"],
            &["--"],
            &["true"],
            &["-q"],
            &["--print-argv"],
            &["--net", "none"],
            &["--net=proxy"],
            &["--mode", "nowhere"],
            &["--backend=bwrap"],
            &["--allow-domain", "a.com"],
            &["--color=never"],
            &["-x"],
            &["--help"],
            &["sh", "-c"],
        ];
        let mut full = Cli::command();
        let (mut taken, mut tried) = (0, 0);
        let mut seq = vec![0usize; 0];
        // Every sequence of up to five groups, in counting order.
        loop {
            let mut line = vec!["git-loop", "run"];
            for &g in &seq {
                line.extend_from_slice(groups[g]);
            }
            let args: Vec<OsString> = line.iter().map(OsString::from).collect();
            tried += 1;
            if let Some(fast) = fast_run(&args) {
                taken += 1;
                let matches = full
                    .try_get_matches_from_mut(&args)
                    .unwrap_or_else(|e| panic!("{line:?}: clap refuses: {e}"));
                let clap = Cli::from_arg_matches(&matches).unwrap();
                assert_eq!(format!("{fast:?}"), format!("{clap:?}"), "{line:?}");
            }
            // The next sequence.
            let mut k = seq.len();
            loop {
                if k == 0 {
                    if seq.len() == 5 {
                        assert!(taken > 1000, "{taken} of {tried}");
                        return;
                    }
                    seq = vec![0; seq.len() + 1];
                    break;
                }
                k -= 1;
                seq[k] += 1;
                if seq[k] < groups.len() {
                    break;
                }
                seq[k] = 0;
            }
        }
    }

    #[test]
    fn what_the_fast_path_refuses_gets_the_full_trees_message() {
        for line in [
            "git-loop run --help",
            "git-loop run abc --net nowhere -- true",
            "git-loop run abc",
            "git-loop run --version",
        ] {
            let fast = parse_from(words(line)).unwrap_err();
            let full = Cli::try_parse_from(words(line)).unwrap_err();
            assert_eq!(fast.kind(), full.kind(), "{line}");
            assert_eq!(fast.to_string(), full.to_string(), "{line}");
        }
    }
}
