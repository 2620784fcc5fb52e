#!/usr/bin/env bash
# Builds the Debian packages and checks them as a user's machine would see them: lintian on each, the agent's
# package holding one program, then both unpacked into a scratch root and run from there with the Swift
# toolchain out of reach (a tmpfs mounted over it in a mount namespace of its own): `emojiart-sync --version`,
# and one `--once` against the bundled gallery (the emojiart-gallery package) that must sync every image.
#
#   contrib/deb-check.sh                               make deb (a release build with the Swift runtime linked
#                                                      in), then check both packages
#   contrib/deb-check.sh AGENT.deb GALLERY.deb         check packages already built
#
# Not part of contrib/test.sh: the release build alone takes 4 minutes of an idle 2-core machine (8 under the
# load of other builds; the whole check 11.5), more than CI's budget allows for it. Run it before a release, or as its own CI job.
# Needs root or unprivileged user namespaces (unshare -r) for the mount namespace; installs lintian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
contrib/install-deps.sh

# lintian, and dpkg-dev for make deb's dpkg-shlibdeps, when missing.
missing=()
command -v lintian >/dev/null || missing+=(lintian)
command -v dpkg-shlibdeps >/dev/null || missing+=(dpkg-dev)
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ $# -ge 2 ]; then
  debs=("$(realpath "$1")" "$(realpath "$2")")
else
  start=$SECONDS
  make deb | tee /dev/stderr | grep -E '^/.*\.deb$' > .build/deb-paths
  mapfile -t debs < .build/deb-paths
  echo "deb-check: make deb took $((SECONDS - start)) s" >&2
fi
[ "${#debs[@]}" -eq 2 ] || { echo "deb-check: expected two packages, got: ${debs[*]}" >&2; exit 1; }
for deb in "${debs[@]}"; do
  echo "deb-check: $deb ($(du -h "$deb" | cut -f 1), $(dpkg-deb -f "$deb" Installed-Size) KiB installed)"
done

# Errors and warnings fail the check; each override is explained in contrib/deb/lintian-overrides.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for deb in "${debs[@]}"; do
  echo "\$ lintian $(basename "$deb")"
  lintian_status=0
  lintian --fail-on error,warning "$deb" >"$scratch/lintian" 2>&1 || lintian_status=$?
  grep -v "running with root privileges" "$scratch/lintian" || true
  [ "$lintian_status" -eq 0 ] || { echo "deb-check: lintian found errors or warnings (above; lintian -i explains)" >&2; exit 1; }
  dpkg-deb -x "$deb" "$scratch/root"
  echo "$(dpkg-deb -f "$deb" Package) Depends: $(dpkg-deb -f "$deb" Depends)"
done
# The user's package is the agent alone.
programs=$(dpkg-deb -c "${debs[0]}" | grep -c ' \./usr/bin/.' || true)
[ "$programs" -eq 1 ] || { echo "deb-check: $(basename "${debs[0]}") holds $programs programs, not 1" >&2; exit 1; }
for program in emojiart-sync emojiart-gallery; do
  if readelf -d "$scratch/root/usr/bin/$program" | grep -E "RPATH|RUNPATH"; then
    echo "deb-check: the installed $program has a RUNPATH (above)" >&2
    exit 1
  fi
done

# The toolchain: the directory above the one holding `swift`'s bin/ (usr/bin/swift -> /opt/swift).
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
unshare_flags=(-m)
[ "$(id -u)" -eq 0 ] || unshare_flags=(-r -m)
unshare "${unshare_flags[@]}" env -i PATH=/usr/bin:/bin HOME="$scratch" \
  TOOLCHAIN="$toolchain" ROOT="$scratch/root" WORK="$scratch" bash -euo pipefail -c '
  mount -t tmpfs -o ro,size=1m none "$TOOLCHAIN"
  echo "deb-check: $TOOLCHAIN hidden: $(ls -A "$TOOLCHAIN" | wc -l) entries"
  echo "\$ emojiart-sync --version"
  "$ROOT/usr/bin/emojiart-sync" --version
  "$ROOT/usr/bin/emojiart-gallery" --host 127.0.0.1 --port 0 --count 9 >"$WORK/gallery.out" 2>/dev/null &
  gallery=$!
  trap "kill $gallery 2>/dev/null || true" EXIT
  for _ in $(seq 100); do [ -s "$WORK/gallery.out" ] && break; sleep 0.1; done
  url=$(head -n 1 "$WORK/gallery.out")
  echo "\$ emojiart-sync --once --dir DIR --server $url"
  "$ROOT/usr/bin/emojiart-sync" --once --quiet --dir "$WORK/mirror" --server "$url"
  synced=$(find "$WORK/mirror" -maxdepth 1 -name "gallery_image_*.png" | wc -l)
  echo "deb-check: --once exited 0, $synced images synced"
  [ "$synced" -eq 9 ]
'
echo "deb-check: ok"
