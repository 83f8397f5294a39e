//! `halatafl ladder` end to end on a tiny ladder: the CSV holds every rung's
//! games, numbered apart, each opening once with the agent on each side and
//! the rung as the opponent's spec; `summary` reads it back; the printed
//! tables have a line per rung (and per rung and side) and the equivalent.

mod common;

use common::{bin, read_csv, scratch};
use std::process::Command;

const AGENT: &str = "alphabeta:depth=2";
const RUNGS: [&str; 2] = ["random", "alphabeta:depth=1"];

#[test]
fn a_tiny_ladder_writes_every_rung_and_prints_the_equivalent() {
    let dir = scratch("ladder");
    let csv_path = dir.join("ladder.csv");
    let out = Command::new(bin())
        .args(["ladder", AGENT, "--rungs", &RUNGS.join(",")])
        .args(["--games", "4", "--openings", "2", "--threads", "2", "--csv"])
        .arg(&csv_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let games = read_csv(&csv_path);
    assert_eq!(games.len(), 8, "4 games for each of 2 rungs");
    for (i, game) in games.iter().enumerate() {
        assert_eq!(game["game"], (i + 1).to_string(), "numbered without gaps");
    }
    for (k, rung_games) in games.chunks(4).enumerate() {
        let rung = RUNGS[k];
        for pair in rung_games.chunks(2) {
            // One opening, the agent on the foxes first, then on the geese.
            assert_eq!(pair[0]["opening"], pair[1]["opening"]);
            assert_eq!(pair[0]["opening_moves"], pair[1]["opening_moves"]);
            assert_eq!(pair[0]["opening_moves"].split(' ').count(), 2);
            assert_eq!(
                (pair[0]["foxes"].as_str(), pair[0]["geese"].as_str()),
                (AGENT, rung)
            );
            assert_eq!(
                (pair[1]["foxes"].as_str(), pair[1]["geese"].as_str()),
                (rung, AGENT)
            );
        }
    }
    // Every rung plays the same openings.
    for i in 0..4 {
        assert_eq!(games[i]["opening_moves"], games[i + 4]["opening_moves"]);
    }

    let lines: Vec<&str> = stdout.lines().collect();
    for rung in RUNGS {
        // The rung's line: 2 pairs and a score with its interval.
        let rung_line = lines
            .iter()
            .find(|l| l.starts_with(rung) && l.contains('['))
            .unwrap_or_else(|| panic!("a line for {rung}\n{stdout}"));
        let fields: Vec<&str> = rung_line.split_whitespace().collect();
        assert_eq!(fields[1], "2", "{rung_line}");
        // The per-side lines, one for each side of the agent.
        for side in ["foxes", "geese"] {
            assert!(
                lines.iter().any(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.len() > 3 && f[0] == rung && f[1] == side && f[2] == "2"
                }),
                "{rung} as {side}\n{stdout}"
            );
        }
    }
    let equivalent = lines
        .iter()
        .find(|l| l.starts_with("rung time equivalent: "))
        .unwrap_or_else(|| panic!("the equivalent line\n{stdout}"));
    assert!(equivalent.contains(" ms, interval ["), "{equivalent}");

    let out = Command::new(bin())
        .arg("summary")
        .arg(&csv_path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(
        text.matches("4 games, two-foxes, from").count(),
        2,
        "{text}"
    );
    for rung in RUNGS {
        assert!(text.contains(&format!("agent B: {rung}\n")), "{text}");
    }
    assert_eq!(text.matches(&format!("agent A: {AGENT}\n")).count(), 2);
    // One pairs line per rung: agent A's (B's is its mirror, not printed).
    assert_eq!(text.matches("pairs        2 pairs").count(), 2, "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_ladder_fails_before_playing() {
    let dir = scratch("ladder-bad");
    let csv_path = dir.join("ladder.csv");
    for (args, expected) in [
        (vec!["--rungs", "random,alphabeta:depht=1"], "depht"),
        (vec!["--rungs", "random,random"], "`random` is listed twice"),
        (vec!["--rungs", "random", "--games", "3"], "games 3 is odd"),
    ] {
        let out = Command::new(bin())
            .args(["ladder", AGENT])
            .args(&args)
            .arg("--csv")
            .arg(&csv_path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!csv_path.exists(), "no CSV for a ladder that did not start");
    }
    std::fs::remove_dir_all(&dir).ok();
}
