//! Checkpoints: one safetensors file (readable from Python with
//! `safetensors.torch.load_file`) holding the weights (`net/<name>`, batch-norm
//! statistics included), the optimizer's moment buffers (`opt/<name>/m`,
//! `opt/<name>/v`), and in its metadata the network config, the training
//! config, the step, the encoding version and a CRC-32 of the tensors
//! (`tensor_crc32`, see [`tensor_checksum`]). Written with
//! `halatafl_dataio::write_atomically`: a reader sees the old file or the new
//! one, never half of one.
//!
//! Format versions: 2 (this one) carries the checksum, and a file whose
//! tensors do not match it is refused. Version 1 files (before the checksum)
//! still load, unverified, with a warning on stderr: experiments keep old
//! checkpoints as opponents and reference points, and refusing them would
//! strand those; whatever training writes from them is version 2. Any other
//! version is refused with both versions named.
//!
//! Auxiliary heads ([`NetConfig::heads`], [`crate::targets`]) need no new
//! format version: a network with a head says so in its `net` metadata
//! (`moves_left_head: true`) and holds the head's tensors
//! (`net/moves_left.*`, with their optimizer moments), a network without
//! any writes exactly the metadata and tensors it always did. Files from
//! before a head load as networks without it; a build from before a head
//! refuses a file with it (an unknown `<target>_head` key in `net`).
//! Resuming a run that turns a head on from a checkpoint without it is the
//! caller's choice: see [`Trainer::add_head`].

use crate::config::NetConfig;
use crate::encoding::ENCODING_VERSION;
use crate::trainer::{TrainConfig, Trainer};
use halatafl_dataio::{read_bounded_file, write_atomically};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use tch::{Device, Kind, Tensor};
use thiserror::Error;

/// The `format` metadata entry every halatafl checkpoint carries; a file
/// without it is refused as not a checkpoint of this project.
pub const FORMAT: &str = "halatafl-checkpoint";
/// The metadata entry (in [`CheckpointInfo::extra`]) naming the variant a
/// network was trained on, as `Variant`'s Display; network agents refuse to
/// play another. Checkpoints from before it have none and play any.
pub const VARIANT_KEY: &str = "variant";
/// The `format_version` written now: version 2, with the tensor checksum.
pub const FORMAT_VERSION: &str = "2";
/// The last format version without a tensor checksum; still loaded, unverified.
pub const UNCHECKED_FORMAT_VERSION: &str = "1";
/// Largest checkpoint file read. The shipped networks are a few MB; the
/// largest network [`NetConfig::validate`] allows (40 blocks of 512 channels,
/// heads of 512) takes about 2.4 GB with its optimizer state, so every
/// checkpoint this crate can write is below the limit, while a wrong path (a
/// disk image, a video) is refused before it is read into memory.
pub const MAX_CHECKPOINT_BYTES: u64 = 4 << 30;

/// Why a checkpoint could not be read or loaded.
#[derive(Debug, Error)]
pub enum CheckpointError {
    /// The file could not be read (missing, unreadable, or larger than
    /// [`MAX_CHECKPOINT_BYTES`]).
    #[error("checkpoint {path}: cannot read: {source}")]
    Io {
        /// The checkpoint file.
        path: PathBuf,
        /// The read error.
        source: std::io::Error,
    },
    /// The bytes are not a valid safetensors file.
    #[error("checkpoint {path}: not a readable safetensors file (truncated or corrupt?): {why}")]
    Corrupt {
        /// The checkpoint file.
        path: PathBuf,
        /// What the safetensors parser reported.
        why: String,
    },
    /// A valid safetensors file whose content does not fit: not a halatafl
    /// checkpoint, another format or encoding version, a bad or
    /// out-of-range config, a different network shape than expected, or a
    /// missing or misshapen tensor.
    #[error("checkpoint {path}: {why}")]
    Mismatch {
        /// The checkpoint file.
        path: PathBuf,
        /// What does not fit, in words.
        why: String,
    },
    /// The tensors do not match the checksum stored with them: the file is
    /// damaged.
    #[error(
        "checkpoint {path}: tensor checksum mismatch (stored {stored:08x}, computed {computed:08x}): \
         the file is damaged; use an intact copy"
    )]
    Checksum {
        /// The checkpoint file.
        path: PathBuf,
        /// The CRC-32 in the metadata.
        stored: u32,
        /// The CRC-32 of the tensors as read.
        computed: u32,
    },
}

/// What a checkpoint says about itself, read without loading the weights.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointInfo {
    /// The network's shape, the moves-left head included.
    pub net: NetConfig,
    /// The training settings the weights were trained with.
    pub train: TrainConfig,
    /// Optimizer steps taken when the file was written.
    pub step: u64,
    /// The input encoding version (always this build's: others are refused).
    pub encoding_version: u32,
    /// The stored CRC-32 of the tensors ([`tensor_checksum`]); `None` in a
    /// version 1 file, which has none.
    pub tensor_crc32: Option<u32>,
    /// Caller-defined entries (generation, run name, ...).
    pub extra: BTreeMap<String, String>,
}

fn tensor_bytes(t: &Tensor) -> (Vec<usize>, Vec<u8>) {
    let t = t
        .detach()
        .to_kind(Kind::Float)
        .to_device(Device::Cpu)
        .contiguous();
    let shape: Vec<usize> = t.size().iter().map(|&d| d as usize).collect();
    let values = Vec::<f32>::try_from(t.view([-1])).expect("float tensor");
    let mut bytes = Vec::with_capacity(values.len() * 4);
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    (shape, bytes)
}

/// Saves `trainer` (weights, optimizer state, configs) to `path`.
pub fn save(
    trainer: &Trainer,
    path: &Path,
    extra: &BTreeMap<String, String>,
) -> std::io::Result<()> {
    let mut owned: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    let mut vars: Vec<(String, Tensor)> = trainer.vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, t) in &vars {
        let (shape, bytes) = tensor_bytes(t);
        owned.push((format!("net/{name}"), shape, bytes));
    }
    for (name, m, v) in &trainer.moments {
        let (shape, bytes) = tensor_bytes(m);
        owned.push((format!("opt/{name}/m"), shape, bytes));
        let (shape, bytes) = tensor_bytes(v);
        owned.push((format!("opt/{name}/v"), shape, bytes));
    }
    let views: Vec<(String, TensorView)> = owned
        .iter()
        .map(|(n, s, b)| {
            (
                n.clone(),
                TensorView::new(Dtype::F32, s.clone(), b).expect("shape matches bytes"),
            )
        })
        .collect();
    let mut meta: HashMap<String, String> =
        extra.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let crc = tensor_checksum(
        owned
            .iter()
            .map(|(n, s, b)| (n.as_str(), s.as_slice(), b.as_slice())),
    );
    meta.insert("tensor_crc32".into(), format!("{crc:08x}"));
    meta.insert("format".into(), FORMAT.into());
    meta.insert("format_version".into(), FORMAT_VERSION.into());
    meta.insert("encoding_version".into(), ENCODING_VERSION.to_string());
    meta.insert(
        "net".into(),
        serde_json::to_string(&trainer.net.config).expect("config serialises"),
    );
    meta.insert("preset".into(), trainer.net.config.to_string());
    meta.insert(
        "train".into(),
        serde_json::to_string(&trainer.config).expect("config serialises"),
    );
    meta.insert("step".into(), trainer.step.to_string());
    let bytes = safetensors::serialize(views, Some(meta))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    write_atomically(path, &bytes)
}

fn read(path: &Path) -> Result<Vec<u8>, CheckpointError> {
    read_bounded_file(path, MAX_CHECKPOINT_BYTES).map_err(|source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// CRC-32 over the tensors in name order: each tensor's name, its shape (as
/// u64 little-endian) and its bytes. Names and shapes are included so that a
/// damaged header pointing a name at other bytes is caught too. Computed from
/// the serialised views, so writer and reader hash exactly the same bytes.
pub fn tensor_checksum<'a>(
    tensors: impl IntoIterator<Item = (&'a str, &'a [usize], &'a [u8])>,
) -> u32 {
    let mut sorted: Vec<(&str, &[usize], &[u8])> = tensors.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let mut hasher = crc32fast::Hasher::new();
    for (name, shape, data) in sorted {
        hasher.update(name.as_bytes());
        hasher.update(&[0]);
        for &d in shape {
            hasher.update(&(d as u64).to_le_bytes());
        }
        hasher.update(data);
    }
    hasher.finalize()
}

fn parse_info(path: &Path, bytes: &[u8]) -> Result<CheckpointInfo, CheckpointError> {
    let corrupt = |why: String| CheckpointError::Corrupt {
        path: path.to_path_buf(),
        why,
    };
    let mismatch = |why: String| CheckpointError::Mismatch {
        path: path.to_path_buf(),
        why,
    };
    let (_, metadata) = SafeTensors::read_metadata(bytes).map_err(|e| corrupt(e.to_string()))?;
    let meta = metadata.metadata().clone().unwrap_or_default();
    let get = |k: &str| {
        meta.get(k)
            .cloned()
            .ok_or_else(|| mismatch(format!("metadata has no `{k}`: not a halatafl checkpoint")))
    };
    if get("format")? != FORMAT {
        return Err(mismatch(format!(
            "format is `{}`, expected `{FORMAT}`",
            get("format")?
        )));
    }
    let format_version = get("format_version")?;
    let tensor_crc32 = if format_version == FORMAT_VERSION {
        let text = get("tensor_crc32")?;
        Some(
            u32::from_str_radix(&text, 16)
                .map_err(|_| mismatch(format!("bad tensor_crc32 `{text}`")))?,
        )
    } else if format_version == UNCHECKED_FORMAT_VERSION {
        None
    } else {
        return Err(mismatch(format!(
            "checkpoint format version {format_version} is not {FORMAT_VERSION} \
             (nor {UNCHECKED_FORMAT_VERSION}, still read): written by another halatafl version"
        )));
    };
    let encoding_version: u32 = get("encoding_version")?
        .parse()
        .map_err(|_| mismatch("bad encoding_version".into()))?;
    if encoding_version != ENCODING_VERSION {
        return Err(mismatch(format!(
            "written with input encoding version {encoding_version}, this build uses version {ENCODING_VERSION}"
        )));
    }
    let net: NetConfig = serde_json::from_str(&get("net")?)
        .map_err(|e| mismatch(format!("bad network config: {e}")))?;
    net.validate()
        .map_err(|why| mismatch(format!("network config out of range: {why}")))?;
    let train: TrainConfig = serde_json::from_str(&get("train")?)
        .map_err(|e| mismatch(format!("bad training config: {e}")))?;
    let step: u64 = get("step")?
        .parse()
        .map_err(|_| mismatch("bad step".into()))?;
    let extra = meta
        .into_iter()
        .filter(|(k, _)| {
            ![
                "format",
                "format_version",
                "encoding_version",
                "net",
                "preset",
                "train",
                "step",
                "tensor_crc32",
            ]
            .contains(&k.as_str())
        })
        .collect();
    Ok(CheckpointInfo {
        net,
        train,
        step,
        encoding_version,
        tensor_crc32,
        extra,
    })
}

/// Reads only the metadata.
pub fn info(path: &Path) -> Result<CheckpointInfo, CheckpointError> {
    let bytes = read(path)?;
    parse_info(path, &bytes)
}

/// Loads a checkpoint into a new [`Trainer`] on `device`. With `expected`,
/// a different network shape is an error. The moves-left head is not part
/// of the comparison: the network is loaded as stored, with or without the
/// head (inference from a checkpoint of before the head simply predicts no
/// plies left), and [`CheckpointInfo::net`] says which.
pub fn load(
    path: &Path,
    expected: Option<NetConfig>,
    device: Device,
) -> Result<(Trainer, CheckpointInfo), CheckpointError> {
    let bytes = read(path)?;
    load_bytes(path, &bytes, expected, device)
}

/// [`load`] from a checkpoint's bytes; `path` only names them in errors.
pub fn load_bytes(
    path: &Path,
    bytes: &[u8],
    expected: Option<NetConfig>,
    device: Device,
) -> Result<(Trainer, CheckpointInfo), CheckpointError> {
    let info = parse_info(path, bytes)?;
    let mismatch = |why: String| CheckpointError::Mismatch {
        path: path.to_path_buf(),
        why,
    };
    if let Some(e) = expected {
        if e.without_heads() != info.net.without_heads() {
            return Err(mismatch(format!(
                "network is {} ({:?}), expected {} ({:?})",
                info.net, info.net, e, e
            )));
        }
    }
    let tensors = SafeTensors::deserialize(bytes).map_err(|e| CheckpointError::Corrupt {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    let views = tensors.tensors();
    let computed = tensor_checksum(views.iter().map(|(n, v)| (n.as_str(), v.shape(), v.data())));
    match info.tensor_crc32 {
        Some(stored) if stored != computed => {
            return Err(CheckpointError::Checksum {
                path: path.to_path_buf(),
                stored,
                computed,
            })
        }
        Some(_) => {}
        None => eprintln!(
            "warning: checkpoint {}: format version {UNCHECKED_FORMAT_VERSION} has no checksum, \
             so its tensors are loaded unverified (checkpoints written now are version {FORMAT_VERSION})",
            path.display()
        ),
    }
    let mut trainer = Trainer::new(info.net, info.train.clone(), device, 0);
    trainer.step = info.step;
    let fetch = |name: &str, target: &Tensor| -> Result<Tensor, CheckpointError> {
        let view = tensors
            .tensor(name)
            .map_err(|_| mismatch(format!("tensor `{name}` is missing")))?;
        if view.dtype() != Dtype::F32 {
            return Err(mismatch(format!(
                "tensor `{name}` is {:?}, expected F32",
                view.dtype()
            )));
        }
        let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
        if shape != target.size() {
            return Err(mismatch(format!(
                "tensor `{name}` has shape {:?}, expected {:?}",
                shape,
                target.size()
            )));
        }
        let values: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if values.iter().any(|v| !v.is_finite()) {
            return Err(mismatch(format!(
                "tensor `{name}` holds NaN or infinite values"
            )));
        }
        Ok(Tensor::from_slice(&values)
            .view(shape.as_slice())
            .to_device(device))
    };
    let expected_names = trainer.vs.variables().len() + 2 * trainer.moments.len();
    if tensors.len() != expected_names {
        return Err(mismatch(format!(
            "holds {} tensors, this network has {expected_names}",
            tensors.len()
        )));
    }
    tch::no_grad(|| -> Result<(), CheckpointError> {
        for (name, mut var) in trainer.vs.variables() {
            let value = fetch(&format!("net/{name}"), &var)?;
            var.copy_(&value);
        }
        for (name, m, v) in trainer.moments.iter_mut() {
            let vm = fetch(&format!("opt/{name}/m"), m)?;
            m.copy_(&vm);
            let vv = fetch(&format!("opt/{name}/v"), v)?;
            v.copy_(&vv);
        }
        Ok(())
    })?;
    Ok((trainer, info))
}

/// The metadata entry (in [`CheckpointInfo::extra`]) of an averaged
/// network: the file names it was averaged from, comma-separated, in order.
pub const AVERAGED_FROM_KEY: &str = "averaged_from";

/// Averages the networks in `paths` weight by weight: stochastic weight
/// averaging over a run's checkpoints (Izmailov et al. 2018, "Averaging
/// weights leads to wider optima and better generalization"; KataGo ships
/// such averages of its recent weights).
///
/// Decision: the batch-norm running statistics are averaged like the
/// weights rather than re-estimated on data. Consecutive generations of a
/// run sit close together in weight space, so the averaged statistics
/// stay near the averaged network's own, and the average needs nothing but
/// the files. Everything else (optimizer moments, step, training config,
/// metadata such as the generation and variant) comes from the last file,
/// so training can resume from the average as from that checkpoint; the
/// metadata gains [`AVERAGED_FROM_KEY`].
///
/// Every file must hold the same network (heads included) and name the
/// same variant; the error names the first file that differs.
pub fn average(
    paths: &[PathBuf],
    device: Device,
) -> Result<(Trainer, CheckpointInfo), CheckpointError> {
    let Some(last) = paths.last() else {
        return Err(CheckpointError::Mismatch {
            path: PathBuf::new(),
            why: "no checkpoints to average".into(),
        });
    };
    let (trainer, mut info) = load(last, None, device)?;
    let mut sums: Vec<(String, Tensor)> = trainer
        .vs
        .variables()
        .into_iter()
        .map(|(name, t)| (name, t.detach().to_kind(Kind::Double)))
        .collect();
    for path in &paths[..paths.len() - 1] {
        let (other, other_info) = load(path, None, device)?;
        let differs = |why: String| CheckpointError::Mismatch {
            path: path.clone(),
            why: format!("cannot be averaged with {}: {why}", last.display()),
        };
        if other_info.net != info.net {
            return Err(differs(format!(
                "network is {} ({:?}), the last file's is {} ({:?})",
                other_info.net, other_info.net, info.net, info.net
            )));
        }
        let variant = |i: &CheckpointInfo| i.extra.get(VARIANT_KEY).cloned();
        if variant(&other_info) != variant(&info) {
            return Err(differs(format!(
                "trained on {}, the last file on {}",
                variant(&other_info).unwrap_or_else(|| "an unnamed variant".into()),
                variant(&info).unwrap_or_else(|| "an unnamed variant".into())
            )));
        }
        let vars = other.vs.variables();
        for (name, sum) in sums.iter_mut() {
            let value = vars.get(name).expect("same network config, same variables");
            *sum += value.detach().to_kind(Kind::Double);
        }
    }
    let n = paths.len() as f64;
    tch::no_grad(|| {
        let mut vars = trainer.vs.variables();
        for (name, sum) in &sums {
            let var = vars.get_mut(name).expect("variable of this network");
            var.copy_(&(sum / n).to_kind(var.kind()));
        }
    });
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.display().to_string())
        })
        .collect();
    info.extra.insert(AVERAGED_FROM_KEY.into(), names.join(","));
    Ok((trainer, info))
}
