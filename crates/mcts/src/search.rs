//! One search tree over one game, driven in rounds of gather / evaluate / apply
//! so that leaves from many trees can share an evaluator call.
//!
//! # Algorithm
//! AlphaZero PUCT (Silver et al. 2018): at a node with N visits (in-flight ones
//! included) pick the child maximising
//!
//! ```text
//! Q(a) + c(N) * P(a) * sqrt(N) / (1 + N(a)),   c(N) = c_init + ln((1 + N + c_base) / c_base)
//! ```
//!
//! with Q in [-1, 1] the mean `win - loss` for the side to move, first-play
//! urgency for unvisited children (`Q = Q(parent) - fpu * sqrt(visited prior)`),
//! and at the root P mixed with Dirichlet(alpha = scale / moves) noise. Values
//! are win/draw/loss triples; a node keeps the sums of `win - loss` and of
//! `draw`, so both Q and the draw share come back out.
//!
//! Virtual loss: a leaf sent for evaluation counts as `virtual_loss` lost
//! visits on every node of its path until its value arrives, so the next
//! selections of the same batch spread out. A selection that reaches a leaf
//! already waiting is a collision; gathering stops after `batch_size` of them.
//!
//! MCTS-solver (Winands, Björnsson, Saito 2008): end positions are scored by
//! the rules (repetition and fifty-move draws included, since the scratch game
//! carries the real history). A node with a child proven won for the side to
//! move is proven won; one whose children are all proven is proven with the
//! best of them. Selection skips proven losses, reaching a proven node backs
//! up its exact value without descending, and the search stops once the root
//! is proven. Move choice takes a proven win (an immediate one first) and
//! avoids proven losses.
//!
//! With `cheapest_win` a root proven won does not stop the search while
//! some root move is unproven: selection at the root then skips the proven
//! moves, so the rest of the budget goes to proving the others, and the
//! move played is the proven win whose proof keeps the most material for
//! the winner, by a minimax of [`SearchGame::material`] over the proof tree
//! (the winner's best proven move where it moves, the loser's costliest
//! reply where the loser moves, the count at the proof's ends). Every
//! proof is a win, so this changes which win, never whether: it is the
//! ordering MCTS-solver leaves open, filled with what a score-bounded
//! search (Cazenave and Saffidine 2010, "Score Bounded Monte-Carlo Tree
//! Search") would compare among proven results.
//!
//! # Moves-left utility
//! With `moves_left_utility` u > 0 and an evaluator that predicts plies left
//! (a network with a moves-left head), every value backed up from a leaf at
//! depth d below the root is adjusted, for the player it is backed up for:
//!
//! ```text
//! q' = clamp(q - u * sign(q) * w(|q|) * tanh((d + L_leaf - L_root) / S), -1, 1)
//! w(a) = clamp((a - T) / (1 - T), 0, 1)
//! ```
//!
//! with L the predicted plies left of the leaf and of the root (each node's
//! prediction is kept while the utility is on), S = [`MOVES_LEFT_PLIES_SCALE`]
//! and T = [`MOVES_LEFT_Q_THRESHOLD`]. So d + L_leaf - L_root is how much
//! longer than the root expects the game lasts along this line; a side that
//! is winning (q > 0) gains up to u for lines that end sooner, a side that is
//! losing gains up to u for lines that last longer, and a roughly balanced
//! position (|q| <= T) is left alone, since hurrying or delaying a draw is
//! no aim. The adjustment is odd in q, so both players see it alike and the
//! backup's sign flip per ply still holds. Finished games (plies left 0)
//! are adjusted too, so a quick win beats a slow one and a late loss an
//! early one; the solver's proofs and `SearchResult::q` of proven moves stay
//! exact. Node values (and so the root value that self-play's resignation
//! and search-value targets read) include the adjustment, at most u away.
//! This is KataGo's way of folding auxiliary predictions into the backed-up
//! utility (Wu 2019, "Accelerating Self-Play Learning in Go", score utility)
//! applied to Leela Chess Zero's moves-left head (MLH, 2020), whose own form
//! adds a similar bounded, |Q|-gated term at selection time instead. With
//! u = 0, or an evaluator that predicts nothing, the search is unchanged.
//!
//! # Material utility
//! With `material_utility` m > 0, every value backed up from a leaf is mixed,
//! for the player it is backed up for, with what that player's material
//! ([`SearchGame::material`]) gained between the root and the leaf:
//!
//! ```text
//! q' = (1 - m) * q + m * tanh(gain / M)
//! ```
//!
//! with M = [`MATERIAL_SCALE`]. In Two Foxes the material is the geese on
//! the board (for the geese; minus that for the foxes), so a line where the
//! foxes take two geese is worth `m * tanh(2 / M)` more to the foxes and that
//! much less to the geese, at any q: a won game keeps a reason to be won
//! with fewer geese lost, which the result alone does not give (the geese
//! margin of `halatafl summary` counts exactly this). The mix is odd in
//! (q, gain), so the backup's sign flip per ply still holds, and it stays in
//! [-1, 1] without clamping. This is KataGo's score utility (Wu 2019) with
//! the exact material count standing in for a predicted score; it is
//! applied after the moves-left utility, to the leaf's value and to finished
//! games alike. Proofs and `SearchResult::q` of proven moves stay exact.
//! With m = 0, or a game whose material is always 0, the search is
//! unchanged.
//!
//! Where the evaluator predicts the material still to change before the
//! game ends ([`Evaluations::material_left`]: a network with a geese-taken
//! head), a node's gain is the change so far plus its prediction, less the
//! change the root's prediction expected: the utility is of the material
//! at the end of the game measured from what the root expects, as
//! KataGo's dynamic score utility is of the predicted final score measured
//! from the root's. Lines are then told apart by the captures they set up
//! beyond the search's horizon, not only by those inside it, and a game
//! expected to cost many geese does not push every line into the flat end
//! of the tanh. A finished game has nothing left to predict.
//!
//! With `material_eval` the count is the game's hand-made evaluation
//! ([`SearchGame::evaluation`]) instead: in Two Foxes alpha-beta's, in
//! geese, which adds to the geese on the board what the baseline values
//! beside them (geese on the pen, rows advanced, geese left to a jump, the
//! foxes' room). The gain between the root and a leaf is then the change
//! of that evaluation, for the same player, in the same formula: a line
//! that advances the geese without losing one is worth a little more to
//! the geese than one that shuffles, where the network's value cannot
//! tell them apart. This mixes the baseline's knowledge into the search
//! as AlphaGo mixed its rollouts' result into the value network's (Silver
//! et al. 2016, λ = 0.5 there), here through the utility's m.
//!
//! With `room_weight` w > 0 the count adds w times [`SearchGame::room`]:
//! in Two Foxes the empty points the foxes could reach if the geese stood
//! still, for the foxes (minus that for the geese). A line that walls the
//! foxes in is then worth more to the geese by w a point, as a goose kept
//! is worth 1: what alpha-beta's evaluation counts as the foxes' room
//! (there at 0.03 geese a point beside a bonus for the pen), and what the
//! network's own value does not see: its geese win by filling the pen,
//! and in the games measured never by shutting alpha-beta's foxes in,
//! with this count or without it.
//!
//! Where the evaluator predicts nothing, `capture_plies` K > 0 gives each
//! new leaf a prediction of its own: [`SearchGame::capture_outlook`], a
//! K-ply minimax on material alone (in Two Foxes the foxes' compulsory
//! jumps against the geese's least-losing replies). A goose left to a jump
//! just below a leaf then counts as lost at the leaf, not a ply or two
//! later when the tree reaches the jump: a minimax at the leaves in the
//! manner of Baier and Winands' MCTS-minimax hybrids (2015, "MCTS-Minimax
//! Hybrids", IEEE TCIAIG), which help MCTS in games with shallow traps.
//!
//! # Draw value
//! With `geese_draw` v != 0 a draw is not worth 0: every value backed up is
//!
//! ```text
//! q' = q + v_p * d
//! ```
//!
//! for the player p it is backed up for, with `d` the value's draw share
//! (the evaluator's predicted draw probability; 1 for a drawn game) and
//! `v_p` = v for the geese, -v for the foxes. So the game stays zero-sum
//! (a draw is worth v to one side and -v to the other) and q' stays in
//! [-1, 1]; it is applied before the moves-left and material utilities.
//! This is contempt in the manner of chess engines, tied to a side rather
//! than to the searching player: in Two Foxes the geese are the side that
//! wins when play is good, and a threefold repetition is how the foxes save
//! a lost game, so v < 0 makes the geese avoid repetitions and the foxes
//! seek them. Proofs and `SearchResult::q` of proven moves stay exact.

use crate::config::{MctsConfig, RootMode};
use crate::evaluator::{Evaluations, Evaluator, LeafBatch, Wdl};
use crate::game::{SearchGame, Terminal};
use crate::gumbel::{self, ChildStats, GumbelRoot};
use crate::tree::{Kind, Proven, Tree, ROOT};
use halatafl_agent::StopSignal;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma};
use std::time::Instant;

#[derive(Clone, Copy, Debug)]
struct PendingLeaf {
    node: u32,
    batch_index: u32,
    path_start: u32,
    path_len: u32,
    /// False for the root's own evaluation (no virtual loss, not a simulation).
    counted: bool,
    /// What the mover into the leaf gained in material since the root (0
    /// with the material utility off).
    material_gain: f32,
}

/// Plies scale S of the moves-left utility: a line 10 plies longer or
/// shorter than the root expects gets tanh(1) = 76% of the utility.
pub const MOVES_LEFT_PLIES_SCALE: f32 = 10.0;

/// |q| at or below which the moves-left utility does nothing; it grows
/// linearly to its full size at |q| = 1.
pub const MOVES_LEFT_Q_THRESHOLD: f32 = 0.25;

/// Material scale M of the material utility: a gain of 4 (four geese in Two
/// Foxes) gets tanh(1) = 76% of the utility, one goose 24%.
pub const MATERIAL_SCALE: f32 = 4.0;

/// The material utility's mix of `q` with a material `gain` (for the same
/// player; a prediction may make it fractional): see the module docs.
pub fn material_adjusted(q: f32, gain: f32, utility: f32) -> f32 {
    (1.0 - utility) * q + utility * (gain / MATERIAL_SCALE).tanh()
}

/// What the material utility counts in `game` for its side to move: the
/// game's evaluation where [`MctsConfig::material_eval`] asks for it and
/// the game has one, its material otherwise (0 with the utility off, where
/// nothing reads it).
fn material_count<G: SearchGame>(game: &G, config: &MctsConfig) -> f32 {
    if config.material_utility <= 0.0 {
        return 0.0;
    }
    let evaluation = config.material_eval.then(|| game.evaluation()).flatten();
    let count = evaluation.unwrap_or_else(|| game.material() as f32);
    if config.room_weight > 0.0 {
        count + config.room_weight * game.room() as f32
    } else {
        count
    }
}

/// The moves-left utility's adjustment of `q` (for either player) along a
/// line whose game is predicted to last `longer_by` plies more than the
/// root predicts: see the module docs.
pub fn moves_left_adjusted(q: f32, longer_by: f32, utility: f32) -> f32 {
    let weight =
        ((q.abs() - MOVES_LEFT_Q_THRESHOLD) / (1.0 - MOVES_LEFT_Q_THRESHOLD)).clamp(0.0, 1.0);
    let shift = utility * q.signum() * weight * (longer_by / MOVES_LEFT_PLIES_SCALE).tanh();
    (q - shift).clamp(-1.0, 1.0)
}

/// What a search found at its root.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult<M> {
    /// The root's legal moves, in the order of `SearchGame::legal_moves`.
    pub moves: Vec<M>,
    /// Visits of each move.
    pub visits: Vec<u32>,
    /// The improved policy, the self-play training target: the visit
    /// distribution (PUCT) or softmax(logits + sigma(completed Q)) (Gumbel).
    /// Solved moves override it: proven wins share all of it, proven losses
    /// get none (unless every move is lost).
    pub policy: Vec<f32>,
    /// Mean `win - loss` of each move for the side to move (0 if unvisited;
    /// exact if proven).
    pub q: Vec<f32>,
    /// Each move's proven result for the side to move at the root, if solved.
    pub proven_moves: Vec<Option<Terminal>>,
    /// The root's value for the side to move.
    pub value: Wdl,
    /// The root's proven result for the side to move, if solved.
    pub proven: Option<Terminal>,
    /// Simulations run for this move.
    pub simulations: u32,
    /// Nodes in the tree.
    pub nodes: usize,
}

/// A search tree and the game at its root. See the module docs.
pub struct Search<G: SearchGame> {
    config: MctsConfig,
    game: G,
    tree: Tree<G::Move>,
    rng: ChaCha8Rng,
    /// Root priors with noise (PUCT), one per root child; valid once `root_ready`.
    root_priors: Vec<f32>,
    root_ready: bool,
    budget: u32,
    done: u32,
    in_flight: u32,
    pending: Vec<PendingLeaf>,
    paths: Vec<u32>,
    path: Vec<u32>,
    moves: Vec<G::Move>,
    gumbel: GumbelRoot,
    stats: Vec<ChildStats>,
    sigma: Vec<f32>,
    scratch: Vec<f32>,
    own_batch: LeafBatch<G>,
    own_evals: Evaluations,
    /// The root's material for its side to move, kept as the root changes
    /// (read only with the material utility on).
    root_material: f32,
}

impl<G: SearchGame> Search<G> {
    /// A search rooted at the current state of `game`; `seed` drives noise and
    /// move sampling.
    pub fn new(game: G, config: MctsConfig, seed: u64) -> Search<G> {
        let mut moves = Vec::new();
        game.legal_moves(&mut moves);
        let dummy = moves
            .first()
            .copied()
            .unwrap_or_else(|| panic_no_moves::<G>());
        let budget = config.sims;
        let root_material = material_count(&game, &config);
        let mut tree = Tree::new(dummy);
        tree.track_predictions(config.moves_left_utility > 0.0 || config.material_utility > 0.0);
        Search {
            config,
            game,
            tree,
            rng: ChaCha8Rng::seed_from_u64(seed),
            root_priors: Vec::new(),
            root_ready: false,
            budget,
            done: 0,
            in_flight: 0,
            pending: Vec::new(),
            paths: Vec::new(),
            path: Vec::new(),
            moves,
            gumbel: GumbelRoot::default(),
            stats: Vec::new(),
            sigma: Vec::new(),
            scratch: Vec::new(),
            own_batch: LeafBatch::new(),
            own_evals: Evaluations::new(),
            root_material,
        }
    }

    /// The settings this search runs with.
    pub fn config(&self) -> &MctsConfig {
        &self.config
    }

    /// The game at the root.
    pub fn game(&self) -> &G {
        &self.game
    }

    /// Nodes in the tree.
    pub fn nodes(&self) -> usize {
        self.tree.nodes.len()
    }

    /// Reseeds noise and sampling (a new game).
    pub fn reseed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    /// Root noise on or off from the next [`Search::start_move`]: self-play
    /// with playout cap randomization (Wu 2019, KataGo) explores only in the
    /// full searches whose positions become training samples.
    pub fn set_noise(&mut self, on: bool) {
        self.config.noise = on;
    }

    /// Starts the search for a move with `sims` simulations below the root
    /// (fewer by the reused visits with `count_reused_visits`).
    pub fn start_move(&mut self, sims: u32) {
        assert!(
            self.pending.is_empty(),
            "start_move with evaluations pending"
        );
        self.budget = sims;
        self.done = 0;
        self.root_ready = false;
        if self.tree.root().kind() == Kind::Expanded {
            if self.config.count_reused_visits && self.config.root == RootMode::Puct {
                self.budget = sims.saturating_sub(self.reused_visits());
            }
            self.prepare_root();
        }
    }

    /// The visits below the root that an earlier search left there (tree
    /// reuse): the sum over the root's children.
    pub fn reused_visits(&self) -> u32 {
        let root = self.tree.root();
        if root.kind() != Kind::Expanded {
            return 0;
        }
        self.tree.nodes[root.children()]
            .iter()
            .map(|c| c.visits)
            .sum()
    }

    /// Whether the search for this move is over (budget spent, root solved,
    /// a single legal move, or the game is over) with nothing in flight.
    pub fn is_finished(&self) -> bool {
        self.pending.is_empty() && self.search_done()
    }

    fn search_done(&self) -> bool {
        let root = self.tree.root();
        match root.kind() {
            Kind::Terminal => true,
            Kind::Fresh | Kind::Pending => false,
            Kind::Expanded => {
                (root.proven() != Proven::Unknown && !self.seeking_cheaper_win())
                    || root.num_children <= 1
                    || match self.config.root {
                        RootMode::Puct => self.done + self.in_flight >= self.budget,
                        RootMode::Gumbel => self.root_ready && self.gumbel.done,
                    }
            }
        }
    }

    /// Whether the search goes on past a root proven won, for another
    /// proven win that costs less material ([`MctsConfig::cheapest_win`]):
    /// while some root move is not yet proven.
    fn seeking_cheaper_win(&self) -> bool {
        let root = self.tree.root();
        // The root's proof is for the mover into it: a loss there is a win
        // for the side to move at the root.
        self.config.cheapest_win
            && root.proven() == Proven::Loss
            && self.tree.nodes[root.children()]
                .iter()
                .any(|c| c.proven() == Proven::Unknown)
    }

    /// Selects up to `batch_size` leaves and appends them to `batch` (which may
    /// hold other searches' leaves). Returns how many were added. Selections
    /// that end in a finished game are backed up at once and count as
    /// simulations without using the evaluator.
    pub fn gather(&mut self, batch: &mut LeafBatch<G>) -> usize {
        match self.tree.root().kind() {
            Kind::Terminal | Kind::Pending => return 0,
            Kind::Fresh => return self.gather_root(batch),
            Kind::Expanded => {}
        }
        if !self.root_ready {
            self.prepare_root();
        }
        let max = self.config.batch_size.max(1) as usize;
        let (mut added, mut collisions) = (0usize, 0usize);
        while added < max && collisions < max {
            if self.config.root == RootMode::Gumbel
                && self.gumbel.schedule.is_empty()
                && self.in_flight == 0
                && !self.gumbel.done
            {
                self.end_gumbel_phase();
            }
            if self.search_done() {
                break;
            }
            let forced = match self.config.root {
                RootMode::Puct => None,
                RootMode::Gumbel => match self.gumbel.next_action() {
                    Some(a) => Some(a),
                    None => break,
                },
            };
            match self.simulate(forced, batch) {
                Step::Added => added += 1,
                Step::Backed => {}
                Step::Collision => {
                    collisions += 1;
                    if let Some(a) = forced {
                        self.gumbel.requeue(a);
                    }
                }
            }
        }
        added
    }

    /// The root's own evaluation (the first gather of a fresh tree).
    fn gather_root(&mut self, batch: &mut LeafBatch<G>) -> usize {
        self.moves.clear();
        self.game.legal_moves(&mut self.moves);
        if let Some(t) = self.game.terminal(!self.moves.is_empty()) {
            let root = &mut self.tree.nodes[ROOT as usize];
            root.set_kind(Kind::Terminal);
            root.set_proven(Proven::from_terminal(t.flip()));
            return 0;
        }
        self.tree.nodes[ROOT as usize].set_kind(Kind::Pending);
        let index = batch.push(self.game.leaf(), &self.moves);
        self.pending.push(PendingLeaf {
            node: ROOT,
            batch_index: index as u32,
            path_start: self.paths.len() as u32,
            path_len: 1,
            counted: false,
            material_gain: 0.0,
        });
        self.paths.push(ROOT);
        1
    }

    /// One selection from the root (through root child `forced` if given).
    fn simulate(&mut self, forced: Option<u32>, batch: &mut LeafBatch<G>) -> Step {
        self.path.clear();
        self.path.push(ROOT);
        let mut node = ROOT;
        loop {
            let n = &self.tree.nodes[node as usize];
            if n.kind() != Kind::Expanded || (node != ROOT && n.proven() != Proven::Unknown) {
                break;
            }
            let child = match (node, forced) {
                (ROOT, Some(a)) => n.first_child + a,
                _ => self.select_child(node),
            };
            self.game.play(self.tree.nodes[child as usize].mv);
            self.path.push(child);
            node = child;
        }
        let leaf = self.tree.nodes[node as usize];
        let gain = self.material_gain();
        let step = if leaf.proven() != Proven::Unknown {
            let (q, d) = proven_value(leaf.proven());
            let q = self.with_utilities(node, q + self.draw_value_below(0) * d, gain);
            self.backup(q, d, false);
            self.done += 1;
            Step::Backed
        } else if leaf.kind() == Kind::Pending {
            Step::Collision
        } else {
            self.moves.clear();
            self.game.legal_moves(&mut self.moves);
            if let Some(t) = self.game.terminal(!self.moves.is_empty()) {
                let proven = Proven::from_terminal(t.flip());
                let n = &mut self.tree.nodes[node as usize];
                n.set_kind(Kind::Terminal);
                n.set_proven(proven);
                let (q, d) = proven_value(proven);
                let q = self.with_utilities(node, q + self.draw_value_below(0) * d, gain);
                self.backup(q, d, false);
                self.propagate_proof();
                self.done += 1;
                Step::Backed
            } else {
                self.tree.nodes[node as usize].set_kind(Kind::Pending);
                for &i in &self.path {
                    self.tree.nodes[i as usize].in_flight += 1;
                }
                let index = batch.push(self.game.leaf(), &self.moves);
                self.pending.push(PendingLeaf {
                    node,
                    batch_index: index as u32,
                    path_start: self.paths.len() as u32,
                    path_len: self.path.len() as u32,
                    counted: true,
                    material_gain: gain,
                });
                self.paths.extend_from_slice(&self.path);
                self.in_flight += 1;
                Step::Added
            }
        };
        for _ in 1..self.path.len() {
            self.game.undo();
        }
        step
    }

    /// Expands the leaves this search added to `batch` with the evaluator's
    /// answers and backs their values up. Leaves of other searches are ignored.
    pub fn apply(&mut self, batch: &LeafBatch<G>, evals: &Evaluations) {
        let pending = std::mem::take(&mut self.pending);
        let mut root_expanded = false;
        for p in &pending {
            let i = p.batch_index as usize;
            let moves = batch.moves(i);
            let priors = evals.priors(i);
            let value = evals.value(i);
            assert_eq!(
                moves.len(),
                priors.len(),
                "an evaluator must return one prior per legal move"
            );
            assert!(moves.len() <= u16::MAX as usize, "too many legal moves");
            let sum: f32 = priors.iter().map(|&p| clean(p)).sum();
            let uniform = !(sum > 0.0 && sum.is_finite());
            let n = moves.len() as f32;
            let first = self.tree.add_children(
                moves,
                priors
                    .iter()
                    .map(|&p| if uniform { 1.0 / n } else { clean(p) / sum }),
            );
            let node = &mut self.tree.nodes[p.node as usize];
            node.first_child = first;
            node.num_children = moves.len() as u16;
            node.set_kind(Kind::Expanded);
            node.raw_q = value.q();
            if let Some(plies) = evals.plies_left(i) {
                self.tree.set_plies_left(p.node, plies);
            }
            if let Some(change) = evals.material_left(i) {
                self.tree.set_material_left(p.node, change);
            } else if let Some(plies) = self.outlook_plies() {
                let outlook = G::capture_outlook(batch.leaf(i), plies);
                self.tree.set_material_left(p.node, outlook as f32);
            }
            self.path.clear();
            self.path.extend_from_slice(
                &self.paths[p.path_start as usize..(p.path_start + p.path_len) as usize],
            );
            // The leaf's value is for its side to move; its node stores the
            // mover's. The scratch game is at the root, the leaf below it.
            let draw_value = self.draw_value_below(self.path.len() - 1);
            let q = -value.q() + draw_value * value.draw;
            let q = self.with_utilities(p.node, q, p.material_gain);
            self.backup(q, value.draw, p.counted);
            if p.counted {
                self.done += 1;
                self.in_flight -= 1;
            } else {
                root_expanded = true;
            }
        }
        self.pending = pending;
        self.pending.clear();
        self.paths.clear();
        if root_expanded {
            self.prepare_root();
        }
    }

    /// Runs this search alone to the end of its budget (`sims` below the
    /// root), until `deadline` or until `stop` is raised, and returns the
    /// result. The deadline and the signal are read after each evaluator
    /// call, and only once the root is expanded, so there is always a move.
    pub fn run<E: Evaluator<G> + ?Sized>(
        &mut self,
        evaluator: &E,
        sims: u32,
        deadline: Option<Instant>,
        stop: Option<&StopSignal>,
    ) -> SearchResult<G::Move> {
        self.start_move(sims);
        let mut batch = std::mem::take(&mut self.own_batch);
        let mut evals = std::mem::take(&mut self.own_evals);
        while !self.is_finished() {
            batch.clear();
            let added = self.gather(&mut batch);
            if added > 0 {
                evals.prepare(&batch);
                evaluator.evaluate(&batch, &mut evals);
                self.apply(&batch, &evals);
            } else if !self.is_finished() && self.pending.is_empty() {
                // A gather that adds nothing with nothing in flight means the
                // budget is spent (see `Lockstep::step`); never spin.
                break;
            }
            let stopped = stop.is_some_and(StopSignal::is_stopped);
            if (stopped || deadline.is_some_and(|d| Instant::now() >= d)) && self.root_ready {
                break;
            }
        }
        self.own_batch = batch;
        self.own_evals = evals;
        self.result()
    }

    /// `q` (for the mover into `node`, the last node of `self.path`) with
    /// the moves-left and material utilities applied (see the module docs);
    /// `so_far` is [`Search::material_gain`] at that node.
    fn with_utilities(&self, node: u32, q: f32, so_far: f32) -> f32 {
        let q = self.with_moves_left(node, q);
        let utility = self.config.material_utility;
        if utility > 0.0 {
            material_adjusted(q, self.material_gain_to_end(node, so_far), utility)
        } else {
            q
        }
    }

    /// The gain the material utility counts for the mover into `node` (the
    /// last node of `self.path`): `so_far`, its change since the root, plus
    /// the change the evaluator predicted from the node to the end (none
    /// for a finished game or an evaluator that predicts none), less what
    /// the root's own prediction expected for that player. So the utility
    /// is of the final material against the root's expectation, and a
    /// prediction of many captures to come moves lines against each other
    /// instead of pushing every line into the flat end of the tanh.
    fn material_gain_to_end(&self, node: u32, so_far: f32) -> f32 {
        let ended = self.tree.nodes[node as usize].kind() == Kind::Terminal;
        // Predictions are for the side to move at their node: the mover
        // into the node is the other side, the root's side at odd depths.
        let to_end = match ended {
            true => 0.0,
            false => -self.tree.material_left(node).unwrap_or(0.0),
        };
        let at_root = self.tree.material_left(ROOT).unwrap_or(0.0);
        let expected = if (self.path.len() - 1) % 2 == 1 {
            at_root
        } else {
            -at_root
        };
        so_far + to_end - expected
    }

    /// What a draw is worth ([`MctsConfig::geese_draw`]: the geese's
    /// value, the foxes' minus it) to the mover into a node `plies` below
    /// the one the scratch game is at: 0 is that node's own mover, 1 the
    /// side to move there (the mover into its children).
    fn draw_value_below(&self, plies: usize) -> f32 {
        let v = self.config.geese_draw;
        if v == 0.0 {
            return 0.0;
        }
        let Some(geese_to_move) = self.game.geese_to_move() else {
            return 0.0;
        };
        // The mover into the scratch game's node is the side not to move
        // there; every ply below flips it.
        let geese_moved_in = geese_to_move == (plies % 2 == 1);
        if geese_moved_in {
            v
        } else {
            -v
        }
    }

    /// The plies of the capture outlook, where the material utility and
    /// [`MctsConfig::capture_plies`] are both on.
    fn outlook_plies(&self) -> Option<u32> {
        let plies = self.config.capture_plies;
        (plies > 0 && self.config.material_utility > 0.0).then_some(plies)
    }

    /// What the mover into the last node of `self.path` gained in material
    /// since the root, with the scratch game at that node. 0 with the
    /// material utility off, without looking at the game.
    fn material_gain(&self) -> f32 {
        if self.config.material_utility <= 0.0 {
            return 0.0;
        }
        // The game's count is for its side to move; the mover into the leaf
        // is the other side, and is the root's side to move at odd depths.
        let at_leaf = -material_count(&self.game, &self.config);
        let depth = self.path.len() - 1;
        let at_root = if depth % 2 == 1 {
            self.root_material
        } else {
            -self.root_material
        };
        at_leaf - at_root
    }

    /// `q` (for the mover into `node`, the last node of `self.path`) with
    /// the moves-left utility applied (see the module docs): unchanged when
    /// the utility is off or the root's or the node's plies left are unknown.
    /// A finished game has 0 plies left.
    fn with_moves_left(&self, node: u32, q: f32) -> f32 {
        let utility = self.config.moves_left_utility;
        if utility <= 0.0 {
            return q;
        }
        let Some(root) = self.tree.plies_left(ROOT) else {
            return q;
        };
        let leaf = if self.tree.nodes[node as usize].kind() == Kind::Terminal {
            Some(0.0)
        } else {
            self.tree.plies_left(node)
        };
        match leaf {
            Some(leaf) => {
                let depth = self.path.len().saturating_sub(1) as f32;
                moves_left_adjusted(q, depth + leaf - root, utility)
            }
            None => q,
        }
    }

    /// Backs `q` (for the mover into the last node of `self.path`) and draw
    /// share `d` up the path, flipping `q` at every ply.
    fn backup(&mut self, mut q: f32, d: f32, remove_virtual_loss: bool) {
        for &i in self.path.iter().rev() {
            let n = &mut self.tree.nodes[i as usize];
            n.visits += 1;
            n.value_sum += q;
            n.draw_sum += d;
            if remove_virtual_loss {
                n.in_flight -= 1;
            }
            q = -q;
        }
    }

    /// After the last node of `self.path` was proven: proves its ancestors
    /// while the solver rules allow.
    fn propagate_proof(&mut self) {
        for k in (0..self.path.len().saturating_sub(1)).rev() {
            let parent = self.path[k] as usize;
            if self.tree.nodes[parent].proven() != Proven::Unknown {
                break;
            }
            let mut all_proven = true;
            let mut any_draw = false;
            let mut proven = Proven::Unknown;
            for c in self.tree.nodes[parent].children() {
                match self.tree.nodes[c].proven() {
                    // The child's mover is this node's side to move.
                    Proven::Win => {
                        proven = Proven::Loss;
                        break;
                    }
                    Proven::Draw => any_draw = true,
                    Proven::Loss => {}
                    Proven::Unknown => all_proven = false,
                }
            }
            if proven == Proven::Unknown && all_proven {
                proven = if any_draw { Proven::Draw } else { Proven::Win };
            }
            if proven == Proven::Unknown {
                break;
            }
            self.tree.nodes[parent].set_proven(proven);
        }
    }

    fn select_child(&mut self, node: u32) -> u32 {
        if self.config.root == RootMode::Gumbel && node != ROOT {
            return self.select_gumbel(node);
        }
        let draw_q = self.draw_value_below(1);
        let c = &self.config;
        let parent = &self.tree.nodes[node as usize];
        let n_parent = (parent.visits + parent.in_flight as u32) as f32;
        let cpuct = c.cpuct + ((1.0 + n_parent + c.cpuct_base) / c.cpuct_base).ln();
        let explore = cpuct * n_parent.max(1.0).sqrt();
        let range = parent.children();
        let nodes = &self.tree.nodes[range.clone()];
        let use_root_priors = node == ROOT && self.root_ready;
        let prior = |i: usize| {
            if use_root_priors {
                self.root_priors[i]
            } else {
                nodes[i].prior()
            }
        };
        let mut visited_prior = 0.0;
        for (i, ch) in nodes.iter().enumerate() {
            if ch.visits + ch.in_flight as u32 > 0 {
                visited_prior += prior(i);
            }
        }
        let fpu = -parent.q() - c.fpu_reduction * f32::sqrt(visited_prior);
        // Past a root proven won, the search is for proofs of the other
        // moves: revisiting a proven one would only back up what is known.
        let unproven_only = node == ROOT && self.seeking_cheaper_win();
        let mut best = 0usize;
        let mut best_score = f32::NEG_INFINITY;
        for (i, ch) in nodes.iter().enumerate() {
            let proven = ch.proven();
            if proven == Proven::Loss || (unproven_only && proven != Proven::Unknown) {
                continue;
            }
            let n = (ch.visits + ch.in_flight as u32) as f32;
            let q = if proven == Proven::Draw {
                draw_q
            } else if n == 0.0 {
                fpu
            } else {
                (ch.value_sum - c.virtual_loss * ch.in_flight as f32) / n
            };
            let score = q + explore * prior(i) / (1.0 + n);
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        range.start as u32 + best as u32
    }

    /// Fills `self.stats` with the children of `node` as Gumbel sees them.
    fn child_stats(&mut self, node: u32) {
        let vl = self.config.virtual_loss;
        let draw_q = self.draw_value_below(1);
        self.stats.clear();
        let parent = &self.tree.nodes[node as usize];
        for ch in &self.tree.nodes[parent.children()] {
            let n = ch.visits + ch.in_flight as u32;
            let proven = ch.proven();
            let q = match proven {
                Proven::Unknown if n > 0 => (ch.value_sum - vl * ch.in_flight as f32) / n as f32,
                Proven::Unknown => 0.0,
                Proven::Draw => draw_q,
                p => proven_value(p).0,
            };
            self.stats.push(ChildStats {
                prior: ch.prior(),
                visits: n as f32,
                q,
                proven: proven != Proven::Unknown,
            });
        }
    }

    /// Danihelka et al. eq. 14: argmax π'(a) - N(a) / (1 + ΣN).
    fn select_gumbel(&mut self, node: u32) -> u32 {
        self.child_stats(node);
        let raw_q = self.tree.nodes[node as usize].raw_q;
        gumbel::sigma_completed_q(&self.stats, raw_q, &self.config, &mut self.sigma);
        gumbel::improved_policy(&self.stats, &self.sigma, &mut self.scratch);
        let sum_n: f32 = self.stats.iter().map(|s| s.visits).sum();
        let mut best = 0;
        let mut best_score = f32::NEG_INFINITY;
        let first = self.tree.nodes[node as usize].first_child;
        for (i, s) in self.stats.iter().enumerate() {
            if self.tree.nodes[first as usize + i].proven() == Proven::Loss {
                continue;
            }
            let score = self.scratch[i] - s.visits / (1.0 + sum_n);
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        first + best as u32
    }

    /// Root set-up for a new move: noisy priors (PUCT) or the Gumbel schedule.
    fn prepare_root(&mut self) {
        self.root_ready = true;
        let root = *self.tree.root();
        let range = root.children();
        self.root_priors.clear();
        self.root_priors
            .extend(self.tree.nodes[range.clone()].iter().map(|c| c.prior()));
        let n = range.len();
        if n == 0 {
            return;
        }
        match self.config.root {
            RootMode::Puct => {
                if self.config.noise && n > 1 {
                    let alpha = (self.config.dirichlet_alpha_scale / n as f32).max(1e-3);
                    let gamma = Gamma::new(alpha, 1.0).expect("alpha is positive");
                    let noise: Vec<f32> = (0..n)
                        .map(|_| gamma.sample(&mut self.rng).max(0.0))
                        .collect();
                    let sum: f32 = noise.iter().sum();
                    if sum > 0.0 {
                        let eps = self.config.dirichlet_epsilon;
                        for (p, x) in self.root_priors.iter_mut().zip(noise) {
                            *p = (1.0 - eps) * *p + eps * x / sum;
                        }
                    }
                }
            }
            RootMode::Gumbel => {
                self.gumbel.g.clear();
                for _ in 0..n {
                    let g = if self.config.noise {
                        let u: f64 = self.rng.random_range(1e-12..1.0);
                        -(-u.ln()).ln() as f32
                    } else {
                        0.0
                    };
                    self.gumbel.g.push(g);
                }
                let scores: Vec<f32> = self
                    .gumbel
                    .g
                    .iter()
                    .zip(&self.root_priors)
                    .map(|(g, &p)| g + gumbel::logit(p))
                    .collect();
                let excluded: Vec<bool> = self.tree.nodes[range]
                    .iter()
                    .map(|c| c.proven() == Proven::Loss)
                    .collect();
                self.gumbel
                    .start(&scores, &excluded, self.config.gumbel_m, self.budget);
            }
        }
    }

    /// g + logits + sigma(q̂) for every root child.
    fn gumbel_root_scores(&mut self) -> Vec<f32> {
        self.child_stats(ROOT);
        let raw_q = self.tree.root().raw_q;
        gumbel::sigma_completed_q(&self.stats, raw_q, &self.config, &mut self.sigma);
        self.stats
            .iter()
            .zip(&self.sigma)
            .zip(&self.gumbel.g)
            .map(|((s, sig), g)| g + gumbel::logit(s.prior) + sig)
            .collect()
    }

    fn end_gumbel_phase(&mut self) {
        let scores = self.gumbel_root_scores();
        self.gumbel.end_phase(&scores);
    }

    /// The material ([`SearchGame::material`]) the root's side to move is
    /// sure to have at the end of the proof below `node`, a node of a
    /// proven win for that side `depth` plies below the root, with the
    /// scratch game standing at `node`: the most over the winner's proven
    /// moves where it moves, the least over the loser's moves (all proven
    /// lost) where the loser moves, and the count itself at the end. A
    /// minimax of the material over the proof tree, so the loser's best
    /// defence of its material is assumed.
    fn proof_material(&mut self, node: usize, depth: usize) -> i32 {
        let n = self.tree.nodes[node];
        let winner_moves = depth.is_multiple_of(2);
        // The count here, for the winner: at the proof's ends only.
        let here = |game: &G| {
            if winner_moves {
                game.material()
            } else {
                -game.material()
            }
        };
        if n.kind() != Kind::Expanded {
            return here(&self.game);
        }
        // Child proofs are for the mover into the child: the winner's moves
        // are its proven wins, the loser's moves its proven losses.
        let keeps = if winner_moves {
            Proven::Win
        } else {
            Proven::Loss
        };
        let mut sure: Option<i32> = None;
        for c in n.children() {
            let child = self.tree.nodes[c];
            if child.proven() != keeps {
                continue;
            }
            self.game.play(child.mv);
            let m = self.proof_material(c, depth + 1);
            self.game.undo();
            sure = Some(match sure {
                None => m,
                Some(s) if winner_moves => s.max(m),
                Some(s) => s.min(m),
            });
        }
        sure.unwrap_or_else(|| here(&self.game))
    }

    /// The search's findings at the root (call once [`Search::is_finished`]).
    pub fn result(&mut self) -> SearchResult<G::Move> {
        let root = *self.tree.root();
        let children = &self.tree.nodes[root.children()];
        let moves: Vec<G::Move> = children.iter().map(|c| c.mv).collect();
        let visits: Vec<u32> = children.iter().map(|c| c.visits).collect();
        let q: Vec<f32> = children
            .iter()
            .map(|c| match c.proven() {
                Proven::Unknown => c.q(),
                p => proven_value(p).0,
            })
            .collect();
        let policy = match self.config.root {
            RootMode::Puct => {
                let total: u32 = visits.iter().sum();
                if total == 0 {
                    children.iter().map(|c| c.prior()).collect()
                } else {
                    visits.iter().map(|&v| v as f32 / total as f32).collect()
                }
            }
            RootMode::Gumbel => {
                self.child_stats(ROOT);
                gumbel::sigma_completed_q(&self.stats, root.raw_q, &self.config, &mut self.sigma);
                let mut out = Vec::new();
                gumbel::improved_policy(&self.stats, &self.sigma, &mut out);
                out
            }
        };
        // Solved moves override the search statistics: a proven win takes the
        // whole target (shared among the winning moves), proven losses none.
        let mut policy = policy;
        let children = &self.tree.nodes[root.children()];
        let wins: Vec<bool> = children.iter().map(|c| c.proven() == Proven::Win).collect();
        let keep: Vec<bool> = if wins.iter().any(|&w| w) {
            wins
        } else {
            children
                .iter()
                .map(|c| c.proven() != Proven::Loss)
                .collect()
        };
        if keep.iter().any(|&k| k) {
            for (p, &k) in policy.iter_mut().zip(&keep) {
                if !k {
                    *p = 0.0;
                }
            }
            let sum: f32 = policy.iter().sum();
            if sum > 0.0 {
                policy.iter_mut().for_each(|p| *p /= sum);
            } else {
                let n = keep.iter().filter(|&&k| k).count() as f32;
                for (p, &k) in policy.iter_mut().zip(&keep) {
                    *p = if k { 1.0 / n } else { 0.0 };
                }
            }
        }
        let proven_moves = children.iter().map(|c| c.proven().terminal()).collect();
        let proven = root.proven().terminal().map(Terminal::flip);
        let value = match proven {
            Some(t) => Wdl::from_terminal(t),
            None if root.visits > 0 => Wdl::from_q_draw(-root.q(), root.draw()),
            None => Wdl::DRAW,
        };
        SearchResult {
            moves,
            visits,
            policy,
            q,
            proven_moves,
            value,
            proven,
            simulations: self.done,
            nodes: self.tree.nodes.len(),
        }
    }

    /// The move to play: a proven win if there is one (an immediate win
    /// first, then, with [`MctsConfig::cheapest_win`], the one whose proof
    /// keeps the most material, then the most visited), never a proven
    /// loss if anything else is left; otherwise by
    /// visits at the temperature of the game's ply (PUCT) or the best
    /// remaining Gumbel candidate. `None` if the game is over.
    pub fn choose_move(&mut self) -> Option<G::Move> {
        let root = *self.tree.root();
        if root.kind() != Kind::Expanded || root.num_children == 0 {
            return None;
        }
        let range = root.children();
        let first = range.start;
        let children: Vec<_> = self.tree.nodes[range].to_vec();
        let win = |c: &crate::tree::Node<G::Move>| c.proven() == Proven::Win;
        let wins: Vec<usize> = (0..children.len()).filter(|&i| win(&children[i])).collect();
        if !wins.is_empty() {
            let mut kept = vec![0; children.len()];
            if self.config.cheapest_win {
                for &i in &wins {
                    self.game.play(children[i].mv);
                    kept[i] = self.proof_material(first + i, 1);
                    self.game.undo();
                }
            }
            let i = *wins
                .iter()
                .max_by_key(|&&i| {
                    let c = &children[i];
                    (c.kind() == Kind::Terminal, kept[i], c.visits)
                })
                .expect("wins are not empty");
            return Some(self.tree.nodes[first + i].mv);
        }
        let mut allowed: Vec<usize> = (0..children.len())
            .filter(|&i| children[i].proven() != Proven::Loss)
            .collect();
        if allowed.is_empty() {
            allowed = (0..children.len()).collect();
        }
        let pick = match self.config.root {
            RootMode::Gumbel if self.root_ready && !self.gumbel.considered.is_empty() => {
                let scores = self.gumbel_root_scores();
                let candidates: Vec<usize> = self
                    .gumbel
                    .considered
                    .iter()
                    .map(|&a| a as usize)
                    .filter(|a| allowed.contains(a))
                    .collect();
                let candidates = if candidates.is_empty() {
                    allowed
                } else {
                    candidates
                };
                *candidates
                    .iter()
                    .max_by(|&&a, &&b| scores[a].total_cmp(&scores[b]))
                    .expect("candidates are not empty")
            }
            _ => {
                let t = self.config.temperature_at(self.game.ply());
                let total: u64 = allowed.iter().map(|&i| children[i].visits as u64).sum();
                if t > 0.01 && total > 0 {
                    let weights: Vec<f64> = allowed
                        .iter()
                        .map(|&i| (children[i].visits as f64).powf(1.0 / t as f64))
                        .collect();
                    let sum: f64 = weights.iter().sum();
                    let mut x = self.rng.random_range(0.0..sum);
                    let mut chosen = *allowed.last().expect("allowed is not empty");
                    for (k, w) in weights.iter().enumerate() {
                        if x < *w {
                            chosen = allowed[k];
                            break;
                        }
                        x -= w;
                    }
                    chosen
                } else {
                    *allowed
                        .iter()
                        .max_by(|&&a, &&b| {
                            let (ca, cb) = (&children[a], &children[b]);
                            ca.visits
                                .cmp(&cb.visits)
                                .then(ca.q().total_cmp(&cb.q()))
                                .then(ca.prior().total_cmp(&cb.prior()))
                        })
                        .expect("allowed is not empty")
                }
            }
        };
        Some(self.tree.nodes[first + pick].mv)
    }

    /// Plays `mv` at the root: the game moves on, and with `reuse_tree` the
    /// subtree under `mv` becomes the new tree.
    pub fn play(&mut self, mv: G::Move) {
        assert!(self.pending.is_empty(), "play with evaluations pending");
        let root = *self.tree.root();
        let child = root
            .children()
            .find(|&c| self.tree.nodes[c].mv == mv)
            .map(|c| c as u32);
        match child {
            Some(c)
                if self.config.reuse_tree && self.tree.nodes[c as usize].kind() != Kind::Fresh =>
            {
                self.tree.reroot(c)
            }
            _ => self.tree.reset(mv),
        }
        self.game.play(mv);
        self.root_material = material_count(&self.game, &self.config);
        self.root_ready = false;
        self.in_flight = 0;
        self.done = 0;
    }

    /// Replaces the game (and drops the tree).
    pub fn set_game(&mut self, game: G) {
        assert!(self.pending.is_empty(), "set_game with evaluations pending");
        let mv = self.tree.root().mv;
        self.tree.reset(mv);
        self.game = game;
        self.root_material = material_count(&self.game, &self.config);
        self.root_ready = false;
        self.in_flight = 0;
        self.done = 0;
    }
}

enum Step {
    Added,
    Backed,
    Collision,
}

fn panic_no_moves<G: SearchGame>() -> G::Move {
    panic!("Search::new needs a game whose side to move has a legal move")
}

/// A prior as the search uses it: non-negative and finite, else 0.
#[inline]
fn clean(p: f32) -> f32 {
    if p.is_finite() && p > 0.0 {
        p
    } else {
        0.0
    }
}

/// (win - loss, draw) of a proven result, for the mover.
fn proven_value(p: Proven) -> (f32, f32) {
    match p {
        Proven::Win => (1.0, 0.0),
        Proven::Loss => (-1.0, 0.0),
        Proven::Draw => (0.0, 1.0),
        Proven::Unknown => (0.0, 0.0),
    }
}

impl<G: SearchGame> Search<G> {
    /// The most visited line from the root, at most `max_len` moves.
    pub fn principal_variation(&self, max_len: usize) -> Vec<G::Move> {
        let mut pv = Vec::new();
        let mut node = ROOT as usize;
        while pv.len() < max_len {
            let n = &self.tree.nodes[node];
            let Some(best) = n.children().max_by_key(|&c| self.tree.nodes[c].visits) else {
                break;
            };
            if self.tree.nodes[best].visits == 0 {
                break;
            }
            pv.push(self.tree.nodes[best].mv);
            node = best;
        }
        pv
    }
}
