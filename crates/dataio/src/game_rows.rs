//! The per-game CSV row and the evaluation row of runs. The game's columns
//! are listed once, in `game_columns!`, which writes both structs, the
//! conversions between them and the column names, so a column added to
//! games reaches evaluation rows too.

use serde::{Deserialize, Serialize};

/// Defines [`GameRow`] with the game columns given, [`EvalRow`] with
/// `generation` and `opponent` in front of the same columns, the
/// conversions between them and [`GameRow::COLUMNS`].
macro_rules! game_columns {
    ($($(#[$doc:meta])* $field:ident: $ty:ty,)*) => {
        /// One finished game, as one CSV row. `moves` holds the whole game
        /// from the variant's start position (opening plies included) in
        /// the notation of `docs/rules.md`, so `halatafl replay` can replay
        /// it; `opening_moves` is its random prefix.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub struct GameRow {
            $($(#[$doc])* pub $field: $ty,)*
        }

        /// An evaluation game of a run (`eval.csv`): the generation evaluated,
        /// the opponent's name in the config, then a game row's columns.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        pub struct EvalRow {
            /// The generation whose checkpoint played.
            pub generation: u32,
            /// The opponent as the config names it (`previous`, a spec).
            pub opponent: String,
            $($(#[$doc])* pub $field: $ty,)*
        }

        impl GameRow {
            /// The CSV header, in column order.
            pub const COLUMNS: &'static [&'static str] = &[$(stringify!($field)),*];
        }

        impl EvalRow {
            /// The evaluation row of game `r`.
            pub fn new(generation: u32, opponent: &str, r: &GameRow) -> EvalRow {
                EvalRow {
                    generation,
                    opponent: opponent.to_string(),
                    $($field: r.$field.clone(),)*
                }
            }

            /// The arena's record of the game (for summaries and ratings).
            pub fn game_row(&self) -> GameRow {
                GameRow {
                    $($field: self.$field.clone(),)*
                }
            }
        }
    };
}

game_columns! {
    /// 1-based game number, in game order.
    game: usize,
    /// Index of the opening; each opening is played once with each agent on each side.
    opening: usize,
    /// The random opening plies (empty without `--openings`).
    opening_moves: String,
    /// Spec of the agent playing the foxes.
    foxes: String,
    /// Spec of the agent playing the geese.
    geese: String,
    /// `foxes`, `geese` or `draw`.
    result: String,
    /// The end rule: `pen-filled`, `no-moves`, `fewer-than-nine`, ...
    reason: String,
    /// Plies in the whole game, opening included.
    plies: usize,
    /// Every move of the game, space-separated.
    moves: String,
    /// Thinking time of the foxes' agent over the game.
    foxes_seconds: f64,
    /// Thinking time of the geese's agent over the game.
    geese_seconds: f64,
    /// The game's seed (agent seeds are derived from it).
    seed: u64,
    /// The variant, as `Variant`'s Display (`two-foxes`, `classic geese=13`).
    variant: String,
}

/// A self-play game of a run (`shards/gen_NNNN/games.csv`, and
/// `w<worker>-<seq>.games.csv` beside an asynchronous worker's shard): the
/// game columns that apply, `generation` in front, and `start` for a game
/// that began at a position drawn from earlier games. Self-play ends games
/// the rules have not ended yet (`resigned`, `max-plies`), so these rows
/// are for reading and replaying, not for the arena's summaries.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfPlayGameRow {
    /// The generation the samples are for (played by checkpoint `generation - 1`).
    pub generation: u32,
    /// The game's number in its generation (or worker piece), from 1.
    pub game: usize,
    /// Who played the foxes: `selfplay` (the network) or the opponent's spec.
    pub foxes: String,
    /// Who played the geese.
    pub geese: String,
    /// `foxes`, `geese` or `draw` (a game cut at the ply limit is a draw).
    pub result: String,
    /// The end rule, `resigned` or `max-plies`.
    pub reason: String,
    /// Plies played.
    pub plies: usize,
    /// Every move, space-separated, from `start`.
    pub moves: String,
    /// The start position string; empty for the variant's start.
    pub start: String,
    /// The variant.
    pub variant: String,
}

impl GameRow {
    /// The row of a finished game: `start` is where it began (its moves are
    /// the opening), `game` the whole game; the outcome is read from it.
    #[allow(clippy::too_many_arguments)]
    pub fn from_game(
        number: usize,
        opening: usize,
        start: &halatafl_rules::Game,
        game: &halatafl_rules::Game,
        foxes: String,
        geese: String,
        seconds: [f64; 2],
        seed: u64,
    ) -> GameRow {
        let outcome = game.outcome().expect("a row is made for a finished game");
        GameRow {
            game: number,
            opening,
            opening_moves: start.moves_text(),
            foxes,
            geese,
            result: outcome.result_word().to_string(),
            reason: outcome.reason.to_string(),
            plies: game.ply(),
            moves: game.moves_text(),
            foxes_seconds: seconds[0],
            geese_seconds: seconds[1],
            seed,
            variant: start.position().variant().to_string(),
        }
    }

    /// Moves `side` chose in this game: the foxes play the even plies (they
    /// move first), the geese the odd ones; the random opening plies are
    /// nobody's.
    pub fn moves_by(&self, side: halatafl_rules::Side) -> usize {
        let opening = self.opening_plies().min(self.plies);
        let foxes_total = self.plies.div_ceil(2);
        let foxes_opening = opening.div_ceil(2);
        match side {
            halatafl_rules::Side::Foxes => foxes_total - foxes_opening,
            halatafl_rules::Side::Geese => (self.plies - foxes_total) - (opening - foxes_opening),
        }
    }

    /// The game replayed by the rules from its variant's start, every move
    /// of `moves` checked; the error names the ply and why (the caller adds
    /// the file and game).
    pub fn replay(&self) -> Result<halatafl_rules::Game, String> {
        let variant: halatafl_rules::Variant = self.variant.parse().map_err(|e| {
            format!(
                "variant `{}`: {e}",
                halatafl_rules::excerpt(&self.variant, None)
            )
        })?;
        let mut game = halatafl_rules::Game::start_of(variant);
        for (i, text) in self.moves.split_whitespace().enumerate() {
            game.play_str(text)
                .map_err(|e| format!("ply {}: {e}", i + 1))?;
        }
        Ok(game)
    }

    /// Plies of the random opening that starts `moves`.
    pub fn opening_plies(&self) -> usize {
        self.opening_moves.split_whitespace().count()
    }

    /// Thinking time of the agent that played `side`.
    pub fn seconds_of(&self, side: halatafl_rules::Side) -> f64 {
        match side {
            halatafl_rules::Side::Foxes => self.foxes_seconds,
            halatafl_rules::Side::Geese => self.geese_seconds,
        }
    }

    /// What a reader checks beyond the columns' types: the result, the end
    /// reason and the variant are words halatafl writes, the result fits
    /// the reason (a draw by repetition or the fifty-move rule, a win
    /// otherwise), and the thinking times are finite and not negative.
    pub fn check(&self) -> Result<(), String> {
        use halatafl_rules::{excerpt, EndReason, Variant};
        let reason: EndReason = self.reason.parse().map_err(|e| format!("reason: {e}"))?;
        let draw_reason = matches!(reason, EndReason::Threefold | EndReason::FiftyMoves);
        match (self.result.as_str(), draw_reason) {
            ("draw", true) | ("foxes" | "geese", false) => {}
            ("draw" | "foxes" | "geese", _) => {
                return Err(format!(
                    "result `{}` cannot end by `{}`",
                    self.result, self.reason
                ))
            }
            (other, _) => {
                return Err(format!(
                    "result `{}`: expected `foxes`, `geese` or `draw`",
                    excerpt(other, None)
                ))
            }
        }
        self.variant
            .parse::<Variant>()
            .map_err(|e| format!("variant `{}`: {e}", excerpt(&self.variant, None)))?;
        for (column, seconds) in [
            ("foxes_seconds", self.foxes_seconds),
            ("geese_seconds", self.geese_seconds),
        ] {
            if !(seconds.is_finite() && seconds >= 0.0) {
                return Err(format!(
                    "{column} {seconds}: expected a finite number of seconds, 0 or more"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluation_rows_are_game_rows_with_a_generation_and_an_opponent() {
        let game = GameRow {
            game: 3,
            opening: 1,
            opening_moves: "c7-c6".into(),
            foxes: "random".into(),
            geese: "alphabeta:depth=1".into(),
            result: "geese".into(),
            reason: "pen-filled".into(),
            plies: 40,
            moves: "c7-c6 a3-a4".into(),
            foxes_seconds: 0.5,
            geese_seconds: 1.5,
            seed: 9,
            variant: "two-foxes".into(),
        };
        let eval = EvalRow::new(4, "previous", &game);
        assert_eq!((eval.generation, eval.opponent.as_str()), (4, "previous"));
        assert_eq!(eval.game_row(), game);
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(&eval).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
        assert_eq!(header[..2], ["generation", "opponent"]);
        assert_eq!(header[2..], *GameRow::COLUMNS);
    }
}
