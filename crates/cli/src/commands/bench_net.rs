use anyhow::Result;
use clap::Args;
use halatafl_nn::{bench, NetConfig};

/// Network throughput next to the hardware's: a 2048x2048 matmul (fp32, bf16),
/// inference positions/s at several batch sizes (fp32, bf16) and training
/// samples/s (fp32, and bf16 mixed precision), each with its GFLOP/s.
/// Medians of repeated timed runs.
#[derive(Args, Debug)]
pub struct BenchNetArgs {
    /// Network preset (a fresh network).
    #[arg(long, default_value = "b6c64")]
    pub preset: String,
    /// A trained network instead of a fresh preset: its weights and
    /// optimiser state. On the CPU two more rows show inference and training
    /// with subnormal numbers computed as such, i.e. what flushing them to
    /// zero (the program's default) saves.
    #[arg(long, value_name = "PATH")]
    pub ckpt: Option<std::path::PathBuf>,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Inference batch sizes.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
    pub batches: Vec<usize>,
    /// Timed repetitions per figure (the median is reported).
    #[arg(long, default_value_t = 9)]
    pub repeats: usize,
    /// libtorch intra-op threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Also measure bf16 (default: when the CPU has AMX/AVX512-BF16, or on CUDA).
    #[arg(long)]
    pub bf16: Option<bool>,
}

pub fn run(args: BenchNetArgs) -> Result<()> {
    halatafl_nn::set_threads(args.threads);
    let device = halatafl_nn::parse_device(&args.device)?;
    let network = match &args.ckpt {
        Some(path) => bench::BenchNetwork::Checkpoint(path),
        None => bench::BenchNetwork::Fresh(
            NetConfig::parse_preset(&args.preset).map_err(anyhow::Error::msg)?,
        ),
    };
    let config = network
        .trainer(tch::Device::Cpu, halatafl_nn::Precision::F32)?
        .net
        .config;
    let bf16 = args
        .bf16
        .unwrap_or(device.is_cuda() || halatafl_nn::inference::cpu_has_fast_bf16());
    println!(
        "# {config} on {device:?}, {} intra-op threads, {:.1} MFLOP per position",
        args.threads,
        config.flops_per_position() / 1e6
    );
    println!(
        "{:<40} {:>9} {:>6} {:>14} {:>10} {:>10}",
        "what", "precision", "batch", "per_second", "GFLOP/s", "median_ms"
    );
    let mut precisions = vec![halatafl_nn::Precision::F32];
    if bf16 {
        precisions.push(halatafl_nn::Precision::Bf16);
    }
    for precision in precisions {
        if device != tch::Device::Cpu || precision != halatafl_nn::Precision::F32 {
            let (policy, wdl) = bench::compare_with_cpu(config, device, precision, 64);
            println!("# {precision:?} on {device:?} vs f32 on Cpu, 64 positions: max |policy logit diff| {policy:.2e}, max |wdl diff| {wdl:.2e}");
        }
    }
    for r in bench::run(network, device, &args.batches, args.repeats, bf16)? {
        println!(
            "{:<40} {:>9} {:>6} {:>14.0} {:>10.1} {:>10.3}",
            r.what, r.precision, r.batch, r.per_second, r.gflops, r.median_ms
        );
    }
    Ok(())
}
