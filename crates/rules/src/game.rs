//! A game: a start position, the moves played, and the five end rules applied
//! in the order of docs/rules.md.

use crate::error::GameError;
use crate::moves::Move;
use crate::outcome::{EndReason, Outcome};
use crate::position::Position;
use crate::variant::Variant;

/// A game with its history. The history is a stack of positions, so `undo` is
/// a pop and search code can use a `Game` as its make/unmake stack.
#[derive(Clone, Debug)]
pub struct Game {
    positions: Vec<Position>,
    moves: Vec<Move>,
}

/// Plies without capture or forward goose step that draw the game (rule 5).
pub const FIFTY_MOVE_PLIES: u16 = 100;

impl Game {
    /// A game from `start` with no moves played; `start` may be any
    /// position, and repetitions count only from there.
    pub fn new(start: Position) -> Game {
        // Most games end within a few hundred plies: one allocation each.
        let mut positions = Vec::with_capacity(256);
        positions.push(start);
        Game {
            positions,
            moves: Vec::with_capacity(256),
        }
    }

    /// A game from the start position of `variant`.
    pub fn start_of(variant: Variant) -> Game {
        Game::new(Position::start(variant))
    }

    /// The current position.
    #[inline]
    pub fn position(&self) -> &Position {
        self.positions
            .last()
            .expect("a game always has its start position")
    }

    /// The position the game began at (not necessarily the variant's
    /// start).
    pub fn start_position(&self) -> &Position {
        &self.positions[0]
    }

    /// The moves played, first first.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Every position from the start to the current one.
    pub fn positions(&self) -> &[Position] {
        &self.positions
    }

    /// Number of moves played.
    #[inline]
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// How many times the current position has stood on the board in this game,
    /// counting now. Only positions since the last capture or forward goose step
    /// can repeat (captures lower the goose count and forward steps raise the
    /// geese's total row for good), so the scan stops at the quiet counter.
    pub fn repetitions(&self) -> usize {
        let current = self.position();
        let n = self.positions.len();
        let window = (current.quiet() as usize).min(n - 1);
        let mut count = 1;
        let mut back = 2;
        while back <= window {
            if self.positions[n - 1 - back].same_placement(current) {
                count += 1;
            }
            back += 2;
        }
        count
    }

    /// The outcome if the game is over, by rules 1 to 5 in order.
    pub fn outcome(&self) -> Option<Outcome> {
        let p = self.position();
        if let Some(o) = p.outcome_without_history() {
            return Some(o);
        }
        self.draw_by_history()
    }

    /// Rules 1 to 5 in order when the caller already knows whether the side to
    /// move has a legal move (it generated them): saves a second generation.
    #[inline]
    pub fn outcome_given(&self, has_legal_move: bool) -> Option<Outcome> {
        let p = self.position();
        if let Some(o) = p.material_outcome() {
            return Some(o);
        }
        if !has_legal_move {
            return Some(Outcome::win(p.side().other(), EndReason::NoMoves));
        }
        self.draw_by_history()
    }

    /// Rules 4 and 5 alone (for callers that have checked 1 to 3 already).
    pub fn draw_by_history(&self) -> Option<Outcome> {
        if self.repetitions() >= 3 {
            return Some(Outcome::draw(EndReason::Threefold));
        }
        if self.position().quiet() >= FIFTY_MOVE_PLIES {
            return Some(Outcome::draw(EndReason::FiftyMoves));
        }
        None
    }

    /// Plays a move known to be legal in the current position (hot path).
    #[inline]
    pub fn play_unchecked(&mut self, m: Move) {
        let mut next = *self.position();
        next.play_unchecked(m);
        self.positions.push(next);
        self.moves.push(m);
    }

    /// Plays `m` if the game is not over and `m` is legal.
    pub fn play(&mut self, m: Move) -> Result<(), GameError> {
        let ply = self.ply() + 1;
        if let Some(outcome) = self.outcome() {
            return Err(GameError::Over {
                ply,
                text: m.to_string(),
                outcome,
            });
        }
        let next = self
            .position()
            .play(m)
            .map_err(|error| GameError::Move { ply, error })?;
        self.positions.push(next);
        self.moves.push(m);
        Ok(())
    }

    /// Parses and plays one move string; errors carry the ply.
    pub fn play_str(&mut self, text: &str) -> Result<Move, GameError> {
        let ply = self.ply() + 1;
        if let Some(outcome) = self.outcome() {
            return Err(GameError::Over {
                ply,
                text: text.to_string(),
                outcome,
            });
        }
        let m = self
            .position()
            .parse_move(text)
            .map_err(|error| GameError::Move { ply, error })?;
        self.play_unchecked(m);
        Ok(m)
    }

    /// Takes back the last move.
    pub fn undo(&mut self) -> Option<Move> {
        let m = self.moves.pop()?;
        self.positions.pop();
        Some(m)
    }

    /// The moves in docs/rules.md notation, space-separated.
    pub fn moves_text(&self) -> String {
        let mut s = String::new();
        for (i, m) in self.moves.iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(&m.to_string());
        }
        s
    }
}
