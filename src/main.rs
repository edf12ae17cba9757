// The program's start. Two start-up optimisations live here, each in its own module with
// its measured gain (BENCHMARKS.md, "Sandbox start": every sandboxed command pays for a
// `git-loop` process start; `benches/startup.sh` measures each one alone):
// `runtime_start` (no std runtime start) and `no_libm`.
#![no_main]

use std::io;

use git_loop::cli;
use git_loop::report::Report;
use git_loop::terminal::visible_lines;
use git_loop::ui::{Ui, BOLD, RED, RESET};

/// The C `main` replaces std's runtime start (`lang_start`): std's (a signal stack, the main
/// thread's stack bounds read from /proc/self/maps, the checks of descriptors 0-2) costs
/// each sandbox start 0.21-0.32 ms here (`benches/startup.sh`, noise 0.04 ms). What of it this program relies on is done in `main`: SIGPIPE
/// ignored (writes to a closed pipe fail with EPIPE, see `is_broken_pipe`; children still
/// start with the default, as std's `Command` resets it), a panic exits with 101, and
/// stdout is flushed at the end.
mod runtime_start {
    use std::io::{self, Write};

    #[no_mangle]
    pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
        // SAFETY: setting a disposition has no memory effects.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
        // A run must end with whatever started it, even one that dies during our start-up.
        git_loop::sandbox::spawn::remember_parent();
        // std::env::args works without the runtime start: on glibc it captures the arguments
        // itself, from .init_array.
        let code = std::panic::catch_unwind(super::run).unwrap_or(101);
        let _ = io::stdout().flush();
        code.into()
    }
}

/// No libm.so: 0.10-0.28 ms of each sandbox start (`benches/startup.sh`, noise 0.06 ms).
mod no_libm {
    /// indicatif's rate estimates are this program's only use of the C math library: `pow`
    /// defined here (on the `libm` crate) spares loading and relocating libm.so at every
    /// start. A test checks the binary needs no libm.
    #[no_mangle]
    pub extern "C" fn pow(x: f64, y: f64) -> f64 {
        libm::pow(x, y)
    }
}

fn run() -> u8 {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The sandbox's pid 1 (see sandbox/init.rs), before anything else is read or set up.
    if args
        .get(1)
        .is_some_and(|a| a == git_loop::sandbox::init::ARG)
    {
        git_loop::sandbox::init::main(&args[2..]);
    }
    if let Some(code) = cli::help_page(&args) {
        return code;
    }
    let cli = match cli::parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version on stdout with exit 0, usage errors with exit 2.
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let mut ui = Ui::stdio(cli.global.color, cli.global.quiet);
    let result = cli::dispatch(cli, &mut ui);
    ui.finish();
    match result {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return 0;
            }
            // Errors name paths, branches and conflicts that a sandbox may have chosen.
            let _ = writeln!(
                ui.err(),
                "{BOLD}{RED}error:{RESET} {}",
                visible_lines(&err.one_line())
            );
            // Hints are written as every hint is, made visible (`Report::hint`).
            for hint in err.hints.iter().cloned().chain(err.storage_hint()) {
                let _ = Report::hint(&mut ui, &hint);
            }
            err.kind.exit_code()
        }
    }
}

/// `git loop list | head` must not report an error when head closes the pipe.
fn is_broken_pipe(err: &git_loop::Error) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = err
        .source
        .as_deref()
        .map(|e| e as &(dyn std::error::Error + 'static));
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            if io.kind() == io::ErrorKind::BrokenPipe {
                return true;
            }
        }
        next = e.source();
    }
    false
}
