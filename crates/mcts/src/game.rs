//! The game interface the search is written against, and its implementation
//! for halatafl's [`Game`].
//!
//! The search keeps one scratch game at the root and walks down the tree by
//! [`SearchGame::play`] and back by [`SearchGame::undo`], so a node stores only
//! the move that leads to it, never a position or a history.

use crate::rng::SplitMix64;
use halatafl_alphabeta::EvalWeights;
use halatafl_rules::geometry::Geometry;
use halatafl_rules::{Game, Move, Position, Side};
use std::fmt;

/// A finished game from the point of view of the side to move.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Terminal {
    /// The side to move has won.
    Win,
    /// The game is drawn.
    Draw,
    /// The side to move has lost.
    Loss,
}

impl Terminal {
    /// The same result seen by the other player.
    #[inline]
    pub fn flip(self) -> Terminal {
        match self {
            Terminal::Win => Terminal::Loss,
            Terminal::Draw => Terminal::Draw,
            Terminal::Loss => Terminal::Win,
        }
    }

    /// +1, 0 or -1.
    #[inline]
    pub fn score(self) -> f32 {
        match self {
            Terminal::Win => 1.0,
            Terminal::Draw => 0.0,
            Terminal::Loss => -1.0,
        }
    }
}

/// A two-player, zero-sum game with strictly alternating turns (no passes),
/// as the search sees it. Both halatafl variants and tic-tac-toe fit.
///
/// The value of a state is always taken from the point of view of the side to
/// move there; the search flips it at every ply, which is why alternation is
/// required.
pub trait SearchGame: Clone + Send + Sync + 'static {
    /// A move. Stored in every tree node, so keep it small and `Copy`.
    type Move: Copy + PartialEq + Send + Sync + fmt::Debug + 'static;
    /// What a leaf evaluator receives for each position to evaluate: enough to
    /// compute its inputs, and to rebuild a game for rollouts.
    type Leaf: Clone + Send + Sync + 'static;

    /// Appends the legal moves of the current state to `out` (not cleared), in
    /// a fixed order: the order evaluators return their priors in.
    fn legal_moves(&self, out: &mut Vec<Self::Move>);

    /// The result if the game is over now, for the side to move; the caller
    /// says whether that side has a legal move (it has just generated them).
    fn terminal(&self, has_legal_move: bool) -> Option<Terminal>;

    /// Plays a move returned by `legal_moves` for the current state.
    fn play(&mut self, mv: Self::Move);

    /// Takes back the last move played.
    fn undo(&mut self);

    /// Moves played since the start of the game (the temperature schedule
    /// counts these).
    fn ply(&self) -> usize;

    /// The current state as an evaluator input.
    fn leaf(&self) -> Self::Leaf;

    /// A game that starts from a leaf (rollouts play on from it). History
    /// before the leaf is lost, except what the leaf carries.
    fn from_leaf(leaf: &Self::Leaf) -> Self;

    /// A count the side to move wants high and the other side wants low (so
    /// it changes sign with the side to move), for the search's material
    /// utility ([`crate::MctsConfig::material_utility`]). 0, the default,
    /// gives the utility nothing to act on.
    fn material(&self) -> i32 {
        0
    }

    /// A hand-made evaluation of the current state for the side to move,
    /// in the units of [`SearchGame::material`], that the material utility
    /// counts instead of the material where
    /// [`crate::MctsConfig::material_eval`] asks it to. `None`, the default:
    /// the game has none, and the utility counts the material.
    fn evaluation(&self) -> Option<f32> {
        None
    }

    /// A count of the foxes' room, signed as [`SearchGame::material`] is
    /// (the side to move wants it high), that the material utility adds to
    /// its count at [`crate::MctsConfig::room_weight`] per unit. In Two
    /// Foxes the empty points the foxes could reach, counted for the foxes
    /// and minus that for the geese. 0, the default: nothing to add.
    fn room(&self) -> i32 {
        0
    }

    /// What the side to move at `leaf` gains in [`SearchGame::material`]
    /// over the next `plies` plies of a search of captures only (see the
    /// implementation for Two Foxes), for the material utility's
    /// prediction at a leaf the evaluator predicts nothing for. It reads
    /// the leaf the evaluator got, so it costs nothing where the evaluator
    /// predicts. 0, the default: no prediction.
    fn capture_outlook(_leaf: &Self::Leaf, _plies: u32) -> i32 {
        0
    }

    /// Whether the side to move is the geese, whose draws
    /// [`crate::MctsConfig::geese_draw`] values. `None`, the default, for
    /// games without geese: their draws stay worth 0 to both sides.
    fn geese_to_move(&self) -> Option<bool> {
        None
    }

    /// The playout policy of [`crate::RolloutEvaluator`]: picks one of the
    /// (non-empty) legal `moves`. Uniformly random unless a game knows better.
    fn playout_move(&self, moves: &[Self::Move], rng: &mut SplitMix64) -> Self::Move {
        moves[rng.below(moves.len() as u64) as usize]
    }
}

/// The geese the foxes take in the next `plies` plies of `p` when they take
/// the most and the geese let them take the least ([`Game::capture_outlook`]);
/// 0 once the game is over by material or moves, or the plies are spent.
fn geese_taken_by_force(p: &Position, plies: u32) -> i32 {
    if plies == 0 || p.material_outcome().is_some() {
        return 0;
    }
    let moves = p.legal_moves();
    let after = |mv: Move| {
        let mut next = *p;
        next.play_unchecked(mv);
        next
    };
    match p.side() {
        Side::Foxes => moves
            .iter()
            .filter(|mv| mv.is_capture())
            .map(|&mv| mv.jumps() as i32 + geese_taken_by_force(&after(mv), plies - 1))
            .max()
            .unwrap_or(0),
        Side::Geese => moves
            .iter()
            .map(|&mv| geese_taken_by_force(&after(mv), plies - 1))
            .min()
            .unwrap_or(0),
    }
}

/// Random tries a goose gets to find a move that leaves no goose en prise.
const SAFE_GOOSE_TRIES: u32 = 16;

/// What an evaluator gets for a Two Foxes (or classic) position: the position
/// (pieces, side to move, quiet-ply counter) and how many times it has stood
/// on the board in its game, counting now ([`Game::repetitions`]): 1 or 2 for
/// a position the search evaluates (3 is a draw and never evaluated).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TwoFoxesLeaf {
    /// The position to evaluate.
    pub position: Position,
    /// Times this position has stood on the board in its game, counting now
    /// (1 or 2).
    pub repetitions: u8,
}

/// The halatafl game: legal moves in the order of [`Position::legal_moves`],
/// end rules 1 to 5 through [`Game::outcome_given`], so repetition and
/// fifty-move draws are seen inside the tree (the scratch game carries the
/// real history of the game being played up to the root).
impl SearchGame for Game {
    type Move = Move;
    type Leaf = TwoFoxesLeaf;

    #[inline]
    fn legal_moves(&self, out: &mut Vec<Move>) {
        out.extend_from_slice(&self.position().legal_moves());
    }

    #[inline]
    fn terminal(&self, has_legal_move: bool) -> Option<Terminal> {
        let side = self.position().side();
        self.outcome_given(has_legal_move)
            .map(|outcome| match outcome.winner {
                None => Terminal::Draw,
                Some(w) if w == side => Terminal::Win,
                Some(_) => Terminal::Loss,
            })
    }

    #[inline]
    fn play(&mut self, mv: Move) {
        self.play_unchecked(mv);
    }

    #[inline]
    fn undo(&mut self) {
        Game::undo(self);
    }

    #[inline]
    fn ply(&self) -> usize {
        Game::ply(self)
    }

    #[inline]
    fn leaf(&self) -> TwoFoxesLeaf {
        TwoFoxesLeaf {
            position: *self.position(),
            repetitions: self.repetitions().min(u8::MAX as usize) as u8,
        }
    }

    fn from_leaf(leaf: &TwoFoxesLeaf) -> Game {
        Game::new(leaf.position)
    }

    /// The geese on the board, for the geese; minus that for the foxes. What
    /// the geese margin counts (`halatafl summary`): every goose taken is
    /// one to the foxes.
    #[inline]
    fn material(&self) -> i32 {
        let geese = self.position().geese().count() as i32;
        match self.position().side() {
            Side::Geese => geese,
            Side::Foxes => -geese,
        }
    }

    /// Alpha-beta's evaluation ([`halatafl_alphabeta::evaluate`], with the
    /// variant's weights) in geese: the geese on the board as
    /// [`SearchGame::material`] counts them, plus what the baseline's
    /// hand-made terms add (geese on the pen, rows advanced, geese left to
    /// a jump, the foxes' room and mobility). Without the bonus for the side
    /// to move, which would tell odd plies from even ones by a constant.
    fn evaluation(&self) -> Option<f32> {
        let weights = EvalWeights::for_variant(self.position().variant());
        let score = halatafl_alphabeta::evaluate(self.position(), &weights) - weights.tempo;
        Some(score as f32 / weights.goose as f32)
    }

    /// The empty points the foxes could reach by steps and jumps if the
    /// geese stood still (the solver's shut-in region, uncapped): 0 when
    /// they are shut in, which is how alpha-beta's geese win cheaply. For
    /// the foxes; minus that for the geese.
    fn room(&self) -> i32 {
        let p = self.position();
        let g = Geometry::get(p.variant().corner_links);
        let room = g.reachable(p.foxes(), p.empty(), p.geese()).count() as i32;
        match p.side() {
            Side::Foxes => room,
            Side::Geese => -room,
        }
    }

    #[inline]
    fn geese_to_move(&self) -> Option<bool> {
        Some(self.position().side() == Side::Geese)
    }

    /// The geese the foxes take, by force, in the next `plies` plies, from
    /// the foxes' side (minus that for the geese). Jumps are compulsory,
    /// so where the foxes move they take the best of their jumps (or
    /// nothing where they have none); where the geese move, they take
    /// the move after which the foxes take least. A short, exact minimax
    /// on material that ignores the result: at a leaf of a network's
    /// search it sees a goose left to a jump, or a fork of two, a ply or
    /// two before the tree does. The geese's turns cost a move generation
    /// per goose move, the foxes' only where they can jump.
    fn capture_outlook(leaf: &TwoFoxesLeaf, plies: u32) -> i32 {
        let p = &leaf.position;
        let taken = geese_taken_by_force(p, plies);
        match p.side() {
            Side::Foxes => taken,
            Side::Geese => -taken,
        }
    }

    /// Uniformly random, except that the geese draw again (up to 16 tries)
    /// while the drawn move lets a fox jump. Purely random playouts are no
    /// use here: random geese lose every game to random foxes (400 of 400
    /// in `halatafl match random random`), so every geese move would look
    /// equally lost. With this rule playouts end about 53% geese, 34% foxes,
    /// 13% drawn from the start, and the value says something about the
    /// position.
    fn playout_move(&self, moves: &[Move], rng: &mut SplitMix64) -> Move {
        let mut mv = moves[rng.below(moves.len() as u64) as usize];
        let here = self.position();
        if here.side() == Side::Geese {
            for _ in 0..SAFE_GOOSE_TRIES {
                let mut next = *here;
                next.play_unchecked(mv);
                if !next.legal_moves().iter().any(|m| m.is_capture()) {
                    break;
                }
                mv = moves[rng.below(moves.len() as u64) as usize];
            }
        }
        mv
    }
}
