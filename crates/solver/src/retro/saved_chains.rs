//! A sideways build's chain planes on disk, so that a build longer than
//! one sitting can stop and go on later.
//!
//! Layer `k + 1` of a [`super::sideways`] build reads nothing of the
//! layers below but layer `k`'s two chain planes (that module's docs), so
//! those planes are all a build needs to resume at `k + 1`: 2 bits per
//! (placement, empty point), 4.3 GiB at 15 geese. They do not depend on
//! how far the build goes, so one directory serves builds to any number of
//! geese above `k`.
//!
//! # File
//!
//! `chains-classic-sideways[-corners]-K.bin`, little-endian:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | magic `HTFCHAIN` |
//! | 4 | format version (1) |
//! | 4 | corner links (0 or 1) |
//! | 4 | geese `K` |
//! | 4 | layers described, `L` (layers 4 to `K`) |
//! | 8 | words per plane (`Layer::words_for(K)`) |
//! | `72·L` | each layer's statistics: nine u64s |
//! | `16·words` | the win plane's words, then the lose plane's |
//! | 4 | CRC-32 of every byte before it |
//!
//! A file is written under a temporary name and renamed, so a file of the
//! expected name is whole unless the disk itself damaged it; the length,
//! the header and the checksum are all checked before a build uses it.

use super::index::{Layer, GEESE_NEEDED};
use super::RetroError;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// One layer of a sideways build, as it reported, and as a saved file
/// records it for the layers below the one it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct SidewaysLayerStats {
    /// Geese in the layer's placements.
    pub geese: u32,
    /// Placements, `C(33, geese)`.
    pub placements: u64,
    /// (placement, fox point) states with the fox to move, at `q = 0`.
    pub fox_to_move: u64,
    /// Of those, the ones the fox wins.
    pub fox_wins: u64,
    /// Of those, the ones the geese win (the rest are draws).
    pub geese_wins: u64,
    /// The most steps `n` a level of the layer needed (at most 100).
    pub longest: u32,
    /// Geese to move (at `q = 0`): fox wins and geese wins.
    pub geese_to_move_fox_wins: u64,
    /// See `geese_to_move_fox_wins`.
    pub geese_to_move_geese_wins: u64,
    /// Time the layer took to build (or took, for a layer read back).
    pub elapsed: Duration,
    /// The time taken to write the layer's chain planes to
    /// [`super::RetroConfig::layers_dir`]; `None` where they were not written
    /// (no directory, the top layer, or a layer read back from one).
    pub saved_in: Option<Duration>,
}

const MAGIC: &[u8; 8] = b"HTFCHAIN";
const VERSION: u32 = 1;
const HEADER_BYTES: u64 = 8 + 4 + 4 + 4 + 4 + 8;
const STATS_BYTES: u64 = 9 * 8;
/// Words copied per read or write.
const CHUNK_WORDS: usize = 1 << 17;

/// A saved layer's file, its header read and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct SavedChains {
    /// The file.
    pub path: PathBuf,
    /// The layer whose chain planes it holds: a build resumes one above.
    pub geese: u32,
    /// Statistics of every layer from 4 geese to `geese`, as their build
    /// reported them.
    pub stats: Vec<SidewaysLayerStats>,
}

/// The file of layer `geese`'s chain planes in `dir`.
pub fn chains_path(dir: &Path, corner_links: bool, geese: u32) -> PathBuf {
    let board = if corner_links { "-corners" } else { "" };
    dir.join(format!("chains-classic-sideways{board}-{geese}.bin"))
}

fn error(path: &Path, what: impl std::fmt::Display) -> RetroError {
    RetroError::SavedChains {
        path: path.display().to_string(),
        what: what.to_string(),
    }
}

/// The saved layer a build up to `max_geese` geese resumes from: the most
/// geese below `max_geese` with a file in `dir` (header checked), if any.
pub fn find_saved(
    dir: &Path,
    corner_links: bool,
    max_geese: u32,
) -> Result<Option<SavedChains>, RetroError> {
    for geese in (GEESE_NEEDED..max_geese).rev() {
        let path = chains_path(dir, corner_links, geese);
        if path.exists() {
            let mut reader = BufReader::new(File::open(&path).map_err(|e| error(&path, e))?);
            let (stats, _) = read_header(&path, &mut reader, corner_links, geese)?;
            return Ok(Some(SavedChains { path, geese, stats }));
        }
    }
    Ok(None)
}

/// Reads and checks the header and statistics; returns them and the words
/// per plane. The file's length must be what they imply.
fn read_header(
    path: &Path,
    reader: &mut impl Read,
    corner_links: bool,
    geese: u32,
) -> Result<(Vec<SidewaysLayerStats>, u64), RetroError> {
    let mut header = [0u8; HEADER_BYTES as usize];
    reader
        .read_exact(&mut header)
        .map_err(|e| error(path, format!("header: {e}")))?;
    if &header[..8] != MAGIC {
        return Err(error(path, "not a chain-plane file (wrong magic bytes)"));
    }
    let u32_at = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().unwrap());
    let (version, corners, found_geese, layers) = (u32_at(8), u32_at(12), u32_at(16), u32_at(20));
    let words = u64::from_le_bytes(header[24..32].try_into().unwrap());
    if version != VERSION {
        return Err(error(
            path,
            format!("format version {version}; this build reads version {VERSION}"),
        ));
    }
    if corners != corner_links as u32 {
        return Err(error(
            path,
            format!(
                "corner links {corners} in the file, {} asked",
                corner_links as u32
            ),
        ));
    }
    if found_geese != geese {
        return Err(error(
            path,
            format!("holds {found_geese} geese, its name says {geese}"),
        ));
    }
    if words != Layer::words_for(geese) as u64 {
        return Err(error(
            path,
            format!(
                "{words} words per plane; {geese} geese need {}",
                Layer::words_for(geese)
            ),
        ));
    }
    if layers != geese + 1 - GEESE_NEEDED {
        return Err(error(
            path,
            format!(
                "statistics of {layers} layers; layers {GEESE_NEEDED} to {geese} are {}",
                geese + 1 - GEESE_NEEDED
            ),
        ));
    }
    let expected = HEADER_BYTES + STATS_BYTES * layers as u64 + 16 * words + 4;
    let length = std::fs::metadata(path).map_err(|e| error(path, e))?.len();
    if length != expected {
        return Err(error(
            path,
            format!("{length} bytes; its header says {expected}"),
        ));
    }
    let mut stats = Vec::with_capacity(layers as usize);
    for _ in 0..layers {
        let mut record = [0u8; STATS_BYTES as usize];
        reader
            .read_exact(&mut record)
            .map_err(|e| error(path, format!("statistics: {e}")))?;
        let v: [u64; 9] = std::array::from_fn(|i| {
            u64::from_le_bytes(record[8 * i..8 * i + 8].try_into().unwrap())
        });
        stats.push(stats_from_record(v));
    }
    Ok((stats, words))
}

/// A layer's statistics as the file's nine words, in the field order
/// [`stats_from_record`] reads them back.
fn stats_record(s: &SidewaysLayerStats) -> [u64; 9] {
    [
        s.geese as u64,
        s.placements,
        s.fox_to_move,
        s.fox_wins,
        s.geese_wins,
        s.longest as u64,
        s.geese_to_move_fox_wins,
        s.geese_to_move_geese_wins,
        s.elapsed.as_nanos() as u64,
    ]
}

fn stats_from_record(v: [u64; 9]) -> SidewaysLayerStats {
    SidewaysLayerStats {
        geese: v[0] as u32,
        placements: v[1],
        fox_to_move: v[2],
        fox_wins: v[3],
        geese_wins: v[4],
        longest: v[5] as u32,
        geese_to_move_fox_wins: v[6],
        geese_to_move_geese_wins: v[7],
        elapsed: Duration::from_nanos(v[8]),
        saved_in: None,
    }
}

/// Reads a saved layer's two chain planes, checking the whole file.
pub(crate) fn load(saved: &SavedChains, corner_links: bool) -> Result<[Layer; 2], RetroError> {
    let path = &saved.path;
    let mut reader = HashingReader {
        inner: BufReader::with_capacity(1 << 20, File::open(path).map_err(|e| error(path, e))?),
        hasher: crc32fast::Hasher::new(),
    };
    let (_, words) = read_header(path, &mut reader, corner_links, saved.geese)?;
    let planes: [Layer; 2] = std::array::from_fn(|_| Layer::new(saved.geese));
    let mut bytes = vec![0u8; CHUNK_WORDS * 8];
    for plane in &planes {
        debug_assert_eq!(plane.words.len() as u64, words);
        for chunk in plane.words.chunks(CHUNK_WORDS) {
            let buf = &mut bytes[..chunk.len() * 8];
            reader
                .read_exact(buf)
                .map_err(|e| error(path, format!("planes: {e}")))?;
            for (word, b) in chunk.iter().zip(buf.chunks_exact(8)) {
                word.store(u64::from_le_bytes(b.try_into().unwrap()), Ordering::Relaxed);
            }
        }
    }
    let computed = reader.hasher.clone().finalize();
    let mut stored = [0u8; 4];
    reader
        .inner
        .read_exact(&mut stored)
        .map_err(|e| error(path, format!("checksum: {e}")))?;
    let stored = u32::from_le_bytes(stored);
    if stored != computed {
        return Err(error(
            path,
            format!("checksum {stored:08x} in the file, {computed:08x} computed: the file is damaged; remove it to build that layer again"),
        ));
    }
    Ok(planes)
}

/// Writes layer `geese`'s chain planes with the statistics of layers 4 to
/// `geese`, under a temporary name first; returns the file.
pub(crate) fn save(
    dir: &Path,
    corner_links: bool,
    stats: &[SidewaysLayerStats],
    planes: &[Layer; 2],
) -> Result<PathBuf, RetroError> {
    let geese = stats.last().map_or(GEESE_NEEDED, |s| s.geese);
    let path = chains_path(dir, corner_links, geese);
    halatafl_dataio::write_atomically_with(&path, |temporary| {
        write_file(temporary, corner_links, geese, stats, planes)
    })
    .map_err(|e| error(&path, format!("writing: {e}")))?;
    Ok(path)
}

fn write_file(
    temporary: &Path,
    corner_links: bool,
    geese: u32,
    stats: &[SidewaysLayerStats],
    planes: &[Layer; 2],
) -> std::io::Result<()> {
    let file = File::create(temporary)?;
    let mut out = HashingWriter {
        inner: BufWriter::with_capacity(1 << 20, file),
        hasher: crc32fast::Hasher::new(),
    };
    out.write_all(MAGIC)?;
    for v in [VERSION, corner_links as u32, geese, stats.len() as u32] {
        out.write_all(&v.to_le_bytes())?;
    }
    out.write_all(&(planes[0].words.len() as u64).to_le_bytes())?;
    for s in stats {
        for v in stats_record(s) {
            out.write_all(&v.to_le_bytes())?;
        }
    }
    let mut bytes = Vec::with_capacity(CHUNK_WORDS * 8);
    for plane in planes {
        for chunk in plane.words.chunks(CHUNK_WORDS) {
            bytes.clear();
            for word in chunk {
                bytes.extend_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
            }
            out.write_all(&bytes)?;
        }
    }
    let crc = out.hasher.clone().finalize();
    let mut inner = out.inner;
    inner.write_all(&crc.to_le_bytes())?;
    let file = inner.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()
}

/// A reader that checksums what passes through it.
struct HashingReader<R> {
    inner: R,
    hasher: crc32fast::Hasher,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// A writer that checksums what passes through it.
struct HashingWriter<W> {
    inner: W,
    hasher: crc32fast::Hasher,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
