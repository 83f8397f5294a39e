//! Classic Fox and Geese without sideways steps, solved whole: a
//! retrograde analysis (Ströhlein 1970; Thompson 1986, "Retrograde analysis
//! of certain endgames") over every placement of the geese.
//!
//! # What is computed
//!
//! Without sideways steps the game is a finite DAG with no draws, and a
//! position's value is a function of (fox point, geese, side to move) alone
//! (the [`crate::dag`] module docs give the argument). Write `G` for a set
//! of geese, `E(G)` for the empty points (fox included), and
//!
//! - `F(G)`: the points `f ∈ E(G)` where the fox, on `f` and to move, wins;
//! - `W(G)`: the same with the geese to move.
//!
//! With `G ≥ 4` geese (fewer is rule 1, a fox win), docs/rules.md's rules give
//!
//! - `W(G) = ⋂ over goose steps s→t of (F(G − s + t) ∪ {t})`: the fox wins
//!   with the geese to move if every goose move leads to a fox win; a move
//!   onto the fox's own point is not a move for that fox point, hence the
//!   `∪ {t}`; with no goose move at all the intersection is every point
//!   (rule 3: the geese, who cannot move, lose);
//! - `f ∈ F(G)` if the fox has a step `f→f'` with `f' ∈ W(G)`, or a capture
//!   chain (captures and chains are optional in the classic game: every
//!   prefix of a chain is a move) ending on `l` with the geese `C`
//!   captured and `|G − C| < 4` or `l ∈ W(G − C)`. No move at all: the fox
//!   loses (rule 3).
//!
//! `F(G − s + t)` has the same number of geese and summed rows one higher;
//! `W(G − C)` has fewer geese. So the tables are built layer by layer,
//! fewest geese first (4 up to the position's count), and inside a layer
//! by summed rows, highest first: every value a placement needs is final
//! before it is computed. Placements of one level are independent and are
//! computed in parallel (rayon).
//!
//! # What is stored
//!
//! Only `F`: `W` is recomputed where needed (once per placement for its own
//! `F`, and for the placements left after a capture, stopping at the first
//! goose move that wins). A placement with `k` geese is stored as
//! `33 − k` bits (one per empty point, packed in point order), at the
//! placement's rank among all `C(33, k)` sets of `k` points in the
//! combinatorial number system (colexicographic rank: `Σ_i C(c_i, i + 1)`
//! over its points `c_0 < c_1 < …`; Knuth, TAOCP 7.2.1.3). Every set of
//! points is ranked, reachable or not, so the index needs no table. Up to
//! 17 geese that is `Σ_{k=4}^{17} C(33, k)·(33 − k)` bits, 11.6 GiB; up
//! to 13, 3.1 GiB ([`memory_bytes`]).
//!
//! Packing and unpacking a placement's bits is BMI2's `pext`/`pdep` where
//! the CPU has it fast, a bit loop elsewhere. The moves come from the rules
//! engine's line tables ([`halatafl_rules::geometry::Geometry`]): a goose steps north, north-east or
//! north-west (docs/rules.md: forward and diagonally forward), the fox along
//! any line, and jumps over a neighbour to the point behind it.
//!
//! # How it is checked
//!
//! Tests compare values with the [`crate::dag`] search (which uses the
//! rules engine's move generation) on random positions, and
//! [`RetroTables::check_lines`] checks, along random games over the real
//! rules ([`Game`], whole history), that every position's value is what its
//! children's values and the rules engine's own moves and verdicts make it.

use super::config::{RetroConfig, RetroError};
use super::index::*;
use crate::available_mib;
use crate::dag::check_position;
use crate::replay::{LineOracle, ReplayStats};
use crate::value::Value;
use halatafl_rules::{Game, Move, Position, Side, Variant};
use rayon::prelude::*;

use std::time::{Duration, Instant};

/// One layer of a build: the placements of one number of geese.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerStats {
    /// Geese in the layer's placements.
    pub geese: u32,
    /// Placements, `C(33, geese)`.
    pub placements: u64,
    /// (placement, fox point) states with the fox to move.
    pub fox_to_move: u64,
    /// Of those, the ones the fox wins.
    pub fox_wins: u64,
    /// Time the layer took to build.
    pub elapsed: Duration,
}

/// What a position's value is, with a winning move where the side to move
/// wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetroValue {
    /// The side that wins (this game has no draws, module docs).
    pub winner: Side,
    /// A winning move when the side to move wins; `None` when it loses.
    pub best: Option<Move>,
}

/// The fox-to-move values of every placement of up to `max_geese` geese:
/// classic Fox and Geese without sideways steps, solved.
pub struct RetroTables {
    corner_links: bool,
    board: Board,
    ranker: Ranker,
    /// `layers[k - 4]` holds the placements of `k` geese.
    layers: Vec<Layer>,
    stats: Vec<LayerStats>,
}

/// This game has no draws: a value is a winner.
impl crate::suite::ExactValues for RetroTables {
    type Error = RetroError;

    fn exact_value(&self, p: &Position) -> Result<Value, RetroError> {
        self.winner(p).map(Value::Win)
    }

    fn exact_move_values(&self, p: &Position) -> Result<Vec<(Move, Value)>, RetroError> {
        self.check(p)?;
        Ok(p.legal_moves()
            .iter()
            .map(|&m| {
                let mut child = *p;
                child.play_unchecked(m);
                (m, Value::Win(self.winner_unchecked(&child)))
            })
            .collect())
    }
}

/// Bytes the tables up to `max_geese` geese take.
pub fn memory_bytes(max_geese: u32) -> u64 {
    (GEESE_NEEDED..=max_geese)
        .map(|k| Layer::words_for(k) as u64 * 8)
        .sum()
}

impl RetroTables {
    /// Builds the tables for placements of 4 to `max_geese` geese (at most
    /// 17) on the plain board or the corner-links one. `progress` hears of
    /// each layer as it is done.
    pub fn build(
        max_geese: u32,
        corner_links: bool,
        config: &RetroConfig,
        mut progress: impl FnMut(&LayerStats),
    ) -> Result<RetroTables, RetroError> {
        let need_mib = memory_bytes(max_geese).div_ceil(1 << 20);
        config.check_build(
            max_geese,
            need_mib,
            config.memory_limit_mib.or_else(available_mib),
        )?;
        let mut tables = RetroTables {
            corner_links,
            board: Board::new(corner_links),
            ranker: Ranker::new(),
            layers: Vec::new(),
            stats: Vec::new(),
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads)
            .build()
            .expect("a thread pool starts");
        #[cfg(target_arch = "x86_64")]
        let fast = Bmi2Bits::detect();
        for geese in GEESE_NEEDED..=max_geese {
            tables.layers.push(Layer::new(geese));
            let started = Instant::now();
            #[cfg(target_arch = "x86_64")]
            let fox_wins = match &fast {
                Some(bmi2) => pool.install(|| tables.build_layer(geese, bmi2)),
                None => pool.install(|| tables.build_layer(geese, &PortableBits)),
            };
            #[cfg(not(target_arch = "x86_64"))]
            let fox_wins = pool.install(|| tables.build_layer(geese, &PortableBits));
            let placements = binomial(POINTS as u32, geese);
            let stats = LayerStats {
                geese,
                placements,
                fox_to_move: placements * (POINTS as u64 - geese as u64),
                fox_wins,
                elapsed: started.elapsed(),
            };
            progress(&stats);
            tables.stats.push(stats);
        }
        Ok(tables)
    }

    /// Each layer's statistics, fewest geese first.
    pub fn layer_stats(&self) -> &[LayerStats] {
        &self.stats
    }

    /// The most geese of a placement the tables hold.
    pub fn max_geese(&self) -> u32 {
        GEESE_NEEDED + self.layers.len() as u32 - 1
    }

    /// Memory the tables take, in bytes.
    pub fn bytes(&self) -> u64 {
        self.layers.iter().map(|l| l.words.len() as u64 * 8).sum()
    }

    /// Computes layer `geese`, every lower one being done; returns how many
    /// fox-to-move states the fox wins.
    fn build_layer(&self, geese: u32, bits: &impl BitScatter) -> u64 {
        let plan = LevelPlan::new(&self.board, geese);
        let mut fox_wins = 0;
        for level in &plan.levels {
            fox_wins += plan
                .jobs(level)
                .par_iter()
                .map(|job| self.run_job(&plan, job, bits))
                .sum::<u64>();
        }
        fox_wins
    }

    fn run_job(&self, plan: &LevelPlan, job: &Job, bits: &impl BitScatter) -> u64 {
        let layer = self.layer(job.counts.iter().map(|&n| n as u32).sum());
        let mut fox_wins = 0;
        for_each_placement(plan, job, |_, geese, _, _| {
            let won = self.fox_to_move_wins(geese, bits);
            let empty = ALL & !geese;
            layer.set(self.ranker.rank(geese), bits.extract(won, empty));
            fox_wins += won.count_ones() as u64;
        });
        fox_wins
    }

    fn layer(&self, geese: u32) -> &Layer {
        &self.layers[(geese - GEESE_NEEDED) as usize]
    }

    /// `F(geese)` of the module docs, as a compact set of fox points, from
    /// the finished values of higher placements and smaller layers.
    fn fox_to_move_wins(&self, geese: u64, bits: &impl BitScatter) -> u64 {
        let empty = ALL & !geese;
        let geese_to_move = self.geese_to_move_wins(geese, empty, bits);
        let mut won = 0;
        for f in points_of(empty) {
            if self.board.fox_to[f] & empty & geese_to_move != 0
                || self.capture_wins(f, geese, bits)
            {
                won |= 1 << f;
            }
        }
        won
    }

    /// `W(geese)` over all of `targets`' fox points, stopping as soon as no
    /// fox point of `targets` is left won.
    #[inline]
    fn geese_to_move_wins(&self, geese: u64, targets: u64, bits: &impl BitScatter) -> u64 {
        let empty = ALL & !geese;
        let layer = self.layer(geese.count_ones());
        let mut won = ALL;
        for s in points_of(geese) {
            for t in points_of(self.board.goose_to[s] & empty) {
                let after = geese ^ (1 << s) ^ (1 << t);
                let packed = layer.get(self.ranker.rank(after));
                won &= bits.deposit(packed, ALL & !after) | 1 << t;
                if won & targets == 0 {
                    return 0;
                }
            }
        }
        won
    }

    /// Whether the fox on `at`, with the geese `left`, wins by some capture
    /// from here: a jump, then
    /// either stopping (the geese to move) or jumping on.
    fn capture_wins(&self, at: usize, left: u64, bits: &impl BitScatter) -> bool {
        let jumps = &self.board.jumps[at][..self.board.jump_count[at] as usize];
        for &(over, land) in jumps {
            if left >> over & 1 == 0 || left >> land & 1 != 0 {
                continue;
            }
            let after = left & !(1 << over);
            if after.count_ones() < GEESE_NEEDED
                || self.geese_to_move_wins(after, 1 << land, bits) >> land & 1 != 0
                || self.capture_wins(land as usize, after, bits)
            {
                return true;
            }
        }
        false
    }

    fn check(&self, p: &Position) -> Result<(), RetroError> {
        check_position(p)?;
        if p.variant().corner_links != self.corner_links {
            let name = |c: bool| if c { "corner-links" } else { "plain" };
            return Err(RetroError::Board {
                built: name(self.corner_links),
                asked: name(p.variant().corner_links),
            });
        }
        let found = p.geese().count();
        if found > self.max_geese() {
            return Err(RetroError::TooManyGeese {
                found,
                most: self.max_geese(),
            });
        }
        Ok(())
    }

    /// The winner of `p` (no history: none matters here, see the module
    /// docs), read from the tables.
    pub fn winner(&self, p: &Position) -> Result<Side, RetroError> {
        self.check(p)?;
        Ok(self.winner_unchecked(p))
    }

    fn winner_unchecked(&self, p: &Position) -> Side {
        if p.geese().count() < GEESE_NEEDED {
            return Side::Foxes;
        }
        let geese = self.board.compact_set(p.geese());
        let fox = self.board.compact_set(p.foxes());
        let fox_wins = match p.side() {
            Side::Foxes => {
                let empty = ALL & !geese;
                let packed = self.layer(geese.count_ones()).get(self.ranker.rank(geese));
                PortableBits.deposit(packed, empty) & fox != 0
            }
            Side::Geese => self.geese_to_move_wins(geese, fox, &PortableBits) & fox != 0,
        };
        if fox_wins {
            Side::Foxes
        } else {
            Side::Geese
        }
    }

    /// The winner of `p` and, where the side to move wins, a winning move
    /// (the first in the rules engine's order).
    pub fn value(&self, p: &Position) -> Result<RetroValue, RetroError> {
        let winner = self.winner(p)?;
        let best = if winner == p.side() && p.outcome_without_history().is_none() {
            p.legal_moves().iter().copied().find(|&m| {
                let mut child = *p;
                child.play_unchecked(m);
                self.winner_unchecked(&child) == winner
            })
        } else {
            None
        };
        Ok(RetroValue { winner, best })
    }

    /// Plays `lines` games from `p` over the real rules ([`Game`], whole
    /// history) with the shared checker of [`crate::replay`]: the winner by
    /// the tables plays a winning move, the other side a pseudo-random
    /// legal move (seeded); a finished game must have the tables' winner,
    /// and an unfinished position's winner must be what the engine's legal
    /// moves and the tables' values of the children make it. So a wrong
    /// move table or a wrong stored value on the way shows up as an
    /// inconsistency.
    pub fn check_lines(
        &self,
        p: &Position,
        lines: usize,
        seed: u64,
    ) -> Result<ReplayStats, RetroError> {
        self.check_lines_with(p, lines, seed, |_, _| {})
    }

    /// [`RetroTables::check_lines`], handing `visit` every checked position
    /// with its winner by the tables (for a comparison with another method).
    pub fn check_lines_with(
        &self,
        p: &Position,
        lines: usize,
        seed: u64,
        mut visit: impl FnMut(&Position, Side),
    ) -> Result<ReplayStats, RetroError> {
        self.check(p)?;
        let visit = |p: &Position, v: Value| {
            if let Value::Win(w) = v {
                visit(p, w)
            }
        };
        crate::replay::check_lines(&mut PlainLines(self), p, lines, seed, visit)
            .map(|(stats, _)| stats)
    }
}

/// The plain tables as a line checker's oracle.
struct PlainLines<'a>(&'a RetroTables);

impl LineOracle for PlainLines<'_> {
    type Error = RetroError;

    fn value(&mut self, game: &Game, _: bool, _: usize) -> Result<Option<Value>, RetroError> {
        Ok(Some(Value::Win(self.0.winner_unchecked(game.position()))))
    }

    fn children(&mut self, here: &Position) -> Result<Option<Vec<(Move, Value)>>, RetroError> {
        Ok(Some(
            here.legal_moves()
                .into_iter()
                .map(|m| {
                    let mut child = *here;
                    child.play_unchecked(m);
                    (m, Value::Win(self.0.winner_unchecked(&child)))
                })
                .collect(),
        ))
    }

    fn winning_move(
        &mut self,
        here: &Position,
        children: Option<&[(Move, Value)]>,
    ) -> Result<Move, RetroError> {
        let mover = Value::Win(here.side());
        Ok(children
            .and_then(|c| c.iter().find(|c| c.1 == mover))
            .expect("checked: the winner to move has a winning move")
            .0)
    }
}

/// The classic variant these tables answer for, with `geese` at the start.
pub fn classic_variant(geese: u8, corner_links: bool) -> Option<Variant> {
    Variant::classic(geese, false)
        .ok()
        .map(|v| v.with_corner_links(corner_links))
}

#[cfg(test)]
mod tests {
    use super::super::MAX_THREADS;
    use super::*;
    use crate::dag::DagError;
    use crate::{DagConfig, DagSolver};
    use halatafl_rules::{Bitboard, Point};
    use rand::seq::{IndexedRandom, SliceRandom};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn config() -> RetroConfig {
        RetroConfig {
            threads: 2,
            memory_limit_mib: None,
            layers_dir: None,
        }
    }

    #[test]
    fn ranks_are_a_bijection_onto_the_binomial_range() {
        let ranker = Ranker::new();
        for k in [1u32, 2, 3] {
            let mut seen = vec![false; binomial(33, k) as usize];
            for set in 0u64..1 << 33 {
                if set.count_ones() != k {
                    continue;
                }
                let r = ranker.rank(set) as usize;
                assert!(!seen[r], "rank {r} twice");
                seen[r] = true;
            }
            assert!(seen.iter().all(|&s| s), "every rank of {k} points is used");
        }
        // Large sets: the table lookup equals the defining sum.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let points: Vec<u32> = (0..33).collect();
        for _ in 0..2000 {
            let k = rng.random_range(4..=17);
            let mut chosen = points.clone();
            chosen.shuffle(&mut rng);
            chosen.truncate(k);
            chosen.sort();
            let direct: u64 = chosen
                .iter()
                .enumerate()
                .map(|(i, &c)| binomial(c, i as u32 + 1))
                .sum();
            let set = chosen.iter().fold(0u64, |s, &c| s | 1 << c);
            assert_eq!(ranker.rank(set), direct);
            assert!(direct < binomial(33, k as u32));
        }
    }

    #[test]
    fn bit_scatter_implementations_agree() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        #[cfg(target_arch = "x86_64")]
        let fast = Bmi2Bits::detect();
        for _ in 0..10_000 {
            let mask = rng.random::<u64>() & ALL;
            let value = rng.random::<u64>() & ((1 << mask.count_ones()) - 1);
            let spread = PortableBits.deposit(value, mask);
            assert_eq!(spread & !mask, 0);
            assert_eq!(PortableBits.extract(spread, mask), value);
            #[cfg(target_arch = "x86_64")]
            if let Some(b) = &fast {
                assert_eq!(b.deposit(value, mask), spread);
                assert_eq!(b.extract(spread, mask), value);
            }
        }
    }

    #[test]
    fn board_moves_follow_the_rules() {
        let board = Board::new(false);
        let c = |name: &str| {
            let g = Point::parse(name).unwrap().index() as u8;
            board.grid.iter().position(|&x| x == g).unwrap()
        };
        let set = |names: &[&str]| names.iter().fold(0u64, |s, n| s | 1 << c(n));
        // d4 has lines in all 8 directions; a goose there steps to c5 d5 e5.
        assert_eq!(board.goose_to[c("d4")], set(&["c5", "d5", "e5"]));
        assert_eq!(board.fox_to[c("d4")].count_ones(), 8);
        // No diagonal across an inner corner on the plain board.
        assert_eq!(board.goose_to[c("b3")], set(&["b4", "a4", "c4"]));
        assert_eq!(board.goose_to[c("c2")], set(&["c3", "d3"]));
        assert_eq!(Board::new(true).goose_to[c("c2")], set(&["c3", "d3", "b3"]));
        assert_eq!(board.goose_to[c("d7")], 0);
        assert_eq!(board.row_start, [0, 3, 6, 13, 20, 27, 30, 33]);
    }

    /// A random classic position without sideways steps with `geese`
    /// geese on rows 4 to 7 and the fox on rows 5 to 7, where few geese can
    /// shut it in.
    fn random_position(rng: &mut ChaCha8Rng, geese: usize, corner_links: bool) -> Position {
        let variant = classic_variant(17, corner_links).unwrap();
        let mut points: Vec<Point> = Point::all().filter(|p| p.row() >= 3).collect();
        points.shuffle(rng);
        let set = points[..geese]
            .iter()
            .fold(Bitboard::EMPTY, |b, &p| b.with(p));
        let fox_points: Vec<Point> = Point::all()
            .filter(|p| p.row() >= 4 && !set.contains(*p))
            .collect();
        let fox = Bitboard::EMPTY.with(*fox_points.choose(rng).unwrap());
        let side = if rng.random_bool(0.5) {
            Side::Foxes
        } else {
            Side::Geese
        };
        Position::new(variant, fox, set, side, 0).unwrap()
    }

    #[test]
    fn values_agree_with_the_dag_search() {
        for corner_links in [false, true] {
            let tables = RetroTables::build(9, corner_links, &config(), |_| {}).unwrap();
            let mut dag = DagSolver::new(DagConfig {
                budget_nodes: 50_000_000,
                tt_mib: 64,
            })
            .unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(11 + corner_links as u64);
            // With few geese the fox wins nearly everywhere (six geese win
            // 12 of 30 M states): the tables pick as many geese wins as fox
            // wins, and the DAG search, over the rules engine's moves,
            // judges them.
            let mut wins = [0; 2];
            for i in 0..1_000_000 {
                let p = random_position(&mut rng, 3 + i % 7, corner_links);
                let retro = tables.value(&p).unwrap();
                let fox = (retro.winner == Side::Foxes) as usize;
                if wins[fox] >= 60 {
                    continue;
                }
                wins[fox] += 1;
                let solved = dag.solve(&p).unwrap();
                assert_eq!(Some(retro.winner), solved.winner, "{}", p.fen());
                if let Some(m) = retro.best {
                    let mut child = p;
                    child.play_unchecked(m);
                    assert_eq!(dag.solve(&child).unwrap().winner, Some(retro.winner));
                }
                if wins == [60, 60] {
                    break;
                }
            }
            assert_eq!(wins, [60, 60], "both sides win somewhere");
        }
    }

    #[test]
    fn suite_rows_from_the_tables_give_every_move_its_dag_value_and_read_back() {
        use crate::suite::{exact_row, parse_suite};
        let tables = RetroTables::build(8, false, &config(), |_| {}).unwrap();
        let mut dag = DagSolver::new(DagConfig {
            budget_nodes: 50_000_000,
            tt_mib: 64,
        })
        .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(29);
        let (mut rows, mut trivial) = (Vec::new(), 0);
        for i in 0..20_000 {
            if rows.len() == 12 {
                break;
            }
            let p = random_position(&mut rng, 4 + i % 5, false);
            if p.outcome_without_history().is_some() {
                continue;
            }
            let Some(row) = exact_row(&tables, &p, i, 10, 40).unwrap() else {
                trivial += 1;
                continue;
            };
            // Every legal move once, with the DAG search's value; the
            // keeping moves are those with the position's value, the best.
            let legal = p.legal_moves();
            let items: Vec<&str> = row.move_values.split_whitespace().collect();
            assert_eq!(items.len(), legal.len(), "{}", row.fen);
            for (item, &m) in items.iter().zip(legal.iter()) {
                let mut child = p;
                child.play_unchecked(m);
                let winner = dag.solve(&child).unwrap().winner.unwrap();
                assert_eq!(*item, format!("{m}={}", winner.name()), "{}", row.fen);
            }
            let keeping = row.keeping_moves.split_whitespace().count();
            assert!(keeping >= 1 && keeping < legal.len());
            assert_eq!(
                row.difficulty,
                crate::suite::difficulty(keeping, legal.len())
            );
            assert_eq!(row.stage, "beginning");
            rows.push(row);
        }
        assert_eq!(rows.len(), 12, "{trivial} positions without a losing move");
        // The rows read back through the suite reader's checks.
        let mut text = Vec::new();
        {
            let mut w = csv::Writer::from_writer(&mut text);
            for r in &rows {
                w.serialize(r).unwrap();
            }
        }
        let entries = parse_suite("rows", text.as_slice()).unwrap();
        assert_eq!(entries.len(), 12);
        assert!(entries
            .iter()
            .all(|e| e.move_values.len() == e.row.legal_moves));
        // A row whose move values disagree with its keeping moves is refused.
        let mut wrong = rows[0].clone();
        let kept = wrong
            .keeping_moves
            .split_whitespace()
            .next()
            .unwrap()
            .to_string();
        let other = if wrong.value == "foxes" {
            "geese"
        } else {
            "foxes"
        };
        wrong.move_values = wrong.move_values.replace(
            &format!("{kept}={}", wrong.value),
            &format!("{kept}={other}"),
        );
        let mut text = Vec::new();
        {
            let mut w = csv::Writer::from_writer(&mut text);
            w.serialize(&wrong).unwrap();
        }
        let err = parse_suite("rows", text.as_slice()).unwrap_err();
        assert!(
            err.to_string().contains("rows, line 2") && err.to_string().contains("do not agree"),
            "{err}"
        );
    }

    #[test]
    fn values_are_consistent_along_games_over_the_rules() {
        let tables = RetroTables::build(8, false, &config(), |_| {}).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut checked = 0;
        for _ in 0..20 {
            let geese = rng.random_range(4..9);
            let p = random_position(&mut rng, geese, false);
            checked += tables.check_lines(&p, 5, rng.random()).unwrap().checked;
        }
        assert!(checked > 500, "{checked} positions checked");
    }

    #[test]
    fn layer_statistics_count_every_placement() {
        let mut seen = Vec::new();
        let tables = RetroTables::build(6, false, &config(), |s| seen.push(s.geese)).unwrap();
        assert_eq!(seen, vec![4, 5, 6]);
        let stats = tables.layer_stats();
        assert_eq!(stats[2].placements, binomial(33, 6));
        assert_eq!(stats[2].fox_to_move, binomial(33, 6) * 27);
        // Four geese cannot shut in a fox that is not in a corner already,
        // and six can shut in some: both kinds exist, foxes winning most.
        assert!(stats[0].fox_wins > stats[0].fox_to_move / 2);
        assert!(stats[2].fox_wins < stats[2].fox_to_move);
        assert_eq!(tables.bytes(), memory_bytes(6));
    }

    #[test]
    fn refuses_what_it_cannot_answer() {
        let tables = RetroTables::build(5, false, &config(), |_| {}).unwrap();
        let start = Position::start(classic_variant(13, false).unwrap());
        assert_eq!(
            tables.winner(&start),
            Err(RetroError::TooManyGeese { found: 13, most: 5 })
        );
        let sideways = Position::start(Variant::classic(13, true).unwrap());
        assert!(matches!(
            tables.winner(&sideways),
            Err(RetroError::Position(DagError::Variant(_)))
        ));
        let corner = Position::start(classic_variant(13, true).unwrap());
        assert!(matches!(
            tables.winner(&corner),
            Err(RetroError::Board { .. })
        ));
        let limited = RetroConfig {
            threads: 1,
            memory_limit_mib: Some(1),
            layers_dir: None,
        };
        assert!(matches!(
            RetroTables::build(9, false, &limited, |_| {}),
            Err(RetroError::Memory { geese: 9, .. })
        ));
        let no_threads = RetroConfig {
            threads: 0,
            memory_limit_mib: None,
            layers_dir: None,
        };
        assert_eq!(
            RetroTables::build(5, false, &no_threads, |_| {}).err(),
            Some(RetroError::Threads(0))
        );
        let too_many = RetroConfig {
            threads: MAX_THREADS + 1,
            ..no_threads
        };
        assert_eq!(
            RetroTables::build(5, false, &too_many, |_| {}).err(),
            Some(RetroError::Threads(MAX_THREADS + 1))
        );
    }
}
