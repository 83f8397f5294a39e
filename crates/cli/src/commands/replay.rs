use crate::variant_args::PositionArgs;
use anyhow::{Context, Result};
use clap::Args;
use halatafl_rules::Game;

/// Play a sequence of moves with every end rule (repetition and fifty moves
/// included); print each position and, last, `result: foxes|geese|draw|ongoing`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub position: PositionArgs,
    /// Space-separated moves, e.g. "c7-c6 a3-a5 ..." (one or several arguments).
    pub moves: Vec<String>,
}

pub fn run(args: ReplayArgs) -> Result<()> {
    let mut game = Game::new(args.position.position()?);
    let words: Vec<&str> = args
        .moves
        .iter()
        .flat_map(|m| m.split_whitespace())
        .collect();
    println!("start: {}", game.position());
    for word in words {
        let m = game.play_str(word).context("replay stopped")?;
        println!("{:>4}. {m:<16} {}", game.ply(), game.position());
    }
    match game.outcome() {
        Some(outcome) => println!("result: {outcome}"),
        None => println!("result: ongoing"),
    }
    Ok(())
}
