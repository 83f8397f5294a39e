#!/usr/bin/env bash
# Builds the `halatafl` Python package (crates/python) and runs its tests
# (crates/python/tests) and its example notebooks (crates/python/examples/) in a virtual
# environment cached outside the checkout, keyed by the hash of the pinned
# crates/python/requirements-dev.txt:
# ${XDG_CACHE_HOME:-~/.cache}/halatafl/python-<hash>. A second run finds the
# marker file and installs nothing; the package itself is built (by maturin,
# into the workspace's target directory, so incrementally) and reinstalled on
# every run, since the code changes.
#
# The venv has PyTorch from PyPI like a user's (requirements-dev.txt), and
# the wheel loads that torch's libtorch (an rpath relative to the installed
# package, never to the builder's libtorch of scripts/setup-torch.sh, which
# only the build uses); crates/python/tests/test_torch.py checks that.
# Needs target/release/halatafl (scripts/test.sh builds it first): the tests
# compare error messages with the command-line program's.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
./scripts/setup-torch.sh
venv=$(./scripts/cached-venv.sh crates/python/requirements-dev.txt python)

bin="$root/target/release/halatafl"
[ -x "$bin" ] || { echo "check-python: $bin is missing; run cargo build --release -p halatafl-cli" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$venv/bin/maturin" build --release --quiet -m crates/python/Cargo.toml \
  --target-dir "${CARGO_TARGET_DIR:-$root/target}" -i "$venv/bin/python" -o "$work/wheels" >"$work/build.log" 2>&1 \
  || { cat "$work/build.log" >&2; exit 1; }
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q --force-reinstall --no-deps "$work"/wheels/*.whl
# The wheel's declared dependencies (torch among them) are what the venv has.
"$venv/bin/python" -m pip check --disable-pip-version-check >/dev/null

HALATAFL_BIN="$bin" "$venv/bin/python" -m pytest -q -p no:cacheprovider crates/python/tests "$@"

# The example notebook, executed headless with a short training run.
for notebook in crates/python/examples/*.ipynb; do
  name=$(basename "$notebook" .ipynb)
  echo "check-python: executing $notebook" >&2
  if ! HALATAFL_TRAIN_SECONDS=${HALATAFL_TRAIN_SECONDS:-10} HALATAFL_EVAL_GAMES=${HALATAFL_EVAL_GAMES:-8} \
      HALATAFL_WORK="$work" MPLBACKEND=Agg \
      "$venv/bin/python" -m jupyter nbconvert --to notebook --execute \
      --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 \
      --output-dir "$work" --output "$name.executed" "$notebook" >"$work/$name.log" 2>&1; then
    cat "$work/$name.log" >&2
    echo "check-python: $notebook FAILED" >&2
    exit 1
  fi
  echo "check-python: $notebook ran" >&2
done
