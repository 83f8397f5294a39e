//! A line of play: what the page sends (a variant, a start, moves) and what
//! it gets back (every position on the way, the moves as paths of points,
//! the legal moves at the end, the result). The page never applies a rule
//! itself: every position it draws comes from the rules engine here.

use halatafl_rules::{
    excerpt, geometry::Geometry, Bitboard, Direction, Game, Move, Point, Position, Variant,
};
use serde::{Deserialize, Serialize};

/// A line as the page (or any client) sends it.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LineRequest {
    /// The variant in the words of `docs/rules.md` (`two-foxes`,
    /// `classic geese=13 sideways`); Two Foxes when left out.
    #[serde(default)]
    pub variant: Option<String>,
    /// A position string to start from; the variant's start when left out.
    /// Repetitions count from here, as in every position string.
    #[serde(default)]
    pub start: Option<String>,
    /// The moves played from the start, in the project's notation.
    #[serde(default)]
    pub moves: Vec<String>,
}

impl LineRequest {
    /// The variant named, or Two Foxes.
    pub fn variant(&self) -> Result<Variant, String> {
        match &self.variant {
            None => Ok(Variant::two_foxes()),
            Some(text) => text
                .parse()
                .map_err(|e| format!("variant `{}`: {e}", excerpt(text, None))),
        }
    }

    /// The game: the start, then every move checked by the rules, each
    /// error naming the move and why. At most `max_plies` moves.
    pub fn game(&self, max_plies: usize) -> Result<Game, String> {
        let variant = self.variant()?;
        let start = match &self.start {
            None => Position::start(variant),
            Some(fen) => Position::from_fen(fen, variant)
                .map_err(|e| format!("start `{}`: {e}", excerpt(fen, None)))?,
        };
        if self.moves.len() > max_plies {
            return Err(format!(
                "{} moves: a line holds at most {max_plies}",
                self.moves.len()
            ));
        }
        let mut game = Game::new(start);
        for (i, text) in self.moves.iter().enumerate() {
            game.play_str(text.trim())
                .map_err(|e| format!("move {} `{}`: {e}", i + 1, excerpt(text, None)))?;
        }
        Ok(game)
    }
}

/// A move as the page draws it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveView {
    /// The move in the project's notation (`c7-c6`, `d4xd6xf6`).
    pub text: String,
    /// The points it visits: the start, then every landing.
    pub path: Vec<String>,
    /// The geese it takes.
    pub captured: Vec<String>,
}

impl MoveView {
    /// The view of `m`.
    pub fn of(m: Move) -> MoveView {
        let mut path = vec![m.from().to_string()];
        if m.is_capture() {
            path.extend(m.landings().map(|p| p.to_string()));
        } else {
            path.push(m.to().to_string());
        }
        MoveView {
            text: m.to_string(),
            path,
            captured: names(m.captured()),
        }
    }
}

/// A position as the page draws it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PositionView {
    /// The position string (docs/rules.md).
    pub fen: String,
    /// `foxes` or `geese`: the side to move.
    pub side: &'static str,
    /// The points the foxes stand on.
    pub foxes: Vec<String>,
    /// The points the geese stand on.
    pub geese: Vec<String>,
}

impl PositionView {
    /// The view of `p`.
    pub fn of(p: &Position) -> PositionView {
        PositionView {
            fen: p.fen(),
            side: p.side().name(),
            foxes: names(p.foxes()),
            geese: names(p.geese()),
        }
    }
}

/// How a line ended, when it did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OutcomeView {
    /// `foxes`, `geese` or `draw`.
    pub result: &'static str,
    /// The end rule (`pen-filled`, `threefold`, ...).
    pub reason: &'static str,
}

/// The board's points and lines, so the page draws the variant's board
/// without knowing which diagonals are drawn.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoardView {
    /// The 33 points.
    pub points: Vec<String>,
    /// The lines between neighbours, each pair once.
    pub links: Vec<[String; 2]>,
    /// The pen (Two Foxes only): the points the geese must fill.
    pub pen: Vec<String>,
}

impl BoardView {
    /// The board of `variant`.
    pub fn of(variant: Variant) -> BoardView {
        let geometry = Geometry::get(variant.corner_links);
        let mut links = Vec::new();
        for p in Point::all() {
            for d in Direction::ALL {
                if let Some(q) = geometry.step(p, d) {
                    if p.index() < q.index() {
                        links.push([p.to_string(), q.to_string()]);
                    }
                }
            }
        }
        BoardView {
            points: Point::all().map(|p| p.to_string()).collect(),
            links,
            pen: if variant.is_classic() {
                Vec::new()
            } else {
                names(halatafl_rules::PEN)
            },
        }
    }
}

/// A whole line, as the rules engine played it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineView {
    /// The variant, in the words `LineRequest::variant` takes.
    pub variant: String,
    /// The positions: the start, then one after each move.
    pub positions: Vec<PositionView>,
    /// The moves played.
    pub moves: Vec<MoveView>,
    /// The legal moves at the end of the line (none once it is over).
    pub legal: Vec<MoveView>,
    /// The result, when an end rule has ended the line.
    pub outcome: Option<OutcomeView>,
    /// The board to draw.
    pub board: BoardView,
}

impl LineView {
    /// The view of `game`.
    pub fn of(game: &Game) -> LineView {
        let outcome = game.outcome();
        let legal = match outcome {
            Some(_) => Vec::new(),
            None => game
                .position()
                .legal_moves()
                .iter()
                .map(|&m| MoveView::of(m))
                .collect(),
        };
        let variant = game.position().variant();
        LineView {
            variant: variant.to_string(),
            positions: game.positions().iter().map(PositionView::of).collect(),
            moves: game.moves().iter().map(|&m| MoveView::of(m)).collect(),
            legal,
            outcome: outcome.map(|o| OutcomeView {
                result: o.result_word(),
                reason: o.reason.name(),
            }),
            board: BoardView::of(variant),
        }
    }
}

fn names(b: Bitboard) -> Vec<String> {
    b.map(|p| p.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(moves: &[&str]) -> LineRequest {
        LineRequest {
            moves: moves.iter().map(|m| m.to_string()).collect(),
            ..LineRequest::default()
        }
    }

    #[test]
    fn a_line_is_played_by_the_rules_and_drawn_from_them() {
        let game = request(&["c7-c6", "a3-a2"]).game(10);
        let err = game.unwrap_err();
        assert!(err.starts_with("move 2 `a3-a2`"), "{err}");
        let game = request(&["c7-c6", "d2-d1"]).game(10);
        assert!(game.is_err());
        let game = request(&["c7-c6"]).game(10).unwrap();
        let view = LineView::of(&game);
        assert_eq!(view.positions.len(), 2);
        assert_eq!(view.positions[1].fen, game.position().fen());
        assert_eq!(view.positions[1].foxes, ["c6", "e7"]);
        assert_eq!(view.positions[1].geese.len(), 20);
        assert_eq!(view.positions[1].side, "geese");
        assert_eq!(view.moves[0].path, ["c7", "c6"]);
        assert_eq!(view.legal.len(), game.position().legal_moves().len());
        assert!(view.outcome.is_none());
        // 33 points; the plain board's lines: 52 orthogonal, and both
        // diagonals of the 20 unit squares whose corners are all points.
        assert_eq!(view.board.points.len(), 33);
        assert_eq!(view.board.links.len(), 92);
        assert_eq!(view.board.pen.len(), 9);
    }

    #[test]
    fn jumps_list_every_landing_and_every_goose_taken() {
        let line = |start: &str, moves: &[&str]| LineRequest {
            variant: Some("classic geese=13".into()),
            start: Some(start.into()),
            moves: moves.iter().map(|m| m.to_string()).collect(),
        };
        // A bad start names the field.
        let bad = line("F../.../.......", &[]);
        assert!(
            bad.game(1).unwrap_err().starts_with("start `"),
            "{:?}",
            bad.game(1)
        );
        let start = ".../.../..FG.../....G../......./GGG/GGG f 0";
        let game = line(start, &["c5xe5xe3"]).game(4).unwrap();
        let view = LineView::of(&game);
        assert_eq!(view.moves[0].path, ["c5", "e5", "e3"]);
        assert_eq!(view.moves[0].captured, ["e4", "d5"]);
        assert!(view.board.pen.is_empty());
    }

    #[test]
    fn bad_variants_and_long_lines_are_refused_with_the_reason() {
        let r = LineRequest {
            variant: Some("chess".into()),
            ..LineRequest::default()
        };
        assert!(r.game(1).unwrap_err().starts_with("variant `chess`"));
        let long = request(&["c7-c6", "a3-a2", "c6-c7"]);
        assert!(long.game(2).unwrap_err().contains("at most 2"));
    }
}
