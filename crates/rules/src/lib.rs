//! Rules engine for Two Foxes (Halatafl) and classic Fox and Geese.
//!
//! `docs/rules.md` is the contract this crate implements. The layout
//! follows shakmaty: small `Copy` types, one concept per file; an unvalidated
//! [`Setup`] parsed from text and a validated [`Position`] built from it;
//! [`Position::play`] checks legality, [`Position::play_unchecked`] is the hot
//! path. Search and learning code live in other crates; this one knows nothing
//! of them.
//!
//! ```
//! use halatafl_rules::{perft, Game, Position, Variant};
//! let start = Position::start(Variant::two_foxes());
//! assert_eq!(perft(&start, 3), 778);
//! let mut game = Game::new(start);
//! game.play_str("c7-c6").unwrap();
//! assert_eq!(game.position().fen(), "..F/F../......./GGGGGGG/GGGGGGG/GGG/GGG g 1");
//! ```

#![warn(missing_docs)]

mod bitboard;
mod error;
mod game;
pub mod geometry;
mod moves;
mod outcome;
mod perft;
mod point;
mod position;
mod setup;
mod variant;
mod zobrist;

pub use bitboard::Bitboard;
pub use error::{excerpt, GameError, MoveError, PositionError};
pub use game::{Game, FIFTY_MOVE_PLIES};
pub use geometry::Direction;
pub use moves::{Move, MoveList, MoveText, Side, MAX_JUMPS};
pub use outcome::{EndReason, Outcome};
pub use perft::{divide, perft, perft_make_unmake};
pub use point::Point;
pub use position::Position;
pub use setup::Setup;
pub use variant::{Variant, VariantKind, PEN};

/// The start position string of Two Foxes.
pub const START_FEN: &str = "F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 0";
