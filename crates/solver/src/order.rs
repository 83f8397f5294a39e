//! Move ordering from outside the rules for df-pn's new leaves: a
//! network's policy, or a static evaluation of each child.
//!
//! df-pn works first in the child with the least proof number (where the
//! prover moves) or the least disproof number (where the other side
//! moves), and a new leaf's numbers are only an estimate of the work below
//! it. Where the side to move has many moves (twenty-odd goose moves in
//! most Two Foxes positions) and the estimate is flat, the search spreads
//! its nodes over all of them. With a [`MoveOrder`] the solver ranks the
//! mover's moves once per position and multiplies a new child's own number
//! (its proof number at an OR node, its disproof number at an AND node) by
//! `1 + rank`, capped at [`MAX_FACTOR`]: the best-ranked move starts
//! cheapest, the others are still searched once its numbers grow. This is
//! proof-number initialisation from a move ranking, in the manner of
//! focused df-pn with a policy network (Gao, Müller & Hayward 2017,
//! "Focused depth-first proof number search using convolutional neural
//! networks for the game of Hex"), without its hard focus: no move is ever
//! left out, so exactness does not rest on the ranking (any positive start
//! keeps df-pn exact, crate docs), only the nodes a proof costs do.

use halatafl_rules::{Move, Position};

/// The largest factor a rank gives: rank 7 and later all start at eight
/// times the best move's number, so a bad ranking costs at most that.
pub const MAX_FACTOR: u64 = 8;

/// Scores of a position's legal moves for the side to move, higher better.
/// Both search threads of `--threads 2` share one, hence `Sync`.
pub trait MoveOrder: Send + Sync {
    /// One score per move of `moves` (the position's legal moves, in
    /// [`Position::legal_moves`] order), written to `scores` (cleared
    /// first).
    fn scores(&self, position: &Position, moves: &[Move], scores: &mut Vec<f32>);

    /// What ranks the moves, for logs ("alpha-beta's evaluation", a
    /// checkpoint's name).
    fn name(&self) -> String;
}

/// The factor of each move for `scores`: `1 + rank` (rank 0 the highest
/// score; ties keep the moves' order), capped at [`MAX_FACTOR`]. A score
/// that is not a number ranks last.
pub fn rank_factors(scores: &[f32]) -> Vec<u8> {
    let mut by_score: Vec<usize> = (0..scores.len()).collect();
    let key = |i: usize| {
        let s = scores[i];
        if s.is_nan() {
            f32::NEG_INFINITY
        } else {
            s
        }
    };
    by_score.sort_by(|&a, &b| key(b).total_cmp(&key(a)));
    let mut factors = vec![0u8; scores.len()];
    for (rank, &i) in by_score.iter().enumerate() {
        factors[i] = (1 + rank as u64).min(MAX_FACTOR) as u8;
    }
    factors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_scored_move_gets_factor_one_and_later_ranks_are_capped() {
        let scores = [0.1, 0.5, f32::NAN, 0.2, 0.0, -1.0, 0.05, 0.01, 0.02, 0.03];
        let f = rank_factors(&scores);
        assert_eq!(f[1], 1);
        assert_eq!(f[3], 2);
        assert_eq!(f[0], 3);
        assert_eq!(f[6], 4);
        assert!(f.iter().all(|&x| (1..=MAX_FACTOR as u8).contains(&x)));
        // Not a number ranks last, at the cap.
        assert_eq!(f[2], MAX_FACTOR as u8);
        // Ties keep the moves' order.
        assert_eq!(rank_factors(&[0.5, 0.5, 0.5]), vec![1, 2, 3]);
        assert!(rank_factors(&[]).is_empty());
    }
}
