//! An agent judged against exact values: the error rate (the share of a
//! suite's positions where it plays a move whose proven value is worse than
//! the best move's, as AlphaZero.jl measures its Connect Four agent on
//! Pascal Pons's sets) and value accuracy (its reported value read as win >
//! 1/3, loss < -1/3, draw between, against the proven one), grouped by game
//! stage, side to move and difficulty. `halatafl accuracy` prints them; a
//! run's evaluation (`[eval] suite`) records them per generation.

use crate::suite::{stage, SuiteEntry};
use halatafl_agent::{Agent, Budget};
use halatafl_rules::{Game, Move};
use std::collections::BTreeMap;

/// One position's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// `foxes` or `geese`: the side to move.
    pub mover: &'static str,
    /// The stage of the source game (`beginning`, `middle`, `end`), or for
    /// suites without one, by the geese left.
    pub stage: String,
    /// `easy`, `medium`, `hard`, or empty where the suite has no move values.
    pub difficulty: String,
    /// Some legal move loses value here.
    pub critical: bool,
    /// The agent's move keeps the position's value.
    pub move_keeps: bool,
    /// Whether the agent's value names the proven one; `None` for agents
    /// that report no value.
    pub value_right: Option<bool>,
    /// The move the agent played.
    pub played: Move,
    /// The agent's value of the position for the side to move, if it
    /// reports one.
    pub agent_value: Option<f32>,
    /// Wall-clock seconds the agent took to choose its move: issue-style
    /// comparisons ("alpha-beta at ten times its time") need the time on
    /// the judged positions themselves.
    pub seconds: f64,
}

/// The proven value for the side to move (+1, 0, -1) read back from an
/// agent's value in [-1, 1].
pub fn value_class(v: f32) -> i32 {
    if v > 1.0 / 3.0 {
        1
    } else if v < -1.0 / 3.0 {
        -1
    } else {
        0
    }
}

/// Asks `agent` for its move in `entry`'s position (a new game seeded
/// from `seed` and the entry's line, so each position is judged alike
/// whatever order or thread it comes in) and judges it.
pub fn judge(agent: &mut dyn Agent, entry: &SuiteEntry, seed: u64) -> Verdict {
    let game = Game::new(entry.position);
    agent.new_game(seed ^ entry.line);
    let started = std::time::Instant::now();
    let decision = agent.choose(&game, &Budget::default());
    let seconds = started.elapsed().as_secs_f64();
    let mover = entry.position.side();
    // Suites with exact move values name the stage in the source game;
    // others are staged by the geese left.
    let stage = if entry.row.stage.is_empty() {
        stage(entry.position.geese().count(), entry.position.variant())
    } else {
        entry.row.stage.clone()
    };
    Verdict {
        mover: mover.name(),
        stage,
        difficulty: entry.row.difficulty.clone(),
        critical: entry.keeping.len() < entry.row.legal_moves,
        move_keeps: entry.keeping.contains(&decision.mv),
        value_right: decision
            .value
            .map(|v| value_class(v) == entry.value.for_side(mover)),
        played: decision.mv,
        agent_value: decision.value,
        seconds,
    }
}

/// Judges every entry on `threads` threads, each with its own agent from
/// `make_agent` (entries dealt out in turn); `on_judged` is called after
/// each position (progress bars). The verdicts come in the entries' order,
/// so `verdicts[i]` is `entries[i]`'s.
pub fn judge_all<E: Send>(
    entries: &[SuiteEntry],
    threads: usize,
    seed: u64,
    make_agent: &(dyn Fn() -> Result<Box<dyn Agent>, E> + Sync),
    on_judged: &(dyn Fn() + Sync),
) -> Result<Vec<Verdict>, E> {
    let threads = threads.clamp(1, entries.len().max(1));
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || -> Result<Vec<Verdict>, E> {
                    let mut agent = make_agent()?;
                    Ok(entries
                        .iter()
                        .skip(t)
                        .step_by(threads)
                        .map(|e| {
                            let verdict = judge(agent.as_mut(), e, seed);
                            on_judged();
                            verdict
                        })
                        .collect())
                })
            })
            .collect();
        let mut parts = workers
            .into_iter()
            .map(|w| w.join().expect("judging worker").map(Vec::into_iter))
            .collect::<Result<Vec<_>, E>>()?;
        // Worker t judged entries t, t + threads, ...: deal them back.
        Ok((0..entries.len())
            .map(|i| parts[i % threads].next().expect("a verdict per entry"))
            .collect())
    })
}

/// The mean and the median of the agents' thinking time per position, in
/// milliseconds; `(0, 0)` for no verdicts.
pub fn ms_per_move(verdicts: &[Verdict]) -> (f64, f64) {
    if verdicts.is_empty() {
        return (0.0, 0.0);
    }
    let mut ms: Vec<f64> = verdicts.iter().map(|v| 1000.0 * v.seconds).collect();
    ms.sort_by(f64::total_cmp);
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    let mid = ms.len() / 2;
    let median = if ms.len() % 2 == 1 {
        ms[mid]
    } else {
        (ms[mid - 1] + ms[mid]) / 2.0
    };
    (mean, median)
}

/// Counts over a group of verdicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Positions judged.
    pub positions: usize,
    /// Of those, where the agent's move lost value.
    pub errors: usize,
    /// Positions where some move loses value ...
    pub critical: usize,
    /// ... and the errors among them.
    pub critical_errors: usize,
    /// Positions where the agent reported a value ...
    pub valued: usize,
    /// ... and where that value was the proven one.
    pub value_right: usize,
}

impl Tally {
    /// Counts one verdict.
    pub fn add(&mut self, v: &Verdict) {
        self.positions += 1;
        self.errors += !v.move_keeps as usize;
        if v.critical {
            self.critical += 1;
            self.critical_errors += !v.move_keeps as usize;
        }
        if let Some(right) = v.value_right {
            self.valued += 1;
            self.value_right += right as usize;
        }
    }
}

/// The verdicts grouped: `stage <s>` in game order, `to move: <side>`,
/// `difficulty <d>` (easy, medium, hard), each stage crossed with each
/// difficulty (`middle, hard`: issue-style targets name such cells, "the
/// hard middle-game set"), then `all`, each with its tally; the order every
/// table and CSV of these groups uses.
pub fn group_tallies(verdicts: &[Verdict]) -> Vec<(String, Tally)> {
    let mut groups: BTreeMap<(u8, usize, String), Tally> = BTreeMap::new();
    let order = |name: &str| {
        ["beginning", "middle", "end", "easy", "medium", "hard"]
            .iter()
            .position(|n| *n == name)
            .unwrap_or(usize::MAX)
    };
    let mut all = Tally::default();
    for v in verdicts {
        let mut add = |kind: u8, rank: usize, name: String| {
            groups.entry((kind, rank, name)).or_default().add(v)
        };
        add(0, order(&v.stage), v.stage.clone());
        add(1, order(v.mover), v.mover.to_string());
        if !v.difficulty.is_empty() {
            let difficulty = order(&v.difficulty);
            add(2, difficulty, v.difficulty.clone());
            // Stage-major: each stage's cells in difficulty order.
            let cell = order(&v.stage).saturating_mul(8).saturating_add(difficulty);
            add(3, cell, format!("{}, {}", v.stage, v.difficulty));
        }
        all.add(v);
    }
    let mut rows: Vec<(String, Tally)> = groups
        .into_iter()
        .map(|((kind, _, name), t)| {
            let label = ["stage", "to move:", "difficulty", "stage, difficulty:"][kind as usize];
            (format!("{label} {name}"), t)
        })
        .collect();
    rows.push(("all".to_string(), all));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(stage: &str, mover: &'static str, difficulty: &str, keeps: bool) -> Verdict {
        Verdict {
            mover,
            stage: stage.into(),
            difficulty: difficulty.into(),
            critical: true,
            move_keeps: keeps,
            value_right: Some(keeps),
            played: Game::start_of(halatafl_rules::Variant::two_foxes())
                .position()
                .legal_moves()[0],
            agent_value: None,
            seconds: 0.0,
        }
    }

    #[test]
    fn groups_come_in_table_order_with_their_counts() {
        let verdicts = [
            verdict("end", "geese", "hard", false),
            verdict("beginning", "foxes", "easy", true),
            verdict("middle", "geese", "hard", true),
            verdict("end", "foxes", "medium", false),
        ];
        let groups = group_tallies(&verdicts);
        let names: Vec<&str> = groups.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "stage beginning",
                "stage middle",
                "stage end",
                "to move: foxes",
                "to move: geese",
                "difficulty easy",
                "difficulty medium",
                "difficulty hard",
                "stage, difficulty: beginning, easy",
                "stage, difficulty: middle, hard",
                "stage, difficulty: end, medium",
                "stage, difficulty: end, hard",
                "all"
            ]
        );
        let all = groups[12].1;
        assert_eq!((all.positions, all.errors, all.critical_errors), (4, 2, 2));
        assert_eq!((all.valued, all.value_right), (4, 2));
        let end = groups[2].1;
        assert_eq!((end.positions, end.errors), (2, 2));
        let hard = groups[7].1;
        assert_eq!((hard.positions, hard.errors), (2, 1));
        let middle_hard = groups[9].1;
        assert_eq!((middle_hard.positions, middle_hard.errors), (1, 0));
        let end_hard = groups[11].1;
        assert_eq!((end_hard.positions, end_hard.errors), (1, 1));
    }

    #[test]
    fn time_per_move_is_the_mean_and_the_median_in_milliseconds() {
        let timed = |seconds: &[f64]| -> Vec<Verdict> {
            seconds
                .iter()
                .map(|&s| Verdict {
                    seconds: s,
                    ..verdict("end", "geese", "hard", true)
                })
                .collect()
        };
        assert_eq!(ms_per_move(&timed(&[0.001, 0.003, 0.011])), (5.0, 3.0));
        assert_eq!(
            ms_per_move(&timed(&[0.001, 0.003, 0.004, 0.012])),
            (5.0, 3.5)
        );
        assert_eq!(ms_per_move(&[]), (0.0, 0.0));
    }

    #[test]
    fn values_read_back_by_thirds() {
        assert_eq!(value_class(0.34), 1);
        assert_eq!(value_class(0.3), 0);
        assert_eq!(value_class(-0.3), 0);
        assert_eq!(value_class(-0.34), -1);
    }
}
