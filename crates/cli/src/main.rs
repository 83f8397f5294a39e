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
    Ladder(commands::ladder::LadderArgs),
    Summary(commands::summary::SummaryArgs),
    Train(commands::train::TrainArgs),
    BenchNet(commands::bench_net::BenchNetArgs),
    Report(commands::report::ReportArgs),
    Play(commands::play::PlayArgs),
    Engine(commands::engine::EngineArgs),
    /// The asynchronous mode's processes (on a run made with `train --init-only`).
    #[command(subcommand)]
    Stage(commands::stage::StageCommand),
    /// `halatafl stage selfplay` under its earlier name.
    #[command(hide = true)]
    Selfplay(commands::stage::selfplay::SelfplayArgs),
    /// `halatafl stage learn` under its earlier name.
    #[command(hide = true)]
    Learn(commands::stage::learn::LearnArgs),
    /// `halatafl stage evaluate` under its earlier name.
    #[command(hide = true)]
    Evaluate(commands::stage::evaluate::EvaluateArgs),
    Solve(commands::solve::SolveArgs),
    Accuracy(commands::accuracy::AccuracyArgs),
    Average(commands::average::AverageArgs),
    Serve(commands::serve::ServeArgs),
}

/// Restores the default action of SIGPIPE, which Rust's runtime ignores: a
/// reader that goes away (`halatafl perft --divide | head -1`) then ends the
/// program quietly, as it ends `cat` or `grep`, instead of making every
/// `println!` panic on the broken pipe.
fn end_quietly_on_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists;
    // SIG_DFL is a valid action for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The error and its causes on one line. A cause whose text the message so
/// far already holds is skipped: typed errors often print their source in
/// their own message, and anyhow's chain would print it a second time
/// ("Is a directory (os error 21): Is a directory (os error 21)").
fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

fn main() {
    end_quietly_on_broken_pipe();
    // Before any thread exists, so that every thread inherits it.
    halatafl_nn::denormal::flush_denormals();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(a) => commands::perft::run(a),
        Command::Moves(a) => commands::moves::run(a),
        Command::Replay(a) => commands::replay::run(a),
        Command::Match(a) => commands::match_cmd::run(a),
        Command::Tournament(a) => commands::tournament::run(a),
        Command::Ladder(a) => commands::ladder::run(a),
        Command::Summary(a) => commands::summary::run(a),
        Command::Train(a) => commands::train::run(a),
        Command::BenchNet(a) => commands::bench_net::run(a),
        Command::Report(a) => commands::report::run(a),
        Command::Play(a) => commands::play::run(a),
        Command::Engine(a) => commands::engine::run(a),
        Command::Stage(stage) => commands::stage::run(stage),
        Command::Selfplay(a) => commands::stage::selfplay::run(a),
        Command::Learn(a) => commands::stage::learn::run(a),
        Command::Evaluate(a) => commands::stage::evaluate::run(a),
        Command::Solve(a) => commands::solve::run(a),
        Command::Accuracy(a) => commands::accuracy::run(a),
        Command::Average(a) => commands::average::run(a),
        Command::Serve(a) => commands::serve::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {}", error_line(&e));
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::error_line;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let os = std::io::Error::from_raw_os_error(21);
        let text = os.to_string();
        #[derive(Debug, thiserror::Error)]
        #[error("out.csv: {source}")]
        struct Typed {
            source: std::io::Error,
        }
        let e = anyhow::Error::new(Typed { source: os }).context("writing out.csv");
        assert_eq!(error_line(&e), format!("writing out.csv: out.csv: {text}"));
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_line(&plain), "outer: inner");
    }
}
