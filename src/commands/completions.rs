use clap_complete::Shell;

use crate::error::{Error, Result};
use crate::ui::Ui;

/// Print a shell completion script (bash, zsh, fish, elvish, powershell).
///
/// bash: `git loop completions bash > ~/.local/share/bash-completion/completions/git-loop`
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    pub shell: Shell,
}

/// Print the man page (roff).
#[derive(Debug, clap::Args)]
pub struct ManArgs {}

pub fn run(ui: &mut Ui, args: CompletionsArgs) -> Result<u8> {
    let mut buf = Vec::new();
    completion(args.shell, &mut buf);
    ui.out().write_all(&buf)?;
    Ok(0)
}

/// The completion script for `shell`, as shipped in `completions/`.
pub fn completion(shell: Shell, out: &mut Vec<u8>) {
    let mut cmd = crate::cli::command();
    clap_complete::generate(shell, &mut cmd, "git-loop", out);
}

/// The man page, as shipped in `man/git-loop.1`.
pub fn man_page() -> Result<Vec<u8>> {
    let cmd = crate::cli::command().name("git-loop");
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .map_err(|e| Error::failure("cannot render the man page").with_source(e))?;
    Ok(buf)
}

pub fn run_man(ui: &mut Ui, _args: ManArgs) -> Result<u8> {
    ui.out().write_all(&man_page()?)?;
    Ok(0)
}
