//! An independent check of a proof: the winning tree is rebuilt from the
//! table and replayed over the real rules ([`Game`] with its whole history,
//! so threefold repetition and the fifty-move rule apply as in a game).
//!
//! Where the prover moves, the check takes a move whose position the table
//! holds as proven and that repeats no placement of the path; where the
//! other side moves, it tries every move. Every leaf must be a win for the
//! prover by [`Game::outcome`]. This trusts the table only to pick moves:
//! whether the tree wins is decided by the rules engine alone, with two
//! exceptions, as in the search: in classic Fox and Geese without sideways
//! steps a position where the fox is free (crate docs) is a leaf won for
//! the fox, and in Two Foxes a position the geese win by a march
//! ([`crate::march`]) is a leaf won for the geese. Both rules are checked
//! against plain minimax in the tests. The march is asked again here, by a
//! search of its own with a budget [`MARCH_CHECK_FACTOR`] times the
//! solver's, so the check does not read the solver's march table.

use crate::march::March;
use crate::tt::Known;
use crate::Solver;
use halatafl_rules::{Game, Position, Side};
use thiserror::Error;

/// Why a proof did not check out. The first two mean a bug in the search
/// (or a proof the table has since lost); the third that the check was not
/// done.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum VerifyError {
    /// A leaf of the proof tree that the rules engine does not give to the
    /// prover.
    #[error("after {moves}: the game ended without a win for the {prover} ({outcome})")]
    NotAWin {
        /// The moves from the root to the leaf.
        moves: String,
        /// The side the proof was for.
        prover: Side,
        /// How the game ended there.
        outcome: String,
    },
    /// A prover node with no proven child that keeps off a repetition.
    #[error(
        "after {moves}: the table has no proven move for the {prover} that avoids a repetition"
    )]
    NoProvenMove {
        /// The moves from the root to the node.
        moves: String,
        /// The side the proof was for.
        prover: Side,
    },
    /// The tree has more nodes than the check may visit (the limit given).
    #[error("the proof tree has more than {0} nodes; not checked")]
    TooBig(u64),
}

/// Replays the proof that `prover` wins `position` (no history) found by
/// `solver`; returns the nodes of the tree. At most `max_nodes` are visited.
pub fn verify_win(
    solver: &Solver,
    position: &Position,
    prover: Side,
    max_nodes: u64,
) -> Result<u64, VerifyError> {
    let mut game = Game::new(*position);
    let mut nodes = 0;
    let (budget, sideways) = solver.march_settings();
    let mut march = March::new(budget.saturating_mul(MARCH_CHECK_FACTOR), sideways);
    walk(solver, &mut march, &mut game, prover, max_nodes, &mut nodes)?;
    Ok(nodes)
}

/// The check's march budget against the solver's: a march the solver found
/// with the help of states it had settled before may need more states from
/// an empty table.
const MARCH_CHECK_FACTOR: u64 = 100;

/// The leaves the search proves by a rule rather than by search, asked
/// where the search asks them: the classic game's free fox, and the geese's
/// march where the foxes move.
fn won_without_search(solver: &Solver, march: &mut March, p: &Position, prover: Side) -> bool {
    match prover {
        Side::Foxes => solver.free_fox_wins(p),
        Side::Geese => p.side() == Side::Foxes && march.geese_win(p),
    }
}

fn walk(
    solver: &Solver,
    march: &mut March,
    game: &mut Game,
    prover: Side,
    max_nodes: u64,
    nodes: &mut u64,
) -> Result<(), VerifyError> {
    *nodes += 1;
    if *nodes > max_nodes {
        return Err(VerifyError::TooBig(max_nodes));
    }
    if let Some(outcome) = game.outcome() {
        if outcome.winner == Some(prover) {
            return Ok(());
        }
        return Err(VerifyError::NotAWin {
            moves: game.moves_text(),
            prover,
            outcome: outcome.to_string(),
        });
    }
    if won_without_search(solver, march, game.position(), prover) {
        return Ok(());
    }
    let moves = game.position().legal_moves();
    if game.position().side() == prover {
        for m in moves {
            game.play_unchecked(m);
            let usable = game.repetitions() == 1
                && (game.position().outcome_without_history().map(|o| o.winner)
                    == Some(Some(prover))
                    || solver.known(game.position(), prover) == Known::Proven
                    || won_without_search(solver, march, game.position(), prover));
            if usable {
                let result = walk(solver, march, game, prover, max_nodes, nodes);
                game.undo();
                return result;
            }
            game.undo();
        }
        Err(VerifyError::NoProvenMove {
            moves: game.moves_text(),
            prover,
        })
    } else {
        for m in moves {
            game.play_unchecked(m);
            let result = walk(solver, march, game, prover, max_nodes, nodes);
            game.undo();
            result?;
        }
        Ok(())
    }
}
