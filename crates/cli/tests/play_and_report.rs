//! `halatafl play` driven through its standard input (not a terminal), to the
//! end of a game with a malformed move, an illegal move and an undo in it;
//! and `halatafl report` on a small run made by `halatafl train`.

mod common;

use common::{bin, scratch, train_new_run, workspace};
use halatafl_arena::read_game_rows;
use halatafl_rules::{Position, Variant};
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

/// A `play` process, read up to each prompt.
struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    transcript: String,
}

impl Session {
    fn start(args: &[&str]) -> Session {
        let mut child = Command::new(bin())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        Session {
            stdin: child.stdin.take().unwrap(),
            stdout: child.stdout.take().unwrap(),
            child,
            transcript: String::new(),
        }
    }

    /// The output up to the next prompt (`> ` at the end), or to the end
    /// of the output once the game is over (then `done` is true).
    fn until_prompt(&mut self) -> (String, bool) {
        let mut bytes = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let n = self.stdout.read(&mut buf).unwrap();
            bytes.extend_from_slice(&buf[..n]);
            let text = String::from_utf8(bytes.clone()).unwrap();
            if n == 0 || text.ends_with("> ") {
                self.transcript.push_str(&text);
                return (text, n == 0);
            }
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
    }
}

/// The position of the last `position ...` line in `text`.
fn last_position(text: &str) -> Position {
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with("position "))
        .expect("a position line");
    let fen = line["position ".len()..].split("   ").next().unwrap();
    Position::from_fen(fen, Variant::two_foxes()).unwrap()
}

#[test]
fn play_a_whole_game_through_stdin() {
    let dir = scratch("play");
    let save = dir.join("game.csv");
    let save_arg = save.display().to_string();
    let mut s = Session::start(&[
        "play", "--agent", "random", "--as", "foxes", "--seed", "5", "--save", &save_arg,
    ]);
    // Before any move: nothing to undo, a malformed and an illegal move.
    let (text, _) = s.until_prompt();
    assert!(text.contains("You play the foxes against random"), "{text}");
    assert!(text.contains("  7             F---+---F"), "{text}");
    s.send("undo");
    let (text, _) = s.until_prompt();
    assert!(text.contains("nothing to undo"), "{text}");
    s.send("c7-c9");
    let (text, _) = s.until_prompt();
    assert!(text.contains("malformed move `c7-c9`"), "{text}");
    s.send("c7-c5");
    let (text, _) = s.until_prompt();
    assert!(
        text.contains("illegal move `c7-c5`: legal moves from c7: "),
        "{text}"
    );
    // A move, the agent's reply, and both taken back.
    s.send("c7-c6");
    let (text, _) = s.until_prompt();
    assert!(text.contains("agent plays "), "{text}");
    s.send("undo");
    let (text, _) = s.until_prompt();
    assert!(text.contains("took back c7-c6 "), "{text}");
    assert_eq!(
        last_position(&text),
        Position::start(Variant::two_foxes()),
        "{text}"
    );
    // Then play to the end: always a capture when there is one (the chain
    // that takes the most), else the first legal move.
    let mut plies = 0;
    let mut text = text;
    loop {
        let pos = last_position(&text);
        let moves = pos.legal_moves();
        let mv = moves
            .iter()
            .max_by_key(|m| m.captured().count())
            .expect("the foxes have a move at a prompt");
        s.send(&mv.to_string());
        plies += 1;
        assert!(plies < 400, "the game does not end");
        let (next, done) = s.until_prompt();
        text = next;
        if done {
            break;
        }
    }
    assert!(s.child.wait().unwrap().success());
    let over = s
        .transcript
        .lines()
        .find(|l| l.starts_with("game over: "))
        .expect("a game-over line")
        .to_string();
    assert!(s.transcript.contains(&format!("game saved to {save_arg}")));
    // The saved row: the arena's format, replayable to the same result.
    let rows = read_game_rows(&save).unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(
        (row.foxes.as_str(), row.geese.as_str()),
        ("human", "random")
    );
    assert_eq!(row.variant, "two-foxes");
    assert_eq!(row.seed, 5);
    assert!(
        !row.moves.starts_with("c7-c6 "),
        "the undone moves are gone"
    );
    assert_eq!(row.moves.split_whitespace().count(), row.plies);
    assert!(
        over.contains(&format!("{} ({})", row.result, row.reason)),
        "{over}"
    );
    let replay = run(&["replay", &row.moves]);
    let replayed = String::from_utf8(replay.stdout).unwrap();
    assert_eq!(
        replayed.lines().last().unwrap(),
        format!("result: {} ({})", row.result, row.reason)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn play_as_geese_quits_unsaved_and_bad_flags_fail() {
    let dir = scratch("play-quit");
    let save = dir.join("never.csv");
    let mut s = Session::start(&[
        "play",
        "--agent",
        "alphabeta:depth=1",
        "--as",
        "geese",
        "--seed",
        "2",
        "--save",
        &save.display().to_string(),
    ]);
    let (text, _) = s.until_prompt();
    // The agent has the foxes and moves first, showing its evaluation.
    let agent_line = text
        .lines()
        .find(|l| l.starts_with("agent plays "))
        .unwrap();
    assert!(
        agent_line.contains("eval ") && agent_line.contains("depth 1"),
        "{agent_line}"
    );
    s.send("moves");
    let (text, _) = s.until_prompt();
    assert!(text.contains("legal moves ("), "{text}");
    s.send("quit");
    let (text, done) = s.until_prompt();
    assert!(done);
    assert!(
        text.contains("game not finished, not saved; moves so far: "),
        "{text}"
    );
    assert!(s.child.wait().unwrap().success());
    assert!(!save.exists());

    let out = run(&["play", "--agent", "nonsense"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad --agent `nonsense`"));
    let out = run(&["play", "--agent", "random", "--as", "hens"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown side `hens`"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn play_refuses_a_line_that_is_not_utf8_and_goes_on() {
    let mut child = Command::new(bin())
        .args(["play", "--agent", "random", "--as", "foxes", "--seed", "4"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"\xe9t\xe9\nc7-c6\nquit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("line 1 is not valid UTF-8 (byte 1)"),
        "{text}"
    );
    // The next line is read as usual: the move, the agent's reply, then quit.
    assert!(text.contains("agent plays "), "{text}");
    assert!(
        text.contains("game not finished, not saved; moves so far: c7-c6 "),
        "{text}"
    );
}

#[test]
fn report_on_a_small_run() {
    let dir = scratch("report");
    let run_dir = dir.join("run");
    let config = workspace().join("configs/ci.toml");
    train_new_run(&config, &run_dir);
    let out = run(&["report", &run_dir.display().to_string()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = String::from_utf8(out.stdout).unwrap();
    let report = run_dir.join("report");
    for name in [
        "strength.png",
        "strength.svg",
        "training.png",
        "training.svg",
        "selfplay.png",
        "selfplay.svg",
        "report.md",
    ] {
        let path = report.join(name);
        assert!(listed.contains(&path.display().to_string()), "{listed}");
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.len() > 2000, "{name}: {} bytes", bytes.len());
        if name.ends_with(".png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        }
        if name.ends_with(".svg") {
            let text = String::from_utf8(bytes).unwrap();
            assert!(
                text.contains("<svg") && text.contains("<polyline"),
                "{name}"
            );
        }
    }
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    // Every opponent of configs/ci.toml, every generation, the losses.
    assert!(
        md.contains("### vs random") && md.contains("### vs previous"),
        "{md}"
    );
    assert!(md.contains("| 1 | ") && md.contains("| 2 | "), "{md}");
    assert!(md.contains("Final losses (generation 2"), "{md}");
    assert!(md.contains("(4 games, +"), "{md}");
    // A folder that holds no run is refused with a clear message.
    let out = run(&["report", &dir.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a run directory"));
    let _ = std::fs::remove_dir_all(&dir);
}
