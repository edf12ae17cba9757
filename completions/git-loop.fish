# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_git_loop_global_optspecs
    string join \n color= q/quiet h/help V/version
end

function __fish_git_loop_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_git_loop_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_git_loop_using_subcommand
    set -l cmd (__fish_git_loop_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c git-loop -n "__fish_git_loop_needs_command" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_needs_command" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_needs_command" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_needs_command" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "init" -d 'Create the workspace: context repositories, your personal repository, the loop folders'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "new" -d 'Create a loop: a branch `loop/<id>` and its own working tree of the repository you are in, plus its own branch of the team\'s notes'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "list" -d 'List the loops with their state, age, commits ahead/behind and disk use'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "show" -d 'Show one loop: its record, its folders, and where its branches stand'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "rm" -d 'Remove a loop\'s folder and working trees'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "gc" -d 'Remove finished loops: merged or published, with nothing left that is not'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "config" -d 'Read and write the layered configuration'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "run" -d 'Run a command in a loop\'s sandbox'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "shell" -d 'Open an interactive shell ($SHELL, else bash) in a loop\'s sandbox'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "grant" -d 'Grant a loop\'s sandbox one more host folder or file, at the same path inside'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "agent" -d 'Run the configured agent (`agent.command`, default `claude`) in a loop\'s sandbox'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "log" -d 'Show a loop\'s sandbox events: starts, exits (code, duration), violations'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "vault" -d 'Manage vaults: credentials encrypted with age, given to a loop\'s sandbox'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "publish" -d 'Publish a loop\'s notes (and, for a distill loop, its knowledge) into trunk'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "merge" -d 'Merge a code loop\'s branch into the repository\'s base branch (or --into)'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "review" -d 'Show what loops propose: commits ahead of their targets and uncommitted changes'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "pr" -d 'Push a loop\'s branch to the remote and open a pull request'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "distill" -d 'Start a distill loop: the agent condenses the team\'s notes and memory into knowledge'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "autocommit" -d 'Commit every dirty repository of the named loops (inside each loop\'s sandbox) and the personal repository'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "cron" -d 'Run `git loop autocommit --all --quiet` on a schedule'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "hooks" -d 'Install or remove git loop\'s git hooks (the pre-commit secret guard)'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "doctor" -d 'Check the workspace and say how to fix each problem found'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "demo" -d 'Show git loop end to end in a throwaway workspace: a sample repository, a loop, and a scripted agent in the real sandbox that works, commits, takes notes, and tries three forbidden things'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "man" -d 'Print the man page (roff)'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "__connect" -d 'ssh\'s ProxyCommand inside a proxy-mode sandbox'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "hook" -d 'What the git hooks and diff drivers installed by git loop call (not for people)'
complete -c git-loop -n "__fish_git_loop_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand init" -l knowledge -d 'Clone the team\'s knowledge repository from this URL' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand init" -l notes -d 'Clone the team\'s notes repository from this URL' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand init" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand init" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand init" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -l repo -d 'The repository to work on (default: the one the current folder is in)' -r -F
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -l base -d 'The commit, branch or tag to start from (default: HEAD)' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -l vault -d 'The vault whose credentials the loop\'s sandbox receives' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -l sandbox -d 'The sandbox profile (knowledge/.loopat/sandboxes/<name>/)' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -l seed-chat -d 'A conversation transcript the loop continues: read-only inside at /loopat/context/chat/<id>/' -r -F
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -l scratch -d 'A loop without code: its working tree starts empty'
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -l json -d 'Print the loop record as JSON'
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand new" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand list" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand list" -l all -d 'Also list removed loops whose branches remain'
complete -c git-loop -n "__fish_git_loop_using_subcommand list" -l json -d 'Print a JSON array of loop records'
complete -c git-loop -n "__fish_git_loop_using_subcommand list" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand list" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand show" -l mode -d 'With --mounts: the view in this mode' -r -f -a "work\t'The rw paths of the loop are writable'
review\t'Everything read-only but $HOME and /tmp'
plan\t'The same as review: read and reason, change nothing'"
complete -c git-loop -n "__fish_git_loop_using_subcommand show" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand show" -l json -d 'Print the loop record as JSON'
complete -c git-loop -n "__fish_git_loop_using_subcommand show" -l mounts -d 'Print the sandbox\'s view instead: every path inside, its host source, its mode'
complete -c git-loop -n "__fish_git_loop_using_subcommand show" -l net -d 'Print what the proxy network mode lets this loop reach instead: the allowlist with where each entry comes from, the denylist, and the operator\'s pins and ranges'
complete -c git-loop -n "__fish_git_loop_using_subcommand show" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand show" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand rm" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand rm" -s f -l force -d 'Remove even though work would be lost'
complete -c git-loop -n "__fish_git_loop_using_subcommand rm" -l delete-branches -d 'Also delete the branches loop/<id> from the origins'
complete -c git-loop -n "__fish_git_loop_using_subcommand rm" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand rm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand rm" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand gc" -l older-than -d 'Only loops created longer ago than this (e.g. 14d, 12h, 2w)' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand gc" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand gc" -l merged -d 'Only loops whose code is merged'
complete -c git-loop -n "__fish_git_loop_using_subcommand gc" -s n -l dry-run -d 'Say what would be removed, remove nothing'
complete -c git-loop -n "__fish_git_loop_using_subcommand gc" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand gc" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand gc" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and not __fish_seen_subcommand_from get set unset list help" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and not __fish_seen_subcommand_from get set unset list help" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and not __fish_seen_subcommand_from get set unset list help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and not __fish_seen_subcommand_from get set unset list help" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and not __fish_seen_subcommand_from get set unset list help" -f -a "get" -d 'Print the value of KEY (e.g. sandbox.backend)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and not __fish_seen_subcommand_from get set unset list help" -f -a "set" -d 'Set KEY to VALUE in one layer (default: personal)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and not __fish_seen_subcommand_from get set unset list help" -f -a "unset" -d 'Remove KEY from one layer (default: personal)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and not __fish_seen_subcommand_from get set unset list help" -f -a "list" -d 'Print every key with its value'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and not __fish_seen_subcommand_from get set unset list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from get" -l loop -d 'Read as the loop ID sees it' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from get" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from get" -l show-origin -d 'Also say which layer the value comes from'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from get" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from set" -l loop -d 'The layer of one loop' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from set" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from set" -l operator -d 'The operator layer (this machine\'s owner)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from set" -l team -d 'The team layer, in the knowledge repository (commit and share it yourself)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from set" -l personal -d 'The personal layer (the default)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from unset" -l loop -d 'The layer of one loop' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from unset" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from unset" -l operator -d 'The operator layer (this machine\'s owner)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from unset" -l team -d 'The team layer, in the knowledge repository (commit and share it yourself)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from unset" -l personal -d 'The personal layer (the default)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from unset" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from unset" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from unset" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from list" -l loop -d 'Read as the loop ID sees it' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from list" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from list" -l show-origin -d 'Also say which layer and file each value comes from'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from list" -l json -d 'Print JSON'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "get" -d 'Print the value of KEY (e.g. sandbox.backend)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "set" -d 'Set KEY to VALUE in one layer (default: personal)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "unset" -d 'Remove KEY from one layer (default: personal)'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "list" -d 'Print every key with its value'
complete -c git-loop -n "__fish_git_loop_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand run" -l mode -d 'work: the loop\'s folders are writable; review: everything read-only but $HOME and /tmp' -r -f -a "work\t'The rw paths of the loop are writable'
review\t'Everything read-only but $HOME and /tmp'
plan\t'The same as review: read and reason, change nothing'"
complete -c git-loop -n "__fish_git_loop_using_subcommand run" -l net -d 'proxy: only the allowed domains, through git-loop\'s proxy (the default); host: the host\'s network; none: loopback only' -r -f -a "host\t'Share the host\'s network'
none\t'A new network namespace with loopback only'
proxy\t'A new network namespace whose only way out is git-loop\'s proxy, for the allowlisted domains (`git loop show ID --net`)'"
complete -c git-loop -n "__fish_git_loop_using_subcommand run" -l allow-domain -d 'Let the proxy also reach this domain for this run (repeatable): a host name, *.example.com (its subdomains) or name.*.example.com (one label)' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand run" -l backend -d 'auto: bwrap if the probe passes, else refuse; none: no sandbox at all' -r -f -a "auto\t'bwrap when the probe passes; otherwise refuse'
bwrap\t'bwrap, or refuse with exit 3'
none\t'No sandbox: run on the host (with a warning every time)'"
complete -c git-loop -n "__fish_git_loop_using_subcommand run" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand run" -l print-argv -d 'Print the exact bwrap command line instead of running it'
complete -c git-loop -n "__fish_git_loop_using_subcommand run" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand run" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand shell" -l mode -d 'work: the loop\'s folders are writable; review: everything read-only but $HOME and /tmp' -r -f -a "work\t'The rw paths of the loop are writable'
review\t'Everything read-only but $HOME and /tmp'
plan\t'The same as review: read and reason, change nothing'"
complete -c git-loop -n "__fish_git_loop_using_subcommand shell" -l net -d 'proxy: only the allowed domains, through git-loop\'s proxy (the default); host: the host\'s network; none: loopback only' -r -f -a "host\t'Share the host\'s network'
none\t'A new network namespace with loopback only'
proxy\t'A new network namespace whose only way out is git-loop\'s proxy, for the allowlisted domains (`git loop show ID --net`)'"
complete -c git-loop -n "__fish_git_loop_using_subcommand shell" -l allow-domain -d 'Let the proxy also reach this domain for this run (repeatable): a host name, *.example.com (its subdomains) or name.*.example.com (one label)' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand shell" -l backend -d 'auto: bwrap if the probe passes, else refuse; none: no sandbox at all' -r -f -a "auto\t'bwrap when the probe passes; otherwise refuse'
bwrap\t'bwrap, or refuse with exit 3'
none\t'No sandbox: run on the host (with a warning every time)'"
complete -c git-loop -n "__fish_git_loop_using_subcommand shell" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand shell" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand shell" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand shell" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand grant" -l ro -d 'Grant PATH read-only' -r -F
complete -c git-loop -n "__fish_git_loop_using_subcommand grant" -l rw -d 'Grant PATH read-write' -r -F
complete -c git-loop -n "__fish_git_loop_using_subcommand grant" -l revoke -d 'Remove the grant of PATH' -r -F
complete -c git-loop -n "__fish_git_loop_using_subcommand grant" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand grant" -l once -d 'For the next run only'
complete -c git-loop -n "__fish_git_loop_using_subcommand grant" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand grant" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand grant" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand agent" -l mode -d 'work: the loop\'s folders are writable; review: everything read-only but $HOME and /tmp' -r -f -a "work\t'The rw paths of the loop are writable'
review\t'Everything read-only but $HOME and /tmp'
plan\t'The same as review: read and reason, change nothing'"
complete -c git-loop -n "__fish_git_loop_using_subcommand agent" -l net -d 'proxy: only the allowed domains, through git-loop\'s proxy (the default); host: the host\'s network; none: loopback only' -r -f -a "host\t'Share the host\'s network'
none\t'A new network namespace with loopback only'
proxy\t'A new network namespace whose only way out is git-loop\'s proxy, for the allowlisted domains (`git loop show ID --net`)'"
complete -c git-loop -n "__fish_git_loop_using_subcommand agent" -l allow-domain -d 'Let the proxy also reach this domain for this run (repeatable): a host name, *.example.com (its subdomains) or name.*.example.com (one label)' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand agent" -l backend -d 'auto: bwrap if the probe passes, else refuse; none: no sandbox at all' -r -f -a "auto\t'bwrap when the probe passes; otherwise refuse'
bwrap\t'bwrap, or refuse with exit 3'
none\t'No sandbox: run on the host (with a warning every time)'"
complete -c git-loop -n "__fish_git_loop_using_subcommand agent" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand agent" -l print-argv -d 'Print the exact bwrap command line instead of running it'
complete -c git-loop -n "__fish_git_loop_using_subcommand agent" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand agent" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand agent" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand log" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand log" -l json -d 'Print the events as a JSON array'
complete -c git-loop -n "__fish_git_loop_using_subcommand log" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand log" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand log" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -f -a "init" -d 'Create your identity (when missing) and a vault, and install the secret guard and the vault diff in your personal repository. Prints your recipient (public key)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -f -a "list" -d 'List vaults with their recipients and entries (names and sizes, never values)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -f -a "set" -d 'Store a value: `set VAULT env NAME` reads it from stdin (without echo on a terminal); `set VAULT file REL PATH` stores the file PATH (`-`: stdin) as $HOME/REL'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -f -a "get" -d 'Print a value on stdout (refused on a terminal unless --force)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -f -a "edit" -d 'Edit an entry with $EDITOR on a copy in a private tmpfs folder, removed afterwards; re-encrypted when saved. ENTRY is env:NAME, file:REL, or a bare name'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -f -a "rm" -d 'Remove an entry (env:NAME, file:REL, or a bare name)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -f -a "recipients" -d 'List, add or remove the vault\'s recipients (age1…, ssh-ed25519 …, ssh-rsa …, or a .pub file)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -f -a "rekey" -d 'Re-encrypt every entry to the current recipients'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and not __fish_seen_subcommand_from init list set get edit rm recipients rekey help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from init" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from init" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from init" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from init" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from list" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from list" -l json -d 'Print JSON'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from set" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from get" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from get" -l force -d 'Print even when stdout is a terminal'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from get" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from edit" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from edit" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from edit" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from edit" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from rm" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from rm" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from rm" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from rm" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from recipients" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from recipients" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from recipients" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from recipients" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from rekey" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from rekey" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from rekey" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from rekey" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from help" -f -a "init" -d 'Create your identity (when missing) and a vault, and install the secret guard and the vault diff in your personal repository. Prints your recipient (public key)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from help" -f -a "list" -d 'List vaults with their recipients and entries (names and sizes, never values)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from help" -f -a "set" -d 'Store a value: `set VAULT env NAME` reads it from stdin (without echo on a terminal); `set VAULT file REL PATH` stores the file PATH (`-`: stdin) as $HOME/REL'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from help" -f -a "get" -d 'Print a value on stdout (refused on a terminal unless --force)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from help" -f -a "edit" -d 'Edit an entry with $EDITOR on a copy in a private tmpfs folder, removed afterwards; re-encrypted when saved. ENTRY is env:NAME, file:REL, or a bare name'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from help" -f -a "rm" -d 'Remove an entry (env:NAME, file:REL, or a bare name)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from help" -f -a "recipients" -d 'List, add or remove the vault\'s recipients (age1…, ssh-ed25519 …, ssh-rsa …, or a .pub file)'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from help" -f -a "rekey" -d 'Re-encrypt every entry to the current recipients'
complete -c git-loop -n "__fish_git_loop_using_subcommand vault; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand publish" -s m -l message -d 'The merge commit\'s message' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand publish" -l accept-policy -d 'Let this change to policy land: a path under .loopat/ or a symlink that the branch adds or changes, or a folder above them (repeatable). `git loop review ID` lists them; without this, publish refuses a branch that carries any' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand publish" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand publish" -l notes -d 'Publish the notes branch (the default)'
complete -c git-loop -n "__fish_git_loop_using_subcommand publish" -l knowledge -d 'Publish the knowledge branch of a distill loop'
complete -c git-loop -n "__fish_git_loop_using_subcommand publish" -s n -l dry-run -d 'Say what would happen, change nothing'
complete -c git-loop -n "__fish_git_loop_using_subcommand publish" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand publish" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand publish" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand merge" -l into -d 'The branch to merge into (default: the branch the loop started from)' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand merge" -s m -l message -d 'The commit message' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand merge" -l accept-policy -d 'Let this change to policy land: a path under .loopat/ or a symlink that the branch adds or changes, or a folder above them (repeatable). `git loop review ID` lists them; without this, merge refuses a branch that carries any' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand merge" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand merge" -l squash -d 'One commit with the loop\'s changes instead of a merge (the original commits stay reachable from refs/git-loop/backup/<id>)'
complete -c git-loop -n "__fish_git_loop_using_subcommand merge" -s n -l dry-run -d 'Say what would happen, change nothing'
complete -c git-loop -n "__fish_git_loop_using_subcommand merge" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand merge" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand merge" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand review" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand review" -l stat -d 'Only the diffstat'
complete -c git-loop -n "__fish_git_loop_using_subcommand review" -l name-only -d 'Only the names of changed files'
complete -c git-loop -n "__fish_git_loop_using_subcommand review" -l json -d 'Print JSON: {id, code: {ahead, files, attention}, notes: {...}, knowledge: {...}, uncommitted: [paths]}'
complete -c git-loop -n "__fish_git_loop_using_subcommand review" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand review" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand review" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand pr" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand pr" -l draft -d 'Open the pull request as a draft'
complete -c git-loop -n "__fish_git_loop_using_subcommand pr" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand pr" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand pr" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand distill" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand distill" -l no-agent -d 'Create the loop only; do not start the agent'
complete -c git-loop -n "__fish_git_loop_using_subcommand distill" -l pr -d 'Open a pull request against the knowledge remote at the end'
complete -c git-loop -n "__fish_git_loop_using_subcommand distill" -l json -d 'Print the loop record as JSON'
complete -c git-loop -n "__fish_git_loop_using_subcommand distill" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand distill" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand distill" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand autocommit" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand autocommit" -l all -d 'Every loop'
complete -c git-loop -n "__fish_git_loop_using_subcommand autocommit" -l publish-notes -d 'Then publish the notes branches that merge cleanly'
complete -c git-loop -n "__fish_git_loop_using_subcommand autocommit" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand autocommit" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand autocommit" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and not __fish_seen_subcommand_from install uninstall status help" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and not __fish_seen_subcommand_from install uninstall status help" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and not __fish_seen_subcommand_from install uninstall status help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and not __fish_seen_subcommand_from install uninstall status help" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and not __fish_seen_subcommand_from install uninstall status help" -f -a "install" -d 'Add (or update) the entry'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and not __fish_seen_subcommand_from install uninstall status help" -f -a "uninstall" -d 'Remove the entry'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and not __fish_seen_subcommand_from install uninstall status help" -f -a "status" -d 'Show the entry, if installed'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and not __fish_seen_subcommand_from install uninstall status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from install" -l every -d 'How often: 1m to 59m, or 1h to 23h' -r
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from install" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from install" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from install" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from uninstall" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from uninstall" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from uninstall" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from status" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from help" -f -a "install" -d 'Add (or update) the entry'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Remove the entry'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show the entry, if installed'
complete -c git-loop -n "__fish_git_loop_using_subcommand cron; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -f -a "install" -d 'Add the hooks (or bring them up to date)'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -f -a "uninstall" -d 'Remove git loop\'s lines from the hooks'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from install" -l repo -d 'Also this code repository' -r -F
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from install" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from install" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from install" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l repo -d 'Also this code repository' -r -F
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "install" -d 'Add the hooks (or bring them up to date)'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Remove git loop\'s lines from the hooks'
complete -c git-loop -n "__fish_git_loop_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand doctor" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand doctor" -l json -d 'Print the findings as JSON'
complete -c git-loop -n "__fish_git_loop_using_subcommand doctor" -l fix -d 'Apply the fixes that lose nothing: finish or undo what killed commands left (each result checked), and remove git lock files whose owner is provably gone'
complete -c git-loop -n "__fish_git_loop_using_subcommand doctor" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand demo" -l dir -d 'Where to build the throwaway workspace (default: a new folder under /tmp)' -r -F
complete -c git-loop -n "__fish_git_loop_using_subcommand demo" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand demo" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand demo" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand demo" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand completions" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand completions" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-loop -n "__fish_git_loop_using_subcommand completions" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand man" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand man" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand man" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand man" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand __connect" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand __connect" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand __connect" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand __connect" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and not __fish_seen_subcommand_from pre-commit textconv-vault help" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and not __fish_seen_subcommand_from pre-commit textconv-vault help" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and not __fish_seen_subcommand_from pre-commit textconv-vault help" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and not __fish_seen_subcommand_from pre-commit textconv-vault help" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and not __fish_seen_subcommand_from pre-commit textconv-vault help" -f -a "pre-commit" -d 'The secret guard: refuses a commit holding plaintext under .loopat/vaults/, a private key or a token'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and not __fish_seen_subcommand_from pre-commit textconv-vault help" -f -a "textconv-vault" -d 'git\'s textconv for vault files: a size and a recipient count, never a value'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and not __fish_seen_subcommand_from pre-commit textconv-vault help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from pre-commit" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from pre-commit" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from pre-commit" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from pre-commit" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from textconv-vault" -l color -d 'When to use colors: auto (on a terminal, unless NO_COLOR), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from textconv-vault" -s q -l quiet -d 'Print less: no status lines'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from textconv-vault" -s h -l help -d 'Print help'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from textconv-vault" -s V -l version -d 'Print version'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "pre-commit" -d 'The secret guard: refuses a commit holding plaintext under .loopat/vaults/, a private key or a token'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "textconv-vault" -d 'git\'s textconv for vault files: a size and a recipient count, never a value'
complete -c git-loop -n "__fish_git_loop_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "init" -d 'Create the workspace: context repositories, your personal repository, the loop folders'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "new" -d 'Create a loop: a branch `loop/<id>` and its own working tree of the repository you are in, plus its own branch of the team\'s notes'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "list" -d 'List the loops with their state, age, commits ahead/behind and disk use'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "show" -d 'Show one loop: its record, its folders, and where its branches stand'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "rm" -d 'Remove a loop\'s folder and working trees'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "gc" -d 'Remove finished loops: merged or published, with nothing left that is not'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "config" -d 'Read and write the layered configuration'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "run" -d 'Run a command in a loop\'s sandbox'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "shell" -d 'Open an interactive shell ($SHELL, else bash) in a loop\'s sandbox'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "grant" -d 'Grant a loop\'s sandbox one more host folder or file, at the same path inside'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "agent" -d 'Run the configured agent (`agent.command`, default `claude`) in a loop\'s sandbox'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "log" -d 'Show a loop\'s sandbox events: starts, exits (code, duration), violations'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "vault" -d 'Manage vaults: credentials encrypted with age, given to a loop\'s sandbox'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "publish" -d 'Publish a loop\'s notes (and, for a distill loop, its knowledge) into trunk'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "merge" -d 'Merge a code loop\'s branch into the repository\'s base branch (or --into)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "review" -d 'Show what loops propose: commits ahead of their targets and uncommitted changes'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "pr" -d 'Push a loop\'s branch to the remote and open a pull request'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "distill" -d 'Start a distill loop: the agent condenses the team\'s notes and memory into knowledge'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "autocommit" -d 'Commit every dirty repository of the named loops (inside each loop\'s sandbox) and the personal repository'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "cron" -d 'Run `git loop autocommit --all --quiet` on a schedule'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "hooks" -d 'Install or remove git loop\'s git hooks (the pre-commit secret guard)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "doctor" -d 'Check the workspace and say how to fix each problem found'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "demo" -d 'Show git loop end to end in a throwaway workspace: a sample repository, a loop, and a scripted agent in the real sandbox that works, commits, takes notes, and tries three forbidden things'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "man" -d 'Print the man page (roff)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "__connect" -d 'ssh\'s ProxyCommand inside a proxy-mode sandbox'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "hook" -d 'What the git hooks and diff drivers installed by git loop call (not for people)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and not __fish_seen_subcommand_from init new list show rm gc config run shell grant agent log vault publish merge review pr distill autocommit cron hooks doctor demo completions man __connect hook help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "get" -d 'Print the value of KEY (e.g. sandbox.backend)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "set" -d 'Set KEY to VALUE in one layer (default: personal)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "unset" -d 'Remove KEY from one layer (default: personal)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "list" -d 'Print every key with its value'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from vault" -f -a "init" -d 'Create your identity (when missing) and a vault, and install the secret guard and the vault diff in your personal repository. Prints your recipient (public key)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from vault" -f -a "list" -d 'List vaults with their recipients and entries (names and sizes, never values)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from vault" -f -a "set" -d 'Store a value: `set VAULT env NAME` reads it from stdin (without echo on a terminal); `set VAULT file REL PATH` stores the file PATH (`-`: stdin) as $HOME/REL'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from vault" -f -a "get" -d 'Print a value on stdout (refused on a terminal unless --force)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from vault" -f -a "edit" -d 'Edit an entry with $EDITOR on a copy in a private tmpfs folder, removed afterwards; re-encrypted when saved. ENTRY is env:NAME, file:REL, or a bare name'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from vault" -f -a "rm" -d 'Remove an entry (env:NAME, file:REL, or a bare name)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from vault" -f -a "recipients" -d 'List, add or remove the vault\'s recipients (age1…, ssh-ed25519 …, ssh-rsa …, or a .pub file)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from vault" -f -a "rekey" -d 'Re-encrypt every entry to the current recipients'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from cron" -f -a "install" -d 'Add (or update) the entry'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from cron" -f -a "uninstall" -d 'Remove the entry'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from cron" -f -a "status" -d 'Show the entry, if installed'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "install" -d 'Add the hooks (or bring them up to date)'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "uninstall" -d 'Remove git loop\'s lines from the hooks'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "pre-commit" -d 'The secret guard: refuses a commit holding plaintext under .loopat/vaults/, a private key or a token'
complete -c git-loop -n "__fish_git_loop_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "textconv-vault" -d 'git\'s textconv for vault files: a size and a recipient count, never a value'
