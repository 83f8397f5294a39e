//! `halatafl engine` end to end: scripted protocol sessions through the
//! binary, malformed commands among them (each answers one `error` line and
//! the engine reads on), a line that is not UTF-8, and live sessions over
//! pipes that show every answer is flushed before the next command is sent
//! and that `stop` ends a search.

use halatafl_rules::{Game, Position, Variant};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn engine(
    agent: &str,
    extra: &[&str],
    script: impl AsRef<[u8]>,
) -> (Vec<String>, String, Option<i32>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_halatafl"))
        .args(["engine", "--agent", agent])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_ref())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    (
        stdout.lines().map(str::to_string).collect(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code(),
    )
}

/// Reads a `go` answer at `out[*i..]`: `info` lines, then `bestmove`.
fn go_answer(out: &[String], i: &mut usize) -> (Vec<String>, String) {
    let mut infos = Vec::new();
    while let Some(info) = out[*i].strip_prefix("info ") {
        infos.push(info.to_string());
        *i += 1;
    }
    let best = out[*i]
        .strip_prefix("bestmove ")
        .unwrap_or_else(|| panic!("expected bestmove, got {:?}", out[*i]))
        .to_string();
    *i += 1;
    (infos, best)
}

#[test]
fn scripted_session() {
    let script = "\
id
isready
position startpos moves c7-c6 d4-d5
fen
go depth 2
moves
variant classic geese=17 sideways
fen
position fen ....F../.../.......
position startpos moves d4-d5 c3-b4
go sims 8
newgame
fen
position fen F.F/.../..GGG../..G.G../......./GGG/GGG f 0
result
go movetime 20
d
quit
fen
";
    let (out, err, code) = engine("alphabeta:depth=3", &[], script);
    assert_eq!(code, Some(0), "stderr: {err}");
    assert_eq!(
        out[0],
        format!("id name halatafl {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(out[1], "id agent alphabeta:depth=3");
    assert_eq!(out[2], "id variant two-foxes");
    assert_eq!(out[3], "readyok");
    let mut game = Game::start_of(Variant::two_foxes());
    game.play_str("c7-c6").unwrap();
    game.play_str("d4-d5").unwrap();
    assert_eq!(out[4], format!("fen {}", game.position()));
    // go depth 2: info with depth 2 and a pv, then a legal bestmove.
    let mut i = 5;
    let (infos, best) = go_answer(&out, &mut i);
    assert!(infos[0].starts_with("depth 2 nodes "), "{out:#?}");
    assert!(infos[0].contains(" pv "), "{infos:?}");
    assert!(
        game.position().parse_move(&best).is_ok(),
        "{best} in {}",
        game.position()
    );
    // `moves` lists exactly the legal moves.
    let legal: Vec<String> = game
        .position()
        .legal_moves()
        .iter()
        .map(|m| m.to_string())
        .collect();
    assert_eq!(out[i], format!("moves {}", legal.join(" ")));
    // The variant changed to classic with 17 geese: its start position.
    let classic = Position::start(Variant::classic(17, true).unwrap());
    assert_eq!(out[i + 1], format!("fen {classic}"));
    // A bad position string: one error naming it.
    assert!(
        out[i + 2].starts_with("error bad position `....F../.../.......`"),
        "{out:#?}"
    );
    // `c3-b4` steps onto a goose in classic 17: the error names the ply and
    // the legal moves from c3, and the position stays the start.
    assert!(
        out[i + 3].starts_with("error ply 2: illegal move `c3-b4`: legal moves from c3: "),
        "{out:#?}"
    );
    i += 4;
    let (_, best) = go_answer(&out, &mut i);
    assert!(classic.parse_move(&best).is_ok(), "{best}");
    assert_eq!(out[i], format!("fen {classic}"));
    // Two foxes in the classic game: refused, the position stays.
    assert!(
        out[i + 1].starts_with(
            "error bad position `F.F/.../..GGG../..G.G../......./GGG/GGG f 0`: 2 foxes"
        ),
        "{out:#?}"
    );
    assert_eq!(out[i + 2], "result ongoing");
    i += 3;
    let (_, best) = go_answer(&out, &mut i);
    assert!(classic.parse_move(&best).is_ok(), "{best}");
    // `d`: the board, then fen, side and result lines.
    assert_eq!(out[i].trim(), "a   b   c   d   e   f   g");
    assert!(
        out[i + 2].starts_with("  7             .---.---."),
        "{out:#?}"
    );
    let tail = &out[out.len() - 3..];
    assert_eq!(tail[0], format!("fen {classic}"));
    assert_eq!(tail[1], "side foxes");
    // Nothing is read after `quit`: the last line is the `d` output's result.
    assert_eq!(tail[2], "result ongoing");
}

#[test]
fn malformed_commands_and_finished_games() {
    let script = "\
hello
go sims
go sims x
go depth 0 sims 4
go fast
position
position fen
position startpos moves c7-c6 c6
position startpos moves c7-c6 c6-c5
position startpos nonsense
variant
variant go
variant classic geese=14
variant two-foxes sideways
play
play c7-c6 c6-c5
undo
isready now
position fen F.F/.../......./......./......./GGG/GGG f 0
result
moves
go
go sims 10
isready
";
    let (out, err, code) = engine("random", &[], script);
    assert_eq!(code, Some(0), "stderr: {err}");
    let errors: Vec<&String> = out.iter().filter(|l| l.starts_with("error ")).collect();
    assert_eq!(errors.len(), 20, "{out:#?}");
    assert!(out[0].contains("unknown command `hello`"));
    assert!(out.iter().any(|l| l.contains("malformed move `c6`")));
    assert!(out
        .iter()
        .any(|l| l.contains("illegal move `c6-c5`: no goose on c6")));
    assert!(
        out.iter().any(|l| l.contains("13, 15 or 17 geese, not 14")),
        "{out:#?}"
    );
    // Six geese in Two Foxes: the foxes have won; `go` refuses, twice.
    assert!(out.contains(&"result foxes fewer-than-nine".to_string()));
    assert!(out.contains(&"moves".to_string()));
    assert_eq!(
        out.iter()
            .filter(|l| l.starts_with("error the game is over: foxes (fewer-than-nine)"))
            .count(),
        2
    );
    assert_eq!(out.last().unwrap(), "readyok");
    assert_eq!(out.len(), 20 + 3);
}

#[test]
fn live_session_over_pipes() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_halatafl"))
        .args([
            "engine",
            "--agent",
            "mcts:sims=32",
            "--variant",
            "classic",
            "--geese",
            "15",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut read = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        line.trim_end().to_string()
    };
    // Each answer arrives while the pipe stays open: it was flushed.
    writeln!(stdin, "isready").unwrap();
    assert_eq!(read(), "readyok");
    let mut game = Game::start_of(Variant::classic(15, false).unwrap());
    // UCI style (the whole game in `position`) for four moves, then GTP
    // style (`play` each chosen move) for four more.
    for ply in 0..8 {
        if ply <= 4 {
            writeln!(stdin, "position startpos moves {}", game.moves_text()).unwrap();
        }
        writeln!(stdin, "go sims 16").unwrap();
        let best = loop {
            let line = read();
            if let Some(mv) = line.strip_prefix("bestmove ") {
                break mv.to_string();
            }
            assert!(line.starts_with("info "), "{line}");
        };
        game.play_str(&best).unwrap();
        if ply >= 4 {
            writeln!(stdin, "play {best}").unwrap();
        }
    }
    writeln!(stdin, "fen").unwrap();
    assert_eq!(read(), format!("fen {}", game.position()));
    // The end of input ends the engine like `quit`.
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn bad_agent_fails_before_serving() {
    let (out, err, code) = engine("alphabeta:depth=zero", &[], "isready\n");
    assert_eq!(code, Some(1));
    assert!(out.is_empty());
    assert!(err.contains("bad --agent `alphabeta:depth=zero`"), "{err}");
}

#[test]
fn a_line_that_is_not_utf8_answers_one_error() {
    // printf 'isready\nplay c7-c6\n\xe9t\xe9\nisready\n' | halatafl engine ...
    let script = b"isready\nplay c7-c6\n\xe9t\xe9\nisready\n";
    let (out, err, code) = engine("alphabeta:depth=3", &[], script);
    assert_eq!(code, Some(0), "stderr: {err}");
    assert_eq!(
        out,
        [
            "readyok",
            "error line 3 is not valid UTF-8 (byte 1): commands are UTF-8 text",
            "readyok"
        ]
    );
}

#[test]
fn stop_ends_a_search_over_pipes() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_halatafl"))
        .args(["engine", "--agent", "alphabeta:depth=3"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Lines arrive on a channel, so a hung engine fails the test instead of
    // hanging it.
    let (lines, inbox) = mpsc::channel();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in stdout.lines() {
            if lines.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let mut read = |within: Duration| match inbox.recv_timeout(within) {
        Ok(line) => line,
        Err(e) => {
            let _ = child.kill();
            panic!("no answer within {within:?}: {e}");
        }
    };
    // A 100-ply search runs far longer than this test: only `stop` ends it.
    writeln!(stdin, "go depth 100").unwrap();
    writeln!(stdin, "isready").unwrap();
    assert_eq!(read(Duration::from_secs(10)), "readyok");
    let stopped = Instant::now();
    writeln!(stdin, "stop").unwrap();
    let best = loop {
        let line = read(Duration::from_secs(5));
        if let Some(mv) = line.strip_prefix("bestmove ") {
            break mv.to_string();
        }
        assert!(line.starts_with("info "), "{line}");
    };
    assert!(stopped.elapsed() < Duration::from_secs(5));
    let start = Position::start(Variant::two_foxes());
    assert!(start.parse_move(&best).is_ok(), "{best}");
    // The engine reads on after the search.
    writeln!(stdin, "fen").unwrap();
    assert_eq!(read(Duration::from_secs(10)), format!("fen {start}"));
    writeln!(stdin, "quit").unwrap();
    assert!(child.wait().unwrap().success());
}
