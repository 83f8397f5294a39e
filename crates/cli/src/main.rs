//! `halatafl`: the workbench's one command.

mod commands;
mod variant_args;

// The library's modules, under the paths the commands use (`crate::agents`).
use halatafl_cli::{agents, board_text, protocol};

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
    Match(commands::match_cmd::MatchArgs),
    Tournament(commands::tournament::TournamentArgs),
    Summary(commands::summary::SummaryArgs),
    Train(commands::train::TrainArgs),
    BenchNet(commands::bench_net::BenchNetArgs),
    Report(commands::report::ReportArgs),
    Play(commands::play::PlayArgs),
    Engine(commands::engine::EngineArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(a) => commands::perft::run(a),
        Command::Moves(a) => commands::moves::run(a),
        Command::Replay(a) => commands::replay::run(a),
        Command::Match(a) => commands::match_cmd::run(a),
        Command::Tournament(a) => commands::tournament::run(a),
        Command::Summary(a) => commands::summary::run(a),
        Command::Train(a) => commands::train::run(a),
        Command::BenchNet(a) => commands::bench_net::run(a),
        Command::Report(a) => commands::report::run(a),
        Command::Play(a) => commands::play::run(a),
        Command::Engine(a) => commands::engine::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
