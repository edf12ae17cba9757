//! The command tree (clap derive) and the one dispatch `match`. Help, the man page and
//! the shell completions are all generated from these definitions.

use clap::{CommandFactory, Parser, Subcommand};

pub mod completion;
pub(crate) mod errors;
pub mod examples;
mod fast_run;
mod values;

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
/// `git loop run` is paid on every sandboxed command, and clap building the command tree
/// costs half a millisecond of it (`benches/startup.sh`): the plain forms of `run` are read by
/// [`fast_run::parse`]. Anything it is not sure of (help, a mistake, an unusual spelling) goes to
/// the full tree, so every message, and every meaning, is the full tree's.
pub fn parse_from(args: Vec<std::ffi::OsString>) -> std::result::Result<Cli, clap::Error> {
    if let Some(cli) = fast_run::parse(&args) {
        return Ok(cli);
    }
    use clap::FromArgMatches;
    let matches = command().try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
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
    Up(commands::up::UpArgs),
    Down(commands::up::DownArgs),
    Attach(commands::attach::AttachArgs),
    Port(commands::port::PortArgs),
    Open(commands::port::OpenArgs),
    Watch(commands::watch::WatchArgs),
    Grant(commands::grant::GrantArgs),
    Agent(commands::agent::AgentArgs),
    Log(commands::log::LogArgs),
    Logs(commands::logs::LogsArgs),
    Vault(commands::vault::VaultArgs),
    Publish(commands::publish::PublishArgs),
    Merge(commands::merge::MergeArgs),
    Rebase(commands::rebase::RebaseArgs),
    Review(commands::review::ReviewArgs),
    Comment(commands::comment::CommentArgs),
    Compare(commands::compare::CompareArgs),
    Pick(commands::pick::PickArgs),
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
    /// A live session's supervisor (see `git loop up`).
    #[command(name = "__supervise", hide = true)]
    Supervise(commands::up::SuperviseArgs),
    /// A live session's init, inside its sandbox.
    #[command(name = "__session", hide = true)]
    Session(commands::up::SessionArgs),
}

pub fn command() -> clap::Command {
    examples::attach(Cli::command())
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
        Command::Up(args) => commands::up::up(ui, args),
        Command::Down(args) => commands::up::down(ui, args),
        Command::Attach(args) => commands::attach::run(ui, args),
        Command::Port(args) => commands::port::run(ui, args),
        Command::Open(args) => commands::port::open(ui, args),
        Command::Watch(args) => commands::watch::run(ui, args),
        Command::Supervise(args) => commands::up::supervise(ui, args),
        Command::Session(args) => commands::up::session_init(ui, args),
        Command::Grant(args) => commands::grant::run(ui, args),
        Command::Agent(args) => commands::agent::run(ui, args),
        Command::Log(args) => commands::log::run(ui, args),
        Command::Logs(args) => commands::logs::run(ui, args),
        Command::Vault(args) => commands::vault::run(ui, args),
        Command::Publish(args) => commands::publish::run(ui, args),
        Command::Merge(args) => commands::merge::run(ui, args),
        Command::Rebase(args) => commands::rebase::run(ui, args),
        Command::Review(args) => commands::review::run(ui, args),
        Command::Comment(args) => commands::comment::run(ui, args),
        Command::Compare(args) => commands::compare::run(ui, args),
        Command::Pick(args) => commands::pick::run(ui, args),
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

    #[test]
    fn the_command_tree_is_consistent() {
        Cli::command().debug_assert();
    }
}
