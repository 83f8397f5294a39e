use anyhow::{Context, Result};
use clap::Args;
use halatafl_arena::same_file;
use halatafl_nn::checkpoint;
use std::path::PathBuf;

/// Averages checkpoints of one network weight by weight (stochastic weight
/// averaging), e.g. a run's last few generations, into a new checkpoint that
/// every command takes like any other (`net:ckpt=FILE`). Batch-norm
/// statistics are averaged too; optimizer state, step and metadata come
/// from the last file, and the output records the files it came from.
#[derive(Args, Debug)]
pub struct AverageArgs {
    /// The checkpoints, at least two, all of the same network and variant.
    #[arg(required = true, num_args = 2.., value_name = "CKPT")]
    pub checkpoints: Vec<PathBuf>,
    /// Where to write the average (written to a temporary name, then renamed).
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,
}

pub fn run(args: AverageArgs) -> Result<()> {
    if let Some(same) = args.checkpoints.iter().find(|c| same_file(c, &args.out)) {
        anyhow::bail!(
            "--out {} is also an input: write the average to a new file",
            same.display()
        );
    }
    let (trainer, info) = checkpoint::average(&args.checkpoints, tch::Device::Cpu)?;
    checkpoint::save(&trainer, &args.out, &info.extra)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    println!(
        "averaged {} checkpoints of {} into {}",
        args.checkpoints.len(),
        info.net,
        args.out.display()
    );
    Ok(())
}
