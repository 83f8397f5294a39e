#!/usr/bin/env bash
# The build half of the GPU check: makes, on this machine, what the device
# machine runs (scripts/gpu-run.sh there). That machine has an NVIDIA GPU
# and PyTorch in its image but no Rust toolchain and no network, and takes
# at most 64 MiB of files along, so libtorch cannot travel: the binaries are
# built here against the same PyTorch version as the device's image and load
# the image's libtorch there (gpu-run.sh finds it through its Python).
#
#   ./scripts/gpu-build.sh                 # for the device's PyTorch (2.11.0)
#   DEVICE_TORCH=2.13.0 ./scripts/gpu-build.sh   # against the main build's
#
# Steps:
#  1. PyTorch $DEVICE_TORCH from PyPI into a venv cached at
#     ~/.cache/halatafl/torch-$DEVICE_TORCH (once; the main build's own
#     version reuses scripts/setup-torch.sh's).
#  2. `halatafl` and the CUDA test binary (crates/nn/tests/cuda.rs), built
#     against it in target/torch-$DEVICE_TORCH (its own target folder, so the
#     main build is untouched), with the tch release written for that
#     PyTorch (tch 0.26 is 2.13's; its C++ glue calls operators 2.11 lacks,
#     so 2.11 gets tch 0.24) from a copy of the sources.
#  3. Both stripped into gpu-bundle/ (ignored by git, carried to the device),
#     with a manifest; the bundle must stay under $BUNDLE_LIMIT_MIB so that
#     it and the working tree fit in what travels.
#
# Then, on the device: run with command `./scripts/gpu-run.sh` and carry
# ["gpu-bundle"] (see scripts/gpu-run.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
DEVICE_TORCH=${DEVICE_TORCH:-2.11.0}
BUNDLE_LIMIT_MIB=${BUNDLE_LIMIT_MIB:-40}
bundle=${BUNDLE_DIR:-gpu-bundle}
python=${PYTHON:-python3}

MAIN_TORCH=$(sed -n 's/^TORCH_VERSION=//p' scripts/setup-torch.sh)
if [ "$DEVICE_TORCH" = "$MAIN_TORCH" ]; then
  # The main build's libtorch, sources and target folder: nothing is rebuilt that
  # `cargo build --release` made already (the test suite checks the
  # pipeline this way in seconds).
  ./scripts/setup-torch.sh
  target=target
else
  # Each tch release is written against one PyTorch release, and its C++
  # glue calls that release's operators: an older libtorch needs the tch
  # of its own time. The sources are copied (target/device-src-VERSION) with
  # that tch in the workspace manifest, resolved, and built from there.
  case "$DEVICE_TORCH" in
    2.11.*) tch_version=0.24.0 ;;
    *) echo "gpu-build: no tch version known for PyTorch $DEVICE_TORCH (known: 2.11.x, and the main build's $MAIN_TORCH)" >&2; exit 1 ;;
  esac
  torch_dir=$(./scripts/setup-torch.sh "$DEVICE_TORCH")
  target="$root/target/torch-$DEVICE_TORCH"
  src="$root/target/device-src-$DEVICE_TORCH"
  mkdir -p "$src"
  # Only what the two binaries need; copied anew so edits here reach it.
  rm -rf "$src/crates" "$src/models" "$src/configs"
  cp -r Cargo.toml Cargo.lock crates models configs "$src/"
  rm -rf "$src/crates/python"
  sed -i -e "s/^tch = \".*\"/tch = \"=$tch_version\"/" \
         -e "s/^torch-sys = \".*\"/torch-sys = \"=$tch_version\"/" \
         "$src/Cargo.toml"
  (cd "$src" && cargo update -q -p tch -p torch-sys)
  # An exported LIBTORCH wins over .cargo/config.toml's (which names the
  # main build's link), so the sources build against this libtorch.
  export LIBTORCH="$torch_dir" LIBTORCH_CXX11_ABI=1
  cd "$src"
fi
echo "gpu-build: building halatafl and the CUDA tests against torch $DEVICE_TORCH in $target" >&2
cargo build --release -p halatafl-cli --target-dir "$target"
tests=$(cargo test --release -p halatafl-nn --test cuda --no-run --target-dir "$target" \
  --message-format=json 2>/dev/null \
  | "$python" -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "cuda" and m.get("executable"):
        print(m["executable"])')
[ -x "$tests" ] || { echo "gpu-build: the CUDA test binary was not built" >&2; exit 1; }

cd "$root"
rm -rf "$bundle"
mkdir -p "$bundle"
strip -o "$bundle/halatafl" "$target/release/halatafl"
# The C++ glue's version, for the manifest.
strip -o "$bundle/cuda-tests" "$tests"
size_kib=$(du -sk "$bundle" | cut -f1)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
cat >"$bundle/manifest.txt" <<EOF
torch $DEVICE_TORCH
revision $revision$(git diff --quiet HEAD 2>/dev/null || echo -dirty)
built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)
size_kib $size_kib
EOF
if [ "$size_kib" -gt $((BUNDLE_LIMIT_MIB * 1024)) ]; then
  echo "gpu-build: $bundle is $((size_kib / 1024)) MiB, over the $BUNDLE_LIMIT_MIB MiB it may take" >&2
  exit 1
fi
echo "gpu-build: $bundle ready ($((size_kib / 1024)) MiB): halatafl, cuda-tests, manifest.txt" >&2
