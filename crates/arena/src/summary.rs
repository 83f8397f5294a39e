//! The end-of-match summary: per agent and per side, wins, draws, losses,
//! score with its 95% Wilson interval, and the Elo difference with its
//! interval (see [`crate::stats`]).

use crate::stats::{elo_with_interval, fmt_elo, Record};
use crate::GameRow;
use halatafl_rules::Side;
use std::fmt;

/// One agent's records: over all games, as foxes, as geese.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideRecords {
    pub spec: String,
    pub overall: Record,
    pub foxes: Record,
    pub geese: Record,
}

/// Agent A's and agent B's records in a match.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchSummary {
    pub agents: [SideRecords; 2],
}

fn result_for(row: &GameRow, side: Side) -> i32 {
    match row.result.as_str() {
        "draw" => 0,
        w if w == side.name() => 1,
        _ => -1,
    }
}

impl MatchSummary {
    /// Rows of a match from [`crate::run_match`]: game `g` had A on the foxes
    /// when `g` is odd (A and B may be the same spec).
    pub fn from_match(a: &str, b: &str, rows: &[GameRow]) -> MatchSummary {
        let mut agents = [
            SideRecords {
                spec: a.to_string(),
                ..SideRecords::default()
            },
            SideRecords {
                spec: b.to_string(),
                ..SideRecords::default()
            },
        ];
        for row in rows {
            let a_is_foxes = row.game % 2 == 1;
            for (index, agent) in agents.iter_mut().enumerate() {
                let side = if (index == 0) == a_is_foxes {
                    Side::Foxes
                } else {
                    Side::Geese
                };
                let r = result_for(row, side);
                agent.overall.add(r);
                match side {
                    Side::Foxes => agent.foxes.add(r),
                    Side::Geese => agent.geese.add(r),
                }
            }
        }
        MatchSummary { agents }
    }
}

fn line(f: &mut fmt::Formatter<'_>, label: &str, r: &Record) -> fmt::Result {
    let (lo, hi) = r.interval();
    let (elo, elo_lo, elo_hi) = elo_with_interval(r);
    writeln!(
        f,
        "  {label:<9} {:>4} games  +{} ={} -{}  score {:.3} [{:.3}, {:.3}]  Elo {} [{}, {}]",
        r.games(),
        r.wins,
        r.draws,
        r.losses,
        r.score(),
        lo,
        hi,
        fmt_elo(elo),
        fmt_elo(elo_lo),
        fmt_elo(elo_hi)
    )
}

/// Scores are against the other agent; intervals are 95% (Wilson); Elo is
/// the difference to the other agent implied by the score.
impl fmt::Display for MatchSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, a) in ["A", "B"].iter().zip(&self.agents) {
            writeln!(f, "agent {name}: {}", a.spec)?;
            line(f, "overall", &a.overall)?;
            line(f, "as foxes", &a.foxes)?;
            line(f, "as geese", &a.geese)?;
        }
        Ok(())
    }
}
