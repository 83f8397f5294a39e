//! The end-of-match summary: per agent and per side, wins, draws, losses,
//! score with its 95% Wilson interval, and the Elo difference with its
//! interval (see [`crate::stats`]).

use crate::stats::{elo_with_interval, fmt_elo, Record};
use crate::{GameRow, ThinkingTime};
use halatafl_rules::Side;
use std::fmt;

/// One agent's records: over all games, as foxes, as geese.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideRecords {
    pub spec: String,
    pub overall: Record,
    pub foxes: Record,
    pub geese: Record,
    /// Thinking time over all games.
    pub time: ThinkingTime,
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
                agent.time.add(row, side);
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
            writeln!(
                f,
                "  time      {:.1} ms per move over {} moves",
                a.time.ms_per_move(),
                a.time.moves
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(game: usize, opening: &str, plies: usize, seconds: [f64; 2]) -> GameRow {
        GameRow {
            game,
            opening: 0,
            opening_moves: opening.into(),
            foxes: String::new(),
            geese: String::new(),
            result: "draw".into(),
            reason: "threefold".into(),
            plies,
            moves: String::new(),
            foxes_seconds: seconds[0],
            geese_seconds: seconds[1],
            seed: 0,
            variant: "two-foxes".into(),
        }
    }

    #[test]
    fn time_per_move_counts_only_the_agents_own_moves() {
        // 7 plies, no opening: foxes played plies 0, 2, 4, 6; geese 1, 3, 5.
        let r = row(1, "", 7, [0.4, 0.3]);
        assert_eq!(r.moves_by(Side::Foxes), 4);
        assert_eq!(r.moves_by(Side::Geese), 3);
        // Opening of 3 plies (foxes 0, 2; geese 1): the agents played 3..7.
        let r = row(1, "c7-c6 d3-d4 c6-c7", 7, [0.2, 0.2]);
        assert_eq!(r.moves_by(Side::Foxes), 2);
        assert_eq!(r.moves_by(Side::Geese), 2);
        // Game 1: A on the foxes (2 moves, 0.2 s); game 2: A on the geese.
        let rows = [
            r,
            row(2, "c7-c6 d3-d4", 6, [0.1, 0.4]), // plies 2..6: foxes 2, geese 2
        ];
        let s = MatchSummary::from_match("a", "b", &rows);
        assert_eq!(s.agents[0].time.moves, 4);
        assert!((s.agents[0].time.ms_per_move() - 1000.0 * 0.6 / 4.0).abs() < 1e-9);
        assert!((s.agents[1].time.ms_per_move() - 1000.0 * 0.3 / 4.0).abs() < 1e-9);
        assert!(s.to_string().contains("150.0 ms per move over 4 moves"));
    }
}
