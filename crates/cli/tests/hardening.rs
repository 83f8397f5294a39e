//! Hostile input to the command line: readers that go away, counts and
//! paths that must be refused before any work, finished positions, and
//! error messages that say each thing once.

mod common;

use common::{bin, fails, halatafl, scratch};
use std::process::{Command, Output, Stdio};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_reader_that_goes_away_ends_the_program_quietly() {
    use std::os::unix::process::ExitStatusExt;
    const SIGPIPE: i32 = 13;
    for args in [&["perft", "--depth", "5", "--divide"][..], &["moves"][..]] {
        let mut child = Command::new(bin())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the first line is written (the binary
        // takes far longer to start than this), as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = text(&out.stderr);
        assert!(
            !err.contains("panicked") && !err.contains("error"),
            "halatafl {args:?}: {err}"
        );
        assert!(
            out.status.success() || out.status.signal() == Some(SIGPIPE),
            "{:?}",
            out.status
        );
    }
}

#[test]
fn match_counts_are_bounded_before_any_game() {
    let dir = scratch("match-counts");
    let csv = dir.join("x.csv");
    let csv = csv.to_str().unwrap();
    let err = fails(&[
        "match",
        "random",
        "random",
        "--games",
        "99999999999999",
        "--csv",
        csv,
    ]);
    assert!(
        err.contains("--games 99999999999999 is out of range: from 1 to 1000000"),
        "{err}"
    );
    let err = fails(&[
        "match",
        "random",
        "random",
        "--openings",
        "300",
        "--csv",
        csv,
    ]);
    assert!(
        err.contains("--openings 300 is out of range: from 0 to 40"),
        "{err}"
    );
    assert!(!std::path::Path::new(csv).exists());
    // Too many threads are capped at the cores, and it says so.
    let out = halatafl(&[
        "match",
        "random",
        "random",
        "--games",
        "2",
        "--threads",
        "10000",
        "--csv",
        csv,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--threads 10000 is more than"));
    assert_eq!(common::read_csv(std::path::Path::new(csv)).len(), 2);
}

#[test]
fn csv_paths_that_cannot_be_written_are_refused_before_any_game() {
    let dir = scratch("csv-paths");
    let fifo = dir.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (path, says) in [
        (fifo.to_str().unwrap(), "not a regular file"),
        (dir.to_str().unwrap(), "is a directory"),
        ("/dev/null", "not a regular file"),
    ] {
        let err = fails(&["match", "random", "random", "--games", "2", "--csv", path]);
        assert!(err.contains(says), "{err}");
        assert!(!err.contains("[1/2]"), "a game was played: {err}");
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn finished_positions_have_no_moves() {
    // The pen filled, eight geese left, and the quiet-ply count at 100.
    let after = |fen: &str, mv: &str| -> String {
        let out = halatafl(&["replay", "--fen", fen, mv]);
        let replay = text(&out.stdout);
        let line = replay.lines().rev().nth(1).unwrap();
        line.split_whitespace()
            .skip(2)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let cases = [
        (
            after("GGG/GGG/..GG.../...GGG./F.....F/.../... g 0", "e4-e5"),
            "pen-filled",
        ),
        (
            after("F../.../GG...GG/...G.../...F..G/.../GGG f 0", "d3xd5"),
            "fewer-than-nine",
        ),
        (
            "F.F/.../G....../.GGGGGG/GGGGGGG/GGG/GGG f 100".to_string(),
            "fifty-moves",
        ),
    ];
    for (fen, reason) in cases {
        let out = halatafl(&["moves", "--fen", &fen]);
        assert!(out.status.success(), "{fen}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "", "{fen}");
        let err = text(&out.stderr);
        assert!(
            err.contains("the game is over") && err.contains(reason),
            "{fen}: {err}"
        );
    }
}

#[test]
fn os_errors_are_said_once() {
    let dir = scratch("os-errors");
    // A file where a directory should be.
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    let csv = file.join("x.csv");
    let err = fails(&["match", "random", "random", "--csv", csv.to_str().unwrap()]);
    let os = std::io::Error::from_raw_os_error(20).to_string();
    assert_eq!(err.matches(&os).count(), 1, "{err}");
    // A directory where a CSV should be.
    let err = fails(&["summary", dir.to_str().unwrap()]);
    assert!(err.contains("is a directory"), "{err}");
}

#[test]
fn play_never_loses_or_overwrites_a_game() {
    let dir = scratch("play-save");
    // Two foxes trapped in two moves would take a long script; instead the
    // geese play from a position one move from filling the pen.
    let fen = "GGG/GGG/..GG.../...GGG./F.....F/.../... g 0";
    let play = |save: &std::path::Path| -> Output {
        let mut child = Command::new(bin())
            .args([
                "play", "--agent", "random", "--as", "geese", "--seed", "1", "--fen", fen,
            ])
            .arg("--save")
            .arg(save)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"e4-e5\n").unwrap();
        child.wait_with_output().unwrap()
    };
    // A directory is refused before the game starts.
    let out = play(&dir);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("is a directory"),
        "{}",
        text(&out.stderr)
    );
    assert!(!text(&out.stdout).contains("your move"));
    // A new file gets the game; the same file again gets a second row.
    let csv = dir.join("games.csv");
    for rows in [1, 2] {
        let out = play(&csv);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("game saved to"),
            "{}",
            text(&out.stdout)
        );
        assert_eq!(common::read_csv(&csv).len(), rows);
    }
    // A file that is not a game CSV is refused before the game, untouched.
    let other = dir.join("notes.txt");
    std::fs::write(&other, "my notes\n").unwrap();
    let out = play(&other);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not a game CSV"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "my notes\n");
}

#[test]
fn a_stage_device_is_checked_before_the_run_is_opened() {
    let missing = scratch("stage-device").join("no-run");
    let missing = missing.to_str().unwrap();
    // Under `stage`, and under the earlier top-level names scripts still use.
    for prefix in [&["stage"][..], &[]] {
        for stage in ["selfplay", "learn", "evaluate"] {
            let args = |device| {
                let mut args = prefix.to_vec();
                args.extend([stage, "--run", missing, "--device", device]);
                args
            };
            let err = fails(&args("tpu"));
            assert!(
                err.contains("--device") && err.contains("unknown device `tpu`"),
                "{stage}: {err}"
            );
            let err = fails(&args("cpu"));
            assert!(err.contains("cannot open the run"), "{stage}: {err}");
        }
    }
    // Without a GPU `cuda` is refused; with one it passes to the run.
    let err = fails(&["learn", "--run", missing, "--device", "cuda"]);
    assert!(
        err.contains("no CUDA GPU") || err.contains("cannot open the run"),
        "{err}"
    );
}
