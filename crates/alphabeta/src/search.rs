//! Negamax alpha-beta with principal variation search (PVS), iterative
//! deepening, a transposition table, and a one-ply capture quiescence.
//!
//! Negamax: `v(p) = max over moves m of -v(p after m)`, cut off when a move
//! reaches `beta` (Knuth & Moore, "An analysis of alpha-beta pruning",
//! Artificial Intelligence 6, 1975). PVS searches the first move with the full
//! window and the others with a null window `(alpha, alpha+1)`, re-searching
//! when one fails high (Marsland & Campbell, "Parallel search of strongly
//! ordered game trees", Computing Surveys 14, 1982). Move order: the table
//! move, then captures (longer chains first), two killer moves per ply, then
//! the history heuristic (Schaeffer, "The history heuristic and alpha-beta
//! search enhancements in practice", IEEE PAMI 11, 1989).
//!
//! The rules' end conditions are applied inside the tree in docs/rules.md's order:
//! rules 1 and 2 from the material, rule 3 from the move list, then the draws.
//! A position that repeats one seen since the root is scored a draw at once
//! (the side that can repeat can keep repeating), and one that stands for the
//! third time counting the game before the root is a draw by rule 4; 100 quiet
//! plies draw by rule 5. Wins and losses are mate-distance scores
//! `±(MATE - ply)`, so the search prefers faster wins and slower losses.
//!
//! The [`halatafl_rules::Game`] is the make/unmake stack: `play_unchecked`
//! pushes a position, `undo` pops it, and the repetition scan reads the stack.

use crate::eval::{evaluate, EvalWeights};
use crate::tt::{Bound, Table, NO_MOVE};
use halatafl_agent::StopSignal;
use halatafl_rules::{Game, Move, MoveList, Outcome, Side, FIFTY_MOVE_PLIES};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use smallvec::SmallVec;
use std::time::{Duration, Instant};

/// Score of a win on the board now; a win found `n` plies below the root
/// scores `MATE - n`.
pub const MATE: i32 = 30_000;
/// Deepest ply the search reaches (nominal depth plus quiescence).
pub const MAX_PLY: usize = 128;
/// Scores above this (or below its negation) are proved wins (losses).
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32;
const INF: i32 = 32_000;

/// Search settings. Limits per move come from [`Limits`].
#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// Depth searched when neither a depth nor a time is given.
    pub default_depth: u32,
    /// Transposition table size in MiB.
    pub tt_megabytes: usize,
    /// `Decision.value = tanh(score / value_scale)` for scores that are not proved wins or losses.
    pub value_scale: f32,
    /// Evaluation weights for Two Foxes.
    pub weights: EvalWeights,
    /// Evaluation weights for classic Fox and Geese.
    pub classic_weights: EvalWeights,
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            default_depth: 6,
            tt_megabytes: 16,
            value_scale: 400.0,
            weights: EvalWeights::default(),
            classic_weights: EvalWeights::classic(),
        }
    }
}

/// When to stop: at `depth` plies, when `movetime` runs out or when `stop`
/// is raised, whichever is first. With neither depth nor time,
/// [`SearchConfig::default_depth`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Limits {
    /// Deepest iteration of iterative deepening, in plies.
    pub depth: Option<u32>,
    /// Time for the move; the iteration running when it is spent is cut
    /// short (see [`Searcher::search`]).
    pub movetime: Option<Duration>,
    /// Ends the search early, like a deadline reached now.
    pub stop: Option<StopSignal>,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The move to play: of the last completed iteration, or of the
    /// interrupted one when it already proved a move at least as good.
    pub best: Move,
    /// Centi-geese for the side to move, or a mate-distance score.
    pub score: i32,
    /// Deepest iteration completed.
    pub depth: u32,
    /// Positions visited, quiescence included, over all iterations.
    pub nodes: u64,
    /// Principal variation, `best` first.
    pub pv: Vec<Move>,
}

/// Whether `score` is a proved win (or, negated, loss), and in how many plies.
pub fn mate_distance(score: i32) -> Option<i32> {
    if score > MATE_BOUND {
        Some(MATE - score)
    } else if score < -MATE_BOUND {
        Some(-(MATE + score))
    } else {
        None
    }
}

#[inline]
fn to_tt(score: i32, ply: usize) -> i32 {
    if score > MATE_BOUND {
        score + ply as i32
    } else if score < -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

#[inline]
fn from_tt(score: i16, ply: usize) -> i32 {
    let score = score as i32;
    if score > MATE_BOUND {
        score - ply as i32
    } else if score < -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

#[inline]
fn terminal_score(outcome: Outcome, to_move: Side, ply: usize) -> i32 {
    match outcome.winner {
        None => 0,
        Some(w) if w == to_move => MATE - ply as i32,
        Some(_) => -(MATE - ply as i32),
    }
}

/// Ordering key of a move: table move, captures, killers, history.
const KEY_TT: i32 = i32::MAX;
const KEY_CAPTURE: i32 = 1 << 28;
const KEY_KILLER: [i32; 2] = [1 << 27, (1 << 27) - 1];

/// The search state: tables kept between moves of a game, counters per search.
pub struct Searcher {
    /// The settings this searcher was made with (the agent reads
    /// `value_scale` from them). The table is sized once, in
    /// [`Searcher::new`]: changing `tt_megabytes` here has no effect.
    pub config: SearchConfig,
    tt: Table,
    killers: Vec<[Option<Move>; 2]>,
    /// `[side][from * 49 + to]`, incremented by depth² on a quiet cut-off.
    history: Vec<[i32; 49 * 49]>,
    rng: ChaCha8Rng,
    nodes: u64,
    deadline: Option<Instant>,
    stop: Option<StopSignal>,
    /// Whether the deadline and the stop signal may abort the current
    /// iteration (not the first: depth 1 always completes).
    interruptible: bool,
    aborted: bool,
    /// Index in the game's position stack of the root position.
    root_index: usize,
    pv: Vec<Vec<Move>>,
}

impl Searcher {
    /// A searcher with an empty table of `config.tt_megabytes`, allocated
    /// here once and reused for every move; `seed` breaks ties between
    /// equal moves.
    pub fn new(config: SearchConfig, seed: u64) -> Searcher {
        let tt = Table::new(config.tt_megabytes);
        Searcher {
            config,
            tt,
            killers: vec![[None; 2]; MAX_PLY + 1],
            history: vec![[0; 49 * 49]; 2],
            rng: ChaCha8Rng::seed_from_u64(seed),
            nodes: 0,
            deadline: None,
            stop: None,
            interruptible: false,
            aborted: false,
            root_index: 0,
            pv: (0..=MAX_PLY).map(|_| Vec::with_capacity(MAX_PLY)).collect(),
        }
    }

    /// Forget everything learned about earlier positions and reseed the
    /// tie-break, so a game depends only on its seed.
    pub fn new_game(&mut self, seed: u64) {
        self.tt.clear();
        for k in &mut self.killers {
            *k = [None; 2];
        }
        for h in &mut self.history {
            h.fill(0);
        }
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    /// Searches the current position of `game`, which must not be over.
    ///
    /// Iterative deepening from depth 1; with a time limit the search stops
    /// when the time is spent, or when the stop signal is raised (depth 1
    /// always completes, so there is a move to answer) and keeps the best
    /// move of the last iteration, or of the interrupted one if that iteration
    /// already proved a move at least as good as the previous best. Root moves
    /// are shuffled with the seeded generator before the first iteration, so
    /// among equally scored moves the choice varies with the seed and is
    /// reproducible for a fixed seed and depth.
    pub fn search(&mut self, game: &Game, limits: &Limits) -> SearchResult {
        let started = Instant::now();
        let max_depth = match (limits.depth, limits.movetime) {
            (Some(d), _) => d,
            (None, Some(_)) => (MAX_PLY - 8) as u32,
            (None, None) => self.config.default_depth,
        }
        .clamp(1, (MAX_PLY - 8) as u32);
        self.deadline = limits.movetime.map(|t| started + t);
        self.stop = limits.stop.clone();
        self.aborted = false;
        self.nodes = 0;
        for h in &mut self.history {
            for v in h.iter_mut() {
                *v /= 4;
            }
        }

        let mut game = game.clone();
        self.root_index = game.positions().len() - 1;
        let mut root_moves: Vec<Move> = game.position().legal_moves().into_vec();
        assert!(
            !root_moves.is_empty() && game.outcome().is_none(),
            "search called on a finished game"
        );
        root_moves.shuffle(&mut self.rng);
        // Captures first (stable, so ties keep the shuffled order).
        root_moves.sort_by_key(|m| std::cmp::Reverse(m.jumps()));

        let mut best = SearchResult {
            best: root_moves[0],
            score: 0,
            depth: 0,
            nodes: 0,
            pv: vec![root_moves[0]],
        };
        for depth in 1..=max_depth {
            // Depth 1 always completes. The limits are looked at every 1024
            // nodes, which a shallow iteration may not reach, so also before
            // each iteration.
            self.interruptible = depth > 1;
            self.check_limits();
            if self.aborted {
                break;
            }
            let found = self.search_root(&mut game, &mut root_moves, depth as i32);
            if let Some((index, score)) = found {
                let m = root_moves.remove(index);
                root_moves.insert(0, m);
                best.best = m;
                best.score = score;
                best.pv = self.pv[0].clone();
                if !self.aborted {
                    best.depth = depth;
                }
            }
            if self.aborted {
                break;
            }
            // A proved result cannot change with more depth.
            if mate_distance(best.score).is_some_and(|d| d.unsigned_abs() <= depth) {
                break;
            }
            if root_moves.len() == 1 && self.deadline.is_some() {
                break;
            }
        }
        best.nodes = self.nodes;
        self.stop = None;
        best
    }

    /// One iteration at the root. Returns the index of the best move and its
    /// score, or `None` if interrupted before the first move was searched.
    fn search_root(
        &mut self,
        game: &mut Game,
        moves: &mut [Move],
        depth: i32,
    ) -> Option<(usize, i32)> {
        let mut alpha = -INF;
        let beta = INF;
        let mut best = None;
        for (i, &m) in moves.iter().enumerate() {
            game.play_unchecked(m);
            let score = if i == 0 {
                -self.negamax(game, depth - 1, 1, -beta, -alpha, true)
            } else {
                let s = -self.negamax(game, depth - 1, 1, -alpha - 1, -alpha, false);
                if s > alpha && !self.aborted {
                    -self.negamax(game, depth - 1, 1, -beta, -alpha, true)
                } else {
                    s
                }
            };
            game.undo();
            if self.aborted {
                break;
            }
            if score > alpha {
                alpha = score;
                best = Some((i, score));
                let (head, tail) = self.pv.split_at_mut(1);
                head[0].clear();
                head[0].push(m);
                head[0].extend_from_slice(&tail[0]);
            }
        }
        best
    }

    #[inline]
    fn weights(&self, pos: &halatafl_rules::Position) -> &EvalWeights {
        if pos.variant().is_classic() {
            &self.config.classic_weights
        } else {
            &self.config.weights
        }
    }

    /// Aborts the iteration when it may be interrupted and the deadline has
    /// passed or the stop signal is raised.
    #[inline]
    fn check_limits(&mut self) {
        if !self.interruptible {
            return;
        }
        let stopped = self.stop.as_ref().is_some_and(StopSignal::is_stopped);
        if stopped || self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.aborted = true;
        }
    }

    /// Rules 4 and 5 inside the tree (see the module doc).
    fn history_draw(&self, game: &Game) -> bool {
        let positions = game.positions();
        let n = positions.len();
        let current = &positions[n - 1];
        if current.quiet() >= FIFTY_MOVE_PLIES {
            return true;
        }
        let window = (current.quiet() as usize).min(n - 1);
        let mut before_root = 0;
        let mut back = 2;
        while back <= window {
            let index = n - 1 - back;
            if positions[index].same_placement(current) {
                if index >= self.root_index {
                    return true;
                }
                before_root += 1;
                if before_root >= 2 {
                    return true;
                }
            }
            back += 2;
        }
        false
    }

    #[allow(clippy::too_many_arguments)]
    fn negamax(
        &mut self,
        game: &mut Game,
        depth: i32,
        ply: usize,
        mut alpha: i32,
        mut beta: i32,
        pv_node: bool,
    ) -> i32 {
        self.nodes += 1;
        self.pv[ply].clear();
        if self.nodes & 1023 == 0 {
            self.check_limits();
        }
        if self.aborted {
            return 0;
        }
        let pos = *game.position();
        if let Some(outcome) = pos.material_outcome() {
            return terminal_score(outcome, pos.side(), ply);
        }
        if self.history_draw(game) {
            return if pos.has_legal_move() {
                0
            } else {
                -(MATE - ply as i32)
            };
        }
        if ply >= MAX_PLY - 1 {
            return evaluate(&pos, self.weights(&pos));
        }
        // Mate-distance pruning: nothing here beats a win next ply or loses
        // faster than a loss now.
        alpha = alpha.max(-(MATE - ply as i32));
        beta = beta.min(MATE - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }
        if depth <= 0 {
            return self.quiesce(game, ply, alpha, beta);
        }

        let key = pos.hash();
        let mut tt_move = NO_MOVE;
        if let Some(entry) = self.tt.probe(key) {
            tt_move = entry.move_index;
            if !pv_node && entry.depth as i32 >= depth {
                let s = from_tt(entry.score, ply);
                let usable = match entry.bound {
                    Bound::Exact => true,
                    Bound::Lower => s >= beta,
                    Bound::Upper => s <= alpha,
                };
                if usable {
                    return s;
                }
            }
        }

        let mut moves = MoveList::new();
        pos.generate(&mut moves);
        if moves.is_empty() {
            return -(MATE - ply as i32);
        }
        let side = pos.side() as usize;
        let killers = self.killers[ply];
        let mut order: SmallVec<[(i32, u8); 64]> = moves
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let key = if i == tt_move as usize {
                    KEY_TT
                } else if m.is_capture() {
                    KEY_CAPTURE + m.jumps() as i32
                } else if killers[0] == Some(*m) {
                    KEY_KILLER[0]
                } else if killers[1] == Some(*m) {
                    KEY_KILLER[1]
                } else {
                    self.history[side][m.from().index() * 49 + m.to().index()]
                };
                (key, i.min(NO_MOVE as usize) as u8)
            })
            .collect();

        let alpha_orig = alpha;
        let mut best = -INF;
        let mut best_index = NO_MOVE;
        for n in 0..order.len() {
            let mut pick = n;
            for j in n + 1..order.len() {
                if order[j].0 > order[pick].0 {
                    pick = j;
                }
            }
            order.swap(n, pick);
            let index = order[n].1;
            if index == NO_MOVE {
                continue;
            }
            let m = moves[index as usize];
            game.play_unchecked(m);
            let score = if n == 0 {
                -self.negamax(game, depth - 1, ply + 1, -beta, -alpha, pv_node)
            } else {
                let s = -self.negamax(game, depth - 1, ply + 1, -alpha - 1, -alpha, false);
                if pv_node && s > alpha && s < beta && !self.aborted {
                    -self.negamax(game, depth - 1, ply + 1, -beta, -alpha, true)
                } else {
                    s
                }
            };
            game.undo();
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                best_index = index;
                if score > alpha {
                    alpha = score;
                    if pv_node {
                        let (head, tail) = self.pv.split_at_mut(ply + 1);
                        head[ply].clear();
                        head[ply].push(m);
                        head[ply].extend_from_slice(&tail[0]);
                    }
                    if score >= beta {
                        if !m.is_capture() {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(m) {
                                k[1] = k[0];
                                k[0] = Some(m);
                            }
                            let h = &mut self.history[side][m.from().index() * 49 + m.to().index()];
                            *h = (*h + depth * depth).min(1 << 20);
                        }
                        break;
                    }
                }
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > alpha_orig {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt
            .store(key, to_tt(best, ply), depth, bound, best_index);
        best
    }

    /// Quiescence: the foxes' captures at the horizon. With compulsory
    /// captures (Two Foxes) a fox to move that can jump must, so there is no
    /// stand-pat; otherwise the mover may stand on the static evaluation.
    /// Geese never capture, so a goose-to-move leaf is the evaluation (whose
    /// threat terms price the jumps the foxes have).
    fn quiesce(&mut self, game: &mut Game, ply: usize, mut alpha: i32, beta: i32) -> i32 {
        let pos = *game.position();
        let weights = if pos.variant().is_classic() {
            &self.config.classic_weights
        } else {
            &self.config.weights
        };
        if ply >= MAX_PLY - 1 {
            return evaluate(&pos, weights);
        }
        if pos.side() == Side::Geese {
            if !pos.has_legal_move() {
                return -(MATE - ply as i32);
            }
            return evaluate(&pos, weights);
        }
        let mut moves = MoveList::new();
        pos.generate(&mut moves);
        if moves.is_empty() {
            return -(MATE - ply as i32);
        }
        let forced = pos.variant().compulsory_capture() && moves[0].is_capture();
        let mut best = -INF;
        if !forced {
            best = evaluate(&pos, weights);
            if best >= beta {
                return best;
            }
            alpha = alpha.max(best);
        }
        for &m in moves.iter().filter(|m| m.is_capture()) {
            game.play_unchecked(m);
            self.nodes += 1;
            let child = *game.position();
            let score = match child.material_outcome() {
                Some(outcome) => -terminal_score(outcome, child.side(), ply + 1),
                None => -self.quiesce(game, ply + 1, -beta, -alpha),
            };
            game.undo();
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}
