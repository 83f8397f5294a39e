//! The fixed discrete action space of the Python environments.
//!
//! An action is `from * 33 + to`: `from` is the slot of the point the moving
//! piece leaves, `to` the slot of the point where it ends (a step's
//! destination, a chain's final landing point), slots numbering the 33 points
//! in the network encoding's order (row 1 first, left to right: `c1` is 0,
//! `e7` is 32). So there are 33 x 33 = 1089 actions.
//!
//! Why this space and not the network's 784 segment logits
//! (`halatafl_nn::encoding`): a Gym or PettingZoo action is one integer, and a
//! jump chain is one move made of several segments; a segment sum is a policy
//! over moves, not an index of one. From-point x final point names every step
//! exactly (a step and a chain never share their two points: a chain moves an
//! even number of cells along both axes, a step an odd number along at least
//! one) and nearly every chain.
//!
//! **Tie rule.** Two legal chains can share their start and final point (a
//! loop around a square either way, or routes taking different geese). The
//! action then names the chain that captures the most geese, and among those
//! the first in move-string order, so an action always names exactly one legal
//! move and every legal (from, to) pair is reachable. The other chains of such
//! a tie are not reachable through actions (the move-string API plays them).
//! Loops around one square either way take the same geese and reach the same
//! position, so in practice a tie loses nothing.

use crate::args::Int;
use halatafl_rules::{Move, MoveText, Point, Position};
use std::fmt::Write;

/// The number of points of the cross: actions are `from * POINTS + to`.
pub const POINTS: usize = 33;
/// The number of actions.
pub const ACTION_SIZE: usize = POINTS * POINTS;

const NO_SLOT: u8 = u8::MAX;

/// Slot (0..33) of each grid cell (0..49), or `NO_SLOT` off the cross.
const SLOT_OF_CELL: [u8; 49] = {
    let mut table = [NO_SLOT; 49];
    let mut cell = 0;
    let mut slot = 0u8;
    while cell < 49 {
        if halatafl_rules::Point::from_index(cell as u8).is_some() {
            table[cell] = slot;
            slot += 1;
        }
        cell += 1;
    }
    table
};

/// Grid cell of each slot.
const CELL_OF_SLOT: [u8; POINTS] = {
    let mut table = [0u8; POINTS];
    let mut cell = 0;
    while cell < 49 {
        let slot = SLOT_OF_CELL[cell];
        if slot != NO_SLOT {
            table[slot as usize] = cell as u8;
        }
        cell += 1;
    }
    table
};

#[inline]
pub fn slot(p: Point) -> usize {
    SLOT_OF_CELL[p.index()] as usize
}

#[inline]
pub fn point_of_slot(slot: usize) -> Point {
    Point::from_index(CELL_OF_SLOT[slot]).expect("slots name points of the cross")
}

/// The action of a move: its from and final point.
#[inline]
pub fn action_of(m: Move) -> usize {
    slot(m.from()) * POINTS + slot(m.to())
}

/// The (from, to) points an action names.
pub fn points_of(action: usize) -> (Point, Point) {
    (
        point_of_slot(action / POINTS),
        point_of_slot(action % POINTS),
    )
}

/// The action with both points mirrored left-right (`mirror` of positions
/// and moves).
pub fn mirror_action(action: usize) -> usize {
    let (from, to) = points_of(action);
    slot(from.mirror()) * POINTS + slot(to.mirror())
}

/// The action of a move string, without a position: its first and last point.
pub fn action_of_text(text: &str) -> Result<usize, String> {
    let parsed = MoveText::parse(text)
        .map_err(|(column, why)| format!("malformed move `{text}` at character {column}: {why}"))?;
    let to = *parsed.path.last().expect("a parsed move has a destination");
    Ok(slot(parsed.from) * POINTS + slot(to))
}

/// Whether `candidate` beats `current` under the tie rule: more captures,
/// then the smaller move string. Strings are built only for real ties.
fn preferred(candidate: Move, current: Move) -> bool {
    if candidate.jumps() != current.jumps() {
        return candidate.jumps() > current.jumps();
    }
    let (mut a, mut b) = (String::new(), String::new());
    let _ = write!(a, "{candidate}");
    let _ = write!(b, "{current}");
    a < b
}

/// The legal move `action` names among `moves` (a position's legal moves),
/// by the tie rule.
pub fn resolve(moves: &[Move], action: usize) -> Option<Move> {
    resolve_among(moves.iter().map(|&m| (action_of(m), m)), action)
}

/// [`resolve`] over (action, move) pairs whose actions are known already.
pub fn resolve_among(pairs: impl Iterator<Item = (usize, Move)>, action: usize) -> Option<Move> {
    let mut best: Option<Move> = None;
    for (a, m) in pairs {
        if a == action {
            best = match best {
                Some(b) if !preferred(m, b) => Some(b),
                _ => Some(m),
            };
        }
    }
    best
}

/// Sets `mask[action]` for every legal move (`mask` is ACTION_SIZE long and
/// cleared by the caller).
#[inline]
pub fn fill_mask(moves: &[Move], mask: &mut [bool]) {
    for &m in moves {
        mask[action_of(m)] = true;
    }
}

/// The distinct legal actions, ascending.
pub fn legal_actions(moves: &[Move]) -> Vec<usize> {
    let mut v: Vec<usize> = moves.iter().map(|&m| action_of(m)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The message for an action outside 0..ACTION_SIZE.
pub(crate) fn out_of_range(action: &Int) -> String {
    format!(
        "action {action} is out of range: actions are 0 to {}",
        ACTION_SIZE - 1
    )
}

/// Why `action` (an integer) cannot be played in `position`, in words.
pub(crate) fn why_not_legal(position: &Position, moves: &[Move], action: &Int) -> String {
    let index = match action {
        Int::Fits(a) => usize::try_from(*a).ok().filter(|&a| a < ACTION_SIZE),
        _ => None,
    };
    let Some(index) = index else {
        return out_of_range(action);
    };
    let (from, to) = points_of(index);
    let legal: Vec<String> = legal_actions(moves)
        .into_iter()
        .map(|a| a.to_string())
        .collect();
    format!(
        "action {action} ({from} to {to}) is not legal in `{}`; legal actions: {}",
        position.fen(),
        if legal.is_empty() {
            "none".to_string()
        } else {
            legal.join(" ")
        }
    )
}
