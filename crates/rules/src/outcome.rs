//! How a game ends.

use crate::moves::Side;
use crate::variant::Variant;
use std::fmt;

/// Why a game ended, named as in docs/rules.md and the CLI's `result:` line.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum EndReason {
    /// Rule 1 in Two Foxes: fewer than nine geese.
    FewerThanNine,
    /// Rule 1 in the classic game: fewer than four geese.
    FewerThanFour,
    /// Rule 2: every pen point holds a goose.
    PenFilled,
    /// Rule 3: the side to move has no legal move and loses.
    NoMoves,
    /// Rule 4: the same position for the third time.
    Threefold,
    /// Rule 5: 100 plies without a capture or a forward goose step.
    FiftyMoves,
}

impl EndReason {
    /// Every end reason, in rule order.
    pub const ALL: [EndReason; 6] = [
        EndReason::FewerThanNine,
        EndReason::FewerThanFour,
        EndReason::PenFilled,
        EndReason::NoMoves,
        EndReason::Threefold,
        EndReason::FiftyMoves,
    ];

    pub(crate) fn few_geese(variant: Variant) -> EndReason {
        if variant.is_classic() {
            EndReason::FewerThanFour
        } else {
            EndReason::FewerThanNine
        }
    }

    /// The reason's name in docs/rules.md, CSV files and `result:` lines
    /// (`fewer-than-nine`, `pen-filled`, ...); [`str::parse`] reads it back.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::FewerThanNine => "fewer-than-nine",
            EndReason::FewerThanFour => "fewer-than-four",
            EndReason::PenFilled => "pen-filled",
            EndReason::NoMoves => "no-moves",
            EndReason::Threefold => "threefold",
            EndReason::FiftyMoves => "fifty-moves",
        }
    }
}

impl std::str::FromStr for EndReason {
    type Err = String;

    /// Reads back [`EndReason::name`].
    fn from_str(text: &str) -> Result<EndReason, String> {
        EndReason::ALL
            .into_iter()
            .find(|r| r.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = EndReason::ALL.iter().map(|r| r.name()).collect();
                format!(
                    "`{}` is not an end reason ({})",
                    crate::excerpt(text, None),
                    names.join(", ")
                )
            })
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of a finished game: the winner (`None` for a draw) and why.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Outcome {
    /// The side that won, or `None` for a draw.
    pub winner: Option<Side>,
    /// The end rule that decided it.
    pub reason: EndReason,
}

impl Outcome {
    /// `side` won by `reason`.
    pub fn win(side: Side, reason: EndReason) -> Outcome {
        Outcome {
            winner: Some(side),
            reason,
        }
    }

    /// A draw by `reason` (repetition or the fifty-move rule).
    pub fn draw(reason: EndReason) -> Outcome {
        Outcome {
            winner: None,
            reason,
        }
    }

    /// `foxes`, `geese` or `draw`: the CSV and `result:` word.
    pub fn result_word(self) -> &'static str {
        match self.winner {
            Some(side) => side.name(),
            None => "draw",
        }
    }

    /// +1 if `side` won, -1 if it lost, 0 for a draw.
    pub fn value_for(self, side: Side) -> i32 {
        match self.winner {
            None => 0,
            Some(w) if w == side => 1,
            Some(_) => -1,
        }
    }
}

/// `foxes (pen-filled)` style.
impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.result_word(), self.reason)
    }
}
