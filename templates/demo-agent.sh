# The scripted agent of `git loop demo`. It runs inside the loop's sandbox, does a little
# honest work, then tries three things the sandbox must refuse.
#   $1: the host's home folder   $2: the registered repository's name
set -u
host_home=$1
repo=$2
say() { printf '\nagent: %s\n' "$*"; }
git_as_agent() { git -c user.name="demo agent" -c user.email=agent@loop.invalid "$@"; }

say "editing the code in $(pwd)"
cat > greet.c <<'C'
#include <stdio.h>
int main(void) { puts("hello from a loop"); return 0; }
C
cc -o /tmp/greet greet.c && /tmp/greet
git add greet.c && git_as_agent commit -q -m "Add a greeting" && git log --oneline -1

say "writing a note and a memory file"
cd /loopat/context/notes || exit 1
printf -- '- greet.c prints the greeting; built with cc\n' >> inbox.md
printf '# Greeting\n\nThe greeting lives in greet.c of %s.\n' "$repo" > memory/greeting.md
printf -- '- [greeting](greeting.md): where the greeting lives\n' >> memory/MEMORY.md
git add -A && git_as_agent commit -q -m "Note where the greeting lives" && git log --oneline -1

say "now three things the sandbox must refuse"
refused=0
attempt() {
  what=$1; shift
  if out=$("$@" 2>&1); then
    printf '  ALLOWED: %s\n' "$what"
  else
    refused=$((refused + 1))
    printf '  refused: %s\n           (%s)\n' "$what" "$(printf '%s' "$out" | tail -n 1)"
  fi
}
attempt "read the host's ~/.ssh ($host_home/.ssh)" ls "$host_home/.ssh"
attempt "write /usr" sh -c 'echo pwned > /usr/pwned'
attempt "move trunk of the origin ($repo main)" git -C "/loopat/context/repos/$repo" update-ref refs/heads/main HEAD
printf '\nagent: %s of 3 refused\n' "$refused"
[ "$refused" = 3 ]
