#!/usr/bin/env bash
# Runs the fuzz targets in fuzz/ with cargo fuzz (libFuzzer) on the nightly
# toolchain.
#
#   ./scripts/fuzz.sh                      every target, 10 million runs each
#   ./scripts/fuzz.sh position move        those targets
#   RUNS=100000 ./scripts/fuzz.sh config   fewer runs
#   ./scripts/fuzz.sh protocol -- -max_total_time=600   any libFuzzer flags after --
#
# cargo-fuzz is installed with `cargo install` when missing. Each target's
# corpus grows in fuzz/corpus/<target> (not committed), starting from the
# committed seeds in fuzz/seeds/<target>; the shard and checkpoint targets
# get their seeds from a short CI training run made here. A crash is saved
# under fuzz/artifacts/<target>/ and stops the script; turn it into a
# regression test in the crate it concerns.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
all=(position move agent_spec config shard checkpoint protocol suite games)
targets=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; extra=("$@"); break ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
runs=${RUNS:-10000000}

rustup toolchain list | grep -q '^nightly' \
  || { echo "fuzz: cargo fuzz needs the nightly toolchain (rustup toolchain install nightly)" >&2; exit 1; }
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
./scripts/setup-torch.sh
# Targets link libtorch (configs, shards, checkpoints and the protocol live
# in crates that do); the same link as the main build.
export LIBTORCH="$root/.libtorch"

seed_from_run() {
  local dir=fuzz/seeds/generated
  [ -f "$dir/.complete" ] && return
  cargo build --release -p halatafl-cli
  rm -rf "$dir" && mkdir -p "$dir/shard" "$dir/checkpoint"
  local run
  run=$(mktemp -d)
  ./target/release/halatafl train --config configs/ci.toml --run "$run/run" >/dev/null
  cp "$(find "$run/run/shards" -name '*.shard' | head -n 1)" "$dir/shard/ci.shard"
  cp "$run/run/checkpoints/gen_0000.safetensors" "$dir/checkpoint/ci.safetensors"
  rm -rf "$run"
  touch "$dir/.complete"
}

for target in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$target"
  seeds=("fuzz/seeds/$target")
  case "$target" in
    shard|checkpoint) seed_from_run; seeds+=("fuzz/seeds/generated/$target") ;;
  esac
  echo "fuzz: $target, $runs runs" >&2
  # No sanitizer: the targets are safe Rust (the fuzzer looks for panics,
  # hangs and runaway memory), and AddressSanitizer does not mix with the
  # prebuilt libtorch the binaries load.
  cargo +nightly fuzz run --release --sanitizer none "$target" "fuzz/corpus/$target" "${seeds[@]}" -- \
    -runs="$runs" -rss_limit_mb=4096 -timeout=10 -print_final_stats=1 "${extra[@]}"
done
