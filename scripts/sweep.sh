#!/usr/bin/env bash
# Runs a sweep file (configs x seeds) as Ray Tune trials on a local Ray
# instance, or on a cluster with --address: ./scripts/sweep.sh sweeps/ci.toml
# Builds halatafl and sets up the Ray venv (once, cached) first. Every
# option of `python -m halatafl_ray.sweep --help` passes through; started
# again, it finishes what is not finished.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup-torch.sh" >/dev/null
(cd "$root" && cargo build --release -p halatafl-cli)
venv=$("$root/scripts/setup-ray.sh")
HALATAFL_BIN=${HALATAFL_BIN:-$root/target/release/halatafl} PYTHONPATH="$root/ray${PYTHONPATH:+:$PYTHONPATH}" \
  exec "$venv/bin/python" -m halatafl_ray.sweep "$@"
