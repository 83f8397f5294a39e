"""The installed package: import with no environment, the benchmark."""

import json
import subprocess
import sys

import halatafl
import halatafl.bench


def test_import_and_the_network_need_no_environment_variable():
    """libtorch is found through the extension's rpath: a clean environment
    (no LD_LIBRARY_PATH, LIBTORCH or PYTHONPATH) imports the package and runs
    the shipped network."""
    code = "import halatafl; print(halatafl.Agent('best').choose(halatafl.Game()).move)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() in halatafl.Game().legal_moves()


def test_rust_random_playouts_counts_whole_games():
    plies, games, seconds = halatafl.rust_random_playouts(5000, "classic", 1)
    assert plies >= 5000 and games >= 1 and seconds > 0
    try:
        halatafl.rust_random_playouts(0)
    except ValueError as error:
        assert "at least 1" in str(error)
    else:
        raise AssertionError("0 plies should be refused")


def test_bench_reports_every_figure(capsys):
    halatafl.bench.main(["--plies", "3000", "--repeats", "1", "--games", "16", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert set(result["plies_per_s"]) == {"rust", "single", "batched", "batched-reuse", "batched-numpy"}
    assert all(rate > 0 for rate in result["plies_per_s"].values())
    assert result["cpu"]


def test_the_readme_example_runs():
    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python\nimport halatafl") + len("```python\n")
    namespace = {}
    exec(readme[start : readme.index("```", start)], namespace)
    assert namespace["decision"].move in namespace["game"].legal_moves()
    assert namespace["obs"].shape == (256, 10, 7, 7)
