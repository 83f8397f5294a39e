//! `halatafl stage ...`: the asynchronous mode's processes, which work only
//! on a run made with `halatafl train --init-only` and share its directory
//! (one file per stage). The Ray driver starts them; they can also be
//! started by hand, in any order, and killed and restarted at any moment.

pub mod evaluate;
pub mod learn;
pub mod selfplay;

use anyhow::Result;
use clap::Subcommand;

/// The stages of an asynchronous run (made with `halatafl train --config
/// FILE --run DIR --init-only`): self-play workers, one learner and one
/// evaluator, as separate processes on the run directory.
#[derive(Subcommand, Debug)]
pub enum StageCommand {
    Selfplay(selfplay::SelfplayArgs),
    Learn(learn::LearnArgs),
    Evaluate(evaluate::EvaluateArgs),
}

/// Runs one stage.
pub fn run(stage: StageCommand) -> Result<()> {
    match stage {
        StageCommand::Selfplay(a) => selfplay::run(a),
        StageCommand::Learn(a) => learn::run(a),
        StageCommand::Evaluate(a) => evaluate::run(a),
    }
}
