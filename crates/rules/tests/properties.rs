//! Property tests on random play (proptest): every generated move is legal
//! and names itself, playing keeps every invariant, print and parse are
//! inverse, the incremental hash equals the hash from scratch, the mirror keeps
//! move lists and perft, and the repetition count equals a plain scan of the
//! history; the geese's forward moves are their legal moves that gain a
//! row. Also: the parsers never panic on arbitrary text.

use halatafl_rules::{
    perft, EndReason, Game, Move, MoveText, Outcome, Position, PositionError, Setup, Side, Variant,
    FIFTY_MOVE_PLIES,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const VARIANTS: [&str; 8] = [
    "two-foxes",
    "two-foxes corner-links",
    "classic geese=13",
    "classic geese=13 sideways",
    "classic geese=15 corner-links",
    "classic geese=15 sideways",
    "classic geese=17",
    "classic geese=17 sideways corner-links",
];

fn sorted_texts(moves: impl IntoIterator<Item = Move>) -> Vec<String> {
    let mut v: Vec<String> = moves.into_iter().map(|m| m.to_string()).collect();
    v.sort();
    v
}

/// Whether a move resets the quiet counter: a capture or a goose step that
/// gains a row.
fn resets_quiet(side: Side, m: Move) -> bool {
    m.is_capture() || (side == Side::Geese && m.to().row() > m.from().row())
}

/// Checks everything about one position that does not need a move.
fn check_position(p: &Position) {
    let v = p.variant();
    assert_eq!(p.foxes().count(), v.foxes(), "fox count");
    assert!((p.foxes() & p.geese()).is_empty(), "a point holds both");
    assert!(p.geese().count() <= v.geese as u32, "too many geese");
    assert_eq!(p.hash(), p.hash_from_scratch(), "incremental hash");

    // print ∘ parse, both ways.
    let fen = p.fen();
    let parsed = Position::from_fen(&fen, v).expect("own position string parses");
    assert_eq!(parsed, *p, "parse(print(p)) == p");
    assert_eq!(parsed.fen(), fen, "print(parse(s)) == s");

    // Every move is legal and names itself; no duplicates.
    let moves = p.legal_moves();
    let texts = sorted_texts(moves.iter().copied());
    let mut unique = texts.clone();
    unique.dedup();
    assert_eq!(unique.len(), texts.len(), "duplicate moves in {fen}");
    assert_eq!(p.count_legal_moves(), moves.len() as u64);
    assert_eq!(p.has_legal_move(), !moves.is_empty());
    // The geese's forward moves: the legal ones that gain a row, none for
    // the foxes.
    let forward = p.forward_goose_moves();
    assert_eq!(p.count_forward_goose_moves(), forward.len() as u64);
    let gaining: Vec<Move> = match p.side() {
        Side::Geese => moves
            .iter()
            .copied()
            .filter(|m| m.to().row() > m.from().row())
            .collect(),
        Side::Foxes => Vec::new(),
    };
    assert_eq!(
        sorted_texts(forward),
        sorted_texts(gaining),
        "forward moves in {fen}"
    );
    for &m in &moves {
        assert!(p.play(m).is_ok(), "{m} rejected in {fen}");
        assert_eq!(p.parse_move(&m.to_string()), Ok(m), "parse_move({m})");
        let text = MoveText::parse(&m.to_string()).expect("own move text parses");
        assert!(text.matches(m));
        assert_eq!(text.from, m.from());
        if m.is_capture() {
            assert!(m.landings().eq(text.path.iter().copied()));
            assert_eq!(m.captured().count() as usize, m.jumps());
        }
    }

    // The mirror: an involution that maps moves onto moves.
    let mirror = p.mirror();
    assert_eq!(mirror.mirror(), *p);
    assert_eq!(mirror.hash(), mirror.hash_from_scratch());
    assert_eq!(
        sorted_texts(mirror.legal_moves()),
        sorted_texts(moves.iter().map(|m| m.mirror())),
        "mirror of {fen}"
    );
    for &m in &moves {
        let mut a = *p;
        a.play_unchecked(m);
        let mut b = mirror;
        b.play_unchecked(m.mirror());
        assert_eq!(a.mirror(), b, "mirrored move {m} in {fen}");
    }
}

/// Checks one move from `before` to `after`.
fn check_step(before: &Position, m: Move, after: &Position) {
    let side = before.side();
    assert_eq!(after.side(), side.other(), "sides alternate");
    assert_eq!(after.variant(), before.variant());
    match side {
        Side::Foxes => {
            assert_eq!(after.geese(), before.geese() ^ m.captured());
            assert!((before.geese() & m.captured()) == m.captured());
            assert_eq!(
                after.geese().count() + m.jumps() as u32,
                before.geese().count()
            );
            assert!(after.foxes().contains(m.to()));
            assert!(before.foxes().contains(m.from()));
        }
        Side::Geese => {
            assert_eq!(after.foxes(), before.foxes());
            assert_eq!(after.geese().count(), before.geese().count());
            assert!(!m.is_capture());
            assert!(m.to().row() >= m.from().row(), "a goose moved back: {m}");
            // Exactly one goose left `from` for `to`.
            assert!(!after.geese().contains(m.from()));
            assert!(after.geese().contains(m.to()));
            assert_eq!((before.geese() ^ after.geese()).count(), 2);
        }
    }
    let expected_quiet = if resets_quiet(side, m) {
        0
    } else {
        before.quiet() + 1
    };
    assert_eq!(after.quiet(), expected_quiet, "quiet counter after {m}");
}

/// Plays a random game of `VARIANTS[v]` from its start, choosing a quiet move
/// (no capture, no forward step) with probability `quiet_bias` when there is
/// one, so that repetitions and long quiet runs happen. Checks every position
/// and move, and the game's repetition count against a plain scan.
fn random_game(v: usize, seed: u64, plies: usize, quiet_bias: f64) -> Option<Outcome> {
    let variant: Variant = VARIANTS[v].parse().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::start_of(variant);
    for ply in 0..plies {
        let p = *game.position();
        check_position(&p);
        let plain_count = game
            .positions()
            .iter()
            .filter(|q| q.foxes() == p.foxes() && q.geese() == p.geese() && q.side() == p.side())
            .count();
        assert_eq!(game.repetitions(), plain_count, "repetitions at ply {ply}");
        if ply % 8 == 3 {
            assert_eq!(perft(&p, 3), perft(&p.mirror(), 3), "mirror perft");
        }
        let over = game.outcome();
        let expected_over = p.outcome_without_history().or_else(|| {
            if plain_count >= 3 {
                Some(Outcome::draw(EndReason::Threefold))
            } else if p.quiet() >= FIFTY_MOVE_PLIES {
                Some(Outcome::draw(EndReason::FiftyMoves))
            } else {
                None
            }
        });
        assert_eq!(over, expected_over);
        if over.is_some() {
            assert!(game.play_str("c7-c6").is_err(), "no move after the end");
            break;
        }
        let moves = p.legal_moves();
        let quiet: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|&m| !resets_quiet(p.side(), m))
            .collect();
        let m = if !quiet.is_empty() && rng.random_bool(quiet_bias) {
            quiet[rng.random_range(0..quiet.len())]
        } else {
            moves[rng.random_range(0..moves.len())]
        };
        let played = game.play_str(&m.to_string()).expect("legal move plays");
        assert_eq!(played, m);
        check_step(&p, m, game.position());
    }
    // Replaying the move text from the start gives the same positions.
    let mut again = Game::start_of(variant);
    for word in game.moves_text().split_whitespace() {
        again.play_str(word).unwrap();
    }
    assert_eq!(again.positions(), game.positions());
    game.outcome()
}

/// The quiet-biased games above do reach both draw rules (so the property
/// covers them), and the plain random ones reach the wins.
#[test]
fn random_games_reach_every_end() {
    let mut seen = std::collections::HashSet::new();
    for seed in 0..120u64 {
        let v = (seed % VARIANTS.len() as u64) as usize;
        let bias = if seed % 2 == 0 { 0.97 } else { 0.0 };
        if let Some(o) = random_game(v, seed, 600, bias) {
            seen.insert(o.reason);
        }
    }
    for reason in [
        EndReason::Threefold,
        EndReason::FiftyMoves,
        EndReason::FewerThanNine,
        EndReason::FewerThanFour,
        EndReason::NoMoves,
    ] {
        assert!(seen.contains(&reason), "no random game ended by {reason}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_play_keeps_invariants(v in 0..VARIANTS.len(), seed in any::<u64>(), plies in 1usize..200) {
        random_game(v, seed, plies, 0.0);
    }

    #[test]
    fn quiet_play_keeps_invariants_and_counts_repetitions(
        v in 0..VARIANTS.len(),
        seed in any::<u64>(),
        bias in 0.7f64..1.0,
    ) {
        random_game(v, seed, 250, bias);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Arbitrary text never panics a parser, and every error message is
    /// non-empty.
    #[test]
    fn parsers_never_panic_on_arbitrary_text(text in ".{0,64}") {
        if let Err(e) = Setup::parse(&text) {
            prop_assert!(!e.to_string().is_empty());
        }
        let _ = MoveText::parse(&text);
        let _ = text.parse::<Variant>();
        let start = Position::start(Variant::two_foxes());
        if let Err(e) = start.parse_move(&text) {
            prop_assert!(!e.to_string().is_empty());
        }
        let mut game = Game::start_of(Variant::two_foxes());
        if let Err(e) = game.play_str(&text) {
            prop_assert!(e.to_string().starts_with("ply 1: "), "{}", e);
        }
    }

    /// Text that looks almost like a position string reaches every error of
    /// the parser; the error names a place inside the text.
    #[test]
    fn near_position_strings_never_panic(text in "[FG.x/]{0,40}( [fgx]{0,2}( [0-9a]{0,6})?)?") {
        for variant in ["two-foxes", "classic geese=17"] {
            let variant: Variant = variant.parse().unwrap();
            match Position::from_fen(&text, variant) {
                Ok(p) => {
                    check_position(&p);
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }

    /// Text that looks almost like a move: no panic; an error's character
    /// number lies inside the text (or just past its end).
    #[test]
    fn near_move_strings_never_panic(text in "[a-h0-9x\\-]{0,14}") {
        match MoveText::parse(&text) {
            Ok(t) => prop_assert!(!t.path.is_empty()),
            Err((column, why)) => {
                prop_assert!(column >= 1 && column <= text.len() + 1, "{column} {why}");
                prop_assert!(!why.is_empty());
            }
        }
        let start = Position::start(Variant::classic(13, true).unwrap());
        let _ = start.parse_move(&text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// Regression: the character numbers in position-string errors count
    /// characters, not bytes, so they still point at the bad character when a
    /// non-ASCII space (U+00A0, U+3000) comes before it. One character of the
    /// start position is replaced by a bad one; the error must name it.
    #[test]
    fn error_columns_point_at_the_bad_character(
        spaces in prop::collection::vec(
            prop::sample::select(vec!["", " ", "\u{a0}", "\u{3000}", "\t "]), 3),
        target in 0usize..35,
        bad in prop::sample::select(vec!['X', 'é', '#', 'ж']),
    ) {
        let fields = ["F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG", "f", "0"];
        // The content characters (no `/`), in order: 33 in the placement, then
        // the side and the counter.
        let mut text = String::new();
        let mut content = 0;
        let mut expected_column = 0;
        for (k, field) in fields.iter().enumerate() {
            text.push_str(if k == 0 && spaces[0].is_empty() { "" } else if k > 0 && spaces[k].is_empty() { " " } else { spaces[k] });
            for c in field.chars() {
                if c != '/' && content == target {
                    expected_column = text.chars().count() + 1;
                    text.push(bad);
                } else {
                    text.push(c);
                }
                if c != '/' {
                    content += 1;
                }
            }
        }
        let error = Setup::parse(&text).expect_err("one bad character");
        let column = match error {
            PositionError::BadPiece { column, ch, .. } => {
                prop_assert_eq!(ch, bad);
                column
            }
            PositionError::BadSide { column, .. } | PositionError::BadQuiet { column, .. } => column,
            other => panic!("unexpected error {other} for {text:?}"),
        };
        prop_assert_eq!(column, expected_column, "{:?}: {}", text, error);
        prop_assert_eq!(text.chars().nth(column - 1), Some(bad));
    }
}

#[test]
fn error_column_after_a_wide_space() {
    // U+3000 is one character (three bytes): `X` is character 21.
    let error = Setup::parse("\u{3000}F.F/.../......./GGGXGGG/GGGGGGG/GGG/GGG f 0").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("row 4, character 21 (point d4)"),
        "{error}"
    );
    let error = Setup::parse("F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG\u{a0}x 0").unwrap_err();
    assert!(error.to_string().contains("`x` at character 41"), "{error}");
}
