#!/usr/bin/env bash
# Usage: scripts/cached-venv.sh REQUIREMENTS NAME
# Installs REQUIREMENTS (a pinned pip requirements file of the checkout) into
# a virtual environment cached outside the checkout, keyed by the file's
# hash: ${XDG_CACHE_HOME:-~/.cache}/halatafl/NAME-<hash>. A second run finds
# the marker file and installs nothing; a changed file gets a new venv.
# Prints the venv's path on stdout, so "$(scripts/cached-venv.sh F N)/bin/python"
# works from any script. Used by setup-ray.sh, check-notebooks.sh and
# check-python.sh.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 REQUIREMENTS NAME" >&2; exit 2; }
requirements=$1
name=$2
python=${PYTHON:-python3}
[ -f "$requirements" ] || { echo "cached-venv: $requirements: no such file" >&2; exit 1; }
hash=$(sha256sum "$requirements" | cut -c1-16)
venv="${XDG_CACHE_HOME:-$HOME/.cache}/halatafl/$name-$hash"

if [ ! -f "$venv/.complete" ]; then
  echo "cached-venv: installing $requirements into $venv (once)" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$requirements"
  touch "$venv/.complete"
fi
echo "$venv"
