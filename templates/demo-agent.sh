# The scripted agent of `git loop demo`. It runs inside the loop's sandbox, does a little
# honest work through the proxy, then tries three things the sandbox must refuse.
#   $1: the URL of the demo's server (an allowed name)   $2: a host secret the demo
#   planted   $3: the registered repository's name
set -u
url=$1
secret=$2
repo=$3
say() { printf '\nagent: %s\n' "$*"; }
git_as_agent() { git -c user.name="demo agent" -c user.email=agent@loop.invalid "$@"; }

say "fetching the greeting from $url (allowed, through the proxy)"
git clone -q "$url" /tmp/greetings || exit 1
cat /tmp/greetings/greeting.txt

say "writing greet.sh with it, in $(pwd), and committing"
printf '#!/bin/sh\necho "%s"\n' "$(cat /tmp/greetings/greeting.txt)" > greet.sh
chmod +x greet.sh && ./greet.sh
git add greet.sh && git_as_agent commit -q -m "Add a greeting" || exit 1

say "writing a note for the team"
cd /loopat/context/notes || exit 1
printf -- '- greet.sh prints the greeting fetched from the greetings repository\n' >> inbox.md
git add -A && git_as_agent commit -q -m "Note where the greeting comes from" || exit 1

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
attempt "reach a domain that is not allowed (exfil.example.com)" \
  git ls-remote https://exfil.example.com/loot.git
attempt "read the host's secret ($secret)" cat "$secret"
attempt "move the trunk of the origin ($repo main)" \
  git -C "/loopat/context/repos/$repo" update-ref refs/heads/main HEAD
printf '\nagent: %s of 3 refused\n' "$refused"
[ "$refused" = 3 ]
