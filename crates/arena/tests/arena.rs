//! The arena end to end: a small match with openings on two threads, its CSV,
//! reproducibility, the summary's bookkeeping, appending, and a tournament.

use halatafl_agent::{Agent, AgentSpec, RandomAgent, SpecError};
use halatafl_alphabeta::AlphaBeta;
use halatafl_arena::{
    append_csv_atomic, read_game_rows, run_match, run_tournament, write_csv_atomic, GameRow,
    MatchConfig,
};
use halatafl_rules::{Game, Variant};
use std::path::PathBuf;

fn factory(spec: &str, seed: u64) -> Result<Box<dyn Agent>, SpecError> {
    let parsed = AgentSpec::parse(spec, "random | alphabeta:depth=D")?;
    match parsed.kind.as_str() {
        "random" => Ok(Box::new(RandomAgent::new(seed))),
        "alphabeta" => Ok(Box::new(AlphaBeta::from_spec(&parsed, seed)?)),
        _ => Err(parsed.unknown_kind("random | alphabeta:depth=D")),
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("halatafl-arena-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn config() -> MatchConfig {
    MatchConfig {
        games: 8,
        seed: 42,
        openings: 4,
        threads: Some(2),
        ..MatchConfig::default()
    }
}

#[test]
fn match_csv_and_summary() {
    let (a, b) = ("alphabeta:depth=2,tt=1", "random");
    let (rows, summary) = run_match(a, b, &factory, &config(), &|_| {}).unwrap();
    assert_eq!(rows.len(), 8);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.game, i + 1);
        assert_eq!(row.opening, i / 2);
        let (foxes, geese) = if i % 2 == 0 { (a, b) } else { (b, a) };
        assert_eq!((row.foxes.as_str(), row.geese.as_str()), (foxes, geese));
        assert_eq!(row.opening_moves.split(' ').count(), 4);
        assert!(row.moves.starts_with(&row.opening_moves));
        // The moves replay to the recorded result.
        let mut game = Game::start_of(Variant::two_foxes());
        for m in row.moves.split(' ') {
            game.play_str(m).unwrap();
        }
        let outcome = game.outcome().unwrap();
        assert_eq!(outcome.result_word(), row.result);
        assert_eq!(outcome.reason.to_string(), row.reason);
        assert_eq!(game.ply(), row.plies);
        assert_eq!(row.variant, "two-foxes");
    }
    // Both games of a pair share the opening; different pairs differ.
    assert_eq!(rows[0].opening_moves, rows[1].opening_moves);
    assert_ne!(rows[0].opening_moves, rows[2].opening_moves);

    // The summary counts every game once per agent, from both sides.
    let [sa, sb] = &summary.agents;
    assert_eq!(sa.overall.games(), 8);
    assert_eq!(sa.foxes.games(), 4);
    assert_eq!(sa.overall.wins, sb.overall.losses);
    assert_eq!(sa.overall.draws, sb.overall.draws);
    let a_wins = rows
        .iter()
        .filter(|r| (r.result == "foxes" && r.foxes == a) || (r.result == "geese" && r.geese == a))
        .count() as u64;
    assert_eq!(sa.overall.wins, a_wins);
    assert!(sa.overall.score() > 0.5, "{summary}");
    let text = summary.to_string();
    assert!(text.contains("as foxes") && text.contains("Elo"));

    // Same seed: the same games, whatever the thread count.
    let one_thread = MatchConfig {
        threads: Some(1),
        ..config()
    };
    let (again, _) = run_match(a, b, &factory, &one_thread, &|_| {}).unwrap();
    let strip = |r: &GameRow| (r.moves.clone(), r.result.clone(), r.seed);
    assert_eq!(
        rows.iter().map(strip).collect::<Vec<_>>(),
        again.iter().map(strip).collect::<Vec<_>>()
    );

    // CSV: header columns, round trip, atomic append.
    let dir = temp_dir("csv");
    let path = dir.join("games.csv");
    write_csv_atomic(&path, &rows).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().next().unwrap(), GameRow::COLUMNS.join(","));
    assert_eq!(read_game_rows(&path).unwrap(), rows);
    append_csv_atomic(&path, &rows[..2]).unwrap();
    let back = read_game_rows(&path).unwrap();
    assert_eq!(back.len(), 10);
    assert_eq!(back[8], rows[0]);
    #[derive(serde::Serialize)]
    struct Other {
        x: u32,
    }
    assert!(append_csv_atomic(&path, &[Other { x: 1 }]).is_err());
    assert_eq!(read_game_rows(&path).unwrap().len(), 10);
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "temporary files left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_specs_fail_before_playing() {
    let err = run_match("random", "alphabeta:depht=3", &factory, &config(), &|_| {}).unwrap_err();
    assert!(err.to_string().contains("depht"), "{err}");
    let err = run_match("rnd", "random", &factory, &config(), &|_| {}).unwrap_err();
    assert!(err.to_string().contains("random | alphabeta"), "{err}");
}

#[test]
fn tournament_ratings() {
    let agents: Vec<String> = ["random", "alphabeta:depth=1,tt=1", "alphabeta:depth=3,tt=1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let cfg = MatchConfig {
        games: 6,
        openings: 2,
        ..config()
    };
    let (rows, ratings) = run_tournament(&agents, &factory, &cfg, &|_| {}).unwrap();
    assert_eq!(rows.len(), 18);
    assert!(rows.iter().enumerate().all(|(i, r)| r.game == i + 1));
    assert_eq!(ratings.len(), 3);
    assert!(ratings
        .iter()
        .all(|r| r.games == 12 && r.elo_low < r.elo && r.elo < r.elo_high));
    let total: f64 = ratings.iter().map(|r| r.points).sum();
    assert_eq!(total, 18.0);
    // Random is rated lowest.
    assert!(
        ratings[0].elo < ratings[1].elo.min(ratings[2].elo),
        "{ratings:?}"
    );
    assert!(run_tournament(&agents[..1], &factory, &cfg, &|_| {}).is_err());
}

#[test]
fn counts_beyond_their_range_are_refused_before_any_work() {
    use halatafl_arena::{ArenaError, MAX_GAMES, MAX_OPENING_PLIES, MAX_THREADS};
    let cases = [
        (
            MatchConfig {
                games: 99_999_999_999_999,
                ..config()
            },
            "games 99999999999999 is out of range",
        ),
        (
            MatchConfig {
                games: 0,
                ..config()
            },
            "games 0 is out of range",
        ),
        (
            MatchConfig {
                openings: 300,
                ..config()
            },
            "openings 300 is out of range",
        ),
        (
            MatchConfig {
                threads: Some(MAX_THREADS + 1),
                ..config()
            },
            "threads 1025 is out of range",
        ),
    ];
    for (cfg, expected) in cases {
        let err = run_match("random", "random", &factory, &cfg, &|_| {}).unwrap_err();
        assert!(matches!(err, ArenaError::Config(_)), "{err}");
        assert!(err.to_string().contains(expected), "{err}");
    }
    assert!(MatchConfig {
        games: MAX_GAMES,
        openings: MAX_OPENING_PLIES,
        threads: Some(MAX_THREADS),
        ..config()
    }
    .validate()
    .is_ok());
}

#[test]
fn random_openings_are_bounded() {
    use halatafl_arena::{random_opening, MAX_OPENING_PLIES};
    for variant in [Variant::two_foxes(), Variant::classic(13, false).unwrap()] {
        for seed in 0..20 {
            let game = random_opening(variant, MAX_OPENING_PLIES, seed).unwrap();
            assert_eq!(game.ply(), MAX_OPENING_PLIES);
            assert!(game.outcome().is_none());
        }
        let err = random_opening(variant, MAX_OPENING_PLIES + 1, 1).unwrap_err();
        assert!(err.to_string().contains("at most 40"), "{err}");
    }
}

#[test]
fn one_thread_per_game_at_most() {
    use halatafl_arena::useful_threads;
    assert_eq!(useful_threads(10_000, 8), 8);
    assert_eq!(useful_threads(2, 8), 2);
    assert_eq!(useful_threads(3, 0), 1);
}

#[test]
fn csv_writes_follow_links_and_refuse_special_files() {
    use halatafl_arena::write_target;
    let dir = temp_dir("targets");
    let rows = run_match("random", "random", &factory, &config(), &|_| {})
        .unwrap()
        .0;
    // Through a link: the target gets the rows, the link stays a link.
    let target = dir.join("real.csv");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("link.csv");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("real.csv", &link).unwrap();
    write_csv_atomic(&link, &rows).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(read_game_rows(&target).unwrap(), rows);
    // A dangling link is written at its target.
    let dangling = dir.join("dangling.csv");
    let _ = std::fs::remove_file(&dangling);
    std::os::unix::fs::symlink("new.csv", &dangling).unwrap();
    append_csv_atomic(&dangling, &rows[..1]).unwrap();
    assert_eq!(read_game_rows(&dir.join("new.csv")).unwrap().len(), 1);
    // A directory, a device and a FIFO (also behind a link) are refused and
    // left as they were.
    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let to_null = dir.join("to-null.csv");
    let _ = std::fs::remove_file(&to_null);
    std::os::unix::fs::symlink("/dev/null", &to_null).unwrap();
    for (path, says) in [
        (dir.clone(), "is a directory"),
        (PathBuf::from("/dev/null"), "not a regular file"),
        (fifo.clone(), "not a regular file"),
        (
            to_null.clone(),
            "a link to /dev/null, which is not a regular file",
        ),
    ] {
        let err = write_csv_atomic(&path, &rows).unwrap_err().to_string();
        assert!(err.contains(says), "{}: {err}", path.display());
        assert!(write_target(&path).is_err());
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    let _ = std::fs::remove_dir_all(&dir);
}
