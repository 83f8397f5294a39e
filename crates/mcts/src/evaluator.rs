//! Leaf evaluation, batch in and batch out.
//!
//! # The evaluator contract
//! An [`Evaluator`] receives a [`LeafBatch`]: for each leaf `i`, the state
//! ([`LeafBatch::leaf`], for Two Foxes a [`crate::TwoFoxesLeaf`]: the
//! `Position` and its repetition count) and its legal moves
//! ([`LeafBatch::moves`], in the order of [`crate::SearchGame::legal_moves`],
//! which for halatafl is the order of `Position::legal_moves()`). It writes
//! into [`Evaluations`]:
//! - `priors_mut(i)`: one prior per legal move, **in that same order**, each
//!   `>= 0` (the search renormalises; an all-zero or non-finite row is read as
//!   uniform);
//! - `set_value(i, wdl)`: win/draw/loss probabilities **from the point of view
//!   of the side to move in leaf `i`**;
//! - optionally `set_plies_left(i, plies)`: the predicted plies from leaf `i`
//!   to the end of the game (a network with a moves-left head), which the
//!   search's moves-left utility uses. Evaluators that predict none leave it
//!   unset, and the utility then does nothing.
//! - optionally `set_material_left(i, change)`: the predicted change of the
//!   side to move's [`SearchGame::material`] from leaf `i` to the end of the
//!   game (a network with a geese-taken head: minus the geese still to be
//!   taken when the geese are to move, plus that for the foxes), which the
//!   search's material utility adds to the change it counted on the way to
//!   the leaf. Left unset, the utility counts only the change so far.
//!
//! Leaves are never terminal: the search scores finished games from the rules.
//! Methods take `&self` and evaluators are `Send + Sync`, so one evaluator can
//! serve many searches on many threads at once (a network evaluator forwards
//! each batch to one inference thread that batches again across callers).

use crate::game::{SearchGame, Terminal};
pub use crate::rng::SplitMix64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Win/draw/loss probabilities for one player. They sum to 1.
#[derive(Clone, Copy, PartialEq, Debug, Default)]
pub struct Wdl {
    /// Probability that this player wins.
    pub win: f32,
    /// Probability of a draw.
    pub draw: f32,
    /// Probability that this player loses.
    pub loss: f32,
}

impl Wdl {
    /// A certain win.
    pub const WIN: Wdl = Wdl {
        win: 1.0,
        draw: 0.0,
        loss: 0.0,
    };
    /// A certain draw: also the neutral value of an unevaluated leaf.
    pub const DRAW: Wdl = Wdl {
        win: 0.0,
        draw: 1.0,
        loss: 0.0,
    };
    /// A certain loss.
    pub const LOSS: Wdl = Wdl {
        win: 0.0,
        draw: 0.0,
        loss: 1.0,
    };

    /// Expected score `win - loss`, in [-1, 1].
    #[inline]
    pub fn q(self) -> f32 {
        self.win - self.loss
    }

    /// The same value seen by the opponent.
    #[inline]
    pub fn flip(self) -> Wdl {
        Wdl {
            win: self.loss,
            draw: self.draw,
            loss: self.win,
        }
    }

    /// Rebuilds a WDL triple from its expected score `q` and draw share `d`
    /// (what tree nodes store), clamped into the simplex.
    pub fn from_q_draw(q: f32, d: f32) -> Wdl {
        let d = d.clamp(0.0, 1.0);
        let win = ((1.0 + q - d) * 0.5).clamp(0.0, 1.0);
        let loss = (1.0 - d - win).max(0.0);
        Wdl { win, draw: d, loss }
    }

    /// The certain value of a finished game, for the player `t` is given for.
    pub fn from_terminal(t: Terminal) -> Wdl {
        match t {
            Terminal::Win => Wdl::WIN,
            Terminal::Draw => Wdl::DRAW,
            Terminal::Loss => Wdl::LOSS,
        }
    }
}

/// Positions to evaluate, with their legal moves flattened into one vector.
#[derive(Clone, Debug)]
pub struct LeafBatch<G: SearchGame> {
    leaves: Vec<G::Leaf>,
    moves: Vec<G::Move>,
    /// `offsets[i]..offsets[i + 1]` are leaf `i`'s moves; `offsets[0] == 0`.
    offsets: Vec<u32>,
}

impl<G: SearchGame> Default for LeafBatch<G> {
    fn default() -> Self {
        LeafBatch {
            leaves: Vec::new(),
            moves: Vec::new(),
            offsets: vec![0],
        }
    }
}

impl<G: SearchGame> LeafBatch<G> {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.leaves.len()
    }

    /// Whether the batch has no leaves.
    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    /// Removes every leaf, keeping the allocations for the next batch.
    pub fn clear(&mut self) {
        self.leaves.clear();
        self.moves.clear();
        self.offsets.truncate(1);
    }

    /// Adds a leaf; returns its index.
    pub fn push(&mut self, leaf: G::Leaf, moves: &[G::Move]) -> usize {
        self.leaves.push(leaf);
        self.moves.extend_from_slice(moves);
        self.offsets.push(self.moves.len() as u32);
        self.leaves.len() - 1
    }

    /// Leaf `i`'s state, what the evaluator encodes.
    pub fn leaf(&self, i: usize) -> &G::Leaf {
        &self.leaves[i]
    }

    /// Every leaf's state, in index order.
    pub fn leaves(&self) -> &[G::Leaf] {
        &self.leaves
    }

    /// Leaf `i`'s legal moves, in the order its priors must be returned in.
    pub fn moves(&self, i: usize) -> &[G::Move] {
        &self.moves[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Total number of moves over all leaves (the length of the prior vector).
    pub fn total_moves(&self) -> usize {
        self.moves.len()
    }

    /// Where leaf `i`'s priors start in the flat prior vector.
    pub fn offset(&self, i: usize) -> usize {
        self.offsets[i] as usize
    }
}

/// An evaluator's answers for a batch: flat priors aligned with the batch's
/// moves, and one value per leaf.
#[derive(Clone, Debug, Default)]
pub struct Evaluations {
    priors: Vec<f32>,
    offsets: Vec<u32>,
    values: Vec<Wdl>,
    /// Predicted plies left per leaf; NaN where the evaluator gave none.
    plies_left: Vec<f32>,
    /// Predicted material change to the end per leaf, for its side to move;
    /// NaN where the evaluator gave none.
    material_left: Vec<f32>,
}

impl Evaluations {
    /// Empty output; [`Evaluations::prepare`] sizes it for a batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sizes the output for `batch` (priors zeroed, values draws). The search
    /// calls this before handing the output to an evaluator.
    pub fn prepare<G: SearchGame>(&mut self, batch: &LeafBatch<G>) {
        self.priors.clear();
        self.priors.resize(batch.total_moves(), 0.0);
        self.offsets.clear();
        self.offsets.extend_from_slice(&batch.offsets);
        self.values.clear();
        self.values.resize(batch.len(), Wdl::DRAW);
        self.plies_left.clear();
        self.plies_left.resize(batch.len(), f32::NAN);
        self.material_left.clear();
        self.material_left.resize(batch.len(), f32::NAN);
    }

    /// Number of leaves the output is sized for.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the output is sized for no leaves.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Leaf `i`'s priors, one per legal move in the batch's order.
    pub fn priors(&self, i: usize) -> &[f32] {
        &self.priors[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Leaf `i`'s priors for the evaluator to write, one per legal move in
    /// the batch's order.
    pub fn priors_mut(&mut self, i: usize) -> &mut [f32] {
        &mut self.priors[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// All priors, flat, aligned with the batch's flat moves.
    pub fn all_priors_mut(&mut self) -> &mut [f32] {
        &mut self.priors
    }

    /// Leaf `i`'s value, for its side to move (a draw until set).
    pub fn value(&self, i: usize) -> Wdl {
        self.values[i]
    }

    /// Sets leaf `i`'s value, for its side to move.
    pub fn set_value(&mut self, i: usize, v: Wdl) {
        self.values[i] = v;
    }

    /// Leaf `i`'s predicted plies to the end of the game, if the evaluator
    /// gave one (a finite number >= 0).
    pub fn plies_left(&self, i: usize) -> Option<f32> {
        let p = self.plies_left[i];
        (p.is_finite() && p >= 0.0).then_some(p)
    }

    /// Sets leaf `i`'s predicted plies left (a negative or non-finite
    /// number reads as none).
    pub fn set_plies_left(&mut self, i: usize, plies: f32) {
        self.plies_left[i] = plies;
    }

    /// Leaf `i`'s predicted change of its side to move's material from the
    /// leaf to the end of the game, if the evaluator gave one (finite).
    pub fn material_left(&self, i: usize) -> Option<f32> {
        let m = self.material_left[i];
        m.is_finite().then_some(m)
    }

    /// Sets leaf `i`'s predicted material change to the end, for its side
    /// to move (a non-finite number reads as none).
    pub fn set_material_left(&mut self, i: usize, change: f32) {
        self.material_left[i] = change;
    }
}

/// Leaf evaluation: see the module docs for the contract.
pub trait Evaluator<G: SearchGame>: Send + Sync {
    /// Fills `out` (already sized by [`Evaluations::prepare`]) for every leaf
    /// of `batch`.
    fn evaluate(&self, batch: &LeafBatch<G>, out: &mut Evaluations);
}

impl<G: SearchGame, E: Evaluator<G> + ?Sized> Evaluator<G> for Arc<E> {
    fn evaluate(&self, batch: &LeafBatch<G>, out: &mut Evaluations) {
        (**self).evaluate(batch, out)
    }
}

impl<G: SearchGame, E: Evaluator<G> + ?Sized> Evaluator<G> for Box<E> {
    fn evaluate(&self, batch: &LeafBatch<G>, out: &mut Evaluations) {
        (**self).evaluate(batch, out)
    }
}

impl<G: SearchGame, E: Evaluator<G> + ?Sized> Evaluator<G> for &E {
    fn evaluate(&self, batch: &LeafBatch<G>, out: &mut Evaluations) {
        (**self).evaluate(batch, out)
    }
}

/// Uniform priors and a draw for every leaf: the search alone, guided only by
/// terminal positions it reaches. Measures the tree's own cost.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl<G: SearchGame> Evaluator<G> for UniformEvaluator {
    fn evaluate(&self, batch: &LeafBatch<G>, out: &mut Evaluations) {
        for i in 0..batch.len() {
            fill_uniform(out.priors_mut(i));
            out.set_value(i, Wdl::DRAW);
        }
    }
}

fn fill_uniform(priors: &mut [f32]) {
    let p = 1.0 / priors.len().max(1) as f32;
    priors.iter_mut().for_each(|x| *x = p);
}

/// Classic MCTS: uniform priors and the result of one random playout from
/// the leaf, moves drawn by [`SearchGame::playout_move`] (uniform, except
/// that Two Foxes geese avoid leaving a goose en prise: see its docs). A playout that reaches `max_plies` without an end
/// counts as a draw.
///
/// Each batch draws its random numbers from a SplitMix64 stream seeded with the
/// evaluator's seed and a call counter, so a single-threaded run is
/// reproducible and concurrent callers never share state beyond one atomic.
#[derive(Debug)]
pub struct RolloutEvaluator {
    seed: u64,
    calls: AtomicU64,
    max_plies: u32,
}

impl RolloutEvaluator {
    /// An evaluator whose random streams derive from `seed`, with playouts
    /// cut off (as draws) after `max_plies` plies.
    pub fn new(seed: u64, max_plies: u32) -> RolloutEvaluator {
        RolloutEvaluator {
            seed,
            calls: AtomicU64::new(0),
            max_plies,
        }
    }

    /// Plays one random game from `leaf`; the result for the leaf's side to move.
    pub fn rollout<G: SearchGame>(&self, leaf: &G::Leaf, rng: &mut SplitMix64) -> Wdl {
        let mut game = G::from_leaf(leaf);
        let mut moves = Vec::with_capacity(64);
        let mut flipped = false;
        for _ in 0..=self.max_plies {
            moves.clear();
            game.legal_moves(&mut moves);
            if let Some(t) = game.terminal(!moves.is_empty()) {
                let t = if flipped { t.flip() } else { t };
                return Wdl::from_terminal(t);
            }
            let mv = game.playout_move(&moves, rng);
            game.play(mv);
            flipped = !flipped;
        }
        Wdl::DRAW
    }
}

impl<G: SearchGame> Evaluator<G> for RolloutEvaluator {
    fn evaluate(&self, batch: &LeafBatch<G>, out: &mut Evaluations) {
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let mut rng = SplitMix64::new(self.seed ^ call.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for i in 0..batch.len() {
            fill_uniform(out.priors_mut(i));
            let v = self.rollout::<G>(batch.leaf(i), &mut rng);
            out.set_value(i, v);
        }
    }
}
