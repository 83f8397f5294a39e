//! End-to-end tests of `halatafl perft`, `moves` and `replay`: the output
//! contracts, every way `replay` can end (threefold, fifty moves, pen filled,
//! fewer than nine, no moves, ongoing), and errors on bad input that name the
//! move and ply or the row and character, with exit code 1 and never a panic.

mod common;

use common::{fails, halatafl};
use halatafl_rules::{Position, Variant, START_FEN};
use std::process::Output;

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 output")
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("utf-8 output")
}

/// Runs a command that must succeed and returns its standard output.
fn ok(args: &[&str]) -> String {
    let out = halatafl(args);
    assert!(
        out.status.success(),
        "halatafl {args:?} failed: {}",
        stderr(&out)
    );
    stdout(&out)
}

fn last_line(text: &str) -> &str {
    text.lines().last().expect("some output")
}

/// The `result:` line of a replay.
fn replay_result(args: &[&str]) -> String {
    let mut full = vec!["replay"];
    full.extend_from_slice(args);
    last_line(&ok(&full)).to_string()
}

#[test]
fn perft_last_line_is_the_count_alone() {
    assert_eq!(last_line(&ok(&["perft", "--depth", "4"])), "16208");
    assert_eq!(
        last_line(&ok(&["perft", "-d", "3", "--corner-links"])),
        "792"
    );
    let divided = ok(&["perft", "--depth", "3", "--divide"]);
    assert_eq!(last_line(&divided), "778");
    // The divide lines are `move: count` and add up to the total.
    let sum: u64 = divided
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(_, n)| n.parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 778);
    // The classic game, with a position string.
    let classic = ok(&[
        "perft",
        "-d",
        "2",
        "--variant",
        "classic",
        "--geese",
        "17",
        "--fen",
        ".../.../......./GG.F.GG/GGGGGGG/GGG/GGG f 0",
    ]);
    let variant = Variant::classic(17, false).unwrap();
    assert_eq!(
        last_line(&classic),
        halatafl_rules::perft(&Position::start(variant), 2).to_string()
    );
}

#[test]
fn moves_prints_only_the_moves() {
    let text = ok(&["moves"]);
    let mut printed: Vec<&str> = text.lines().collect();
    printed.sort();
    assert_eq!(
        printed,
        ["c7-c6", "c7-d6", "c7-d7", "e7-d6", "e7-d7", "e7-e6"]
    );
    // A chain position: the loop of docs/rules.md, then on over b5.
    let fen = "F../.../.GFG.../..G.G../...G.../GGG/GGG f 0";
    let text = ok(&["moves", "--fen", fen]);
    let mut printed: Vec<&str> = text.lines().collect();
    printed.sort();
    assert_eq!(printed, ["c5xa5", "c5xc3xe3xe5xc5xa5", "c5xe5xe3xc3xc5xa5"]);
    // No moves: nothing at all on standard output.
    assert_eq!(
        ok(&[
            "moves",
            "--fen",
            "FGF/GGG/..GGG../......./G.....G/.../... f 0"
        ]),
        ""
    );
    // Every line is a move of the library's list, in any variant.
    let text = ok(&[
        "moves",
        "--variant",
        "classic",
        "--sideways",
        "--fen",
        ".../.F./......./G.....G/..G.G../.G./G.G g 0",
    ]);
    let p = Position::from_fen(
        ".../.F./......./G.....G/..G.G../.G./G.G g 0",
        Variant::classic(13, true).unwrap(),
    )
    .unwrap();
    let expected: Vec<String> = p.legal_moves().iter().map(|m| m.to_string()).collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), expected);
}

/// Fox c7 and goose a5/b5 shuffle: the position after ply 2 (fox on c6, goose
/// on a5, foxes to move) stands again after plies 6 and 10.
const SHUFFLE: [&str; 10] = [
    "c7-c6", "a4-a5", "c6-c7", "a5-b5", "c7-c6", "b5-a5", "c6-c7", "a5-b5", "c7-c6", "b5-a5",
];

#[test]
fn replay_draws_by_threefold_repetition() {
    assert_eq!(replay_result(&SHUFFLE[..9]), "result: ongoing");
    assert_eq!(replay_result(&SHUFFLE), "result: draw (threefold)");
    // The moves may also come as one argument.
    assert_eq!(
        replay_result(&[&SHUFFLE.join(" ")]),
        "result: draw (threefold)"
    );
    // A move after the end is refused, naming the move, its ply and the result.
    let mut more = SHUFFLE.to_vec();
    more.push("c6-c7");
    let mut args = vec!["replay"];
    args.extend(more);
    let err = fails(&args);
    assert!(err.contains("ply 11"), "{err}");
    assert!(err.contains("`c6-c7`"), "{err}");
    assert!(err.contains("draw (threefold)"), "{err}");
}

#[test]
fn replay_draws_by_fifty_moves() {
    let fen = "F.F/.../G....../.GGGGGG/GGGGGGG/GGG/GGG f 98";
    // A fox step and a sideways goose step do not reset the count: 100 plies.
    let out = ok(&["replay", "--fen", fen, "c7-c6", "a5-b5"]);
    assert!(out.contains(" f 100\n"), "{out}");
    assert_eq!(last_line(&out), "result: draw (fifty-moves)");
    // One ply short of it.
    assert_eq!(replay_result(&["--fen", fen, "c7-c6"]), "result: ongoing");
    // A forward goose step resets it.
    let out = ok(&["replay", "--fen", fen, "c7-c6", "b4-b5", "c6-c7"]);
    assert_eq!(last_line(&out), "result: ongoing", "{out}");
    assert!(out.contains(" f 0\n") && out.contains(" g 1\n"), "{out}");
    // A position given with the count already at 100 is drawn.
    assert_eq!(
        replay_result(&["--fen", "F.F/.../G....../.GGGGGG/GGGGGGG/GGG/GGG f 100"]),
        "result: draw (fifty-moves)"
    );
}

#[test]
fn replay_wins() {
    // The last pen point filled from outside the pen.
    assert_eq!(
        replay_result(&[
            "--fen",
            "GGG/GGG/..GG.../...GGG./F.....F/.../... g 0",
            "e4-e5"
        ]),
        "result: geese (pen-filled)"
    );
    // A capture leaves eight geese.
    assert_eq!(
        replay_result(&[
            "--fen",
            "F../.../GG...GG/...G.../...F..G/.../GGG f 0",
            "d3xd5"
        ]),
        "result: foxes (fewer-than-nine)"
    );
    // The chain of docs/rules.md takes five geese and ends the game.
    assert_eq!(
        replay_result(&[
            "--fen",
            "F../.../.GFG.../..G.G../...G.../GGG/GGG f 0",
            "c5xe5xe3xc3xc5xa5"
        ]),
        "result: foxes (fewer-than-nine)"
    );
    // e4-e5 takes the foxes' last free point: they have no move.
    assert_eq!(
        replay_result(&[
            "--fen",
            "FGF/GGG/..GG.../....G../G.....G/.../... g 0",
            "e4-e5"
        ]),
        "result: geese (no-moves)"
    );
    // Classic: the geese stuck means the fox wins; fewer than four too.
    assert_eq!(
        replay_result(&[
            "--variant",
            "classic",
            "--fen",
            ".../.../......./...F.../GGG..../.../... g 0"
        ]),
        "result: foxes (fewer-than-four)"
    );
    assert_eq!(replay_result(&[]), "result: ongoing");
    assert_eq!(replay_result(&["c7-c6", "a4-a5"]), "result: ongoing");
}

#[test]
fn replay_prints_each_position() {
    let out = ok(&["replay", "c7-c6"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("start: {START_FEN}"));
    assert!(lines[1].contains("c7-c6"));
    assert!(lines[1].ends_with("..F/F../......./GGGGGGG/GGGGGGG/GGG/GGG g 1"));
    assert_eq!(lines.len(), 3);
}

#[test]
fn bad_moves_name_the_move_and_the_ply() {
    // Malformed: the message gives the move, its ply and the character.
    let err = fails(&["replay", "c7-c6", "a4-a5", "c6-c7", "zz"]);
    assert!(err.contains("ply 4"), "{err}");
    assert!(err.contains("malformed move `zz` at character 1"), "{err}");
    let err = fails(&["replay", "c7-d6-d5"]);
    assert!(err.contains("ply 1"), "{err}");
    assert!(err.contains("`c7-d6-d5` at character 6"), "{err}");
    let err = fails(&["replay", "c7-c6", "a4xa5x"]);
    assert!(err.contains("ply 2"), "{err}");
    assert!(err.contains("`a4xa5x`"), "{err}");
    // Illegal: the move, the ply and why.
    let err = fails(&["replay", "c7-c5"]);
    assert!(err.contains("ply 1: illegal move `c7-c5`"), "{err}");
    let err = fails(&["replay", "c7-c6", "a4-a3"]);
    assert!(err.contains("ply 2: illegal move `a4-a3`"), "{err}");
    let err = fails(&["replay", "a4-a5"]);
    assert!(err.contains("no fox on a4"), "{err}");
    // A fox step while a capture is possible.
    let err = fails(&[
        "replay",
        "--fen",
        "F../.../GG...GG/...G.../...F..G/.../GGG f 0",
        "d3-d2",
    ]);
    assert!(err.contains("ply 1: illegal move `d3-d2`"), "{err}");
    assert!(err.contains("compulsory"), "{err}");
    // Part of a chain that must go on.
    let err = fails(&[
        "replay",
        "--fen",
        "F../.../.GFG.../..G.G../...G.../GGG/GGG f 0",
        "c5xe5",
    ]);
    assert!(err.contains("ply 1: illegal move `c5xe5`"), "{err}");
    // Non-ASCII and empty-looking input.
    let err = fails(&["replay", "c7–c6"]);
    assert!(err.contains("ply 1"), "{err}");
}

#[test]
fn bad_position_strings_name_row_and_character() {
    let cases: [(&str, &[&str]); 9] = [
        (
            "F.F/.../......./GGGXGGG/GGGGGGG/GGG/GGG f 0",
            &["row 4", "character 20", "d4", "`X`"],
        ),
        (
            "F.F/.../......./GGGGGG/GGGGGGG/GGG/GGG f 0",
            &["row 4", "character 17", "6 points", "expected 7"],
        ),
        (
            "F.F/.../......./GGGGGGG/GGGGGGG/GGG f 0",
            &["6 rows", "expected 7"],
        ),
        (
            "F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG x 0",
            &["`x`", "character 41"],
        ),
        (
            "F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f -3",
            &["`-3`", "character 43"],
        ),
        ("F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG", &["found 1"]),
        ("FFF/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 0", &["3 foxes"]),
        (
            "..F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 0",
            &["1 fox on the board"],
        ),
        ("", &["found 0"]),
    ];
    // Each command start costs about a second here (the binary links large
    // libraries), so `moves` takes the cases and `perft` the first one.
    for (i, (fen, needles)) in cases.into_iter().enumerate() {
        let commands: &[&str] = if i == 0 {
            &["moves", "perft"]
        } else {
            &["moves"]
        };
        for &command in commands {
            let mut args = vec![command, "--fen", fen];
            if command == "perft" {
                args.extend(["-d", "1"]);
            }
            let err = fails(&args);
            assert!(err.contains("bad --fen"), "{err}");
            for needle in needles {
                assert!(err.contains(needle), "{fen:?}: {needle:?} not in {err}");
            }
        }
    }
    // Classic: too many geese for the table option.
    let err = fails(&[
        "moves",
        "--variant",
        "classic",
        "--fen",
        ".../.../......./GG.F.GG/GGGGGGG/GGG/GGG f 0",
    ]);
    assert!(err.contains("17 geese") && err.contains("13"), "{err}");
    // Garbage of every kind: a clean error, never a panic.
    for fen in [
        "/",
        "//////",
        "F.F/.../.......",
        "é/é/é/é/é/é/é f",
        "F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 0 extra",
        "\u{a0}",
        "F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG g 99999999999",
    ] {
        fails(&["moves", "--fen", fen]);
    }
}
