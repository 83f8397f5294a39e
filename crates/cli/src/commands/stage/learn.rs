use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Asynchronous mode: train the run's checkpoints on the self-play shards as
/// they arrive (waiting when self-play falls behind `[async] train_ratio`),
/// publish them and write train.csv and selfplay.csv, up to the last
/// generation; then write finished.json. One learner per run; it can be
/// killed and started again at any moment.
#[derive(Args, Debug)]
pub struct LearnArgs {
    /// The run directory (made by `halatafl train --config FILE --run DIR --init-only`).
    #[arg(long)]
    pub run: PathBuf,
    /// Device of this process's network, replacing `[run] device` for it
    /// alone (cpu, cuda, cuda:N, auto): e.g. the learner on `cuda` while the
    /// workers play on `cpu`.
    #[arg(long)]
    pub device: Option<String>,
}

pub fn run(args: LearnArgs) -> Result<()> {
    let run = crate::commands::train::open_stage_run(&args.run, args.device.as_deref())?;
    run.run_learner()?;
    println!("run: {}", run.dir.display());
    Ok(())
}
