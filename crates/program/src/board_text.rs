//! The cross-shaped board as text, for people (`halatafl play`, the engine's
//! `d` command).
//!
//! ```text
//!         a   b   c   d   e   f   g
//!
//!   7             F---+---F            7   pen: c5-e7
//!                 | X | X |
//!   6             +---+---+            6
//! ```
//!
//! Every line of the board is drawn: `---` and `|` join neighbours, `X`
//! marks a unit square with both diagonals; with `corner-links` the four
//! inner-corner diagonals appear as `/` or `\`. Empty pen points are `+`
//! so the geese's goal stays visible.

use halatafl_rules::{Point, Position, PEN};

const LEFT: usize = 8;
const STEP: usize = 4;

fn on(file: i32, row: i32) -> bool {
    Point::new(file, row).is_some()
}

fn point_char(pos: &Position, p: Point) -> char {
    if pos.foxes().contains(p) {
        'F'
    } else if pos.geese().contains(p) {
        'G'
    } else if PEN.contains(p) && pos.variant().has_pen() {
        '+'
    } else {
        '.'
    }
}

/// The board with coordinates and a legend, one string of several lines.
pub fn draw_board(pos: &Position) -> String {
    let width = LEFT + 6 * STEP + 1;
    let files = "abcdefg";
    let mut header = " ".repeat(LEFT);
    for (i, f) in files.chars().enumerate() {
        header.push(f);
        if i < 6 {
            header.push_str(&" ".repeat(STEP - 1));
        }
    }
    let mut out = format!("{header}\n\n");
    let corner_links = pos.variant().corner_links;
    for row in (0..7).rev() {
        let mut line: Vec<char> = " ".repeat(width).chars().collect();
        let label = format!("  {}", row + 1);
        for (i, c) in label.chars().enumerate() {
            line[i] = c;
        }
        for file in 0..7 {
            let Some(p) = Point::new(file, row) else {
                continue;
            };
            let col = LEFT + file as usize * STEP;
            line[col] = point_char(pos, p);
            if on(file + 1, row) {
                for c in &mut line[col + 1..col + STEP] {
                    *c = '-';
                }
            }
        }
        let mut text: String = line.into_iter().collect();
        text = text.trim_end().to_string();
        let pad = width.saturating_sub(text.chars().count()) + 3;
        text.push_str(&" ".repeat(pad));
        text.push_str(&format!("{}", row + 1));
        if row == 6 && pos.variant().has_pen() {
            text.push_str("   pen: c5-e7 (+ = empty pen point)");
        }
        out.push_str(text.trim_end());
        out.push('\n');
        if row == 0 {
            break;
        }
        // The lines between this row and the one below.
        let mut between: Vec<char> = " ".repeat(width).chars().collect();
        for file in 0..7 {
            let col = LEFT + file as usize * STEP;
            if on(file, row) && on(file, row - 1) {
                between[col] = '|';
            }
            if file == 6 {
                continue;
            }
            let (bl, br, tl, tr) = (
                on(file, row - 1),
                on(file + 1, row - 1),
                on(file, row),
                on(file + 1, row),
            );
            between[col + STEP / 2] = if bl && br && tl && tr {
                'X'
            } else if corner_links && bl && tr {
                '/'
            } else if corner_links && tl && br {
                '\\'
            } else {
                ' '
            };
        }
        let text: String = between.into_iter().collect();
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&header);
    out.push('\n');
    out.push_str("  F fox   G goose   . empty\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_rules::Variant;

    #[test]
    fn start_board() {
        let text = draw_board(&Position::start(Variant::two_foxes()));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].trim(), "a   b   c   d   e   f   g");
        assert!(lines[2].starts_with("  7             F---+---F"), "{text}");
        assert!(lines[2].contains("pen: c5-e7"));
        assert_eq!(lines[3].trim(), "| X | X |");
        // Row 5 spans the whole width: c5, d5, e5 are empty pen points.
        assert!(
            lines[6].starts_with("  5     .---.---+---+---+---.---."),
            "{text}"
        );
        assert_eq!(lines[7].trim(), "| X | X | X | X | X | X |");
        assert!(lines[8].starts_with("  4     G---G---G---G---G---G---G"));
        assert!(lines[14].starts_with("  1             G---G---G"));
        // Without corner links the inner corners have no diagonal.
        assert!(!text.contains('/') && !text.contains('\\'));
        assert_eq!(text.matches('F').count(), 2 + 1); // two foxes and the legend
    }

    #[test]
    fn corner_links_and_classic() {
        let v = Variant::two_foxes().with_corner_links(true);
        let text = draw_board(&Position::start(v));
        let lines: Vec<&str> = text.lines().collect();
        // Between rows 6 and 5: c6-b5 is `/` left of c, e6-f5 is `\` right of e.
        assert_eq!(lines[5].trim(), "/ | X | X | \\");
        // Between rows 3 and 2: b3-c2 is `\`, f3-e2 is `/`.
        assert_eq!(lines[11].trim(), "\\ | X | X | /");
        let classic = Position::start(Variant::classic(13, false).unwrap());
        let text = draw_board(&classic);
        assert!(!text.contains('+') && !text.contains("pen:"), "{text}");
    }
}
