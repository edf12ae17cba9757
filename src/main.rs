use std::io;
use std::process::ExitCode;

use git_loop::cli;
use git_loop::ui::{Ui, BOLD, RED, RESET, YELLOW};

fn main() -> ExitCode {
    let cli = match cli::parse_from(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version on stdout with exit 0, usage errors with exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let mut ui = Ui::stdio(cli.global.color, cli.global.quiet);
    match cli::dispatch(cli, &mut ui) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            let e = ui.err();
            let _ = writeln!(e, "{BOLD}{RED}error:{RESET} {}", err.one_line());
            for hint in &err.hints {
                let _ = writeln!(e, "{YELLOW}hint:{RESET} {hint}");
            }
            ExitCode::from(err.kind.exit_code())
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
