use crate::agents::{build_agent, AGENT_FORMS};
use crate::protocol::{serve, Engine};
use crate::variant_args::VariantArgs;
use anyhow::{Context, Result};
use clap::Args;

/// Serve the engine protocol (UCI/GTP-like) on standard input and output, for
/// tournament managers, GUIs and test harnesses. Commands: variant, position,
/// play, undo, newgame, go, stop, isready, d/show, fen, moves, result, id,
/// help, quit; see docs/engine-protocol.md.
#[derive(Args, Debug)]
#[command(after_help = AGENT_FORMS)]
pub struct EngineArgs {
    /// The agent that answers `go`, e.g. alphabeta:depth=6 or net:ckpt=PATH,sims=200.
    #[arg(long)]
    pub agent: String,
    /// Seed of the agent's tie-breaks and noise (each `newgame` derives a new one).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The variant at start (the `variant` command changes it).
    #[command(flatten)]
    pub variant: VariantArgs,
}

pub fn run(args: EngineArgs) -> Result<()> {
    let variant = args.variant.variant()?;
    let factory = |spec: &str, seed: u64, variant| {
        build_agent(spec, seed, variant).map_err(|e| e.to_string())
    };
    let mut engine = Engine::new(&args.agent, args.seed, variant, &factory)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("bad --agent `{}`", args.agent))?;
    // `serve` reads on a thread of its own, which needs an owned reader.
    let stdin = std::io::BufReader::new(std::io::stdin());
    let stdout = std::io::stdout();
    serve(stdin, stdout.lock(), &mut engine).context("engine input/output")?;
    Ok(())
}
