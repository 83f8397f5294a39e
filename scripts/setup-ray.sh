#!/usr/bin/env bash
# Installs the Ray driver's Python packages (ray/requirements.txt) into
# a virtual environment cached outside the checkout, keyed by the hash of that
# file: ${XDG_CACHE_HOME:-~/.cache}/halatafl/ray-<hash>. A second run finds the
# marker file and installs nothing. Prints the venv's path on stdout, so
#   "$(scripts/setup-ray.sh)/bin/python" -m halatafl_ray ...
# works from any script.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/cached-venv.sh" "$root/ray/requirements.txt" ray
