use crate::variant_args::PositionArgs;
use anyhow::Result;
use clap::Args;

/// Print every legal move of a position, one per line, in RULES.md notation.
#[derive(Args, Debug)]
pub struct MovesArgs {
    #[command(flatten)]
    pub position: PositionArgs,
}

pub fn run(args: MovesArgs) -> Result<()> {
    let position = args.position.position()?;
    let mut out = String::new();
    for m in position.legal_moves() {
        out.push_str(&m.to_string());
        out.push('\n');
    }
    print!("{out}");
    Ok(())
}
