use crate::variant_args::PositionArgs;
use anyhow::Result;
use clap::Args;
use std::time::Instant;

/// Count the leaf nodes of the move tree (docs/rules.md's perft). The last line of
/// standard output is the node count alone.
#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Depth in plies.
    #[arg(long, short)]
    pub depth: u32,
    #[command(flatten)]
    pub position: PositionArgs,
    /// Print the count below each first move before the total.
    #[arg(long)]
    pub divide: bool,
}

pub fn run(args: PerftArgs) -> Result<()> {
    let position = args.position.position()?;
    let started = Instant::now();
    let nodes = if args.divide {
        let split = halatafl_rules::divide(&position, args.depth);
        for (m, n) in &split {
            println!("{m}: {n}");
        }
        split.iter().map(|(_, n)| n).sum()
    } else {
        halatafl_rules::perft(&position, args.depth)
    };
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "perft {}: {nodes} nodes in {secs:.3} s ({:.1} Mnodes/s)",
        args.depth,
        nodes as f64 / secs.max(1e-9) / 1e6
    );
    println!("{nodes}");
    Ok(())
}
