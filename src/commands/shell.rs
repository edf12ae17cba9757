use crate::error::Result;
use crate::loops;
use crate::sandbox;
use crate::ui::Ui;

/// Open an interactive shell ($SHELL, else bash) in a loop's sandbox.
///
/// The shell keeps your terminal (job control and resizing work); pushing characters into
/// it (TIOCSTI) is refused by the sandbox's seccomp filter.
#[derive(Debug, clap::Args)]
pub struct ShellArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    #[command(flatten)]
    pub sandbox: super::SandboxFlags,
}

pub fn run(ui: &mut Ui, args: ShellArgs) -> Result<u8> {
    args.sandbox.check()?;
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    // Only a shell the sandbox has: /bin/sh-like paths under /usr exist inside.
    let shell = std::env::var("SHELL")
        .ok()
        .filter(|s| s.starts_with("/usr/") || s.starts_with("/bin/"))
        .unwrap_or_else(|| "/bin/bash".into());
    if let Some(conn) = super::up::connect(&ws, &id)? {
        super::up::refuse_options(&id, &args.sandbox)?;
        return super::up::joined(
            ui,
            &ws,
            &id,
            conn,
            crate::session::wire::Exec {
                kind: "shell".into(),
                argv: vec![shell, "-i".into()],
                interactive: true,
                term: super::up::term(),
                ..Default::default()
            },
        );
    }
    let rec = loops::load(&ws, &id)?;
    loops::check_repo(&ws, &rec)?;
    let config = super::load_sandbox_config(ui, &ws, &rec)?;
    sandbox::run(
        ui,
        &ws,
        &rec,
        &config,
        &args.sandbox.request(vec![shell], true, false),
    )
}
