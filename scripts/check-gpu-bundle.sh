#!/usr/bin/env bash
# The build half of the GPU check, tested on any machine: scripts/gpu-build.sh
# makes a bundle (here against the main build's libtorch, so nothing is
# rebuilt), it fits its size limit, and scripts/gpu-run.sh runs it through
# the device path: on a machine without a GPU the CUDA tests skip themselves
# and `cuda` is refused cleanly, by bench-net and by a training run, before
# anything is written. On a GPU machine the same run measures it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
main=$(sed -n 's/^TORCH_VERSION=//p' scripts/setup-torch.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
DEVICE_TORCH=$main BUNDLE_DIR="$work/bundle" ./scripts/gpu-build.sh
for f in halatafl cuda-tests manifest.txt; do
  [ -e "$work/bundle/$f" ] || { echo "check-gpu-bundle: $f missing from the bundle" >&2; exit 1; }
done
grep -q "^torch $main$" "$work/bundle/manifest.txt"
# The device's Python: the one whose torch the bundle was built against.
torch_python="${XDG_CACHE_HOME:-$HOME/.cache}/halatafl/torch-$main/bin/python"
PYTHON="$torch_python" BUNDLE_DIR="$work/bundle" OUT="$work/out" GPU_PRESETS=b1c16 GPU_BATCHES=1,16 \
  ./scripts/gpu-run.sh >"$work/run.log" 2>&1 || { cat "$work/run.log" >&2; exit 1; }
fail() { echo "check-gpu-bundle: $1" >&2; for f in "$work"/out/*.txt; do echo "== $f" >&2; cat "$f" >&2; done; exit 1; }
if "$torch_python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  grep -q "test result: ok" "$work/out/cuda-tests.txt" || fail "the CUDA tests failed"
  grep -q "positions/s" "$work/out/bench.txt" || fail "bench-net measured nothing"
else
  grep -q "test result: ok" "$work/out/cuda-tests.txt" || fail "the CUDA tests did not pass (skipped)"
  grep -q "skipped, libtorch sees no CUDA GPU" "$work/out/cuda-tests.txt" || fail "the CUDA tests did not say they skip"
  grep -q "exit 1" "$work/out/bench.txt" || fail "bench-net --device cuda was not refused"
  grep -qi "cuda" "$work/out/bench.txt" || fail "bench-net's refusal does not name cuda"
  grep -q "no run directory made" "$work/out/train.txt" || fail "a cuda run made its directory"
  grep -q "exit 1" "$work/out/train.txt" || fail "a cuda run was not refused"
  if grep -q "panicked" "$work"/out/*.txt; then fail "a panic instead of an error"; fi
fi
echo "check-gpu-bundle: bundle of $(du -sh "$work/bundle" | cut -f1) built and run through the device path" >&2
