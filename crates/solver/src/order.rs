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
//! `base^rank` ([`rank_factor`], capped at [`MAX_FACTOR`];
//! `SolverConfig::order_base`, 2 by default): the best-ranked move starts
//! cheapest, the others are still searched once its numbers grow. This is
//! proof-number initialisation from a move ranking, in the manner of
//! focused df-pn with a policy network (Gao, Müller & Hayward 2017,
//! "Focused depth-first proof number search using convolutional neural
//! networks for the game of Hex"), without its hard focus: no move is ever
//! left out, so exactness does not rest on the ranking (any positive start
//! keeps df-pn exact, crate docs), only the nodes a proof costs do.

use halatafl_rules::{Move, Position};

/// The largest factor a rank gives, so that a poor ranking costs at most
/// that much and the numbers stay far from overflow.
pub const MAX_FACTOR: u64 = 64;

/// Scores of a position's legal moves for the side to move, higher better.
/// Both search threads of `--threads 2` share one, hence `Sync`.
pub trait MoveOrder: Send + Sync {
    /// One score per move of `moves` (the position's legal moves, in
    /// [`Position::legal_moves`] order), written to `scores` (cleared
    /// first).
    fn scores(&self, position: &Position, moves: &[Move], scores: &mut Vec<f32>);
}

/// The rank of each move for `scores`: 0 for the highest score (ties keep
/// the moves' order; a score that is not a number ranks last), saturating
/// at 255.
pub fn ranks(scores: &[f32]) -> Vec<u8> {
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
    let mut ranks = vec![0u8; scores.len()];
    for (rank, &i) in by_score.iter().enumerate() {
        ranks[i] = rank.min(255) as u8;
    }
    ranks
}

/// The factor of a new leaf of rank `rank`: `base^rank`, at most
/// [`MAX_FACTOR`].
pub fn rank_factor(base: u64, rank: u8) -> u64 {
    base.checked_pow(u32::from(rank))
        .map_or(MAX_FACTOR, |f| f.min(MAX_FACTOR))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_scored_move_ranks_first_and_factors_grow_by_the_base() {
        let scores = [0.1, 0.5, f32::NAN, 0.2, 0.0, -1.0, 0.05];
        assert_eq!(ranks(&scores), vec![2, 0, 6, 1, 4, 5, 3]);
        // Ties keep the moves' order.
        assert_eq!(ranks(&[0.5, 0.5, 0.5]), vec![0, 1, 2]);
        assert!(ranks(&[]).is_empty());
        assert_eq!(rank_factor(2, 0), 1);
        assert_eq!(rank_factor(2, 3), 8);
        assert_eq!(rank_factor(1, 200), 1);
        assert_eq!(rank_factor(2, 40), MAX_FACTOR);
        assert_eq!(rank_factor(4, 255), MAX_FACTOR);
    }
}
