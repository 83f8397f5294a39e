//! The index library of both retrograde builds: the board as the tables
//! number it, the colexicographic ranking of placements, the bit tables of
//! a layer, the levels of equal summed rows a layer splits into, and the
//! jobs the placements of a level are computed in. The plain build
//! ([`super::plain`]) and the sideways build ([`super::sideways`]) both
//! stand on it; it knows neither.

use halatafl_rules::geometry::{Geometry, NO_POINT};
use halatafl_rules::{Bitboard, Direction, Point};
use std::sync::atomic::{AtomicU64, Ordering};

/// Points of the cross.
pub(crate) const POINTS: usize = 33;
/// Every point, as a compact set.
pub(crate) const ALL: u64 = (1 << POINTS) - 1;
/// The classic game's fox wins when fewer geese than this remain (rule 1).
pub(crate) const GEESE_NEEDED: u32 = 4;
/// The most geese a classic setting starts with.
pub const MAX_GEESE: u32 = 17;

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
