//! What the person reads for a vault's errors: the same hint whichever command meets one
//! (and `run` meets them all, through `vault::open_for_run`).

use crate::error::{Error, ErrorKind};
use crate::vault::VaultError;

/// A bad name is a vault error of its own (a usage error, with the rule in its hint).
impl From<crate::vault::names::NameError> for Error {
    fn from(err: crate::vault::names::NameError) -> Self {
        VaultError::from(err).into()
    }
}

/// Each vault error with its exit code and what to do about it.
impl From<VaultError> for Error {
    fn from(err: VaultError) -> Self {
        use VaultError as V;
        let (kind, hints): (ErrorKind, Vec<String>) = match &err {
            V::BadName { what, .. } => (
                ErrorKind::Usage,
                vec![match *what {
                    "vault name" => {
                        "a vault name is letters, digits and '-' (at most 64), e.g. `work`".into()
                    }
                    "variable name" => {
                        "a variable name is letters, digits and '_', not starting with a digit, e.g. GITHUB_TOKEN".into()
                    }
                    _ => "a file entry is a path below $HOME without '..', e.g. .config/gh/hosts.yml"
                        .into(),
                }],
            ),
            V::NoVault(name) => (
                ErrorKind::Failure,
                vec![
                    format!("create it: git loop vault init {name}"),
                    "see the vaults there are: git loop vault list".into(),
                ],
            ),
            V::NoEntry { vault, .. } => (
                ErrorKind::Failure,
                vec![format!("see its entries: git loop vault list {vault}")],
            ),
            V::NoIdentity(_) => (
                ErrorKind::Failure,
                vec![
                    "restore your identity from its backup, or point GIT_LOOP_IDENTITY at it".into(),
                    "a new one (git loop vault init) cannot decrypt what was encrypted to the old one until a member adds it and runs rekey".into(),
                ],
            ),
            V::UnreadableIdentity { path, .. } => (
                ErrorKind::Failure,
                vec![format!(
                    "it must be a file you can read, mode 0600: chmod 600 {}",
                    path.display()
                )],
            ),
            V::IdentityInWorkspace(_) => (
                ErrorKind::Failure,
                vec!["move it out of the workspace (the usual place is $XDG_CONFIG_HOME/git-loop/identity.txt) and point GIT_LOOP_IDENTITY at it".into()],
            ),
            V::BadIdentity { .. } => (
                ErrorKind::Failure,
                vec![
                    "an identity is an age secret key (AGE-SECRET-KEY-1…) or an unencrypted ssh-ed25519 / ssh-rsa private key".into(),
                    "point GIT_LOOP_IDENTITY at one, or move this file away and run `git loop vault init` for a new one".into(),
                ],
            ),
            V::NotRecipient {
                vault,
                recipient,
                listed,
                ..
            } => {
                let mut hints = if *listed {
                    vec![format!(
                        "your recipient is among the accepted ones but the entries were encrypted before: a member who can decrypt runs `git loop vault rekey {vault}` (rekey encrypts only to the recipients that member accepted)"
                    )]
                } else {
                    vec![
                        format!(
                            "ask a member who can decrypt it to run `git loop vault recipients {vault} add {recipient}` and then `git loop vault rekey {vault}`"
                        ),
                    ]
                };
                hints.push(
                    "or point GIT_LOOP_IDENTITY at the identity this vault was encrypted to".into(),
                );
                (ErrorKind::Failure, hints)
            }
            V::Corrupt {
                vault, entry, path, ..
            } => (
                ErrorKind::Failure,
                vec![format!(
                    "restore it from git history (`git checkout -- {}` in your personal repository), or store it again: git loop vault set {vault} {}",
                    path.display(),
                    entry.replacen(':', " ", 1)
                )],
            ),
            V::BadRecipient { .. } => (
                ErrorKind::Usage,
                vec![
                    "a recipient is an age public key (age1…) or an ssh public key (ssh-ed25519 AAAA… / ssh-rsa AAAA…), or a file holding them (~/.ssh/id_ed25519.pub)".into(),
                ],
            ),
            V::BadRecipientsFile { path, .. } => (
                ErrorKind::Failure,
                vec![format!(
                    "fix or remove that line of {} (one age1… or ssh-… key per line, # for comments)",
                    path.display()
                )],
            ),
            V::NoRecipients(vault) => (
                ErrorKind::Failure,
                vec![format!(
                    "add one: git loop vault recipients {vault} add RECIPIENT"
                )],
            ),
            V::TooLarge { .. } => (
                ErrorKind::Usage,
                vec!["vault entries are credentials and small config files; keep larger files elsewhere".into()],
            ),
            V::BadValue { .. } => (
                ErrorKind::Usage,
                vec!["store binary or multi-line data as a file entry: git loop vault set VAULT file REL PATH".into()],
            ),
            V::NotBindable(_) => (
                ErrorKind::Usage,
                vec![
                    "a bound file needs a token of a known format (ghp_…, sk-ant-…, npm_…), a value after password, token or secret, or to be one word".into(),
                    "or bind the variable the credential is read from instead: git loop vault set VAULT env NAME --for HOST".into(),
                ],
            ),
            V::Confined(_) => (
                ErrorKind::Failure,
                vec!["links are not followed in the vaults: remove what stands there (git rm it in the vaults' repository if it arrived by sync), and let `git loop vault` write the entry".into()],
            ),
            V::Moved { vault, entry, .. } => (
                ErrorKind::Failure,
                vec![
                    format!("if it should be there, store the value under this name yourself: git loop vault set {vault} {}", entry.replacen(':', " ", 1)),
                    format!("otherwise remove it: git loop vault rm {vault} {entry}"),
                ],
            ),
            V::UnpinnedLegacy { vault, entry, .. } => (
                ErrorKind::Failure,
                vec![
                    format!("if you stored it (with an earlier git-loop, on another machine), run `git loop vault rekey {vault}` there and sync, or store the value again here: git loop vault set {vault} {}", entry.replacen(':', " ", 1)),
                    format!("otherwise remove it: git loop vault rm {vault} {entry}"),
                ],
            ),
            V::Undecided(vault) => (
                ErrorKind::Failure,
                vec![
                    format!("see the change: git loop vault list {vault}"),
                    format!("then keep it (git loop vault recipients accept {vault}) or put back the ones you accepted (git loop vault recipients refuse {vault})"),
                ],
            ),
            V::NeverAccepted(vault) => (
                ErrorKind::Failure,
                vec![
                    format!("see whom it encrypts to: git loop vault recipients list {vault}"),
                    format!("if those are the people you mean: git loop vault recipients accept {vault}"),
                ],
            ),
            V::NotMoved { .. } => (
                ErrorKind::Failure,
                vec!["only recipients.txt, envs/NAME.age and mounts/home/REL.age files and their folders are moved; move what it names out of the way (or restore it as git-loop wrote it), then run the command again".into()],
            ),
            V::WriteThroughLink(_) => (
                ErrorKind::Failure,
                vec!["remove the link first; a vault folder link would write into another vault".into()],
            ),
            V::Unexpected { .. } => (
                ErrorKind::Failure,
                vec!["move the file out of the vault; only git loop vault writes there".into()],
            ),
            V::Io { .. } => (
                ErrorKind::Failure,
                vec!["check the path's permissions and free space".into()],
            ),
            V::PlaintextInRepo { .. } => (
                ErrorKind::Failure,
                vec!["only `git loop vault` writes there; move that file away".into()],
            ),
            V::InBothPlaces { target, .. } => (
                ErrorKind::Failure,
                vec![format!(
                    "keep one: move the other out of the way, then run the command again ({} is where vaults live now)",
                    target.display()
                )],
            ),
            V::LegacyLeft(..) => (
                ErrorKind::Failure,
                vec!["remove it by hand once it is empty; vaults live in the vaults' repository now".into()],
            ),
            V::NotAMember { vault, recipient } => (
                ErrorKind::Failure,
                vec![format!(
                    "ask a member to run `git loop vault recipients {vault} add {recipient}` and `git loop vault rekey {vault}`"
                )],
            ),
            V::NoTmpfs => (
                ErrorKind::Failure,
                vec!["set XDG_RUNTIME_DIR to a tmpfs folder you own (e.g. /run/user/$(id -u)); git loop never writes plaintext to a disk".into()],
            ),
            V::EditorStart { .. } => (
                ErrorKind::Failure,
                vec!["set EDITOR (or VISUAL) to an editor on your PATH".into()],
            ),
            V::EditorFailed { .. } => (
                ErrorKind::Failure,
                vec!["fix the editor command in EDITOR, or save and quit normally to keep changes".into()],
            ),
            V::Encrypt { vault, .. } => (
                ErrorKind::Failure,
                vec![format!(
                    "check the recipients: git loop vault recipients {vault} list"
                )],
            ),
        };
        let mut out = Error::new(kind, err.to_string());
        out.hints = hints;
        // The cause of an i/o error is the useful part ("Permission denied"); every other
        // variant has said everything in its message.
        if let V::Io { source, .. }
        | V::UnreadableIdentity { source, .. }
        | V::LegacyLeft(_, source)
        | V::EditorStart { source, .. } = err
        {
            out = out.with_source(source);
        }
        out
    }
}
