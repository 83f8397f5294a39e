#!/usr/bin/env bash
# The device half of the GPU check, run on the device machine in one call
# (at most 10 minutes) after scripts/gpu-build.sh made gpu-bundle/ here:
#
#   device run: command "./scripts/gpu-run.sh", carry ["gpu-bundle"], timeout_s 600
#
# It finds the libtorch of the PyTorch in the machine's image through its
# Python (the bundle was built against that version) and runs, each with
# its own time limit so one hang cannot eat the call:
#   1. the CUDA tests (crates/nn/tests/cuda.rs): GPU inference against the
#      CPU in fp32 and bf16, bf16 training, the batching evaluator;
#   2. `halatafl bench-net --device cuda` for each preset the configs use,
#      batch sizes 1 to 4096, fp32 and bf16: positions/s, training
#      samples/s in both precisions, and the GPU's matmul peak beside them;
#   3. a short asynchronous run: the learner on the GPU, self-play workers
#      and the evaluator on the CPUs.
# Every figure goes under $OUT (device.txt, cuda-tests.txt, bench.txt,
# train.txt and the run's train.csv, selfplay.csv and log.txt). Outside the
# device (no $OUT) it writes to ./gpu-out. On a machine without a GPU every
# step says so and the script still ends: the CUDA tests skip themselves and
# bench-net refuses `cuda` with its error, which is what the build half's
# test checks.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bundle=${BUNDLE_DIR:-gpu-bundle}
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
python=${PYTHON:-python3}
presets=${GPU_PRESETS:-b1c16 b2c32 b4c32 b6c64 b10c128}
batches=${GPU_BATCHES:-1,4,16,64,256,1024,4096}

[ -x "$bundle/halatafl" ] || { echo "gpu-run: $bundle/halatafl is missing: run scripts/gpu-build.sh here and carry $bundle" >&2; exit 1; }
torch_lib=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))') \
  || { echo "gpu-run: no PyTorch for $python: its libtorch is what the bundle loads" >&2; exit 1; }
export LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bundle=$(cd "$bundle" && pwd)
bin="$bundle/halatafl"

{
  echo "== bundle"; cat "$bundle/manifest.txt"
  echo "== torch"; "$python" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())'
  echo "libtorch $torch_lib"
  echo "== nvidia-smi"; nvidia-smi 2>&1 || echo "no nvidia-smi"
  echo "== cpu"; grep -m1 'model name' /proc/cpuinfo; nproc
} >"$out/device.txt" 2>&1
cat "$out/device.txt"

echo "== CUDA tests" | tee "$out/cuda-tests.txt"
timeout 180 "$bundle/cuda-tests" --test-threads 1 --nocapture >>"$out/cuda-tests.txt" 2>&1
echo "exit $?" >>"$out/cuda-tests.txt"
tail -5 "$out/cuda-tests.txt"

: >"$out/bench.txt"
for preset in $presets; do
  echo "== bench-net $preset" | tee -a "$out/bench.txt"
  timeout 120 "$bin" bench-net --device cuda --preset "$preset" --batches "$batches" \
    --repeats 5 --threads 4 --bf16 true >>"$out/bench.txt" 2>&1
  echo "exit $?" >>"$out/bench.txt"
done
tail -3 "$out/bench.txt"

# A short asynchronous run: configs/ci.toml with the shipped network's size
# and larger training batches, the learner on the GPU.
work=$(mktemp -d)
sed -e 's/^preset = "b1c16"/preset = "b4c32"/' \
    -e 's/^batch_size = 32/batch_size = 256/' \
    -e 's/^steps_per_generation = 10/steps_per_generation = 100/' \
    -e 's/^generations = 2/generations = 3/' \
    configs/ci.toml >"$work/gpu.toml"
run="$work/run"
gpu=$("$python" -c 'import torch; print(int(torch.cuda.is_available()))' 2>/dev/null || echo 0)
if [ "$gpu" != 1 ]; then
  # Without a GPU only the refusal is checked: a run asking for `cuda` is
  # refused before its directory is made.
  sed -e 's/^device = "cpu"/device = "cuda"/' "$work/gpu.toml" >"$work/cuda.toml"
  {
    echo "== no GPU here: train with device = \"cuda\" must be refused"
    "$bin" train --config "$work/cuda.toml" --run "$run"
    echo "exit $?"
    [ -e "$run" ] && echo "run directory made" || echo "no run directory made"
  } >"$out/train.txt" 2>&1
else
{
  echo "== train --init-only (cpu)"
  timeout 120 "$bin" train --config "$work/gpu.toml" --run "$run" --init-only
  echo "exit $?"
  echo "== stages: learner on cuda, 4 workers and the evaluator on cpu"
  pids=()
  timeout 240 "$bin" stage learn --run "$run" --device cuda & pids+=($!)
  for w in 1 2 3 4; do
    timeout 240 "$bin" stage selfplay --run "$run" --worker "$w" --device cpu & pids+=($!)
  done
  timeout 240 "$bin" stage evaluate --run "$run" --device cpu & pids+=($!)
  for p in "${pids[@]}"; do wait "$p"; echo "stage exit $?"; done
  echo "== final report"
  "$bin" summary "$run/eval.csv" 2>&1 | tail -20
} >"$out/train.txt" 2>&1
fi
for f in train.csv selfplay.csv log.txt; do
  [ -f "$run/$f" ] && cp "$run/$f" "$out/$f"
done
tail -15 "$out/train.txt"
rm -rf "$work"
echo "gpu-run: figures in $out"
