use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Asynchronous mode: evaluate each new checkpoint of a run against the
/// configured opponents and append its games to eval.csv; stops when the
/// learner has finished and every due checkpoint is evaluated. One evaluator
/// per run; it can be killed and started again at any moment.
#[derive(Args, Debug)]
pub struct EvaluateArgs {
    /// The run directory (made by `halatafl train --config FILE --run DIR --init-only`).
    #[arg(long)]
    pub run: PathBuf,
    /// Device of this process's network, replacing `[run] device` for it
    /// alone (cpu, cuda, cuda:N, auto): e.g. the learner on `cuda` while the
    /// workers play on `cpu`.
    #[arg(long)]
    pub device: Option<String>,
}

pub fn run(args: EvaluateArgs) -> Result<()> {
    let run = crate::commands::train::open_stage_run(&args.run, args.device.as_deref())?;
    let factory = crate::commands::train::base_factory(&run)?;
    run.run_evaluator(&factory)?;
    // The evaluator is the last stage to end: the run is complete.
    crate::commands::train::finish(&run)
}
