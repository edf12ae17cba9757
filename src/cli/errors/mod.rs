//! The boundary where domain errors become what the person at the terminal reads: each
//! domain error's exit code and its `hint:` lines, in one place. Domain modules say what
//! went wrong (typed errors naming the path, loop or key at fault); only here is it
//! decided which next step to suggest, since a hint names commands and options of the
//! command line. A domain function that returns an [`Error`] converts its typed error
//! with `?` or `.into()`, which runs the conversion in this folder (one file per part of
//! the domain).

mod config;
mod include;
mod loops;
mod ports;
mod proposals;
mod publish;
mod review;
mod sandbox;
mod setup;
mod sync;
mod vault;

pub(crate) use sync::conflict_hints;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod scan {
    use std::path::Path;

    /// Every file under `dir`, recursively.
    fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Hints are attached here and nowhere else: outside the command layer (and the error
    /// type itself, and the reporter that writes the hints it is given), no code before a
    /// file's tests attaches one.
    #[test]
    fn only_the_command_layer_attaches_hints() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        let allowed = [
            "commands",
            "cli",
            "main.rs",
            "error.rs",
            "report.rs",
            "ui.rs",
        ];
        let mut found = Vec::new();
        for file in &files {
            let rel = file.strip_prefix(&src).unwrap();
            let first = rel.components().next().unwrap().as_os_str();
            if allowed.iter().any(|a| first == *a) {
                continue;
            }
            let text = std::fs::read_to_string(file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
            for (n, line) in code.lines().enumerate() {
                if [".hint(", "hints.push(", ".hints = ", "hints: vec!"]
                    .iter()
                    .any(|p| line.contains(p))
                {
                    found.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(files.len() > 100, "the sources were not found");
        assert!(
            found.is_empty(),
            "hints attached outside the command layer:\n{}",
            found.join("\n")
        );
    }
}
