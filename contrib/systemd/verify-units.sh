#!/bin/sh
# Checks the unit files with systemd-analyze verify, as a user manager would load them, and their sandbox with
# systemd-analyze security.
#   contrib/systemd/verify-units.sh [BINARY]
# BINARY (default: .build/debug/emojiart-sync) replaces %h/.local/bin/emojiart-sync, where the units expect the
# installed agent; the template is checked as the instance for /tmp/emojiart-sync-verify. Prints what
# systemd-analyze verify says and exits non-zero when it says anything (a clean unit prints nothing), or when
# either unit's exposure level is above 4.2 ("OK"), what the units scored when this check was added.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
binary=${1:-$here/../../.build/debug/emojiart-sync}
[ -x "$binary" ] || { echo "verify-units.sh: no agent binary at $binary (build first)" >&2; exit 2; }
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
command -v systemd-analyze >/dev/null || { echo "verify-units.sh: systemd-analyze not found" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# systemd-analyze --user needs a runtime directory; a private one keeps the check off the real session.
mkdir -m 700 "$work/runtime"
# Documentation=man:emojiart-sync(1) is checked too: against the repository's man page, not an installed one.
mkdir -p "$work/man/man1"
ln -s "$here/../../man/emojiart-sync.1" "$work/man/man1/emojiart-sync.1"
instance=$(systemd-escape --path /tmp/emojiart-sync-verify)
sed "s|%h/.local/bin/emojiart-sync|$binary|" "$here/emojiart-sync.service" > "$work/emojiart-sync.service"
sed "s|%h/.local/bin/emojiart-sync|$binary|" "$here/emojiart-sync@.service" > "$work/emojiart-sync@.service"
ln -s "emojiart-sync@.service" "$work/emojiart-sync@$instance.service"

output=$(cd "$work" && XDG_RUNTIME_DIR="$work/runtime" MANPATH="$work/man" systemd-analyze --user verify \
    "$work/emojiart-sync.service" "$work/emojiart-sync@$instance.service" 2>&1) || status=$?
if [ -n "$output" ] || [ "${status:-0}" -ne 0 ]; then
    printf '%s\n' "$output"
    echo "verify-units.sh: systemd-analyze verify failed (status ${status:-0})" >&2
    exit 1
fi
# --offline and --threshold (0-100, ten times the printed level) are systemd 250's.
for unit in emojiart-sync.service "emojiart-sync@$instance.service"; do
    exposure=$(cd "$work" && XDG_RUNTIME_DIR="$work/runtime" systemd-analyze --user security --offline=true \
        --threshold=42 "$work/$unit" 2>&1) || {
        printf '%s\n' "$exposure" | tail -n 1
        echo "verify-units.sh: $unit is less sandboxed than it was (systemd-analyze security, above 4.2)" >&2
        exit 1
    }
done
echo "verify-units.sh: both units verify clean with $binary; exposure $(printf '%s\n' "$exposure" | sed -n 's/.*exposure level for [^:]*: //p')"
