//! The solver against plain minimax over the real rules (a [`Game`] with its
//! whole history: threefold repetition and the fifty-move rule exactly as
//! in a game), on seeded random small positions, and its proofs replayed
//! over the real rules.

use halatafl_rules::{Bitboard, Game, Point, Position, Side, Variant};
use halatafl_solver::{
    verify_win, DagConfig, DagError, DagSolver, March, SearchOutcome, Solver, SolverConfig, Value,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Negamax with alpha-beta over {-1, 0, 1}, no table: the value for the side
/// to move, or `None` past `cap` nodes.
fn minimax(game: &mut Game, mut alpha: i32, beta: i32, nodes: &mut u64, cap: u64) -> Option<i32> {
    *nodes += 1;
    if *nodes > cap {
        return None;
    }
    if let Some(outcome) = game.outcome() {
        return Some(outcome.value_for(game.position().side()));
    }
    let mut best = -1;
    for m in game.position().legal_moves() {
        game.play_unchecked(m);
        let v = minimax(game, -beta, -alpha, nodes, cap);
        game.undo();
        best = best.max(-v?);
        alpha = alpha.max(best);
        if alpha >= beta {
            break;
        }
    }
    Some(best)
}

fn reference_value(position: &Position, cap: u64) -> Option<Value> {
    let mut nodes = 0;
    let v = minimax(&mut Game::new(*position), -1, 1, &mut nodes, cap)?;
    let mover = position.side();
    Some(match v {
        1 => Value::Win(mover),
        -1 => Value::Win(mover.other()),
        _ => Value::Draw,
    })
}

fn all_points() -> Vec<Point> {
    Bitboard::BOARD.collect()
}

/// A random position of `variant` with `foxes` foxes and `geese` geese on
/// `goose_rows` (1-based, inclusive), and a quiet counter in `quiet`.
fn random_position(
    rng: &mut ChaCha8Rng,
    variant: Variant,
    geese: usize,
    goose_rows: (i32, i32),
    quiet: (u16, u16),
) -> Position {
    let mut points = all_points();
    points.shuffle(rng);
    let fox_count = variant.foxes() as usize;
    let foxes: Bitboard = points[..fox_count]
        .iter()
        .fold(Bitboard::EMPTY, |b, &p| b.with(p));
    let goose_points: Vec<Point> = points[fox_count..]
        .iter()
        .copied()
        .filter(|p| (goose_rows.0..=goose_rows.1).contains(&(p.row() + 1)))
        .take(geese)
        .collect();
    let geese_bb = goose_points.iter().fold(Bitboard::EMPTY, |b, &p| b.with(p));
    with_random_mover(rng, variant, foxes, geese_bb, quiet)
}

/// The position of `foxes` and `geese` with a random side to move and a
/// quiet counter in `quiet`.
fn with_random_mover(
    rng: &mut ChaCha8Rng,
    variant: Variant,
    foxes: Bitboard,
    geese: Bitboard,
    quiet: (u16, u16),
) -> Position {
    let side = if rng.random_bool(0.5) {
        Side::Foxes
    } else {
        Side::Geese
    };
    let q = rng.random_range(quiet.0..=quiet.1);
    Position::new(variant, foxes, geese, side, q).expect("a valid random position")
}

struct Tally {
    compared: usize,
    draws: usize,
    wins: usize,
    verified: usize,
}

/// Solves `count` random positions from `make`; every one the reference
/// finishes within `cap` nodes must get the same value, and every proven
/// win replays over the real rules.
fn check_family(
    name: &str,
    seed: u64,
    count: usize,
    cap: u64,
    mut make: impl FnMut(&mut ChaCha8Rng) -> Position,
) -> Tally {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut tally = Tally {
        compared: 0,
        draws: 0,
        wins: 0,
        verified: 0,
    };
    let config = SolverConfig {
        budget_nodes: 2_000_000,
        tt_mib: 16,
        ..SolverConfig::default()
    };
    let mut solver = Solver::new(config).unwrap();
    for _ in 0..count {
        let position = make(&mut rng);
        let Some(expected) = reference_value(&position, cap) else {
            continue;
        };
        let solution = solver.solve(&position);
        assert_eq!(
            solution.value,
            Some(expected),
            "{}: solver {:?}, minimax {expected:?}",
            position.fen(),
            solution.searches
        );
        tally.compared += 1;
        match expected {
            Value::Draw => tally.draws += 1,
            Value::Win(w) => {
                tally.wins += 1;
                // Where no draw is possible the winner may be known from
                // the loser's disproof alone: prove it directly first.
                let (outcome, _, _) = solver.prove(&position, w, 2_000_000);
                assert_eq!(outcome, SearchOutcome::Proven, "{}", position.fen());
                match verify_win(&solver, &position, w, 100_000) {
                    Ok(_) => tally.verified += 1,
                    Err(halatafl_solver::VerifyError::TooBig(_)) => {}
                    Err(e) => panic!("{}: proof does not replay: {e}", position.fen()),
                }
            }
        }
        // The best move keeps the value: the position after it has the same
        // value (for the side to move's win or a draw).
        if let (Some(best), Some(Value::Win(w))) = (solution.best, solution.value) {
            if w == position.side() {
                let mut child = position;
                child.play_unchecked(best);
                if let Some(v) = reference_value(&child, cap * 4) {
                    assert_eq!(v, expected, "{} then {best}", position.fen());
                }
            }
        }
        assert_eq!(solver.table_stats().contradictions, 0);
    }
    eprintln!(
        "{name}: {} compared, {} draws, {} wins, {} proofs replayed",
        tally.compared, tally.draws, tally.wins, tally.verified
    );
    tally
}

#[test]
fn two_foxes_endgames_match_minimax() {
    let variant = Variant::two_foxes();
    let t = check_family("two foxes", 1, 400, 40_000, |rng| {
        let geese = rng.random_range(9..=11);
        random_position(rng, variant, geese, (3, 7), (88, 99))
    });
    assert!(t.compared >= 40 && t.draws >= 5 && t.wins >= 5);
    assert!(t.verified >= 5);
}

#[test]
fn classic_sideways_positions_match_minimax() {
    let variant = Variant::classic(13, true).unwrap();
    let t = check_family("classic sideways", 2, 600, 40_000, |rng| {
        let geese = rng.random_range(4..=6);
        random_position(rng, variant, geese, (4, 7), (84, 99))
    });
    assert!(t.compared >= 40 && t.draws >= 5 && t.wins >= 5);
}

#[test]
fn classic_forward_only_positions_match_minimax() {
    // No sideways steps: no draw is possible, and games are short.
    let variant = Variant::classic(13, false).unwrap();
    let t = check_family("classic forward-only", 3, 150, 40_000, |rng| {
        let geese = rng.random_range(4..=7);
        random_position(rng, variant, geese, (3, 7), (0, 0))
    });
    assert!(t.compared >= 40 && t.draws == 0);
}

#[test]
fn two_threads_give_the_values_of_one() {
    let variant = Variant::classic(13, true).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let config = |threads| SolverConfig {
        budget_nodes: 400_000,
        tt_mib: 8,
        threads,
        ..SolverConfig::default()
    };
    let mut one = Solver::new(config(1)).unwrap();
    let mut two = Solver::new(config(2)).unwrap();
    let mut decided = 0;
    for _ in 0..300 {
        let geese = rng.random_range(4..=6);
        let p = random_position(&mut rng, variant, geese, (4, 7), (84, 99));
        // Small positions only: those plain minimax finishes.
        let Some(expected) = reference_value(&p, 40_000) else {
            continue;
        };
        let (a, b) = (one.solve(&p), two.solve(&p));
        assert_eq!(a.value, Some(expected), "{}", p.fen());
        assert_eq!(b.value, Some(expected), "{}", p.fen());
        decided += 1;
    }
    assert!(decided >= 30, "{decided}");
}

/// The DAG method's winner for `position` (which it must decide).
fn dag_winner(solver: &mut DagSolver, position: &Position) -> Side {
    let s = solver.solve(position).unwrap();
    let winner = s
        .winner
        .unwrap_or_else(|| panic!("{}: DAG budget spent", position.fen()));
    if let Some(best) = s.best {
        // The reported move wins: the position after it has the same winner.
        let mut child = *position;
        child.play_unchecked(best);
        assert_eq!(
            solver.solve(&child).unwrap().winner,
            Some(winner),
            "{} then {best}",
            position.fen()
        );
    }
    winner
}

/// A classic position where the geese may well win: the fox in the top
/// arm (rows 6-7), 9 to 13 geese close around it (rows 4-7, files b-f);
/// either side to move.
fn cornered_fox(rng: &mut ChaCha8Rng, variant: Variant) -> Position {
    let mut arm: Vec<Point> = all_points().into_iter().filter(|p| p.row() >= 5).collect();
    arm.shuffle(rng);
    let fox = Bitboard::EMPTY.with(arm[0]);
    let mut near: Vec<Point> = all_points()
        .into_iter()
        .filter(|&p| p.row() >= 3 && (1..=5).contains(&p.file()) && p != arm[0])
        .collect();
    near.shuffle(rng);
    let count = rng.random_range(9..=13);
    let geese = near[..count]
        .iter()
        .fold(Bitboard::EMPTY, |b, &p| b.with(p));
    let side = if rng.random_bool(0.5) {
        Side::Foxes
    } else {
        Side::Geese
    };
    Position::new(variant, fox, geese, side, 0).expect("a valid position")
}

#[test]
fn dag_matches_minimax_and_dfpn_without_sideways() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut dag = DagSolver::new(DagConfig {
        budget_nodes: 5_000_000,
        tt_mib: 16,
    })
    .unwrap();
    let mut dfpn = Solver::new(SolverConfig {
        budget_nodes: 2_000_000,
        tt_mib: 16,
        ..SolverConfig::default()
    })
    .unwrap();
    let (mut by_minimax, mut by_dfpn, mut fox, mut geese) = (0, 0, 0, 0);
    for i in 0..300 {
        let variant = Variant::classic([13, 15, 17][i % 3], false)
            .unwrap()
            .with_corner_links(i % 4 == 0);
        let p = if i % 2 == 0 {
            // Foxes anywhere, below the geese (a free fox) included.
            let geese_count = rng.random_range(4..=7);
            random_position(&mut rng, variant, geese_count, (1, 7), (0, 98))
        } else {
            cornered_fox(&mut rng, variant)
        };
        let winner = dag_winner(&mut dag, &p);
        match winner {
            Side::Foxes => fox += 1,
            Side::Geese => geese += 1,
        }
        if let Some(v) = reference_value(&p, 40_000) {
            assert_eq!(v, Value::Win(winner), "{} (minimax)", p.fen());
            by_minimax += 1;
        }
        let s = dfpn.solve(&p);
        if let Some(v) = s.value {
            assert_eq!(v, Value::Win(winner), "{} (df-pn)", p.fen());
            by_dfpn += 1;
        }
    }
    eprintln!(
        "dag: {by_minimax} agree with minimax, {by_dfpn} with df-pn; {fox} fox wins, {geese} geese wins"
    );
    assert!(
        by_minimax >= 100 && by_dfpn >= 250,
        "{by_minimax} {by_dfpn}"
    );
    assert!(fox >= 50 && geese >= 30, "{fox} {geese}");
}

#[test]
fn dag_value_replays_over_the_rules() {
    let variant = Variant::classic(17, false).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut dag = DagSolver::new(DagConfig {
        budget_nodes: 5_000_000,
        tt_mib: 16,
    })
    .unwrap();
    let (mut fox, mut geese, mut checked) = (0, 0, 0);
    for i in 0..60 {
        let p = if i % 2 == 0 {
            let geese_count = rng.random_range(5..=8);
            random_position(&mut rng, variant, geese_count, (2, 7), (0, 0))
        } else {
            cornered_fox(&mut rng, variant)
        };
        let stats = dag.replay_lines(&p, 5, i).unwrap();
        assert_eq!(stats.lines, 5);
        checked += stats.checked;
        match dag.solve(&p).unwrap().winner.unwrap() {
            Side::Foxes => fox += 1,
            Side::Geese => geese += 1,
        }
    }
    eprintln!("replayed: {fox} fox wins, {geese} geese wins, {checked} positions checked");
    assert!(
        fox >= 10 && geese >= 10 && checked >= 500,
        "{fox} {geese} {checked}"
    );
}

#[test]
fn dag_refuses_what_can_draw() {
    let mut dag = DagSolver::new(DagConfig::default()).unwrap();
    let sideways = Position::start(Variant::classic(13, true).unwrap());
    assert!(matches!(dag.solve(&sideways), Err(DagError::Variant(_))));
    let two_foxes = Position::start(Variant::two_foxes());
    assert!(matches!(dag.solve(&two_foxes), Err(DagError::Variant(_))));
    let start = Position::start(Variant::classic(13, false).unwrap());
    let late = Position::new(
        start.variant(),
        start.foxes(),
        start.geese(),
        Side::Foxes,
        99,
    )
    .unwrap();
    assert_eq!(dag.solve(&late), Err(DagError::Quiet(99)));
    assert!(matches!(
        DagSolver::new(DagConfig {
            tt_mib: 0,
            ..DagConfig::default()
        }),
        Err(DagError::TableSize(0))
    ));
}

#[test]
fn every_leaf_initialisation_sum_and_plan_gives_the_values_of_minimax() {
    use halatafl_solver::{LeafInit, ProofSum};
    let variant = Variant::two_foxes();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut solvers: Vec<Solver> = [
        (LeafInit::Mobility, ProofSum::Standard),
        (LeafInit::Distance, ProofSum::Standard),
        (LeafInit::Mobility, ProofSum::Weak),
        (LeafInit::Distance, ProofSum::Weak),
        (LeafInit::Region, ProofSum::Standard),
    ]
    .into_iter()
    .map(|(init, sum)| {
        Solver::new(SolverConfig {
            budget_nodes: 400_000,
            tt_mib: 8,
            init,
            sum,
            ..SolverConfig::default()
        })
        .unwrap()
    })
    .collect();
    // Weak numbers with a move order, and with both searches at once.
    solvers.push(
        Solver::new(SolverConfig {
            budget_nodes: 400_000,
            tt_mib: 8,
            sum: ProofSum::Weak,
            threads: 2,
            ..SolverConfig::default()
        })
        .unwrap()
        .with_order(std::sync::Arc::new(HashOrder { salt: 9 })),
    );
    // The geese's plan (off above, the default), alone and a short step
    // behind an arbitrary order.
    for (geese_plan, order) in [(6, false), (1, true)] {
        let solver = Solver::new(SolverConfig {
            budget_nodes: 400_000,
            tt_mib: 8,
            geese_plan,
            ..SolverConfig::default()
        })
        .unwrap();
        solvers.push(match order {
            true => solver.with_order(std::sync::Arc::new(HashOrder { salt: 3 })),
            false => solver,
        });
    }
    let mut decided = 0;
    for _ in 0..300 {
        let geese = rng.random_range(9..=11);
        let p = random_position(&mut rng, variant, geese, (3, 7), (88, 99));
        let Some(expected) = reference_value(&p, 40_000) else {
            continue;
        };
        for (i, solver) in solvers.iter_mut().enumerate() {
            assert_eq!(
                solver.solve(&p).value,
                Some(expected),
                "solver {i}: {}",
                p.fen()
            );
        }
        decided += 1;
    }
    assert!(decided >= 30, "{decided}");
}

/// A random Two Foxes position with seven or eight pen points held by geese,
/// three to five more geese below the pen, and the foxes on empty points of
/// rows 1 to 4, outside the pen (where the geese win often enough to test).
fn pen_nearly_full(rng: &mut ChaCha8Rng, variant: Variant, quiet: (u16, u16)) -> Position {
    let (mut pen, mut below): (Vec<Point>, Vec<Point>) = all_points()
        .into_iter()
        .partition(|p| halatafl_rules::PEN.contains(*p));
    pen.shuffle(rng);
    below.shuffle(rng);
    let in_pen = rng.random_range(7..=8);
    let outside = rng.random_range(3..=5);
    let geese = pen[..in_pen]
        .iter()
        .chain(&below[..outside])
        .fold(Bitboard::EMPTY, |b, &p| b.with(p));
    let mut empty: Vec<Point> = all_points()
        .into_iter()
        .filter(|p| !geese.contains(*p) && p.row() < 4)
        .collect();
    empty.shuffle(rng);
    let foxes = Bitboard::EMPTY.with(empty[0]).with(empty[1]);
    with_random_mover(rng, variant, foxes, geese, quiet)
}

/// A random Two Foxes position with six to eight pen points held by geese,
/// a wall of geese on rows 3 to 5 outside the pen (each point held with
/// probability 0.6) and the foxes on empty points below row 6 outside the
/// pen: positions where the geese often march, and often do not.
fn pen_and_wall(rng: &mut ChaCha8Rng, variant: Variant, quiet: (u16, u16)) -> Position {
    let mut pen: Vec<Point> = halatafl_rules::PEN.collect();
    pen.shuffle(rng);
    let in_pen = rng.random_range(6..=8);
    let mut geese = pen[..in_pen]
        .iter()
        .fold(Bitboard::EMPTY, |b, &p| b.with(p));
    for p in all_points() {
        let row = p.row() + 1;
        if (3..=5).contains(&row)
            && !halatafl_rules::PEN.contains(p)
            && rng.random_bool(0.6)
            && geese.count() < 20
        {
            geese = geese.with(p);
        }
    }
    let mut empty: Vec<Point> = all_points()
        .into_iter()
        .filter(|p| !geese.contains(*p) && !halatafl_rules::PEN.contains(*p) && p.row() < 5)
        .collect();
    empty.shuffle(rng);
    let foxes = Bitboard::EMPTY.with(empty[0]).with(empty[1]);
    with_random_mover(rng, variant, foxes, geese, quiet)
}

#[test]
fn a_march_claims_only_wins_of_minimax() {
    // The march (crate::march) claims geese wins without searching the
    // foxes' moves: every claim must be a geese win by plain minimax over
    // the real rules, with forward steps only and with sideways steps, at
    // low counters and near the fifty-move rule. And df-pn resting on
    // march leaves must give minimax's values, with proofs that replay.
    let variant = Variant::two_foxes();
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let mut marches = [March::new(20_000, 0), March::new(20_000, 2)];
    let config = SolverConfig {
        budget_nodes: 400_000,
        tt_mib: 8,
        march_budget: 1_000,
        march_sideways: 2,
        ..SolverConfig::default()
    };
    let mut solver = Solver::new(config.clone()).unwrap();
    // Where minimax is too slow (walls of many geese), df-pn without the
    // march is the reference: it matches minimax in the tests above.
    let mut plain = Solver::new(SolverConfig {
        budget_nodes: 200_000,
        march_budget: 0,
        ..config.clone()
    })
    .unwrap();
    let (mut claims, mut sideways_only, mut geese_wins) = (0, 0, 0);
    let (mut by_minimax, mut compared, mut decided) = (0, 0, 0);
    for round in 0..240 {
        let quiet = if round % 3 == 2 { (90, 99) } else { (0, 30) };
        let p = if round % 2 == 0 {
            pen_nearly_full(&mut rng, variant, quiet)
        } else {
            pen_and_wall(&mut rng, variant, quiet)
        };
        let [forward, sideways] = &mut marches;
        let (forward_claim, sideways_claim) = (forward.geese_win(&p), sideways.geese_win(&p));
        let reference = reference_value(&p, 200_000);
        by_minimax += reference.is_some() as usize;
        let Some(expected) = reference.or_else(|| plain.solve(&p).value) else {
            continue;
        };
        compared += 1;
        for claim in [forward_claim, sideways_claim] {
            assert!(
                !claim || expected == Value::Win(Side::Geese),
                "a march claims {} for the geese; minimax: {expected:?}",
                p.fen()
            );
        }
        claims += sideways_claim as usize;
        sideways_only += (sideways_claim && !forward_claim) as usize;
        let value = solver.solve(&p).value;
        assert!(value.is_none() || value == Some(expected), "{}", p.fen());
        decided += value.is_some() as usize;
        if expected == Value::Win(Side::Geese) && value.is_some() {
            geese_wins += 1;
            // A proof read back from a fresh table: the shared one may have
            // lost entries of proofs found in earlier rounds.
            let mut fresh = Solver::new(config.clone()).unwrap();
            let (outcome, _, _) = fresh.prove(&p, Side::Geese, 400_000);
            assert_eq!(outcome, SearchOutcome::Proven, "{}", p.fen());
            let checked = verify_win(&fresh, &p, Side::Geese, 1_000_000);
            assert!(checked.is_ok(), "{}: {checked:?}", p.fen());
        }
    }
    assert!(solver.marched_leaves() > 0);
    assert!(
        compared >= 100 && by_minimax >= 15 && decided >= 100,
        "{compared} compared, {by_minimax} by minimax, {decided} decided"
    );
    assert!(
        claims >= 15 && sideways_only >= 2,
        "{claims} claims, {sideways_only} with sideways steps only of {geese_wins} geese wins"
    );
}

#[test]
fn a_restricted_geese_search_first_changes_the_nodes_not_the_values() {
    // The geese's search first with forward steps only, with two sideways
    // steps, with all of the budget or a part, and narrowed to the two
    // best-ranked goose moves of an arbitrary order: each proof of theirs
    // is a proof of the real game, and each other outcome leaves the value
    // to the full search, so all give minimax's values.
    let variant = Variant::two_foxes();
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let config = |share, sideways, width| SolverConfig {
        budget_nodes: 400_000,
        tt_mib: 8,
        forward_share_percent: share,
        forward_sideways: sideways,
        forward_width: width,
        ..SolverConfig::default()
    };
    let mut solvers: Vec<Solver> = [(0, 0, 0), (100, 0, 0), (50, 2, 0), (30, 1, 0)]
        .into_iter()
        .map(|(share, sideways, width)| Solver::new(config(share, sideways, width)).unwrap())
        .collect();
    solvers.push(
        Solver::new(config(100, 1, 2))
            .unwrap()
            .with_order(std::sync::Arc::new(HashOrder { salt: 4 })),
    );
    let mut geese_wins = 0;
    for round in 0..300 {
        let geese = rng.random_range(9..=11);
        // Low counters as well as ones near the fifty-move rule; in half
        // the positions the pen nearly full, so that some are the geese's.
        let quiet = if round % 2 == 0 { (0, 20) } else { (88, 99) };
        let p = if round % 4 < 2 {
            pen_nearly_full(&mut rng, variant, quiet)
        } else {
            random_position(&mut rng, variant, geese, (3, 7), quiet)
        };
        let Some(expected) = reference_value(&p, 400_000) else {
            continue;
        };
        for (i, solver) in solvers.iter_mut().enumerate() {
            let guess = if i % 2 == 0 { None } else { Some(Side::Geese) };
            assert_eq!(
                solver.solve_expecting(&p, guess).value,
                Some(expected),
                "solver {i}: {}",
                p.fen()
            );
        }
        if expected == Value::Win(Side::Geese) {
            geese_wins += 1;
            // The forward-only search's proof, read back from the table
            // move by move, wins over the rules.
            let forward_only = &mut solvers[1];
            let (outcome, _, _) = forward_only.prove(&p, Side::Geese, 400_000);
            assert_eq!(outcome, SearchOutcome::Proven, "{}", p.fen());
            assert!(
                verify_win(forward_only, &p, Side::Geese, 1_000_000).is_ok(),
                "{}",
                p.fen()
            );
        }
    }
    assert!(geese_wins >= 5, "{geese_wins}");
}

#[test]
fn a_guessed_winner_changes_the_order_not_the_values() {
    let variant = Variant::two_foxes();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let config = SolverConfig {
        budget_nodes: 400_000,
        tt_mib: 8,
        ..SolverConfig::default()
    };
    let mut solver = Solver::new(config).unwrap();
    let (mut decided, mut by_value, mut moves_checked) = (0, [0; 3], 0);
    for _ in 0..300 {
        // Geese near the pen as well as scattered ones: all three values.
        let geese = rng.random_range(9..=12);
        let rows = if rng.random_bool(0.5) { (5, 7) } else { (3, 7) };
        let p = random_position(&mut rng, variant, geese, rows, (88, 99));
        if p.outcome_without_history().is_some() {
            continue;
        }
        let Some(expected) = reference_value(&p, 40_000) else {
            continue;
        };
        // A right guess, a wrong one and none give the same value, and a
        // move that keeps it where the side to move wins (on one table: a
        // root it already knows still comes with its move).
        for guess in [Some(Side::Foxes), Some(Side::Geese), None] {
            let s = solver.solve_expecting(&p, guess);
            assert_eq!(s.value, Some(expected), "guess {guess:?}: {}", p.fen());
            if expected == Value::Win(p.side()) {
                let Some(mv) = s.best else {
                    panic!(
                        "guess {guess:?}: no winning move: {} {:?}",
                        p.fen(),
                        s.searches
                    )
                };
                let mut child = p;
                child.play_unchecked(mv);
                // Where the reference settles the child within its cap.
                if let Some(v) = reference_value(&child, 40_000) {
                    assert_eq!(v, expected, "guess {guess:?}: {} then {mv:?}", p.fen());
                    moves_checked += 1;
                }
            }
            // A right guess settles it in one search.
            if let (Some(g), Value::Win(w)) = (guess, expected) {
                if g == w {
                    assert_eq!(s.searches.len(), 1, "{}", p.fen());
                }
            }
        }
        by_value[match expected {
            Value::Win(Side::Foxes) => 0,
            Value::Win(Side::Geese) => 1,
            Value::Draw => 2,
        }] += 1;
        decided += 1;
    }
    assert!(decided >= 30, "{decided}");
    assert!(
        by_value.iter().all(|&n| n > 0),
        "every value met: {by_value:?}"
    );
    assert!(moves_checked >= 30, "{moves_checked}");
}

/// Ranks by a fixed pseudo-random score per (position, move): an order
/// that knows nothing.
struct HashOrder {
    salt: u64,
}

impl halatafl_solver::MoveOrder for HashOrder {
    fn scores(&self, position: &Position, moves: &[halatafl_rules::Move], scores: &mut Vec<f32>) {
        scores.clear();
        for (i, _) in moves.iter().enumerate() {
            let h = (position.hash() ^ self.salt)
                .wrapping_add(i as u64)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15);
            scores.push((h >> 40) as f32);
        }
    }
}

/// Ranks the mover's moves by the exact value they lead to (a reference
/// minimax), best first, or worst first when `worst_first`.
struct ExactOrder {
    worst_first: bool,
}

impl halatafl_solver::MoveOrder for ExactOrder {
    fn scores(&self, position: &Position, moves: &[halatafl_rules::Move], scores: &mut Vec<f32>) {
        scores.clear();
        let mover = position.side();
        for &mv in moves {
            let mut child = *position;
            child.play_unchecked(mv);
            let score = match reference_value(&child, 2_000) {
                Some(Value::Win(w)) if w == mover => 1.0,
                Some(Value::Win(_)) => -1.0,
                Some(Value::Draw) | None => 0.0,
            };
            scores.push(if self.worst_first { -score } else { score });
        }
    }
}

#[test]
fn a_move_order_changes_the_nodes_not_the_values() {
    let variant = Variant::two_foxes();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let config = SolverConfig {
        budget_nodes: 400_000,
        tt_mib: 8,
        ..SolverConfig::default()
    };
    let solver = |order: Option<std::sync::Arc<dyn halatafl_solver::MoveOrder>>| {
        let s = Solver::new(config.clone()).unwrap();
        match order {
            Some(o) => s.with_order(o),
            None => s,
        }
    };
    let mut plain = solver(None);
    let mut hashed = solver(Some(std::sync::Arc::new(HashOrder { salt: 3 })));
    // Both boolean searches at once share the order.
    let mut two_threads = Solver::new(SolverConfig {
        threads: 2,
        ..config.clone()
    })
    .unwrap()
    .with_order(std::sync::Arc::new(HashOrder { salt: 5 }));
    let mut good = solver(Some(std::sync::Arc::new(ExactOrder { worst_first: false })));
    let mut bad = solver(Some(std::sync::Arc::new(ExactOrder { worst_first: true })));
    let (mut decided, mut good_nodes, mut bad_nodes) = (0, 0, 0);
    for _ in 0..300 {
        if decided == 10 {
            break;
        }
        let geese = rng.random_range(9..=11);
        let p = random_position(&mut rng, variant, geese, (3, 7), (88, 99));
        let Some(expected) = reference_value(&p, 40_000) else {
            continue;
        };
        let plain_solution = plain.solve(&p);
        assert_eq!(plain_solution.value, Some(expected), "{}", p.fen());
        assert_eq!(hashed.solve(&p).value, Some(expected), "{}", p.fen());
        assert_eq!(two_threads.solve(&p).value, Some(expected), "{}", p.fen());
        if plain_solution.nodes < 30 {
            // Too small for the order to matter.
            continue;
        }
        // Fresh tables, so that the two orders' node counts compare.
        good = solver(Some(std::sync::Arc::new(ExactOrder { worst_first: false })));
        bad = solver(Some(std::sync::Arc::new(ExactOrder { worst_first: true })));
        let (g, b) = (good.solve(&p), bad.solve(&p));
        assert_eq!(g.value, Some(expected), "{}", p.fen());
        assert_eq!(b.value, Some(expected), "{}", p.fen());
        (good_nodes, bad_nodes) = (good_nodes + g.nodes, bad_nodes + b.nodes);
        decided += 1;
    }
    assert_eq!(decided, 10);
    assert!(hashed.ranked_positions() > 0);
    assert!(two_threads.ranked_positions() > 0);
    assert!(good.ranked_positions() > 0 && bad.ranked_positions() > 0);
    // The order is used: the best-first ranking needs fewer nodes than the
    // worst-first one over the same positions.
    assert!(
        good_nodes < bad_nodes,
        "best first {good_nodes} nodes, worst first {bad_nodes}"
    );
    eprintln!("best first {good_nodes} nodes, worst first {bad_nodes}");
}
