//! Where commands write. A command never prints directly: it writes to the [`Ui`] it is
//! handed, so output can be captured, colored only on a terminal, and kept off stdout
//! where stdout is reserved for `--json`. What a sandbox wrote reaches it only through
//! [`crate::terminal`]'s visible forms; status lines and warnings are made visible here.

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::terminal;

use anstream::ColorChoice;

/// `--color` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    #[default]
    Auto,
    Always,
    Never,
}

pub struct Ui {
    out: anstream::AutoStream<Box<dyn Write>>,
    out_choice: ColorChoice,
    err: anstream::AutoStream<Box<dyn Write>>,
    quiet: bool,
    /// The pager `out` writes into, once [`Ui::page`] started one.
    pager: Option<Child>,
}

impl Ui {
    /// The process's stdout and stderr. Colors follow `--color`, then `NO_COLOR`,
    /// `CLICOLOR_FORCE` and whether the stream is a terminal (anstream's rules).
    pub fn stdio(color: ColorWhen, quiet: bool) -> Self {
        let choice = match color {
            ColorWhen::Auto => None,
            ColorWhen::Always => Some(ColorChoice::Always),
            ColorWhen::Never => Some(ColorChoice::Never),
        };
        let out_choice = choice.unwrap_or_else(|| anstream::AutoStream::choice(&io::stdout()));
        let err_choice = choice.unwrap_or_else(|| anstream::AutoStream::choice(&io::stderr()));
        Ui {
            out: anstream::AutoStream::new(Box::new(io::stdout()), out_choice),
            out_choice,
            err: anstream::AutoStream::new(Box::new(io::stderr()), err_choice),
            quiet,
            pager: None,
        }
    }

    /// From here on, stdout goes through the user's pager, as git's long output does: only
    /// when stdout is a terminal, and only a pager the user chose ([`terminal::pager_command`]).
    /// A pager that cannot be started is no reason to fail: the output goes to stdout.
    pub fn page(&mut self) -> io::Result<()> {
        if self.pager.is_some() || !io::stdout().is_terminal() {
            return Ok(());
        }
        let Some(command) = terminal::pager_command(
            std::env::var_os("GIT_PAGER"),
            user_core_pager(),
            std::env::var_os("PAGER"),
        ) else {
            return Ok(());
        };
        // git runs its pager through the shell, so `core.pager = less -S` or a pipeline
        // works the same here. The string is the user's own setting, never built from
        // anything a loop wrote.
        let spawned = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .envs(terminal::pager_env(
                std::env::var_os("LESS"),
                std::env::var_os("LV"),
            ))
            .stdin(Stdio::piped())
            .spawn();
        let Ok(mut child) = spawned else {
            return Ok(());
        };
        let Some(stdin) = child.stdin.take() else {
            return Ok(());
        };
        self.out.flush()?;
        self.out = anstream::AutoStream::new(Box::new(stdin), self.out_choice);
        self.pager = Some(child);
        Ok(())
    }

    /// Ends the pager, if one was started: the output is closed and the pager waited for
    /// (the person may still be reading). Called before an error is printed, so that the
    /// error is not lost behind the pager.
    pub fn finish(&mut self) {
        if let Some(mut child) = self.pager.take() {
            let _ = self.out.flush();
            // Dropping the pipe's end is the pager's end of input.
            self.out = anstream::AutoStream::new(Box::new(io::stdout()), self.out_choice);
            let _ = child.wait();
        }
    }

    /// Results: what the user asked for (tables, JSON, ids).
    pub fn out(&mut self) -> &mut dyn Write {
        &mut self.out
    }

    /// Bytes for stdout exactly as they are (a secret, a file's contents): `out` strips
    /// escape sequences when colors are off, which would change them.
    pub fn out_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.flush()?;
        let mut stdout = io::stdout().lock();
        stdout.write_all(bytes)?;
        stdout.flush()
    }

    /// Messages about the work: progress, warnings, errors.
    pub fn err(&mut self) -> &mut dyn Write {
        &mut self.err
    }

    /// A status line on stderr, unless `--quiet`.
    pub fn status(&mut self, line: impl AsRef<str>) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        writeln!(self.err, "{}", terminal::visible_lines(line.as_ref()))
    }

    /// A warning on stderr; never silenced, since it names something the user must know.
    pub fn warn(&mut self, line: impl AsRef<str>) -> io::Result<()> {
        writeln!(
            self.err,
            "{}warning:{} {}",
            YELLOW,
            RESET,
            terminal::visible_lines(line.as_ref())
        )
    }

    /// A spinner on stderr for work that can take more than a second; hidden when stderr
    /// is not a terminal or under `--quiet`, so scripts and `--json` never see it.
    pub fn spinner(&self, message: impl Into<String>) -> indicatif::ProgressBar {
        if self.quiet || !io::stderr().is_terminal() {
            return indicatif::ProgressBar::hidden();
        }
        let bar = indicatif::ProgressBar::new_spinner()
            .with_message(message.into())
            .with_finish(indicatif::ProgressFinish::AndClear);
        bar.enable_steady_tick(std::time::Duration::from_millis(100));
        bar
    }

    pub fn is_quiet(&self) -> bool {
        self.quiet
    }
}

/// The terminal is the report the command layer hands domain code: status lines silenced
/// by `--quiet`, warnings and hints always shown, every line made visible (a line may
/// carry a name a sandbox chose).
impl crate::report::Report for Ui {
    fn status(&mut self, line: &str) -> io::Result<()> {
        Ui::status(self, line)
    }
    fn warn(&mut self, line: &str) -> io::Result<()> {
        Ui::warn(self, line)
    }
    fn hint(&mut self, line: &str) -> io::Result<()> {
        writeln!(
            self.err,
            "{YELLOW}hint:{RESET} {}",
            terminal::visible_lines(line)
        )
    }
    fn notice(&mut self, line: &str) -> io::Result<()> {
        writeln!(self.err, "{}", terminal::visible_lines(line))
    }
    fn result(&mut self, line: &str) -> io::Result<()> {
        writeln!(self.out, "{}", terminal::visible_lines(line))
    }
    /// Lines on the process's stderr, as `warn` writes them. On a terminal each starts
    /// at the left edge and ends with a carriage return too: a program running there
    /// (an agent's screen) may have put it in raw mode, where a newline only moves down.
    fn live_warnings(&self) -> Option<crate::report::LiveWarnings> {
        let choice = self.err.current_choice();
        let on_terminal = io::stderr().is_terminal();
        Some(Box::new(move |line: &str| {
            let mut err = anstream::AutoStream::new(io::stderr(), choice);
            let line = terminal::visible_lines(line);
            let _ = if on_terminal {
                write!(err, "\r{YELLOW}warning:{RESET} {line}\r\n")
            } else {
                writeln!(err, "{YELLOW}warning:{RESET} {line}")
            };
        }))
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The user's `core.pager`, from their system and global configuration only: git is asked
/// from `/`, so a repository the command happens to run in (a loop's workdir, whose
/// config the agent writes) has no say.
fn user_core_pager() -> Option<String> {
    crate::git::cmd::Git::in_dir(Path::new("/"))
        .args(["config", "--get", "core.pager"])
        .read()
        .ok()
        .map(|s| s.trim_end_matches('\n').to_string())
}

pub const BOLD: &str = "\x1b[1m";
pub const RED: &str = "\x1b[31m";
pub const GREEN: &str = "\x1b[32m";
pub const YELLOW: &str = "\x1b[33m";
pub const CYAN: &str = "\x1b[36m";
pub const DIM: &str = "\x1b[2m";
pub const RESET: &str = "\x1b[0m";

/// A secret from stdin: typed with echo off on a terminal (after `prompt`), else
/// everything piped in, less one trailing newline; at most `limit` bytes kept (one more
/// is read, so a caller can tell a longer value). Held in a buffer wiped when dropped.
pub fn read_secret(
    ui: &mut Ui,
    prompt: &str,
    limit: usize,
) -> std::io::Result<zeroize::Zeroizing<Vec<u8>>> {
    use std::io::{IsTerminal, Read};
    let stdin = std::io::stdin();
    let mut value = if stdin.is_terminal() {
        use std::os::fd::AsFd;
        let line = read_line_without_echo(stdin.as_fd(), limit, || {
            write!(ui.err(), "{prompt}")?;
            ui.err().flush()
        })?;
        writeln!(ui.err())?;
        line
    } else {
        let mut bytes = zeroize::Zeroizing::new(Vec::with_capacity(limit + 2));
        stdin
            .lock()
            .take(limit as u64 + 2)
            .read_to_end(&mut bytes)?;
        bytes
    };
    if value.ends_with(b"\n") {
        value.pop();
        if value.ends_with(b"\r") {
            value.pop();
        }
    }
    Ok(value)
}

/// One line from the terminal `tty` with echo off; the terminal is restored whatever
/// happens. Echo is off before `prompt` is written: a key typed the moment the prompt
/// shows is never echoed (nor thrown away, as a flush of the input would).
fn read_line_without_echo(
    tty: std::os::fd::BorrowedFd<'_>,
    limit: usize,
    prompt: impl FnOnce() -> std::io::Result<()>,
) -> std::io::Result<zeroize::Zeroizing<Vec<u8>>> {
    use nix::sys::termios::{tcgetattr, tcsetattr, LocalFlags, SetArg};
    let saved = tcgetattr(tty).map_err(std::io::Error::from)?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    tcsetattr(tty, SetArg::TCSANOW, &quiet).map_err(std::io::Error::from)?;
    struct Restore<'a>(std::os::fd::BorrowedFd<'a>, nix::sys::termios::Termios);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let _ = tcsetattr(self.0, SetArg::TCSAFLUSH, &self.1);
        }
    }
    let _restore = Restore(tty, saved);
    prompt()?;
    let mut line = zeroize::Zeroizing::new(Vec::with_capacity(limit + 2));
    let mut byte = [0u8; 1];
    while line.len() <= limit {
        match nix::unistd::read(tty, &mut byte) {
            Ok(0) => break,
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) => line.push(byte[0]),
            Err(nix::Error::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// A person types the moment the prompt shows: echo is already off then, so the key is
    /// never on the screen, and what was typed is what is read (none of it flushed away).
    #[test]
    fn a_secret_typed_as_the_prompt_shows_is_never_echoed_and_is_read_whole() {
        use nix::sys::termios::{tcgetattr, LocalFlags};
        let pty = nix::pty::openpty(None, None).unwrap();
        let (master, tty) = (pty.master, pty.slave);
        let line = read_line_without_echo(tty.as_fd(), 100, || {
            let echo = tcgetattr(&tty)
                .unwrap()
                .local_flags
                .contains(LocalFlags::ECHO);
            assert!(!echo, "echo is on while the prompt is written");
            nix::unistd::write(&tty, b"key: ")?;
            // Typed at once, before the reader asks for a byte.
            nix::unistd::write(&master, b"s3cret-typed\n")?;
            Ok(())
        })
        .unwrap();
        assert_eq!(&line[..], b"s3cret-typed");
        // The terminal shows the prompt and nothing of the key; its echo is back on.
        nix::fcntl::fcntl(
            &master,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .unwrap();
        let mut shown = Vec::new();
        let mut buf = [0u8; 256];
        while let Ok(n @ 1..) = nix::unistd::read(&master, &mut buf) {
            shown.extend_from_slice(&buf[..n]);
        }
        let shown = String::from_utf8_lossy(&shown);
        assert!(shown.contains("key: "), "{shown:?}");
        assert!(!shown.contains("s3cret"), "{shown:?}");
        assert!(tcgetattr(&tty)
            .unwrap()
            .local_flags
            .contains(LocalFlags::ECHO));
    }
}
