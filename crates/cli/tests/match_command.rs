//! `halatafl match` and `halatafl summary` end to end: the CSV `match` writes
//! and the summary it prints agree game by game, per side and per game pair
//! (each opening played with the sides swapped); `summary` reprints it from
//! the CSV and pools several files; bad input fails with the file named.

mod common;

use common::{bin, fails, read_csv, scratch, succeeds};
use std::collections::BTreeMap;
use std::process::Command;

/// Agent A's points (of 1) in a CSV row: A has the foxes in odd games.
fn a_points(row: &BTreeMap<String, String>) -> f64 {
    let a_side = if row["game"].parse::<usize>().unwrap() % 2 == 1 {
        "foxes"
    } else {
        "geese"
    };
    match row["result"].as_str() {
        "draw" => 0.5,
        r if r == a_side => 1.0,
        _ => 0.0,
    }
}

#[test]
fn summary_agrees_with_the_csv_per_side_and_per_pair() {
    let dir = scratch("match");
    let csv_path = dir.join("games.csv");
    let out = Command::new(bin())
        .args(["match", "alphabeta:depth=1", "random", "--games", "12"])
        .args(["--openings", "2", "--seed", "7", "--threads", "2", "--csv"])
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
    assert_eq!(games.len(), 12);
    // Games 2k-1 and 2k share their opening, with the agents' sides swapped.
    let mut ptnml = [0u64; 5];
    for pair in games.chunks(2) {
        assert_eq!(pair[0]["opening_moves"], pair[1]["opening_moves"]);
        assert_eq!(pair[0]["opening_moves"].split(' ').count(), 2);
        assert_eq!(pair[0]["foxes"], pair[1]["geese"]);
        let points = a_points(&pair[0]) + a_points(&pair[1]);
        ptnml[(points * 2.0) as usize] += 1;
    }
    let total: f64 = games.iter().map(a_points).sum();
    let a_block = stdout
        .split("agent B:")
        .next()
        .expect("agent A's block comes first");
    let expected = format!(
        "pairs        6 pairs  ptnml(0-2) {}, {}, {}, {}, {}  score {:.3}",
        ptnml[0],
        ptnml[1],
        ptnml[2],
        ptnml[3],
        ptnml[4],
        total / 12.0
    );
    assert!(a_block.contains(&expected), "{expected}\n{stdout}");
    assert!(
        a_block.contains(&format!("score {:.3} [", total / 12.0)),
        "{stdout}"
    );
    for label in [
        "overall     12 games",
        "as foxes     6 games",
        "as geese     6 games",
    ] {
        assert!(a_block.contains(label), "{label}\n{stdout}");
    }
    assert!(stdout.contains("normal on game pairs"), "{stdout}");
    // Agent B's block has its time only; `--both-agents` adds its scores.
    let b_block = stdout.split("agent B:").nth(1).unwrap();
    assert!(
        !b_block.contains("overall") && b_block.contains("ms per move"),
        "{stdout}"
    );
    let out = summary_with(&[csv_path.as_path()], &["--both-agents"]);
    let both = String::from_utf8_lossy(&out.stdout);
    let b_block = both.split("agent B:").nth(1).unwrap();
    let b_points = 12.0 - total;
    assert!(b_block.contains("overall     12 games"), "{both}");
    assert!(
        b_block.contains(&format!("score {:.3} [", b_points / 12.0)),
        "{both}"
    );
    summary_reprints_and_pools(&csv_path, &stdout);
    std::fs::remove_dir_all(&dir).ok();
}

fn summary(files: &[&std::path::Path]) -> std::process::Output {
    summary_with(files, &[])
}

fn summary_with(files: &[&std::path::Path], flags: &[&str]) -> std::process::Output {
    Command::new(bin())
        .arg("summary")
        .args(files)
        .args(flags)
        .output()
        .unwrap()
}

/// The agents' blocks of a summary: from `agent A:` to the end of agent B's.
fn agent_blocks(text: &str) -> String {
    let start = text.find("agent A:").expect("an agent A block");
    text[start..]
        .lines()
        .take_while(|l| !l.starts_with("games written"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn summary_reprints_and_pools(csv_path: &std::path::Path, match_stdout: &str) {
    let out = summary(&[csv_path]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(agent_blocks(&text), agent_blocks(match_stdout));
    assert!(text.contains("12 games, two-foxes, from"), "{text}");

    // The same file twice: twice the games and pairs, the same scores.
    let out = summary(&[csv_path, csv_path]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("24 games, two-foxes"), "{text}");
    assert!(text.contains("overall     24 games"), "{text}");
    assert!(text.contains("pairs       12 pairs"), "{text}");
    let score = |t: &str| -> String {
        let line = t.lines().find(|l| l.contains("overall")).unwrap();
        line.split("score ").nth(1).unwrap()[..5].to_string()
    };
    assert_eq!(score(&text), score(match_stdout));

    // --json: one object per pair of agents, with the numbers of the text.
    let out = summary_with(&[csv_path], &["--json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["games"], 12);
    assert_eq!(v["variant"], "two-foxes");
    let a = &v["agents"][0];
    assert_eq!(a["overall"]["games"], 12);
    assert_eq!(a["pairs"]["pairs"], 6);
    let printed = |label: &str| -> f64 {
        let line = match_stdout.lines().find(|l| l.contains(label)).unwrap();
        line.split("score ").nth(1).unwrap()[..5].parse().unwrap()
    };
    let rounded = |x: &serde_json::Value| (x.as_f64().unwrap() * 1000.0).round() / 1000.0;
    assert_eq!(rounded(&a["overall"]["score"]), printed("overall"));
    assert_eq!(rounded(&a["pairs"]["score"]), printed("ptnml"));
    let b = &v["agents"][1];
    assert_eq!(
        a["overall"]["wins"].as_u64().unwrap(),
        b["overall"]["losses"].as_u64().unwrap()
    );
    // The margins of A and B are each other's negatives.
    let (ma, mb) = (&a["margin"]["mean"], &b["margin"]["mean"]);
    assert!(
        (ma.as_f64().unwrap() + mb.as_f64().unwrap()).abs() < 1e-9,
        "{v}"
    );
    // ... and their pairs by result, then margin each other's complements.
    let (ra, rb) = (
        a["result_then_margin"]["mean"].as_f64().unwrap(),
        b["result_then_margin"]["mean"].as_f64().unwrap(),
    );
    assert!((ra + rb - 1.0).abs() < 1e-9, "{v}");
    // How the games ended covers every game of each side, once.
    for (side, key) in [("foxes", "ends_as_foxes"), ("geese", "ends_as_geese")] {
        let ends = a[key].as_array().unwrap();
        let games: u64 = ends.iter().map(|e| e["games"].as_u64().unwrap()).sum();
        assert_eq!(games, a[side]["games"].as_u64().unwrap(), "{v}");
        let won: u64 = ends
            .iter()
            .filter(|e| e["result"] == "won")
            .map(|e| e["games"].as_u64().unwrap())
            .sum();
        assert_eq!(won, a[side]["wins"].as_u64().unwrap(), "{v}");
    }

    // A damaged file is named, with the row that is wrong.
    let bad = csv_path.with_file_name("bad.csv");
    let mut damaged = std::fs::read_to_string(csv_path).unwrap();
    damaged = damaged.replacen(",two-foxes\n", ",two-foxes\nnot,a,game\n", 1);
    std::fs::write(&bad, damaged).unwrap();
    let out = summary(&[csv_path, &bad]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("bad.csv") && err.contains("line: 3"), "{err}");
}

#[test]
fn bad_agent_specs_fail_before_playing() {
    let dir = scratch("match-bad");
    let csv_path = dir.join("games.csv");
    let out = Command::new(bin())
        .args([
            "match",
            "alphabeta:depht=3",
            "random",
            "--games",
            "2",
            "--csv",
        ])
        .arg(&csv_path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("depht"), "the bad key is named: {err}");
    assert!(!csv_path.exists(), "no CSV for a match that did not start");
    std::fs::remove_dir_all(&dir).ok();
}

/// `python3 scripts/book-from-games.py ARGS` run in `dir`, to its end.
fn book_script(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new("python3")
        .current_dir(dir)
        .arg(common::workspace().join("scripts/book-from-games.py"))
        .args(args)
        .output()
        .unwrap()
}

/// One pair of random games on `book`'s first opening, written to `csv`:
/// a book that `--book` must load whole (every line is checked first).
fn random_pair_on(book: &str, csv: &str) -> String {
    succeeds(&[
        "match", "random", "random", "--games", "2", "--book", book, "--csv", csv,
    ])
}

/// `--book` plays the book's openings in order, each once with each agent on
/// each side; `scripts/book-from-games.py` cuts a book that `--book` reads
/// back from the match's own CSV; a bad book fails before any game with its
/// file, line and ply, and leaves no CSV.
#[test]
fn a_book_sets_the_openings_and_a_bad_one_is_refused_by_line() {
    let dir = scratch("match-book");
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    std::fs::write(
        path("three.book"),
        "# three openings\nc7-c6 a4-a5\n\ne7-e6\nc7-d6 g4-g5 d6-d5\n",
    )
    .unwrap();
    let csv_path = path("games.csv");
    let stdout = succeeds(&[
        "match",
        "alphabeta:depth=1",
        "random",
        "--games",
        "6",
        "--threads",
        "2",
        "--book",
        &path("three.book"),
        "--csv",
        &csv_path,
    ]);
    assert!(stdout.contains("three.book (3 openings)"), "{stdout}");
    assert!(stdout.contains("pairs        3 pairs"), "{stdout}");
    let games = read_csv(std::path::Path::new(&csv_path));
    let openings: Vec<&str> = games.iter().map(|g| g["opening_moves"].as_str()).collect();
    assert_eq!(
        openings,
        [
            "c7-c6 a4-a5",
            "c7-c6 a4-a5",
            "e7-e6",
            "e7-e6",
            "c7-d6 g4-g5 d6-d5",
            "c7-d6 g4-g5 d6-d5"
        ]
    );
    for (game, pair) in games.iter().zip([0, 0, 1, 1, 2, 2]) {
        assert_eq!(game["opening"], pair.to_string());
        assert!(game["moves"].starts_with(&game["opening_moves"]));
    }
    assert_eq!(games[0]["foxes"], games[1]["geese"]);

    // The script cuts a book from these games that --book reads back.
    let made = book_script(
        &dir,
        &[
            &csv_path,
            "--before-end",
            "2",
            "--foxes",
            "alphabeta",
            "--out",
            &path("cut.book"),
        ],
    );
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let text = std::fs::read_to_string(path("cut.book")).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let fox_games: Vec<_> = games
        .iter()
        .filter(|g| g["foxes"] == "alphabeta:depth=1")
        .collect();
    assert_eq!(lines.len(), fox_games.len(), "{text}");
    for (line, game) in lines.iter().zip(&fox_games) {
        let moves: Vec<&str> = game["moves"].split(' ').collect();
        assert_eq!(*line, moves[..moves.len() - 2].join(" "));
    }
    // A special file is refused, not replaced by the rename.
    let fifo = path("fifo.book");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let refused = book_script(&dir, &[&csv_path, "--before-end", "2", "--out", &fifo]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && err.contains("not a regular file"),
        "{err}"
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    random_pair_on(&path("cut.book"), &path("cut.csv"));

    // Bad books and bad combinations fail before any game, and write nothing.
    std::fs::write(path("bad.book"), "c7-c6\nc7-c6 a4-a9\n").unwrap();
    let bad_csv = path("bad.csv");
    for (flags, why) in [
        (vec!["--book", "bad.book"], "bad.book, line 2: ply 2"),
        (
            vec!["--book", "three.book", "--games", "7"],
            "its 3 openings make at most 6 games",
        ),
        (
            vec!["--book", "three.book", "--openings", "4"],
            "cannot be used with",
        ),
        (vec!["--book", "missing.book"], "missing.book"),
    ] {
        let flags: Vec<String> = flags
            .iter()
            .map(|f| {
                if f.ends_with(".book") {
                    path(f)
                } else {
                    f.to_string()
                }
            })
            .collect();
        let mut args = vec!["match", "random", "random", "--csv", &bad_csv];
        args.extend(flags.iter().map(String::as_str));
        let err = if flags.contains(&"--openings".to_string()) {
            // clap refuses the pair itself, with its usage code 2.
            let out = Command::new(bin()).args(&args).output().unwrap();
            assert_eq!(out.status.code(), Some(2));
            String::from_utf8_lossy(&out.stderr).into_owned()
        } else {
            fails(&args)
        };
        assert!(err.contains(why), "{flags:?}: {err}");
        assert!(
            !std::path::Path::new(&bad_csv).exists(),
            "{flags:?}: no CSV"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The committed shut-in beds (`data/beds/`) and the self-play start pool
/// (`data/starts/`) are what the script cuts from the committed games, byte
/// for byte, and `--book` loads every opening of each bed (all are checked
/// before the first game; the pool is loaded by the training config test).
#[test]
fn the_committed_test_beds_rebuild_and_load() {
    let dir = scratch("match-beds");
    let beds = common::workspace().join("data/beds");
    for (games, book, openings) in [
        ("qd4-ab1000-4201.csv", "shutin40.book", 44),
        ("mx-h0-ab113-5101.csv", "neutral40.book", 43),
    ] {
        let rebuilt = dir.join(book);
        let made = book_script(
            &beds,
            &[
                games,
                "--before-end",
                "40",
                "--foxes",
                "net:",
                "--result",
                "geese",
                "--reason",
                "no-moves",
                "--out",
                rebuilt.to_str().unwrap(),
            ],
        );
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let committed = std::fs::read_to_string(beds.join(book)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&rebuilt).unwrap(),
            committed,
            "{book}"
        );
        let stdout = random_pair_on(
            beds.join(book).to_str().unwrap(),
            dir.join("bed.csv").to_str().unwrap(),
        );
        assert!(
            stdout.contains(&format!("({openings} openings)")),
            "{stdout}"
        );
    }
    // The self-play start pool (data/starts/README.md): six cuts of each
    // game, all of one cut before the next; a cut of no ply is refused.
    let starts = common::workspace().join("data/starts");
    let made = book_script(
        &starts,
        &["shutin-games.csv", "--before-end", "10,20,30,40,50,60"],
    );
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let committed = std::fs::read_to_string(starts.join("shutins.book")).unwrap();
    assert!(
        String::from_utf8(made.stdout).unwrap() == committed,
        "data/starts/shutins.book is not what its games cut to"
    );
    let refused = book_script(&starts, &["shutin-games.csv", "--before-end", "10,0"]);
    assert!(!refused.status.success() && refused.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("at least 1 ply for each cut"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}
