//! Perft: the number of leaf nodes of the legal-move tree, as docs/rules.md defines
//! it (games over by rule 1 or 2 have no children; repetition and the
//! fifty-move rule are not applied). The last ply is counted in bulk.

use crate::moves::{Move, MoveList};
use crate::position::Position;

/// Leaf nodes of the legal-move tree `depth` plies below `position`, by the
/// definition in the module doc: the numbers the perft suites under
/// `tests/data` pin down.
pub fn perft(position: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if position.material_outcome().is_some() {
        return 0;
    }
    if depth == 1 {
        return position.count_legal_moves();
    }
    let mut moves = MoveList::new();
    position.generate(&mut moves);
    let mut nodes = 0;
    for m in moves {
        let mut child = *position;
        child.play_unchecked(m);
        nodes += perft(&child, depth - 1);
    }
    nodes
}

/// The same count with make/unmake on one position instead of copies; kept
/// to measure the two against each other (see `benches/rules.rs`).
pub fn perft_make_unmake(position: &mut Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if position.material_outcome().is_some() {
        return 0;
    }
    if depth == 1 {
        return position.count_legal_moves();
    }
    let mut moves = MoveList::new();
    position.generate(&mut moves);
    let mut nodes = 0;
    for m in moves {
        let quiet = position.quiet();
        position.play_unchecked(m);
        nodes += perft_make_unmake(position, depth - 1);
        position.unplay_unchecked(m, quiet);
    }
    nodes
}

/// Perft split by first move: `(move, nodes below it)` in generation order.
pub fn divide(position: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 || position.material_outcome().is_some() {
        return Vec::new();
    }
    position
        .legal_moves()
        .into_iter()
        .map(|m| {
            let mut child = *position;
            child.play_unchecked(m);
            (m, perft(&child, depth - 1))
        })
        .collect()
}
