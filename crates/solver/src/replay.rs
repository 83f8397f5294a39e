//! One replay checker for the exact solvers (the DAG search, the plain and
//! the sideways retrograde tables): games played from a position over the
//! real rules ([`Game`], whole history), along which every value a solver
//! holds is checked against the rules engine.
//!
//! On each line, at every position:
//!
//! - the solver says what it holds (`LineOracle::value`), or that the
//!   position is beyond what it answers (the line stops there, counted);
//!   what it holds must be what it held at the line's start, since best
//!   play (below) keeps the value;
//! - a finished game (the rules engine's verdict) must have the result the
//!   solver holds; a winner may still let the game be drawn by repetition
//!   or the fifty-move rule, which is counted, not refused (only the
//!   sideways game has draws);
//! - where the solver can give the values of the position's children
//!   (`LineOracle::children`, the retrograde tables), the position's value
//!   must be what the rules engine's legal moves and those values make it
//!   (Bellman's equation: the side to move wins if some move wins for it,
//!   draws if none wins and some draws, loses otherwise), so a wrong move
//!   table or a wrong stored value shows up as an inconsistency;
//! - the winner to move plays the solver's winning move; otherwise a
//!   pseudo-random move (seeded SplitMix64) is played, in a drawn position
//!   one that keeps the draw.

use crate::value::Value;
use halatafl_rules::{Game, Move, Position};

/// What a replay saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Lines (games) played.
    pub lines: usize,
    /// Plies played over all lines.
    pub plies: u64,
    /// Positions on the lines whose value was checked against the claim.
    pub checked: u64,
}

/// How the lines ended, beside [`ReplayStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineEnds {
    /// Lines that ended with the winner the solver held.
    pub won: usize,
    /// Lines that ended drawn (a drawn position, or a winner that let the
    /// game be drawn by repetition or the fifty-move rule).
    pub drawn: usize,
    /// Lines that stopped at a position beyond what the solver answers.
    pub stopped: usize,
}

/// A value the rules engine contradicts: the line, its moves so far, and
/// what disagreed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineFailure {
    /// The line (0-based).
    pub line: usize,
    /// Its moves from the position, or `the start`.
    pub moves: String,
    /// What the solver held against what the rules gave.
    pub what: String,
}

/// A solver's answers about positions on a line.
pub(crate) trait LineOracle {
    /// The solver's own error, which a [`LineFailure`] becomes.
    type Error: From<LineFailure>;

    /// The value held for the position `game` is at, on line `line` (for
    /// the solver's own errors); `over` says whether the game has ended
    /// there (the checker knows it already). `None` where the solver
    /// answers no more.
    fn value(&mut self, game: &Game, over: bool, line: usize)
        -> Result<Option<Value>, Self::Error>;

    /// The legal moves of `here`, in the rules engine's order, with the
    /// values held for the positions they lead to; `None` for a solver whose
    /// value of `here` comes from its own search of it (the DAG search), so
    /// that there is nothing to re-derive it from.
    fn children(&mut self, here: &Position) -> Result<Option<Vec<(Move, Value)>>, Self::Error>;

    /// A move that keeps the win for the winner to move in `here`.
    fn winning_move(
        &mut self,
        here: &Position,
        children: Option<&[(Move, Value)]>,
    ) -> Result<Move, Self::Error>;
}

/// A line's moves so far, for an error message.
pub(crate) fn moves_or_start(game: &Game) -> String {
    if game.moves().is_empty() {
        "the start".into()
    } else {
        game.moves_text()
    }
}

/// A step of the SplitMix64 generator (Steele et al. 2014): enough for
/// picking the loser's replies reproducibly without a dependency.
pub(crate) fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The value the moves' values make a position's, for its side to move.
fn derived(mover: halatafl_rules::Side, children: &[(Move, Value)]) -> Value {
    if children.iter().any(|c| c.1 == Value::Win(mover)) {
        Value::Win(mover)
    } else if children.iter().any(|c| c.1 == Value::Draw) {
        Value::Draw
    } else {
        Value::Win(mover.other())
    }
}

/// Plays `lines` games from `start` and checks `oracle` along them (see
/// the module doc); `visit` hears of every checked position with its value.
pub(crate) fn check_lines<O: LineOracle>(
    oracle: &mut O,
    start: &Position,
    lines: usize,
    seed: u64,
    mut visit: impl FnMut(&Position, Value),
) -> Result<(ReplayStats, LineEnds), O::Error> {
    let mut rng = seed;
    let mut stats = ReplayStats {
        lines,
        ..ReplayStats::default()
    };
    let mut ends = LineEnds::default();
    for line in 0..lines {
        let mut game = Game::new(*start);
        // Best play keeps the value: the winner plays a winning move, every
        // move of the loser leaves a win, a drawn position is left by a move
        // that keeps the draw. So one value holds along the whole line.
        let mut start_value: Option<Value> = None;
        loop {
            let here = *game.position();
            let fail = |what: String| LineFailure {
                line,
                moves: moves_or_start(&game),
                what,
            };
            let outcome = game.outcome();
            let held = oracle.value(&game, outcome.is_some(), line)?;
            if let (Some(first), Some(now)) = (start_value, held) {
                if now != first {
                    return Err(fail(format!(
                        "the solver held {first} at the line's start and holds {now} here"
                    ))
                    .into());
                }
            }
            start_value = start_value.or(held);
            if let Some(outcome) = outcome {
                let ended = outcome.winner.map_or(Value::Draw, Value::Win);
                match (held, ended) {
                    (Some(c), e) if c == e && e != Value::Draw => ends.won += 1,
                    // By repetition or the fifty-move rule: a winner may
                    // let that happen.
                    (_, Value::Draw) => ends.drawn += 1,
                    (None, _) => ends.stopped += 1,
                    (Some(claimed), _) => {
                        return Err(fail(format!(
                            "the solver holds {claimed}, but the game ended {outcome}"
                        ))
                        .into())
                    }
                }
                break;
            }
            let Some(claimed) = held else {
                ends.stopped += 1;
                break;
            };
            let mover = here.side();
            let children = oracle.children(&here)?;
            if let Some(children) = &children {
                let from_moves = derived(mover, children);
                if from_moves != claimed {
                    return Err(fail(format!(
                        "the solver holds {claimed}, but its {} moves give {from_moves}",
                        children.len()
                    ))
                    .into());
                }
            }
            stats.checked += 1;
            visit(&here, claimed);
            let m = if claimed == Value::Win(mover) {
                oracle.winning_move(&here, children.as_deref())?
            } else {
                let candidates: Vec<Move> = match &children {
                    Some(children) => children
                        .iter()
                        .filter(|c| claimed != Value::Draw || c.1 == Value::Draw)
                        .map(|c| c.0)
                        .collect(),
                    None => here.legal_moves().to_vec(),
                };
                rng = splitmix64(rng);
                candidates[(rng % candidates.len() as u64) as usize]
            };
            game.play_unchecked(m);
            stats.plies += 1;
        }
    }
    Ok((stats, ends))
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_rules::{Side, Variant};

    /// An oracle that holds `value` for every position and `child` for
    /// every child (or derives nothing).
    struct Liar {
        value: Value,
        child: Option<Value>,
    }

    impl LineOracle for Liar {
        type Error = LineFailure;

        fn value(&mut self, _: &Game, _: bool, _: usize) -> Result<Option<Value>, LineFailure> {
            Ok(Some(self.value))
        }

        fn children(&mut self, here: &Position) -> Result<Option<Vec<(Move, Value)>>, LineFailure> {
            Ok(self
                .child
                .map(|v| here.legal_moves().into_iter().map(|m| (m, v)).collect()))
        }

        fn winning_move(
            &mut self,
            here: &Position,
            _: Option<&[(Move, Value)]>,
        ) -> Result<Move, LineFailure> {
            Ok(here.legal_moves()[0])
        }
    }

    #[test]
    fn values_the_rules_contradict_are_caught() {
        let start = Position::start(Variant::classic(13, false).unwrap());
        let foxes = Value::Win(Side::Foxes);
        // A draw claimed where every move is held to win for the mover.
        let mut liar = Liar {
            value: Value::Draw,
            child: Some(foxes),
        };
        let err = check_lines(&mut liar, &start, 1, 7, |_, _| {}).unwrap_err();
        assert!(
            err.line == 0 && err.moves == "the start" && err.what.contains("moves give foxes win"),
            "{err:?}"
        );
        // A win held everywhere without children: only the games' ends can
        // tell. Geese that always play their first move lose to a random
        // fox at times; foxes that do win against random geese.
        let mut liar = Liar {
            value: Value::Win(Side::Geese),
            child: None,
        };
        let err = check_lines(&mut liar, &start, 50, 7, |_, _| {}).unwrap_err();
        assert!(err.what.contains("but the game ended foxes"), "{err:?}");
        let mut honest_enough = Liar {
            value: foxes,
            child: None,
        };
        let (stats, ends) = check_lines(&mut honest_enough, &start, 5, 7, |_, _| {}).unwrap();
        assert_eq!((stats.lines, ends.won), (5, 5));
    }
}
