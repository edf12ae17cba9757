use std::io::Read;
use std::path::PathBuf;

use clap::Subcommand;

use crate::error::{Context, Error, Result};
use crate::guard;
use crate::ui::Ui;
use crate::vault::crypto;

/// What the git hooks and diff drivers installed by git loop call (not for people).
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub hook: HookName,
}

#[derive(Debug, Subcommand)]
pub enum HookName {
    /// The secret guard: refuses a commit holding plaintext under .loopat/vaults/, a
    /// private key or a token.
    PreCommit {
        /// What git passed to the hook (pre-commit gets none).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// git's textconv for vault files: a size and a recipient count, never a value.
    TextconvVault {
        /// The file git wrote the blob to.
        file: PathBuf,
    },
}

pub fn run(ui: &mut Ui, args: HookArgs) -> Result<u8> {
    match args.hook {
        HookName::PreCommit { .. } => pre_commit(ui),
        HookName::TextconvVault { file } => textconv_vault(ui, &file),
    }
}

fn pre_commit(ui: &mut Ui) -> Result<u8> {
    // git runs a hook at the top of the working tree.
    let dir = std::env::current_dir()?;
    let allow = super::operator_guard_allowlist()?;
    let findings = guard::check_staged(&dir, &allow).map_err(|e| {
        Error::failure("the secret guard cannot read the staged files")
            .with_source(e)
            .hint("run `git status` to see what is wrong with the repository")
    })?;
    if findings.is_empty() {
        return Ok(0);
    }
    for f in &findings {
        writeln!(ui.err(), "  {}", crate::terminal::shown(&f.to_string()))?;
    }
    let files = {
        let mut paths: Vec<&str> = findings.iter().map(|f| f.path.as_str()).collect();
        paths.dedup();
        paths.len()
    };
    Err(Error::failure(format!(
        "commit refused by git loop's secret guard: {files} staged file{} look{} like a secret",
        if files == 1 { "" } else { "s" },
        if files == 1 { "s" } else { "" },
    ))
    .hint("unstage what it names (git restore --staged PATH) and keep credentials in a vault: git loop vault set VAULT env NAME")
    .hint("if it is not a secret after all, commit with --no-verify"))
}

fn textconv_vault(ui: &mut Ui, file: &std::path::Path) -> Result<u8> {
    // The path is git's: a temporary file of a blob, or a file of the vaults' working tree,
    // which a sync fills. Never through a link there, never waiting on a FIFO.
    let f = crate::fsutil::open_regular(file)
        .context(|| format!("cannot read {}", file.display()))?
        .ok_or_else(|| Error::failure(format!("{} is not a regular file", file.display())))?;
    let size = f
        .metadata()
        .context(|| format!("cannot read {}", file.display()))?
        .len();
    // The header is at the start; a recipients file is small.
    let mut head = Vec::new();
    f.take(256 * 1024)
        .read_to_end(&mut head)
        .context(|| format!("cannot read {}", file.display()))?;
    writeln!(ui.out(), "{}", describe(&head, size))?;
    Ok(0)
}

/// One line about a vault file: what it is and how big, never its content; except a
/// list of recipients, which is public and worth seeing in a diff.
fn describe(head: &[u8], size: u64) -> String {
    if crypto::is_age_file(head) {
        let bytes = if size == 1 { "byte" } else { "bytes" };
        return match crypto::recipient_count(head) {
            Some(1) => format!("age-encrypted entry, {size} {bytes}, 1 recipient"),
            Some(n) => format!("age-encrypted entry, {size} {bytes}, {n} recipients"),
            None => format!("age-encrypted entry, {size} {bytes}"),
        };
    }
    if let Ok(text) = std::str::from_utf8(head) {
        let all_recipients = text.lines().all(|l| {
            let l = l.trim();
            l.is_empty()
                || l.starts_with('#')
                || crate::vault::recipients::Recipient::parse(l).is_ok()
        });
        if all_recipients && (size as usize) == head.len() {
            return text.trim_end().to_string();
        }
    }
    format!("NOT an age file: {size} bytes of plaintext (the pre-commit guard refuses it)")
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn never_shows_a_value() {
        assert_eq!(
            describe(b"hunter2", 7),
            "NOT an age file: 7 bytes of plaintext (the pre-commit guard refuses it)"
        );
        let recipient = age::x25519::Identity::generate().to_public().to_string();
        let list = format!("# who\n{recipient}\n");
        assert_eq!(
            describe(list.as_bytes(), list.len() as u64),
            list.trim_end()
        );
        assert_eq!(
            describe(
                b"age-encryption.org/v1\n-> X25519 a\nb\n-> X25519 c\nd\n--- m\n",
                500
            ),
            "age-encrypted entry, 500 bytes, 2 recipients"
        );
    }
}
