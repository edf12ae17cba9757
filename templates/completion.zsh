#compdef git-loop
# zsh completion for git loop: `git-loop <TAB>`, and `git loop <TAB>` through zsh's own
# git completion, which calls _git-loop for a command it does not know (its words then
# start at `loop`). Written by `git loop completions zsh`; put it in a folder of $fpath.
#
# The candidates come from the binary itself (`git-loop __complete -- WORD...`, the last
# word being the one completed): its commands and options as clap parses them, enum
# values, and the loop ids, vaults and sandbox profiles of the workspace. Hidden commands
# are never offered; where a path is wanted, zsh completes file names.

local -a candidates
candidates=("${(@f)$(command git-loop __complete -- "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)}")
case ${candidates[1]-} in
  (:files) _files ;;
  (:dirs) _files -/ ;;
  (*) compadd -- "${(@)candidates:#}" ;;
esac
