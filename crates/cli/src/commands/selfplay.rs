use anyhow::{Context, Result};
use clap::Args;
use halatafl_train::Run;
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
    /// This worker's id (letters, digits, `_`): its shards are
    /// shards/gen_NNNN/w<ID>-<seq>.shard. One process per id at a time.
    #[arg(long, default_value = "0")]
    pub worker: String,
}

pub fn run(args: SelfplayArgs) -> Result<()> {
    let run = Run::open(&args.run).context("cannot open the run")?;
    run.run_selfplay_worker(&args.worker)?;
    Ok(())
}
