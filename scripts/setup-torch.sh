#!/usr/bin/env bash
# Makes libtorch available to the build, with nothing installed by hand.
#
# PyTorch 2.13.0 (the version tch 0.26 is written against) is installed from
# PyPI into a virtual environment cached outside the checkout, keyed by the
# torch version: ${XDG_CACHE_HOME:-~/.cache}/halatafl/torch-2.13.0. A second
# run finds the marker file and installs nothing. The checkout gets a link
# `.libtorch` to the installed `torch` package; `.cargo/config.toml` points
# LIBTORCH at that link, and the crates that link libtorch write an rpath to
# its real lib folder into every binary and test, so nothing needs setting at
# run time.
#
# `setup-torch.sh VERSION` installs another PyTorch the same way (cached at
# torch-VERSION), links nothing and prints its `torch` folder: what
# scripts/gpu-build.sh builds a device's bundle against.
set -euo pipefail
TORCH_VERSION=2.13.0
version=${1:-$TORCH_VERSION}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/halatafl/torch-$version"
python=${PYTHON:-python3}

if [ ! -f "$cache/.complete" ]; then
  echo "setup: installing torch==$version into $cache (once; about 4.7 GB)" >&2
  "$python" -m venv "$cache"
  "$cache/bin/python" -m pip install --disable-pip-version-check --no-input -q "torch==$version"
  touch "$cache/.complete"
fi
torch_dir=$("$cache/bin/python" -c 'import importlib.util; print(importlib.util.find_spec("torch").submodule_search_locations[0])')
if [ $# -gt 0 ]; then
  echo "$torch_dir"
  exit 0
fi
if [ "$(readlink "$root/.libtorch" 2>/dev/null)" != "$torch_dir" ]; then
  ln -sfn "$torch_dir" "$root/.libtorch"
fi
