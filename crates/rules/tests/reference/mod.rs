//! A second, deliberately plain implementation of docs/rules.md, used only to check
//! the engine. It shares nothing with `halatafl_rules`: points are `(file, row)`
//! pairs (both 0-based), the board is a 7x7 array of cells, lines are decided by
//! looking at the drawing (a diagonal exists only inside a unit square whose four
//! corners are points, unless `corner-links`), and moves are found with plain
//! loops and a depth-first search over copies of the board. Slow on purpose:
//! every rule is one readable `if`.
#![allow(dead_code)]

pub const EMPTY: u8 = 0;
pub const FOX: u8 = 1;
pub const GOOSE: u8 = 2;

/// The eight directions as (file, row) offsets.
pub const DIRECTIONS: [(i32, i32); 8] = [
    (0, 1),
    (1, 1),
    (1, 0),
    (1, -1),
    (0, -1),
    (-1, -1),
    (-1, 0),
    (-1, 1),
];

/// Which game, with its table options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    pub classic: bool,
    pub corner_links: bool,
    pub sideways: bool,
    /// Geese at the start: a position never holds more.
    pub max_geese: usize,
}

impl Rules {
    /// Reads `two-foxes [corner-links]` or
    /// `classic geese=N [sideways] [corner-links]`.
    pub fn parse(text: &str) -> Rules {
        let mut words = text.split_whitespace();
        let mut rules = match words.next() {
            Some("two-foxes") => Rules {
                classic: false,
                corner_links: false,
                sideways: true,
                max_geese: 20,
            },
            Some("classic") => Rules {
                classic: true,
                corner_links: false,
                sideways: false,
                max_geese: 13,
            },
            other => panic!("reference: unknown variant {other:?}"),
        };
        for w in words {
            if w == "corner-links" {
                rules.corner_links = true;
            } else if w == "sideways" {
                assert!(rules.classic, "sideways is a classic option");
                rules.sideways = true;
            } else if let Some(n) = w.strip_prefix("geese=") {
                assert!(rules.classic, "geese=N is a classic option");
                rules.max_geese = n.parse().unwrap();
            } else {
                panic!("reference: unknown option {w}");
            }
        }
        rules
    }

    pub fn foxes(&self) -> usize {
        if self.classic {
            1
        } else {
            2
        }
    }

    pub fn geese_needed(&self) -> usize {
        if self.classic {
            4
        } else {
            9
        }
    }
}

/// Whether (file, row) is one of the 33 points: inside the 7x7 grid and in the
/// middle three files or the middle three rows.
pub fn on_board(file: i32, row: i32) -> bool {
    let in_grid = (0..7).contains(&file) && (0..7).contains(&row);
    in_grid && ((2..=4).contains(&file) || (2..=4).contains(&row))
}

/// Whether a line joins the two points.
pub fn joined(rules: &Rules, a: (i32, i32), b: (i32, i32)) -> bool {
    if !on_board(a.0, a.1) || !on_board(b.0, b.1) {
        return false;
    }
    let (df, dr) = (b.0 - a.0, b.1 - a.1);
    if df.abs() > 1 || dr.abs() > 1 || (df == 0 && dr == 0) {
        return false;
    }
    if df == 0 || dr == 0 {
        return true; // horizontal and vertical neighbours always are
    }
    if rules.corner_links {
        return true;
    }
    // The unit square that has a and b as opposite corners.
    let left = a.0.min(b.0);
    let bottom = a.1.min(b.1);
    on_board(left, bottom)
        && on_board(left + 1, bottom)
        && on_board(left, bottom + 1)
        && on_board(left + 1, bottom + 1)
}

pub fn name(p: (i32, i32)) -> String {
    format!("{}{}", (b'a' + p.0 as u8) as char, p.1 + 1)
}

/// A position: `cell[file][row]`, the side to move and the quiet-ply counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    pub cell: [[u8; 7]; 7],
    pub foxes_to_move: bool,
    pub quiet: u32,
}

/// The rows of a position string, top first: (row index, first file, width).
const FEN_ROWS: [(i32, i32, i32); 7] = [
    (6, 2, 3),
    (5, 2, 3),
    (4, 0, 7),
    (3, 0, 7),
    (2, 0, 7),
    (1, 2, 3),
    (0, 2, 3),
];

impl Board {
    /// Reads a well-formed position string (test data only: panics otherwise).
    pub fn parse(text: &str) -> Board {
        let fields: Vec<&str> = text.split_whitespace().collect();
        assert!(fields.len() == 2 || fields.len() == 3, "bad fen {text}");
        let rows: Vec<&str> = fields[0].split('/').collect();
        assert_eq!(rows.len(), 7, "bad fen {text}");
        let mut cell = [[EMPTY; 7]; 7];
        for (chars, &(row, first, width)) in rows.iter().zip(FEN_ROWS.iter()) {
            assert_eq!(chars.len() as i32, width, "bad fen {text}");
            for (i, c) in chars.chars().enumerate() {
                cell[(first + i as i32) as usize][row as usize] = match c {
                    'F' => FOX,
                    'G' => GOOSE,
                    '.' => EMPTY,
                    _ => panic!("bad fen {text}"),
                };
            }
        }
        let foxes_to_move = match fields[1] {
            "f" => true,
            "g" => false,
            _ => panic!("bad fen {text}"),
        };
        let quiet = fields.get(2).map_or(0, |q| q.parse().unwrap());
        Board {
            cell,
            foxes_to_move,
            quiet,
        }
    }

    pub fn fen(&self) -> String {
        let mut rows = Vec::new();
        for &(row, first, width) in FEN_ROWS.iter() {
            let mut s = String::new();
            for f in first..first + width {
                s.push(match self.get((f, row)) {
                    FOX => 'F',
                    GOOSE => 'G',
                    _ => '.',
                });
            }
            rows.push(s);
        }
        format!(
            "{} {} {}",
            rows.join("/"),
            if self.foxes_to_move { 'f' } else { 'g' },
            self.quiet
        )
    }

    pub fn get(&self, p: (i32, i32)) -> u8 {
        self.cell[p.0 as usize][p.1 as usize]
    }

    fn set(&mut self, p: (i32, i32), v: u8) {
        self.cell[p.0 as usize][p.1 as usize] = v;
    }

    pub fn points_with(&self, piece: u8) -> Vec<(i32, i32)> {
        let mut out = Vec::new();
        for row in 0..7 {
            for file in 0..7 {
                if on_board(file, row) && self.get((file, row)) == piece {
                    out.push((file, row));
                }
            }
        }
        out
    }

    pub fn geese(&self) -> usize {
        self.points_with(GOOSE).len()
    }
}

/// A move: the start point and every later point (one for a step, every
/// landing point for a jump chain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefMove {
    pub path: Vec<(i32, i32)>,
    pub jump: bool,
}

impl RefMove {
    pub fn text(&self) -> String {
        let names: Vec<String> = self.path.iter().map(|&p| name(p)).collect();
        names.join(if self.jump { "x" } else { "-" })
    }
}

/// Every chain of the fox now on `path.last()`, which started on `path[0]`.
/// `board` already has the captured geese removed and the fox on its current
/// point. Two Foxes keeps only chains that cannot go on; classic keeps every
/// chain (the fox may stop after any jump).
fn chains(rules: &Rules, board: &Board, path: &mut Vec<(i32, i32)>, out: &mut Vec<RefMove>) {
    let cur = *path.last().unwrap();
    let mut went_on = false;
    for (df, dr) in DIRECTIONS {
        let over = (cur.0 + df, cur.1 + dr);
        let land = (cur.0 + 2 * df, cur.1 + 2 * dr);
        if !joined(rules, cur, over) || !joined(rules, over, land) {
            continue;
        }
        if board.get(over) != GOOSE || board.get(land) != EMPTY {
            continue;
        }
        went_on = true;
        let mut next = board.clone();
        next.set(cur, EMPTY);
        next.set(over, EMPTY); // the goose leaves the board at once
        next.set(land, FOX);
        path.push(land);
        if rules.classic {
            out.push(RefMove {
                path: path.clone(),
                jump: true,
            });
        }
        chains(rules, &next, path, out);
        path.pop();
    }
    if !rules.classic && !went_on && path.len() > 1 {
        out.push(RefMove {
            path: path.clone(),
            jump: true,
        });
    }
}

/// Every legal move.
pub fn legal_moves(rules: &Rules, board: &Board) -> Vec<RefMove> {
    let mut out = Vec::new();
    if board.foxes_to_move {
        for fox in board.points_with(FOX) {
            chains(rules, board, &mut vec![fox], &mut out);
        }
        if !out.is_empty() && !rules.classic {
            return out; // captures are compulsory
        }
        for fox in board.points_with(FOX) {
            for (df, dr) in DIRECTIONS {
                let to = (fox.0 + df, fox.1 + dr);
                if joined(rules, fox, to) && board.get(to) == EMPTY {
                    out.push(RefMove {
                        path: vec![fox, to],
                        jump: false,
                    });
                }
            }
        }
    } else {
        for goose in board.points_with(GOOSE) {
            for (df, dr) in DIRECTIONS {
                let allowed = dr == 1 || (dr == 0 && rules.sideways);
                let to = (goose.0 + df, goose.1 + dr);
                if allowed && joined(rules, goose, to) && board.get(to) == EMPTY {
                    out.push(RefMove {
                        path: vec![goose, to],
                        jump: false,
                    });
                }
            }
        }
    }
    out
}

/// Sorted move strings.
pub fn move_texts(rules: &Rules, board: &Board) -> Vec<String> {
    let mut v: Vec<String> = legal_moves(rules, board).iter().map(|m| m.text()).collect();
    v.sort();
    v
}

/// The position after a legal move, with the quiet counter of docs/rules.md: reset
/// by a capture or a goose step that gains a row, else one more.
pub fn apply(board: &Board, m: &RefMove) -> Board {
    let mut next = board.clone();
    let from = m.path[0];
    let to = *m.path.last().unwrap();
    let piece = board.get(from);
    next.set(from, EMPTY);
    if m.jump {
        for pair in m.path.windows(2) {
            let over = ((pair[0].0 + pair[1].0) / 2, (pair[0].1 + pair[1].1) / 2);
            assert_eq!(next.get(over), GOOSE);
            next.set(over, EMPTY);
        }
    }
    next.set(to, piece);
    let forward = piece == GOOSE && to.1 > from.1;
    next.quiet = if m.jump || forward {
        0
    } else {
        board.quiet + 1
    };
    next.foxes_to_move = !board.foxes_to_move;
    next
}

/// End rules 1 and 2.
pub fn material_outcome(rules: &Rules, board: &Board) -> Option<String> {
    if board.geese() < rules.geese_needed() {
        let why = if rules.classic {
            "fewer-than-four"
        } else {
            "fewer-than-nine"
        };
        return Some(format!("foxes ({why})"));
    }
    if !rules.classic {
        let mut pen_full = true;
        for file in 2..=4 {
            for row in 4..=6 {
                pen_full &= board.get((file, row)) == GOOSE;
            }
        }
        if pen_full {
            return Some("geese (pen-filled)".to_string());
        }
    }
    None
}

/// End rules 1 to 3 in order, as `winner (reason)`, or `ongoing`.
pub fn outcome(rules: &Rules, board: &Board) -> String {
    if let Some(o) = material_outcome(rules, board) {
        return o;
    }
    if legal_moves(rules, board).is_empty() {
        let winner = if board.foxes_to_move {
            "geese"
        } else {
            "foxes"
        };
        return format!("{winner} (no-moves)");
    }
    "ongoing".to_string()
}

/// docs/rules.md's perft.
pub fn perft(rules: &Rules, board: &Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if material_outcome(rules, board).is_some() {
        return 0;
    }
    let moves = legal_moves(rules, board);
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|m| perft(rules, &apply(board, m), depth - 1))
        .sum()
}
