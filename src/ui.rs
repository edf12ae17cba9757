//! Where commands write. A command never prints directly: it writes to the [`Ui`] it is
//! handed, so output can be captured, colored only on a terminal, and kept off stdout
//! where stdout is reserved for `--json`.

use std::io::{self, Write};

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
    err: anstream::AutoStream<Box<dyn Write>>,
    quiet: bool,
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
            err: anstream::AutoStream::new(Box::new(io::stderr()), err_choice),
            quiet,
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
        writeln!(self.err, "{}", line.as_ref())
    }

    /// A warning on stderr; never silenced, since it names something the user must know.
    pub fn warn(&mut self, line: impl AsRef<str>) -> io::Result<()> {
        writeln!(self.err, "{}warning:{} {}", YELLOW, RESET, line.as_ref())
    }

    /// A spinner on stderr for work that can take more than a second; hidden when stderr
    /// is not a terminal or under `--quiet`, so scripts and `--json` never see it.
    pub fn spinner(&self, message: impl Into<String>) -> indicatif::ProgressBar {
        use std::io::IsTerminal;
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

pub const BOLD: &str = "\x1b[1m";
pub const RED: &str = "\x1b[31m";
pub const GREEN: &str = "\x1b[32m";
pub const YELLOW: &str = "\x1b[33m";
pub const CYAN: &str = "\x1b[36m";
pub const DIM: &str = "\x1b[2m";
pub const RESET: &str = "\x1b[0m";
