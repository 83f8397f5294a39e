//! Constructed positions (each checked with `halatafl moves --fen` and
//! `halatafl replay`): the search must find the forced wins at their exact
//! distance and must not walk into a loss in one.

use halatafl_agent::{Agent, AgentSpec, Budget, StopSignal};
use halatafl_alphabeta::{mate_distance, AlphaBeta, Limits, SearchConfig, Searcher};
use halatafl_rules::{Game, Position, Side, Variant};

fn game(fen: &str) -> Game {
    Game::new(Position::from_fen(fen, Variant::two_foxes()).unwrap())
}

fn search(game: &Game, depth: u32, seed: u64) -> halatafl_alphabeta::SearchResult {
    let config = SearchConfig {
        tt_megabytes: 4,
        ..SearchConfig::default()
    };
    Searcher::new(config, seed).search(
        game,
        &Limits {
            depth: Some(depth),
            movetime: None,
            stop: None,
        },
    )
}

#[test]
fn pen_fill_in_one() {
    // Eight pen points held, e5 empty; e4-e5 fills the pen.
    let g = game("GGG/GGG/G.GG..G/....G../......./.../F.F g 0");
    for seed in 0..4 {
        let r = search(&g, 4, seed);
        assert_eq!(r.best.to_string(), "e4-e5");
        assert_eq!(mate_distance(r.score), Some(1));
    }
}

#[test]
fn pen_fill_in_three() {
    // d5 and e6 empty; only d4-d5, e5-e6, e4-e5 (in some order) fills the
    // pen, and the foxes on c1/e1 are too far to interfere: a win on ply 5.
    let g = game("GGG/GG./G.G.G.G/...GG../......./.../F.F g 0");
    let r = search(&g, 6, 3);
    assert_eq!(mate_distance(r.score), Some(5), "score {}", r.score);
    assert!(
        ["d4-d5", "e5-e6"].contains(&r.best.to_string().as_str()),
        "{}",
        r.best
    );
    assert_eq!(r.pv.len(), 5, "pv {:?}", r.pv);
    // The principal variation really ends the game.
    let mut line = g.clone();
    for m in &r.pv {
        line.play(*m).unwrap();
    }
    assert_eq!(line.outcome().unwrap().winner, Some(Side::Geese));
}

#[test]
fn capture_chain_down_to_eight_geese() {
    // Ten geese. c3xc5xc7 takes two (eight left: the foxes win); the other
    // legal move, e3xg5, takes only one.
    let g = game(".../G../......./..G..G./..F.F.G/GGG/GGG f 0");
    for seed in 0..4 {
        let r = search(&g, 3, seed);
        assert_eq!(r.best.to_string(), "c3xc5xc7");
        assert_eq!(mate_distance(r.score), Some(1));
    }
}

#[test]
fn classic_fox_wins_below_four_geese() {
    // Classic, four geese: the fox takes d5 and wins (fewer than four).
    let v = Variant::classic(13, false).unwrap();
    let g =
        Game::new(Position::from_fen("..G/.../......./...F.../...G.../..G/..G f 0", v).unwrap());
    let r = Searcher::new(SearchConfig::default(), 0).search(
        &g,
        &Limits {
            depth: Some(3),
            movetime: None,
            stop: None,
        },
    );
    assert_eq!(r.best.to_string(), "d4xd2");
    assert_eq!(mate_distance(r.score), Some(1));
}

#[test]
fn avoids_a_loss_in_one() {
    // Nine geese; the fox on d3 threatens d3xd5. Only d4-d5, d4-c5 and
    // d4-e5 keep all nine (d4-e4 and d4-c4 open another jump).
    let g = game("GGG/G.G/G.....G/G..G.../...F.../.../F.. g 0");
    for seed in 0..6 {
        let r = search(&g, 4, seed);
        let mut after = g.clone();
        after.play(r.best).unwrap();
        for reply in after.position().legal_moves() {
            let mut p = *after.position();
            p.play_unchecked(reply);
            assert!(p.material_outcome().is_none(), "{} allows {reply}", r.best);
        }
        assert!(
            ["d4-d5", "d4-c5", "d4-e5"].contains(&r.best.to_string().as_str()),
            "{}",
            r.best
        );
        assert!(mate_distance(r.score).is_none_or(|d| d > 0));
    }
}

#[test]
fn deterministic_at_fixed_depth_and_seeded() {
    let start = Game::start_of(Variant::two_foxes());
    let a = search(&start, 5, 11);
    let b = search(&start, 5, 11);
    assert_eq!(
        (a.best, a.score, a.nodes, &a.pv),
        (b.best, b.score, b.nodes, &b.pv)
    );
    // Different seeds pick among equally good first moves: over a few seeds
    // at least two different ones come up (the start has mirror-image moves).
    let firsts: std::collections::BTreeSet<String> = (0..8)
        .map(|s| search(&start, 3, s).best.to_string())
        .collect();
    assert!(firsts.len() >= 2, "{firsts:?}");
}

#[test]
fn spec_and_budget() {
    let forms = "alphabeta:depth=D";
    let spec = AgentSpec::parse("alphabeta:depth=5,tt=2", forms).unwrap();
    let mut agent = AlphaBeta::from_spec(&spec, 1).unwrap();
    assert_eq!(agent.spec(), "alphabeta:depth=5,tt=2");
    let start = Game::start_of(Variant::two_foxes());
    let budget = Budget {
        depth: Some(2),
        ..Budget::default()
    };
    let d = agent.choose(&start, &budget);
    assert_eq!(d.info.depth, 2);
    assert!(d.info.nodes > 0 && !d.info.pv.is_empty() && d.info.pv[0] == d.mv);
    let v = d.value.unwrap();
    assert!((-1.0..=1.0).contains(&v));
    assert_eq!(agent.choose(&start, &Budget::default()).info.depth, 5);

    let timed = AgentSpec::parse("alphabeta:ms=30,tt=1", forms).unwrap();
    let mut agent = AlphaBeta::from_spec(&timed, 1).unwrap();
    let d = agent.choose(&start, &Budget::default());
    assert!(d.info.depth >= 1 && start.position().is_legal(d.mv));

    for bad in [
        "alphabeta:depth=0",
        "alphabeta:ms=0",
        "alphabeta:depth=x",
        "alphabeta:foo=1",
        "alphabeta:tt=0",
        "alphabeta:depth=101",
        "alphabeta:ms=86400001",
    ] {
        let spec = AgentSpec::parse(bad, forms).unwrap();
        assert!(AlphaBeta::from_spec(&spec, 0).is_err(), "{bad}");
    }
}

#[test]
fn stop_signal_ends_a_deep_search() {
    let start = Game::start_of(Variant::two_foxes());
    let spec = AgentSpec::parse("alphabeta:tt=1", "").unwrap();
    let mut agent = AlphaBeta::from_spec(&spec, 3).unwrap();
    // Raised before the search: depth 1 still completes, so there is a move.
    let stop = StopSignal::new();
    stop.stop();
    let budget = Budget {
        depth: Some(100),
        stop: Some(stop),
        ..Budget::default()
    };
    let d = agent.choose(&start, &budget);
    assert_eq!(d.info.depth, 1);
    assert!(start.position().is_legal(d.mv));
    // Raised from another thread while a 100-ply search runs: it answers soon.
    let stop = StopSignal::new();
    let budget = Budget {
        depth: Some(100),
        stop: Some(stop.clone()),
        ..Budget::default()
    };
    let started = std::time::Instant::now();
    let d = std::thread::scope(|scope| {
        let search = scope.spawn(|| agent.choose(&start, &budget));
        std::thread::sleep(std::time::Duration::from_millis(100));
        stop.stop();
        search.join().unwrap()
    });
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    assert!(d.info.depth >= 1 && d.info.depth < 100, "{:?}", d.info);
    assert!(start.position().is_legal(d.mv));
}
