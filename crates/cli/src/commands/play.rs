use crate::agents::{build_agent, AGENT_FORMS};
use crate::board_text::draw_board;
use crate::protocol::InputLines;
use crate::variant_args::PositionArgs;
use anyhow::{Context, Result};
use clap::Args;
use halatafl_agent::{Agent, Budget};
use halatafl_arena::{append_csv_atomic, read_game_rows, write_target, GameRow};
use halatafl_rules::{Game, Position, Side};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Play against an agent in the terminal. Moves are typed in docs/rules.md
/// notation (c7-d6, a3-b4, c5xe5xe3); also `moves`, `undo` (takes back your
/// last move and the agent's reply), `board`, `help` and `quit`. Lines are
/// read from standard input, so a game can be piped in. A finished game is
/// saved as one arena CSV row (replay it with `halatafl replay`).
#[derive(Args, Debug)]
#[command(after_help = AGENT_FORMS)]
pub struct PlayArgs {
    /// Your opponent, e.g. alphabeta:depth=6, mcts:sims=2000, net:ckpt=PATH,sims=200.
    #[arg(long)]
    pub agent: String,
    /// The side you play.
    #[arg(long = "as", default_value = "foxes", value_parser = parse_side)]
    pub side: Side,
    /// The agent's seed (default: from the clock, printed at the start).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where the finished game is saved (default: games/play-<unix time>.csv).
    #[arg(long)]
    pub save: Option<PathBuf>,
    #[command(flatten)]
    pub position: PositionArgs,
}

fn parse_side(text: &str) -> Result<Side, String> {
    text.parse()
}

/// How a session ended.
#[derive(Debug)]
pub enum SessionEnd {
    /// The game ended by the rules; the row is ready to save.
    Finished(Box<GameRow>),
    /// `quit` or the end of input before the end of the game.
    Stopped(Game),
}

const HELP: &str = "type a move (c7-d6 steps, c5xe5xe3 jumps a chain), or:
  moves   list the legal moves
  undo    take back your last move and the agent's reply
  board   show the board again
  help    this text
  quit    stop (an unfinished game is not saved)";

fn side_word(side: Side) -> &'static str {
    match side {
        Side::Foxes => "the foxes",
        Side::Geese => "the geese",
    }
}

/// The agent's view of its move: value for its side, depth, nodes, pv.
fn describe(decision: &halatafl_agent::Decision, side: Side) -> String {
    let mut parts = Vec::new();
    if let Some(v) = decision.value {
        parts.push(format!(
            "eval {v:+.2} for {} (-1 loss .. +1 win)",
            side_word(side)
        ));
    }
    let info = &decision.info;
    if info.depth > 0 {
        parts.push(format!("depth {}", info.depth));
    }
    if info.nodes > 0 {
        parts.push(format!("nodes {}", info.nodes));
    }
    if !info.pv.is_empty() {
        let pv: Vec<String> = info.pv.iter().map(|m| m.to_string()).collect();
        parts.push(format!("pv {}", pv.join(" ")));
    }
    if !info.extra.trim().is_empty() {
        parts.push(info.extra.trim().to_string());
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("  [{}]", parts.join(", "))
    }
}

/// Plays one game: the person (`human`) types moves on `input`, `agent`
/// answers; everything is shown on `output`. With `echo`, each line read is
/// written after its prompt, so a transcript of piped input reads like a
/// terminal session. A line that is not UTF-8 is answered like a malformed
/// move, and the game goes on.
pub fn play_session(
    input: impl BufRead,
    mut output: impl Write,
    agent: &mut dyn Agent,
    human: Side,
    start: Position,
    seed: u64,
    echo: bool,
) -> Result<SessionEnd> {
    let mut lines = InputLines::new(input);
    let mut game = Game::new(start);
    let mut seconds = [0.0f64; 2];
    let budget = Budget::default();
    agent.new_game(seed);
    let out = &mut output;
    writeln!(
        out,
        "You play {} against {} ({}). Type `help` for commands.",
        side_word(human),
        agent.spec(),
        start.variant()
    )?;
    let mut show_board = true;
    loop {
        if show_board {
            writeln!(out, "\n{}", draw_board(game.position()))?;
            writeln!(
                out,
                "position {}   ply {}, {} to move",
                game.position(),
                game.ply(),
                game.position().side()
            )?;
        }
        show_board = true;
        if let Some(outcome) = game.outcome() {
            let verdict = match outcome.winner {
                None => "a draw",
                Some(w) if w == human => "you win",
                Some(_) => "you lose",
            };
            writeln!(out, "game over: {outcome}: {verdict}")?;
            let spec = |side: Side| {
                if human == side {
                    "human".into()
                } else {
                    agent.spec()
                }
            };
            return Ok(SessionEnd::Finished(Box::new(GameRow::from_game(
                1,
                0,
                &Game::new(start),
                &game,
                spec(Side::Foxes),
                spec(Side::Geese),
                seconds,
                seed,
            ))));
        }
        let side = game.position().side();
        let started = Instant::now();
        if side != human {
            let decision = agent.choose(&game, &budget);
            seconds[side as usize] += started.elapsed().as_secs_f64();
            anyhow::ensure!(
                game.position().is_legal(decision.mv),
                "agent `{}` chose the illegal move {} in {}",
                agent.spec(),
                decision.mv,
                game.position()
            );
            writeln!(
                out,
                "\nagent plays {}{}",
                decision.mv,
                describe(&decision, side)
            )?;
            game.play_unchecked(decision.mv);
            continue;
        }
        write!(out, "your move ({side})> ")?;
        out.flush()?;
        let Some(line) = lines.next() else {
            writeln!(out, "\nend of input")?;
            return Ok(SessionEnd::Stopped(game));
        };
        let line = line?;
        seconds[side as usize] += started.elapsed().as_secs_f64();
        if echo {
            writeln!(out, "{}", String::from_utf8_lossy(&line.bytes).trim())?;
        }
        show_board = false;
        let text = match line.text() {
            Ok(text) => text.trim(),
            Err(why) => {
                writeln!(out, "{why}; type `help` for commands")?;
                continue;
            }
        };
        match text {
            "" => {}
            "quit" | "exit" => return Ok(SessionEnd::Stopped(game)),
            "help" | "?" => writeln!(out, "{HELP}")?,
            "board" | "d" => show_board = true,
            "moves" => {
                let moves: Vec<String> = game
                    .position()
                    .legal_moves()
                    .iter()
                    .map(|m| m.to_string())
                    .collect();
                writeln!(out, "legal moves ({}): {}", moves.len(), moves.join(" "))?;
            }
            "undo" => {
                // Back to the position before the person's last move.
                let human_moves = game.positions()[..game.ply()]
                    .iter()
                    .filter(|p| p.side() == human)
                    .count();
                if human_moves == 0 {
                    writeln!(out, "nothing to undo: you have not moved yet")?;
                } else {
                    let mut taken = Vec::new();
                    loop {
                        let mover = game.positions()[game.ply() - 1].side();
                        taken.push(game.undo().expect("a move to take back").to_string());
                        if mover == human {
                            break;
                        }
                    }
                    taken.reverse();
                    writeln!(out, "took back {}", taken.join(" "))?;
                    // Trees and tables of the abandoned line are dropped.
                    agent.new_game(seed);
                    show_board = true;
                }
            }
            _ => match game.position().parse_move(text) {
                Ok(m) => {
                    game.play_unchecked(m);
                    show_board = true;
                }
                Err(e) => writeln!(out, "{e}; type `moves` for the legal moves")?,
            },
        }
    }
}

pub fn run(args: PlayArgs) -> Result<()> {
    let start = args.position.position()?;
    let variant = start.variant();
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(1)
    });
    let mut agent = build_agent(&args.agent, seed, variant)
        .with_context(|| format!("bad --agent `{}`", args.agent))?;
    if let Some(path) = &args.save {
        check_save_path(path)?;
    }
    println!("agent seed {seed}");
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    use std::io::IsTerminal;
    let echo = !stdin.is_terminal();
    let end = play_session(
        stdin.lock(),
        stdout.lock(),
        agent.as_mut(),
        args.side,
        start,
        seed,
        echo,
    )?;
    match end {
        SessionEnd::Finished(row) => {
            let path = save_game(args.save.as_deref(), &row)?;
            println!("game saved to {}", path.display());
            if args.position.fen.is_some() {
                println!("(its moves start from the --fen position, not the variant's start)");
            }
        }
        SessionEnd::Stopped(game) => {
            println!(
                "game not finished, not saved; moves so far: {}",
                game.moves_text()
            );
        }
    }
    Ok(())
}

/// Refuses a `--save` path before the game starts, when saving there could
/// only fail or destroy something: a directory, a FIFO or device (also
/// behind a link), or an existing file that is not a game CSV. An existing
/// game CSV is added to, never written over.
fn check_save_path(path: &Path) -> Result<()> {
    let target = write_target(path).with_context(|| format!("--save {}", path.display()))?;
    if target.exists() {
        let header = std::fs::read_to_string(&target)
            .ok()
            .and_then(|t| t.lines().next().map(str::to_string));
        let is_game_csv = header.as_deref() == Some(&GameRow::COLUMNS.join(","))
            && read_game_rows(&target).is_ok();
        anyhow::ensure!(
            is_game_csv,
            "--save {}: the file exists and is not a game CSV; choose another name",
            path.display()
        );
        println!("{} exists: the game will be added to it", path.display());
    }
    Ok(())
}

/// `games/play-<unix time>.csv`, the default name of a saved game.
fn default_save_path() -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    PathBuf::from(format!("games/play-{secs}.csv"))
}

/// Saves a finished game (added to the file if it exists) and returns where.
/// A game is never lost: if `--save` fails (the file was changed or removed
/// while playing, the disk refused), it goes to the default name, and if that
/// fails too the error carries the game's moves.
fn save_game(save: Option<&Path>, row: &GameRow) -> Result<PathBuf> {
    let rows = std::slice::from_ref(row);
    if let Some(path) = save {
        match append_csv_atomic(path, rows) {
            Ok(()) => return Ok(path.to_path_buf()),
            Err(e) => eprintln!(
                "could not save the game to {}: {e}; saving it under the default name",
                path.display()
            ),
        }
    }
    let path = default_save_path();
    append_csv_atomic(&path, rows).with_context(|| {
        format!(
            "saving the game to {}; its moves, to replay: {}",
            path.display(),
            row.moves
        )
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_rules::Variant;

    fn run_script(spec: &str, human: Side, script: &str) -> (SessionEnd, String) {
        run_bytes(spec, human, script.as_bytes())
    }

    fn run_bytes(spec: &str, human: Side, script: &[u8]) -> (SessionEnd, String) {
        let variant = Variant::two_foxes();
        let mut agent = build_agent(spec, 3, variant).unwrap();
        let mut out = Vec::new();
        let end = play_session(
            script,
            &mut out,
            agent.as_mut(),
            human,
            Position::start(variant),
            3,
            true,
        )
        .unwrap();
        (end, String::from_utf8(out).unwrap())
    }

    #[test]
    fn undo_takes_back_a_move_pair() {
        let (end, text) = run_script(
            "alphabeta:depth=1",
            Side::Foxes,
            "undo\nc7-c6\nundo\nhelp\nc7\nmoves\nquit\n",
        );
        assert!(
            text.contains("nothing to undo: you have not moved yet"),
            "{text}"
        );
        assert!(text.contains("agent plays "), "{text}");
        assert!(text.contains("your move (foxes)> undo\n"), "{text}");
        let took = text
            .lines()
            .find(|l| l.starts_with("took back c7-c6 "))
            .unwrap();
        assert_eq!(took.split_whitespace().count(), 4, "{took}");
        assert!(text.contains("malformed move `c7`"), "{text}");
        assert!(text.contains("legal moves (6): "), "{text}");
        match end {
            SessionEnd::Stopped(game) => assert_eq!(game.ply(), 0),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn geese_answer_the_agent_and_end_of_input_stops() {
        // The agent (random) moves first; the person's move is refused (no
        // goose on c7), and `undo` right after the agent's move has nothing
        // of the person's to take back.
        let (end, text) = run_script("random", Side::Geese, "c7-c6\nundo\n");
        assert!(
            text.contains("illegal move `c7-c6`: no goose on c7"),
            "{text}"
        );
        assert!(text.contains("nothing to undo"), "{text}");
        assert!(text.contains("end of input"));
        match end {
            SessionEnd::Stopped(game) => assert_eq!(game.ply(), 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_line_that_is_not_utf8_is_refused_and_the_game_goes_on() {
        let (end, text) = run_bytes("random", Side::Foxes, b"\xe9t\xe9\r\nc7-c6\n");
        assert!(
            text.contains(
                "your move (foxes)> \u{fffd}t\u{fffd}\nline 1 is not valid UTF-8 (byte 1)"
            ),
            "{text}"
        );
        assert!(text.contains("agent plays "), "{text}");
        match end {
            SessionEnd::Stopped(game) => assert_eq!(game.ply(), 2),
            other => panic!("{other:?}"),
        }
    }
}
