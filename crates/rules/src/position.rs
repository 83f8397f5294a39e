//! Positions: where the pieces stand, who moves, the quiet-ply counter and an
//! incrementally updated Zobrist hash. Move generation and copy-make play.
//!
//! Copy-make was chosen over make/unmake: a position is 40 bytes, so copying it
//! costs less than restoring captured geese and the hash on the way back, and
//! search code keeps a stack of positions anyway (repetition detection needs it).

use crate::bitboard::Bitboard;
use crate::error::{MoveError, PositionError};
use crate::geometry::{Geometry, NO_POINT};
use crate::moves::{Move, MoveList, MoveText, Side};
use crate::outcome::{EndReason, Outcome};
use crate::point::Point;
use crate::variant::{Variant, PEN};
use crate::zobrist;
use std::fmt;

/// A legal position of a variant: both bitboards, the side to move, the
/// quiet-ply counter and the Zobrist hash kept up to date by every move.
/// Its history is not part of it (see [`crate::Game`]), so repetitions are
/// not its business.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Position {
    foxes: Bitboard,
    geese: Bitboard,
    hash: u64,
    side: Side,
    quiet: u16,
    variant: Variant,
}

/// Goose directions by grid delta: forward, diagonally forward, sideways.
const GOOSE_FORWARD: [usize; 3] = [0, 1, 7]; // North, NorthEast, NorthWest
const GOOSE_SIDEWAYS: [usize; 2] = [2, 6]; // East, West

impl Position {
    /// The start position of `variant`.
    pub fn start(variant: Variant) -> Position {
        let (foxes, geese) = variant.start_pieces();
        Position::from_parts(variant, foxes, geese, Side::Foxes, 0)
    }

    fn from_parts(
        variant: Variant,
        foxes: Bitboard,
        geese: Bitboard,
        side: Side,
        quiet: u16,
    ) -> Position {
        let mut p = Position {
            foxes,
            geese,
            hash: 0,
            side,
            quiet,
            variant,
        };
        p.hash = p.hash_from_scratch();
        p
    }

    /// Builds a position from parts, checking what every position of the
    /// variant must satisfy: the fox count, no more geese than the variant
    /// starts with, and no point holding both.
    pub fn new(
        variant: Variant,
        foxes: Bitboard,
        geese: Bitboard,
        side: Side,
        quiet: u16,
    ) -> Result<Position, PositionError> {
        if (foxes & geese).any() {
            return Err(PositionError::Overlap);
        }
        if foxes.count() != variant.foxes() {
            return Err(PositionError::FoxCount {
                found: foxes.count(),
                expected: variant.foxes(),
                variant: variant.name(),
            });
        }
        if geese.count() > variant.geese as u32 {
            return Err(PositionError::TooManyGeese {
                found: geese.count(),
                most: variant.geese as u32,
                variant: variant.name(),
            });
        }
        Ok(Position::from_parts(variant, foxes, geese, side, quiet))
    }

    /// Parses a position string (`<placement> <side> [<quiet>]`, docs/rules.md).
    pub fn from_fen(text: &str, variant: Variant) -> Result<Position, PositionError> {
        let setup = crate::setup::Setup::parse(text)?;
        Position::new(variant, setup.foxes, setup.geese, setup.side, setup.quiet)
    }

    /// The position string of docs/rules.md, quiet counter included.
    pub fn fen(&self) -> String {
        self.to_string()
    }

    /// Where the foxes stand.
    #[inline]
    pub fn foxes(&self) -> Bitboard {
        self.foxes
    }
    /// Where the geese stand.
    #[inline]
    pub fn geese(&self) -> Bitboard {
        self.geese
    }
    /// The side to move.
    #[inline]
    pub fn side(&self) -> Side {
        self.side
    }
    /// Plies since the last capture or forward goose step.
    #[inline]
    pub fn quiet(&self) -> u16 {
        self.quiet
    }
    /// The game this is a position of, which decides its rules.
    #[inline]
    pub fn variant(&self) -> Variant {
        self.variant
    }
    /// The Zobrist hash of the pieces and the side to move (not the quiet
    /// counter, so positions the repetition rule compares hash alike).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// Points holding a piece.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.foxes | self.geese
    }
    /// Points of the board holding no piece.
    #[inline]
    pub fn empty(&self) -> Bitboard {
        !(self.foxes | self.geese)
    }
    #[inline]
    fn geometry(&self) -> &'static Geometry {
        Geometry::get(self.variant.corner_links)
    }

    /// Whether the same points hold foxes and geese with the same side to move:
    /// what the repetition rule compares.
    #[inline]
    pub fn same_placement(&self, other: &Position) -> bool {
        self.hash == other.hash
            && self.foxes == other.foxes
            && self.geese == other.geese
            && self.side == other.side
    }

    /// The Zobrist hash computed from nothing (the incremental one must equal it).
    pub fn hash_from_scratch(&self) -> u64 {
        let mut h = 0;
        for p in self.foxes {
            h ^= zobrist::FOX[p.index()];
        }
        for p in self.geese {
            h ^= zobrist::GOOSE[p.index()];
        }
        if self.side == Side::Geese {
            h ^= zobrist::GEESE_TO_MOVE;
        }
        h
    }

    /// The left-right mirror image (file `a` <-> `g`); same side and counter.
    pub fn mirror(&self) -> Position {
        Position::from_parts(
            self.variant,
            self.foxes.mirror(),
            self.geese.mirror(),
            self.side,
            self.quiet,
        )
    }

    /// End rules 1 and 2, which depend on the pieces alone.
    #[inline]
    pub fn material_outcome(&self) -> Option<Outcome> {
        if self.geese.count() < self.variant.geese_needed() {
            return Some(Outcome::win(
                Side::Foxes,
                EndReason::few_geese(self.variant),
            ));
        }
        if self.variant.has_pen() && (self.geese & PEN) == PEN {
            return Some(Outcome::win(Side::Geese, EndReason::PenFilled));
        }
        None
    }

    /// End rules 1 to 3 (the rules that need no history), in their order.
    /// Rules 4 and 5 (repetition, fifty moves) are [`crate::Game`]'s.
    pub fn outcome_without_history(&self) -> Option<Outcome> {
        self.material_outcome().or_else(|| {
            (!self.has_legal_move()).then(|| Outcome::win(self.side.other(), EndReason::NoMoves))
        })
    }

    // ---- move generation -------------------------------------------------

    /// Foxes that have at least one jump.
    #[inline]
    fn foxes_that_can_jump(&self) -> Bitboard {
        let g = self.geometry();
        let empty = self.empty();
        let mut out = Bitboard::EMPTY;
        for d in 0..8 {
            let delta = crate::geometry::Direction::from_index(d as u8).delta();
            let landing_ok = (self.foxes & g.can_jump[d]).shift(delta) & self.geese;
            out |= (landing_ok.shift(delta) & empty).shift(-2 * delta);
        }
        out
    }

    /// Every legal move, in a fixed order.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate(&mut list);
        list
    }

    /// Appends every legal move to `list` (which is not cleared).
    pub fn generate(&self, list: &mut MoveList) {
        match self.side {
            Side::Geese => self.generate_geese(list),
            Side::Foxes => self.generate_foxes(list),
        }
    }

    /// The geese's forward and diagonally forward steps, without the
    /// sideways ones (for the geese to move; empty for the foxes). A
    /// search that lets the geese step only forward never repeats a
    /// position (each of their moves raises their summed rows), which a
    /// proof search uses to keep its results path-independent.
    pub fn forward_goose_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        if self.side == Side::Geese {
            self.generate_goose_steps(&mut list, false);
        }
        list
    }

    /// The number of [`Position::forward_goose_moves`], without building them.
    pub fn count_forward_goose_moves(&self) -> u64 {
        if self.side != Side::Geese {
            return 0;
        }
        self.count_goose_steps(false)
    }

    fn count_goose_steps(&self, sideways: bool) -> u64 {
        let g = self.geometry();
        let empty = self.empty();
        let count = |d: usize| {
            let delta = crate::geometry::Direction::from_index(d as u8).delta();
            ((self.geese & g.has_line[d]).shift(delta) & empty).count() as u64
        };
        let mut n: u64 = GOOSE_FORWARD.iter().map(|&d| count(d)).sum();
        if sideways {
            n += GOOSE_SIDEWAYS.iter().map(|&d| count(d)).sum::<u64>();
        }
        n
    }

    fn generate_geese(&self, list: &mut MoveList) {
        self.generate_goose_steps(list, self.variant.sideways);
    }

    fn generate_goose_steps(&self, list: &mut MoveList, sideways: bool) {
        let g = self.geometry();
        let empty = self.empty();
        let mut each = |d: usize| {
            let delta = crate::geometry::Direction::from_index(d as u8).delta();
            for to in (self.geese & g.has_line[d]).shift(delta) & empty {
                // `to` was reached by a line in direction d, so its source is
                // on the board one step back.
                let from = Point::from_index_unchecked((to.index() as i32 - delta) as u8);
                list.push(Move::step(from, to));
            }
        };
        for d in GOOSE_FORWARD {
            each(d);
        }
        if sideways {
            for d in GOOSE_SIDEWAYS {
                each(d);
            }
        }
    }

    fn generate_foxes(&self, list: &mut MoveList) {
        let g = self.geometry();
        let jumpers = self.foxes_that_can_jump();
        for fox in jumpers {
            let blockers = self.foxes.without(fox);
            let mut sink = |m: Move| list.push(m);
            chains(
                g,
                self.variant.compulsory_capture(),
                fox,
                fox,
                self.geese,
                blockers,
                0,
                0,
                Bitboard::EMPTY,
                &mut sink,
            );
        }
        if jumpers.any() && self.variant.compulsory_capture() {
            return;
        }
        let empty = self.empty();
        for fox in self.foxes {
            for to in g.adjacent[fox.index()] & empty {
                list.push(Move::step(fox, to));
            }
        }
    }

    /// Number of legal moves, without building them where a count will do
    /// (perft's last ply).
    pub fn count_legal_moves(&self) -> u64 {
        let g = self.geometry();
        let empty = self.empty();
        match self.side {
            Side::Geese => self.count_goose_steps(self.variant.sideways),
            Side::Foxes => {
                let jumpers = self.foxes_that_can_jump();
                let mut n = 0u64;
                for fox in jumpers {
                    let mut sink = |_: Move| n += 1;
                    chains(
                        g,
                        self.variant.compulsory_capture(),
                        fox,
                        fox,
                        self.geese,
                        self.foxes.without(fox),
                        0,
                        0,
                        Bitboard::EMPTY,
                        &mut sink,
                    );
                }
                if jumpers.any() && self.variant.compulsory_capture() {
                    return n;
                }
                for fox in self.foxes {
                    n += (g.adjacent[fox.index()] & empty).count() as u64;
                }
                n
            }
        }
    }

    /// Whether the side to move has any legal move (end rule 3).
    pub fn has_legal_move(&self) -> bool {
        let g = self.geometry();
        let empty = self.empty();
        match self.side {
            Side::Geese => {
                let any = |d: usize| {
                    let delta = crate::geometry::Direction::from_index(d as u8).delta();
                    ((self.geese & g.has_line[d]).shift(delta) & empty).any()
                };
                GOOSE_FORWARD.into_iter().any(any)
                    || (self.variant.sideways && GOOSE_SIDEWAYS.into_iter().any(any))
            }
            Side::Foxes => {
                self.foxes
                    .any_point(|f| (g.adjacent[f.index()] & empty).any())
                    || self.foxes_that_can_jump().any()
            }
        }
    }

    /// Whether `m` is one of the legal moves here.
    pub fn is_legal(&self, m: Move) -> bool {
        self.legal_moves().contains(&m)
    }

    // ---- playing moves -------------------------------------------------

    /// Plays a move known to be legal here (from [`Position::legal_moves`]).
    #[inline]
    pub fn play_unchecked(&mut self, m: Move) {
        let (from, to) = (m.from(), m.to());
        match self.side {
            Side::Foxes => {
                self.foxes = self.foxes.without(from).with(to);
                self.hash ^= zobrist::FOX[from.index()] ^ zobrist::FOX[to.index()];
                if m.is_capture() {
                    self.geese ^= m.captured();
                    for p in m.captured() {
                        self.hash ^= zobrist::GOOSE[p.index()];
                    }
                    self.quiet = 0;
                } else {
                    self.quiet = self.quiet.saturating_add(1);
                }
            }
            Side::Geese => {
                self.geese = self.geese.without(from).with(to);
                self.hash ^= zobrist::GOOSE[from.index()] ^ zobrist::GOOSE[to.index()];
                if to.row() > from.row() {
                    self.quiet = 0;
                } else {
                    self.quiet = self.quiet.saturating_add(1);
                }
            }
        }
        self.side = self.side.other();
        self.hash ^= zobrist::GEESE_TO_MOVE;
    }

    /// Takes back `m`, just played here by [`Position::play_unchecked`];
    /// `quiet_before` is the counter before it. Make/unmake exists to measure
    /// it against copy-make (`cargo bench -p halatafl-rules`, group
    /// `make-vs-copy`); the engine's own callers copy.
    #[inline]
    pub fn unplay_unchecked(&mut self, m: Move, quiet_before: u16) {
        self.side = self.side.other();
        self.hash ^= zobrist::GEESE_TO_MOVE;
        let (from, to) = (m.from(), m.to());
        match self.side {
            Side::Foxes => {
                self.foxes = self.foxes.without(to).with(from);
                self.hash ^= zobrist::FOX[from.index()] ^ zobrist::FOX[to.index()];
                if m.is_capture() {
                    self.geese ^= m.captured();
                    for p in m.captured() {
                        self.hash ^= zobrist::GOOSE[p.index()];
                    }
                }
            }
            Side::Geese => {
                self.geese = self.geese.without(to).with(from);
                self.hash ^= zobrist::GOOSE[from.index()] ^ zobrist::GOOSE[to.index()];
            }
        }
        self.quiet = quiet_before;
    }

    /// The position after `m`, or an error if `m` is not legal here.
    pub fn play(&self, m: Move) -> Result<Position, MoveError> {
        if !self.is_legal(m) {
            return Err(MoveError::Illegal {
                text: m.to_string(),
                why: self.why_illegal(m.from()),
            });
        }
        let mut next = *self;
        next.play_unchecked(m);
        Ok(next)
    }

    /// Finds the legal move named by `text` (docs/rules.md notation).
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        let parsed = MoveText::parse(text).map_err(|(column, why)| MoveError::Syntax {
            text: crate::error::excerpt(text, Some(column)),
            column,
            why,
        })?;
        self.legal_moves()
            .into_iter()
            .find(|m| parsed.matches(*m))
            .ok_or_else(|| MoveError::Illegal {
                text: crate::error::excerpt(text, None),
                why: self.why_illegal(parsed.from),
            })
    }

    /// A human explanation of why no legal move starts like that.
    fn why_illegal(&self, from: Point) -> String {
        let legal = self.legal_moves();
        let own = match self.side {
            Side::Foxes => self.foxes,
            Side::Geese => self.geese,
        };
        if !own.contains(from) {
            let piece = if self.side == Side::Foxes {
                "fox"
            } else {
                "goose"
            };
            return format!("no {piece} on {from} ({} to move)", self.side);
        }
        let from_here: Vec<String> = legal
            .iter()
            .filter(|m| m.from() == from)
            .map(|m| m.to_string())
            .collect();
        let captures_forced = self.side == Side::Foxes
            && self.variant.compulsory_capture()
            && legal.iter().any(|m| m.is_capture());
        let mut why = if from_here.is_empty() {
            format!("the piece on {from} has no legal move")
        } else {
            format!("legal moves from {from}: {}", from_here.join(" "))
        };
        if captures_forced {
            why.push_str(" (captures are compulsory and a chain must be jumped to its end)");
        }
        why
    }
}

impl Bitboard {
    #[inline]
    fn any_point(self, mut f: impl FnMut(Point) -> bool) -> bool {
        for p in self {
            if f(p) {
                return true;
            }
        }
        false
    }
}

/// Depth-first enumeration of the jump chains of the fox that started on
/// `start` and now stands on `cur`. `geese` already lacks the captured ones;
/// `blockers` are the other foxes. With `maximal`, only chains that cannot go
/// on are moves (Two Foxes); otherwise every prefix is (classic).
#[allow(clippy::too_many_arguments)]
#[inline]
fn chains(
    g: &Geometry,
    maximal: bool,
    start: Point,
    cur: Point,
    geese: Bitboard,
    blockers: Bitboard,
    jumps: u8,
    dirs: u64,
    captured: Bitboard,
    sink: &mut impl FnMut(Move),
) {
    let empty = !(geese | blockers);
    let mut extended = false;
    for d in 0..8 {
        let over = g.jump_over[d][cur.index()];
        if over == NO_POINT {
            continue;
        }
        let over = Point::from_index(over).expect("table holds points");
        let land = Point::from_index(g.jump_land[d][cur.index()]).expect("table holds points");
        if geese.contains(over) && empty.contains(land) {
            extended = true;
            let dirs = dirs | ((d as u64) << (3 * jumps as u64));
            let captured = captured.with(over);
            if !maximal {
                sink(Move::chain(start, land, jumps + 1, dirs, captured));
            }
            chains(
                g,
                maximal,
                start,
                land,
                geese.without(over),
                blockers,
                jumps + 1,
                dirs,
                captured,
                sink,
            );
        }
    }
    if maximal && !extended && jumps > 0 {
        sink(Move::chain(start, cur, jumps, dirs, captured));
    }
}

/// The position string: `F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 0`.
impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::setup::write_placement(f, self.foxes, self.geese)?;
        write!(f, " {} {}", self.side.letter(), self.quiet)
    }
}
