//! The engine protocol: a line-based text protocol over standard input and
//! output, modelled on UCI (chess) and GTP (Go), so tournament managers,
//! GUIs and test harnesses can drive any agent. The README's "Engine
//! protocol" section is its reference; in short:
//!
//! ```text
//! variant two-foxes|classic [options]     e.g. `variant classic geese=15 sideways`
//! position startpos|fen <position> [moves <move> ...]
//! play <move>          undo          newgame
//! go [sims N] [depth N] [movetime MS]  -> info ... lines, then `bestmove <move>`
//! isready -> readyok   d|show   fen   moves   result   id   help   quit
//! ```
//!
//! As in UCI, commands that succeed are silent unless they are queries; as
//! in GTP, every failure answers exactly one `error <why>` line and the
//! engine reads on. A command changes nothing unless it succeeds whole (a
//! `position` with one illegal move keeps the old position). `go` searches
//! the current position and does not play the move: the caller sends the
//! next `position` (or `play`), as in UCI. Output is flushed after every
//! command, so the protocol works over pipes.

use crate::board_text::draw_board;
use halatafl_agent::{Agent, Budget};
use halatafl_rules::{Game, Position, Variant};
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

/// Builds the engine's agent for a variant: `(spec, seed, variant)`.
pub type AgentFactory<'a> = dyn Fn(&str, u64, Variant) -> Result<Box<dyn Agent>, String> + 'a;

/// The commands, for `help` and for unknown-command errors.
pub const COMMANDS: &str =
    "variant position play undo newgame go isready d show fen moves result id help quit";

/// The engine: one agent, one game.
pub struct Engine<'a> {
    spec: String,
    seed: u64,
    games: u64,
    variant: Variant,
    game: Game,
    agent: Box<dyn Agent>,
    factory: &'a AgentFactory<'a>,
}

/// What a command asks of the loop.
enum Flow {
    Continue,
    Quit,
}

fn error(out: &mut Vec<String>, why: impl std::fmt::Display) -> Flow {
    out.push(format!("error {why}"));
    Flow::Continue
}

/// Reads `N` after a `go` keyword.
fn number<T: std::str::FromStr>(key: &str, word: Option<&str>) -> Result<T, String> {
    let word = word.ok_or_else(|| format!("`go {key}` needs a number"))?;
    word.parse()
        .map_err(|_| format!("`go {key} {word}`: `{word}` is not a whole number"))
}

/// `go`'s words as a budget: `sims N`, `depth N`, `movetime MS` (each at least 1).
pub fn parse_budget(words: &[&str]) -> Result<Budget, String> {
    let mut budget = Budget::default();
    let mut it = words.iter().copied();
    while let Some(key) = it.next() {
        match key {
            "sims" => budget.sims = Some(number(key, it.next())?),
            "depth" => budget.depth = Some(number(key, it.next())?),
            "movetime" => budget.movetime = Some(Duration::from_millis(number(key, it.next())?)),
            other => {
                return Err(format!(
                    "unknown `go` option `{other}`: expected sims N, depth N or movetime MS"
                ))
            }
        }
    }
    if budget.sims == Some(0) || budget.depth == Some(0) || budget.movetime == Some(Duration::ZERO)
    {
        return Err("`go` limits must be at least 1".into());
    }
    Ok(budget)
}

impl<'a> Engine<'a> {
    /// An engine playing `spec` in `variant`, from its start position.
    pub fn new(
        spec: &str,
        seed: u64,
        variant: Variant,
        factory: &'a AgentFactory<'a>,
    ) -> Result<Engine<'a>, String> {
        let mut agent = factory(spec, seed, variant)?;
        agent.new_game(seed);
        Ok(Engine {
            spec: spec.to_string(),
            seed,
            games: 0,
            variant,
            game: Game::start_of(variant),
            agent,
            factory,
        })
    }

    fn game_seed(&self) -> u64 {
        halatafl_arena::derive_seed(self.seed, self.games)
    }

    /// Handles one line; pushes the reply lines to `out`.
    fn command(&mut self, line: &str, out: &mut Vec<String>) -> Flow {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&name, args)) = words.split_first() else {
            return Flow::Continue;
        };
        if name.starts_with('#') {
            return Flow::Continue;
        }
        let no_args = |out: &mut Vec<String>| {
            if args.is_empty() {
                true
            } else {
                error(
                    out,
                    format!("`{name}` takes no arguments, got `{}`", args.join(" ")),
                );
                false
            }
        };
        match name {
            "quit" => return Flow::Quit,
            "isready" => {
                if no_args(out) {
                    out.push("readyok".into());
                }
            }
            "id" => {
                if no_args(out) {
                    out.push(format!("id name halatafl {}", env!("CARGO_PKG_VERSION")));
                    out.push(format!("id agent {}", self.agent.spec()));
                    out.push(format!("id variant {}", self.variant));
                }
            }
            "help" => out.push(format!("commands: {COMMANDS}")),
            "variant" => {
                if args.is_empty() {
                    return error(
                        out,
                        "`variant` needs a name: two-foxes or classic [options]",
                    );
                }
                let variant: Variant = match args.join(" ").parse() {
                    Ok(v) => v,
                    Err(why) => return error(out, why),
                };
                if variant != self.variant {
                    match (self.factory)(&self.spec, self.game_seed(), variant) {
                        Ok(agent) => self.agent = agent,
                        Err(why) => return error(out, why),
                    }
                }
                self.variant = variant;
                self.new_game();
            }
            "newgame" => {
                if no_args(out) {
                    self.new_game();
                }
            }
            "position" => match self.parse_position(args) {
                Ok(game) => self.game = game,
                Err(why) => return error(out, why),
            },
            "play" => {
                if args.len() != 1 {
                    return error(out, "`play` takes one move, e.g. `play c7-d6`");
                }
                if let Err(e) = self.game.play_str(args[0]) {
                    return error(out, e);
                }
            }
            "undo" => {
                if no_args(out) && self.game.undo().is_none() {
                    return error(out, "no move to undo");
                }
            }
            "d" | "show" => {
                if no_args(out) {
                    let pos = self.game.position();
                    out.extend(draw_board(pos).lines().map(str::to_string));
                    out.push(format!("fen {pos}"));
                    out.push(format!("side {}", pos.side()));
                    out.push(self.result_line());
                }
            }
            "fen" => {
                if no_args(out) {
                    out.push(format!("fen {}", self.game.position()));
                }
            }
            "moves" => {
                if no_args(out) {
                    let mut line = String::from("moves");
                    if self.game.outcome().is_none() {
                        for m in self.game.position().legal_moves() {
                            line.push(' ');
                            line.push_str(&m.to_string());
                        }
                    }
                    out.push(line);
                }
            }
            "result" => {
                if no_args(out) {
                    out.push(self.result_line());
                }
            }
            "go" => {
                let budget = match parse_budget(args) {
                    Ok(b) => b,
                    Err(why) => return error(out, why),
                };
                if let Some(outcome) = self.game.outcome() {
                    return error(
                        out,
                        format!("the game is over: {outcome}; no move to search"),
                    );
                }
                let started = Instant::now();
                let decision = self.agent.choose(&self.game, &budget);
                let ms = started.elapsed().as_millis();
                if !self.game.position().is_legal(decision.mv) {
                    return error(
                        out,
                        format!(
                            "agent `{}` chose the illegal move {}",
                            self.spec, decision.mv
                        ),
                    );
                }
                let info = &decision.info;
                let mut line = String::from("info");
                if info.depth > 0 {
                    line.push_str(&format!(" depth {}", info.depth));
                }
                if info.nodes > 0 {
                    line.push_str(&format!(" nodes {}", info.nodes));
                }
                if let Some(v) = decision.value {
                    line.push_str(&format!(" value {v:+.3}"));
                }
                line.push_str(&format!(" time {ms}"));
                if !info.pv.is_empty() {
                    line.push_str(" pv");
                    for m in &info.pv {
                        line.push(' ');
                        line.push_str(&m.to_string());
                    }
                }
                out.push(line);
                if !info.extra.trim().is_empty() {
                    out.push(format!("info string {}", info.extra.trim()));
                }
                out.push(format!("bestmove {}", decision.mv));
            }
            other => {
                return error(
                    out,
                    format!("unknown command `{other}`; commands: {COMMANDS}"),
                );
            }
        }
        Flow::Continue
    }

    fn new_game(&mut self) {
        self.games += 1;
        self.game = Game::start_of(self.variant);
        let seed = self.game_seed();
        self.agent.new_game(seed);
    }

    fn result_line(&self) -> String {
        match self.game.outcome() {
            None => "result ongoing".into(),
            Some(o) => format!("result {} {}", o.result_word(), o.reason),
        }
    }

    /// `startpos|fen <position> [moves <move> ...]` as a game with its history.
    fn parse_position(&self, args: &[&str]) -> Result<Game, String> {
        let (start, rest) = match args.split_first() {
            Some((&"startpos", rest)) => (Position::start(self.variant), rest),
            Some((&"fen", rest)) => {
                let end = rest
                    .iter()
                    .position(|w| *w == "moves")
                    .unwrap_or(rest.len());
                if end == 0 {
                    return Err("`position fen` needs a position string".into());
                }
                let text = rest[..end].join(" ");
                let pos = Position::from_fen(&text, self.variant)
                    .map_err(|e| format!("bad position `{text}`: {e}"))?;
                (pos, &rest[end..])
            }
            Some((other, _)) => {
                return Err(format!(
                    "`position {other}`: expected `position startpos` or `position fen <position>`"
                ))
            }
            None => return Err("`position` needs `startpos` or `fen <position>`".into()),
        };
        let mut game = Game::new(start);
        match rest.split_first() {
            None => {}
            Some((&"moves", moves)) => {
                for m in moves {
                    game.play_str(m).map_err(|e| e.to_string())?;
                }
            }
            Some((other, _)) => {
                return Err(format!(
                    "`position`: expected `moves` after the position, found `{other}`"
                ))
            }
        }
        Ok(game)
    }
}

/// Serves the protocol: reads commands from `input` until `quit` or the end
/// of input, answering on `output` (flushed after every command).
pub fn serve(
    input: impl BufRead,
    mut output: impl Write,
    engine: &mut Engine,
) -> std::io::Result<()> {
    let mut replies = Vec::new();
    for line in input.lines() {
        let line = line?;
        replies.clear();
        let flow = engine.command(&line, &mut replies);
        for reply in &replies {
            writeln!(output, "{reply}")?;
        }
        output.flush()?;
        if let Flow::Quit = flow {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factory(spec: &str, seed: u64, variant: Variant) -> Result<Box<dyn Agent>, String> {
        crate::agents::build_agent(spec, seed, variant).map_err(|e| e.to_string())
    }

    fn session(spec: &str, script: &str) -> Vec<String> {
        let mut engine = Engine::new(spec, 1, Variant::two_foxes(), &factory).unwrap();
        let mut out = Vec::new();
        serve(script.as_bytes(), &mut out, &mut engine).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn go_from_positions() {
        let out = session(
            "alphabeta:depth=2",
            "isready\nposition startpos moves c7-c6 c6-c5\ngo depth 1\nposition startpos moves c7-c6\nmoves\ngo\nquit\nisready\n",
        );
        // The geese have no piece on c6: one error, then the rest runs.
        assert!(out[0] == "readyok", "{out:?}");
        assert!(
            out[1].starts_with("error ply 2: illegal move `c6-c5`: no goose on c6"),
            "{out:?}"
        );
        // The position stayed the start: the foxes are to move.
        let first_best = out.iter().position(|l| l.starts_with("bestmove")).unwrap();
        let mv = out[first_best].strip_prefix("bestmove ").unwrap();
        assert!(
            Position::start(Variant::two_foxes()).parse_move(mv).is_ok(),
            "{mv}"
        );
        assert!(out[2].starts_with("info depth 1 nodes "), "{out:?}");
        let moves = out.iter().find(|l| l.starts_with("moves ")).unwrap();
        let after = Game::start_of(Variant::two_foxes());
        let mut after = after;
        after.play_str("c7-c6").unwrap();
        let expected: Vec<String> = after
            .position()
            .legal_moves()
            .iter()
            .map(|m| m.to_string())
            .collect();
        assert_eq!(moves, &format!("moves {}", expected.join(" ")));
        let last = out.last().unwrap().strip_prefix("bestmove ").unwrap();
        assert!(after.position().parse_move(last).is_ok(), "{last}");
        // Nothing after `quit` is read.
        assert_eq!(out.iter().filter(|l| *l == "readyok").count(), 1);
    }

    #[test]
    fn malformed_commands_answer_one_error_each() {
        let script =
            "frobnicate\nposition\nposition middle\nposition fen\nposition fen F.F/... f\n\
                      position startpos moves c7-c6x\ngo sims\ngo sims -3\ngo depth 0\ngo ponder\n\
                      variant\nvariant chess\nvariant two-foxes geese=15\nplay\nplay z9-z8\nundo\n\
                      isready extra\n# a comment\n\nisready\n";
        let out = session("random", script);
        let errors = out.iter().filter(|l| l.starts_with("error ")).count();
        assert_eq!(errors, 17, "{out:#?}");
        assert_eq!(out.last().unwrap(), "readyok");
        assert!(out[0].contains("unknown command `frobnicate`"));
        assert!(
            out.iter().any(|l| l.contains("malformed move `c7-c6x`")),
            "{out:#?}"
        );
        assert!(out
            .iter()
            .any(|l| l.contains("unknown option `geese=15` for two-foxes")));
    }

    #[test]
    fn variants_play_undo_and_finished_games() {
        // Classic with 15 geese: the fox on d4, rows 3 and a4, g4 filled.
        let out = session(
            "random",
            "variant classic geese=15 sideways\nfen\nplay d4-d5\nfen\nundo\nfen\nid\n\
             position fen ..F/.../......./......./......./GGG/GGG f 0\nresult\ngo\nmoves\n\
             variant two-foxes corner-links\nposition fen F.F/.../......./......./......./GGG/GGG f 0\nresult\ngo movetime 50\nquit\n",
        );
        let classic_start = Position::start(Variant::classic(15, true).unwrap());
        assert_eq!(out[0], format!("fen {classic_start}"));
        assert!(out[1].starts_with("fen ") && out[1] != out[0] && out[1].ends_with(" g 1"));
        assert_eq!(out[2], out[0]);
        assert_eq!(
            out[3],
            format!("id name halatafl {}", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(out[4], "id agent random");
        assert_eq!(out[5], "id variant classic geese=15 sideways");
        // Six geese are more than the classic game's four: it goes on.
        assert_eq!(out[6], "result ongoing");
        assert!(out[8].starts_with("bestmove "), "{out:#?}");
        assert!(out[9].starts_with("moves ") && out[9].len() > 6);
        // In Two Foxes six geese are fewer than nine: over, and `go` says so.
        assert_eq!(out[10], "result foxes fewer-than-nine");
        assert!(
            out[11].starts_with("error the game is over: foxes (fewer-than-nine)"),
            "{out:#?}"
        );
        assert_eq!(out.len(), 12);
    }

    #[test]
    fn budgets() {
        assert_eq!(parse_budget(&[]).unwrap(), Budget::default());
        let b = parse_budget(&["sims", "64", "depth", "3", "movetime", "250"]).unwrap();
        assert_eq!(b.sims, Some(64));
        assert_eq!(b.depth, Some(3));
        assert_eq!(b.movetime, Some(Duration::from_millis(250)));
        assert!(parse_budget(&["movetime", "0"]).is_err());
        assert!(parse_budget(&["depth", "two"])
            .unwrap_err()
            .contains("not a whole number"));
    }
}
