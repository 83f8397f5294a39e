//! The policy/value network on libtorch through `tch`: the input encoding and
//! policy index space ([`encoding`]), the auxiliary training targets
//! ([`targets`]), the residual network ([`model`]) and its
//! inference form with folded batch norm ([`inference`]), the training step
//! ([`trainer`]), checkpoints ([`checkpoint`]), and the batching evaluator that
//! serves tree searches on many threads from one inference thread
//! ([`inference_server`]).
//!
//! Threads: tch tensors are not `Sync`, so exactly one thread owns an
//! [`inference::InferenceNet`]; others talk to it over a channel. Call
//! [`set_threads`] once at start-up to fix libtorch's intra-op pool.

#![warn(missing_docs)]

pub mod agent;
pub mod autocast;
pub mod bench;
pub mod checkpoint;
pub mod config;
pub mod denormal;
pub mod encoding;
pub mod inference;
pub mod inference_server;
pub mod model;
pub mod sample;
pub mod targets;
pub mod trainer;

pub use agent::{
    build_net_agent, build_shipped_agent, NetRegistry, NetSource, SHIPPED_NETWORK,
    SHIPPED_NETWORK_NAME,
};
pub use config::NetConfig;
pub use inference::{InferenceNet, Precision, PrecisionChoice, PrecisionTrial, PreparedNet};
pub use inference_server::{EvaluatorConfig, EvaluatorStats, NetEvaluator};
pub use sample::{Batch, Sample};
pub use targets::{AuxHeads, AuxTarget, AuxWeights, GameEnd, PerTarget};
pub use trainer::{Losses, LrSchedule, NonFiniteLoss, OptimizerKind, TrainConfig, Trainer};

use thiserror::Error;

/// Why a device name did not give a device ([`parse_device`]).
#[derive(Debug, Error)]
pub enum DeviceError {
    /// The name is none of `cpu`, `auto`, `cuda`, `gpu`, `cuda:N` (the name
    /// as given).
    #[error("unknown device `{0}`: expected cpu, cuda or cuda:N")]
    Unknown(String),
    /// A CUDA device was named, but libtorch sees no GPU or none with that
    /// index (the name as given).
    #[error("device `{0}` was asked for but no CUDA GPU is available to libtorch")]
    NoCuda(String),
}

/// Parses `cpu`, `cuda`, `cuda:N`; `auto` takes CUDA when present.
pub fn parse_device(text: &str) -> Result<tch::Device, DeviceError> {
    match text {
        "cpu" => Ok(tch::Device::Cpu),
        "auto" => Ok(tch::Device::cuda_if_available()),
        "cuda" | "gpu" => {
            if tch::Cuda::is_available() {
                Ok(tch::Device::Cuda(0))
            } else {
                Err(DeviceError::NoCuda(text.into()))
            }
        }
        t => match t
            .strip_prefix("cuda:")
            .and_then(|n| n.parse::<usize>().ok())
        {
            Some(n) if tch::Cuda::is_available() && (n as i64) < tch::Cuda::device_count() => {
                Ok(tch::Device::Cuda(n))
            }
            Some(_) => Err(DeviceError::NoCuda(text.into())),
            None => Err(DeviceError::Unknown(text.into())),
        },
    }
}

/// Sets libtorch's intra-op thread count (per process) and one inter-op
/// thread: this project parallelises across games itself. Also flushes
/// subnormal floats to zero on the calling thread (see [`denormal`]): every
/// thread that runs the network calls this first.
pub fn set_threads(intra_op: usize) {
    denormal::flush_denormals();
    keep_freed_memory();
    tch::set_num_threads(intra_op.max(1) as i32);
}

/// Tells glibc's allocator to keep freed memory rather than hand it back
/// to the system after every network call (trim and mmap thresholds of
/// 256 MiB): each call allocates and frees its activations, and giving
/// them back meant fresh zeroed pages every call.
fn keep_freed_memory() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only sets allocator parameters; glibc documents
        // both as safe to change at any time.
        unsafe {
            libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
            libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 20);
        }
    });
}
