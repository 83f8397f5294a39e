"""A sweep file (TOML, under `sweeps/`): one experiment as configs x seeds.

```toml
[sweep]
base = "../configs/ci.toml"   # the run config every trial starts from (relative to this file)
seeds = [1, 2, 3]             # each arm runs once per seed ([run] seed)

[arms.puct]                   # named arms: overrides by key path
"search.algorithm" = "puct"
[arms.gumbel]
"search.algorithm" = "gumbel"

[grid]                        # and/or a grid: every combination of these lists
"train.lr" = [0.002, 0.0005]

[measure]                     # what each trial's last network is measured by
opponents = ["alphabeta:depth=1"]
games = 20
```

Every arm is crossed with every grid point (no arms and no grid: one arm,
`base`). Parsing checks everything that can be checked without running:
unknown tables and keys, key paths that do not name a table of the base
config, agent specs' shape, suites that do not exist; `halatafl train` checks
the resulting configs themselves when a trial starts.

This module imports neither Ray nor anything outside the standard library, so
plans are testable on their own.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# Most trials one sweep may plan: a bigger grid is surely a typo.
MAX_TRIALS = 10_000

# The keys of each table, with a one-line description (shown in errors).
SWEEP_KEYS = {
    "base": "the run config every trial starts from, relative to the sweep file",
    "seeds": "the seeds: each arm runs once per seed, as [run] seed",
    "name": "the sweep's name (default: the file's stem); results go to experiments/sweeps/<name>",
    "max_failures": "times a trial whose process died or failed is retried (default 2)",
}
MEASURE_KEYS = {
    "opponents": "agent specs the last network plays game pairs against",
    "games": "games per opponent (even: each opening once each way)",
    "openings": "random opening plies of each pair (fresh for every pair)",
    "agent": "options of the trained network's agent spec, e.g. sims=32,batch=4",
    "suites": "solved suites (halatafl solve --from-games) the network's error rate is measured on",
    "curve": "the run's own evaluation opponent whose score per generation is plotted against wall-clock time (default: its first that is not `previous`)",
    "primary": "the measure the report leads with (a column of trials.csv)",
    "threads": "threads of the measuring matches",
}


class SweepError(Exception):
    """A sweep file that cannot be run; the message names the file and key."""


@dataclass(frozen=True)
class Trial:
    """One run of the sweep: an arm at a seed."""

    arm: str
    seed: int
    overrides: dict

    @property
    def name(self) -> str:
        return f"{self.arm}-s{self.seed}"


@dataclass
class Measure:
    opponents: list[str] = field(default_factory=list)
    games: int = 20
    openings: int = 4
    agent: str = "sims=32,batch=4"
    suites: list[Path] = field(default_factory=list)
    curve: str | None = None
    primary: str | None = None
    threads: int = 1

    def columns(self) -> list[str]:
        """The measure columns of trials.csv, in order."""
        cols = []
        for opp in self.opponents:
            cols += [f"score:{opp}", f"margin:{opp}"]
        for suite in self.suites:
            cols.append(f"error_rate:{suite.stem}")
        if self.curve is not None:
            cols.append(f"eval:{self.curve}")
        return cols


@dataclass
class Sweep:
    path: Path
    name: str
    base: Path
    base_config: dict
    seeds: list[int]
    arms: dict[str, dict]
    measure: Measure
    max_failures: int
    text: str

    def trials(self) -> list[Trial]:
        """Seed by seed, every arm at each: a sweep stopped early still has
        its arms' seeds balanced."""
        return [Trial(arm, seed, overrides) for seed in self.seeds for arm, overrides in self.arms.items()]

    def primary(self) -> str:
        cols = self.measure.columns()
        return self.measure.primary or cols[0]

    def digest(self) -> str:
        """Identifies what the sweep runs: its file and its base config."""
        h = hashlib.sha256(self.text.encode())
        h.update(self.base.read_bytes())
        return h.hexdigest()[:16]


def _where(path: Path, key: str) -> str:
    return f"{path}: `{key}`"


def _table(path: Path, data: dict, name: str) -> dict:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise SweepError(f"{_where(path, name)} must be a table ([{name}])")
    return value


def _check_keys(path: Path, table: str, got: dict, known: dict) -> None:
    for key in got:
        if key not in known:
            listing = "; ".join(f"{k}: {v}" for k, v in known.items())
            raise SweepError(f"{_where(path, f'{table}.{key}')}: unknown key (known: {listing})")


def set_path(config: dict, key: str, value) -> None:
    """Sets `a.b` in a nested dict, in a table that exists."""
    parts = key.split(".")
    node = config
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def apply(base: dict, overrides: dict, seed: int) -> dict:
    """The config of a trial: the base with the arm's overrides and the seed."""
    import copy

    config = copy.deepcopy(base)
    for key, value in overrides.items():
        set_path(config, key, value)
    set_path(config, "run.seed", seed)
    return config


def _check_override(path: Path, where: str, key: str, value, base: dict) -> None:
    if not re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", key):
        raise SweepError(f"{path}: {where}: `{key}` is not a key path like \"search.algorithm\"")
    table = key.split(".")[0]
    if table not in base:
        raise SweepError(f"{path}: {where}: `{key}`: the base config has no [{table}] table (tables: {', '.join(base)})")
    if key == "run.seed":
        raise SweepError(f"{path}: {where}: `run.seed` is set per trial from [sweep] seeds")
    if isinstance(value, dict):
        raise SweepError(f"{path}: {where}: `{key}` must be a value, not a table")


def _opponent_ok(path: Path, spec) -> str:
    if not isinstance(spec, str) or not re.fullmatch(r"[a-z][a-z0-9_-]*(:[^\s]*)?", spec):
        raise SweepError(f"{_where(path, 'measure.opponents')}: {spec!r} is not an agent spec (e.g. alphabeta:depth=2)")
    return spec


def load(path: Path) -> Sweep:
    """Parses and checks a sweep file."""
    path = Path(path)
    try:
        text = path.read_text()
        data = tomllib.loads(text)
    except OSError as e:
        raise SweepError(f"{path}: {e.strerror or e}") from e
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{path}: not TOML: {e}") from e
    for key in data:
        if key not in ("sweep", "arms", "grid", "measure"):
            raise SweepError(f"{path}: unknown table [{key}] (tables: [sweep], [arms.NAME], [grid], [measure])")
    sweep = _table(path, data, "sweep")
    _check_keys(path, "sweep", sweep, SWEEP_KEYS)
    if "base" not in sweep:
        raise SweepError(f"{path}: [sweep] needs `base`, the run config every trial starts from")
    base = (path.parent / str(sweep["base"])).resolve()
    try:
        base_config = tomllib.loads(base.read_text())
    except OSError as e:
        raise SweepError(f"{_where(path, 'sweep.base')}: {base}: {e.strerror or e}") from e
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{_where(path, 'sweep.base')}: {base} is not TOML: {e}") from e
    seeds = sweep.get("seeds", [1])
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        raise SweepError(f"{_where(path, 'sweep.seeds')} must be a non-empty list of seeds (integers 0 or more)")
    if len(set(seeds)) != len(seeds):
        raise SweepError(f"{_where(path, 'sweep.seeds')}: a seed is listed twice")
    max_failures = sweep.get("max_failures", 2)
    if not isinstance(max_failures, int) or not 0 <= max_failures <= 100:
        raise SweepError(f"{_where(path, 'sweep.max_failures')} must be an integer from 0 to 100")
    name = sweep.get("name", path.stem)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        raise SweepError(f"{_where(path, 'sweep.name')} must be letters, digits, `.`, `_` or `-`")

    arms_table = _table(path, data, "arms")
    arms: dict[str, dict] = {}
    for arm, overrides in arms_table.items():
        if not re.fullmatch(r"[A-Za-z0-9_.=-]+", arm):
            raise SweepError(f"{path}: [arms.{arm}]: an arm's name is letters, digits, `.`, `_`, `=` or `-`")
        if not isinstance(overrides, dict):
            raise SweepError(f"{path}: [arms.{arm}] must be a table of overrides")
        for key, value in overrides.items():
            _check_override(path, f"[arms.{arm}]", key, value, base_config)
        arms[arm] = dict(overrides)
    grid = _table(path, data, "grid")
    for key, values in grid.items():
        _check_override(path, "[grid]", key, values, base_config)
        if not isinstance(values, list) or not values:
            raise SweepError(f"{path}: [grid] `{key}` must be a non-empty list of values")
    if grid:
        points = []
        for combo in itertools.product(*grid.values()):
            points.append(dict(zip(grid, combo)))
        base_arms = arms or {"": {}}
        arms = {}
        for arm, overrides in base_arms.items():
            for point in points:
                label = ",".join(f"{k.split('.')[-1]}={v}" for k, v in point.items())
                name_ = f"{arm}+{label}" if arm else label
                name_ = re.sub(r"[^A-Za-z0-9_.=,+-]", "_", name_)
                arms[name_] = {**overrides, **point}
    if not arms:
        arms = {"base": {}}

    m = _table(path, data, "measure")
    _check_keys(path, "measure", m, MEASURE_KEYS)
    measure = Measure()
    opponents = m.get("opponents", [])
    if not isinstance(opponents, list):
        raise SweepError(f"{_where(path, 'measure.opponents')} must be a list of agent specs")
    measure.opponents = [_opponent_ok(path, o) for o in opponents]
    for key in ("games", "openings", "threads"):
        if key in m:
            v = m[key]
            low = 0 if key == "openings" else 1
            if not isinstance(v, int) or isinstance(v, bool) or not low <= v <= 100_000:
                raise SweepError(f"{_where(path, f'measure.{key}')} must be an integer from {low} ({MEASURE_KEYS[key]})")
            setattr(measure, key, v)
    if measure.games % 2:
        raise SweepError(f"{_where(path, 'measure.games')} must be even: each opening is played once each way")
    if "agent" in m:
        if not isinstance(m["agent"], str) or not re.fullmatch(r"([a-z_]+=[^,\s]+)(,[a-z_]+=[^,\s]+)*|", m["agent"]):
            raise SweepError(f"{_where(path, 'measure.agent')}: {m['agent']!r} is not a list of options like sims=32,batch=4")
        measure.agent = m["agent"]
    suites = m.get("suites", [])
    if not isinstance(suites, list):
        raise SweepError(f"{_where(path, 'measure.suites')} must be a list of suite files")
    for s in suites:
        p = (path.parent / str(s)).resolve()
        if not p.is_file():
            raise SweepError(f"{_where(path, 'measure.suites')}: {p}: no such file")
        measure.suites.append(p)
    if "curve" in m:
        if not isinstance(m["curve"], str):
            raise SweepError(f"{_where(path, 'measure.curve')} must be one of the base config's [eval] opponents")
        opponents_of_eval = base_config.get("eval", {}).get("opponents", [])
        if m["curve"] not in opponents_of_eval:
            raise SweepError(
                f"{_where(path, 'measure.curve')}: {m['curve']!r} is not one of the base config's [eval] opponents ({', '.join(opponents_of_eval)})"
            )
        measure.curve = m["curve"]
    else:
        # By default the first opponent of the run's own evaluation that is
        # not the previous generation (whose score says nothing over time).
        fixed = [o for o in base_config.get("eval", {}).get("opponents", []) if o != "previous"]
        measure.curve = fixed[0] if fixed else None
    if not measure.columns():
        raise SweepError(f"{path}: [measure] measures nothing: give opponents, suites or curve")
    if "primary" in m:
        if m["primary"] not in measure.columns():
            raise SweepError(f"{_where(path, 'measure.primary')}: {m['primary']!r} is none of the measures ({', '.join(measure.columns())})")
        measure.primary = m["primary"]

    result = Sweep(path, name, base, base_config, list(seeds), arms, measure, max_failures, text)
    if len(result.trials()) > MAX_TRIALS:
        raise SweepError(f"{path}: {len(result.trials())} trials (arms x seeds); at most {MAX_TRIALS}")
    return result
