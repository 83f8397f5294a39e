//! The hand-made evaluation, in centi-geese from the side to move's point of view.
//!
//! The score is built from the geese's side and negated when the foxes move:
//!
//! ```text
//! E_geese = goose * G                      material: geese on the board
//!         + pen_point * P                  (Two Foxes only) geese on pen points
//!         + advance * R                    R = sum of goose rows (row 1 = 0)
//!         - loose_goose * L                L = geese open to a jump after one fox step
//!         - threatened_goose * T           T = geese a fox can jump right now
//!         - threat_on_move * T             (only when the foxes are to move)
//!         - fox_mobility * M               M = empty points next to the foxes
//!         + trapped_fox * F                F = foxes with no step and no jump
//!         - fox_territory * A              A = empty points the foxes can reach by steps
//!         - passed_goose * B               B = geese on a row above every fox
//! E = E_geese (geese to move) or -E_geese (foxes to move), plus tempo.
//! ```
//!
//! `L` is the formation term: a goose is loose when, along some line, the point
//! on one side of it is empty or holds a fox (where a fox can stand) and the
//! point on the other side is empty (where it would land). Geese in a closed
//! phalanx, backed by other geese or by the board's edge, are not loose. `R`
//! rewards advance: the geese win by pushing up into the pen (Two Foxes) or by
//! cornering the fox (classic), and a forward step is irreversible. `M` and
//! `F` measure how close the foxes are to being shut in (rule 3); `A` (a flood
//! fill through empty points) is the room they have left, and grows sharply
//! when a fox slips behind the geese, who can never step back: it is what
//! keeps the geese advancing as a wall instead of running past the foxes.
//! Every term is a few bitboard operations. The weights live in
//! [`EvalWeights`]; the classic game uses [`EvalWeights::classic`], where
//! advancing is worth less (the geese lose when they run out of moves).

use halatafl_rules::geometry::{Direction, Geometry};
use halatafl_rules::{Bitboard, Position, Side, Variant, PEN};

/// Weights of the evaluation terms, in centi-geese (a goose is worth 100).
#[derive(Clone, Debug, PartialEq)]
pub struct EvalWeights {
    /// Per goose on the board (material); fixes the scale of the others.
    pub goose: i32,
    /// Per goose on a pen point: the Two Foxes geese win by filling the pen.
    pub pen_point: i32,
    /// Per row of advance, summed over geese (`R`): a forward step cannot
    /// be taken back.
    pub advance: i32,
    /// Penalty per goose a fox could jump after one step (`L`), the cost of
    /// an open formation.
    pub loose_goose: i32,
    /// Penalty per goose a fox can jump now (`T`), whoever moves.
    pub threatened_goose: i32,
    /// Further penalty per jumpable goose when the foxes move: it falls.
    pub threat_on_move: i32,
    /// Penalty per empty point next to a fox (`M`): room to move.
    pub fox_mobility: i32,
    /// Bonus per fox with no step and no jump (`F`): close to shut in.
    pub trapped_fox: i32,
    /// Penalty per empty point the foxes reach by steps (`A`), which keeps
    /// the geese advancing as a wall rather than running past the foxes.
    pub fox_territory: i32,
    /// Penalty per goose above every fox (`B`): it can never come back to
    /// help trap one. Matters in the classic game, where trapping is the
    /// geese's only win.
    pub passed_goose: i32,
    /// Bonus for the side to move, added after the score is turned to the
    /// mover's point of view.
    pub tempo: i32,
}

impl Default for EvalWeights {
    fn default() -> EvalWeights {
        EvalWeights {
            // One goose on the board: the unit of the scale.
            goose: 100,
            // Each goose standing on one of the nine pen points (Two Foxes).
            pen_point: 30,
            // Each row a goose stands above row 1, summed over geese.
            advance: 4,
            // Each goose a fox could jump after one step (open formation).
            loose_goose: 10,
            // Each goose a fox can jump right now, whoever moves.
            threatened_goose: 25,
            // Extra per jumpable goose when the foxes are to move (it falls).
            threat_on_move: 50,
            // Each empty point next to a fox (fox mobility).
            fox_mobility: 5,
            // Each fox with no legal step or jump (nearly shut in).
            trapped_fox: 40,
            // Each empty point the foxes can reach by steps (their room).
            fox_territory: 3,
            // Each goose above the highest fox: it can never come back to
            // help trap a fox (0 in Two Foxes, where the pen is up there).
            passed_goose: 0,
            // Bonus for the side to move.
            tempo: 5,
        }
    }
}

impl EvalWeights {
    /// The weights a `variant` is evaluated with by default:
    /// [`EvalWeights::classic`] for the classic game, the defaults for Two
    /// Foxes (what [`crate::SearchConfig`]'s defaults hold).
    pub fn for_variant(variant: Variant) -> EvalWeights {
        if variant.is_classic() {
            EvalWeights::classic()
        } else {
            EvalWeights::default()
        }
    }

    /// The classic game's weights: the defaults with advance worth less and
    /// the fox's room worth more (trapping the fox is the geese's only win).
    pub fn classic() -> EvalWeights {
        EvalWeights {
            advance: 1,
            fox_territory: 6,
            passed_goose: 40,
            ..EvalWeights::default()
        }
    }
}

/// Points whose neighbour in direction `d` lies in `set` (along a line).
#[inline]
fn neighbour_in(g: &Geometry, set: Bitboard, d: usize) -> Bitboard {
    let delta = Direction::from_index(d as u8).delta();
    set.shift(-delta) & g.has_line[d]
}

/// Geese a fox can jump now (counted once each).
#[inline]
pub fn threatened_geese(g: &Geometry, p: &Position) -> Bitboard {
    let empty = p.empty();
    let geese = p.geese();
    let mut out = Bitboard::EMPTY;
    for d in 0..8 {
        let delta = Direction::from_index(d as u8).delta();
        let over = (p.foxes() & g.can_jump[d]).shift(delta) & geese;
        out |= (over.shift(delta) & empty).shift(-delta);
    }
    out
}

/// The evaluation of `p` for the side to move. `p` is not a finished game.
pub fn evaluate(p: &Position, w: &EvalWeights) -> i32 {
    let variant = p.variant();
    let g = Geometry::get(variant.corner_links);
    let geese = p.geese();
    let foxes = p.foxes();
    let empty = p.empty();
    let fox_ground = empty | foxes;

    let mut score = w.goose * geese.count() as i32;
    if variant.has_pen() {
        score += w.pen_point * (geese & PEN).count() as i32;
    }
    let mut rows = 0;
    let top_fox = foxes.map(|f| f.row()).max().unwrap_or(0);
    let mut passed = 0;
    for q in geese {
        rows += q.row();
        passed += (q.row() > top_fox) as i32;
    }
    score += w.advance * rows;
    score -= w.passed_goose * passed;

    let mut loose = Bitboard::EMPTY;
    for d in 0..4 {
        loose |= neighbour_in(g, empty, d) & neighbour_in(g, fox_ground, d + 4);
        loose |= neighbour_in(g, empty, d + 4) & neighbour_in(g, fox_ground, d);
    }
    score -= w.loose_goose * (loose & geese).count() as i32;

    let threatened = threatened_geese(g, p).count() as i32;
    score -= w.threatened_goose * threatened;
    if p.side() == Side::Foxes {
        score -= w.threat_on_move * threatened;
    }

    let mut mobility = 0;
    let mut trapped = 0;
    for f in foxes {
        let steps = (g.adjacent[f.index()] & empty).count() as i32;
        mobility += steps;
        if steps == 0 {
            let mut can_jump = false;
            for d in 0..8 {
                let over = g.jump_over[d][f.index()];
                let land = g.jump_land[d][f.index()];
                if over < 49 && geese.0 & (1 << over) != 0 && empty.0 & (1 << land) != 0 {
                    can_jump = true;
                }
            }
            if !can_jump {
                trapped += 1;
            }
        }
    }
    score -= w.fox_mobility * mobility;
    score -= w.fox_territory * g.reachable(foxes, empty, Bitboard::EMPTY).count() as i32;
    score += w.trapped_fox * trapped;

    let for_mover = match p.side() {
        Side::Geese => score,
        Side::Foxes => -score,
    };
    for_mover + w.tempo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen, Variant::two_foxes()).unwrap()
    }

    #[test]
    fn threats_and_symmetry() {
        // The fox on d5 can jump c5 (landing on b5); d3 is out of reach.
        let p = pos(".../F../..GF.../......./...G.../.../... f 0");
        let g = Geometry::get(false);
        let c5 = halatafl_rules::Point::parse("c5").unwrap();
        assert_eq!(threatened_geese(g, &p), Bitboard::from_point(c5));
        // Fox on d4, goose on d3, d2 empty: one goose can be jumped.
        let p = pos("F../.../......./...F.../...G.../.../... f 0");
        assert_eq!(threatened_geese(g, &p).count(), 1);
        let w = EvalWeights::default();
        // Mirror images score the same.
        let start = Position::start(Variant::two_foxes());
        assert_eq!(evaluate(&start, &w), evaluate(&start.mirror(), &w));
        // More geese is better for the geese.
        let fewer = pos("F.F/.../......./GGGGGG./GGGGGGG/GGG/GGG g 0");
        let more = pos("F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG g 0");
        assert!(evaluate(&more, &w) > evaluate(&fewer, &w));
    }
}
