#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages emojiart-sync builds against, when they are missing:
# libcurl4-openssl-dev (HTTP), libpng-dev (PNG, pulls zlib1g-dev), libssl-dev (SHA-256 from libcrypto),
# libsqlite3-dev (the index), pkg-config (how SwiftPM finds them) and mandoc (the tests lint the man pages);
# for the tests only: openssl and python3 (an HTTPS gallery with a CA the test makes) and tmux (status --watch
# on a real terminal).
# Not root: it runs `sudo apt-get`, saying so first. INSTALL_DEPS=no: it lists what is missing and the command that
# installs it, and exits 1 without running anything (install them yourself, as root, then run again).
set -euo pipefail
needed=()
for pkg in libcurl4-openssl-dev libpng-dev libssl-dev libsqlite3-dev pkg-config mandoc openssl python3 tmux; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || needed+=("$pkg")
done
if [ "${#needed[@]}" -eq 0 ]; then
  exit 0
fi
if [ "${INSTALL_DEPS:-yes}" = no ]; then
  echo "install-deps: missing ${needed[*]}; as root: apt-get install --no-install-recommends ${needed[*]}" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${needed[*]}" >&2; exit 1; }
  sudo="sudo"
  echo "install-deps: installing ${needed[*]} with sudo apt-get (INSTALL_DEPS=no lists them and stops instead)" >&2
else
  echo "install-deps: installing ${needed[*]}" >&2
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${needed[@]}"
