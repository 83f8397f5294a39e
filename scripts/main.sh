#!/usr/bin/env bash
# The project's main job: sets up libtorch (once, cached under ~/.cache),
# builds the `halatafl` binary in release mode, and trains an agent by
# self-play with configs/quick.toml (about 6 minutes on 2 CPU cores). It ends
# by printing how the agent scored and where the run directory is
# (experiments/quick, or experiments/quick-2, -3, ... if taken).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
./scripts/setup-torch.sh
cargo build --release -p halatafl-cli
./target/release/halatafl train --config configs/quick.toml "$@"
