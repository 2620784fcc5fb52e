#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages emojiart-sync builds against, when they are missing:
# libcurl4-openssl-dev (HTTP), libpng-dev (PNG, pulls zlib1g-dev), libssl-dev (SHA-256 from libcrypto),
# libsqlite3-dev (the index), pkg-config (how SwiftPM finds them) and mandoc (the tests lint the man pages);
# for the tests only: openssl and python3 (an HTTPS gallery with a CA the test makes) and tmux (status --watch
# on a real terminal).
set -euo pipefail
needed=()
for pkg in libcurl4-openssl-dev libpng-dev libssl-dev libsqlite3-dev pkg-config mandoc openssl python3 tmux; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || needed+=("$pkg")
done
if [ "${#needed[@]}" -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${needed[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${needed[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${needed[@]}"
