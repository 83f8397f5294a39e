#!/usr/bin/env bash
# The project's main job: sets up libtorch (once, cached under ~/.cache),
# builds the `halatafl` binary in release mode, and runs it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
./scripts/setup-torch.sh
cargo build --release -p halatafl-cli
./target/release/halatafl perft --depth 6
