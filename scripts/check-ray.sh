#!/usr/bin/env bash
# Runs the Ray driver's tests (ray/tests) on a local Ray instance, with the
# venv of scripts/setup-ray.sh (installed once, cached by the requirements'
# hash). Needs target/release/halatafl (scripts/test.sh builds it first).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
venv=$(./scripts/setup-ray.sh)
bin="$root/target/release/halatafl"
[ -x "$bin" ] || { echo "check-ray: $bin is missing; run cargo build --release -p halatafl-cli" >&2; exit 1; }
HALATAFL_BIN="$bin" PYTHONPATH="$root/ray" "$venv/bin/python" -m pytest -q -p no:cacheprovider ray/tests "$@"
