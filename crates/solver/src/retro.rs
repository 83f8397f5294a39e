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
//! engine's line tables ([`Geometry`]): a goose steps north, north-east or
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

use crate::dag::{check_position, moves_or_start, DagError, ReplayStats};
use halatafl_rules::geometry::{Geometry, NO_POINT};
use halatafl_rules::{Bitboard, Direction, Game, Move, Point, Position, Side, Variant};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Points of the cross.
pub(crate) const POINTS: usize = 33;
/// Every point, as a compact set.
pub(crate) const ALL: u64 = (1 << POINTS) - 1;
/// The classic game's fox wins when fewer geese than this remain (rule 1).
pub(crate) const GEESE_NEEDED: u32 = 4;
/// The most geese a classic setting starts with.
pub const MAX_GEESE: u32 = 17;

/// What the retrograde method cannot do.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RetroError {
    #[error(transparent)]
    Position(#[from] DagError),
    #[error("the tables up to {geese} geese need {need_mib} MiB, more than the {limit_mib} MiB allowed (--tt-mb for this method, or the memory available)")]
    Memory {
        geese: u32,
        need_mib: u64,
        limit_mib: u64,
    },
    #[error("quiet counter {quiet}: the sideways tables answer this position's level up to counter {most} (0 is right after a capture or a forward step, or a start); use the df-pn method")]
    SidewaysQuiet { quiet: u16, most: u16 },
    #[error("the sideways tables hold classic Fox and Geese with sideways steps; this is {0}")]
    NotSideways(String),
    #[error("a position with {found} geese: the tables kept only the layers of {least} to {most} geese (the others were dropped to fit in memory)")]
    Dropped { found: u32, least: u32, most: u32 },
    #[error("--threads {0}: the retrograde method takes 1 to {MAX_THREADS} threads")]
    Threads(usize),
    #[error("this position has {found} geese; these tables hold placements of up to {most}")]
    TooManyGeese { found: u32, most: u32 },
    #[error("the tables were built for the {built} board, this position is on the {asked} board")]
    Board {
        built: &'static str,
        asked: &'static str,
    },
    #[error("saved chain planes {path}: {what}")]
    SavedChains { path: String, what: String },
    #[error("line {line}, after {moves}: {what}")]
    Inconsistent {
        line: usize,
        moves: String,
        what: String,
    },
}

/// The most worker threads a retrograde build takes: far above the cores of
/// any machine it runs on, well below what would exhaust the system's
/// threads (each also takes its share of the work buffers).
pub const MAX_THREADS: usize = 256;

/// Settings of a retrograde build. Every default is here.
#[derive(Clone, Debug, PartialEq)]
pub struct RetroConfig {
    /// Worker threads (rayon).
    pub threads: usize,
    /// The most memory the tables may take, in MiB; `None`: what the
    /// system reports available (`/proc/meminfo`), unchecked where it
    /// reports nothing.
    pub memory_limit_mib: Option<u64>,
    /// Builds with sideways steps: a directory where each layer's chain
    /// planes are saved once built, and from which a build resumes above
    /// the most geese saved there ([`crate::saved_chains`]); `None`:
    /// nothing is saved or read.
    pub layers_dir: Option<std::path::PathBuf>,
}

impl Default for RetroConfig {
    fn default() -> RetroConfig {
        RetroConfig {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_limit_mib: None,
            layers_dir: None,
        }
    }
}

/// One layer of a build: the placements of one number of geese.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerStats {
    pub geese: u32,
    /// Placements, `C(33, geese)`.
    pub placements: u64,
    /// (placement, fox point) states with the fox to move.
    pub fox_to_move: u64,
    /// Of those, the ones the fox wins.
    pub fox_wins: u64,
    pub elapsed: Duration,
}

/// What a position's value is, with a winning move where the side to move
/// wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetroValue {
    pub winner: Side,
    pub best: Option<Move>,
}

/// The board as the tables see it: points numbered 0..33 in grid order
/// (row 1 first, so a row is a run of numbers and a goose step always goes
/// to a higher number), with the move tables in that numbering.
pub(crate) struct Board {
    /// Grid index of each compact point.
    pub(crate) grid: [u8; POINTS],
    /// Row (0..7) of each compact point.
    pub(crate) row: [u8; POINTS],
    /// Compact points of each row: `row_start[r]..row_start[r + 1]`.
    pub(crate) row_start: [u8; 8],
    /// Where a goose may step (north, north-east, north-west).
    pub(crate) goose_to: [u64; POINTS],
    /// Where a goose may step sideways (east, west), with that option.
    pub(crate) goose_side: [u64; POINTS],
    /// Where the fox may step.
    pub(crate) fox_to: [u64; POINTS],
    /// The fox's jumps from a point: (point jumped over, landing point).
    pub(crate) jumps: [[(u8, u8); 8]; POINTS],
    pub(crate) jump_count: [u8; POINTS],
}

impl Board {
    /// Geese on each row of a compact set.
    pub(crate) fn row_counts(&self, geese: u64) -> [u8; 7] {
        std::array::from_fn(|r| {
            let (start, end) = (self.row_start[r], self.row_start[r + 1]);
            (geese >> start & ((1 << (end - start)) - 1)).count_ones() as u8
        })
    }

    pub(crate) fn new(corner_links: bool) -> Board {
        let geometry = Geometry::get(corner_links);
        let points: Vec<Point> = Point::all().collect();
        assert_eq!(points.len(), POINTS, "the cross has 33 points");
        let mut compact = [u8::MAX; 49];
        let mut board = Board {
            grid: [0; POINTS],
            row: [0; POINTS],
            row_start: [0; 8],
            goose_to: [0; POINTS],
            goose_side: [0; POINTS],
            fox_to: [0; POINTS],
            jumps: [[(0, 0); 8]; POINTS],
            jump_count: [0; POINTS],
        };
        let mut sorted = points.clone();
        sorted.sort_by_key(|p| p.index());
        for (c, p) in sorted.iter().enumerate() {
            compact[p.index()] = c as u8;
            board.grid[c] = p.index() as u8;
            board.row[c] = p.row() as u8;
        }
        for r in 0..8 {
            board.row_start[r] = board.row.iter().filter(|&&x| (x as usize) < r).count() as u8;
        }
        let to_compact =
            |grid: u8| -> Option<u8> { (grid != NO_POINT).then(|| compact[grid as usize]) };
        for c in 0..POINTS {
            let g = board.grid[c] as usize;
            for d in Direction::ALL {
                let di = d as usize;
                if let Some(n) = to_compact(geometry.neighbour[di][g]) {
                    board.fox_to[c] |= 1 << n;
                    if matches!(
                        d,
                        Direction::North | Direction::NorthEast | Direction::NorthWest
                    ) {
                        board.goose_to[c] |= 1 << n;
                    }
                    if matches!(d, Direction::East | Direction::West) {
                        board.goose_side[c] |= 1 << n;
                    }
                }
                if let (Some(over), Some(land)) = (
                    to_compact(geometry.jump_over[di][g]),
                    to_compact(geometry.jump_land[di][g]),
                ) {
                    let j = board.jump_count[c] as usize;
                    board.jumps[c][j] = (over, land);
                    board.jump_count[c] += 1;
                }
            }
        }
        board
    }

    pub(crate) fn compact_set(&self, set: Bitboard) -> u64 {
        (0..POINTS)
            .filter(|&c| set.0 >> self.grid[c] & 1 != 0)
            .fold(0, |s, c| s | 1 << c)
    }
}

/// The set bits of a mask, lowest first.
pub(crate) fn points_of(mut set: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (set != 0).then(|| {
            let c = set.trailing_zeros() as usize;
            set &= set - 1;
            c
        })
    })
}

/// `C(n, k)` for `n ≤ 33`.
pub(crate) fn binomial(n: u32, k: u32) -> u64 {
    if k > n {
        return 0;
    }
    (0..k as u64).fold(1, |acc, i| acc * (n as u64 - i) / (i + 1))
}

/// Colexicographic rank of a set of points among the sets of its size,
/// three table lookups: the points in each 11-point chunk contribute
/// `Σ C(c, j + 1)` given how many points lie below the chunk.
pub(crate) struct Ranker {
    /// `[chunk][bits][points below]`, points below 0..=MAX_GEESE.
    table: Vec<u32>,
}

const CHUNK_BITS: u32 = 11;
const CHUNK: usize = 1 << CHUNK_BITS;
const BELOW: usize = MAX_GEESE as usize + 1;

impl Ranker {
    pub(crate) fn new() -> Ranker {
        let mut table = vec![0u32; 3 * CHUNK * BELOW];
        for chunk in 0..3 {
            for b in 0..CHUNK {
                for below in 0..BELOW {
                    let mut sum = 0u64;
                    for (j, c) in points_of(b as u64).enumerate() {
                        let point = chunk as u32 * CHUNK_BITS + c as u32;
                        if point < POINTS as u32 {
                            sum += binomial(point, (below + j + 1) as u32);
                        }
                    }
                    // Entries that no set of at most 17 points uses may
                    // overflow; they are never read.
                    table[(chunk * CHUNK + b) * BELOW + below] = sum.min(u32::MAX as u64) as u32;
                }
            }
        }
        Ranker { table }
    }

    #[inline]
    pub(crate) fn rank(&self, set: u64) -> u64 {
        let c0 = (set & (CHUNK as u64 - 1)) as usize;
        let c1 = ((set >> CHUNK_BITS) & (CHUNK as u64 - 1)) as usize;
        let c2 = (set >> (2 * CHUNK_BITS)) as usize;
        let b0 = c0.count_ones() as usize;
        let b1 = b0 + c1.count_ones() as usize;
        let t = &self.table;
        t[c0 * BELOW] as u64
            + t[(CHUNK + c1) * BELOW + b0] as u64
            + t[(2 * CHUNK + c2) * BELOW + b1] as u64
    }
}

/// The fox-to-move values of every placement of one number of geese.
pub(crate) struct Layer {
    /// Bits per placement: one per empty point.
    width: u32,
    pub(crate) words: Vec<AtomicU64>,
}

impl Layer {
    pub(crate) fn words_for(geese: u32) -> usize {
        let placements = binomial(POINTS as u32, geese);
        let width = POINTS as u64 - geese as u64;
        // One spare word: a read of the last placement may touch it.
        (placements * width).div_ceil(64) as usize + 1
    }

    pub(crate) fn new(geese: u32) -> Layer {
        // Zeroed pages straight from the system (calloc), untouched until
        // the build writes them, so the huge-page advice still applies.
        let zeros = vec![0u64; Layer::words_for(geese)];
        advise_huge_pages(&zeros);
        let mut zeros = std::mem::ManuallyDrop::new(zeros);
        const _: () = assert!(
            std::mem::size_of::<u64>() == std::mem::size_of::<AtomicU64>()
                && std::mem::align_of::<u64>() == std::mem::align_of::<AtomicU64>()
        );
        // SAFETY: AtomicU64 has the size, alignment (asserted above) and bit
        // validity of u64, and the allocation changes owner, not layout.
        let words = unsafe {
            Vec::from_raw_parts(
                zeros.as_mut_ptr() as *mut AtomicU64,
                zeros.len(),
                zeros.capacity(),
            )
        };
        Layer {
            width: POINTS as u32 - geese,
            words,
        }
    }

    #[inline]
    pub(crate) fn get(&self, rank: u64) -> u64 {
        let offset = rank * self.width as u64;
        let (word, shift) = ((offset / 64) as usize, (offset % 64) as u32);
        let mut v = self.words[word].load(Ordering::Relaxed) >> shift;
        if shift + self.width > 64 {
            v |= self.words[word + 1].load(Ordering::Relaxed) << (64 - shift);
        }
        v & ((1 << self.width) - 1)
    }

    /// Stores a placement's bits. Each placement is written once, by one
    /// thread; neighbours may share a word, hence `fetch_or`.
    #[inline]
    pub(crate) fn set(&self, rank: u64, packed: u64) {
        if packed == 0 {
            return;
        }
        let offset = rank * self.width as u64;
        let (word, shift) = ((offset / 64) as usize, (offset % 64) as u32);
        self.words[word].fetch_or(packed << shift, Ordering::Relaxed);
        if shift + self.width > 64 {
            self.words[word + 1].fetch_or(packed >> (64 - shift), Ordering::Relaxed);
        }
    }
}

/// Asks Linux to back a large table by 2 MiB pages: every read of a build
/// lands somewhere random in gigabytes, and 4 KiB pages make each one a
/// TLB miss too. Only a hint; nothing depends on it.
fn advise_huge_pages(words: &[u64]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = words.as_ptr() as usize;
        let end = start + std::mem::size_of_val(words);
        let aligned = start.div_ceil(HUGE) * HUGE;
        if end > aligned + HUGE {
            let len = (end - aligned) / HUGE * HUGE;
            // SAFETY: the range lies inside the live allocation of `words`;
            // MADV_HUGEPAGE changes how pages are backed, not their contents.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = words;
}

/// Scatter (`pdep`) and gather (`pext`) of bits under a mask.
pub(crate) trait BitScatter: Sync {
    fn deposit(&self, value: u64, mask: u64) -> u64;
    fn extract(&self, value: u64, mask: u64) -> u64;
}

/// A loop over the mask's bits.
pub(crate) struct PortableBits;

impl BitScatter for PortableBits {
    #[inline]
    fn deposit(&self, value: u64, mask: u64) -> u64 {
        let (mut out, mut m, mut i) = (0, mask, 0);
        while m != 0 {
            let low = m & m.wrapping_neg();
            if value >> i & 1 != 0 {
                out |= low;
            }
            m ^= low;
            i += 1;
        }
        out
    }

    #[inline]
    fn extract(&self, value: u64, mask: u64) -> u64 {
        let (mut out, mut m, mut i) = (0, mask, 0);
        while m != 0 {
            let low = m & m.wrapping_neg();
            if value & low != 0 {
                out |= 1 << i;
            }
            m ^= low;
            i += 1;
        }
        out
    }
}

/// BMI2's instructions; only built by [`Bmi2Bits::detect`] on a CPU that
/// has them fast.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Bmi2Bits(());

#[cfg(target_arch = "x86_64")]
impl Bmi2Bits {
    /// BMI2 where the CPU has it, except AMD's families before Zen 3
    /// (0x17), which run `pdep`/`pext` in slow microcode.
    pub(crate) fn detect() -> Option<Bmi2Bits> {
        if !std::is_x86_feature_detected!("bmi2") {
            return None;
        }
        let v = std::arch::x86_64::__cpuid(0);
        let (vendor, signature) = ([v.ebx, v.edx, v.ecx], std::arch::x86_64::__cpuid(1).eax);
        let amd = vendor == [0x6874_7541, 0x6974_6e65, 0x444d_4163];
        let family = ((signature >> 8) & 0xf) + ((signature >> 20) & 0xff);
        (!amd || family >= 0x19).then_some(Bmi2Bits(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl BitScatter for Bmi2Bits {
    #[inline]
    fn deposit(&self, value: u64, mask: u64) -> u64 {
        // SAFETY: a Bmi2Bits exists only where the CPU has BMI2 (detect).
        unsafe { std::arch::x86_64::_pdep_u64(value, mask) }
    }

    #[inline]
    fn extract(&self, value: u64, mask: u64) -> u64 {
        // SAFETY: as above.
        unsafe { std::arch::x86_64::_pext_u64(value, mask) }
    }
}

/// A run of placements to compute: all with the same number of geese per
/// row (`counts`), numbered in mixed radix over the rows' own choices (row
/// 1 the fastest digit); `offset` is where the counts' placements start in
/// their level's numbering.
pub(crate) struct Job {
    pub(crate) counts: [u8; 7],
    pub(crate) offset: u64,
    pub(crate) start: u64,
    pub(crate) end: u64,
}

/// How a layer (placements of one number of geese) splits into levels of
/// equal summed rows, and how each level's placements are numbered.
pub(crate) struct LevelPlan {
    /// `choices[row][n]`: the compact sets of `n` points of a row.
    pub(crate) choices: Vec<Vec<Vec<u64>>>,
    /// `digit[row][bits]`: where a row's points (shifted down to bit 0)
    /// stand in `choices[row][their count]`.
    pub(crate) digit: Vec<Vec<u32>>,
    /// The levels, highest summed rows first: each the ways to spread the
    /// geese over the rows that give that sum.
    pub(crate) levels: Vec<Vec<[u8; 7]>>,
    /// First compact point of each row, and the row's length.
    pub(crate) rows: Vec<(usize, usize)>,
}

impl LevelPlan {
    pub(crate) fn new(board: &Board, geese: u32) -> LevelPlan {
        let rows: Vec<(usize, usize)> = (0..7)
            .map(|r| {
                let (a, b) = (board.row_start[r], board.row_start[r + 1]);
                (a as usize, (b - a) as usize)
            })
            .collect();
        let mut by_potential: Vec<Vec<[u8; 7]>> = vec![Vec::new(); 7 * POINTS];
        let mut counts = [0u8; 7];
        spread(&rows, 0, geese as usize, &mut counts, &mut |c| {
            by_potential[potential_of(c)].push(*c);
        });
        let mut choices = Vec::new();
        let mut digit = Vec::new();
        for &(start, len) in &rows {
            let mut by_count: Vec<Vec<u64>> = vec![Vec::new(); len + 1];
            let mut index = vec![0u32; 1 << len];
            for m in 0u64..1 << len {
                let list = &mut by_count[m.count_ones() as usize];
                index[m as usize] = list.len() as u32;
                list.push(m << start);
            }
            choices.push(by_count);
            digit.push(index);
        }
        LevelPlan {
            choices,
            digit,
            levels: by_potential
                .into_iter()
                .rev()
                .filter(|l| !l.is_empty())
                .collect(),
            rows,
        }
    }

    /// Placements with these counts per row.
    pub(crate) fn count(&self, counts: &[u8; 7]) -> u64 {
        (0..7)
            .map(|r| self.choices[r][counts[r] as usize].len() as u64)
            .product()
    }

    /// The level's placements in jobs, in the level's numbering.
    pub(crate) fn jobs(&self, level: &[[u8; 7]]) -> Vec<Job> {
        let mut jobs = Vec::new();
        let mut offset = 0;
        for counts in level {
            let total = self.count(counts);
            let mut start = 0;
            while start < total {
                let end = (start + JOB_PLACEMENTS).min(total);
                jobs.push(Job {
                    counts: *counts,
                    offset,
                    start,
                    end,
                });
                start = end;
            }
            offset += total;
        }
        jobs
    }
}

/// Walks a job's placements in order: (level index, geese, row digits).
pub(crate) fn for_each_placement(
    plan: &LevelPlan,
    job: &Job,
    mut visit: impl FnMut(usize, u64, &[usize; 7], &[u64; 7]),
) {
    let lists: Vec<&Vec<u64>> = (0..7)
        .map(|r| &plan.choices[r][job.counts[r] as usize])
        .collect();
    let mut radix = [1u64; 7];
    for r in 1..7 {
        radix[r] = radix[r - 1] * lists[r - 1].len() as u64;
    }
    let mut digits = [0usize; 7];
    let mut rest = job.start;
    for r in 0..7 {
        let n = lists[r].len() as u64;
        digits[r] = (rest % n) as usize;
        rest /= n;
    }
    for i in job.start..job.end {
        let geese = (0..7).fold(0, |g, r| g | lists[r][digits[r]]);
        visit((job.offset + i) as usize, geese, &digits, &radix);
        for r in 0..7 {
            digits[r] += 1;
            if digits[r] < lists[r].len() {
                break;
            }
            digits[r] = 0;
        }
    }
}

/// Summed rows (row 1 counting 0) of a spread of geese over the rows.
pub(crate) fn potential_of(counts: &[u8; 7]) -> usize {
    counts
        .iter()
        .enumerate()
        .map(|(r, &n)| r * n as usize)
        .sum()
}

/// Placements per job: small enough to balance threads, large enough that
/// the job's set-up does not show.
const JOB_PLACEMENTS: u64 = 1 << 14;

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

/// Bytes the tables up to `max_geese` geese take.
pub fn memory_bytes(max_geese: u32) -> u64 {
    (GEESE_NEEDED..=max_geese)
        .map(|k| Layer::words_for(k) as u64 * 8)
        .sum()
}

pub(crate) use crate::available_mib;

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
        if !(1..=MAX_THREADS).contains(&config.threads) {
            return Err(RetroError::Threads(config.threads));
        }
        if max_geese > MAX_GEESE {
            return Err(RetroError::TooManyGeese {
                found: max_geese,
                most: MAX_GEESE,
            });
        }
        let need_mib = memory_bytes(max_geese).div_ceil(1 << 20);
        if let Some(limit_mib) = config.memory_limit_mib.or_else(available_mib) {
            if need_mib > limit_mib {
                return Err(RetroError::Memory {
                    geese: max_geese,
                    need_mib,
                    limit_mib,
                });
            }
        }
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

    pub fn layer_stats(&self) -> &[LayerStats] {
        &self.stats
    }

    pub fn max_geese(&self) -> u32 {
        GEESE_NEEDED + self.layers.len() as u32 - 1
    }

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
    /// history): the winner by the tables plays a winning move, the other
    /// side a pseudo-random legal move (seeded). At every position on the
    /// way it checks the tables against the rules engine: a finished game
    /// (the engine's verdict) must have the tables' winner, and an
    /// unfinished position's winner must be what the engine's legal moves
    /// and the tables' values of the children make it (the side to move
    /// wins iff some child is its win). So a wrong move table or a wrong
    /// stored value on the way shows up as an inconsistency.
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
        let mut rng = seed;
        let mut stats = ReplayStats {
            lines,
            plies: 0,
            checked: 0,
        };
        for line in 0..lines {
            let mut game = Game::new(*p);
            loop {
                let here = *game.position();
                let claimed = self.winner_unchecked(&here);
                let fail = |what: String| RetroError::Inconsistent {
                    line,
                    moves: moves_or_start(&game),
                    what,
                };
                if let Some(outcome) = game.outcome() {
                    if outcome.winner != Some(claimed) {
                        return Err(fail(format!(
                            "the tables hold the {claimed} to win, but the game ended {outcome}"
                        )));
                    }
                    break;
                }
                let moves = here.legal_moves();
                let children: Vec<Side> = moves
                    .iter()
                    .map(|&m| {
                        let mut child = here;
                        child.play_unchecked(m);
                        self.winner_unchecked(&child)
                    })
                    .collect();
                let mover_wins = children.contains(&here.side());
                if mover_wins != (claimed == here.side()) {
                    return Err(fail(format!(
                        "the tables hold the {claimed} to win, but {} of the {} moves win for the {} to move",
                        children.iter().filter(|&&w| w == here.side()).count(),
                        moves.len(),
                        here.side()
                    )));
                }
                stats.checked += 1;
                visit(&here, claimed);
                let pick = if here.side() == claimed {
                    children
                        .iter()
                        .position(|&w| w == claimed)
                        .expect("checked: the winner to move has a winning move")
                } else {
                    rng = crate::dag::splitmix64(rng);
                    (rng % moves.len() as u64) as usize
                };
                game.play_unchecked(moves[pick]);
                stats.plies += 1;
            }
        }
        Ok(stats)
    }
}

/// Calls `visit` with every way to put `left` geese on rows `row..7`, at
/// most a row's length on each.
pub(crate) fn spread(
    rows: &[(usize, usize)],
    row: usize,
    left: usize,
    counts: &mut [u8; 7],
    visit: &mut impl FnMut(&[u8; 7]),
) {
    if row == 7 {
        if left == 0 {
            visit(counts);
        }
        return;
    }
    for n in 0..=left.min(rows[row].1) {
        counts[row] = n as u8;
        spread(rows, row + 1, left - n, counts, visit);
    }
    counts[row] = 0;
}

/// The classic variant these tables answer for, with `geese` at the start.
pub fn classic_variant(geese: u8, corner_links: bool) -> Option<Variant> {
    Variant::classic(geese, false)
        .ok()
        .map(|v| v.with_corner_links(corner_links))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DagConfig, DagSolver};
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
