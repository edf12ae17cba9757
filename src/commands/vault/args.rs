//! The command line of `git loop vault`: its subcommands and their arguments.

use super::*;

/// Manage vaults: credentials encrypted with age, given to a loop's sandbox.
///
/// A vault lives in the vaults' repository (vaults/<user>/<vault>/ in the workspace):
/// envs/<NAME>.age become environment variables, mounts/home/<rel>.age become files
/// $HOME/<rel>, all encrypted to the recipients in recipients.txt. Your identity (the key
/// that decrypts) is $XDG_CONFIG_HOME/git-loop/identity.txt, or $GIT_LOOP_IDENTITY; an
/// unencrypted ssh-ed25519 or ssh-rsa private key works too. Values are decrypted in
/// memory only, at a loop's start.
///
/// An entry bound to hosts (`set ... --for HOST[:PORT]`, or `bind`) never enters the
/// sandbox: inside, it is a placeholder made for each run, and the network proxy puts the
/// value in only over HTTPS to those hosts and ports, in the fields that carry credentials
/// (Authorization, the common token headers such as X-Api-Key, the headers named with
/// --header, and credential fields of a query, form or JSON body), refusing the
/// placeholder anywhere else; any form of the value in what those hosts answer is masked
/// back to the placeholder.
#[derive(Debug, clap::Args)]
pub struct VaultArgs {
    #[command(subcommand)]
    pub action: VaultAction,
}

/// What kind of entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// An environment variable (envs/<NAME>.age).
    Env,
    /// A file below $HOME (mounts/home/<rel>.age).
    File,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RecipientsAction {
    /// Print the recipients, and a change that arrived by sync.
    List,
    /// Add a recipient, at once (then rekey, so it can decrypt the entries).
    Add,
    /// Remove a recipient, at once (then rekey, so it can no longer decrypt them).
    Rm,
    /// Accept the recipients as the vault's recipients.txt names them now (after a sync
    /// changed them, or for a vault that arrived by sync).
    Accept,
    /// Refuse a change of recipients that arrived by sync: the ones you accepted are put
    /// back (and the next sync pushes them).
    Refuse,
}

impl RecipientsAction {
    /// `ACTION VAULT`, or `VAULT ACTION` as earlier versions took them.
    pub fn order(first: &str, second: &str) -> Result<(RecipientsAction, String)> {
        use clap::ValueEnum;
        let action = |word: &str| RecipientsAction::from_str(word, false).ok();
        match (action(first), action(second)) {
            (Some(a), _) => Ok((a, second.to_string())),
            (None, Some(a)) => Ok((a, first.to_string())),
            (None, None) => Err(Error::usage(format!(
                "`vault recipients` needs an action: list, add, rm, accept or refuse (not {})",
                crate::terminal::shown(first)
            ))
            .hint("git loop vault recipients list VAULT   (or add, rm, accept, refuse)")),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum VaultAction {
    /// Create your identity (when missing) and a vault, and install the secret guard and
    /// the vault diff in your personal repository. Prints your recipient (public key).
    Init {
        /// The vault to create.
        #[arg(default_value = "default")]
        vault: String,
    },
    /// List vaults with their recipients and entries: names, sizes and the hosts each is
    /// bound to, never values (reading the bindings needs your identity).
    List {
        /// Only this vault.
        vault: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Store a value: `set VAULT env NAME` reads it from stdin (without echo on a
    /// terminal); `set VAULT file REL PATH` stores the file PATH (`-`: stdin) as $HOME/REL.
    /// An entry that exists keeps the hosts it is bound to unless --for or --unbound says
    /// otherwise.
    Set {
        /// The vault (`default` is created on first use).
        vault: String,
        /// env or file.
        kind: Kind,
        /// The variable name, or the path below $HOME.
        name: String,
        /// For a file: the file to store (`-` for stdin).
        path: Option<PathBuf>,
        /// Bind the entry to these hosts (comma-separated; `*.example.com` and
        /// `name.*.example.com` as in the allowlist; `HOST:PORT` for a port other than
        /// 443): the sandbox gets a placeholder, and the proxy puts the value into HTTPS
        /// requests to these hosts and ports only.
        #[arg(
            long = "for",
            value_name = "HOST[:PORT][,...]",
            conflicts_with = "unbound"
        )]
        hosts: Option<String>,
        /// A request header that carries the value besides Authorization and the common
        /// token headers (X-Api-Key, Api-Key, X-Auth-Token, Private-Token, ...); repeat it
        /// or separate names with commas. Cookie carries it only when named.
        #[arg(long = "header", value_name = "NAME", requires = "hosts")]
        headers: Vec<String>,
        /// Store the entry bound to no host: its value goes into the sandbox as it is.
        #[arg(long)]
        unbound: bool,
    },
    /// Bind an existing entry to the hosts that may receive it (or, with --unbound, to
    /// none), keeping its value. ENTRY is env:NAME, file:REL, or a bare name.
    Bind {
        /// The vault.
        vault: String,
        /// The entry: env:NAME, file:REL, or a bare name.
        entry: String,
        /// The hosts, comma-separated (`*.example.com` and `name.*.example.com` as in the
        /// allowlist; `HOST:PORT` for a port other than 443).
        #[arg(value_name = "HOST[:PORT][,...]", required_unless_present = "unbound")]
        hosts: Option<String>,
        /// A request header that carries the value besides Authorization and the common
        /// token headers; repeat it or separate names with commas. The binding is replaced
        /// as a whole: name every header it keeps.
        #[arg(long = "header", value_name = "NAME", conflicts_with = "unbound")]
        headers: Vec<String>,
        /// Bind the entry to no host: its value goes into the sandbox as it is.
        #[arg(long, conflicts_with = "hosts")]
        unbound: bool,
    },
    /// Print a value on stdout (refused on a terminal unless --force).
    Get {
        /// The vault.
        vault: String,
        /// env or file.
        kind: Kind,
        /// The variable name, or the path below $HOME.
        name: String,
        /// Print even when stdout is a terminal.
        #[arg(long)]
        force: bool,
    },
    /// Edit an entry with $EDITOR on a copy in a private tmpfs folder, removed afterwards;
    /// re-encrypted when saved. ENTRY is env:NAME, file:REL, or a bare name.
    Edit {
        /// The vault.
        vault: String,
        /// The entry: env:NAME, file:REL, or a bare name.
        entry: String,
    },
    /// Remove an entry (env:NAME, file:REL, or a bare name).
    Rm {
        /// The vault.
        vault: String,
        /// The entry: env:NAME, file:REL, or a bare name.
        entry: String,
    },
    /// List, add or remove the vault's recipients (age1…, ssh-ed25519 …, ssh-rsa …, or a
    /// .pub file), or accept or refuse a change of them that arrived by sync.
    ///
    /// Whom a vault encrypts to is your decision: the recipients you accepted are kept on
    /// this machine (vaults/.pinned/ in the workspace, never synced), and a recipients.txt
    /// changed by a sync is shown and not used until you accept it (or refuse it, which
    /// puts back the ones you accepted). add and rm are your word: they apply at once.
    Recipients {
        /// list, add, rm, accept or refuse (`VAULT ACTION`, the order of earlier versions,
        /// works too).
        #[arg(value_name = "ACTION")]
        action: String,
        /// The vault.
        vault: String,
        /// The recipient (add, rm); an ssh key may be given as its words or quoted.
        recipient: Vec<String>,
    },
    /// Re-encrypt every entry to the current recipients.
    Rekey {
        /// The vault.
        vault: String,
    },
}
