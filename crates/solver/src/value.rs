//! What the solvers prove: a win for a side, or a draw.

use halatafl_rules::Side;
use std::fmt;

/// A game-theoretic value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// This side wins with best play.
    Win(Side),
    /// Neither side can force a win.
    Draw,
}

impl Value {
    /// `foxes`, `geese` or `draw` (the words of game CSVs).
    pub fn word(self) -> &'static str {
        match self {
            Value::Win(side) => side.name(),
            Value::Draw => "draw",
        }
    }

    /// +1 win, 0 draw, -1 loss for `side`.
    pub fn for_side(self, side: Side) -> i32 {
        match self {
            Value::Draw => 0,
            Value::Win(w) if w == side => 1,
            Value::Win(_) => -1,
        }
    }

    /// Reads back [`Value::word`].
    pub fn parse(word: &str) -> Option<Value> {
        match word {
            "foxes" => Some(Value::Win(Side::Foxes)),
            "geese" => Some(Value::Win(Side::Geese)),
            "draw" => Some(Value::Draw),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Win(side) => write!(f, "{side} win"),
            Value::Draw => f.write_str("draw"),
        }
    }
}
