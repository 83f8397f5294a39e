#!/usr/bin/env bash
# The analysis board (`halatafl serve`) in a real browser: headless
# Chromium and ChromeDriver from Debian's packages (installed here once, by
# apt-get, when /usr/bin/chromium or /usr/bin/chromedriver is missing),
# driven by Selenium from a virtual environment cached outside the checkout
# (crates/board/tests/browser/requirements.txt, keyed by its hash). The
# screenshot it takes is left in target/board-artifacts/board.png.
# Needs target/release/halatafl (scripts/test.sh builds it first).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin="$root/target/release/halatafl"
[ -x "$bin" ] || { echo "check-board: $bin is missing; run cargo build --release -p halatafl-cli" >&2; exit 1; }

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  echo "check-board: installing Debian's chromium and chromium-driver (once)" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "check-board: installing chromium needs root or sudo" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
fi
venv=$(./scripts/cached-venv.sh crates/board/tests/browser/requirements.txt board-browser)
# Selenium looks for drivers online unless told the paths (the test gives them).
HALATAFL_BIN="$bin" HALATAFL_ARTIFACTS="$root/target/board-artifacts" SE_OFFLINE=true \
  "$venv/bin/python" -m pytest -q crates/board/tests/browser
