//! Sample shards: the files self-play workers write and the trainer reads.
//!
//! Layout (little-endian):
//! - magic `HTFLSHD1`;
//! - u32 header length, then a JSON header ([`ShardHeader`]);
//! - `count` records of 51 bytes plus 5 per auxiliary label and 2 per legal
//!   move: foxes u64, geese u64, side u8, quiet u16, repetitions u8, variant
//!   (kind, corner links, geese, sideways: 4 x u8), number of legal moves
//!   u16, result WDL 3 x f32, search WDL 3 x f32, number of auxiliary labels
//!   u8, then each label as its target's shard tag u8 and its value f32 (see
//!   `halatafl_nn::targets`: a target without a label is absent), then the
//!   policy target over the legal moves in `Position::legal_moves` order,
//!   each as u16 / 65535;
//! - CRC-32 of everything before it.
//!
//! Versions: 3 (written now) stores any auxiliary target's label by its
//! tag, so a new target needs no new version. Version 2 shards, whose
//! records end their fixed part with the plies left as u16 (0: unknown), and
//! version 1 shards, from before it, still load (with the moves-left label,
//! or none), so runs begun before them resume (samples without a label do
//! not train that head); any other version is refused, and so is a record
//! with a tag this build does not know.
//!
//! Shards are written to a hidden temporary name and renamed, so a reader
//! never sees a partial one; a damaged file fails its CRC and is refused with
//! its path and what is wrong.

use crate::selfplay_stats::SelfPlayStats;
use halatafl_nn::{AuxTarget, PerTarget, Sample};
use halatafl_rules::{Bitboard, Position, Side, Variant};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The first eight bytes of every shard file.
pub const MAGIC: &[u8; 8] = b"HTFLSHD1";
/// The shard format version written now (records carry tagged auxiliary
/// labels).
pub const SHARD_VERSION: u32 = 3;
/// The version whose records carry the plies left as u16, still read.
pub const SHARD_VERSION_WITH_PLIES_LEFT: u32 = 2;
/// The version before the plies left, still read.
pub const SHARD_VERSION_WITHOUT_PLIES_LEFT: u32 = 1;
/// Fixed bytes of a version 1 record; version 2 adds 2 (the plies left),
/// version 3 adds 1 (the number of labels) and 5 per label.
const RECORD_FIXED_V1: usize = 8 + 8 + 1 + 2 + 1 + 4 + 2 + 12 + 12;
/// Bytes of one auxiliary label in a version 3 record: tag and value.
const LABEL_BYTES: usize = 1 + 4;

/// A shard's JSON header: what the records are and where they come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardHeader {
    /// The shard format version ([`SHARD_VERSION`], or
    /// [`SHARD_VERSION_WITH_PLIES_LEFT`] or
    /// [`SHARD_VERSION_WITHOUT_PLIES_LEFT`] for an old shard).
    pub version: u32,
    /// The network input encoding the samples were made for; a shard of
    /// another encoding is refused.
    pub encoding_version: u32,
    /// The generation whose training the samples are for (played by
    /// checkpoint `generation - 1`; 0 for the expert's games).
    pub generation: u32,
    /// Number of sample records.
    pub count: usize,
    /// Number of games the samples come from.
    pub games: usize,
    /// Who made an asynchronous worker's shard and how its games went (see
    /// [`crate::selfplay_stage`]). Absent from the shards `halatafl train`
    /// writes, whose bytes are therefore what they were before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<ShardOrigin>,
}

/// The header's record of an asynchronous self-play worker's shard: the
/// learner writes `selfplay.csv` from these, so workers never write a CSV.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardOrigin {
    /// The worker's `--worker` id.
    pub worker: String,
    /// The checkpoint that played the games (the shard's generation minus
    /// one, as in `halatafl train`: samples of generation g come from
    /// checkpoint g-1 and train checkpoint g).
    pub checkpoint: u32,
    /// The games' totals (`seconds` is the time the worker took for them).
    pub stats: SelfPlayStats,
    /// The worker's inference server since it loaded the checkpoint.
    pub net_batch_mean: f64,
    /// The same server's cache hit rate.
    pub cache_hit_rate: f64,
}

/// A sample as stored: the training sample plus the search's own value.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredSample {
    /// The position and its training targets.
    pub sample: Sample,
    /// The root value of the search, for the side to move.
    pub search_wdl: [f32; 3],
}

/// Why a shard could not be written or read.
#[derive(Debug, Error)]
pub enum ShardError {
    /// The file could not be written, or read (missing, not a regular file,
    /// larger than [`MAX_SHARD_BYTES`]).
    #[error("shard {path}: {source}")]
    Io {
        /// The shard file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file as a whole is wrong: bad magic, checksum mismatch, a bad
    /// header, another format or encoding version, trailing bytes.
    #[error("shard {path}: {why}")]
    Bad {
        /// The shard file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// One record is wrong (truncated, an unknown variant or impossible
    /// position, targets that are not probabilities, a policy of the wrong
    /// length or all zero).
    #[error("shard {path}, record {record}: {why}")]
    BadRecord {
        /// The shard file.
        path: PathBuf,
        /// The record's index, from 0.
        record: usize,
        /// What is wrong with it.
        why: String,
    },
}

impl ShardError {
    /// Whether the file itself is at fault: damaged (checksum, records),
    /// foreign (not a shard, another version or encoding) or not a regular
    /// file. Such a shard can be set aside; any other I/O error (permissions,
    /// a failing disk) is the machine's and must stop the stage.
    pub fn is_bad_file(&self) -> bool {
        match self {
            ShardError::Io { source, .. } => source.kind() == std::io::ErrorKind::InvalidInput,
            ShardError::Bad { .. } | ShardError::BadRecord { .. } => true,
        }
    }
}

fn variant_bytes(v: Variant) -> [u8; 4] {
    [
        v.is_classic() as u8,
        v.corner_links as u8,
        v.geese,
        v.sideways as u8,
    ]
}

fn variant_from(bytes: &[u8]) -> Result<Variant, String> {
    let corner = bytes[1] != 0;
    match bytes[0] {
        0 => Ok(Variant::two_foxes().with_corner_links(corner)),
        1 => Variant::classic(bytes[2], bytes[3] != 0).map(|v| v.with_corner_links(corner)),
        k => Err(format!("unknown variant kind {k}")),
    }
}

/// A shard's bytes: the header for `generation`, `games` and `origin`, the
/// records of `samples`, and the checksum.
pub fn encode_shard(
    samples: &[StoredSample],
    generation: u32,
    games: usize,
    origin: Option<&ShardOrigin>,
) -> Vec<u8> {
    let header = ShardHeader {
        version: SHARD_VERSION,
        encoding_version: halatafl_nn::encoding::ENCODING_VERSION,
        generation,
        count: samples.len(),
        games,
        origin: origin.cloned(),
    };
    let header = serde_json::to_vec(&header).expect("header serialises");
    let mut out =
        Vec::with_capacity(16 + header.len() + samples.len() * (RECORD_FIXED_V1 + 1 + 60));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&header);
    for s in samples {
        let p = &s.sample.position;
        out.extend_from_slice(&p.foxes().0.to_le_bytes());
        out.extend_from_slice(&p.geese().0.to_le_bytes());
        out.push((p.side() == Side::Geese) as u8);
        out.extend_from_slice(&p.quiet().to_le_bytes());
        out.push(s.sample.repetitions);
        out.extend_from_slice(&variant_bytes(p.variant()));
        out.extend_from_slice(&(s.sample.policy.len() as u16).to_le_bytes());
        for v in s.sample.wdl.iter().chain(s.search_wdl.iter()) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let labels = || s.sample.aux.iter().filter_map(|(t, v)| v.map(|v| (t, v)));
        out.push(labels().count() as u8);
        for (target, value) in labels() {
            out.push(target.spec().shard_tag);
            out.extend_from_slice(&value.to_le_bytes());
        }
        for &q in &s.sample.policy {
            out.extend_from_slice(&((q.clamp(0.0, 1.0) * 65535.0).round() as u16).to_le_bytes());
        }
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Writes [`encode_shard`]'s bytes to `path` atomically (temporary name,
/// then rename).
pub fn write_shard(
    path: &Path,
    samples: &[StoredSample],
    generation: u32,
    games: usize,
    origin: Option<&ShardOrigin>,
) -> Result<(), ShardError> {
    let bytes = encode_shard(samples, generation, games, origin);
    halatafl_dataio::write_atomically(path, &bytes).map_err(|source| ShardError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Largest shard file read. A record is at most a few hundred bytes and
/// [`crate::config`] bounds the samples per shard, so real shards stay far
/// below this; a wrong file (a device, an image) is refused before reading.
pub const MAX_SHARD_BYTES: u64 = 1 << 30;

/// A shard file's bytes: a regular file of at most [`MAX_SHARD_BYTES`].
fn read_shard_bytes(path: &Path) -> Result<Vec<u8>, ShardError> {
    halatafl_dataio::read_bounded_file(path, MAX_SHARD_BYTES).map_err(|source| ShardError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads and checks the shard at `path`: its header and every sample.
pub fn read_shard(path: &Path) -> Result<(ShardHeader, Vec<StoredSample>), ShardError> {
    decode_shard(path, &read_shard_bytes(path)?)
}

/// A shard's header, after the same checks as [`read_shard`] (the checksum
/// covers the whole file) but without decoding the records (the learner
/// and the workers count samples this way).
pub fn read_shard_header(path: &Path) -> Result<ShardHeader, ShardError> {
    decode_header(path, &read_shard_bytes(path)?).map(|(header, _, _)| header)
}

/// The checked header, the body (the bytes before the CRC) and where the
/// records start.
fn decode_header<'a>(
    path: &Path,
    bytes: &'a [u8],
) -> Result<(ShardHeader, &'a [u8], usize), ShardError> {
    let bad = |why: String| ShardError::Bad {
        path: path.to_path_buf(),
        why,
    };
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return Err(bad("not a halatafl sample shard (bad magic)".into()));
    }
    let body = &bytes[..bytes.len() - 4];
    let crc = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().expect("4 bytes"));
    if crc32fast::hash(body) != crc {
        return Err(bad(
            "checksum mismatch: the file is truncated or corrupt".into()
        ));
    }
    let header_len = u32::from_le_bytes(body[8..12].try_into().expect("4 bytes")) as usize;
    let header_end = 12usize
        .checked_add(header_len)
        .filter(|&e| e <= body.len())
        .ok_or_else(|| bad("header runs past the end".into()))?;
    let header: ShardHeader = serde_json::from_slice(&body[12..header_end])
        .map_err(|e| bad(format!("bad header: {e}")))?;
    let read = [
        SHARD_VERSION,
        SHARD_VERSION_WITH_PLIES_LEFT,
        SHARD_VERSION_WITHOUT_PLIES_LEFT,
    ];
    if !read.contains(&header.version) {
        return Err(bad(format!(
            "shard version {} is not {SHARD_VERSION} (nor {SHARD_VERSION_WITH_PLIES_LEFT} or \
             {SHARD_VERSION_WITHOUT_PLIES_LEFT}, still read): written by another halatafl version",
            header.version
        )));
    }
    if header.encoding_version != halatafl_nn::encoding::ENCODING_VERSION {
        return Err(bad(format!(
            "written for input encoding {}, this build uses {}",
            header.encoding_version,
            halatafl_nn::encoding::ENCODING_VERSION
        )));
    }
    Ok((header, body, header_end))
}

/// [`read_shard`] on a shard's bytes; `path` only names them in errors.
pub fn decode_shard(
    path: &Path,
    bytes: &[u8],
) -> Result<(ShardHeader, Vec<StoredSample>), ShardError> {
    let bad = |why: String| ShardError::Bad {
        path: path.to_path_buf(),
        why,
    };
    let (header, body, header_end) = decode_header(path, bytes)?;
    let record_fixed = match header.version {
        SHARD_VERSION_WITHOUT_PLIES_LEFT => RECORD_FIXED_V1,
        SHARD_VERSION_WITH_PLIES_LEFT => RECORD_FIXED_V1 + 2,
        _ => RECORD_FIXED_V1 + 1,
    };
    let mut at = header_end;
    let mut samples = Vec::with_capacity(header.count);
    for record in 0..header.count {
        let bad_record = |why: String| ShardError::BadRecord {
            path: path.to_path_buf(),
            record,
            why,
        };
        if at + record_fixed > body.len() {
            return Err(bad_record("file ends inside the record".into()));
        }
        let r = &body[at..at + record_fixed];
        let u64_at = |o: usize| u64::from_le_bytes(r[o..o + 8].try_into().expect("8 bytes"));
        let f32_at = |o: usize| f32::from_le_bytes(r[o..o + 4].try_into().expect("4 bytes"));
        let side = if r[16] == 0 { Side::Foxes } else { Side::Geese };
        let quiet = u16::from_le_bytes([r[17], r[18]]);
        let repetitions = r[19];
        let variant = variant_from(&r[20..24]).map_err(bad_record)?;
        let n = u16::from_le_bytes([r[24], r[25]]) as usize;
        let wdl = [f32_at(26), f32_at(30), f32_at(34)];
        let search_wdl = [f32_at(38), f32_at(42), f32_at(46)];
        let mut aux = PerTarget::default();
        let mut labels = 0;
        match header.version {
            SHARD_VERSION_WITHOUT_PLIES_LEFT => {}
            SHARD_VERSION_WITH_PLIES_LEFT => {
                let plies = u16::from_le_bytes([r[50], r[51]]);
                aux[AuxTarget::MovesLeft] = (plies > 0).then_some(plies as f32);
            }
            _ => labels = r[50] as usize,
        }
        // Searched values are averages of floats: allow rounding, not NaN.
        let targets_ok = wdl
            .iter()
            .chain(&search_wdl)
            .all(|v| (-1e-4..=1.0 + 1e-4).contains(v));
        if !targets_ok {
            return Err(bad_record(format!(
                "value targets {wdl:?} / {search_wdl:?} are not probabilities in [0, 1]"
            )));
        }
        let foxes = Bitboard(u64_at(0));
        let geese = Bitboard(u64_at(8));
        if (foxes | geese).0 & !Bitboard::BOARD.0 != 0 {
            return Err(bad_record("pieces off the board".into()));
        }
        let position = Position::new(variant, foxes, geese, side, quiet)
            .map_err(|e| bad_record(e.to_string()))?;
        at += record_fixed;
        if at + LABEL_BYTES * labels > body.len() {
            return Err(bad_record("file ends inside the auxiliary labels".into()));
        }
        for label in body[at..at + LABEL_BYTES * labels].chunks_exact(LABEL_BYTES) {
            let tag = label[0];
            let value = f32::from_le_bytes(label[1..].try_into().expect("4 bytes"));
            let target = AuxTarget::from_shard_tag(tag).ok_or_else(|| {
                bad_record(format!(
                    "unknown auxiliary target tag {tag} (written by a newer halatafl)"
                ))
            })?;
            if aux[target].is_some() {
                return Err(bad_record(format!("two {target} labels")));
            }
            if !value.is_finite() {
                return Err(bad_record(format!("{target} label {value} is not finite")));
            }
            aux[target] = Some(value);
        }
        at += LABEL_BYTES * labels;
        if at + 2 * n > body.len() {
            return Err(bad_record("file ends inside the policy".into()));
        }
        let legal = position.legal_moves().len();
        if legal != n {
            return Err(bad_record(format!(
                "policy has {n} entries but the position has {legal} legal moves"
            )));
        }
        let mut policy: Vec<f32> = body[at..at + 2 * n]
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) as f32 / 65535.0)
            .collect();
        at += 2 * n;
        let total: f32 = policy.iter().sum();
        if total <= 0.0 {
            return Err(bad_record("policy target is all zero".into()));
        }
        policy.iter_mut().for_each(|q| *q /= total);
        samples.push(StoredSample {
            sample: Sample {
                position,
                repetitions,
                policy,
                wdl,
                aux,
            },
            search_wdl,
        });
    }
    if at != body.len() {
        return Err(bad(format!(
            "{} bytes after the last record",
            body.len() - at
        )));
    }
    Ok((header, samples))
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_rules::Game;

    fn some_samples() -> Vec<StoredSample> {
        let mut game = Game::start_of(Variant::two_foxes());
        let mut out = Vec::new();
        for i in 0..30 {
            let moves = game.position().legal_moves();
            let mut policy = vec![0.0; moves.len()];
            policy[i % moves.len()] = 0.75;
            policy[(i + 1) % moves.len()] += 0.25;
            out.push(StoredSample {
                sample: Sample {
                    position: *game.position(),
                    repetitions: 1,
                    policy,
                    wdl: [0.0, 1.0, 0.0],
                    aux: PerTarget::from_fn(|_| (i % 3 != 0).then_some((30 - i) as f32)),
                },
                search_wdl: [0.2, 0.5, 0.3],
            });
            game.play_unchecked(moves[i % moves.len()]);
        }
        out
    }

    #[test]
    fn round_trip_and_damage_is_refused() {
        let samples = some_samples();
        let bytes = encode_shard(&samples, 3, 1, None);
        let path = Path::new("mem.shard");
        let (header, back) = decode_shard(path, &bytes).unwrap();
        assert_eq!(header.count, samples.len());
        assert_eq!(header.generation, 3);
        let plies_left = |s: &StoredSample| s.sample.aux[AuxTarget::MovesLeft];
        assert!(back.iter().any(|s| plies_left(s).is_none()));
        assert!(back.iter().any(|s| plies_left(s).is_some()));
        for (a, b) in samples.iter().zip(&back) {
            assert_eq!(a.sample.position, b.sample.position);
            assert_eq!(a.sample.wdl, b.sample.wdl);
            assert_eq!(a.sample.aux, b.sample.aux);
            for (x, y) in a.sample.policy.iter().zip(&b.sample.policy) {
                assert!((x - y).abs() < 1e-4);
            }
        }
        let err = decode_shard(path, &bytes[..bytes.len() - 7]).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
        let mut flipped = bytes.clone();
        flipped[100] ^= 0x40;
        assert!(decode_shard(path, &flipped).is_err());
        assert!(decode_shard(path, b"garbage")
            .unwrap_err()
            .to_string()
            .contains("magic"));
        // A value target that is not a probability (NaN would poison training).
        let mut nan = samples.clone();
        nan[5].sample.wdl = [f32::NAN, 0.0, 0.0];
        let err = decode_shard(path, &encode_shard(&nan, 3, 1, None)).unwrap_err();
        assert!(
            matches!(err, ShardError::BadRecord { record: 5, .. })
                && err.to_string().contains("not probabilities"),
            "{err}"
        );
    }

    /// `samples` as a version 1 shard (before the plies left) or a version 2
    /// one (the plies left as u16) would hold them.
    fn old_shard(samples: &[StoredSample], version: u32) -> Vec<u8> {
        let v3 = encode_shard(samples, 3, 1, None);
        let header_len = u32::from_le_bytes(v3[8..12].try_into().unwrap()) as usize;
        let header = std::str::from_utf8(&v3[12..12 + header_len]).unwrap();
        let header = header.replace("\"version\":3", &format!("\"version\":{version}"));
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        let mut at = 12 + header_len;
        for s in samples {
            let labels = v3[at + RECORD_FIXED_V1] as usize;
            let record = RECORD_FIXED_V1 + 1 + LABEL_BYTES * labels + 2 * s.sample.policy.len();
            // The fixed part up to the search WDL, then (version 2) the
            // plies left, then the policy.
            out.extend_from_slice(&v3[at..at + RECORD_FIXED_V1]);
            if version == 2 {
                let plies = s.sample.aux[AuxTarget::MovesLeft].map_or(0, |p| p as u16);
                out.extend_from_slice(&plies.to_le_bytes());
            }
            out.extend_from_slice(
                &v3[at + RECORD_FIXED_V1 + 1 + LABEL_BYTES * labels..at + record],
            );
            at += record;
        }
        assert_eq!(at, v3.len() - 4);
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    #[test]
    fn version_1_and_2_shards_load_and_other_versions_are_refused() {
        let samples = some_samples();
        let path = Path::new("old.shard");
        for version in [1, 2] {
            let (header, back) = decode_shard(path, &old_shard(&samples, version)).unwrap();
            assert_eq!(header.version, version);
            assert_eq!(back.len(), samples.len());
            for (a, b) in samples.iter().zip(&back) {
                assert_eq!(a.sample.position, b.sample.position);
                assert_eq!(a.sample.wdl, b.sample.wdl);
                assert_eq!(a.search_wdl, b.search_wdl);
                // Version 1 has no labels; version 2 has every plies left,
                // and nothing else.
                let mut want = PerTarget::default();
                if version == 2 {
                    want[AuxTarget::MovesLeft] = a.sample.aux[AuxTarget::MovesLeft];
                }
                assert_eq!(b.sample.aux, want);
            }
        }
        // Written now: version 3.
        let (header, _) = decode_shard(path, &encode_shard(&samples, 3, 1, None)).unwrap();
        assert_eq!(header.version, SHARD_VERSION);
        // A version from elsewhere is refused, naming the versions read.
        let v1 = old_shard(&samples, 1);
        let header_len = u32::from_le_bytes(v1[8..12].try_into().unwrap()) as usize;
        let mut v7 = v1[..v1.len() - 4].to_vec();
        let at = 12
            + std::str::from_utf8(&v7[12..12 + header_len])
                .unwrap()
                .find("\"version\":1")
                .unwrap();
        v7[at + 10] = b'7';
        let crc = crc32fast::hash(&v7);
        v7.extend_from_slice(&crc.to_le_bytes());
        let err = decode_shard(path, &v7).unwrap_err().to_string();
        assert!(
            err.contains("shard version 7 is not 3 (nor 2 or 1"),
            "{err}"
        );
    }

    #[test]
    fn a_label_of_an_unknown_target_is_refused_with_its_record() {
        let samples = some_samples();
        let mut bytes = encode_shard(&samples, 3, 1, None);
        let header_len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
        // Record 0 has no label (0 % 3 == 0); record 1 has one: its tag
        // follows the label count.
        let first = RECORD_FIXED_V1 + 1 + 2 * samples[0].sample.policy.len();
        let tag_at = 12 + header_len + first + RECORD_FIXED_V1 + 1;
        assert_eq!(bytes[tag_at], AuxTarget::MovesLeft.spec().shard_tag);
        bytes[tag_at] = 200;
        let end = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[..end]);
        bytes[end..].copy_from_slice(&crc.to_le_bytes());
        let err = decode_shard(Path::new("new.shard"), &bytes).unwrap_err();
        assert!(
            matches!(err, ShardError::BadRecord { record: 1, .. })
                && err.to_string().contains("unknown auxiliary target tag 200"),
            "{err}"
        );
    }

    #[test]
    fn devices_directories_and_oversized_files_are_not_read() {
        let dir = std::env::temp_dir().join(format!("halatafl-shard-size-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.shard");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_SHARD_BYTES + 1)
            .unwrap();
        let err = read_shard(&big).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("more than the {MAX_SHARD_BYTES}")),
            "{err}"
        );
        let mut others = vec![dir.clone()];
        if Path::new("/dev/zero").exists() {
            others.push(PathBuf::from("/dev/zero"));
        }
        for path in others {
            let err = read_shard(&path).unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{err}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
