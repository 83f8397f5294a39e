"""A sweep's results: what holds across seeds, not across games.

- `trials.csv`: one row per finished trial.
- `arms.csv`: per arm and measure, the seeds' point estimate and a
  percentile bootstrap 95% interval over seeds (10,000 resamples of the
  seeds, a fixed generator). The point estimate is the mean below 5 seeds
  and the interquartile mean (IQM) from 5 seeds on: the mean of the middle
  half, robust to one run that diverged yet less noisy than the median
  (Agarwal et al., "Deep Reinforcement Learning at the Edge of the
  Statistical Precipice", NeurIPS 2021, the rliable library). With fewer
  than 2 seeds there is no interval.
- `curve.png`/`.svg`: the run's own evaluation score against wall-clock
  seconds of training, per arm: the mean over seeds of each seed's latest
  score at that time, and the band from the lowest to the highest seed.
- `differences.csv`: each arm after the first against the first, paired
  by seed (the difference at each seed, then its estimate and interval as
  above).
- `report.md`: the tables and the plot.
"""

from __future__ import annotations

import csv
import io
import math
import warnings
from pathlib import Path

from .trial import write_atomic

BOOTSTRAP_RESAMPLES = 10_000
# From this many seeds on the point estimate is the IQM.
IQM_FROM = 5


def iqm(values) -> float:
    """The interquartile mean: the mean after dropping the lowest and the
    highest quarter (scipy.stats.trim_mean(x, 0.25), as rliable uses)."""
    xs = sorted(values)
    k = int(0.25 * len(xs))
    middle = xs[k : len(xs) - k]
    return sum(middle) / len(middle)


def estimate(values) -> float:
    values = list(values)
    return iqm(values) if len(values) >= IQM_FROM else sum(values) / len(values)


def bootstrap_interval(values, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap 95% interval of `estimate` over the seeds."""
    import numpy as np

    values = np.asarray(list(values), dtype=float)
    n = len(values)
    if n < 2:
        return None
    rng = np.random.default_rng(seed)
    samples = values[rng.integers(0, n, size=(resamples, n))]
    if n >= IQM_FROM:
        samples.sort(axis=1)
        k = int(0.25 * n)
        stats = samples[:, k : n - k].mean(axis=1)
    else:
        stats = samples.mean(axis=1)
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return float(lo), float(hi)


def arm_rows(columns: list[str], rows: list[dict]) -> list[dict]:
    """Per arm (in the order the rows' arms first appear) and measure."""
    arms: dict[str, list[dict]] = {}
    for r in rows:
        arms.setdefault(r["arm"], []).append(r)
    out = []
    for arm, trials in arms.items():
        for col in [*columns, "wall_seconds", "cpu_seconds"]:
            values = [t[col] for t in trials if t.get(col) is not None and not (isinstance(t[col], float) and math.isnan(t[col]))]
            if values:
                out.append({"arm": arm, "measure": col, **summarize(values, "estimate")})
    return out


def summarize(values: list[float], name: str) -> dict:
    """The seeds' count, statistic, estimate (under `name`) and interval."""
    interval = bootstrap_interval(values)
    return {
        "seeds": len(values),
        "statistic": "iqm" if len(values) >= IQM_FROM else "mean",
        name: estimate(values),
        "lo": interval[0] if interval else None,
        "hi": interval[1] if interval else None,
    }


def difference_rows(columns: list[str], rows: list[dict]) -> list[dict]:
    """Each arm after the first against the first (the baseline), paired by
    seed: per measure, the differences arm - baseline over the seeds both
    finished, their estimate and bootstrap interval. Pairing takes out what
    a seed does to both arms (the same generation 0, the same measuring
    openings), so it sees differences the per-arm intervals hide."""
    arms: dict[str, dict[int, dict]] = {}
    for r in rows:
        arms.setdefault(r["arm"], {})[r["seed"]] = r
    names = list(arms)
    out = []
    if len(names) < 2:
        return out
    base = arms[names[0]]
    for arm in names[1:]:
        for col in columns:
            diffs = [
                arms[arm][seed][col] - base[seed][col]
                for seed in sorted(set(base) & set(arms[arm]))
                if arms[arm][seed].get(col) is not None and base[seed].get(col) is not None
            ]
            if diffs:
                out.append({"arm": arm, "baseline": names[0], "measure": col, **summarize(diffs, "difference")})
    return out


def to_csv(fields: list[str], rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    return buf.getvalue()


def read_curve(path: Path) -> list[tuple[float, float]]:
    """(seconds, score) of each evaluated generation with a known time."""
    try:
        with open(path, newline="") as f:
            return [(float(r["seconds"]), float(r["score"])) for r in csv.DictReader(f) if r["seconds"]]
    except OSError:
        return []


def plot_curves(sweep, out: Path, rows: list[dict]) -> list[str]:
    """curve.png and curve.svg; the file names written (none without a curve)."""
    if sweep.measure.curve is None:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(7, 4.2))
    drawn = False
    arms: dict[str, list[list[tuple[float, float]]]] = {}
    for r in rows:
        curve = read_curve(Path(r["run"]).parent / "curve.csv")
        if curve:
            arms.setdefault(r["arm"], []).append(curve)
    for arm, curves in arms.items():
        end = max(c[-1][0] for c in curves)
        grid = np.linspace(0.0, end, 200)
        ys = []
        for c in curves:
            times = np.array([t for t, _ in c])
            scores = np.array([s for _, s in c])
            idx = np.searchsorted(times, grid, side="right") - 1
            y = np.where(idx >= 0, scores[np.clip(idx, 0, None)], np.nan)
            ys.append(y)
        ys = np.array(ys)
        # Before a seed's first evaluation its value is NaN (no warning wanted).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.nanmean(ys, axis=0)
            lo = np.nanmin(ys, axis=0)
            hi = np.nanmax(ys, axis=0)
        line = ax.step(grid, mean, where="post", label=f"{arm} ({len(curves)} seeds)")[0]
        ax.fill_between(grid, lo, hi, step="post", alpha=0.2, color=line.get_color())
        drawn = True
    if not drawn:
        plt.close(fig)
        return []
    ax.set_xlabel("wall-clock seconds of the trial")
    ax.set_ylabel(f"score against {sweep.measure.curve}")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{sweep.name}: the run's own evaluation, mean over seeds and the seeds' range")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    names = []
    for ext in ("png", "svg"):
        tmp = out / f".curve.tmp.{ext}"
        fig.savefig(tmp, dpi=110)
        tmp.replace(out / f"curve.{ext}")
        names.append(f"curve.{ext}")
    plt.close(fig)
    return names


def fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3f}" if abs(x) < 100 else f"{x:.0f}"
    return str(x)


def interval_table(entries: list[dict], value: str, columns: list[str], number) -> list[str]:
    """A markdown table, a row per arm and a cell per column: the entry's
    `value` and its interval, written by `number`."""
    by_arm: dict[str, dict[str, dict]] = {}
    for e in entries:
        by_arm.setdefault(e["arm"], {})[e["measure"]] = e
    lines = ["| arm | seeds | " + " | ".join(f"`{c}`" for c in columns) + " |", "|---|---|" + "---|" * len(columns)]
    for arm, measures in by_arm.items():
        seeds = max(m["seeds"] for m in measures.values())
        cells = []
        for c in columns:
            m = measures.get(c)
            if m is None:
                cells.append("-")
            elif m["lo"] is None:
                cells.append(number(m[value]))
            else:
                cells.append(f"{number(m[value])} [{number(m['lo'])}, {number(m['hi'])}]")
        lines.append(f"| {arm} | {seeds} | " + " | ".join(cells) + " |")
    return lines


def write(sweep, out: Path, rows: list[dict]) -> Path:
    """Writes trials.csv, arms.csv, the plot and report.md; returns the report."""
    columns = sweep.measure.columns()
    order = {t.name: i for i, t in enumerate(sweep.trials())}
    rows = sorted(rows, key=lambda r: order.get(r["trial"], len(order)))
    trial_fields = ["trial", "arm", "seed", *columns, "wall_seconds", "cpu_seconds", "attempts", "run"]
    write_atomic(out / "trials.csv", to_csv(trial_fields, rows))
    arms = arm_rows(columns, rows)
    write_atomic(out / "arms.csv", to_csv(["arm", "measure", "seeds", "statistic", "estimate", "lo", "hi"], arms))
    differences = difference_rows(columns, rows)
    write_atomic(
        out / "differences.csv",
        to_csv(["arm", "baseline", "measure", "seeds", "statistic", "difference", "lo", "hi"], differences),
    )
    plots = plot_curves(sweep, out, rows)

    primary = sweep.primary()
    lines = [f"# Sweep `{sweep.name}`", ""]
    lines.append(
        f"From `{sweep.path}`: {len(sweep.arms)} arms x {len(sweep.seeds)} seeds on `{sweep.base}`; "
        f"{len(rows)} of {len(sweep.trials())} trials finished."
    )
    lines.append("")
    lines.append(
        "Per arm: the mean over seeds (the interquartile mean from 5 seeds) and a percentile bootstrap "
        "95% interval over seeds, which measures the spread between training runs, not match noise. "
        f"Primary measure: `{primary}`."
    )
    lines.append("")
    shown = [primary, *[c for c in columns if c != primary], "wall_seconds", "cpu_seconds"]
    lines += interval_table(arms, "estimate", shown, fmt)
    if differences:
        base = differences[0]["baseline"]
        lines += ["", f"## Against `{base}`, paired by seed", ""]
        lines.append(
            f"Each arm minus `{base}` at the same seed (the same generation-0 games and measuring openings), "
            "the mean of those differences (IQM from 5 seeds) and its bootstrap 95% interval. "
            "An interval that excludes 0 says the arms differ across these seeds."
        )
        lines.append("")
        lines += interval_table(differences, "difference", columns, lambda x: f"{x:+.3f}")
    lines += ["", "## Trials", ""]
    lines.append("| trial | " + " | ".join(f"`{c}`" for c in shown) + " | attempts |")
    lines.append("|---|" + "---|" * (len(shown) + 1))
    for r in rows:
        lines.append(f"| {r['trial']} | " + " | ".join(fmt(r.get(c)) for c in shown) + f" | {r['attempts']} |")
    if plots:
        lines += ["", "## Against wall-clock time", "", f"![score against {sweep.measure.curve} per arm]({plots[0]})"]
    lines.append("")
    report = out / "report.md"
    write_atomic(report, "\n".join(lines))
    return report
