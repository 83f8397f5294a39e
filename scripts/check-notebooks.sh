#!/usr/bin/env bash
# Executes the analysis notebooks headless on a small run made here, so a
# notebook that does not run fails the test suite.
#
# The notebooks' Python packages (notebooks/requirements.txt) are installed
# into a virtual environment cached outside the checkout, keyed by the hash of
# that file: ${XDG_CACHE_HOME:-~/.cache}/halatafl/notebooks-<hash>. A second
# run finds the marker file and installs nothing. Needs target/release/halatafl
# (scripts/test.sh builds it first).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
venv=$(./scripts/cached-venv.sh notebooks/requirements.txt notebooks)

bin="$root/target/release/halatafl"
[ -x "$bin" ] || { echo "check-notebooks: $bin is missing; run cargo build --release -p halatafl-cli" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" train --config configs/ci.toml --run "$work/run" >"$work/train.log" 2>&1 \
  || { cat "$work/train.log" >&2; exit 1; }
"$bin" match random random --games 4 --threads 1 --csv "$work/tournament.csv" >"$work/match.log" 2>&1 \
  || { cat "$work/match.log" >&2; exit 1; }

passed=0
failed=0
for notebook in notebooks/*.ipynb; do
  name=$(basename "$notebook" .ipynb)
  echo "check-notebooks: executing $notebook" >&2
  if HALATAFL_RUN="$work/run" HALATAFL_TOURNAMENT_CSV="$work/tournament.csv" MPLBACKEND=Agg \
      "$venv/bin/python" -m jupyter nbconvert --to notebook --execute \
      --ExecutePreprocessor.timeout=600 --ExecutePreprocessor.kernel_name=python3 \
      --output-dir "$work" --output "$name.executed" "$notebook" >"$work/$name.log" 2>&1; then
    echo "check-notebooks: $notebook ran" >&2
    passed=$((passed + 1))
  else
    cat "$work/$name.log" >&2
    echo "check-notebooks: $notebook FAILED" >&2
    failed=$((failed + 1))
  fi
done
echo "notebooks: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
