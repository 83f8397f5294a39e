//! Throughput of the network next to what the hardware can do, measured in one
//! run: a large matmul in fp32 and bf16 gives the reachable GFLOP/s, then
//! inference at several batch sizes and training steps report positions/s and
//! the GFLOP/s they reach (forward FLOPs from [`NetConfig::flops_per_position`];
//! a training step counts as 3x forward). Every figure is the median of
//! `repeats` timed runs after a warm-up.

use crate::checkpoint::{self, CheckpointError};
use crate::config::NetConfig;
use crate::denormal::set_flush_denormals;
use crate::inference::{InferenceNet, Precision};
use crate::sample::{Batch, Sample};
use crate::trainer::{TrainConfig, Trainer};
use halatafl_rules::{Game, Variant};
use std::path::Path;
use std::time::Instant;
use tch::{Device, Kind, Tensor};

/// One line of the benchmark table.
#[derive(Clone, Debug)]
pub struct BenchRow {
    /// What was timed: `matmul NxN`, `inference <preset>` or `training
    /// <preset>`, with ` subnormals kept` appended for the rows run with
    /// flush-to-zero off.
    pub what: String,
    /// `f32` or `bf16`.
    pub precision: String,
    /// Positions (or samples) per call; the matrix size `N` for the matmul
    /// rows.
    pub batch: usize,
    /// Positions (or samples) per second; 0 for the matmul rows.
    pub per_second: f64,
    /// Floating-point operations per second reached, in billions.
    pub gflops: f64,
    /// The median time of one call, in milliseconds.
    pub median_ms: f64,
}

fn median_seconds(repeats: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm-up
    let mut times: Vec<f64> = (0..repeats)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    times[times.len() / 2]
}

fn sync(device: Device) {
    if let Device::Cuda(i) = device {
        tch::Cuda::synchronize(i as i64);
    }
}

/// Times an `n` x `n` matrix product at `precision` on `device`: the
/// GFLOP/s the hardware reaches, to compare the network's rows with.
pub fn matmul(n: i64, precision: Precision, device: Device, repeats: usize) -> BenchRow {
    let _g = tch::no_grad_guard();
    let a = Tensor::randn([n, n], (Kind::Float, device)).to_kind(precision.kind());
    let b = Tensor::randn([n, n], (Kind::Float, device)).to_kind(precision.kind());
    let secs = median_seconds(repeats, || {
        let _ = a.matmul(&b);
        sync(device);
    });
    BenchRow {
        what: format!("matmul {n}x{n}"),
        precision: format!("{precision:?}").to_lowercase(),
        batch: n as usize,
        per_second: 0.0,
        gflops: 2.0 * (n as f64).powi(3) / secs / 1e9,
        median_ms: secs * 1e3,
    }
}

/// Random positions from seeded random games, as samples with uniform targets.
pub fn random_samples(count: usize, seed: u64) -> Vec<Sample> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut game = Game::start_of(Variant::two_foxes());
        while game.outcome().is_none() && out.len() < count {
            let moves = game.position().legal_moves();
            let n = moves.len();
            out.push(Sample {
                position: *game.position(),
                repetitions: game.repetitions() as u8,
                policy: vec![1.0 / n as f32; n],
                wdl: [0.3, 0.4, 0.3],
                aux: Default::default(),
            });
            game.play_unchecked(moves[(next() % n as u64) as usize]);
        }
    }
    out
}

/// Times `net`'s tensor-level forward pass on `batch` random positions
/// (outputs copied back to the host), `config` giving the FLOPs per
/// position.
pub fn inference(
    net: &InferenceNet,
    config: &NetConfig,
    precision: Precision,
    batch: usize,
    repeats: usize,
) -> BenchRow {
    let device = net.device();
    let samples = random_samples(batch, 11);
    let refs: Vec<&Sample> = samples.iter().collect();
    let planes = Batch::new(&refs, device).planes.to_kind(precision.kind());
    let x = planes
        .permute([0, 2, 3, 1])
        .contiguous()
        .permute([0, 3, 1, 2]);
    let _g = tch::no_grad_guard();
    let secs = median_seconds(repeats, || {
        let (p, v) = net.forward(&x);
        let _ = (p.to_device(Device::Cpu), v.to_device(Device::Cpu));
    });
    let pps = batch as f64 / secs;
    BenchRow {
        what: format!("inference {config}"),
        precision: format!("{precision:?}").to_lowercase(),
        batch,
        per_second: pps,
        gflops: pps * config.flops_per_position() / 1e9,
        median_ms: secs * 1e3,
    }
}

/// The network a benchmark runs: a fresh one of a preset, or a trained one
/// from a checkpoint (its weights and optimiser moments, which after
/// training hold subnormal numbers, see [`crate::denormal`]).
#[derive(Clone, Copy, Debug)]
pub enum BenchNetwork<'a> {
    /// A freshly initialised network of this shape (seed 1).
    Fresh(NetConfig),
    /// The network and optimizer state stored in this checkpoint file.
    Checkpoint(&'a Path),
}

impl BenchNetwork<'_> {
    /// A trainer for this network, training at `precision`.
    pub fn trainer(
        &self,
        device: Device,
        precision: Precision,
    ) -> Result<Trainer, CheckpointError> {
        let mut trainer = match self {
            BenchNetwork::Fresh(config) => Trainer::new(*config, TrainConfig::default(), device, 1),
            BenchNetwork::Checkpoint(path) => checkpoint::load(path, None, device)?.0,
        };
        trainer.config.precision = precision;
        Ok(trainer)
    }
}

/// Training steps at `precision` (`bf16` is mixed precision, bf16 autocast
/// over fp32 weights, see [`crate::autocast`]), from `trainer`'s state.
pub fn training(mut trainer: Trainer, batch: usize, repeats: usize) -> BenchRow {
    let config = trainer.net.config;
    let device = trainer.device();
    let precision = trainer.config.precision;
    let samples = random_samples(batch, 12);
    let refs: Vec<&Sample> = samples.iter().collect();
    let b = Batch::new(&refs, device);
    let secs = median_seconds(repeats, || {
        // Random targets: a non-finite loss is a bug here (checkpoints are
        // checked when loaded).
        trainer
            .train_step(&b)
            .expect("random targets give finite losses");
        sync(device);
    });
    let sps = batch as f64 / secs;
    BenchRow {
        what: format!("training {config}"),
        precision: format!("{precision:?}").to_lowercase(),
        batch,
        per_second: sps,
        gflops: sps * 3.0 * config.flops_per_position() / 1e9,
        median_ms: secs * 1e3,
    }
}

/// The whole table for one network on one device. For a checkpoint on the
/// CPU, two more rows measure the largest inference batch and fp32 training
/// with subnormal numbers computed as such (flush-to-zero off on this thread
/// while they run), to show what flushing them saves.
pub fn run(
    network: BenchNetwork,
    device: Device,
    batches: &[usize],
    repeats: usize,
    with_bf16: bool,
) -> Result<Vec<BenchRow>, CheckpointError> {
    let mut rows = vec![matmul(2048, Precision::F32, device, repeats)];
    if with_bf16 {
        rows.push(matmul(2048, Precision::Bf16, device, repeats));
    }
    let trainer = network.trainer(device, Precision::F32)?;
    let config = trainer.net.config;
    let mut precisions = vec![Precision::F32];
    if with_bf16 {
        precisions.push(Precision::Bf16);
    }
    for &precision in &precisions {
        let net = InferenceNet::new(&trainer.net, precision, device);
        for &b in batches {
            rows.push(inference(&net, &config, precision, b, repeats));
        }
    }
    for &precision in &precisions {
        rows.push(training(
            network.trainer(device, precision)?,
            256,
            repeats.min(5),
        ));
    }
    if matches!(network, BenchNetwork::Checkpoint(_)) && device == Device::Cpu {
        let net = InferenceNet::new(&trainer.net, Precision::F32, device);
        let fresh_trainer = network.trainer(device, Precision::F32)?;
        set_flush_denormals(false);
        let mut kept = vec![];
        if let Some(&b) = batches.iter().max() {
            kept.push(inference(&net, &config, Precision::F32, b, repeats));
        }
        kept.push(training(fresh_trainer, 256, repeats.min(5)));
        set_flush_denormals(true);
        for mut row in kept {
            row.what.push_str(" subnormals kept");
            rows.push(row);
        }
    }
    Ok(rows)
}

/// Largest absolute differences (policy logits, WDL probabilities) between
/// the same network run on the CPU in fp32 and on `device` at `precision`:
/// devices and precisions must agree up to rounding.
pub fn compare_with_cpu(
    config: NetConfig,
    device: Device,
    precision: Precision,
    batch: usize,
) -> (f32, f32) {
    let trainer = Trainer::new(config, TrainConfig::default(), Device::Cpu, 1);
    let cpu = InferenceNet::new(&trainer.net, Precision::F32, Device::Cpu);
    let other = InferenceNet::new(&trainer.net, precision, device);
    let samples = random_samples(batch, 13);
    let mut planes = Vec::with_capacity(batch * crate::encoding::INPUT_SIZE);
    for s in &samples {
        planes.extend(crate::encoding::encode(&s.position, s.repetitions as usize));
    }
    let a = cpu.run(&planes, batch);
    let b = other.run(&planes, batch);
    let max_diff = |x: &[f32], y: &[f32]| {
        x.iter()
            .zip(y)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0f32, f32::max)
    };
    (max_diff(&a.policy, &b.policy), max_diff(&a.wdl, &b.wdl))
}
