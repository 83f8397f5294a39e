//! `halatafl`: the workbench's one command.

mod commands;
mod variant_args;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "halatafl",
    version,
    about = "Self-play RL workbench for Two Foxes (Halatafl) and Fox and Geese"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Perft(commands::perft::PerftArgs),
    Moves(commands::moves::MovesArgs),
    Replay(commands::replay::ReplayArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(a) => commands::perft::run(a),
        Command::Moves(a) => commands::moves::run(a),
        Command::Replay(a) => commands::replay::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
