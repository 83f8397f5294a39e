//! Search behaviour on Two Foxes positions: tactics, agreement with minimax,
//! batching, Gumbel, tree reuse, the agent and its spec.

use halatafl_agent::{Agent, AgentSpec, Budget, StopSignal, MAX_MOVETIME_MS};
use halatafl_mcts::{
    from_spec, Evaluations, Evaluator, LeafBatch, Lockstep, MctsAgent, MctsConfig,
    RolloutEvaluator, RootMode, Search, SearchGame, Terminal, UniformEvaluator, MAX_SIMS,
    MCTS_OPTIONS,
};
use halatafl_rules::{Game, Move, Position, Variant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn game(fen: &str) -> Game {
    Game::new(Position::from_fen(fen, Variant::two_foxes()).expect("test position parses"))
}

fn configs() -> Vec<(&'static str, MctsConfig)> {
    let base = MctsConfig {
        sims: 400,
        ..MctsConfig::default()
    };
    vec![
        ("puct", base.clone()),
        (
            "puct-batch8",
            MctsConfig {
                batch_size: 8,
                ..base.clone()
            },
        ),
        (
            "puct-noise",
            MctsConfig {
                noise: true,
                ..base.clone()
            },
        ),
        (
            "puct-cheapest-win",
            MctsConfig {
                cheapest_win: true,
                material_utility: 0.3,
                ..base.clone()
            },
        ),
        (
            "gumbel",
            MctsConfig {
                root: RootMode::Gumbel,
                noise: true,
                ..base.clone()
            },
        ),
    ]
}

fn best_move<E: Evaluator<Game>>(g: &Game, config: &MctsConfig, eval: &E, seed: u64) -> Move {
    let mut search = Search::new(g.clone(), config.clone(), seed);
    search.run(eval, config.sims, None, None);
    search.choose_move().expect("position has moves")
}

/// Pen filled by e4-e5 (the only move that fills it).
const PEN_FILL: &str = "GGG/GGG/..GG.../....G../......./.../F.F g 0";
/// c3xc5xe5 takes two geese and leaves eight; e1xe3 takes one.
const DOUBLE_CAPTURE: &str = "GGG/GGG/G..G.../..G..../..F..../..G/..F f 0";
/// Nine geese; some goose moves let a fox capture (eight left: lost).
const NINE_GEESE: &str = ".../.../..F.F../......./GGGGGGG/GG./... g 0";

#[test]
fn takes_immediate_wins() {
    for (fen, expected) in [(PEN_FILL, "e4-e5"), (DOUBLE_CAPTURE, "c3xc5xe5")] {
        let g = game(fen);
        for (name, config) in configs() {
            for seed in 0..3 {
                let mv = best_move(&g, &config, &RolloutEvaluator::new(seed, 300), seed);
                assert_eq!(mv.to_string(), expected, "{name} seed {seed} on {fen}");
                let mv = best_move(&g, &config, &UniformEvaluator, seed);
                assert_eq!(mv.to_string(), expected, "{name} uniform on {fen}");
            }
        }
        // The root is solved and the training target is all on the win.
        let mut search = Search::new(g.clone(), MctsConfig::default(), 0);
        let result = search.run(&UniformEvaluator, 200, None, None);
        assert_eq!(result.proven, Some(Terminal::Win));
        let i = result
            .moves
            .iter()
            .position(|m| m.to_string() == expected)
            .unwrap();
        assert!((result.policy[i] - 1.0).abs() < 1e-6, "{:?}", result.policy);
        assert!(result.value.win > 0.999);
    }
}

/// Moves after which a fox capture is possible (and so the geese lose).
fn losing_goose_moves(g: &Game) -> Vec<Move> {
    g.position()
        .legal_moves()
        .into_iter()
        .filter(|&m| {
            let mut next = *g.position();
            next.play_unchecked(m);
            next.legal_moves().iter().any(|r| r.is_capture())
        })
        .collect()
}

/// Geese to move, far from any end, where a few goose moves leave a goose
/// en prise (the foxes must take it) and most do not: random plies from the
/// start until such a position comes up. The position and its losing moves.
fn mixed_geese_position() -> (Game, Vec<Move>) {
    let mut g = Game::start_of(Variant::two_foxes());
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    loop {
        let all = g.position().legal_moves();
        if g.position().side() == halatafl_rules::Side::Geese {
            let losing = losing_goose_moves(&g);
            if !losing.is_empty() && losing.len() * 2 <= all.len() {
                return (g, losing);
            }
        }
        assert!(g.ply() < 20, "no mixed position found");
        g.play_unchecked(all[rng.random_range(0..all.len())]);
    }
}

#[test]
fn avoids_immediate_loss() {
    let g = game(NINE_GEESE);
    let losing = losing_goose_moves(&g);
    let all = g.position().legal_moves();
    assert!(
        !losing.is_empty() && losing.len() < all.len(),
        "position must mix safe and losing moves"
    );
    for (name, config) in configs() {
        for seed in 0..3 {
            let mv = best_move(&g, &config, &RolloutEvaluator::new(seed, 300), seed);
            assert!(
                !losing.contains(&mv),
                "{name} seed {seed} played losing {mv}"
            );
            let mv = best_move(&g, &config, &UniformEvaluator, seed);
            assert!(!losing.contains(&mv), "{name} uniform played losing {mv}");
        }
    }
}

/// The material utility: with a value that says nothing (the uniform
/// evaluator's draws), the geese keep their geese, because the lines where
/// the foxes take one (two plies down) and where the geese move on after it
/// (three) both count the goose against them; without the utility every
/// move of the same position is worth the same 0.
#[test]
fn material_utility_keeps_the_geese() {
    let (g, losing) = mixed_geese_position();
    let all = g.position().legal_moves();
    assert!(
        !losing.is_empty() && losing.len() < all.len(),
        "mixed position"
    );
    let with = |material_utility: f32| MctsConfig {
        sims: 600,
        material_utility,
        ..MctsConfig::default()
    };
    for seed in 0..3 {
        let mut search = Search::new(g.clone(), with(0.3), seed);
        let result = search.run(&UniformEvaluator, 600, None, None);
        let mv = search.choose_move().unwrap();
        assert!(
            !losing.contains(&mv),
            "seed {seed}: the geese gave away a goose: {mv}"
        );
        for (i, m) in result.moves.iter().enumerate() {
            if losing.contains(m) && result.visits[i] > 1 {
                assert!(
                    result.q[i] < 0.0,
                    "{m}: q {} should count the goose",
                    result.q[i]
                );
            }
        }
        // Off, the same search sees nothing either way.
        let mut plain = Search::new(g.clone(), with(0.0), seed);
        let result = plain.run(&UniformEvaluator, 600, None, None);
        assert!(result.q.iter().all(|q| q.abs() < 1e-6), "{:?}", result.q);
    }
}

/// The evaluation the material utility may count is alpha-beta's, in
/// geese, for the side to move, without its bonus for moving: on positions
/// of random games, both variants.
#[test]
fn the_evaluation_is_alpha_betas_in_geese_without_the_tempo() {
    use halatafl_alphabeta::{evaluate, EvalWeights};
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for (variant, weights) in [
        (Variant::two_foxes(), EvalWeights::default()),
        (Variant::classic(13, false).unwrap(), EvalWeights::classic()),
    ] {
        let weights = EvalWeights {
            tempo: 0,
            ..weights
        };
        let mut checked = 0;
        for _ in 0..20 {
            let mut g = Game::start_of(variant);
            for _ in 0..40 {
                let moves = g.position().legal_moves();
                if moves.is_empty() || g.outcome().is_some() {
                    break;
                }
                let expected = evaluate(g.position(), &weights) as f32 / 100.0;
                assert_eq!(SearchGame::evaluation(&g), Some(expected));
                checked += 1;
                g.play_unchecked(moves[rng.random_range(0..moves.len())]);
            }
        }
        assert!(checked > 200, "{checked} positions");
    }
}

/// Searches `g` with one visit per root move (a first-play urgency above
/// every visited move) and a value that says nothing (the uniform
/// evaluator's draws), and checks that each move's q is the material
/// utility's `0.3 tanh(gain / 4)`, with `gain` what the move changed
/// `count` by for the mover (`count` is for the side to move, as the
/// game's material is). Returns each move with its gain.
fn one_visit_gains(g: &Game, config: MctsConfig, count: impl Fn(&Game) -> f32) -> Vec<(Move, f32)> {
    let n = g.position().legal_moves().len() as u32;
    let config = MctsConfig {
        sims: n,
        fpu_reduction: -3.0,
        material_utility: 0.3,
        ..config
    };
    let mut search = Search::new(g.clone(), config, 1);
    let result = search.run(&UniformEvaluator, n, None, None);
    assert!(result.visits.iter().all(|&v| v == 1), "{:?}", result.visits);
    let mut gains = Vec::new();
    for (i, &mv) in result.moves.iter().enumerate() {
        let mut after = g.clone();
        after.play_unchecked(mv);
        // After the move the other side is to move: its count, negated.
        let gain = -count(&after) - count(g);
        let expected = 0.3 * (gain / 4.0).tanh();
        assert!(
            (result.q[i] - expected).abs() < 1e-5,
            "{mv}: q {} against {expected}",
            result.q[i]
        );
        gains.push((mv, gain));
    }
    gains
}

/// With `material_eval` the utility counts the change of the evaluation:
/// with a value that says nothing (the uniform evaluator's draws) and one
/// visit per root move (a first-play urgency above every visited move),
/// each move's q is `m tanh(gain / 4)` with `gain` what the move changed
/// the geese's evaluation by. The material alone sees nothing there (no
/// goose move takes a goose), and neither does the count without the key.
#[test]
fn material_eval_counts_the_evaluations_change() {
    let (g, _) = mixed_geese_position();
    let with = |material_eval: bool| MctsConfig {
        material_eval,
        ..MctsConfig::default()
    };
    let evaluation = |g: &Game| SearchGame::evaluation(g).unwrap();
    let gains = one_visit_gains(&g, with(true), evaluation);
    assert!(
        gains.iter().any(|&(_, x)| x > 0.0) && gains.iter().any(|&(_, x)| x < 0.0),
        "the position's moves should both raise and lower the evaluation: {gains:?}"
    );
    // Without the key the count is the material, which no goose move here
    // changes.
    let material = |g: &Game| SearchGame::material(g) as f32;
    let gains = one_visit_gains(&g, with(false), material);
    assert!(gains.iter().all(|&(_, x)| x == 0.0), "{gains:?}");
}

/// The foxes' room: at the start the foxes reach every empty point (the
/// pen's seven and row 5's four); shut in, none. Counted for the foxes and
/// against the geese, as the material is.
#[test]
fn the_room_is_where_the_foxes_could_go() {
    let start = Game::start_of(Variant::two_foxes());
    assert_eq!(SearchGame::room(&start), 11);
    // Both foxes walled in at the top: no step, no jump.
    let shut = game("FGF/GGG/GGGGGGG/GGGG.GG/......./.../... g 0");
    assert_eq!(SearchGame::room(&shut), 0);
    let mut open = start.clone();
    open.play_unchecked(open.position().legal_moves()[0]);
    assert_eq!(
        SearchGame::room(&open),
        -11,
        "the geese count it against them"
    );
}

/// With `room` w the material utility's count adds w geese a point of the
/// foxes' room: with a value that says nothing and one visit per root move,
/// each move's q is `m tanh(gain / 4)`, with `gain` the geese kept plus w
/// times the room taken from the foxes. Here the geese's wall on row 4 has
/// one gap, d4, and row 1 is empty. The three moves that fill the gap from
/// row 3 leave the goose on d4 to a jump into the point they left, and
/// from there over row 2 into row 1: the foxes' room grows by four points
/// less d4, 1.5 geese at w = 0.5. Every other move leaves it as it was.
/// Without the key the material alone sees nothing.
#[test]
fn the_room_weight_counts_the_room_taken() {
    let g = game("F.F/.../......./GGG.GGG/GGGGGGG/GGG/... g 0");
    assert_eq!(SearchGame::room(&g), -12);
    let with = |room_weight: f32| MctsConfig {
        room_weight,
        ..MctsConfig::default()
    };
    let count = |g: &Game| SearchGame::material(g) as f32 + 0.5 * SearchGame::room(g) as f32;
    let mut opening: Vec<(String, f32)> = one_visit_gains(&g, with(0.5), count)
        .into_iter()
        .filter(|&(_, gain)| gain != 0.0)
        .map(|(mv, gain)| (mv.to_string(), gain))
        .collect();
    opening.sort_by(|a, b| a.0.cmp(&b.0));
    let back = |mv: &str| (mv.to_string(), -1.5);
    assert_eq!(opening, [back("c3-d4"), back("d3-d4"), back("e3-d4")]);
    let material = |g: &Game| SearchGame::material(g) as f32;
    let gains = one_visit_gains(&g, with(0.0), material);
    assert!(gains.iter().all(|&(_, x)| x == 0.0), "{gains:?}");
}

/// The capture outlook against the rules' own moves, on positions of
/// random games: where the foxes move it is the most geese one of their
/// jumps takes (1 ply), and 0 where they cannot jump; where the geese move
/// (2 plies) it is 0 exactly when some goose move leaves no jump, and one
/// goose or more lost otherwise. More plies never see fewer captures for
/// the foxes than the first jump gives.
#[test]
fn the_capture_outlook_counts_the_jumps_the_rules_allow() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let (mut fox_jumps, mut all_lose_one, mut checked) = (0, 0, 0);
    for _ in 0..40 {
        let mut g = Game::start_of(Variant::two_foxes());
        while g.outcome().is_none() && g.ply() < 160 {
            let p = *g.position();
            let moves = p.legal_moves();
            if p.material_outcome().is_none() {
                checked += 1;
                match p.side() {
                    halatafl_rules::Side::Foxes => {
                        let best = moves
                            .iter()
                            .filter(|m| m.is_capture())
                            .map(|&m| {
                                let mut next = p;
                                next.play_unchecked(m);
                                p.geese().count() as i32 - next.geese().count() as i32
                            })
                            .max()
                            .unwrap_or(0);
                        assert_eq!(Game::capture_outlook(&g.leaf(), 1), best, "{}", p.fen());
                        assert!(Game::capture_outlook(&g.leaf(), 3) >= best, "{}", p.fen());
                        fox_jumps += usize::from(best > 0);
                    }
                    halatafl_rules::Side::Geese => {
                        let safe = moves.len() > losing_goose_moves(&g).len();
                        let outlook = Game::capture_outlook(&g.leaf(), 2);
                        assert_eq!(outlook == 0, safe, "{}: {outlook}", p.fen());
                        assert!(outlook <= 0, "{}", p.fen());
                        all_lose_one += usize::from(!safe && !moves.is_empty());
                    }
                }
            }
            g.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
    }
    assert!(
        checked > 1000 && fox_jumps > 50 && all_lose_one > 5,
        "{checked} {fox_jumps} {all_lose_one}"
    );
    // No plies, nothing seen.
    assert_eq!(Game::capture_outlook(&game(NINE_GEESE).leaf(), 0), 0);
}

/// With the capture outlook the material utility counts a goose left to a
/// jump at once: a search that visits each root move once already
/// gives every move that leaves a goose en prise a value below 0 for the
/// geese, and every other move 0 (the uniform evaluator's draws). Without
/// it, the same search sees nothing: the jump is a ply below its leaves.
#[test]
fn the_capture_outlook_sees_a_goose_left_to_a_jump_before_the_tree_does() {
    let (g, losing) = mixed_geese_position();
    let n = g.position().legal_moves().len() as u32;
    // No first-play reduction, so that the unvisited moves come first.
    let with = |capture_plies: u32| MctsConfig {
        sims: n,
        fpu_reduction: 0.0,
        material_utility: 0.3,
        capture_plies,
        ..MctsConfig::default()
    };
    let mut search = Search::new(g.clone(), with(3), 1);
    let result = search.run(&UniformEvaluator, n, None, None);
    let mut seen = 0;
    for (i, m) in result.moves.iter().enumerate() {
        if result.visits[i] == 1 {
            seen += 1;
            if losing.contains(m) {
                assert!(result.q[i] < 0.0, "{m}: q {}", result.q[i]);
            } else {
                assert!(result.q[i].abs() < 1e-6, "{m}: q {}", result.q[i]);
            }
        }
    }
    assert!(seen * 2 >= n, "{seen} of {n} moves visited once");
    let mut plain = Search::new(g.clone(), with(0), 1);
    let result = plain.run(&UniformEvaluator, n, None, None);
    for (i, q) in result.q.iter().enumerate() {
        if result.visits[i] == 1 {
            assert!(q.abs() < 1e-6, "{}: {q}", result.moves[i]);
        }
    }
}

/// Uniform priors and draws, and one prediction: wherever the foxes' piece
/// of `marked` stands where that move took it (and not where it came from),
/// the foxes will lose three of their material before the game ends.
struct PredictsLoss {
    marked: Move,
}

impl Evaluator<Game> for PredictsLoss {
    fn evaluate(&self, batch: &LeafBatch<Game>, out: &mut Evaluations) {
        UniformEvaluator.evaluate(batch, out);
        for i in 0..batch.len() {
            let p = &batch.leaf(i).position;
            if p.foxes().contains(self.marked.to()) && !p.foxes().contains(self.marked.from()) {
                // For the side to move there.
                let change = match p.side() {
                    halatafl_rules::Side::Foxes => -3.0,
                    halatafl_rules::Side::Geese => 3.0,
                };
                out.set_material_left(i, change);
            }
        }
    }
}

/// The material utility counts an evaluator's predicted material change to
/// the end (a geese-taken head) with the change so far: a root move after
/// which the prediction says the foxes lose three is searched less than
/// in the same search without the prediction, though nothing is taken
/// there; without the utility the prediction changes nothing.
#[test]
fn material_utility_counts_the_predicted_change_to_the_end() {
    // The foxes move first.
    let g = Game::start_of(Variant::two_foxes());
    assert_eq!(g.position().side(), halatafl_rules::Side::Foxes);
    let marked_move = g.position().legal_moves()[0];
    let predicts = PredictsLoss {
        marked: marked_move,
    };
    let with = |material_utility: f32| MctsConfig {
        sims: 300,
        material_utility,
        ..MctsConfig::default()
    };
    let run = |utility: f32, evaluator: &dyn Evaluator<Game>| {
        let mut search = Search::new(g.clone(), with(utility), 1);
        let result = search.run(evaluator, 300, None, None);
        let i = result.moves.iter().position(|&m| m == marked_move).unwrap();
        (result.visits[i], result.q[i], result.visits)
    };
    let (seen, q_seen, _) = run(0.3, &predicts);
    let (unseen, q_unseen, _) = run(0.3, &UniformEvaluator);
    assert!(
        seen * 3 < unseen * 2,
        "visits {seen} with the prediction, {unseen} without"
    );
    assert!(q_seen < q_unseen, "q {q_seen} with, {q_unseen} without");
    assert_eq!(run(0.0, &predicts).2, run(0.0, &UniformEvaluator).2);
}

/// Uniform priors and draws, and the same prediction everywhere: the foxes
/// will take `geese` more geese before the game ends.
struct PredictsCaptures {
    geese: f32,
}

impl Evaluator<Game> for PredictsCaptures {
    fn evaluate(&self, batch: &LeafBatch<Game>, out: &mut Evaluations) {
        UniformEvaluator.evaluate(batch, out);
        for i in 0..batch.len() {
            let change = match batch.leaf(i).position.side() {
                halatafl_rules::Side::Foxes => self.geese,
                halatafl_rules::Side::Geese => -self.geese,
            };
            out.set_material_left(i, change);
        }
    }
}

/// The material utility measures from the root's expectation: a prediction
/// that is the same everywhere (six geese still to fall, which counted
/// from zero would put every line near the flat end of the tanh) tells no
/// line from another, and the search is the one without predictions.
#[test]
fn material_utility_measures_from_the_roots_expectation() {
    let g = Game::start_of(Variant::two_foxes());
    let config = MctsConfig {
        sims: 300,
        material_utility: 0.3,
        ..MctsConfig::default()
    };
    let run = |evaluator: &dyn Evaluator<Game>| {
        let mut search = Search::new(g.clone(), config.clone(), 3);
        let r = search.run(evaluator, 300, None, None);
        (r.visits, r.q)
    };
    let (visits, q) = run(&PredictsCaptures { geese: 6.0 });
    assert_eq!((visits, q), run(&UniformEvaluator));
}

/// Negamax with the rules' end conditions; `None` below the horizon.
fn negamax(g: &mut Game, depth: u32) -> Option<i32> {
    let moves = g.position().legal_moves();
    if let Some(t) = SearchGame::terminal(g, !moves.is_empty()) {
        return Some(t.score() as i32);
    }
    if depth == 0 {
        return None;
    }
    let mut best: Option<i32> = Some(-1);
    for m in moves {
        g.play_unchecked(m);
        let v = negamax(g, depth - 1).map(|v| -v);
        g.undo();
        best = match (best, v) {
            (_, Some(1)) => return Some(1),
            (Some(b), Some(v)) => Some(b.max(v)),
            _ => None,
        };
    }
    // Unknown children can still be wins: only a proven loss or draw bound stays.
    best
}

/// Positions from seeded random games where depth-3 minimax (rules' end
/// conditions, unknown = 0) has a unique best move: the only move that wins
/// by force within three plies.
fn forced_win_positions(count: usize) -> Vec<(Game, Move)> {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut found = Vec::new();
    'games: for _ in 0..400 {
        let mut g = Game::start_of(Variant::two_foxes());
        while g.outcome().is_none() {
            let moves = g.position().legal_moves();
            if moves.len() >= 3 {
                let mut winners = Vec::new();
                for &m in &moves {
                    g.play_unchecked(m);
                    if negamax(&mut g, 2) == Some(-1) {
                        winners.push(m);
                    }
                    g.undo();
                }
                if winners.len() == 1 {
                    found.push((g.clone(), winners[0]));
                    if found.len() == count {
                        break 'games;
                    }
                    continue 'games;
                }
            }
            let m = moves[rng.random_range(0..moves.len())];
            g.play_unchecked(m);
        }
    }
    found
}

#[test]
fn most_visited_move_is_the_minimax_move() {
    let positions = forced_win_positions(8);
    assert!(
        positions.len() >= 4,
        "found only {} test positions",
        positions.len()
    );
    for (g, win) in &positions {
        for (name, config) in configs() {
            // Gumbel's halving gives every root move an equal share first, so
            // with uninformative (uniform) values it needs playouts and more
            // simulations to see a win three plies deep behind ~17 replies.
            let gumbel = config.root == RootMode::Gumbel;
            let mut search = Search::new(g.clone(), config.clone(), 3);
            let result = if gumbel {
                search.run(&RolloutEvaluator::new(3, 300), 2000, None, None)
            } else {
                search.run(&UniformEvaluator, 800, None, None)
            };
            let mv = search.choose_move().unwrap();
            if config.cheapest_win {
                // The only win within three plies need not be the only win:
                // a longer proof that keeps more material may be played.
                let i = result.moves.iter().position(|m| *m == mv).unwrap();
                assert_eq!(
                    result.proven_moves[i],
                    Some(Terminal::Win),
                    "{name} at {}: {mv} is not a proven win",
                    g.position()
                );
                assert_eq!(result.proven, Some(Terminal::Win));
                continue;
            }
            assert_eq!(
                mv,
                *win,
                "{name} at {}: {:?} {:?} {:?}",
                g.position(),
                result.moves,
                result.proven_moves,
                result.visits
            );
            let best = (0..result.moves.len())
                .max_by(|&a, &b| result.policy[a].total_cmp(&result.policy[b]))
                .unwrap();
            assert_eq!(
                result.moves[best],
                *win,
                "{name} policy at {}",
                g.position()
            );
            assert_eq!(
                result.proven,
                Some(Terminal::Win),
                "{name} at {}",
                g.position()
            );
        }
    }
}

#[test]
fn lockstep_matches_independent_searches() {
    let config = MctsConfig {
        sims: 200,
        batch_size: 4,
        ..MctsConfig::default()
    };
    let start = Game::start_of(Variant::two_foxes());
    let mut searches: Vec<Search<Game>> = (0..6)
        .map(|i| Search::new(start.clone(), config.clone(), i))
        .collect();
    let mut lockstep = Lockstep::new();
    for ply in 0..6 {
        for s in &mut searches {
            s.start_move(200);
        }
        let mut rounds = 0;
        while lockstep.step(&mut searches, &UniformEvaluator) > 0 {
            rounds += 1;
        }
        // Several trees and several leaves per tree share each call.
        assert!(rounds < 200, "ply {ply}: {rounds} rounds for 200 sims");
        for (i, s) in searches.iter_mut().enumerate() {
            assert!(s.is_finished());
            let result = s.result();
            if result.moves.len() > 1 && result.proven.is_none() {
                assert_eq!(result.simulations, 200, "search {i} ply {ply}");
            }
            assert!((result.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            // Identical trees and seeds give identical results to a lone search.
            let mut alone = Search::new(s.game().clone(), config.clone(), i as u64);
            let _ = alone.run(&UniformEvaluator, 200, None, None);
            if ply == 0 {
                assert_eq!(alone.result().visits, result.visits);
            }
            let mv = s.choose_move().unwrap();
            s.play(mv);
        }
    }
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let start = Game::start_of(Variant::two_foxes());
    let mut search = Search::new(start, MctsConfig::default(), 1);
    let result = search.run(&UniformEvaluator, 2000, None, None);
    let mv = search.choose_move().unwrap();
    let i = result.moves.iter().position(|&m| m == mv).unwrap();
    let child_visits = result.visits[i];
    search.play(mv);
    search.start_move(0);
    let after = search.result();
    let total: u32 = after.visits.iter().sum();
    // The child's visits are its own expansion plus its children's.
    assert_eq!(total + 1, child_visits);
    let result = search.run(&UniformEvaluator, 500, None, None);
    assert_eq!(result.simulations, 500);
    assert_eq!(result.visits.iter().sum::<u32>(), total + 500);
    assert_eq!(search.game().ply(), 1);
}

#[test]
fn counting_reused_visits_spends_only_what_the_budget_lacks() {
    let start = Game::start_of(Variant::two_foxes());
    let config = MctsConfig {
        count_reused_visits: true,
        ..MctsConfig::default()
    };
    let mut search = Search::new(start, config, 1);
    // Nothing is reused at the first move: the whole budget is spent.
    assert_eq!(search.reused_visits(), 0);
    let first = search.run(&UniformEvaluator, 2000, None, None);
    assert_eq!(first.simulations, 2000);
    let mv = search.choose_move().unwrap();
    search.play(mv);
    let reused = search.reused_visits();
    assert!(reused > 1 && reused < 2000, "reused {reused}");
    // A budget the kept tree already holds costs no simulation ...
    let none = search.run(&UniformEvaluator, reused / 2, None, None);
    assert_eq!(none.simulations, 0);
    assert_eq!(none.visits.iter().sum::<u32>(), reused);
    // ... and a larger one tops the root up to exactly the budget.
    let topped = search.run(&UniformEvaluator, reused + 300, None, None);
    assert_eq!(topped.simulations, 300);
    assert_eq!(topped.visits.iter().sum::<u32>(), reused + 300);
    // Without the option the same position spends the budget anew.
    let mut plain = Search::new(search.game().clone(), MctsConfig::default(), 1);
    assert_eq!(
        plain.run(&UniformEvaluator, 300, None, None).simulations,
        300
    );
}

#[test]
fn gumbel_policy_target_and_few_simulations() {
    let g = Game::start_of(Variant::two_foxes());
    for sims in [1u32, 4, 16, 64] {
        let config = MctsConfig {
            root: RootMode::Gumbel,
            noise: true,
            ..MctsConfig::default()
        };
        let mut search = Search::new(g.clone(), config, sims as u64);
        let result = search.run(&RolloutEvaluator::new(1, 300), sims, None, None);
        assert!(result.simulations <= sims && result.simulations >= sims.min(6) / 2);
        assert!((result.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        assert!(
            result.policy.iter().all(|&p| p > 0.0),
            "completed-Q policy covers every move"
        );
        assert!(search.choose_move().is_some());
    }
}

#[test]
fn repetition_draws_are_seen_in_the_tree() {
    // Foxes and one goose shuffle; after move 9 the geese can put the
    // position after move 2 on the board a third time with b5-a5: a draw.
    let mut g = Game::start_of(Variant::two_foxes());
    for m in [
        "c7-c6", "a4-a5", "c6-c7", "a5-b5", "c7-c6", "b5-a5", "c6-c7", "a5-b5", "c7-c6",
    ] {
        g.play_str(m).unwrap();
    }
    let mut s = Search::new(g.clone(), MctsConfig::default(), 0);
    let result = s.run(&RolloutEvaluator::new(0, 300), 300, None, None);
    let i = result
        .moves
        .iter()
        .position(|m| m.to_string() == "b5-a5")
        .unwrap();
    assert_eq!(result.proven_moves[i], Some(Terminal::Draw));
    assert_eq!(result.q[i], 0.0);
    assert_eq!(result.proven_moves.iter().flatten().count(), 1);
    let mut g2 = g.clone();
    g2.play_str("b5-a5").unwrap();
    assert_eq!(g2.repetitions(), 3);
}

#[test]
fn agent_plays_legal_moves_and_reuses_its_tree() {
    let spec = AgentSpec::parse("mcts:sims=200,batch=4", "").unwrap();
    let mut fox = MctsAgent::from_spec(&spec, 1).unwrap();
    let mut goose = MctsAgent::from_spec(
        &AgentSpec::parse("mcts:sims=100,gumbel=true", "").unwrap(),
        2,
    )
    .unwrap();
    fox.new_game(3);
    goose.new_game(4);
    let mut g = Game::start_of(Variant::two_foxes());
    for _ in 0..12 {
        if g.outcome().is_some() {
            break;
        }
        let agent: &mut MctsAgent = if g.ply().is_multiple_of(2) {
            &mut fox
        } else {
            &mut goose
        };
        let d = agent.choose(&g, &Budget::default());
        assert!(g.position().is_legal(d.mv));
        assert!(d.value.unwrap().abs() <= 1.0);
        assert!(d.info.nodes > 0);
        g.play(d.mv).unwrap();
    }
    assert_eq!(fox.spec(), "mcts:batch=4,sims=200");
    let d = fox.choose(
        &g,
        &Budget {
            sims: Some(10),
            ..Budget::default()
        },
    );
    assert!(d.info.nodes <= 10);
}

#[test]
fn spec_options_are_validated() {
    let parse = |s: &str| from_spec(&AgentSpec::parse(s, "").unwrap(), &[]);
    let p = parse("mcts:sims=50,cpuct=2,gumbel=true,m=8,batch=16,eval=uniform").unwrap();
    assert_eq!(p.config.sims, 50);
    assert_eq!(p.config.root, RootMode::Gumbel);
    assert_eq!(p.config.gumbel_m, 8);
    assert_eq!(p.config.batch_size, 16);
    let err = parse("mcts:sims=50,depth=3").unwrap_err().to_string();
    assert!(
        err.contains("depth") && err.contains("cpuct") && err.contains("gumbel"),
        "{err}"
    );
    assert!(parse("mcts:sims=0").is_err());
    assert_eq!(
        parse(&format!("mcts:sims={MAX_SIMS}")).unwrap().config.sims,
        MAX_SIMS
    );
    let err = parse(&format!("mcts:sims={}", MAX_SIMS + 1))
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("from 1 to {MAX_SIMS}")), "{err}");
    assert!(parse("mcts:ms=86400000").is_ok());
    let err = parse("mcts:ms=86400001").unwrap_err().to_string();
    assert!(err.contains("from 1 to 86400000"), "{err}");
    // The option help states the same bounds.
    let help: String = MCTS_OPTIONS
        .iter()
        .map(|(k, v)| format!("{k} {v}\n"))
        .collect();
    assert!(help.contains(&format!("1 to {MAX_SIMS}")), "{help}");
    assert!(help.contains(&MAX_MOVETIME_MS.to_string()), "{help}");
    assert!(parse("mcts:cpuct=-1").is_err());
    assert!(parse("mcts:eps=2").is_err());
    assert!(parse("mcts:eval=network").is_err());
    assert!(parse("mcts:gumbel=yes").is_err());
    assert!(from_spec(&AgentSpec::parse("mcts:net=a.pt", "").unwrap(), &["net"]).is_ok());
}

#[test]
fn a_time_budget_in_the_spec_replaces_the_simulation_count() {
    let spec = AgentSpec::parse("mcts:ms=25,eval=uniform", "").unwrap();
    let mut agent = MctsAgent::from_spec(&spec, 3).unwrap();
    let g = Game::start_of(Variant::default());
    let started = std::time::Instant::now();
    let d = agent.choose(&g, &Budget::default());
    assert!(started.elapsed() >= std::time::Duration::from_millis(25));
    // Uniform leaves cost microseconds: 25 ms buys far more than the
    // 800-simulation default, and the 1,000,000 cap is out of reach.
    assert!(
        d.info.nodes > 800 && d.info.nodes < 1_000_000,
        "{}",
        d.info.nodes
    );
    // With `sims` too, whichever ends first stops the search.
    let spec = AgentSpec::parse("mcts:ms=10000,sims=50,eval=uniform", "").unwrap();
    let mut agent = MctsAgent::from_spec(&spec, 3).unwrap();
    assert_eq!(agent.choose(&g, &Budget::default()).info.nodes, 50);
    // A caller's budget overrides the spec's.
    let budget = Budget {
        sims: Some(30),
        ..Budget::default()
    };
    let d = agent.choose(&g, &budget);
    assert_eq!(d.info.nodes, 30);
    for bad in ["mcts:ms=0", "mcts:ms=soon", "mcts:ms=10,sims=0"] {
        let spec = AgentSpec::parse(bad, "").unwrap();
        let err = MctsAgent::from_spec(&spec, 1).err().expect(bad).to_string();
        assert!(err.contains("ms") || err.contains("sims"), "{bad}: {err}");
    }
}

#[test]
fn stop_signal_ends_a_long_search() {
    let spec = AgentSpec::parse("mcts:eval=uniform", "").unwrap();
    let mut agent = MctsAgent::from_spec(&spec, 3).unwrap();
    let g = Game::start_of(Variant::default());
    let stop = StopSignal::new();
    let budget = Budget {
        sims: Some(MAX_SIMS),
        stop: Some(stop.clone()),
        ..Budget::default()
    };
    let started = std::time::Instant::now();
    let d = std::thread::scope(|scope| {
        let search = scope.spawn(|| agent.choose(&g, &budget));
        std::thread::sleep(std::time::Duration::from_millis(50));
        stop.stop();
        search.join().unwrap()
    });
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    assert!(
        d.info.nodes > 0 && d.info.nodes < MAX_SIMS as u64,
        "{}",
        d.info.nodes
    );
    assert!(g.position().is_legal(d.mv));
    // Raised before the search: the root is still expanded, so a legal move.
    let mut agent = MctsAgent::from_spec(&spec, 3).unwrap();
    let d = agent.choose(&g, &budget);
    assert!(d.info.nodes <= 1, "{}", d.info.nodes);
    assert!(g.position().is_legal(d.mv));
}

/// Uniform priors and an even, drawless value everywhere (win and loss
/// one half each): only finished games carry a draw share.
struct NoDraws;

impl Evaluator<Game> for NoDraws {
    fn evaluate(&self, batch: &LeafBatch<Game>, out: &mut Evaluations) {
        UniformEvaluator.evaluate(batch, out);
        for i in 0..batch.len() {
            out.set_value(i, halatafl_mcts::Wdl::from_q_draw(0.0, 0.0));
        }
    }
}

/// `geese_draw` below 0 makes a threefold repetition worse for the geese
/// and better for the foxes than the drawless rest: the geese visit their
/// repeating move less than with the draw valued above 0, the foxes more;
/// the move's reported value stays the exact 0 of a draw.
#[test]
fn the_draw_value_steers_the_geese_from_repetitions_and_the_foxes_to_them() {
    // The foxes shuffle c7-d7, the geese c3-d3; far apart, nothing to take.
    // From either side first, the side to move after 7 plies repeats the
    // start a third time with its 8th.
    let shuffle = |first: &str, moves: [&'static str; 4]| {
        let mut g = game(&format!(
            "F.F/.../......./......./GGG.GGG/GGG/GGG {first} 0"
        ));
        for m in moves.iter().cycle().take(7) {
            g.play_str(m).unwrap();
        }
        (g, moves[3])
    };
    let geese = shuffle("f", ["c7-d7", "c3-d3", "d7-c7", "d3-c3"]);
    let foxes = shuffle("g", ["c3-d3", "c7-d7", "d3-c3", "d7-c7"]);
    for ((g, repeat), geese_to_move) in [(geese, true), (foxes, false)] {
        let repeat = g.position().parse_move(repeat).unwrap();
        let mut played = g.clone();
        played.play(repeat).unwrap();
        assert!(
            played.outcome().is_some(),
            "{repeat:?} must end the game by repetition"
        );
        let search = |geese_draw: f32| {
            let config = MctsConfig {
                sims: 300,
                geese_draw,
                ..MctsConfig::default()
            };
            let mut s = Search::new(g.clone(), config, 1);
            let r = s.run(&NoDraws, 300, None, None);
            let i = r.moves.iter().position(|&m| m == repeat).unwrap();
            (r.visits[i], r.q[i], r.proven_moves[i])
        };
        let (avoid, q, proven) = search(-0.5);
        let (seek, _, _) = search(0.5);
        assert_eq!(proven, Some(Terminal::Draw));
        assert_eq!(q, 0.0, "a proven draw's value stays exact");
        if geese_to_move {
            assert!(avoid < seek, "geese: {avoid} visits at -0.5, {seek} at 0.5");
        } else {
            assert!(avoid > seek, "foxes: {avoid} visits at -0.5, {seek} at 0.5");
        }
    }
}
