# fish completion for git loop: `git-loop <TAB>`, and `git loop <TAB>` through fish's own
# git completion, which completes `git loop ...` as `git-loop ...`. Written by
# `git loop completions fish`.
#
# The candidates come from the binary itself (`git-loop __complete -- WORD...`, the last
# word being the one completed): its commands and options as clap parses them, enum
# values, and the loop ids, vaults and sandbox profiles of the workspace. Hidden commands
# are never offered; where a path is wanted, fish completes file names.

function __git_loop_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l out (command git-loop __complete -- $words (commandline -ct) 2>/dev/null)
    switch "$out"
        case :files
            __fish_complete_path (commandline -ct)
        case :dirs
            __fish_complete_directories (commandline -ct)
        case '*'
            printf '%s\n' $out
    end
end

complete -c git-loop -f -a '(__git_loop_complete)'
