use anyhow::{Context, Result};
use clap::Args;
use halatafl_train::Run;
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
}

pub fn run(args: EvaluateArgs) -> Result<()> {
    let run = Run::open(&args.run).context("cannot open the run")?;
    let factory = super::train::base_factory(&run)?;
    run.run_evaluator(&factory)?;
    // The evaluator is the last stage to end: the run is complete.
    super::train::finish(&run)
}
