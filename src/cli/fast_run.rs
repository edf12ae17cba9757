//! The plain forms of `git loop run`, read without clap: a start-up optimisation. Every
//! sandboxed command pays for `git-loop run`'s start, and clap building the command tree
//! and reading the line costs 0.54-0.72 ms of it (`benches/startup.sh`, noise 0.17 ms;
//! BENCHMARKS.md, "Sandbox start"). Hand-written because it
//! must refuse rather than guess: anything it is not sure of goes to clap, and the tests
//! check over every combination of a vocabulary that whatever it takes, clap parses the
//! same.

use super::*;

/// `git-loop run [OPTIONS] ID [--] CMD...` with the options of [`GlobalArgs`] and
/// [`commands::run::RunArgs`], each spelled `--name value`, `--name=value` or `-q`; `None`
/// for anything else. The values are read by the options' own `ValueEnum`s; the tests
/// check, over every combination of a vocabulary of words, that whatever this accepts
/// clap parses the same.
pub(super) fn parse(args: &[std::ffi::OsString]) -> Option<Cli> {
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
            timeout: None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

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
            let fast = parse(&words(line)).unwrap_or_else(|| panic!("{line}"));
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
            if let Some(fast) = parse(&args) {
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
            let full = crate::cli::command()
                .try_get_matches_from(words(line))
                .unwrap_err();
            assert_eq!(fast.kind(), full.kind(), "{line}");
            assert_eq!(fast.to_string(), full.to_string(), "{line}");
        }
    }
}
