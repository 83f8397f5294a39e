#!/usr/bin/env bash
# Installs the Ray driver's Python packages (python/requirements-ray.txt) into
# a virtual environment cached outside the checkout, keyed by the hash of that
# file: ${XDG_CACHE_HOME:-~/.cache}/halatafl/ray-<hash>. A second run finds the
# marker file and installs nothing. Prints the venv's path on stdout, so
#   "$(scripts/setup-ray.sh)/bin/python" -m halatafl_ray ...
# works from any script.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-python3}
hash=$(sha256sum "$root/python/requirements-ray.txt" | cut -c1-16)
venv="${XDG_CACHE_HOME:-$HOME/.cache}/halatafl/ray-$hash"

if [ ! -f "$venv/.complete" ]; then
  echo "setup-ray: installing python/requirements-ray.txt into $venv (once; about 300 MB)" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$root/python/requirements-ray.txt"
  touch "$venv/.complete"
fi
echo "$venv"
