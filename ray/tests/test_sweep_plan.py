"""Sweep files and the statistics across seeds, without Ray: what a sweep
file plans (arms x grid x seeds, the trials' configs and resources), the
errors bad files get, and the interquartile mean and bootstrap intervals."""

from __future__ import annotations

from pathlib import Path

import pytest

from halatafl_ray import results, sweep, sweepfile

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(f'[sweep]\nbase = "{REPO / "configs" / "ci.toml"}"\n' + text)
    return path


def test_the_shipped_ci_sweep_plans_two_arms_by_two_seeds():
    s = sweepfile.load(REPO / "sweeps" / "ci.toml")
    assert [t.name for t in s.trials()] == ["puct-s1", "gumbel-s1", "puct-s2", "gumbel-s2"]
    assert s.measure.columns() == ["score:random", "margin:random", "eval:random"]
    plans = sweep.plans(s, Path("/tmp/x"), Path("/bin/true"))
    g = plans["gumbel-s2"]
    assert g["config"]["search"]["algorithm"] == "gumbel"
    assert g["config"]["run"]["seed"] == 2
    assert g["config"]["train"] == s.base_config["train"]
    assert g["resources"] == {"cpu": 2, "gpu": 0}
    assert g["trial_dir"] == "/tmp/x/trials/gumbel-s2"
    # The base is not changed by a trial's overrides.
    assert s.base_config["run"]["seed"] == 1


def test_arms_cross_the_grid(tmp_path):
    s = sweepfile.load(write(tmp_path, '''seeds = [3]
[arms.a]
"search.simulations" = 8
[arms.b]
"search.simulations" = 16
[grid]
"train.lr" = [0.01, 0.001]
"replay.mirror" = [true, false]
[measure]
opponents = ["random"]
'''))
    names = [t.name for t in s.trials()]
    assert len(names) == 8 and len(set(names)) == 8
    assert "a+lr=0.01,mirror=True-s3" in names
    t = next(t for t in s.trials() if t.name == "b+lr=0.001,mirror=False-s3")
    assert t.overrides == {"search.simulations": 16, "train.lr": 0.001, "replay.mirror": False}


def test_resources_follow_the_config():
    assert sweep.trial_resources({"run": {"threads": 3, "torch_threads": 5, "device": "cuda:1"}}) == {"cpu": 5, "gpu": 1}
    assert sweep.trial_resources({"run": {"threads": 4, "device": "auto"}}) == {"cpu": 4, "gpu": 0}


@pytest.mark.parametrize(
    "text, message",
    [
        ("seeds = [1, 1]\n[measure]\nopponents = ['random']\n", "a seed is listed twice"),
        ("seeds = []\n[measure]\nopponents = ['random']\n", "`sweep.seeds` must be a non-empty list"),
        ("colour = 1\n[measure]\nopponents = ['random']\n", "`sweep.colour`: unknown key"),
        ("[arms.x]\n'serch.algorithm' = 'puct'\n[measure]\nopponents = ['random']\n", "no [serch] table"),
        ("[arms.x]\nalgorithm = 'puct'\n[measure]\nopponents = ['random']\n", "is not a key path"),
        ("[arms.x]\n'run.seed' = 3\n[measure]\nopponents = ['random']\n", "set per trial"),
        ("[grid]\n'train.lr' = 0.1\n[measure]\nopponents = ['random']\n", "must be a non-empty list"),
        ("[measure]\nopponents = ['random']\ngames = 5\n", "must be even"),
        ("[measure]\nopponents = ['alpha beta']\n", "is not an agent spec"),
        ("[measure]\nsuites = ['nowhere.csv']\n", "no such file"),
        ("[measure]\nopponents = ['random']\ncurve = 'alphabeta:depth=9'\n", "is not one of the base config's [eval] opponents"),
        ("[measure]\nopponents = ['random']\nprimary = 'score:x'\n", "is none of the measures"),
        ("[measure]\nopponents = ['random']\nagent = 'sims 8'\n", "is not a list of options"),
        ("[extra]\n", "unknown table [extra]"),
        ("[measure\n", "not TOML"),
    ],
)
def test_bad_sweep_files_say_what_and_where(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(sweepfile.SweepError) as e:
        sweepfile.load(path)
    assert message in str(e.value)
    assert str(path) in str(e.value)


def test_a_missing_base_is_named(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[sweep]\nbase = "missing.toml"\n[measure]\nopponents = ["random"]\n')
    with pytest.raises(sweepfile.SweepError, match=r"sweep.base.*missing.toml"):
        sweepfile.load(path)


def test_iqm_drops_the_outer_quarters():
    assert results.iqm([0, 1, 2, 3, 100, 4, 5, 6]) == pytest.approx((2 + 3 + 4 + 5) / 4)
    assert results.estimate([1.0, 2.0, 9.0]) == pytest.approx(4.0)  # a mean below 5 seeds
    assert results.estimate([1.0, 2.0, 3.0, 4.0, 90.0]) == pytest.approx(3.0)  # the IQM from 5


def test_bootstrap_interval_covers_the_estimate_and_shrinks_with_seeds():
    assert results.bootstrap_interval([0.5]) is None
    lo, hi = results.bootstrap_interval([0.5, 0.5, 0.5])
    assert lo == hi == 0.5
    few = results.bootstrap_interval([0.4, 0.6, 0.5])
    many = results.bootstrap_interval([0.4, 0.6, 0.5] * 6)
    assert few[0] <= 0.5 <= few[1]
    assert many[1] - many[0] < few[1] - few[0]
    # The same numbers give the same interval (a fixed generator).
    assert results.bootstrap_interval([0.1, 0.9, 0.3]) == results.bootstrap_interval([0.1, 0.9, 0.3])


def test_arm_rows_skip_missing_measures():
    rows = [
        {"arm": "a", "x": 0.5, "wall_seconds": 1.0, "cpu_seconds": 1.0},
        {"arm": "a", "x": None, "wall_seconds": 2.0, "cpu_seconds": 1.0},
        {"arm": "b", "x": 0.7, "wall_seconds": 1.0, "cpu_seconds": 2.0},
    ]
    table = {(r["arm"], r["measure"]): r for r in results.arm_rows(["x"], rows)}
    assert table[("a", "x")]["seeds"] == 1 and table[("a", "x")]["lo"] is None
    assert table[("a", "wall_seconds")]["estimate"] == pytest.approx(1.5)
    assert table[("b", "x")]["estimate"] == pytest.approx(0.7)


def test_differences_pair_arms_by_seed():
    rows = [
        {"arm": "a", "seed": 1, "x": 0.50},
        {"arm": "a", "seed": 2, "x": 0.70},
        {"arm": "a", "seed": 3, "x": 0.60},
        {"arm": "b", "seed": 1, "x": 0.40},
        {"arm": "b", "seed": 2, "x": 0.62},
        {"arm": "b", "seed": 3, "x": None},
        {"arm": "b", "seed": 4, "x": 0.10},  # no baseline at seed 4: not paired
    ]
    (d,) = results.difference_rows(["x"], rows)
    assert (d["arm"], d["baseline"], d["seeds"]) == ("b", "a", 2)
    assert d["difference"] == pytest.approx(-0.09)
    # Both seeds went down: the paired interval lies below 0, although
    # the arms' own ranges overlap.
    assert d["lo"] <= d["difference"] <= d["hi"] < 0
    assert results.difference_rows(["x"], rows[:3]) == []
