//! The engine against the independent reference generator
//! (tests/reference/mod.rs) away from the hand-built cases: along seeded random
//! games of every variant and option, and on random placements (proptest),
//! which reach chains no game from the start would.

mod reference;

use halatafl_rules::{perft, Position, Variant};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reference::{Board, Rules};

/// Every variant and table option worth telling apart.
const VARIANTS: [&str; 9] = [
    "two-foxes",
    "two-foxes corner-links",
    "classic geese=13",
    "classic geese=13 sideways",
    "classic geese=15",
    "classic geese=15 sideways corner-links",
    "classic geese=17",
    "classic geese=17 sideways",
    "classic geese=13 corner-links",
];

fn engine_moves(p: &Position) -> Vec<String> {
    let mut v: Vec<String> = p.legal_moves().iter().map(|m| m.to_string()).collect();
    v.sort();
    v
}

fn engine_outcome(p: &Position) -> String {
    p.outcome_without_history()
        .map_or("ongoing".to_string(), |o| o.to_string())
}

/// Checks one position both ways: move lists, outcome (rules 1-3), and perft
/// to `depth`.
fn compare(name: &str, p: &Position, board: &Board, depth: u32) {
    let rules = Rules::parse(name);
    let at = format!("{name} | {}", board.fen());
    assert_eq!(p.fen(), board.fen(), "{at}: position strings differ");
    assert_eq!(
        engine_moves(p),
        reference::move_texts(&rules, board),
        "{at}: move lists"
    );
    assert_eq!(
        engine_outcome(p),
        reference::outcome(&rules, board),
        "{at}: outcome"
    );
    for d in 1..=depth {
        assert_eq!(
            perft(p, d),
            reference::perft(&rules, board, d),
            "{at}: perft {d}"
        );
    }
}

#[test]
fn random_games_agree_with_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_f0c5);
    let mut positions = 0;
    for name in VARIANTS {
        let variant: Variant = name.parse().unwrap();
        let rules = Rules::parse(name);
        for _game in 0..40 {
            let mut p = Position::start(variant);
            let mut board = Board::parse(&p.fen());
            for ply in 0..300 {
                let depth = if ply % 16 == 5 { 3 } else { 1 };
                compare(name, &p, &board, depth);
                positions += 1;
                if p.outcome_without_history().is_some() {
                    break;
                }
                let moves = p.legal_moves();
                let m = moves[rng.random_range(0..moves.len())];
                let text = m.to_string();
                let ref_move = reference::legal_moves(&rules, &board)
                    .into_iter()
                    .find(|r| r.text() == text)
                    .expect("reference knows the move");
                p = p.play(m).unwrap();
                board = reference::apply(&board, &ref_move);
            }
        }
    }
    assert!(positions > 10_000, "only {positions} positions compared");
}

/// A random placement for variant `VARIANTS[v]`: the right number of foxes,
/// up to the variant's geese, anywhere (unreachable positions included, such
/// as geese behind the foxes' start), either side to move.
fn placement() -> impl Strategy<Value = (usize, String)> {
    (0..VARIANTS.len(), any::<u64>(), 0.2f64..0.8, any::<bool>()).prop_map(
        |(v, seed, density, foxes_to_move)| {
            let rules = Rules::parse(VARIANTS[v]);
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut points = Vec::new();
            for row in 0..7 {
                for file in 0..7 {
                    if reference::on_board(file, row) {
                        points.push((file, row));
                    }
                }
            }
            // Shuffle, then foxes first and geese while the density allows.
            for i in (1..points.len()).rev() {
                points.swap(i, rng.random_range(0..=i));
            }
            let mut board = Board::parse(".../.../......./......./......./.../... f 0");
            board.foxes_to_move = foxes_to_move;
            for (i, &p) in points.iter().enumerate() {
                if i < rules.foxes() {
                    board.cell[p.0 as usize][p.1 as usize] = reference::FOX;
                } else if i < rules.foxes() + rules.max_geese && rng.random_bool(density) {
                    board.cell[p.0 as usize][p.1 as usize] = reference::GOOSE;
                }
            }
            (v, board.fen())
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_placements_agree_with_reference((v, fen) in placement()) {
        let name = VARIANTS[v];
        let p = Position::from_fen(&fen, name.parse().unwrap()).unwrap();
        compare(name, &p, &Board::parse(&fen), 2);
    }
}
