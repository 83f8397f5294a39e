//! Opening books: matches begun from chosen openings instead of random ones.
//!
//! A book is a text file with one opening per line: the moves from the
//! variant's start position in docs/rules.md notation, separated by spaces
//! (the `opening_moves` or a prefix of the `moves` column of a game CSV).
//! Blank lines and lines starting with `#` are skipped. Openings are move
//! lists rather than position strings on purpose: the game keeps its
//! history, so threefold repetition and the fifty-move count are those of
//! the real game, and every game row stays replayable from the start.
//!
//! A match with a book plays opening `k` of the book for its games `2k+1`
//! and `2k+2`, once with each agent on each side, as with random openings;
//! so a book of N openings serves at most 2N games, and no opening is played
//! twice by the same agent on the same side. The use it was made for: a
//! *test bed* of positions cut from real games some plies before a known
//! decision (e.g. the foxes' shut-ins), where a change aimed at those
//! positions shows in far fewer games than from the start.

use crate::ArenaError;
use halatafl_rules::{Game, Variant};
use std::path::Path;

/// The openings of a book, in file order, each a game from the variant's
/// start with the book's moves played.
#[derive(Clone, Debug)]
pub struct OpeningBook {
    /// Where the book was read from, for messages and match headers.
    pub source: String,
    /// The openings, in file order.
    pub openings: Vec<Game>,
}

impl OpeningBook {
    /// Reads a book file for games of `variant`.
    pub fn read(path: &Path, variant: Variant) -> Result<OpeningBook, ArenaError> {
        let text = std::fs::read_to_string(path).map_err(|source| ArenaError::Io {
            path: path.display().to_string(),
            source,
        })?;
        OpeningBook::parse(&text, &path.display().to_string(), variant)
    }

    /// Parses a book's text; `source` names it in errors. Every opening
    /// must be legal from the start of `variant` and leave the game going;
    /// an error names the line, the ply and what is wrong.
    pub fn parse(text: &str, source: &str, variant: Variant) -> Result<OpeningBook, ArenaError> {
        let mut openings = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line_no = index as u64 + 1;
            let moves = line.trim();
            if moves.is_empty() || moves.starts_with('#') {
                continue;
            }
            let bad = |why: String| ArenaError::BadRow {
                path: source.to_string(),
                line: line_no,
                why,
            };
            let mut game = Game::start_of(variant);
            for text in moves.split_whitespace() {
                game.play_str(text)
                    .map_err(|e| bad(format!("{e} (in the {variant} game from its start)")))?;
            }
            if let Some(outcome) = game.outcome() {
                return Err(bad(format!(
                    "the opening ends the game ({outcome}) after {} plies; a book opening must \
                     leave a move to play",
                    game.ply()
                )));
            }
            openings.push(game);
        }
        if openings.is_empty() {
            return Err(ArenaError::Config(format!(
                "book {source}: no openings (one move list per line; blank lines and lines \
                 starting with # are skipped)"
            )));
        }
        Ok(OpeningBook {
            source: source.to_string(),
            openings,
        })
    }

    /// The number of openings.
    pub fn len(&self) -> usize {
        self.openings.len()
    }

    /// Whether the book has no openings (never true of a parsed book).
    pub fn is_empty(&self) -> bool {
        self.openings.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_move_lists_and_skips_comments_and_blank_lines() {
        let text = "# shut-in test bed\n\nc7-c6 f4-f5\n  e7-d6  \n";
        let book = OpeningBook::parse(text, "t.book", Variant::two_foxes()).unwrap();
        assert_eq!(book.len(), 2);
        assert_eq!(book.openings[0].moves_text(), "c7-c6 f4-f5");
        assert_eq!(book.openings[1].ply(), 1);
        // The history is kept: the position after the moves, foxes to move.
        assert_eq!(
            book.openings[0].position().side(),
            halatafl_rules::Side::Foxes
        );
    }

    #[test]
    fn names_the_line_and_ply_of_a_bad_opening() {
        let two_foxes = Variant::two_foxes();
        let illegal = OpeningBook::parse("c7-c6\nc7-c6 a1-a2\n", "x.book", two_foxes)
            .unwrap_err()
            .to_string();
        assert!(illegal.starts_with("x.book, line 2: ply 2:"), "{illegal}");
        let garbage = OpeningBook::parse("c7-c6 zz\n", "x.book", two_foxes)
            .unwrap_err()
            .to_string();
        assert!(garbage.contains("line 1: ply 2"), "{garbage}");
        let empty = OpeningBook::parse("# nothing\n\n", "x.book", two_foxes)
            .unwrap_err()
            .to_string();
        assert!(empty.contains("no openings"), "{empty}");
    }

    #[test]
    fn refuses_an_opening_that_ends_the_game() {
        // A fox and a goose shuffle: the position after ply 2 (fox on c6,
        // goose on a5) stands again after plies 6 and 10, a draw by
        // threefold repetition at ply 10.
        let variant = Variant::two_foxes();
        let nine = "c7-c6 a4-a5 c6-c7 a5-b5 c7-c6 b5-a5 c6-c7 a5-b5 c7-c6";
        assert!(OpeningBook::parse(nine, "ok.book", variant).is_ok());
        let ten = format!("# a comment line first\n{nine} b5-a5");
        let err = OpeningBook::parse(&ten, "over.book", variant)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("over.book, line 2: the opening ends the game")
                && err.contains("threefold")
                && err.contains("after 10 plies"),
            "{err}"
        );
    }

    #[test]
    fn a_match_plays_each_opening_once_per_side_and_refuses_what_it_cannot_serve() {
        use crate::{match_jobs, MatchConfig};
        let variant = Variant::two_foxes();
        let book = OpeningBook::parse("c7-c6\ne7-e6 a4-a5\n", "two.book", variant).unwrap();
        let config = MatchConfig {
            games: 4,
            book: Some(std::sync::Arc::new(book)),
            ..MatchConfig::default()
        };
        let jobs = match_jobs("a", "b", &config, 1).unwrap();
        let starts: Vec<(usize, String, &str)> = jobs
            .iter()
            .map(|j| (j.opening, j.start.moves_text(), j.foxes.as_str()))
            .collect();
        assert_eq!(
            starts,
            [
                (0, "c7-c6".to_string(), "a"),
                (0, "c7-c6".to_string(), "b"),
                (1, "e7-e6 a4-a5".to_string(), "a"),
                (1, "e7-e6 a4-a5".to_string(), "b"),
            ]
        );
        // Odd game counts end on a single game of the last opening used.
        assert_eq!(
            match_jobs(
                "a",
                "b",
                &MatchConfig {
                    games: 3,
                    ..config.clone()
                },
                1
            )
            .unwrap()
            .len(),
            3
        );
        for (bad, why) in [
            (
                MatchConfig {
                    games: 5,
                    ..config.clone()
                },
                "its 2 openings make at most 4 games",
            ),
            (
                MatchConfig {
                    openings: 6,
                    ..config.clone()
                },
                "both choose the openings",
            ),
            (
                MatchConfig {
                    variant: "classic geese=13".parse().unwrap(),
                    ..config.clone()
                },
                "holds two-foxes openings but the match plays classic",
            ),
        ] {
            let err = match_jobs("a", "b", &bad, 1).unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
        }
    }
}
