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

/// `git loop run` is paid on every sandboxed command, and building the whole command tree
/// costs a third of a millisecond: a command line starting with `run` is parsed by this
/// one-command tree first. Anything it does not accept (help, a mistake) goes to the full
/// tree, so every message is the full tree's.
#[derive(Debug, Parser)]
#[command(name = "git-loop", bin_name = "git loop")]
struct RunOnly {
    #[command(flatten)]
    global: GlobalArgs,

    #[command(subcommand)]
    command: RunCommand,
}

#[derive(Debug, Subcommand)]
enum RunCommand {
    Run(commands::run::RunArgs),
}

/// Parses a command line (the program name first).
pub fn parse_from(args: Vec<std::ffi::OsString>) -> std::result::Result<Cli, clap::Error> {
    if args.get(1).is_some_and(|a| a == "run") {
        if let Ok(RunOnly {
            global,
            command: RunCommand::Run(run),
        }) = RunOnly::try_parse_from(&args)
        {
            return Ok(Cli {
                global,
                command: Command::Run(run),
            });
        }
    }
    Cli::try_parse_from(args)
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
    Distill(commands::distill::DistillArgs),
    Autocommit(commands::autocommit::AutocommitArgs),
    Cron(commands::cron::CronArgs),
    Hooks(commands::hooks::HooksArgs),
    Doctor(commands::doctor::DoctorArgs),
    Demo(commands::demo::DemoArgs),
    Completions(commands::completions::CompletionsArgs),
    #[command(hide = true)]
    Man(commands::completions::ManArgs),
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
        Command::Cron(args) => commands::cron::run(ui, args),
        Command::Hooks(args) => commands::hooks::run(ui, args),
        Command::Doctor(args) => commands::doctor::run(ui, args),
        Command::Demo(args) => commands::demo::run(ui, args),
        Command::Completions(args) => commands::completions::run(ui, args),
        Command::Man(args) => commands::completions::run_man(ui, args),
        Command::Connect(args) => commands::relay::run_connect(ui, args),
        Command::Hook(args) => commands::hook::run(ui, args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn run_is_parsed_by_the_small_tree_exactly_as_by_the_full_one() {
        for line in [
            "git-loop run abc -- true",
            "git-loop run -q abc --net none -- sh -c x",
            "git-loop run abc --print-argv --mode review -- ls -la",
            "git-loop run --color never abc --allow-domain a.com --allow-domain b.org -- x",
            "git-loop run abc --backend none -q -- --weird -x",
        ] {
            assert!(RunOnly::try_parse_from(words(line)).is_ok(), "{line}");
            assert_eq!(
                format!("{:?}", parse_from(words(line)).unwrap()),
                format!("{:?}", Cli::try_parse_from(words(line)).unwrap()),
                "{line}"
            );
        }
    }

    #[test]
    fn what_the_small_tree_refuses_gets_the_full_trees_message() {
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
