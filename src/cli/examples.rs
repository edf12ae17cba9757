//! Examples of every command, one source for `--help` (after the options) and the man
//! pages (their EXAMPLES section): [`attach`] gives each command of the clap tree its
//! examples as its long help's closing part, which `commands::completions::man_pages`
//! renders as a section of its own. A test checks that every command has examples and
//! that every example is a command line clap accepts.

/// The heading that opens the examples in `--help`.
pub const HEADING: &str = "Examples:";

/// `(command path below git loop, examples)`: a `#` line says what the lines under it do.
pub const EXAMPLES: &[(&str, &str)] = &[
    (
        "",
        "# A loop on the repository you are in, its agent, then what it proposes
git loop new \"fix the login bug\"
git loop agent fix-the
git loop review fix-the
# Its code into the branch it started from, its notes into the team's
git loop merge fix-the
git loop publish fix-the",
    ),
    (
        "init",
        "# The workspace, made where $GIT_LOOP_HOME says
git loop init
# The team's repositories cloned from their remotes (a second machine)
git loop init --notes git@github.com:team/notes.git --knowledge git@github.com:team/knowledge.git",
    ),
    (
        "new",
        "# A loop on the repository you are in, from HEAD
git loop new \"fix the login bug\"
# From a tag, in another repository
git loop new \"backport\" --repo ~/src/app --base v1.2
# A loop without code (notes, research), with a vault of its own
git loop new \"survey the options\" --scratch --vault research",
    ),
    (
        "list",
        "# Active loops: state, age, commits ahead and behind, disk use
git loop list
# Removed ones too, as JSON for a script
git loop list --all --json",
    ),
    (
        "show",
        "# One loop, by any unique prefix of its id or title
git loop show fix-the
# Exactly what its sandbox sees, and what its network may reach
git loop show fix-the --mounts
git loop show fix-the --net",
    ),
    (
        "rm",
        "# Remove a loop; its branch loop/<id> stays in the repository
git loop rm fix-the
# Its branches too (refused while that would lose commits)
git loop rm fix-the --delete-branches",
    ),
    (
        "gc",
        "# What would go: loops merged or published, nothing left undone
git loop gc --dry-run
# Merged loops older than two weeks
git loop gc --merged --older-than 14d",
    ),
    (
        "config",
        "# Every key, its value and the layer it comes from
git loop config list --show-origin
# The agent new loops run
git loop config set agent.command '[\"codex\"]'",
    ),
    (
        "config get",
        "# A value, and the layer it comes from
git loop config get network.mode --show-origin
# As one loop sees it
git loop config get agent.command --loop fix-the",
    ),
    (
        "config set",
        "# In your personal layer (the default)
git loop config set agent.permissions ask
# In the operator layer: only it may widen what a sandbox reaches
git loop config set --operator network.allow_cidrs '[\"10.0.0.0/8\"]'
# For one loop
git loop config set --loop fix-the network.mode none",
    ),
    (
        "config unset",
        "# Back to the value of the layers below
git loop config unset agent.permissions
git loop config unset --loop fix-the network.mode",
    ),
    (
        "config list",
        "# Every key with its value and where it comes from
git loop config list --show-origin
# As JSON, as one loop sees it
git loop config list --loop fix-the --json",
    ),
    (
        "run",
        "# The tests in the loop's sandbox
git loop run fix-the -- make test
# With no network at all, or one more domain allowed for this run
git loop run fix-the --net none -- cargo test --offline
git loop run fix-the --allow-domain pypi.example.com -- pip install -r requirements.txt",
    ),
    (
        "shell",
        "# An interactive shell in the loop's sandbox
git loop shell fix-the
# Read-only everywhere but $HOME and /tmp
git loop shell fix-the --mode review",
    ),
    (
        "agent",
        "# The configured agent (agent.command) in the loop's sandbox
git loop agent fix-the
# With arguments of its own
git loop agent fix-the -- --model sonnet
# Started without a login in the vault (it asks for one itself)
git loop agent fix-the --no-login",
    ),
    (
        "agent login",
        "# The key, stored in the vault and bound to the agent's API host
printf %s \"$ANTHROPIC_API_KEY\" | git loop agent login
# Codex's key, for the loops of vault work
printf %s \"$OPENAI_API_KEY\" | git loop agent login --agent codex --vault work
# Through a gateway
printf %s \"$KEY\" | git loop agent login --for llm.example.com",
    ),
    (
        "review",
        "# Every loop with proposals
git loop review
# One loop: commits, diff, uncommitted changes
git loop review fix-the
# Only the file names; everything as JSON
git loop review fix-the --name-only
git loop review fix-the --json",
    ),
    (
        "publish",
        "# What would happen, then the notes into the team's trunk
git loop publish fix-the --dry-run
git loop publish fix-the
# A distill loop's knowledge, with a change under .loopat/ accepted
git loop publish condense --knowledge --accept-policy .loopat/config.toml",
    ),
    (
        "merge",
        "# The loop's code into the branch it started from
git loop merge fix-the
# Squashed into another branch, with a message
git loop merge fix-the --into release --squash -m \"fix the login bug\"",
    ),
    (
        "pr",
        "# Push the loop's branch and open a pull request (gh or glab), or print its URL
git loop pr fix-the
git loop pr fix-the --draft",
    ),
    (
        "distill",
        "# A loop whose agent condenses the notes into knowledge
git loop distill \"condense this week's notes\"
# The loop only, for an agent started later; or a pull request at the end
git loop distill \"condense\" --no-agent
git loop distill \"condense\" --pr",
    ),
    (
        "vault",
        "# Your identity and the default vault, then a credential bound to its host
git loop vault init
printf %s \"$TOKEN\" | git loop vault set default env GITHUB_TOKEN --for github.com,*.github.com
# What a vault holds (names, never values)
git loop vault list",
    ),
    (
        "vault init",
        "# Your identity (when missing) and the default vault
git loop vault init
# A vault of its own for the loops that need a credential
git loop vault init deploy",
    ),
    (
        "vault list",
        "# Every vault with its recipients and entries
git loop vault list
git loop vault list default --json",
    ),
    (
        "vault set",
        "# A variable from stdin, bound to the hosts that may receive it
printf %s \"$TOKEN\" | git loop vault set default env GITHUB_TOKEN --for github.com,*.github.com
# A file of $HOME inside the sandbox
git loop vault set default file .netrc ~/.netrc --for api.example.com",
    ),
    (
        "vault bind",
        "# Bind a stored entry to the hosts that may receive it
git loop vault bind default env:NPM_TOKEN registry.npmjs.org
# Deliver it as it is
git loop vault bind default env:NPM_TOKEN --unbound",
    ),
    (
        "vault get",
        "# A value on stdout, into a pipe
git loop vault get default env GITHUB_TOKEN | gh auth login --with-token",
    ),
    (
        "vault edit",
        "# Edit an entry with $EDITOR on a copy in memory
git loop vault edit default file:.netrc",
    ),
    (
        "vault rm",
        "# Remove an entry
git loop vault rm default env:GITHUB_TOKEN",
    ),
    (
        "vault recipients",
        "# Who a vault is encrypted to; add a teammate's key, then re-encrypt
git loop vault recipients default list
git loop vault recipients default add ~/.ssh/alice.pub
git loop vault rekey default",
    ),
    (
        "vault rekey",
        "# Every entry re-encrypted to the current recipients (after one was removed)
git loop vault recipients default rm age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq
git loop vault rekey default",
    ),
    (
        "autocommit",
        "# What would be committed, and what would be left out
git loop autocommit --all --dry-run
# Commit what loops left uncommitted, then publish the notes that merge cleanly
git loop autocommit --all --publish-notes",
    ),
    (
        "cron",
        "# autocommit every 10 minutes, unattended; then see the entry
git loop cron install --every 10m
git loop cron status",
    ),
    (
        "cron install",
        "# autocommit every 5 minutes (a crontab entry, or a systemd user timer)
git loop cron install
git loop cron install --every 1h",
    ),
    (
        "cron status",
        "# The entry, if installed
git loop cron status
git loop cron status --json",
    ),
    (
        "cron uninstall",
        "# Remove the entry
git loop cron uninstall",
    ),
    (
        "hooks",
        "# The secret guard and the activity record in the workspace's repositories
git loop hooks install
git loop hooks install --repo ~/src/app",
    ),
    (
        "hooks install",
        "# In the context and personal repositories, and in a code repository
git loop hooks install
git loop hooks install --repo ~/src/app",
    ),
    (
        "hooks uninstall",
        "# Remove git loop's lines; your own hook lines stay
git loop hooks uninstall
git loop hooks uninstall --repo ~/src/app",
    ),
    (
        "sync",
        "# What would move, then fetch, merge and push each repository
git loop sync --dry-run
git loop sync
# The loops' unpublished notes branches too
git loop sync --loops",
    ),
    (
        "doctor",
        "# Check the workspace, the sandbox, the agent and its login
git loop doctor
# Repair what can be repaired (a workspace moved to another machine)
git loop doctor --fix",
    ),
    (
        "log",
        "# A loop's runs, exit codes and refused connections
git loop log fix-the
git loop log fix-the --json",
    ),
    (
        "logs",
        "# The end of the log of the session's service db (its profile's [services.db])
git loop logs fix-the db
# The last 20 lines of the profile's start hook
git loop logs fix-the start -n 20",
    ),
    (
        "up",
        "# The loop's sandbox stays up; run, shell and agent join it
git loop up fix-the
git loop agent fix-the --detach
git loop attach fix-the",
    ),
    (
        "down",
        "# End the loop's live session and everything that runs in it
git loop down fix-the",
    ),
    (
        "attach",
        "# This terminal on the agent running detached (Ctrl-b then d detaches again)
git loop attach fix-the",
    ),
    (
        "port",
        "# The dev server on port 3000 inside, reachable on the host (prints its URL)
git loop port fix-the 3000
# On a host port of your choosing
git loop port fix-the 5173 --host 5173
# The loop's ports, and one removed
git loop port fix-the --json
git loop port fix-the 3000 --remove",
    ),
    (
        "open",
        "# The loop's first port in your browser, then its port 5173
git loop open fix-the
git loop open fix-the 5173",
    ),
    (
        "watch",
        "# Each change of an agent's state (working, needs-input, done), as it happens
git loop watch
git loop watch fix-the --json",
    ),
    (
        "comment",
        "# A comment on lines of a file of the proposal, then the open comments
git loop comment fix-the src/login.rs:42 -m \"this check runs twice\"
git loop comment fix-the --list
# Given to the agent to answer with a commit or a reply
git loop agent fix-the --address-review",
    ),
    (
        "rebase",
        "# The loop's branch onto its base branch as it is now, in its sandbox
git loop rebase fix-the
# Onto another revision, conflicts given to the loop's agent
git loop rebase fix-the --onto origin/main --agent",
    ),
    (
        "compare",
        "# Three loops on one task, then their proposals side by side
git loop new \"fix the flaky test\" --fan-out 3
git loop compare fix-the-flaky-test",
    ),
    (
        "pick",
        "# Merge one loop of a fan-out and remove the others (their branches kept)
git loop pick fix-the-flaky-test-2 --remove-others",
    ),
    (
        "grant",
        "# A folder read-only for every run of the loop, one read-write for the next run
git loop grant fix-the --ro ~/datasets
git loop grant fix-the --rw ~/scratch --once
# Taken back
git loop grant fix-the --revoke ~/datasets",
    ),
    (
        "demo",
        "# A few seconds in a throwaway folder, removed afterwards
git loop demo
# Kept, to look around
git loop demo --keep --dir /tmp/demo",
    ),
    (
        "completions",
        "# Completions for this shell session
source <(git loop completions bash)
git loop completions zsh > ~/.zfunc/_git-loop",
    ),
];

/// The examples of the command at `path` (`"vault set"`; `""` for git loop itself).
pub fn of(path: &str) -> Option<&'static str> {
    EXAMPLES.iter().find(|(p, _)| *p == path).map(|(_, e)| *e)
}

/// The examples as `--help` shows them, under [`HEADING`], indented.
pub fn help_text(examples: &str) -> String {
    let mut out = String::from(HEADING);
    for line in examples.lines() {
        out.push_str("\n  ");
        out.push_str(line);
    }
    out
}

/// Gives `cmd` and every command below it its examples (see the module header). A
/// command's existing long help (the root's exit codes) comes after them.
pub fn attach(cmd: clap::Command) -> clap::Command {
    attach_at(cmd, "")
}

fn attach_at(mut cmd: clap::Command, path: &str) -> clap::Command {
    if let Some(examples) = of(path) {
        let mut text = help_text(examples);
        if let Some(after) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) {
            text.push_str("\n\n");
            text.push_str(&after.to_string());
        }
        cmd = cmd.after_long_help(text);
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let below = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |sub| attach_at(sub, &below));
    }
    cmd
}

/// Splits `text` (the long help of a command) into its examples (the lines under
/// [`HEADING`], unindented) and what follows them.
pub fn split(text: &str) -> (Option<String>, Option<String>) {
    let Some(rest) = text.strip_prefix(HEADING) else {
        return (None, Some(text.to_string()));
    };
    let (examples, after) = match rest.split_once("\n\n") {
        Some((e, a)) => (e, Some(a.to_string())),
        None => (rest, None),
    };
    let lines: Vec<&str> = examples
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.strip_prefix("  ").unwrap_or(l))
        .collect();
    (Some(lines.join("\n")), after)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command path of the tree (`""` for the root), hidden ones and `help` left out.
    fn paths() -> Vec<String> {
        fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
            out.push(path.to_string());
            for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
                if sub.get_name() == "help" {
                    continue;
                }
                let below = if path.is_empty() {
                    sub.get_name().to_string()
                } else {
                    format!("{path} {}", sub.get_name())
                };
                walk(sub, &below, out);
            }
        }
        let mut out = Vec::new();
        walk(&crate::cli::command(), "", &mut out);
        out
    }

    #[test]
    fn every_command_has_examples_and_every_example_a_command() {
        let paths = paths();
        for path in &paths {
            assert!(of(path).is_some(), "`git loop {path}` has no examples");
        }
        for (path, _) in EXAMPLES {
            assert!(
                paths.iter().any(|p| p == path),
                "examples for `git loop {path}`, which is no command"
            );
        }
    }

    /// The words of `line` from `git loop` on, as a shell splits them, up to the end of
    /// that command (a pipe, a redirection, a closing parenthesis).
    fn command_words(line: &str) -> Option<Vec<String>> {
        let start = line.find("git loop ")?;
        let (mut words, mut word, mut quote) = (Vec::new(), String::new(), None::<char>);
        let mut in_word = false;
        for c in line[start..].chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    in_word = true;
                }
                (None, '|' | '>' | '<' | ')' | ';') => break,
                (None, ' ') => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                (None, c) => {
                    word.push(c);
                    in_word = true;
                }
            }
        }
        if in_word {
            words.push(word);
        }
        Some(words)
    }

    #[test]
    fn every_example_is_a_command_line_clap_accepts() {
        let mut checked = 0;
        for (path, examples) in EXAMPLES {
            let mut runs_itself = false;
            for line in examples.lines().filter(|l| !l.starts_with('#')) {
                let words = command_words(line)
                    .unwrap_or_else(|| panic!("`{path}`: {line:?} runs no git loop"));
                assert_eq!(&words[..2], ["git", "loop"]);
                let mut argv = vec!["git-loop".to_string()];
                argv.extend(words[2..].iter().cloned());
                if let Err(e) = crate::cli::command().try_get_matches_from(&argv) {
                    panic!("`{path}`: {line:?} is refused: {e}");
                }
                let named = argv[1..]
                    .iter()
                    .take_while(|w| !w.starts_with('-'))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ");
                runs_itself |= named.starts_with(path);
                checked += 1;
            }
            assert!(runs_itself, "no example of `git loop {path}` runs it");
        }
        assert!(checked > 100, "{checked}");
    }

    #[test]
    fn help_shows_the_examples_and_every_man_page_has_them() {
        let mut root = crate::cli::command();
        let help = root.render_long_help().to_string();
        assert!(
            help.contains("Examples:\n  # A loop on the repository"),
            "{help}"
        );
        assert!(help.contains("Exit codes: 0 ok"), "{help}");
        let pages = crate::commands::completions::man_pages().unwrap();
        assert_eq!(pages.len(), paths().len());
        for (name, roff) in pages {
            let text = String::from_utf8(roff).unwrap();
            assert!(text.contains("\n.SH EXAMPLES\n"), "{name} has no EXAMPLES");
        }
        let (examples, rest) = split(&help_text("# a\ngit loop x"));
        assert_eq!(examples.as_deref(), Some("# a\ngit loop x"));
        assert_eq!(rest, None);
    }
}
