//! The move parser on any text, in positions reached by random play: a move
//! it accepts is legal there and prints back to itself.
//!
//! Input: byte 0 picks the variant, bytes 1..=8 pick up to 8 plies of play
//! (each a move index), the rest is the move text.
#![no_main]
use halatafl_rules::{Game, Variant};
use libfuzzer_sys::fuzz_target;

const VARIANTS: &[&str] = &["two-foxes", "two-foxes corner-links", "classic geese=15 sideways"];

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let variant: Variant = VARIANTS[data[0] as usize % VARIANTS.len()]
        .parse()
        .expect("a listed variant");
    let mut game = Game::start_of(variant);
    for &pick in &data[1..9] {
        if game.outcome().is_some() {
            break;
        }
        let moves = game.position().legal_moves();
        game.play_unchecked(moves[pick as usize % moves.len()]);
    }
    let Ok(text) = std::str::from_utf8(&data[9..]) else {
        return;
    };
    let position = game.position();
    if let Ok(mv) = position.parse_move(text) {
        assert!(position.is_legal(mv), "{text} accepted in {position}");
        let printed = mv.to_string();
        assert_eq!(position.parse_move(&printed).ok(), Some(mv), "{printed}");
    }
    let _ = game.clone().play_str(text);
});
