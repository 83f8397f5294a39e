//! End-to-end tests of `halatafl solve` (one position, and suite building
//! from a games CSV) and `halatafl accuracy`, with errors on bad input that
//! name the flag, or the file and line.

mod common;

use common::{fails, halatafl, read_csv, scratch, workspace};

/// Runs a command that must succeed and returns its standard output.
fn ok(args: &[&str]) -> String {
    let out = halatafl(args);
    assert!(
        out.status.success(),
        "halatafl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Nine geese, foxes to move, one capture chain: the foxes win with it.
const ONE_CAPTURE_WINS: &str = "GGG/FGG/...G.GG/.....FG/......./.../... f 2";

#[test]
fn solve_prints_value_best_move_and_costs() {
    let out = ok(&["solve", "--fen", ONE_CAPTURE_WINS, "--tt-mb", "1"]);
    assert!(out.contains("value: foxes win"), "{out}");
    assert!(out.contains("best: c6xe4"), "{out}");
    assert!(out.contains("searches: foxes win? yes"), "{out}");
    for key in ["nodes: ", "time: ", "table: "] {
        assert!(out.contains(key), "{key} missing: {out}");
    }
}

#[test]
fn solve_applies_the_fifty_move_rule_on_one_or_two_threads() {
    // Counter 99, foxes to move, no capture: every move reaches 100.
    let fen = "F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 99";
    for threads in ["1", "2"] {
        let out = ok(&["solve", "--fen", fen, "--threads", threads, "--tt-mb", "2"]);
        assert!(out.contains("value: draw"), "{out}");
        assert!(
            out.contains("foxes win? no") && out.contains("geese win? no"),
            "{out}"
        );
    }
}

#[test]
fn solve_expect_runs_the_guessed_winner_first_and_keeps_the_value() {
    // The foxes win: a right guess settles it in one search, a wrong one
    // is disproven first and the foxes' search then proves the win.
    let right = ok(&["solve", "--fen", ONE_CAPTURE_WINS, "--expect", "foxes"]);
    assert!(right.contains("searches: foxes win? yes\n"), "{right}");
    let wrong = ok(&["solve", "--fen", ONE_CAPTURE_WINS, "--expect", "geese"]);
    assert!(
        wrong.contains("searches: geese win? no; foxes win? yes"),
        "{wrong}"
    );
    for out in [&right, &wrong] {
        assert!(
            out.contains("value: foxes win") && out.contains("best: c6xe4"),
            "{out}"
        );
    }
    // A draw needs both searches, in the guessed order.
    let draw = "F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 99";
    let out = ok(&["solve", "--fen", draw, "--expect", "geese", "--tt-mb", "2"]);
    assert!(out.contains("value: draw"), "{out}");
    assert!(
        out.contains("searches: geese win? no; foxes win? no"),
        "{out}"
    );
    let err = fails(&["solve", "--expect", "geese", "--threads", "2"]);
    assert!(err.contains("with --threads 2 they run at once"), "{err}");
    let err = fails(&[
        "solve",
        "--expect",
        "geese",
        "--variant",
        "classic",
        "--method",
        "dag",
    ]);
    assert!(
        err.contains("--expect orders df-pn's two searches"),
        "{err}"
    );
    // A word that is no side: clap's usage error (exit 2) names the flag.
    let out = halatafl(&["solve", "--expect", "ducks"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'--expect <EXPECT>': unknown side `ducks`"),
        "{err}"
    );
}

#[test]
fn solve_reports_unknown_with_root_numbers_when_the_budget_ends() {
    let out = ok(&["solve", "--budget-nodes", "50", "--tt-mb", "1"]);
    assert!(
        out.contains("value: unknown (budget of 50 nodes spent)"),
        "{out}"
    );
    assert!(out.contains("root pn ") && out.contains(", dn "), "{out}");
}

#[test]
fn solve_refuses_bad_input() {
    let err = fails(&["solve", "--fen", "F.F/.../GG f 0"]);
    assert!(err.contains("bad --fen"), "{err}");
    let err = fails(&["solve", "--threads", "3"]);
    assert!(
        err.contains("--threads 3") && err.contains("1 or 2"),
        "{err}"
    );
    let err = fails(&["solve", "--budget-nodes", "0"]);
    assert!(err.contains("--budget-nodes 0"), "{err}");
    let err = fails(&["solve", "--tt-mb", "0"]);
    assert!(err.contains("--tt-mb 0"), "{err}");
    // A bad value is clap's usage error (exit 2), naming the option.
    let out = halatafl(&["solve", "--sum", "heavy"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'--sum <SUM>'") && err.contains("expected `standard` or `weak`"),
        "{err}"
    );
}

/// Sixteen plies before the end of a game the geese won by filling the
/// pen (game 4 of `data/suites/two-foxes-games.csv`).
const GEESE_FILL_THE_PEN: &str = "GGG/GGG/GG.FGGG/.G...GG/...F..G/.../... f 0";

#[test]
fn solve_restricted_geese_search_settings_keep_the_value() {
    let settings: [&[&str]; 7] = [
        &[],
        &["--forward-share", "0"],
        &["--forward-share", "100", "--forward-sideways", "2"],
        &["--forward-share", "100", "--expect", "geese"],
        &["--order", "eval", "--forward-width", "2"],
        &["--march", "1000"],
        &[
            "--march",
            "1000",
            "--march-sideways",
            "0",
            "--forward-share",
            "0",
        ],
    ];
    for extra in settings {
        let mut args = vec!["solve", "--fen", GEESE_FILL_THE_PEN, "--tt-mb", "64"];
        args.extend_from_slice(extra);
        let out = ok(&args);
        assert!(out.contains("value: geese win"), "{extra:?}: {out}");
        // The march proves leaves of this pen-filling position.
        if extra.contains(&"--march") {
            let marched: u64 = out
                .lines()
                .find_map(|l| l.strip_prefix("marched: "))
                .and_then(|l| l.split_whitespace().next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no marched line: {out}"));
            assert!(marched > 0, "{extra:?}: {out}");
        }
    }
    // A width with no order to rank by is refused, naming both flags.
    for order in [&[][..], &["--order", "none"][..]] {
        let mut all = vec!["solve", "--fen", GEESE_FILL_THE_PEN, "--forward-width", "2"];
        all.extend_from_slice(order);
        let err = fails(&all);
        assert!(
            err.contains("--forward-width 2") && err.contains("--order is none"),
            "{err}"
        );
    }
    // Out of range: clap's usage error, naming the option.
    for (args, flag) in [
        (&["--forward-share", "101"][..], "--forward-share"),
        (&["--forward-sideways", "64"][..], "--forward-sideways"),
        (&["--march-sideways", "17"][..], "--march-sideways"),
        (&["--march", "many"][..], "--march"),
    ] {
        let mut all = vec!["solve", "--fen", GEESE_FILL_THE_PEN];
        all.extend_from_slice(args);
        let out = halatafl(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

/// Two alpha-beta games (depth 2 against 3, each side once) written to
/// the games CSV `csv`: both end in a win, so their last plies are proven
/// within small budgets.
fn two_decided_games(csv: &str) {
    ok(&[
        "match",
        "alphabeta:depth=2",
        "alphabeta:depth=3",
        "--games",
        "2",
        "--threads",
        "1",
        "--csv",
        csv,
    ]);
}

#[test]
fn suite_from_games_then_accuracy() {
    let dir = scratch("suite");
    let games = dir.join("games.csv");
    let suite = dir.join("suite.csv");
    let g = games.to_str().unwrap();
    let s = suite.to_str().unwrap();
    two_decided_games(g);
    let out = ok(&[
        "solve",
        "--from-games",
        g,
        "--out",
        s,
        "--max-positions",
        "4",
        "--budget-nodes",
        "20000",
        "--tt-mb",
        "4",
    ]);
    assert!(out.contains("4 positions solved"), "{out}");
    let rows = read_csv(&suite);
    assert_eq!(rows.len(), 4);
    for row in &rows {
        assert!(["foxes", "geese", "draw"].contains(&row["value"].as_str()));
        assert!(!row["keeping_moves"].is_empty());
    }
    for row in rows.iter().take(2) {
        // The row's value is what `solve` says of its position.
        let solved = ok(&["solve", "--fen", &row["fen"], "--tt-mb", "4"]);
        let word = match row["value"].as_str() {
            "foxes" => "value: foxes win",
            "geese" => "value: geese win",
            _ => "value: draw",
        };
        assert!(solved.contains(word), "{}: {solved}", row["fen"]);
    }
    let out = ok(&[
        "accuracy",
        "alphabeta:depth=1",
        "--suite",
        s,
        "--threads",
        "2",
    ]);
    assert!(out.contains("(4 positions)"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("| all | 4 |")), "{out}");
    // --json: the same table as one object, the group `all` last.
    let json = ok(&[
        "accuracy",
        "alphabeta:depth=1",
        "--suite",
        s,
        "--threads",
        "2",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    let groups = v["groups"].as_array().unwrap();
    let all = groups.last().unwrap();
    assert_eq!(all["group"], "all");
    assert_eq!(all["positions"], 4);
    let errors = all["errors"].as_u64().unwrap();
    let rate = all["error_rate"]["rate"].as_f64().unwrap();
    assert_eq!(rate, errors as f64 / 4.0);
    let line = out.lines().find(|l| l.starts_with("| all | 4 |")).unwrap();
    assert!(
        line.contains(&format!("| {:.1}% [", 100.0 * rate)),
        "{line} against {json}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `python3 scripts/value-drops.py --games G --suite S`.
fn value_drops(games: &str, suite: &str) -> std::process::Output {
    std::process::Command::new("python3")
        .arg(workspace().join("scripts/value-drops.py"))
        .args(["--games", games, "--suite", suite])
        .output()
        .expect("python3 runs")
}

type Row = std::collections::BTreeMap<String, String>;

/// The move the game played at a suite row's position; `None` at a game's
/// last position.
fn played_at<'a>(games: &'a [Row], row: &Row) -> Option<&'a str> {
    let game = games.iter().find(|g| g["game"] == row["game"]).unwrap();
    let ply: usize = row["ply"].parse().unwrap();
    game["moves"].split_whitespace().nth(ply)
}

/// Whether a suite row's value is a draw or a win for the side to move
/// there: only such a value can be given away.
fn mover_does_not_lose(row: &Row) -> bool {
    let loses = match row["fen"].split(' ').nth(1) {
        Some("f") => "geese",
        _ => "foxes",
    };
    row["value"] != loses
}

/// Whether `mv` is among a suite row's keeping moves.
fn keeps(row: &Row, mv: &str) -> bool {
    row["keeping_moves"].split_whitespace().any(|k| k == mv)
}

/// The drops a suite shows in its games, counted here apart from the
/// script: positions with a move played, and those of them where the mover
/// did not lose and the move played is not among the keeping ones.
fn drops_in(games: &[Row], suite: &[Row]) -> (usize, usize) {
    let (mut counted, mut dropped) = (0, 0);
    for row in suite {
        let Some(played) = played_at(games, row) else {
            continue;
        };
        counted += 1;
        if mover_does_not_lose(row) && !keeps(row, played) {
            dropped += 1;
        }
    }
    (counted, dropped)
}

/// scripts/value-drops.py on a real match and the suite solved from it:
/// its counts match the suite's rows, a keeping-moves list that leaves out
/// the move played is reported as a value given away, and a suite of
/// another match is refused by name.
#[test]
fn value_drops_script_finds_the_moves_that_gave_proven_values_away() {
    let dir = scratch("value-drops");
    let games = dir.join("games.csv");
    let suite = dir.join("suite.csv");
    let (g, s) = (games.to_str().unwrap(), suite.to_str().unwrap());
    two_decided_games(g);
    ok(&[
        "solve",
        "--from-games",
        g,
        "--out",
        s,
        "--every",
        "1",
        "--max-positions",
        "12",
        "--budget-nodes",
        "20000",
        "--tt-mb",
        "4",
    ]);
    let game_rows = read_csv(&games);
    let mut suite_rows = read_csv(&suite);
    let report = |suite: &str| {
        let out = value_drops(g, suite);
        assert!(
            out.status.success(),
            "value-drops failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let given_away = |out: &str| -> usize {
        out.lines()
            .filter(|l| l.contains(" values given away"))
            .map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words[words.len() - 4].parse::<usize>().unwrap()
            })
            .sum()
    };
    let (counted, dropped) = drops_in(&game_rows, &suite_rows);
    let out = report(s);
    assert!(
        out.contains(&format!("games: 2; suite positions counted: {counted}\n")),
        "{out}"
    );
    assert_eq!(given_away(&out), dropped, "{out}");

    // A row whose mover does not lose and played a keeping move, with that
    // move taken out of its keeping moves: one more value given away, there.
    let row = suite_rows
        .iter_mut()
        .find(|r| mover_does_not_lose(r) && played_at(&game_rows, r).is_some_and(|m| keeps(r, m)))
        .expect("the suite has a position whose mover does not lose and keeps its value");
    let ply: usize = row["ply"].parse().unwrap();
    let played = played_at(&game_rows, row).unwrap().to_string();
    row.insert("keeping_moves".into(), "not-a-move".into());
    let (game_no, value) = (row["game"].clone(), row["value"].clone());
    let edited = dir.join("edited.csv");
    let mut writer = csv::Writer::from_path(&edited).unwrap();
    writer
        .write_record(suite_rows[0].keys().collect::<Vec<_>>())
        .unwrap();
    for r in &suite_rows {
        writer.write_record(r.values().collect::<Vec<_>>()).unwrap();
    }
    writer.flush().unwrap();
    let (_, dropped_now) = drops_in(&game_rows, &suite_rows);
    let out = report(edited.to_str().unwrap());
    assert_eq!(dropped_now, dropped + 1);
    assert_eq!(given_away(&out), dropped_now, "{out}");
    assert!(
        out.contains(&format!(
            "game {game_no}, ply {ply}: {value} given away by {played}"
        )),
        "{out}"
    );

    // A suite row of a game the games CSV does not have.
    let other = dir.join("other.csv");
    std::fs::write(&other, "game,moves,foxes,geese,result\n").unwrap();
    let out = value_drops(other.to_str().unwrap(), s);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("is not in") && err.contains("other.csv"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn accuracy_names_the_file_and_line_of_a_bad_suite_row() {
    let dir = scratch("badsuite");
    let path = dir.join("suite.csv");
    let p = path.to_str().unwrap();
    let header = "fen,variant,value,keeping_moves,legal_moves,nodes,geese,ply,game\n";
    let good = format!("{ONE_CAPTURE_WINS},two-foxes,foxes,c6xe4,1,1,9,0,1\n");
    let cases = [
        (
            format!("{good}GG/ f 0,two-foxes,foxes,c6xe4,1,1,9,0,1\n"),
            "line 3: fen",
        ),
        (
            format!("{good}{ONE_CAPTURE_WINS},two-foxes,win,c6xe4,1,1,9,0,1\n"),
            "line 3: value `win`",
        ),
        (
            format!("{ONE_CAPTURE_WINS},two-foxes,foxes,c7-c6,1,1,9,0,1\n"),
            "line 2: keeping move `c7-c6`",
        ),
        (
            format!("{ONE_CAPTURE_WINS},two-foxes,foxes,c6xe4,one,1,9,0,1\n"),
            "line 2: column 5",
        ),
        (String::new(), "no positions"),
    ];
    for (body, expected) in cases {
        std::fs::write(&path, format!("{header}{body}")).unwrap();
        let err = fails(&["accuracy", "random", "--suite", p]);
        assert!(
            err.contains(p) && err.contains(expected),
            "{expected}: {err}"
        );
    }
    let err = fails(&[
        "accuracy",
        "random",
        "--suite",
        dir.join("missing.csv").to_str().unwrap(),
    ]);
    assert!(err.contains("missing.csv"), "{err}");
    std::fs::write(&path, format!("{header}{good}")).unwrap();
    let err = fails(&["accuracy", "nonsense", "--suite", p]);
    assert!(err.contains("nonsense"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Game 1 of data/suites/classic13-games.csv at ply 50: the fox wins.
const CLASSIC_FOX_WINS: &str = "GGG/..G/....G../F.....G/G.GG.../GGG/... f 0";

#[test]
fn solve_dag_proves_and_replays_a_forward_only_classic_position() {
    let classic = [
        "solve",
        "--variant",
        "classic",
        "--geese",
        "13",
        "--method",
        "dag",
    ];
    let mut args = classic.to_vec();
    args.extend([
        "--fen",
        CLASSIC_FOX_WINS,
        "--tt-mb",
        "64",
        "--replay-lines",
        "5",
    ]);
    let out = ok(&args);
    assert!(out.contains("value: foxes win"), "{out}");
    assert!(out.contains("best: "), "{out}");
    assert!(out.contains("replayed: 5 games"), "{out}");
    for key in ["nodes: ", "time: ", "table: "] {
        assert!(out.contains(key), "{key} missing: {out}");
    }
    let mut args = classic.to_vec();
    args.extend(["--budget-nodes", "50", "--tt-mb", "1"]);
    let out = ok(&args);
    assert!(
        out.contains("value: unknown (budget of 50 nodes spent)"),
        "{out}"
    );
}

#[test]
fn solve_dag_refuses_games_with_draws() {
    let err = fails(&["solve", "--method", "dag"]);
    assert!(err.contains("without sideways steps"), "{err}");
    let err = fails(&[
        "solve",
        "--variant",
        "classic",
        "--sideways",
        "--method",
        "dag",
    ]);
    assert!(err.contains("use the df-pn method"), "{err}");
    let err = fails(&[
        "solve",
        "--variant",
        "classic",
        "--method",
        "dag",
        "--fen",
        ".../.../......./...F.../GGGGGGG/GGG/GGG f 99",
    ]);
    assert!(err.contains("quiet counter 99"), "{err}");
}

#[test]
fn solve_retro_builds_tables_checks_them_and_agrees_with_the_dag_search() {
    // Seven geese: the tables of 4 to 7 geese take a few MiB and seconds.
    let fen = "..F/.../......./..GGG../..GGG../.../.G. f 0";
    let out = ok(&[
        "solve",
        "--variant",
        "classic",
        "--method",
        "retro",
        "--fen",
        fen,
        "--threads",
        "2",
        "--replay-lines",
        "10",
        "--compare-dag",
        "20",
    ]);
    assert!(out.contains("tables: placements of 4 to 7 geese"), "{out}");
    assert!(
        out.contains("layer  7 geese:       4272048 placements"),
        "{out}"
    );
    assert!(out.contains("value: foxes win"), "{out}");
    assert!(out.contains("best: "), "{out}");
    assert!(out.contains("checked: 10 games over the rules"), "{out}");
    assert!(out.contains("compared with the DAG search: "), "{out}");
    assert!(out.contains("none differ"), "{out}");
    // The fox shut in on c7 with the geese to move: every goose move keeps
    // it shut in, so the geese win; the tables say so without a move.
    let trapped = ok(&[
        "solve",
        "--variant",
        "classic",
        "--method",
        "retro",
        "--fen",
        "FGG/GG./..G.G../......./......./.../... f 0",
        "--replay-lines",
        "1",
    ]);
    assert!(trapped.contains("value: geese win"), "{trapped}");
    assert!(
        trapped.contains("best: none (every move loses)"),
        "{trapped}"
    );
}

/// `solve --variant classic --sideways --method retro --fen FEN`, then `extra`.
fn sideways_retro<'a>(fen: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "solve",
        "--variant",
        "classic",
        "--sideways",
        "--method",
        "retro",
        "--fen",
        fen,
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn solve_retro_with_sideways_steps_gives_draws_and_checks_lines() {
    // Seven geese, sideways steps: the four-plane tables of 4 to 7 geese
    // (71 MiB, seconds). The fox roams free of six geese that can shuffle
    // for ever: a draw.
    let fen = "..F/.../......./..GGG../..GGG../.../.G. f 0";
    let out = ok(&sideways_retro(
        fen,
        &["--threads", "2", "--replay-lines", "5"],
    ));
    assert!(
        out.contains("tables: placements of 4 to 7 geese, sideways steps"),
        "{out}"
    );
    assert!(out.contains("; every layer kept: "), "{out}");
    assert!(
        out.contains("layer  7 geese:       4272048 placements; fox to move: foxes win"),
        "{out}"
    );
    assert!(out.contains("value: draw"), "{out}");
    assert!(out.contains("best: "), "{out}");
    assert!(out.contains("checked: 5 games over the rules"), "{out}");
    // Shut in on c7 with every goose move keeping it so: a geese win, the
    // same with sideways steps as without.
    let trapped = ok(&sideways_retro(
        "FGG/GG./..G.G../......./......./.../... f 0",
        &["--replay-lines", "1"],
    ));
    assert!(trapped.contains("value: geese win"), "{trapped}");
    // Under a cap that fits only the top layer's build, the same value.
    let top = ok(&sideways_retro(
        fen,
        &["--tt-mb", "64", "--replay-lines", "2"],
    ));
    assert!(
        top.contains("only what the next layer needs kept (every layer would need"),
        "{top}"
    );
    assert!(top.contains("value: draw"), "{top}");
    assert!(top.contains("checked: 2 games over the rules"), "{top}");
    // A counter beyond what the level's tables answer is refused.
    let err = fails(&sideways_retro(
        "..F/.../......./..GGG../..GGG../.../.G. f 99",
        &[],
    ));
    assert!(err.contains("quiet counter 99"), "{err}");
}

#[test]
fn solve_retro_with_sideways_steps_saves_layers_and_resumes_above_them() {
    let dir = scratch("layers-dir");
    let layers = dir.join("layers");
    let layers_arg = layers.to_str().unwrap();
    let saving = [
        "--threads",
        "2",
        "--replay-lines",
        "2",
        "--layers-dir",
        layers_arg,
    ];
    // Six geese: layers 4 and 5 are saved, not the top.
    let six = ok(&sideways_retro(
        "..F/.../......./..GGG../..GGG../.../... f 0",
        &saving,
    ));
    assert!(
        six.contains("no saved layer below 6 geese in") && six.contains("building from 4 geese"),
        "{six}"
    );
    assert!(
        six.contains("layer  5 geese:        237336 placements;"),
        "{six}"
    );
    assert!(six.contains("; chain planes saved in "), "{six}");
    let mut files: Vec<String> = std::fs::read_dir(&layers)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "chains-classic-sideways-4.bin",
            "chains-classic-sideways-5.bin"
        ]
    );
    // Seven geese go on above layer 5, with the same value as a whole build.
    let fen = "..F/.../......./..GGG../..GGG../.../.G. f 0";
    let seven = ok(&sideways_retro(fen, &saving));
    assert!(
        seven.contains("resuming above layer 5 from ")
            && seven.contains("chains-classic-sideways-5.bin"),
        "{seven}"
    );
    assert!(
        seven.contains("layer  5 geese:        237336 placements;") && seven.contains(" [saved]"),
        "{seven}"
    );
    assert!(
        seven.contains("layer  7 geese:       4272048 placements;"),
        "{seven}"
    );
    assert!(seven.contains("value: draw"), "{seven}");
    // A damaged layer file stops the build with its name.
    let saved_six = layers.join("chains-classic-sideways-6.bin");
    let bytes = std::fs::read(&saved_six).unwrap();
    std::fs::write(&saved_six, &bytes[..bytes.len() - 9]).unwrap();
    let err = fails(&sideways_retro(fen, &["--layers-dir", layers_arg]));
    assert!(
        err.contains("saved chain planes") && err.contains("chains-classic-sideways-6.bin"),
        "{err}"
    );
    // Only the sideways retrograde build has layers to save.
    let err = fails(&["solve", "--layers-dir", layers_arg]);
    assert!(
        err.contains("--layers-dir saves the layers of --method retro"),
        "{err}"
    );
    let err = fails(&[
        "solve",
        "--variant",
        "classic",
        "--method",
        "retro",
        "--layers-dir",
        layers_arg,
    ]);
    assert!(
        err.contains("--layers-dir saves the layers of a build with sideways steps"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn solve_retro_refuses_two_foxes_and_tables_over_the_memory_cap() {
    let err = fails(&["solve", "--method", "retro"]);
    assert!(
        err.contains("solves classic Fox and Geese (with or without sideways steps)"),
        "{err}"
    );
    let err = fails(&[
        "solve",
        "--variant",
        "classic",
        "--sideways",
        "--method",
        "retro",
        "--compare-dag",
        "5",
    ]);
    assert!(
        err.contains("--compare-dag needs the game without"),
        "{err}"
    );
    let err = fails(&[
        "solve",
        "--variant",
        "classic",
        "--sideways",
        "--method",
        "retro",
        "--tt-mb",
        "100",
    ]);
    assert!(
        err.contains("the tables up to 13 geese need 7614 MiB, more than the 100 MiB allowed"),
        "{err}"
    );
    let err = fails(&[
        "solve",
        "--variant",
        "classic",
        "--method",
        "retro",
        "--tt-mb",
        "100",
    ]);
    assert!(
        err.contains("the tables up to 13 geese need 3186 MiB, more than the 100 MiB allowed"),
        "{err}"
    );
    let err = fails(&[
        "solve",
        "--variant",
        "classic",
        "--method",
        "retro",
        "--threads",
        "0",
        "--tt-mb",
        "100",
    ]);
    assert!(err.contains("--threads 0"), "{err}");
}

/// The distance of a `--deepest` game line's deepest proven position.
fn deepest_of(line: &str) -> usize {
    line.split("deepest proven ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn deepest_proofs_walk_each_game_back_from_its_end() {
    let dir = scratch("deepest");
    let games = dir.join("games.csv");
    let g = games.to_str().unwrap();
    two_decided_games(g);
    // `solve --deepest` on the two games, in steps of two plies.
    let walk = |patience: &str, budget: &str| {
        ok(&[
            "solve",
            "--from-games",
            g,
            "--deepest",
            "--every",
            "2",
            "--patience",
            patience,
            "--budget-nodes",
            budget,
            "--tt-mb",
            "4",
        ])
    };
    let out = walk("2", "20000");
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("game ")).collect();
    assert_eq!(lines.len(), 2, "{out}");
    let rows = read_csv(&games);
    for (line, row) in lines.iter().zip(&rows) {
        // The deepest proven position, solved alone, has the value printed.
        let deepest = deepest_of(line);
        assert!(deepest >= 2 && deepest.is_multiple_of(2), "{line}");
        let moves: Vec<&str> = row["moves"].split_whitespace().collect();
        let k = moves.len() - deepest;
        let replayed = ok(&["replay", &moves.join(" ")]);
        let lines: Vec<&str> = replayed.lines().collect();
        let fen = match k {
            0 => lines[0].strip_prefix("start: ").unwrap().to_string(),
            k => lines[k]
                .split_whitespace()
                .skip(2)
                .collect::<Vec<_>>()
                .join(" "),
        };
        let solved = ok(&[
            "solve",
            "--fen",
            &fen,
            "--budget-nodes",
            "2000000",
            "--tt-mb",
            "16",
        ]);
        let value = line.rsplit_once('(').unwrap().1.split(')').next().unwrap();
        let word = match value {
            "foxes" => "value: foxes win",
            "geese" => "value: geese win",
            _ => "value: draw",
        };
        assert!(solved.contains(word), "{line}: {solved}");
    }
    assert!(out.contains("deepest proven per game: ["), "{out}");
    // Where a walk stopped, the first position not proven: its distance
    // (one step beyond the deepest proven) and each search's root numbers.
    let small = walk("1", "300");
    let misses: Vec<&str> = small
        .lines()
        .filter(|l| l.starts_with("  not proven "))
        .collect();
    assert!(!misses.is_empty(), "{small}");
    for (game, miss) in small.lines().zip(small.lines().skip(1)) {
        if !miss.starts_with("  not proven ") {
            continue;
        }
        let deepest = deepest_of(game);
        assert!(
            miss.starts_with(&format!(
                "  not proven {} plies before the end: ",
                deepest + 2
            )),
            "{game}\n{miss}"
        );
        assert!(miss.contains("win? unknown (root pn "), "{miss}");
    }
    // A suite needs --out; --deepest writes none.
    let err = fails(&["solve", "--from-games", g]);
    assert!(err.contains("--out SUITE"), "{err}");
}

#[test]
fn critical_suites_keep_only_positions_where_a_move_gives_the_value_away() {
    let dir = scratch("critical");
    let suite = dir.join("suite.csv");
    // The committed games of the Two Foxes suite (alpha-beta against itself).
    let games = workspace().join("data/suites/two-foxes-games.csv");
    let (g, s) = (games.to_str().unwrap(), suite.to_str().unwrap());
    ok(&[
        "solve",
        "--from-games",
        g,
        "--out",
        s,
        "--critical-only",
        "--every",
        "1",
        "--max-positions",
        "3",
        "--budget-nodes",
        "20000",
        "--tt-mb",
        "16",
    ]);
    let rows = read_csv(&suite);
    assert_eq!(rows.len(), 3);
    for row in &rows {
        let keeping = row["keeping_moves"].split_whitespace().count();
        let legal: usize = row["legal_moves"].parse().unwrap();
        assert!(keeping >= 1 && keeping < legal, "{row:?}");
        // A move outside the keeping ones gives the value away: solved on
        // its own, the position it leads to has another value.
        let moves = ok(&["moves", "--fen", &row["fen"]]);
        let kept: Vec<&str> = row["keeping_moves"].split_whitespace().collect();
        let lost = moves.lines().find(|m| !kept.contains(m)).unwrap();
        let after = ok(&["replay", "--fen", &row["fen"], lost]);
        let fen = after
            .lines()
            .nth(1)
            .unwrap()
            .split_whitespace()
            .skip(2)
            .collect::<Vec<_>>()
            .join(" ");
        let solved = ok(&[
            "solve",
            "--fen",
            &fen,
            "--budget-nodes",
            "2000000",
            "--tt-mb",
            "16",
        ]);
        let same = format!("value: {} win", row["value"]);
        assert!(
            !solved.contains(&same),
            "{lost} from {}: {solved}",
            row["fen"]
        );
    }
}

#[test]
fn exclude_holds_a_new_suite_out_of_earlier_ones() {
    let dir = scratch("exclude");
    let games = workspace().join("data/suites/two-foxes-games.csv");
    let g = games.to_str().unwrap();
    let build = |out: &std::path::Path, exclude: &[&std::path::Path]| {
        let mut args = vec![
            "solve".to_string(),
            "--from-games".into(),
            g.into(),
            "--out".into(),
            out.to_str().unwrap().into(),
            "--every".into(),
            "1".into(),
            "--max-positions".into(),
            "6".into(),
            "--budget-nodes".into(),
            "20000".into(),
            "--tt-mb".into(),
            "16".into(),
        ];
        for e in exclude {
            args.push("--exclude".into());
            args.push(e.to_str().unwrap().into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = halatafl(&args);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        String::from_utf8(run.stderr).unwrap()
    };
    let (first, second) = (dir.join("first.csv"), dir.join("second.csv"));
    let log = build(&first, &[]);
    assert!(
        log.contains("(0 left out: in the --exclude suites)"),
        "{log}"
    );
    let log = build(&second, &[&first]);
    // Latest plies first: without the exclusion the second build would
    // take the first's positions again.
    assert!(
        log.contains("(6 left out: in the --exclude suites)"),
        "{log}"
    );
    let fens = |path: &std::path::Path| -> Vec<String> {
        read_csv(path)
            .into_iter()
            .map(|r| r["fen"].clone())
            .collect()
    };
    let (a, b) = (fens(&first), fens(&second));
    assert_eq!((a.len(), b.len()), (6, 6));
    assert!(b.iter().all(|fen| !a.contains(fen)), "{a:?} {b:?}");
    // `solve --from-games GAMES --out OUT --exclude SUITE` with `extra`,
    // which must fail: its error message.
    let refused = |games: &std::path::Path, exclude: &std::path::Path, extra: &[&str]| {
        let out = dir.join("refused.csv");
        let mut args = vec![
            "solve",
            "--from-games",
            games.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--exclude",
            exclude.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        fails(&args)
    };
    // A suite of another game is refused, by the classic builder before
    // its tables are built and by the df-pn builder, and an unreadable one
    // names its flag.
    let classic_games = workspace().join("data/suites/classic13-games.csv");
    let err = refused(&classic_games, &first, &["--method", "retro"]);
    assert!(
        err.contains("an --exclude suite holds two-foxes") && err.contains("excludes nothing"),
        "{err}"
    );
    let err = refused(&games, &workspace().join("data/suites/classic13.csv"), &[]);
    assert!(
        err.contains("an --exclude suite holds classic") && err.contains("but no game is"),
        "{err}"
    );
    let err = refused(&games, &dir.join("missing.csv"), &[]);
    assert!(
        err.contains("reading --exclude") && err.contains("missing.csv"),
        "{err}"
    );
}

#[test]
fn move_orders_prove_the_same_values_and_bad_orders_are_refused() {
    let dir = scratch("order");
    let games = dir.join("games.csv");
    let g = games.to_str().unwrap();
    two_decided_games(g);
    let rows = read_csv(&games);
    let moves: Vec<&str> = rows[0]["moves"].split_whitespace().collect();
    let replayed = ok(&["replay", &moves.join(" ")]);
    let lines: Vec<&str> = replayed.lines().collect();
    let value = |out: &str| {
        out.lines()
            .find(|l| l.starts_with("value: "))
            .unwrap()
            .to_string()
    };
    for back in [6, 12] {
        let fen = lines[moves.len() - back]
            .split_whitespace()
            .skip(2)
            .collect::<Vec<_>>()
            .join(" ");
        let solve = |order: &str| {
            ok(&[
                "solve",
                "--fen",
                &fen,
                "--budget-nodes",
                "2000000",
                "--tt-mb",
                "16",
                "--order",
                order,
            ])
        };
        let plain = solve("none");
        assert!(!value(&plain).contains("unknown"), "{plain}");
        for order in ["eval", "best"] {
            let out = solve(order);
            assert_eq!(
                value(&out),
                value(&plain),
                "--order {order} at {fen}: {out}"
            );
            assert!(out.contains("ranked: "), "{out}");
        }
    }
    let out = ok(&[
        "solve",
        "--from-games",
        g,
        "--deepest",
        "--budget-nodes",
        "20000",
        "--tt-mb",
        "4",
        "--order",
        "eval",
    ]);
    assert!(out.contains("order eval base 2, "), "{out}");
    assert!(!out.contains(" 0 positions ranked"), "{out}");
    // A malformed order is a usage error (exit 2), named by clap.
    let usage = |args: &[&str]| {
        let out = halatafl(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let err = usage(&["solve", "--order", "policy"]);
    assert!(err.contains("unknown order `policy`"), "{err}");
    let err = usage(&["solve", "--order", "best:sims=100"]);
    assert!(err.contains("`sims` is not an option"), "{err}");
    let err = fails(&["solve", "--order", "net:ckpt=/nonexistent.safetensors"]);
    assert!(err.contains("/nonexistent.safetensors"), "{err}");
    let err = fails(&[
        "solve",
        "--variant",
        "classic",
        "--method",
        "dag",
        "--order",
        "eval",
    ]);
    assert!(err.contains("--order ranks moves for df-pn"), "{err}");
}

/// `accuracy --mistakes`: one row per position where the move lost value,
/// as many as the table counts, each naming a move outside the keeping
/// moves with the worse value it leads to, in the suite's line order; a
/// path that cannot be written is refused before any position is judged.
#[test]
fn accuracy_lists_the_mistakes_it_counts() {
    let dir = scratch("mistakes");
    let suite = workspace().join("data/suites/classic13.csv");
    let s = suite.to_str().unwrap();
    let mistakes = dir.join("mistakes.csv");
    let m = mistakes.to_str().unwrap();
    let json = ok(&[
        "accuracy",
        "random",
        "--suite",
        s,
        "--json",
        "--threads",
        "2",
        "--mistakes",
        m,
    ]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    let errors = v["groups"].as_array().unwrap().last().unwrap()["errors"]
        .as_u64()
        .unwrap();
    let rows = read_csv(&mistakes);
    assert!(errors > 100, "random errs often: {errors}");
    let (mean, median) = (
        v["ms_per_move"]["mean"].as_f64().unwrap(),
        v["ms_per_move"]["median"].as_f64().unwrap(),
    );
    assert!(
        mean > 0.0 && median > 0.0 && median < 50.0,
        "{mean} {median}"
    );
    assert_eq!(rows.len() as u64, errors);
    let suite_rows = read_csv(&suite);
    let mut last = 0;
    for row in &rows {
        let line: usize = row["line"].parse().unwrap();
        assert!(line > last, "rows in line order");
        last = line;
        let source = &suite_rows[line - 2];
        assert_eq!(row["fen"], source["fen"]);
        assert_eq!(row["stage"], source["stage"]);
        assert_eq!(row["value"], format!("{} win", source["value"]));
        assert!(!row["keeping_moves"].split(' ').any(|k| k == row["played"]));
        // The played move's value is the suite's, and not the position's.
        let played = format!(
            "{}={}",
            row["played"],
            row["played_value"].trim_end_matches(" win")
        );
        assert!(
            source["move_values"].split(' ').any(|mv| mv == played),
            "{row:?}"
        );
        assert_ne!(row["played_value"], row["value"]);
        assert!(row["agent_value"].is_empty(), "random reports no value");
    }
    let err = fails(&[
        "accuracy",
        "random",
        "--suite",
        s,
        "--mistakes",
        dir.to_str().unwrap(),
    ]);
    assert!(err.contains("--mistakes"), "{err}");
    let copy = dir.join("suite.csv");
    std::fs::copy(&suite, &copy).unwrap();
    let c = copy.to_str().unwrap();
    let err = fails(&["accuracy", "random", "--suite", c, "--mistakes", c]);
    assert!(err.contains("is the suite itself"), "{err}");
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&suite).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// scripts/accuracy-groups.py on two agents' `accuracy --json` outputs: one
/// row with the ten groups, and a tally that agrees with the files.
#[test]
fn accuracy_groups_script_compares_two_agents_group_by_group() {
    let dir = scratch("accuracy-groups");
    let suite = workspace().join("data/suites/classic13.csv");
    let mut paths = Vec::new();
    for agent in ["alphabeta:depth=2", "random"] {
        let json = ok(&[
            "accuracy",
            agent,
            "--suite",
            suite.to_str().unwrap(),
            "--threads",
            "2",
            "--json",
        ]);
        let path = dir.join(format!("{}.json", agent.replace([':', '='], "-")));
        std::fs::write(&path, json).unwrap();
        paths.push(path);
    }
    let script = |files: &[&std::path::Path]| {
        std::process::Command::new("python3")
            .arg(workspace().join("scripts/accuracy-groups.py"))
            .args(files)
            .output()
            .expect("python3 runs")
    };
    let out = script(&[&paths[0], &paths[1]]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].contains("| stage, difficulty: middle, hard |"),
        "{text}"
    );
    // The tally, counted here from the files.
    let groups = |path: &std::path::Path| -> std::collections::BTreeMap<String, (f64, u64)> {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        v["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["group"].as_str().unwrap().to_string(),
                    (
                        g["error_rate"]["rate"].as_f64().unwrap(),
                        g["errors"].as_u64().unwrap(),
                    ),
                )
            })
            .collect()
    };
    let (ab, random) = (groups(&paths[0]), groups(&paths[1]));
    // The header's groups, between the two agents' columns and the tally;
    // each must be one the accuracy output has.
    let header: Vec<&str> = lines[0].split(" | ").collect();
    let ten = &header[2..header.len() - 1];
    assert_eq!(ten.len(), 10, "{}", lines[0]);
    assert!(ten.iter().all(|g| ab.contains_key(*g)), "{}", lines[0]);
    let lower = ten
        .iter()
        .filter(|g| ab[**g].1 + random[**g].1 > 0 && ab[**g].0 < random[**g].0)
        .count();
    assert!(
        lower >= 8,
        "depth 2 errs less than random nearly everywhere"
    );
    assert!(
        lines[2].starts_with("| alphabeta:depth=2 | random | "),
        "{}",
        lines[2]
    );
    assert!(
        lines[2].contains(&format!("| {lower} of 10")),
        "{} against {lower}",
        lines[2]
    );
    let all = format!(
        "| {:.1} / {:.1} |",
        100.0 * ab["all"].0,
        100.0 * random["all"].0
    );
    assert!(lines[2].contains(&all), "{} against {all}", lines[2]);
    // Bad input: an odd number of files, and a file that is not the JSON.
    let odd = script(&[&paths[0]]);
    assert!(!odd.status.success());
    assert!(String::from_utf8_lossy(&odd.stderr).contains("give them in pairs"));
    let not_json = script(&[&paths[0], &suite]);
    assert!(!not_json.status.success());
    let why = String::from_utf8_lossy(&not_json.stderr);
    assert!(why.contains("classic13.csv: not JSON"), "{why}");
    let _ = std::fs::remove_dir_all(&dir);
}
