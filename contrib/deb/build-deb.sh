#!/usr/bin/env bash
# Turns a `make install-PACKAGE DESTDIR=ROOT PREFIX=/usr` tree into a Debian package, offline, with the tools
# dpkg ships (no debhelper): `make deb` runs it once per package.
#
#   contrib/deb/build-deb.sh PACKAGE ROOT OUTDIR CHECKOUTS AGENT
#       writes OUTDIR/PACKAGE_VERSION_ARCH.deb and prints its path. PACKAGE is emojiart-sync (the agent) or
#       emojiart-gallery (the test gallery); CHECKOUTS is the build's SwiftPM checkouts directory, whose
#       packages' NOTICE files go into the package; AGENT is the built emojiart-sync, whose --version gives both
#       packages their version and commit (the gallery has no --version).
#
# What it adds to ROOT: compressed man pages, /usr/share/doc/PACKAGE/{copyright,NOTICE.gz,changelog.gz}, the
# lintian overrides (each explained in contrib/deb/lintian-overrides), and DEBIAN/{control,md5sums}.
# Depends: is derived, not guessed: dpkg-shlibdeps reads each binary's NEEDED libraries and asks dpkg which
# installed package ships each one and from which version its symbols are available.
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: build-deb.sh PACKAGE ROOT OUTDIR CHECKOUTS AGENT" >&2; exit 64; }
package=$1
root=$(realpath "$2")
outdir=$(realpath "$3")
checkouts=$(realpath "$4")
agent=$(realpath "$5")
here=$(cd "$(dirname "$0")" && pwd)
for tool in dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "build-deb: $tool is missing (Debian: apt-get install dpkg-dev)" >&2; exit 1; }
done
[ -f "$here/$package.copyright" ] || { echo "build-deb: no contrib/deb/$package.copyright" >&2; exit 1; }
mapfile -t binaries < <(find "$root/usr/bin" -type f | sort)
[ "${#binaries[@]}" -gt 0 ] || { echo "build-deb: $root/usr/bin holds no program" >&2; exit 1; }

# Who answers for the package and where its bugs go: the one address the README and the man page's REPORTING
# BUGS give too (Tests/EmojiArtSyncTests/CLI/LicenseTests.swift checks that they agree).
maintainer="emojiart-sync maintainers <maintainers@emojiart-sync.invalid>"
bugs="mailto:maintainers@emojiart-sync.invalid"

case "$package" in
  emojiart-sync)
    description="keeps a directory in sync with an EmojiArt gallery
 emojiart-sync mirrors the JSON feed and PNG images of an EmojiArt gallery (the
 server of the book \"Modern Concurrency in Swift\") into a directory, and keeps
 it so: it watches the directory with inotify and repairs damaged or deleted
 files at once, polls the feed, validates every image with libpng, and never
 touches a file it did not write. It runs as a systemd user service
 (emojiart-sync.service, emojiart-sync@.service) and serves Prometheus metrics
 on request.
 .
 A gallery server to try it against is in the package emojiart-gallery."
    section=net ;;
  emojiart-gallery)
    description="EmojiArt gallery server for trying out and testing emojiart-sync
 emojiart-gallery serves the JSON feed and PNG images of an EmojiArt gallery
 (the protocol of the server of the book \"Modern Concurrency in Swift\"), with
 the book's quirks and injectable faults (latency, corrupt or truncated images,
 server errors, endless bodies), or exports it as static files. It exists to
 try emojiart-sync out and to test it; it is not needed to run the agent."
    section=devel ;;
  *) echo "build-deb: unknown package $package (emojiart-sync or emojiart-gallery)" >&2; exit 64 ;;
esac

# The version is the agent's own (first line of --version: `emojiart-sync 0.1.0 (commit ...)`). A native
# package: no Debian revision.
version=$("$agent" --version | head -n 1 | cut -d ' ' -f 2)
commit=$("$agent" --version | head -n 1 | sed -n -E 's/.*\(commit ([^)]*)\).*/\1/p')
arch=$(dpkg --print-architecture)
# Reproducible: every date and mtime is the last commit's (SOURCE_DATE_EPOCH when set, as Debian's tools do).
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)}

gzip -9nf "$root/usr/share/man/man1/"*.1

doc="$root/usr/share/doc/$package"
install -d "$doc"
install -m 0644 "$here/$package.copyright" "$doc/copyright"
# Apache-2.0 section 4(d): the NOTICE of every linked package that has one travels with the binary. The packages
# are those the copyright file lists (Files: */checkouts/NAME/*); each must be a checkout of this build.
{
  echo "NOTICE files of the Apache-2.0 packages linked into $package (see copyright)."
  sed -n -E 's|^Files: \*/checkouts/([^/]+)/\*$|\1|p' "$here/$package.copyright" | while read -r name; do
    [ -d "$checkouts/$name" ] || { echo "build-deb: $package.copyright lists $name, not a checkout in $checkouts" >&2; exit 1; }
    if [ -f "$checkouts/$name/NOTICE.txt" ]; then
      printf '\n===== %s =====\n' "$name"
      cat "$checkouts/$name/NOTICE.txt"
    fi
  done
} | gzip -9n > "$doc/NOTICE.gz"
{
  echo "$package ($version) unstable; urgency=medium"
  echo
  echo "  * Built from commit ${commit:-unknown}."
  echo
  echo " -- $maintainer  $(date -u -R -d "@$epoch")"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/NOTICE.gz" "$doc/changelog.gz"
install -d "$root/usr/share/lintian/overrides"
# The overrides apply to both packages; each line names its tag only.
sed -e '/^#/d' -e '/^$/d' "$here/lintian-overrides" > "$root/usr/share/lintian/overrides/$package"
chmod 0644 "$root/usr/share/lintian/overrides/$package"

# dpkg-shlibdeps wants a source tree: a debian/control naming the package is all it reads from it.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$package" "$package" > "$scratch/debian/control"
depends=$(cd "$scratch" && dpkg-shlibdeps -O "${binaries[@]/#/-e}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps derived no dependencies" >&2; exit 1; }

install -d -m 0755 "$root/DEBIAN"
installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f 1)
# No Homepage: the project has no page on the web, and a made-up address would send people nowhere. The
# documentation is the man page (and the source's README.md); bugs go to the Bugs address.
cat > "$root/DEBIAN/control" <<CONTROL
Package: $package
Version: $version
Architecture: $arch
Maintainer: $maintainer
Bugs: $bugs
Installed-Size: $installed_size
Depends: $depends
Section: $section
Priority: optional
Description: $description
CONTROL
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$epoch" {} +

mkdir -p "$outdir"
deb="$outdir/${package}_${version}_${arch}.deb"
SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
