//! Classic Fox and Geese **with** sideways steps, solved by retrograde
//! analysis: win, draw or loss of every position with the quiet counter
//! at 0 (every position a capture or a forward step has just reached, and
//! every start).
//!
//! # The game that is solved
//!
//! Sideways steps let placements repeat, so threefold repetition and the
//! fifty-move rule (docs/rules.md rules 4 and 5) come into play. The crate docs
//! prove that from a position without history a side wins the real game
//! exactly when it wins G″, the game with rules 1-3 and 5 only; that
//! neither wins G″ means a draw. G″ is what is computed here. Its state is
//! (geese `G`, fox point, side to move, quiet counter `q`), and `q` counts
//! the plies since the last capture or forward step, so:
//!
//! - a capture (to fewer geese) or a forward step (to summed rows one
//!   higher) is an *exit*: it leaves for a state with `q = 0` in a layer
//!   (fewer geese) or level (higher summed rows) solved before;
//! - fox steps and sideways goose steps stay in the level, adding one to
//!   `q`; after the move that brings `q` to 100 the game is a draw, unless
//!   the side to move then has no move (rule 3 comes before rule 5).
//!
//! # Inside a level
//!
//! A sideways step keeps every row's number of geese, so a level falls
//! apart into *groups*, the placements with the same number of geese in
//! each row, which only fox steps and sideways steps join: each group is
//! solved on its own (groups of a level at once, on the worker threads),
//! and its work arrays are all the memory a solve needs beside the tables.
//!
//! Let `A_n` be the states from which the fox forces a win within `n`
//! plies of the level (the last one may be an exit to a fox win at `q = 0`,
//! or a move after which the geese have no move): `A_0` holds the geese
//! with no move, and
//!
//! - fox to move: in `A_n` if a capture wins at `q = 0`, or a step leads
//!   into `A_{n−1}`;
//! - geese to move: in `A_n` if they have a move and each leads to a fox
//!   win: a forward step to a fox win at `q = 0`, a sideways step into
//!   `A_{n−1}`.
//!
//! The fox wins `(s, q)` exactly when `s ∈ A_{100−q}`: its `n` plies must
//! come before the counter reaches 100, except that the last may bring it
//! to 100 and leave the geese without a move. `B_n` is the same for the
//! geese (`B_0`: the fox has no move). The tables keep `A_100` and `B_100`
//! (the values at `q = 0`) as four bits per (placement, fox point): fox to
//! move, geese to move; fox wins, geese win. A group's states are computed
//! together, `n = 1, 2, …`, each step from the last (two buffers, so that a
//! step really adds one ply), bit-parallel over the fox points of a
//! placement as in [`super::plain`]; it stops at `n = 100`, or earlier when
//! a step changes nothing (then no later step can).
//!
//! A group that settles, `A_m = A_{m+1}` for some `m < 100`, has the same
//! values at every counter `q ≤ 100 − m` as at 0 (`A_{100−q} = A_m`). The
//! tables keep the largest such `m` of each level, so they also answer
//! positions with such a counter, and the moves that keep a value are
//! found by lookups: a move inside the level reaches counter `q + 1`. Only
//! where a level has not settled that far is the position's group solved
//! again, to the step the counter needs.
//!
//! Memory: four times the tables of [`super::plain`] (12.4 GiB for 13
//! geese), plus each thread's work arrays for the group it solves, 112
//! bytes per placement of the group ([`work_bytes`]: 0.8 GB for 13 geese
//! on two threads).
//!
//! Captures are optional and a chain may stop after any jump, so a capture
//! from a layer of `k` geese may end in any layer below. Rather than reach
//! down, each layer gets two more planes when it is built, over (placement,
//! point where a jump just landed): the fox wins at some stop of the chain
//! from there (stopping there included), and the geese win at every stop.
//! A layer's are computed from its own geese-to-move planes and the layer
//! below's chain planes; a capture from layer `k` reads only layer `k − 1`.
//! So the layers below `k` are not needed to build it, and where all the
//! layers do not fit in memory the build keeps only what the next layer
//! needs ([`Keep::Top`]): with the work of two threads, 15 geese then
//! need 14,603 MiB rather than 33,514, and 17 geese 19,381 rather than
//! 52,895 (13 geese: 15,261 with every layer kept). Each layer is reported, with the tables as
//! they stand, before it is dropped, so that its start can be looked up
//! and played from. For the same reason a build can be split over several
//! sittings: with a layers directory each layer's chain planes are saved
//! as it is done, and a later build goes on above the last one saved
//! ([`super::saved_chains`]).
//!
//! # How it is checked
//!
//! Tests compare values with the df-pn solver (exact under both draw rules,
//! with whole histories in its own tests) on random positions, and the
//! winning or drawing moves [`SidewaysTables::value`] gives are solved
//! again after they are played.

#[cfg(target_arch = "x86_64")]
use super::index::Bmi2Bits;
use super::index::{
    binomial, for_each_placement, points_of, potential_of, BitScatter, Board, Job, Layer,
    LevelPlan, PortableBits, Ranker, ALL, GEESE_NEEDED, POINTS,
};
use super::saved_chains;
pub use super::saved_chains::SidewaysLayerStats;
use super::{RetroConfig, RetroError};
use crate::available_mib;
use crate::replay::{LineOracle, ReplayStats};
use crate::value::Value;
use halatafl_rules::{Game, Move, Position, Side, FIFTY_MOVE_PLIES};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Plane indices: fox to move, fox wins / geese win; geese to move, the same.
const FOX_FOX: usize = 0;
const FOX_GEESE: usize = 1;
const GEESE_FOX: usize = 2;
const GEESE_GEESE: usize = 3;
/// Chain planes (module docs): the fox wins at some stop, the geese at
/// every stop.
const CHAIN_WIN: usize = 0;
const CHAIN_LOSE: usize = 1;

/// A position's value at its quiet counter, with a move that keeps it
/// (none where every move loses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SidewaysValue {
    /// Win for a side, or a draw.
    pub value: Value,
    /// A move that keeps the value; `None` where every move loses.
    pub best: Option<Move>,
}

/// Values at the position's quiet counter; a move's value is that of the
/// position it leads to at the counter after it.
impl crate::suite::ExactValues for SidewaysTables {
    type Error = RetroError;

    fn exact_value(&self, p: &Position) -> Result<Value, RetroError> {
        self.outcome(p)
    }

    fn exact_move_values(&self, p: &Position) -> Result<Vec<(Move, Value)>, RetroError> {
        self.check(p)?;
        Ok(self
            .children(p)?
            .into_iter()
            .map(|(m, v, _)| (m, v))
            .collect())
    }
}

/// Bytes the tables up to `max_geese` geese take.
pub fn memory_bytes(max_geese: u32) -> u64 {
    4 * super::plain::memory_bytes(max_geese)
}

/// Which layers a build keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Every layer: any position of up to the most geese is answered.
    All,
    /// Only what the next layer needs: in the end, the top layer alone.
    Top,
}

/// Bytes of one plane of `geese` geese (0 below four geese).
fn plane_bytes(geese: u32) -> u64 {
    if geese < GEESE_NEEDED {
        0
    } else {
        Layer::words_for(geese) as u64 * 8
    }
}

impl Keep {
    /// All where all fit in `limit_mib`, else the top.
    pub fn for_memory(max_geese: u32, threads: usize, limit_mib: Option<u64>) -> Keep {
        match limit_mib {
            Some(limit) if Keep::All.need_mib(max_geese, threads) > limit => Keep::Top,
            _ => Keep::All,
        }
    }

    /// The layers a build up to `max_geese` geese with `config` keeps, the
    /// MiB it needs then, and the memory limit it chose them by (the
    /// config's, else the memory available now).
    pub fn planned(max_geese: u32, config: &RetroConfig) -> (Keep, u64, Option<u64>) {
        let limit = config.memory_limit_mib.or_else(available_mib);
        let keep = Keep::for_memory(max_geese, config.threads, limit);
        (keep, keep.need_mib(max_geese, config.threads), limit)
    }

    /// MiB a build up to `max_geese` geese needs at its peak with these
    /// layers kept, work included.
    pub fn need_mib(self, max_geese: u32, threads: usize) -> u64 {
        let tables = (GEESE_NEEDED..=max_geese.max(GEESE_NEEDED))
            .map(|k| {
                let planes = match self {
                    Keep::All => memory_bytes(k),
                    Keep::Top => 4 * plane_bytes(k),
                };
                let own_chains = if k < max_geese { 2 * plane_bytes(k) } else { 0 };
                planes + 2 * plane_bytes(k - 1) + own_chains
            })
            .max()
            .unwrap_or(0);
        (tables + work_bytes(max_geese, threads)).div_ceil(1 << 20)
    }
}

/// Words of group work per placement: six exit masks and two sets of four
/// state masks.
const WORK_WORDS: u64 = 14;

/// Bytes of work `threads` threads may need at once for groups of up to
/// `geese` geese: the largest group's arrays on each.
pub fn work_bytes(geese: u32, threads: usize) -> u64 {
    let largest = (GEESE_NEEDED..=geese.max(GEESE_NEEDED))
        .flat_map(|k| {
            let plan = LevelPlan::new(&Board::new(false), k);
            plan.levels
                .iter()
                .flatten()
                .map(|c| plan.count(c))
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap_or(0);
    largest * WORK_WORDS * 8 * threads as u64
}

fn atomic_zeros(n: usize) -> Vec<AtomicU64> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

/// A group's work arrays, by the group's numbering of its placements.
struct LevelWork {
    /// Fox to move: points where some capture wins for the fox at `q = 0`.
    capture_wins: Vec<AtomicU64>,
    /// Fox to move: points where every capture (if any) loses at `q = 0`.
    captures_lose: Vec<AtomicU64>,
    /// Fox to move: points where the fox has a move.
    fox_moves: Vec<AtomicU64>,
    /// Geese to move: points where every forward step is a fox win (or
    /// blocked by the fox).
    forward_all_fox: Vec<AtomicU64>,
    /// Geese to move: points where some forward step wins for the geese.
    forward_any_geese: Vec<AtomicU64>,
    /// Geese to move: points where the geese have a move.
    geese_move: Vec<AtomicU64>,
    /// `A_n`, `B_n` for both sides to move (the planes' order), and the
    /// next step's.
    now: [Vec<AtomicU64>; 4],
    next: [Vec<AtomicU64>; 4],
}

impl LevelWork {
    fn new(n: usize) -> LevelWork {
        LevelWork {
            capture_wins: atomic_zeros(n),
            captures_lose: atomic_zeros(n),
            fox_moves: atomic_zeros(n),
            forward_all_fox: atomic_zeros(n),
            forward_any_geese: atomic_zeros(n),
            geese_move: atomic_zeros(n),
            now: std::array::from_fn(|_| atomic_zeros(n)),
            next: std::array::from_fn(|_| atomic_zeros(n)),
        }
    }
}

#[inline]
fn load(v: &[AtomicU64], i: usize) -> u64 {
    v[i].load(Ordering::Relaxed)
}

#[inline]
fn store(v: &[AtomicU64], i: usize, x: u64) {
    v[i].store(x, Ordering::Relaxed)
}

/// What [`SidewaysTables::check_lines`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SidewaysCheck {
    /// Lines, plies and positions checked, as every replay counts them.
    pub replay: ReplayStats,
    /// Games that ended with the side the tables give the win.
    pub won: usize,
    /// Games that ended in a draw (all of them where the tables give a
    /// draw; by repetition or the fifty-move rule where they give a win).
    pub drawn: usize,
    /// Lines stopped where the counter passed what the tables answer, or
    /// a capture left the layers they hold.
    pub stopped: usize,
}

/// What building a layer found.
struct BuiltLayer {
    /// States of each plane at `q = 0`.
    counts: [u64; 4],
    longest: u32,
    settled: Vec<u8>,
}

/// The values at quiet counter 0 of every placement of up to `max_geese`
/// geese: classic Fox and Geese with sideways steps, solved.
pub struct SidewaysTables {
    corner_links: bool,
    board: Board,
    ranker: Ranker,
    /// `planes[k - 4][plane]` for `k` geese; `None` once dropped.
    planes: Vec<Option<[Layer; 4]>>,
    /// `chains[k - 4]`: the chain planes (module docs) of `k` geese, kept
    /// while the next layer is built.
    chains: Vec<Option<[Layer; 2]>>,
    /// `settled[k - 4][summed rows]`: the `m` at which that level of `k`
    /// geese settled (module docs; 100 if it had not).
    settled: Vec<Vec<u8>>,
    stats: Vec<SidewaysLayerStats>,
}

/// Sums of rows, by which `settled` is indexed: row 1 counts 0, row 7 six.
const MOST_SUMMED_ROWS: usize = 6 * POINTS;

impl SidewaysTables {
    /// Builds the tables for placements of 4 to `max_geese` geese, all of
    /// them if they fit in the memory allowed (`config`, else the memory
    /// available), else the last two ([`Keep`]). `progress` sees each
    /// layer as it is done, with the tables as they stand then. With
    /// [`RetroConfig::layers_dir`], each layer's chain planes are saved
    /// there, and the build starts above the most geese saved there
    /// (below `max_geese`): the layers up to it are then not held, and
    /// their statistics are the saved ones.
    pub fn build(
        max_geese: u32,
        corner_links: bool,
        config: &RetroConfig,
        mut progress: impl FnMut(&SidewaysLayerStats, &SidewaysTables),
    ) -> Result<SidewaysTables, RetroError> {
        // The memory plan counts work per thread: the count is checked first.
        config.check_build(max_geese, 0, None)?;
        let (keep, need_mib, limit) = Keep::planned(max_geese, config);
        config.check_build(max_geese, need_mib, limit)?;
        let mut tables = SidewaysTables {
            corner_links,
            board: Board::new(corner_links),
            ranker: Ranker::new(),
            planes: Vec::new(),
            chains: Vec::new(),
            settled: Vec::new(),
            stats: Vec::new(),
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads)
            .build()
            .expect("a thread pool starts");
        #[cfg(target_arch = "x86_64")]
        let fast = Bmi2Bits::detect();
        // A saved layer stands in for every layer up to it: the next
        // reads only its chain planes.
        let mut first = GEESE_NEEDED;
        if let Some(dir) = &config.layers_dir {
            std::fs::create_dir_all(dir).map_err(|e| RetroError::SavedChains {
                path: dir.display().to_string(),
                what: format!("cannot create the directory: {e}"),
            })?;
            if let Some(saved) = saved_chains::find_saved(dir, corner_links, max_geese)? {
                let chains = saved_chains::load(&saved, corner_links)?;
                for _ in GEESE_NEEDED..=saved.geese {
                    tables.planes.push(None);
                    tables.chains.push(None);
                    tables.settled.push(vec![0; MOST_SUMMED_ROWS + 1]);
                }
                *tables.chains.last_mut().unwrap() = Some(chains);
                tables.stats = saved.stats;
                first = saved.geese + 1;
            }
        }
        for geese in first..=max_geese {
            tables
                .planes
                .push(Some(std::array::from_fn(|_| Layer::new(geese))));
            let chains = (geese < max_geese).then(|| std::array::from_fn(|_| Layer::new(geese)));
            tables.chains.push(chains);
            let started = Instant::now();
            #[cfg(target_arch = "x86_64")]
            let built = match &fast {
                Some(bmi2) => pool.install(|| tables.build_layer(geese, bmi2)),
                None => pool.install(|| tables.build_layer(geese, &PortableBits)),
            };
            #[cfg(not(target_arch = "x86_64"))]
            let built = pool.install(|| tables.build_layer(geese, &PortableBits));
            let placements = binomial(POINTS as u32, geese);
            let mut stats = SidewaysLayerStats {
                geese,
                placements,
                fox_to_move: placements * (POINTS as u64 - geese as u64),
                fox_wins: built.counts[FOX_FOX],
                geese_wins: built.counts[FOX_GEESE],
                longest: built.longest,
                geese_to_move_fox_wins: built.counts[GEESE_FOX],
                geese_to_move_geese_wins: built.counts[GEESE_GEESE],
                elapsed: started.elapsed(),
                saved_in: None,
            };
            tables.settled.push(built.settled);
            tables.stats.push(stats.clone());
            let here = (geese - GEESE_NEEDED) as usize;
            if let (Some(dir), Some(chains)) = (&config.layers_dir, &tables.chains[here]) {
                let saving = Instant::now();
                saved_chains::save(dir, corner_links, &tables.stats, chains)?;
                stats.saved_in = Some(saving.elapsed());
            }
            progress(&stats, &tables);
            // The next layer reads this layer's chain planes, not the
            // layer below's.
            if here > 0 {
                tables.chains[here - 1] = None;
            }
            if keep == Keep::Top && geese < max_geese {
                tables.planes[here] = None;
            }
        }
        Ok(tables)
    }

    /// The fewest geese of a layer the tables still hold.
    pub fn min_geese(&self) -> u32 {
        GEESE_NEEDED + self.planes.iter().take_while(|p| p.is_none()).count() as u32
    }

    /// Whether the tables answer placements of `geese` geese.
    fn holds(&self, geese: u32) -> bool {
        geese < GEESE_NEEDED || (geese >= self.min_geese() && geese <= self.max_geese())
    }

    /// Each layer's statistics, fewest geese first, dropped layers included.
    pub fn layer_stats(&self) -> &[SidewaysLayerStats] {
        &self.stats
    }

    /// The most geese of a placement the tables hold.
    pub fn max_geese(&self) -> u32 {
        GEESE_NEEDED + self.planes.len() as u32 - 1
    }

    /// Memory the layers still held take, in bytes.
    pub fn bytes(&self) -> u64 {
        self.planes
            .iter()
            .flatten()
            .flat_map(|p| p.iter())
            .map(|l| l.words.len() as u64 * 8)
            .sum()
    }

    fn plane(&self, geese: u32, plane: usize) -> &Layer {
        let layer = self.planes[(geese - GEESE_NEEDED) as usize].as_ref();
        &layer.expect("a layer still held (checked by the caller)")[plane]
    }

    /// A stored plane of a placement, as a compact set of fox points.
    #[inline]
    fn stored(&self, geese: u64, plane: usize, bits: &impl BitScatter) -> u64 {
        let packed = self
            .plane(geese.count_ones(), plane)
            .get(self.ranker.rank(geese));
        bits.deposit(packed, ALL & !geese)
    }

    /// Builds a layer, level by level, the groups of a level at once.
    fn build_layer(&self, geese: u32, bits: &impl BitScatter) -> BuiltLayer {
        let plan = LevelPlan::new(&self.board, geese);
        let mut built = BuiltLayer {
            counts: [0; 4],
            longest: 0,
            settled: vec![FIFTY_MOVE_PLIES as u8; MOST_SUMMED_ROWS + 1],
        };
        for level in &plan.levels {
            let groups: Vec<(u32, u32, [u64; 4])> = level
                .par_iter()
                .map(|counts| {
                    let jobs = plan.jobs(std::slice::from_ref(counts));
                    let (work, steps, settled) = self.solve_group(&plan, &jobs, bits, None);
                    let mut counted = [0u64; 4];
                    for job in &jobs {
                        for_each_placement(&plan, job, |i, g, _, _| {
                            let empty = ALL & !g;
                            let rank = self.ranker.rank(g);
                            for (plane, array) in work.now.iter().enumerate() {
                                let set = load(array, i) & empty;
                                self.plane(geese, plane).set(rank, bits.extract(set, empty));
                                counted[plane] += set.count_ones() as u64;
                            }
                            if let Some(chains) = &self.chains[(geese - GEESE_NEEDED) as usize] {
                                let (win, lose) = self.chain_sets(&work, i, g, bits);
                                chains[CHAIN_WIN].set(rank, bits.extract(win, empty));
                                chains[CHAIN_LOSE].set(rank, bits.extract(lose, empty));
                            }
                        });
                    }
                    (steps, settled, counted)
                })
                .collect();
            let mut settled = 0;
            for (steps, m, counted) in groups {
                built.longest = built.longest.max(steps);
                settled = settled.max(m);
                for (total, c) in built.counts.iter_mut().zip(counted) {
                    *total += c;
                }
            }
            built.settled[potential_of(&level[0])] = settled as u8;
        }
        built
    }

    /// Computes `A_n` and `B_n` of one group (module docs) up to
    /// `n = 100`, or `stop_at` if given, or until a step changes nothing;
    /// returns the work arrays (`now` holds the result), the steps, and
    /// the `m` at which the level settled (100 if it did not).
    fn solve_group(
        &self,
        plan: &LevelPlan,
        jobs: &[Job],
        bits: &impl BitScatter,
        stop_at: Option<u32>,
    ) -> (LevelWork, u32, u32) {
        let size = jobs.last().map_or(0, |j| (j.offset + j.end) as usize);
        let mut work = LevelWork::new(size);
        jobs.par_iter().for_each(|job| {
            for_each_placement(plan, job, |i, g, _, _| self.exits(&work, i, g, bits));
        });
        let last = stop_at.unwrap_or(FIFTY_MOVE_PLIES as u32);
        let mut steps = 0;
        while steps < last {
            let changed = jobs
                .par_iter()
                .map(|job| {
                    let mut changed = false;
                    for_each_placement(plan, job, |i, g, digits, radix| {
                        changed |= self.step(plan, &work, i, g, digits, radix);
                    });
                    changed
                })
                .reduce(|| false, |a, b| a || b);
            std::mem::swap(&mut work.now, &mut work.next);
            steps += 1;
            if !changed {
                return (work, steps, steps - 1);
            }
        }
        (work, steps, FIFTY_MOVE_PLIES as u32)
    }

    /// The exits of placement `g` (level index `i`) and `A_0`, `B_0`.
    fn exits(&self, work: &LevelWork, i: usize, g: u64, bits: &impl BitScatter) {
        let empty = ALL & !g;
        // Geese to move: forward steps leave the level.
        let (mut all_fox, mut any_geese, mut targets) = (ALL, 0u64, 0u64);
        for s in points_of(g) {
            for t in points_of(self.board.goose_to[s] & empty) {
                let after = g ^ (1 << s) ^ (1 << t);
                all_fox &= self.stored(after, FOX_FOX, bits) | 1 << t;
                any_geese |= self.stored(after, FOX_GEESE, bits) & !(1 << t);
                targets |= 1 << t;
            }
            targets |= self.board.goose_side[s] & empty;
        }
        // The geese can move with the fox on f unless every move goes to f.
        let geese_move = match targets.count_ones() {
            0 => 0,
            1 => empty & !targets,
            _ => empty,
        };
        store(&work.forward_all_fox, i, all_fox & empty);
        store(&work.forward_any_geese, i, any_geese & empty);
        store(&work.geese_move, i, geese_move);
        // Fox to move: captures leave the layer.
        let (mut wins, mut lose, mut moves) = (0u64, 0u64, 0u64);
        for f in points_of(empty) {
            let (mut any_win, mut all_lose, mut any) = (false, true, false);
            self.first_jumps(f, g, bits, &mut |win, loss| {
                any = true;
                any_win |= win;
                all_lose &= loss;
            });
            if any_win {
                wins |= 1 << f;
            }
            if all_lose {
                lose |= 1 << f;
            }
            if any || self.board.fox_to[f] & empty != 0 {
                moves |= 1 << f;
            }
        }
        store(&work.capture_wins, i, wins);
        store(&work.captures_lose, i, lose);
        store(&work.fox_moves, i, moves);
        store(&work.now[FOX_FOX], i, 0);
        store(&work.now[FOX_GEESE], i, empty & !moves);
        store(&work.now[GEESE_FOX], i, empty & !geese_move);
        store(&work.now[GEESE_GEESE], i, 0);
    }

    /// Every capture from `at` with the geese `g`, by its first jump:
    /// `visit(the fox wins at some stop of the chain, the geese win at
    /// every stop)`, read from the layer below's chain planes.
    fn first_jumps(
        &self,
        at: usize,
        g: u64,
        bits: &impl BitScatter,
        visit: &mut impl FnMut(bool, bool),
    ) {
        let jumps = &self.board.jumps[at][..self.board.jump_count[at] as usize];
        for &(over, land) in jumps {
            if g >> over & 1 == 0 || g >> land & 1 != 0 {
                continue;
            }
            let after = g & !(1 << over);
            let k = after.count_ones();
            if k < GEESE_NEEDED {
                visit(true, false);
                continue;
            }
            match &self.chains[(k - GEESE_NEEDED) as usize] {
                Some(chains) => {
                    let rank = self.ranker.rank(after);
                    let empty = ALL & !after;
                    let win = bits.deposit(chains[CHAIN_WIN].get(rank), empty) >> land & 1 != 0;
                    let lose = bits.deposit(chains[CHAIN_LOSE].get(rank), empty) >> land & 1 != 0;
                    visit(win, lose);
                }
                // After the build, with every layer held ([`Self::can_solve_again`]).
                None => {
                    let (mut win, mut lose) = (false, true);
                    self.chain_from_planes(land as usize, after, &mut win, &mut lose);
                    visit(win, lose);
                }
            }
        }
    }

    /// The chain planes' bits of a fox that has landed on `at` with the
    /// geese `left`, from the planes of every layer below.
    fn chain_from_planes(&self, at: usize, left: u64, win: &mut bool, lose: &mut bool) {
        if left.count_ones() < GEESE_NEEDED {
            *win = true;
            *lose = false;
            return;
        }
        *win |= self.stored(left, GEESE_FOX, &PortableBits) >> at & 1 != 0;
        *lose &= self.stored(left, GEESE_GEESE, &PortableBits) >> at & 1 != 0;
        let jumps = &self.board.jumps[at][..self.board.jump_count[at] as usize];
        for &(over, land) in jumps {
            if left >> over & 1 != 0 && left >> land & 1 == 0 {
                self.chain_from_planes(land as usize, left & !(1 << over), win, lose);
            }
        }
    }

    /// Whether a group of `geese` geese can be solved again: its captures
    /// need the chain planes of the layer below, or every layer below.
    fn can_solve_again(&self, geese: u32) -> bool {
        geese == GEESE_NEEDED
            || self.chains[(geese - 1 - GEESE_NEEDED) as usize].is_some()
            || self.min_geese() == GEESE_NEEDED
    }

    /// The chain planes (module docs) of placement `g`, whose values at
    /// `q = 0` are in `work.now`: a fox that has just landed on a point
    /// may stop there (geese to move) or jump on.
    fn chain_sets(&self, work: &LevelWork, i: usize, g: u64, bits: &impl BitScatter) -> (u64, u64) {
        let empty = ALL & !g;
        let mut win = load(&work.now[GEESE_FOX], i) & empty;
        let mut lose = load(&work.now[GEESE_GEESE], i) & empty;
        for f in points_of(empty) {
            self.first_jumps(f, g, bits, &mut |w, l| {
                if w {
                    win |= 1 << f;
                }
                if !l {
                    lose &= !(1 << f);
                }
            });
        }
        (win, lose)
    }

    /// One step `n − 1 → n` for placement `g`; whether anything changed.
    fn step(
        &self,
        plan: &LevelPlan,
        work: &LevelWork,
        i: usize,
        g: u64,
        digits: &[usize; 7],
        radix: &[u64; 7],
    ) -> bool {
        let empty = ALL & !g;
        let now: [u64; 4] = std::array::from_fn(|p| load(&work.now[p], i));
        // Fox to move: a step to a geese-to-move state of the same placement.
        let mut fox_fox = now[FOX_FOX] | load(&work.capture_wins, i);
        let mut fox_geese = now[FOX_GEESE];
        let lose_candidates =
            load(&work.captures_lose, i) & load(&work.fox_moves, i) & empty & !fox_geese;
        for f in points_of(empty) {
            let steps = self.board.fox_to[f] & empty;
            if steps & now[GEESE_FOX] != 0 {
                fox_fox |= 1 << f;
            }
            if lose_candidates >> f & 1 != 0 && steps & !now[GEESE_GEESE] == 0 {
                fox_geese |= 1 << f;
            }
        }
        // Geese to move: sideways steps to fox-to-move states of the level.
        let (mut all_fox, mut any_geese) = (
            load(&work.forward_all_fox, i),
            load(&work.forward_any_geese, i),
        );
        for s in points_of(g) {
            for t in points_of(self.board.goose_side[s] & empty) {
                let row = self.board.row[s] as usize;
                let (start, _) = plan.rows[row];
                let after = g ^ (1 << s) ^ (1 << t);
                let row_bits = (after >> start) & ((1 << plan.rows[row].1) - 1);
                let digit = plan.digit[row][row_bits as usize] as i64;
                let j = (i as i64 + (digit - digits[row] as i64) * radix[row] as i64) as usize;
                all_fox &= load(&work.now[FOX_FOX], j) | 1 << t;
                any_geese |= load(&work.now[FOX_GEESE], j) & !(1 << t);
            }
        }
        let geese_fox = now[GEESE_FOX] | (all_fox & load(&work.geese_move, i));
        let geese_geese = now[GEESE_GEESE] | any_geese;
        let next = [
            fox_fox & empty,
            fox_geese & empty,
            geese_fox & empty,
            geese_geese & empty,
        ];
        for (p, &x) in next.iter().enumerate() {
            store(&work.next[p], i, x);
        }
        next != now
    }

    fn check(&self, p: &Position) -> Result<(), RetroError> {
        let v = p.variant();
        if !v.is_classic() || !v.sideways {
            return Err(RetroError::NotSideways(v.to_string()));
        }
        if v.corner_links != self.corner_links {
            let name = |c: bool| if c { "corner-links" } else { "plain" };
            return Err(RetroError::Board {
                built: name(self.corner_links),
                asked: name(v.corner_links),
            });
        }
        let found = p.geese().count();
        if found > self.max_geese() {
            return Err(RetroError::TooManyGeese {
                found,
                most: self.max_geese(),
            });
        }
        if !self.holds(found) {
            return Err(RetroError::Dropped {
                found,
                least: self.min_geese(),
                most: self.max_geese(),
            });
        }
        let most = self.settled_counter(self.board.compact_set(p.geese()));
        if p.quiet() > most {
            return Err(RetroError::SidewaysQuiet {
                quiet: p.quiet(),
                most,
            });
        }
        Ok(())
    }

    /// The highest quiet counter at which the level of `geese` has its
    /// values at counter 0 (module docs): 0 for a level that has not
    /// settled, and any counter once fewer than four geese are left.
    fn settled_counter(&self, geese: u64) -> u16 {
        let k = geese.count_ones();
        if k < GEESE_NEEDED {
            return FIFTY_MOVE_PLIES;
        }
        let rows = self.board.row_counts(geese);
        let m = self.settled[(k - GEESE_NEEDED) as usize][potential_of(&rows)];
        FIFTY_MOVE_PLIES - m as u16
    }

    /// The value at `q = 0` of a placement with the fox on `fox`.
    fn value_at_zero(&self, geese: u64, fox: u64, side: Side) -> Value {
        if geese.count_ones() < GEESE_NEEDED {
            return Value::Win(Side::Foxes);
        }
        let (f, g) = match side {
            Side::Foxes => (FOX_FOX, FOX_GEESE),
            Side::Geese => (GEESE_FOX, GEESE_GEESE),
        };
        if self.stored(geese, f, &PortableBits) & fox != 0 {
            Value::Win(Side::Foxes)
        } else if self.stored(geese, g, &PortableBits) & fox != 0 {
            Value::Win(Side::Geese)
        } else {
            Value::Draw
        }
    }

    /// The value of `p`, one table lookup. Its quiet counter must be one
    /// at which its level has settled (module docs), or 0.
    pub fn outcome(&self, p: &Position) -> Result<Value, RetroError> {
        self.check(p)?;
        let geese = self.board.compact_set(p.geese());
        let fox = self.board.compact_set(p.foxes());
        Ok(self.value_at_zero(geese, fox, p.side()))
    }

    /// The value of `p` (as [`Self::outcome`]) and a move that keeps it,
    /// one that resets the quiet counter where one does (so that a winner
    /// playing these moves makes progress). A move inside a level that has
    /// not settled far enough needs values the tables do not keep: the
    /// level is then solved again to the step the counter needs.
    pub fn value(&self, p: &Position) -> Result<SidewaysValue, RetroError> {
        let value = self.outcome(p)?;
        let mover_keeps = match value {
            Value::Win(w) => w == p.side(),
            Value::Draw => true,
        };
        if !mover_keeps || p.outcome_without_history().is_some() {
            return Ok(SidewaysValue { value, best: None });
        }
        let children = self.children(p)?;
        let keeping = |reset: bool| {
            children
                .iter()
                .find(|&&(_, v, q)| v == value && (q == 0) == reset)
                .map(|&(m, _, _)| m)
        };
        Ok(SidewaysValue {
            value,
            best: keeping(true).or_else(|| keeping(false)),
        })
    }

    /// Every legal move of `p` (which must pass [`Self::check`]) with the
    /// value and quiet counter after it; an error if a capture reaches a
    /// layer the tables no longer hold.
    fn children(&self, p: &Position) -> Result<Vec<(Move, Value, u16)>, RetroError> {
        let mut solved_again = None;
        p.legal_moves()
            .iter()
            .map(|&m| {
                let mut child = *p;
                child.play_unchecked(m);
                let found = child.geese().count();
                if !self.holds(found) {
                    return Err(RetroError::Dropped {
                        found,
                        least: self.min_geese(),
                        most: self.max_geese(),
                    });
                }
                let g = self.board.compact_set(child.geese());
                let f = self.board.compact_set(child.foxes());
                let q = child.quiet();
                let v = if q <= self.settled_counter(g) {
                    self.value_at_zero(g, f, child.side())
                } else if !self.can_solve_again(found) {
                    return Err(RetroError::Dropped {
                        found: found - 1,
                        least: self.min_geese(),
                        most: self.max_geese(),
                    });
                } else {
                    let level = solved_again
                        .get_or_insert_with(|| self.group_at(g, (FIFTY_MOVE_PLIES - q) as u32));
                    level(g, f, child.side())
                };
                Ok((m, v, q))
            })
            .collect()
    }

    /// Plays `lines` games over the real rules ([`Game`], whole history)
    /// from `p`, checking every position on the way: its value must be the
    /// one its children's values and the rules engine's moves make it
    /// (Bellman's equation of G″). The side the tables give the win plays
    /// the moves [`Self::value`] gives, the other side random ones; in a
    /// draw both sides play random moves that keep the draw. A game must
    /// not end with a result the tables deny (a winner may still let the
    /// game be drawn by repetition; those are counted). A line stops where
    /// its counter passes what its level's tables answer.
    pub fn check_lines(
        &self,
        p: &Position,
        lines: usize,
        seed: u64,
    ) -> Result<SidewaysCheck, RetroError> {
        self.check(p)?;
        let mut oracle = SidewaysLines {
            tables: self,
            children: None,
        };
        let (replay, ends) = crate::replay::check_lines(&mut oracle, p, lines, seed, |_, _| {})?;
        Ok(SidewaysCheck {
            replay,
            won: ends.won,
            drawn: ends.drawn,
            stopped: ends.stopped,
        })
    }

    /// The group of placement `geese` solved to `n` steps: the values at
    /// counter `100 − n` of its placements, as a lookup.
    fn group_at(&self, geese: u64, n: u32) -> impl Fn(u64, u64, Side) -> Value + '_ {
        let plan = LevelPlan::new(&self.board, geese.count_ones());
        let counts = self.board.row_counts(geese);
        let jobs = plan.jobs(&[counts]);
        let (work, _, _) = self.solve_group(&plan, &jobs, &PortableBits, Some(n));
        move |g: u64, fox: u64, side: Side| {
            // The group index of g: mixed radix over the rows' choices.
            let (mut i, mut radix) = (0usize, 1usize);
            for (r, &count) in counts.iter().enumerate() {
                let (start, len) = plan.rows[r];
                let row_bits = (g >> start) & ((1 << len) - 1);
                i += plan.digit[r][row_bits as usize] as usize * radix;
                radix *= plan.choices[r][count as usize].len();
            }
            let (f, gw) = match side {
                Side::Foxes => (FOX_FOX, FOX_GEESE),
                Side::Geese => (GEESE_FOX, GEESE_GEESE),
            };
            if load(&work.now[f], i) & fox != 0 {
                Value::Win(Side::Foxes)
            } else if load(&work.now[gw], i) & fox != 0 {
                Value::Win(Side::Geese)
            } else {
                Value::Draw
            }
        }
    }
}

/// The sideways tables as a line checker's oracle. A line stops where the
/// tables answer no more: a quiet counter past what its level's tables
/// answer, or a capture into a layer the build did not keep.
struct SidewaysLines<'a> {
    tables: &'a SidewaysTables,
    /// The children of the position `value` was asked last.
    children: Option<Vec<(Move, Value)>>,
}

impl LineOracle for SidewaysLines<'_> {
    type Error = RetroError;

    fn value(&mut self, game: &Game, over: bool, _: usize) -> Result<Option<Value>, RetroError> {
        let here = game.position();
        if over {
            return Ok(self.tables.outcome(here).ok());
        }
        let children = self
            .tables
            .check(here)
            .and_then(|_| self.tables.children(here));
        match children {
            Ok(children) => {
                self.children = Some(children.into_iter().map(|(m, v, _)| (m, v)).collect());
                Ok(Some(self.tables.outcome(here)?))
            }
            Err(_) => Ok(None),
        }
    }

    fn children(&mut self, _: &Position) -> Result<Option<Vec<(Move, Value)>>, RetroError> {
        Ok(self.children.take())
    }

    fn winning_move(
        &mut self,
        here: &Position,
        _: Option<&[(Move, Value)]>,
    ) -> Result<Move, RetroError> {
        Ok(self
            .tables
            .value(here)?
            .best
            .expect("checked: the winner has a winning move"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retro::plain::classic_variant;
    use crate::retro::saved_chains::{chains_path, find_saved};
    use crate::{Solver, SolverConfig};
    use halatafl_rules::{Bitboard, Point, Variant};
    use rand::seq::{IndexedRandom, SliceRandom};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashMap;
    use std::time::Duration;

    fn sideways(corner_links: bool) -> Variant {
        Variant::classic(17, true)
            .unwrap()
            .with_corner_links(corner_links)
    }

    /// Geese on rows 5 to 7 and the fox on rows 6 or 7 (the top arm, where
    /// a few geese can shut it in), counter 0.
    fn random_position(rng: &mut ChaCha8Rng, geese: usize, corner_links: bool) -> Position {
        let mut points: Vec<Point> = Point::all().filter(|p| p.row() >= 3).collect();
        points.shuffle(rng);
        let set = points[..geese]
            .iter()
            .fold(Bitboard::EMPTY, |b, &p| b.with(p));
        let fox_points: Vec<Point> = Point::all()
            .filter(|p| p.row() >= 5 && !set.contains(*p))
            .collect();
        let fox = match fox_points.choose(rng) {
            Some(&f) => f,
            None => *Point::all()
                .filter(|p| !set.contains(*p))
                .collect::<Vec<_>>()
                .choose(rng)
                .unwrap(),
        };
        let side = if rng.random_bool(0.5) {
            Side::Foxes
        } else {
            Side::Geese
        };
        Position::new(
            sideways(corner_links),
            Bitboard::EMPTY.with(fox),
            set,
            side,
            0,
        )
        .unwrap()
    }

    /// Geese only on rows 5 to 7 and the fox on rows 6 or 7 (anywhere
    /// when six geese or more leave it too little room there): the few
    /// geese can shut the fox in there, so geese wins are common.
    fn position_in_the_top_arm(rng: &mut ChaCha8Rng, geese: usize) -> Position {
        let mut points: Vec<Point> = Point::all().filter(|p| p.row() >= 4).collect();
        points.shuffle(rng);
        let set = points[..geese]
            .iter()
            .fold(Bitboard::EMPTY, |b, &p| b.with(p));
        let fox_points: Vec<Point> = Point::all()
            .filter(|p| !set.contains(*p))
            .filter(|p| p.row() >= 5 || set.count() >= 6)
            .collect();
        let fox = *fox_points.choose(rng).unwrap();
        Position::new(
            sideways(false),
            Bitboard::EMPTY.with(fox),
            set,
            Side::Foxes,
            0,
        )
        .unwrap()
    }

    type Memo = HashMap<(u64, u64, bool, u16), Value>;

    /// The value of `p` in G″ (rules 1-3 and 5; module docs) by plain
    /// minimax over the rules engine's moves, with the quiet counter in the
    /// state, which makes the game acyclic. A move that resets the counter
    /// ends the recursion with the tables' value at counter 0, which the
    /// test checks at other positions: what this checks independently is
    /// everything inside a level (the steps `A_n`, `B_n`, the sideways
    /// numbering, the counter and rule 3 before rule 5) and the exits'
    /// wiring.
    fn minimax(p: &Position, tables: &SidewaysTables, memo: &mut Memo) -> Value {
        if let Some(o) = p.outcome_without_history() {
            return o.winner.map_or(Value::Draw, Value::Win);
        }
        if p.quiet() >= FIFTY_MOVE_PLIES {
            return Value::Draw;
        }
        let key = (p.foxes().0, p.geese().0, p.side() == Side::Foxes, p.quiet());
        if let Some(&v) = memo.get(&key) {
            return v;
        }
        let mut best = Value::Win(p.side().other());
        for m in p.legal_moves().iter().copied() {
            let mut child = *p;
            child.play_unchecked(m);
            let v = if child.quiet() == 0 {
                tables.outcome(&child).unwrap()
            } else {
                minimax(&child, tables, memo)
            };
            if v == Value::Win(p.side()) {
                best = v;
                break;
            }
            if v == Value::Draw {
                best = v;
            }
        }
        memo.insert(key, best);
        best
    }

    #[test]
    fn values_and_moves_agree_with_minimax_and_df_pn() {
        let config = RetroConfig {
            threads: 2,
            memory_limit_mib: None,
            layers_dir: None,
        };
        let tables = SidewaysTables::build(7, false, &config, |_, _| {}).unwrap();
        let mut solver = Solver::new(SolverConfig {
            budget_nodes: 200_000,
            tt_mib: 64,
            ..SolverConfig::default()
        })
        .unwrap();
        let mut memo = Memo::new();
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let kind = |v: Value| match v {
            Value::Win(Side::Foxes) => 0,
            Value::Win(Side::Geese) => 1,
            Value::Draw => 2,
        };
        // Positions of each value, the tables' verdict choosing; minimax
        // judges every one and each move `value` gives, df-pn the decisive
        // ones it finishes (draws under the fifty-move rule are beyond it).
        let want = [12usize, 12, 12];
        let (mut seen, mut by_df_pn, mut later_counters) = ([0usize; 3], 0, 0);
        for i in 0..200_000 {
            let mut p = if i % 2 == 0 {
                random_position(&mut rng, 5 + i % 3, false)
            } else {
                position_in_the_top_arm(&mut rng, 4 + i % 4)
            };
            if i % 4 == 1 {
                p = Position::new(p.variant(), p.foxes(), p.geese(), Side::Geese, 0).unwrap();
            }
            let k = kind(tables.outcome(&p).unwrap());
            if seen[k] >= want[k] {
                continue;
            }
            if memo.len() > 4_000_000 {
                memo.clear();
            }
            let v = tables.value(&p).unwrap();
            assert_eq!(v.value, minimax(&p, &tables, &mut memo), "{}", p.fen());
            if let Some(m) = v.best {
                let mut child = p;
                child.play_unchecked(m);
                let after = match child.quiet() {
                    0 => tables.outcome(&child).unwrap(),
                    _ => minimax(&child, &tables, &mut memo),
                };
                assert_eq!(after, v.value, "{} then {m}", p.fen());
            } else {
                let mover_keeps = v.value != Value::Win(p.side().other());
                assert!(
                    !mover_keeps || p.outcome_without_history().is_some(),
                    "{}: no move keeps {:?}",
                    p.fen(),
                    v.value
                );
            }
            // The same placement later in the level: where the tables
            // answer its counter, minimax must agree.
            let q = rng.random_range(1..FIFTY_MOVE_PLIES);
            let later = Position::new(p.variant(), p.foxes(), p.geese(), p.side(), q).unwrap();
            if let Ok(v) = tables.outcome(&later) {
                assert_eq!(v, minimax(&later, &tables, &mut memo), "{}", later.fen());
                later_counters += 1;
            }
            if k != 2 {
                if let Some(expected) = solver.solve(&p).value {
                    assert_eq!(v.value, expected, "df-pn on {}", p.fen());
                    by_df_pn += 1;
                }
            }
            seen[k] += 1;
            if seen == want {
                break;
            }
        }
        assert_eq!(seen, want, "every value met");
        assert!(
            by_df_pn >= 16,
            "df-pn confirmed only {by_df_pn} decisive values"
        );
        assert!(
            later_counters >= 18,
            "only {later_counters} counters above 0 answered"
        );
    }

    #[test]
    fn lines_over_the_real_rules_are_consistent() {
        let config = RetroConfig {
            threads: 2,
            memory_limit_mib: None,
            layers_dir: None,
        };
        let tables = SidewaysTables::build(6, false, &config, |_, _| {}).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (mut ended, mut checked) = ([0usize; 3], 0);
        for i in 0..60 {
            let p = if i % 2 == 0 {
                random_position(&mut rng, 6, false)
            } else {
                position_in_the_top_arm(&mut rng, 6)
            };
            let check = tables.check_lines(&p, 3, i).unwrap();
            assert!(check.replay.checked > 0);
            checked += check.replay.checked;
            ended[0] += check.won;
            ended[1] += check.drawn;
            ended[2] += check.stopped;
        }
        // Won, drawn, and stopped where the counter passed what the tables
        // answer (shuffling in a drawn level).
        assert!(ended[0] > 0 && ended[1] > 0, "{ended:?}");
        assert!(checked > 1000, "{checked} positions checked");
    }

    #[test]
    fn keeping_only_the_top_layer_gives_the_same_values() {
        let all = SidewaysTables::build(
            7,
            false,
            &RetroConfig {
                threads: 2,
                memory_limit_mib: None,
                layers_dir: None,
            },
            |_, _| {},
        )
        .unwrap();
        // A cap that fits the top layer's build but not all layers.
        let cap = Keep::Top.need_mib(7, 2);
        assert!(cap < Keep::All.need_mib(7, 2));
        let mut reported = Vec::new();
        let top = SidewaysTables::build(
            7,
            false,
            &RetroConfig {
                threads: 2,
                memory_limit_mib: Some(cap),
                layers_dir: None,
            },
            |layer, tables| reported.push((layer.geese, tables.min_geese())),
        )
        .unwrap();
        // Each layer is reported while it is held, the one below dropped.
        assert_eq!(reported, vec![(4, 4), (5, 5), (6, 6), (7, 7)]);
        assert_eq!(top.min_geese(), 7);
        assert_eq!(top.bytes(), 4 * plane_bytes(7));
        assert!(top.bytes() < all.bytes());
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for i in 0..2_000 {
            let p = if i % 2 == 0 {
                random_position(&mut rng, 7, false)
            } else {
                position_in_the_top_arm(&mut rng, 7)
            };
            assert_eq!(top.outcome(&p), all.outcome(&p), "{}", p.fen());
        }
        let six = random_position(&mut rng, 6, false);
        assert_eq!(
            top.outcome(&six),
            Err(RetroError::Dropped {
                found: 6,
                least: 7,
                most: 7
            })
        );
        assert!(matches!(
            SidewaysTables::build(
                7,
                false,
                &RetroConfig {
                    threads: 2,
                    memory_limit_mib: Some(cap - 1),
                    layers_dir: None,
                },
                |_, _| {},
            ),
            Err(RetroError::Memory { .. })
        ));
    }

    /// The statistics a build reports, less its timings.
    fn without_times(stats: &[SidewaysLayerStats]) -> Vec<SidewaysLayerStats> {
        stats
            .iter()
            .map(|s| SidewaysLayerStats {
                elapsed: Duration::ZERO,
                saved_in: None,
                ..s.clone()
            })
            .collect()
    }

    #[test]
    fn a_build_resumes_from_saved_chain_planes() {
        let dir = std::env::temp_dir().join(format!("halatafl-chains-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let config = |layers_dir: Option<&std::path::Path>| RetroConfig {
            threads: 2,
            memory_limit_mib: None,
            layers_dir: layers_dir.map(|d| d.to_path_buf()),
        };
        let whole = SidewaysTables::build(7, false, &config(None), |_, _| {}).unwrap();
        // A build to 6 saves layers 4 and 5 (not its top: it has no chain
        // planes), each before it is reported.
        let mut saved = Vec::new();
        SidewaysTables::build(6, false, &config(Some(&dir)), |layer, _| {
            saved.push((layer.geese, layer.saved_in.is_some()));
            assert_eq!(
                chains_path(&dir, false, layer.geese).exists(),
                layer.saved_in.is_some()
            );
        })
        .unwrap();
        assert_eq!(saved, vec![(4, true), (5, true), (6, false)]);
        // A build to 7 goes on above layer 5 and saves layer 6 on the way.
        let found = find_saved(&dir, false, 7).unwrap().unwrap();
        assert_eq!(found.geese, 5);
        assert_eq!(find_saved(&dir, true, 7).unwrap(), None);
        let mut built = Vec::new();
        let resumed = SidewaysTables::build(7, false, &config(Some(&dir)), |layer, _| {
            built.push(layer.geese)
        })
        .unwrap();
        assert_eq!(built, vec![6, 7]);
        assert!(chains_path(&dir, false, 6).exists());
        assert_eq!(resumed.min_geese(), 6);
        assert_eq!(
            without_times(resumed.layer_stats()),
            without_times(whole.layer_stats())
        );
        let (mut rng, mut answered) = (ChaCha8Rng::seed_from_u64(17), 0);
        for i in 0..2_000 {
            let p = if i % 2 == 0 {
                random_position(&mut rng, 7, false)
            } else {
                position_in_the_top_arm(&mut rng, 7)
            };
            assert_eq!(resumed.outcome(&p), whole.outcome(&p), "{}", p.fen());
            // Where a level must be solved again the resumed tables lack
            // the layers below; elsewhere the moves are the same.
            if let Ok(v) = resumed.value(&p) {
                assert_eq!(Ok(v), whole.value(&p), "{}", p.fen());
                answered += 1;
            }
        }
        assert!(answered > 1_000, "{answered} moves compared");
        // A damaged file is refused, by name, with what is wrong.
        let six = chains_path(&dir, false, 6);
        let mut bytes = std::fs::read(&six).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x10;
        std::fs::write(&six, &bytes).unwrap();
        let refusal = |dir: &std::path::Path| match SidewaysTables::build(
            7,
            false,
            &config(Some(dir)),
            |_, _| {},
        ) {
            Err(RetroError::SavedChains { path, what }) => format!("{path}: {what}"),
            other => panic!(
                "a damaged file was read: {:?}",
                other.map(|t| t.max_geese())
            ),
        };
        let text = refusal(&dir);
        assert!(
            text.contains("chains-classic-sideways-6.bin") && text.contains("checksum"),
            "{text}"
        );
        std::fs::write(&six, &bytes[..middle]).unwrap();
        let text = refusal(&dir);
        assert!(text.contains("bytes; its header says"), "{text}");
        bytes[..8].copy_from_slice(b"NOTCHAIN");
        std::fs::write(&six, &bytes).unwrap();
        let text = refusal(&dir);
        assert!(text.contains("wrong magic bytes"), "{text}");
        // The layer below is whole: without layer 6's file the build
        // resumes above 5 again.
        std::fs::remove_file(&six).unwrap();
        let again = SidewaysTables::build(7, false, &config(Some(&dir)), |_, _| {}).unwrap();
        assert_eq!(
            without_times(again.layer_stats()),
            without_times(whole.layer_stats())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_what_it_cannot_answer() {
        let config = RetroConfig {
            threads: 1,
            memory_limit_mib: None,
            layers_dir: None,
        };
        let tables = SidewaysTables::build(5, false, &config, |_, _| {}).unwrap();
        let forward_only = Position::start(classic_variant(13, false).unwrap());
        assert!(matches!(
            tables.value(&forward_only),
            Err(RetroError::NotSideways(_))
        ));
        let counted = Position::from_fen(
            ".../.../......./...F.../GGGG.../.../... f 99",
            sideways(false),
        )
        .unwrap();
        assert!(matches!(
            tables.value(&counted),
            Err(RetroError::SidewaysQuiet { quiet: 99, most }) if most < 99
        ));
        let start = Position::start(Variant::classic(13, true).unwrap());
        assert_eq!(
            tables.value(&start),
            Err(RetroError::TooManyGeese { found: 13, most: 5 })
        );
    }
}
