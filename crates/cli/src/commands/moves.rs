use crate::variant_args::PositionArgs;
use anyhow::Result;
use clap::Args;

/// Print every legal move of a position, one per line, in docs/rules.md notation
/// (nothing, and why on standard error, when the game is over).
#[derive(Args, Debug)]
pub struct MovesArgs {
    #[command(flatten)]
    pub position: PositionArgs,
}

pub fn run(args: MovesArgs) -> Result<()> {
    let position = args.position.position()?;
    // A finished game has no moves to play, whatever the board would allow:
    // the same end rules as `replay` and the engine's `moves`.
    if let Some(outcome) = halatafl_rules::Game::new(position).outcome() {
        eprintln!("the game is over: {outcome}; no moves to list");
        return Ok(());
    }
    let mut out = String::new();
    for m in position.legal_moves() {
        out.push_str(&m.to_string());
        out.push('\n');
    }
    print!("{out}");
    Ok(())
}
