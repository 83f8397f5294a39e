#!/usr/bin/env bash
# The project's test command: sets up libtorch (once, cached under ~/.cache),
# builds everything in release mode and runs the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
./scripts/setup-torch.sh
cargo build --release --workspace --all-targets
# Lints: every crate takes the workspace's [lints]; any clippy warning fails the run.
cargo clippy --release --workspace --all-targets -- -D warnings
cargo test --release --workspace
# The build half of the GPU check (scripts/gpu-build.sh, gpu-run.sh): a
# bundle built and run through the device path; without a GPU, `cuda` must
# be refused cleanly.
./scripts/check-gpu-bundle.sh
# The analysis notebooks, executed headless on a small run (Python venv cached).
./scripts/check-notebooks.sh
# The Ray driver (ray/halatafl_ray) and the sweep runner (sweeps/ci.toml:
# 2 arms x 2 seeds, a killed trial, Ctrl-C and a second start) on a local
# Ray instance (venv cached).
./scripts/check-ray.sh
# The halatafl Python package (crates/python): pytest and its notebook (venv cached).
./scripts/check-python.sh
# The analysis board (`halatafl serve`) in headless Chromium over WebDriver
# (Debian's chromium and chromium-driver, installed once if missing).
./scripts/check-board.sh
