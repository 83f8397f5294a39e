//! Version 1 of the input encoding and of the policy index space.
//!
//! **Input planes** (7x7 grid, cell `row * 7 + file`, row 1 first), absolute
//! rather than relative to the side to move, because the two sides of this game
//! play by different rules:
//!
//! | plane | meaning |
//! |---|---|
//! | 0 | foxes |
//! | 1 | geese |
//! | 2 | on-board mask (the 33 points) |
//! | 3 | geese to move (all ones) |
//! | 4 | pen points (Two Foxes only) |
//! | 5 | quiet-ply counter / 100 (all cells) |
//! | 6 | the position has stood on the board before in this game (all ones) |
//! | 7 | classic variant |
//! | 8 | corner links |
//! | 9 | geese may step sideways |
//!
//! **Policy: a fixed space of 784 segment logits** = 16 planes x 49 cells:
//! planes 0-7 are "step from this point in direction d", planes 8-15 "jump from
//! this point in direction d". A step's logit is its one segment; a jump
//! chain's logit is the **sum** of its jumps' segments (each jump indexed by the
//! point it leaves and its direction). A move's prior is the softmax of these
//! move logits over the legal moves.
//!
//! Why this decomposition: chains are single moves in this game (the search
//! chooses between whole chains), yet their number is unbounded by any fixed
//! "from-to" table: two chains may share start and end and differ in the geese
//! they take, or loop back to their start. Indexing every jump by (point,
//! direction) gives each chain a unique index *sequence* in a small fixed space,
//! one network evaluation scores every chain, and the left-right mirror maps
//! segments to segments. Steps of geese and foxes share planes 0-7 (the side to
//! move is an input).

use halatafl_rules::{Direction, Move, Point, Position, PEN};

/// Bumped whenever planes or policy indices change meaning; stored in every
/// checkpoint and checked on load.
pub const ENCODING_VERSION: u32 = 1;
/// Input planes per position (the table in the module doc).
pub const INPUT_PLANES: usize = 10;
/// Cells of the 7x7 grid every plane covers (the 33 points and the 16
/// off-board corners).
pub const GRID: usize = 49;
/// Floats of one encoded position: [`INPUT_PLANES`] planes of [`GRID`] cells.
pub const INPUT_SIZE: usize = INPUT_PLANES * GRID;
/// Policy planes: 8 step directions, then 8 jump directions.
pub const POLICY_PLANES: usize = 16;
/// Number of segment logits the network outputs.
pub const POLICY_SIZE: usize = POLICY_PLANES * GRID;

/// Writes the planes of `position` (which has stood on the board
/// `repetitions` times in its game, counting now) into `out` (INPUT_SIZE).
pub fn encode_into(position: &Position, repetitions: usize, out: &mut [f32]) {
    assert_eq!(out.len(), INPUT_SIZE);
    out.fill(0.0);
    encode_into_zeroed(position, repetitions, out);
}

/// [`encode_into`] for an `out` that is all zeros already. Callers that fill
/// a freshly zeroed buffer for many positions at once (the Python package's
/// batched games) skip clearing each position's planes a second time, which
/// is a measurable share of a batched step.
pub fn encode_into_zeroed(position: &Position, repetitions: usize, out: &mut [f32]) {
    assert_eq!(out.len(), INPUT_SIZE);
    let variant = position.variant();
    let mut set_bits = |plane: usize, bits: u64| {
        let mut b = bits;
        while b != 0 {
            let i = b.trailing_zeros() as usize;
            out[plane * GRID + i] = 1.0;
            b &= b - 1;
        }
    };
    set_bits(0, position.foxes().0);
    set_bits(1, position.geese().0);
    set_bits(2, halatafl_rules::Bitboard::BOARD.0);
    if variant.has_pen() {
        set_bits(4, PEN.0);
    }
    let fill =
        |out: &mut [f32], plane: usize, v: f32| out[plane * GRID..(plane + 1) * GRID].fill(v);
    if position.side() == halatafl_rules::Side::Geese {
        fill(out, 3, 1.0);
    }
    fill(out, 5, position.quiet() as f32 / 100.0);
    if repetitions >= 2 {
        fill(out, 6, 1.0);
    }
    if variant.is_classic() {
        fill(out, 7, 1.0);
    }
    if variant.corner_links {
        fill(out, 8, 1.0);
    }
    if variant.sideways {
        fill(out, 9, 1.0);
    }
}

/// The planes of `position` (which has stood on the board `repetitions`
/// times in its game, counting now) in a new vector of [`INPUT_SIZE`].
pub fn encode(position: &Position, repetitions: usize) -> Vec<f32> {
    let mut v = vec![0.0; INPUT_SIZE];
    encode_into(position, repetitions, &mut v);
    v
}

/// The planes of the mirrored position, from the planes of the position.
pub fn mirror_planes(planes: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0; planes.len()];
    for (chunk_in, chunk_out) in planes.chunks(GRID).zip(out.chunks_mut(GRID)) {
        for row in 0..7 {
            for file in 0..7 {
                chunk_out[row * 7 + (6 - file)] = chunk_in[row * 7 + file];
            }
        }
    }
    out
}

#[inline]
fn segment(jump: bool, dir: Direction, from: Point) -> usize {
    ((jump as usize) * 8 + dir as usize) * GRID + from.index()
}

#[inline]
fn step_direction(from: Point, to: Point) -> Direction {
    match to.index() as i32 - from.index() as i32 {
        7 => Direction::North,
        8 => Direction::NorthEast,
        1 => Direction::East,
        -6 => Direction::SouthEast,
        -7 => Direction::South,
        -8 => Direction::SouthWest,
        -1 => Direction::West,
        6 => Direction::NorthWest,
        d => unreachable!("a step moves one point, not {d} cells"),
    }
}

/// The policy segments of a move, in order: one for a step, one per jump for
/// a chain. Calls `f` with each segment index.
#[inline]
pub fn for_each_segment(m: Move, mut f: impl FnMut(usize)) {
    if !m.is_capture() {
        f(segment(false, step_direction(m.from(), m.to()), m.from()));
        return;
    }
    let mut at = m.from();
    for (i, land) in m.landings().enumerate() {
        f(segment(true, m.jump_direction(i), at));
        at = land;
    }
}

/// The policy indices of `m`'s segments, in order: one for a step, one per
/// jump for a capture chain (whose logit is their sum).
pub fn segments(m: Move) -> Vec<usize> {
    let mut v = Vec::with_capacity(m.jumps().max(1));
    for_each_segment(m, |s| v.push(s));
    v
}

/// The segment index seen in the left-right mirror.
pub fn mirror_segment(index: usize) -> usize {
    let plane = index / GRID;
    let cell = index % GRID;
    let (jump, dir) = (plane / 8, Direction::from_index((plane % 8) as u8));
    let mirrored_cell = (cell / 7) * 7 + (6 - cell % 7);
    (jump * 8 + dir.mirror() as usize) * GRID + mirrored_cell
}

/// Logit of each move from the segment logits: the sum over its segments.
pub fn move_logits(segment_logits: &[f32], moves: &[Move], out: &mut Vec<f32>) {
    out.clear();
    for &m in moves {
        let mut sum = 0.0;
        for_each_segment(m, |s| sum += segment_logits[s]);
        out.push(sum);
    }
}

/// Softmax in place (numerically stable).
pub fn softmax_in_place(v: &mut [f32]) {
    let max = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut total = 0.0;
    for x in v.iter_mut() {
        *x = (*x - max).exp();
        total += *x;
    }
    if total > 0.0 {
        for x in v.iter_mut() {
            *x /= total;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_rules::{Game, Variant};
    use rand::{Rng, SeedableRng};

    /// Positions along seeded random games of every variant, with repetitions.
    fn sample_positions() -> Vec<(Position, usize)> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut out = Vec::new();
        for variant in [
            Variant::two_foxes(),
            Variant::two_foxes().with_corner_links(true),
            Variant::classic(15, true).unwrap(),
        ] {
            for _ in 0..20 {
                let mut game = Game::start_of(variant);
                while game.outcome().is_none() {
                    out.push((*game.position(), game.repetitions()));
                    let moves = game.position().legal_moves();
                    game.play_unchecked(moves[rng.random_range(0..moves.len())]);
                }
            }
        }
        out
    }

    #[test]
    fn planes_round_trip_pieces_and_mirror_commutes() {
        for (p, reps) in sample_positions() {
            let planes = encode(&p, reps);
            for q in Point::all() {
                assert_eq!(planes[q.index()] == 1.0, p.foxes().contains(q));
                assert_eq!(planes[GRID + q.index()] == 1.0, p.geese().contains(q));
            }
            assert_eq!(
                planes[3 * GRID] == 1.0,
                p.side() == halatafl_rules::Side::Geese
            );
            assert_eq!(planes[6 * GRID] == 1.0, reps >= 2);
            assert_eq!(mirror_planes(&planes), encode(&p.mirror(), reps));
            let mut zeroed = vec![0.0; INPUT_SIZE];
            encode_into_zeroed(&p, reps, &mut zeroed);
            assert_eq!(zeroed, planes);
        }
    }

    #[test]
    fn segment_sequences_tell_every_legal_move_apart_and_mirror() {
        let mut seen_chain = false;
        for (p, _) in sample_positions() {
            let moves = p.legal_moves();
            let seqs: Vec<Vec<usize>> = moves.iter().map(|&m| segments(m)).collect();
            for i in 0..seqs.len() {
                assert!(seqs[i].iter().all(|&s| s < POLICY_SIZE));
                for j in 0..i {
                    assert_ne!(
                        seqs[i], seqs[j],
                        "{} and {} share segments",
                        moves[i], moves[j]
                    );
                }
                let mirrored: Vec<usize> = seqs[i].iter().map(|&s| mirror_segment(s)).collect();
                assert_eq!(mirrored, segments(moves[i].mirror()));
                seen_chain |= moves[i].jumps() > 1;
            }
        }
        assert!(seen_chain, "the sample should contain multi-jump chains");
        for s in 0..POLICY_SIZE {
            assert_eq!(mirror_segment(mirror_segment(s)), s);
        }
    }
}
