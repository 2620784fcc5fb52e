#!/usr/bin/env bash
# Turns a `make install DESTDIR=ROOT PREFIX=/usr` tree into a Debian package, offline, with the tools dpkg
# ships (no debhelper): `make deb` runs it.
#
#   contrib/deb/build-deb.sh ROOT OUTDIR     writes OUTDIR/emojiart-sync_VERSION_ARCH.deb and prints its path
#
# What it adds to ROOT: compressed man pages, /usr/share/doc/emojiart-sync/{copyright,changelog.gz}, the
# lintian overrides (each explained in contrib/deb/lintian-overrides), and DEBIAN/{control,md5sums}.
# Depends: is derived, not guessed: dpkg-shlibdeps reads each binary's NEEDED libraries and asks dpkg which
# installed package ships each one and from which version its symbols are available.
set -euo pipefail
root=$(realpath "$1")
outdir=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
package=emojiart-sync
for tool in dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "build-deb: $tool is missing (Debian: apt-get install dpkg-dev)" >&2; exit 1; }
done
binaries=("$root/usr/bin/emojiart-sync" "$root/usr/bin/emojiart-gallery")

# The version is the program's own (first line of --version: `emojiart-sync 0.1.0 (commit ...)`). A native
# package: no Debian revision.
version=$("${binaries[0]}" --version | head -n 1 | cut -d ' ' -f 2)
arch=$(dpkg --print-architecture)
# Reproducible: every date and mtime is the last commit's (SOURCE_DATE_EPOCH when set, as Debian's tools do).
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)}

gzip -9nf "$root/usr/share/man/man1/"*.1

doc="$root/usr/share/doc/$package"
install -d "$doc"
install -m 0644 "$here/copyright" "$doc/copyright"
{
  echo "$package ($version) unstable; urgency=medium"
  echo
  echo "  * Built from commit $("${binaries[0]}" --version | head -n 1 | sed -E 's/.*\(commit ([^)]*)\).*/\1/')."
  echo
  echo " -- emojiart-sync maintainers <maintainers@emojiart-sync.invalid>  $(date -u -R -d "@$epoch")"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
install -d "$root/usr/share/lintian/overrides"
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
cat > "$root/DEBIAN/control" <<CONTROL
Package: $package
Version: $version
Architecture: $arch
Maintainer: emojiart-sync maintainers <maintainers@emojiart-sync.invalid>
Installed-Size: $installed_size
Depends: $depends
Section: net
Priority: optional
Description: keeps a directory in sync with an EmojiArt gallery
 emojiart-sync mirrors the JSON feed and PNG images of an EmojiArt gallery (the
 server of the book "Modern Concurrency in Swift") into a directory, and keeps
 it so: it watches the directory with inotify and repairs damaged or deleted
 files at once, polls the feed, validates every image with libpng, and never
 touches a file it did not write. It runs as a systemd user service
 (emojiart-sync.service, emojiart-sync@.service) and serves Prometheus metrics
 on request.
 .
 The package also ships emojiart-gallery, a Linux gallery server with the same
 protocol, for trying the agent out and for tests.
CONTROL
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$epoch" {} +

mkdir -p "$outdir"
deb="$outdir/${package}_${version}_${arch}.deb"
SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
