//! The engine protocol: a line-based text protocol over standard input and
//! output, modelled on UCI (chess) and GTP (Go), so tournament managers,
//! GUIs and test harnesses can drive any agent. docs/engine-protocol.md
//! is its reference; in short:
//!
//! ```text
//! variant two-foxes|classic [options]     e.g. `variant classic geese=15 sideways`
//! position startpos|fen <position> [moves <move> ...]
//! play <move>          undo          newgame
//! go [sims N] [depth N] [movetime MS]  -> info ... lines, then `bestmove <move>`
//! stop   isready -> readyok   d|show   fen   moves   result   id   help   quit
//! ```
//!
//! As in UCI, commands that succeed are silent unless they are queries; as
//! in GTP, every failure answers exactly one `error <why>` line and the
//! engine reads on. A command changes nothing unless it succeeds whole (a
//! `position` with one illegal move keeps the old position). `go` searches
//! the current position and does not play the move: the caller sends the
//! next `position` (or `play`), as in UCI. Output is flushed after every
//! command, so the protocol works over pipes.
//!
//! [`serve`] searches on a thread of its own so that the engine keeps
//! listening: during a search `isready` is answered at once, `stop` ends the
//! search with the best move found so far, and `quit` does the same and then
//! exits. Every other line waits until the search has answered and then
//! runs, in the order the lines came, as Stockfish does for `position`: so a
//! piped script (`go`, `position ...`, `go`) gets the same answers as one
//! typed a line at a time. For the same reason a `quit` that comes behind
//! waiting lines waits its turn too (a `stop` ends a long search first).
//! [`Engine`] itself knows no threads: a line gives a [`Step`], and a `go`
//! gives a [`SearchJob`] for the caller to run where it likes;
//! [`run_script`] runs them inline.
//!
//! Lines are read as bytes: one that is not UTF-8 answers one `error` line
//! naming its number, and the session goes on.

use crate::board_text::draw_board;
use halatafl_agent::{Agent, Budget, StopSignal, MAX_MOVETIME_MS};
use halatafl_alphabeta::MAX_DEPTH;
use halatafl_mcts::MAX_SIMS;
use halatafl_rules::{Game, Position, Variant};
use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Builds the engine's agent for a variant: `(spec, seed, variant)`.
pub type AgentFactory<'a> = dyn Fn(&str, u64, Variant) -> Result<Box<dyn Agent>, String> + 'a;

/// The commands, for `help` and for unknown-command errors.
pub const COMMANDS: &str =
    "variant position play undo newgame go stop isready d show fen moves result id help quit";

/// Commands that take no arguments (`quit` and `help` ignore theirs).
const NO_ARGUMENTS: &[&str] = &[
    "isready", "id", "newgame", "undo", "d", "show", "fen", "moves", "result", "stop",
];

/// One line of input, without its line end (`\n` or `\r\n`). The bytes are
/// kept as read: a line that is not UTF-8 is an error of that line alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputLine {
    /// Counted from 1, every line (blank and comment lines too).
    pub number: u64,
    /// At most [`MAX_LINE_BYTES`] of them.
    pub bytes: Vec<u8>,
    /// The line was longer than [`MAX_LINE_BYTES`]: an error, whatever it says.
    pub too_long: bool,
}

impl InputLine {
    /// The line as text, or an error message naming the line and the byte.
    pub fn text(&self) -> Result<&str, String> {
        if self.too_long {
            return Err(format!(
                "line {} is longer than {MAX_LINE_BYTES} bytes: no command is that long",
                self.number
            ));
        }
        std::str::from_utf8(&self.bytes).map_err(|e| {
            format!(
                "line {} is not valid UTF-8 (byte {}): commands are UTF-8 text",
                self.number,
                e.valid_up_to() + 1
            )
        })
    }
}

/// The lines of `input` as [`InputLine`]s; an I/O error ends them (after
/// being returned once).
pub struct InputLines<R> {
    input: R,
    number: u64,
    failed: bool,
}

impl<R: BufRead> InputLines<R> {
    /// Reads lines from `input`, numbering them from 1.
    pub fn new(input: R) -> InputLines<R> {
        InputLines {
            input,
            number: 0,
            failed: false,
        }
    }
}

impl<R: BufRead> Iterator for InputLines<R> {
    type Item = std::io::Result<InputLine>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match read_bounded_line(&mut self.input) {
            Ok(None) => None,
            Ok(Some((mut bytes, too_long))) => {
                if bytes.last() == Some(&b'\r') {
                    bytes.pop();
                }
                self.number += 1;
                Some(Ok(InputLine {
                    number: self.number,
                    bytes,
                    too_long,
                }))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// `word` as echoed in an error: at most 40 characters of it, so that a
/// line of garbage does not come back as a megabyte of reply.
fn shortened(word: &str) -> String {
    const MOST: usize = 40;
    match word.char_indices().nth(MOST) {
        Some((end, _)) => format!("{}... ({} bytes)", &word[..end], word.len()),
        None => word.to_string(),
    }
}

/// The longest line kept, in bytes: far more than any command needs (a
/// `position ... moves` line of a 300-ply game is about 2 KB), and a bound
/// on memory when the input is not line-shaped at all (`< /dev/zero`).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// One line without its `\n`, at most [`MAX_LINE_BYTES`] of it kept (the
/// rest is read and dropped) and whether it was longer; `None` at the end.
fn read_bounded_line(input: &mut impl BufRead) -> std::io::Result<Option<(Vec<u8>, bool)>> {
    let mut bytes = Vec::new();
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let buffer = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buffer.is_empty() {
            return Ok(read_any.then_some((bytes, too_long)));
        }
        read_any = true;
        let (chunk, found) = match buffer.iter().position(|&b| b == b'\n') {
            Some(i) => (&buffer[..i], Some(i + 1)),
            None => (buffer, None),
        };
        let room = MAX_LINE_BYTES - bytes.len();
        if chunk.len() > room {
            too_long = true;
        }
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = found.unwrap_or(buffer.len());
        input.consume(used);
        if found.is_some() {
            return Ok(Some((bytes, too_long)));
        }
    }
}

/// What a line asks of whoever runs the engine.
pub enum Step {
    /// Write these lines (none for a silent command) and read on.
    Reply(Vec<String>),
    /// `go`: run the search (on a thread, or inline) and write its lines.
    /// The engine may take further lines only after it has answered.
    Search(SearchJob),
    /// `quit`: stop reading.
    Quit,
}

impl Step {
    fn error(why: impl std::fmt::Display) -> Step {
        Step::Reply(vec![format!("error {why}")])
    }

    fn silent() -> Step {
        Step::Reply(Vec::new())
    }
}

/// The agent, shared with the search that is running (if any): a search
/// holds the lock until it answers, and the engine is not asked anything
/// meanwhile (see [`serve`]), so the lock is never waited for in practice.
type SharedAgent = Arc<Mutex<Box<dyn Agent>>>;

fn lock(agent: &SharedAgent) -> MutexGuard<'_, Box<dyn Agent>> {
    // Poisoned only by a search that panicked, and that panic ends the
    // session (see `serve`); nothing uses the agent after it.
    agent.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One `go`: the agent, a copy of the position and the budget, ready to
/// run on any thread.
pub struct SearchJob {
    agent: SharedAgent,
    game: Game,
    budget: Budget,
    stop: StopSignal,
}

impl SearchJob {
    /// The signal that ends this search early with the best move so far.
    pub fn stop_signal(&self) -> StopSignal {
        self.stop.clone()
    }

    /// Searches and returns the answer: `info` lines, then `bestmove`, or
    /// one `error` line if the agent broke its contract.
    pub fn run(self) -> Vec<String> {
        let mut agent = lock(&self.agent);
        let started = Instant::now();
        let decision = agent.choose(&self.game, &self.budget);
        let ms = started.elapsed().as_millis();
        if !self.game.position().is_legal(decision.mv) {
            return vec![format!(
                "error agent `{}` chose the illegal move {}",
                agent.spec(),
                decision.mv
            )];
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
        let mut out = vec![line];
        if !info.extra.trim().is_empty() {
            out.push(format!("info string {}", info.extra.trim()));
        }
        out.push(format!("bestmove {}", decision.mv));
        out
    }
}

/// The engine: one agent, one game.
pub struct Engine<'a> {
    spec: String,
    seed: u64,
    games: u64,
    variant: Variant,
    game: Game,
    agent: SharedAgent,
    factory: &'a AgentFactory<'a>,
}

/// Reads `N` after a `go` keyword: a whole number from 1 to `max`.
fn limit(key: &str, word: Option<&str>, max: u64, unit: &str) -> Result<u64, String> {
    let word = word.ok_or_else(|| format!("`go {key}` needs a number"))?;
    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`go {key} {word}`: `{word}` is not a whole number"));
    }
    // All digits: a failed parse can only be too large for u64.
    match word.parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "`go {key} {word}` is out of range: {key} must be from 1 to {max}{unit}"
        )),
    }
}

/// `go`'s words as a budget: `sims N` (1..=[`MAX_SIMS`]), `depth N`
/// (1..=[`MAX_DEPTH`]) and `movetime MS` (1..=[`MAX_MOVETIME_MS`]), each at
/// most once: the same ranges the agent specs accept.
pub fn parse_budget(words: &[&str]) -> Result<Budget, String> {
    let mut budget = Budget::default();
    let mut it = words.iter().copied();
    let mut seen: Vec<&str> = Vec::new();
    while let Some(key) = it.next() {
        if seen.contains(&key) {
            return Err(format!("`go {key}` given twice: give each limit once"));
        }
        match key {
            "sims" => {
                let n = limit(key, it.next(), MAX_SIMS.into(), "")?;
                budget.sims = Some(n.try_into().expect("at most MAX_SIMS, a u32"));
            }
            "depth" => {
                let n = limit(key, it.next(), MAX_DEPTH.into(), " plies")?;
                budget.depth = Some(n.try_into().expect("at most MAX_DEPTH, a u32"));
            }
            "movetime" => {
                let ms = limit(key, it.next(), MAX_MOVETIME_MS, " ms (one day)")?;
                budget.movetime = Some(Duration::from_millis(ms));
            }
            other => {
                return Err(format!(
                    "unknown `go` option `{other}`: expected sims N, depth N or movetime MS"
                ))
            }
        }
        seen.push(key);
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
            agent: Arc::new(Mutex::new(agent)),
            factory,
        })
    }

    fn game_seed(&self) -> u64 {
        halatafl_arena::derive_seed(self.seed, self.games)
    }

    /// Handles one input line: a line that is not UTF-8 answers one error.
    pub fn line(&mut self, line: &InputLine) -> Step {
        match line.text() {
            Ok(text) => self.command(text),
            Err(why) => Step::error(why),
        }
    }

    /// Handles one command line. Must not be called while a [`SearchJob`]
    /// it gave is still running (the caller queues lines meanwhile).
    pub fn command(&mut self, line: &str) -> Step {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&name, args)) = words.split_first() else {
            return Step::silent();
        };
        if name.starts_with('#') {
            return Step::silent();
        }
        if NO_ARGUMENTS.contains(&name) && !args.is_empty() {
            return Step::error(format!(
                "`{name}` takes no arguments, got `{}`",
                args.join(" ")
            ));
        }
        match name {
            "quit" => Step::Quit,
            "isready" => Step::Reply(vec!["readyok".into()]),
            // Nothing runs: nothing to stop (UCI is silent here too).
            "stop" => Step::silent(),
            "id" => Step::Reply(vec![
                format!("id name halatafl {}", env!("CARGO_PKG_VERSION")),
                format!("id agent {}", lock(&self.agent).spec()),
                format!("id variant {}", self.variant),
            ]),
            "help" => Step::Reply(vec![format!("commands: {COMMANDS}")]),
            "variant" => {
                if args.is_empty() {
                    return Step::error("`variant` needs a name: two-foxes or classic [options]");
                }
                let variant: Variant = match args.join(" ").parse() {
                    Ok(v) => v,
                    Err(why) => return Step::error(why),
                };
                if variant != self.variant {
                    match (self.factory)(&self.spec, self.game_seed(), variant) {
                        Ok(agent) => self.agent = Arc::new(Mutex::new(agent)),
                        Err(why) => return Step::error(why),
                    }
                }
                self.variant = variant;
                self.new_game();
                Step::silent()
            }
            "newgame" => {
                self.new_game();
                Step::silent()
            }
            "position" => match self.parse_position(args) {
                Ok(game) => {
                    self.game = game;
                    Step::silent()
                }
                Err(why) => Step::error(why),
            },
            "play" => {
                if args.len() != 1 {
                    return Step::error("`play` takes one move, e.g. `play c7-d6`");
                }
                match self.game.play_str(args[0]) {
                    Ok(_) => Step::silent(),
                    Err(e) => Step::error(e),
                }
            }
            "undo" => match self.game.undo() {
                Some(_) => Step::silent(),
                None => Step::error("no move to undo"),
            },
            "d" | "show" => {
                let pos = self.game.position();
                let mut out: Vec<String> = draw_board(pos).lines().map(str::to_string).collect();
                out.push(format!("fen {pos}"));
                out.push(format!("side {}", pos.side()));
                out.push(self.result_line());
                Step::Reply(out)
            }
            "fen" => Step::Reply(vec![format!("fen {}", self.game.position())]),
            "moves" => {
                let mut line = String::from("moves");
                if self.game.outcome().is_none() {
                    for m in self.game.position().legal_moves() {
                        line.push(' ');
                        line.push_str(&m.to_string());
                    }
                }
                Step::Reply(vec![line])
            }
            "result" => Step::Reply(vec![self.result_line()]),
            "go" => {
                let mut budget = match parse_budget(args) {
                    Ok(b) => b,
                    Err(why) => return Step::error(why),
                };
                if let Some(outcome) = self.game.outcome() {
                    return Step::error(format!("the game is over: {outcome}; no move to search"));
                }
                let stop = StopSignal::new();
                budget.stop = Some(stop.clone());
                Step::Search(SearchJob {
                    agent: Arc::clone(&self.agent),
                    game: self.game.clone(),
                    budget,
                    stop,
                })
            }
            other => Step::error(format!(
                "unknown command `{}`; commands: {COMMANDS}",
                shortened(other)
            )),
        }
    }

    fn new_game(&mut self) {
        self.games += 1;
        self.game = Game::start_of(self.variant);
        let seed = self.game_seed();
        lock(&self.agent).new_game(seed);
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

/// Runs a whole script with every search inline, and returns the answer
/// lines. A `stop` in the script comes after the search it meant to end
/// has finished, so it is silent; otherwise the answers are those
/// [`serve`] gives when each search ends by its own limits.
pub fn run_script(engine: &mut Engine, input: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    // Reading from memory cannot fail.
    for line in InputLines::new(input).map_while(Result::ok) {
        match engine.line(&line) {
            Step::Reply(lines) => out.extend(lines),
            Step::Search(job) => out.extend(job.run()),
            Step::Quit => break,
        }
    }
    out
}

/// What reaches the serving loop, from the input reader and from searches.
enum Event {
    Line(InputLine),
    /// The input ended, by a read error if one is given.
    InputEnd(Option<std::io::Error>),
    /// The running search's answer, or its panic to pass on.
    Answer(std::thread::Result<Vec<String>>),
}

/// What a line does while a search runs.
enum WhileSearching {
    /// Answered at once.
    IsReady,
    /// Ends the search at once.
    Stop,
    /// Ends the search at once and then the session, unless lines wait.
    Quit,
    /// Anything else (a bad line too): runs after the search, in order.
    Wait,
}

fn while_searching(line: &InputLine) -> WhileSearching {
    let words: Vec<&str> = line
        .text()
        .map(|t| t.split_whitespace().collect())
        .unwrap_or_default();
    match words.as_slice() {
        ["isready"] => WhileSearching::IsReady,
        ["stop"] => WhileSearching::Stop,
        ["quit", ..] => WhileSearching::Quit,
        _ => WhileSearching::Wait,
    }
}

/// The serving loop's state.
struct Server<'e, 'a, W: Write> {
    engine: &'e mut Engine<'a>,
    output: W,
    /// Where a search thread sends its answer.
    events: Sender<Event>,
    /// The running search's stop signal.
    search: Option<StopSignal>,
    /// Lines that came during the search, to run after it.
    waiting: VecDeque<InputLine>,
    /// A `quit` was read: later lines are not run (a `stop` still ends
    /// the search, which a waiting `quit` may be waiting for).
    quit_read: bool,
    /// `quit` came during the search with nothing waiting: exit when the
    /// search answers.
    exit_after_search: bool,
}

impl<W: Write> Server<'_, '_, W> {
    /// Runs one line; returns whether it was `quit`.
    fn run_line(&mut self, line: &InputLine) -> std::io::Result<bool> {
        match self.engine.line(line) {
            Step::Reply(lines) => self.write(&lines)?,
            Step::Search(job) => {
                self.search = Some(job.stop_signal());
                let events = self.events.clone();
                std::thread::spawn(move || {
                    // The loop waits for every answer before it returns; a
                    // panic goes on there, as if the search had run inline.
                    let answer = std::panic::catch_unwind(AssertUnwindSafe(|| job.run()));
                    let _ = events.send(Event::Answer(answer));
                });
            }
            Step::Quit => return Ok(true),
        }
        Ok(false)
    }

    fn write(&mut self, lines: &[String]) -> std::io::Result<()> {
        for line in lines {
            writeln!(self.output, "{line}")?;
        }
        self.output.flush()
    }

    /// Serves until `quit` or the end of input with nothing left to run.
    fn serve(&mut self, inbox: &Receiver<Event>) -> std::io::Result<()> {
        let mut input_ended = false;
        let mut read_error = None;
        while self.search.is_some() || !input_ended {
            // This loop holds a sender, so the channel never closes.
            let Ok(event) = inbox.recv() else { break };
            match event {
                Event::Line(line) => match self.search.clone() {
                    None => {
                        if self.run_line(&line)? {
                            return Ok(());
                        }
                    }
                    Some(stop) => match while_searching(&line) {
                        WhileSearching::Stop => stop.stop(),
                        _ if self.quit_read => {}
                        WhileSearching::IsReady => self.write(&["readyok".to_string()])?,
                        WhileSearching::Quit if self.waiting.is_empty() => {
                            stop.stop();
                            self.quit_read = true;
                            self.exit_after_search = true;
                        }
                        // Behind waiting lines `quit` waits its turn, so the
                        // commands sent before it all run (and their searches
                        // end by their limits or a `stop`), as when the lines
                        // are read one at a time.
                        WhileSearching::Quit => {
                            self.quit_read = true;
                            self.waiting.push_back(line);
                        }
                        WhileSearching::Wait => self.waiting.push_back(line),
                    },
                },
                Event::InputEnd(error) => {
                    input_ended = true;
                    read_error = error;
                }
                Event::Answer(answer) => {
                    self.search = None;
                    let lines = answer.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    self.write(&lines)?;
                    if self.exit_after_search {
                        return Ok(());
                    }
                    while self.search.is_none() {
                        let Some(line) = self.waiting.pop_front() else {
                            break;
                        };
                        if self.run_line(&line)? {
                            return Ok(());
                        }
                    }
                }
            }
        }
        read_error.map_or(Ok(()), Err)
    }
}

/// Serves the protocol: reads commands from `input` until `quit` or the end
/// of input, answering on `output` (flushed after every command). Input is
/// read on a thread of its own and searches run on theirs, so `isready`,
/// `stop` and `quit` are heard during a search (see the module doc). At the
/// end of input a running search finishes and the lines waiting for it run.
pub fn serve(
    input: impl BufRead + Send + 'static,
    output: impl Write,
    engine: &mut Engine,
) -> std::io::Result<()> {
    let (events, inbox) = mpsc::channel();
    let reader = events.clone();
    // Detached: after `quit` it may still be blocked reading, and the
    // process exits from under it.
    std::thread::spawn(move || {
        for line in InputLines::new(input) {
            let event = match line {
                Ok(line) => Event::Line(line),
                Err(e) => Event::InputEnd(Some(e)),
            };
            let ended = matches!(event, Event::InputEnd(_));
            if reader.send(event).is_err() || ended {
                return;
            }
        }
        let _ = reader.send(Event::InputEnd(None));
    });
    let mut server = Server {
        engine,
        output,
        events,
        search: None,
        waiting: VecDeque::new(),
        quit_read: false,
        exit_after_search: false,
    };
    let result = server.serve(&inbox);
    // An output error can leave a search running: end it before returning,
    // so no search outlives the session.
    if let Some(stop) = server.search.take() {
        stop.stop();
        while let Ok(event) = inbox.recv() {
            if let Event::Answer(_) = event {
                break;
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn factory(spec: &str, seed: u64, variant: Variant) -> Result<Box<dyn Agent>, String> {
        crate::agents::build_agent(spec, seed, variant).map_err(|e| e.to_string())
    }

    /// The answers to `script`, every search run inline.
    fn session(spec: &str, script: &str) -> Vec<String> {
        let mut engine = Engine::new(spec, 1, Variant::two_foxes(), &factory).unwrap();
        run_script(&mut engine, script.as_bytes())
    }

    /// The answers to `script` from [`serve`]: searches on their thread,
    /// lines read on another.
    fn served(spec: &str, script: &[u8]) -> Vec<String> {
        let mut engine = Engine::new(spec, 1, Variant::two_foxes(), &factory).unwrap();
        let mut out = Vec::new();
        serve(Cursor::new(script.to_vec()), &mut out, &mut engine).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Reads a `go` answer at `out[*i..]`: `info` lines, then `bestmove`;
    /// returns the move.
    fn answer(out: &[String], i: &mut usize) -> String {
        while out[*i].starts_with("info ") {
            *i += 1;
        }
        let mv = out[*i]
            .strip_prefix("bestmove ")
            .unwrap_or_else(|| panic!("expected bestmove at {i}: {out:#?}"))
            .to_string();
        *i += 1;
        mv
    }

    fn start() -> Position {
        Position::start(Variant::two_foxes())
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
        assert!(parse_budget(&["sims", "-3"])
            .unwrap_err()
            .contains("not a whole number"));
    }

    #[test]
    fn go_limits_have_the_agent_specs_ranges() {
        let b =
            parse_budget(&["sims", "10000000", "depth", "100", "movetime", "86400000"]).unwrap();
        assert_eq!(
            (b.sims, b.depth, b.movetime),
            (
                Some(MAX_SIMS),
                Some(MAX_DEPTH),
                Some(Duration::from_millis(MAX_MOVETIME_MS))
            )
        );
        for (words, why) in [
            (["depth", "1000"], "`go depth 1000` is out of range: depth must be from 1 to 100 plies"),
            (["depth", "0"], "`go depth 0` is out of range: depth must be from 1 to 100 plies"),
            (
                ["depth", "99999999999999999999"],
                "`go depth 99999999999999999999` is out of range: depth must be from 1 to 100 plies",
            ),
            (
                ["sims", "4294967295"],
                "`go sims 4294967295` is out of range: sims must be from 1 to 10000000",
            ),
            (
                ["movetime", "86400001"],
                "`go movetime 86400001` is out of range: movetime must be from 1 to 86400000 ms (one day)",
            ),
        ] {
            assert_eq!(parse_budget(&words).unwrap_err(), why);
        }
        assert_eq!(
            parse_budget(&["depth", "3", "sims", "5", "depth", "4"]).unwrap_err(),
            "`go depth` given twice: give each limit once"
        );
        // Refused before any search starts: the session goes on at once.
        let out = session(
            "alphabeta:depth=2",
            "go depth 1000\ngo sims 4294967295\nisready\n",
        );
        assert_eq!(out.len(), 3, "{out:#?}");
        assert!(out[0].starts_with("error `go depth 1000` is out of range"));
        assert!(out[1].starts_with("error `go sims 4294967295` is out of range"));
        assert_eq!(out[2], "readyok");
    }

    #[test]
    fn a_line_that_is_not_utf8_answers_one_error() {
        let script = b"isready\nplay c7-c6\n\xe9t\xe9\r\nfen\nisready\n";
        let mut after = Game::start_of(Variant::two_foxes());
        after.play_str("c7-c6").unwrap();
        let expected = vec![
            "readyok".to_string(),
            "error line 3 is not valid UTF-8 (byte 1): commands are UTF-8 text".to_string(),
            format!("fen {}", after.position()),
            "readyok".to_string(),
        ];
        let mut engine = Engine::new("random", 1, Variant::two_foxes(), &factory).unwrap();
        assert_eq!(run_script(&mut engine, script), expected);
        assert_eq!(served("random", script), expected);
    }

    #[test]
    fn a_line_longer_than_the_bound_answers_one_error() {
        // Two over-long lines (one without a line end, as `< /dev/zero`
        // gives) are read in bounded memory, each answers one error.
        let mut script = b"isready\n".to_vec();
        script.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 10));
        script.extend_from_slice(b"\r\nisready\n");
        script.extend(std::iter::repeat_n(b'\0', 3 * MAX_LINE_BYTES));
        let mut engine = Engine::new("random", 1, Variant::two_foxes(), &factory).unwrap();
        let out = run_script(&mut engine, &script);
        let long = |n| {
            format!("error line {n} is longer than {MAX_LINE_BYTES} bytes: no command is that long")
        };
        assert_eq!(
            out,
            [
                "readyok".to_string(),
                long(2),
                "readyok".to_string(),
                long(4)
            ]
        );
        // A line of exactly the bound is an ordinary (unknown) command.
        let mut exact = vec![b'y'; MAX_LINE_BYTES];
        exact.push(b'\n');
        let out = run_script(&mut engine, &exact);
        assert_eq!(out.len(), 1);
        let expected = format!(
            "error unknown command `{}... ({MAX_LINE_BYTES} bytes)`;",
            "y".repeat(40)
        );
        assert!(
            out[0].starts_with(&expected),
            "{}",
            &out[0][..out[0].len().min(200)]
        );
    }

    #[test]
    fn stop_ends_a_deep_search_and_isready_is_answered_during_it() {
        let started = Instant::now();
        let out = served("alphabeta:depth=3", b"go depth 100\nisready\nstop\nfen\n");
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
        assert_eq!(out[0], "readyok", "{out:#?}");
        let mut i = 1;
        let mv = answer(&out, &mut i);
        assert!(start().parse_move(&mv).is_ok(), "{mv}");
        assert_eq!(out[i..], [format!("fen {}", start())]);
        // An MCTS search of the most simulations `go` allows stops too.
        let out = served(
            "mcts:sims=100,eval=uniform",
            b"go sims 10000000\nisready\nstop\n",
        );
        assert_eq!(out[0], "readyok", "{out:#?}");
        let mut i = 1;
        let mv = answer(&out, &mut i);
        assert!(start().parse_move(&mv).is_ok(), "{mv}");
        assert_eq!(i, out.len());
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }

    #[test]
    fn lines_during_a_search_run_after_it_in_order() {
        let script = b"go depth 100\nposition startpos moves c7-c6\nfen\nisready\nstop\n\
                       go depth 2\nquit\nisready\n";
        let out = served("alphabeta:depth=3", script);
        // `isready` is answered at once; `quit` behind waiting lines waits
        // its turn, so the second search runs to its depth.
        assert_eq!(out[0], "readyok", "{out:#?}");
        let mut i = 1;
        let first = answer(&out, &mut i);
        assert!(start().parse_move(&first).is_ok(), "{first}");
        let mut after = Game::start_of(Variant::two_foxes());
        after.play_str("c7-c6").unwrap();
        assert_eq!(out[i], format!("fen {}", after.position()));
        i += 1;
        assert!(out[i].starts_with("info depth 2 "), "{out:#?}");
        let second = answer(&out, &mut i);
        assert!(after.position().parse_move(&second).is_ok(), "{second}");
        // Nothing after `quit` ran.
        assert_eq!(i, out.len(), "{out:#?}");
        // The end of input lets the search finish and runs what waits.
        let out = served("alphabeta:depth=3", b"go depth 2\nfen\ngo depth 1\n");
        let mut i = 0;
        assert!(out[0].starts_with("info depth 2 "), "{out:#?}");
        answer(&out, &mut i);
        assert_eq!(out[i], format!("fen {}", start()));
        i += 1;
        assert!(out[i].starts_with("info depth 1 "), "{out:#?}");
        answer(&out, &mut i);
        assert_eq!(i, out.len());
    }

    #[test]
    fn quit_during_a_search_answers_then_exits() {
        let started = Instant::now();
        let out = served("alphabeta:depth=3", b"go depth 100\nquit\nisready\nfen\n");
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
        let mut i = 0;
        let mv = answer(&out, &mut i);
        assert!(start().parse_move(&mv).is_ok(), "{mv}");
        assert_eq!(i, out.len(), "{out:#?}");
    }

    #[test]
    fn stop_with_no_search_is_silent() {
        let out = session("random", "stop\nisready\nstop now\n");
        assert_eq!(
            out,
            ["readyok", "error `stop` takes no arguments, got `now`"]
        );
    }
}
