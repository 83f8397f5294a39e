use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Asynchronous mode: play self-play games with the newest checkpoint of a
/// run and write them as shards, until the run's last checkpoint exists.
/// Several workers (distinct --worker ids) can share a run; each can be
/// killed and started again at any moment.
#[derive(Args, Debug)]
pub struct SelfplayArgs {
    /// The run directory (made by `halatafl train --config FILE --run DIR --init-only`).
    #[arg(long)]
    pub run: PathBuf,
    /// Device of this process's network, replacing `[run] device` for it
    /// alone (cpu, cuda, cuda:N, auto): e.g. the learner on `cuda` while the
    /// workers play on `cpu`.
    #[arg(long)]
    pub device: Option<String>,
    /// This worker's id (letters, digits, `_`): its shards are
    /// shards/gen_NNNN/w<ID>-<seq>.shard. One process per id at a time.
    #[arg(long, default_value = "0")]
    pub worker: String,
}

pub fn run(args: SelfplayArgs) -> Result<()> {
    let run = crate::commands::train::open_stage_run(&args.run, args.device.as_deref())?;
    let factory = crate::commands::train::base_factory(&run)?;
    run.run_selfplay_worker(&args.worker, &factory)?;
    Ok(())
}
