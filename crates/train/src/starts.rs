//! Start positions from game files (`[selfplay] start_games`): every
//! position before the end of each game, replayed by the rules; and from
//! solved suites (`[selfplay] start_suites`): every row's position. Self-play
//! from the start alone can miss whole kinds of positions: in classic Fox
//! and Geese with 13 geese every self-play game is a fox win, so the
//! positions where the geese win, which games of weaker foxes reach, never
//! enter the replay window (experiments/README.md, "Classic from expert
//! starts"). A tournament of varied agents reaches them.

use halatafl_rules::{Position, Variant};

/// The positions of every game in `paths`, in file and game order, each
/// game from its start up to the position before its last (the last is
/// over, or where the game was cut). Every game must be of `variant`; the
/// error names the file, the game and why.
pub fn start_game_positions(paths: &[String], variant: Variant) -> Result<Vec<Position>, String> {
    let mut out = Vec::new();
    for path in paths {
        let rows = halatafl_arena::read_game_rows(std::path::Path::new(path))
            .map_err(|e| e.to_string())?;
        for row in &rows {
            let game = row
                .replay()
                .map_err(|why| format!("{path}, game {}: {why}", row.game))?;
            let played = game.position().variant();
            if played != variant {
                return Err(format!(
                    "{path}, game {}: its variant is {played}, and this run plays {variant}",
                    row.game
                ));
            }
            out.extend_from_slice(&game.positions()[..game.ply()]);
        }
    }
    Ok(out)
}

/// The positions of every row of the suites in `paths`
/// (`[selfplay] start_suites`), in file and row order. Every row must be of
/// `variant` and must not be over (a suite's rows never are); the error
/// names the file and line and why. Values are not read: a suite lends
/// self-play its positions only.
pub fn suite_positions(paths: &[String], variant: Variant) -> Result<Vec<Position>, String> {
    let mut out = Vec::new();
    for path in paths {
        let rows = halatafl_solver::suite::read_suite(std::path::Path::new(path))
            .map_err(|e| e.to_string())?;
        for entry in &rows {
            let played = entry.position.variant();
            if played != variant {
                return Err(format!(
                    "{path}, line {}: its variant is {played}, and this run plays {variant}",
                    entry.line
                ));
            }
            if halatafl_rules::Game::new(entry.position)
                .outcome()
                .is_some()
            {
                return Err(format!(
                    "{path}, line {}: the game is over there, so no game can begin at it",
                    entry.line
                ));
            }
            out.push(entry.position);
        }
    }
    Ok(out)
}

/// The last position of every opening of the books in `paths`
/// (`[selfplay] start_books`), in file and line order. A book is read as
/// `match --book` reads it: every opening legal from the start of
/// `variant` and leaving a move to play, or an error naming the file, the
/// line and the ply.
pub fn book_positions(paths: &[String], variant: Variant) -> Result<Vec<Position>, String> {
    let mut out = Vec::new();
    for path in paths {
        let book = halatafl_arena::OpeningBook::read(std::path::Path::new(path), variant)
            .map_err(|e| e.to_string())?;
        out.extend(book.openings.iter().map(|game| *game.position()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use halatafl_rules::Game;

    /// The first `n` games of the committed classic round robin, as a file.
    fn some_games(name: &str, n: usize, edit: impl Fn(String) -> String) -> String {
        let text = std::fs::read_to_string("../../data/suites/classic13-games.csv").unwrap();
        let head: Vec<&str> = text.lines().take(n + 1).collect();
        let path =
            std::env::temp_dir().join(format!("halatafl-starts-{name}-{}.csv", std::process::id()));
        std::fs::write(&path, edit(head.join("\n") + "\n")).unwrap();
        path.display().to_string()
    }

    #[test]
    fn every_position_before_each_games_end_in_order() {
        let path = some_games("good", 3, |t| t);
        let classic = Variant::classic(13, false).unwrap();
        let positions = start_game_positions(std::slice::from_ref(&path), classic).unwrap();
        let rows = halatafl_arena::read_game_rows(std::path::Path::new(&path)).unwrap();
        assert_eq!(positions.len(), rows.iter().map(|r| r.plies).sum::<usize>());
        let first = rows[0].replay().unwrap();
        assert_eq!(positions[0], *Game::start_of(classic).position());
        assert_eq!(&positions[..first.ply()], &first.positions()[..first.ply()]);
        assert!(positions.iter().all(|p| Game::new(*p).outcome().is_none()));

        let err =
            start_game_positions(std::slice::from_ref(&path), Variant::two_foxes()).unwrap_err();
        assert!(err.contains("game 1: its variant is classic"), "{err}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_suites_positions_in_row_order_and_a_wrong_variant_by_line() {
        let path = "../../data/suites/classic13.csv".to_string();
        let classic = Variant::classic(13, false).unwrap();
        let positions = suite_positions(std::slice::from_ref(&path), classic).unwrap();
        let rows = halatafl_solver::suite::read_suite(std::path::Path::new(&path)).unwrap();
        assert_eq!(positions.len(), rows.len());
        assert!(positions.iter().zip(&rows).all(|(p, r)| *p == r.position));
        let err = suite_positions(&[path], Variant::two_foxes()).unwrap_err();
        assert!(
            err.contains("classic13.csv, line 2: its variant is classic"),
            "{err}"
        );
    }

    #[test]
    fn a_books_last_positions_in_line_order_and_a_wrong_variant_by_line() {
        let path = "../../data/beds/shutin40.book".to_string();
        let positions = book_positions(std::slice::from_ref(&path), Variant::two_foxes()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .collect();
        assert_eq!(positions.len(), lines.len());
        // Each start is where its line's moves lead, a game still going.
        for (position, line) in positions.iter().zip(&lines) {
            let mut game = Game::start_of(Variant::two_foxes());
            for text in line.split_whitespace() {
                game.play_str(text).unwrap();
            }
            assert_eq!(position, game.position());
            assert!(Game::new(*position).outcome().is_none());
        }
        let classic = Variant::classic(13, false).unwrap();
        let err = book_positions(&[path], classic).unwrap_err();
        assert!(
            err.contains("shutin40.book") && err.contains("line "),
            "{err}"
        );
    }

    #[test]
    fn a_bad_move_is_named_with_its_file_game_and_ply() {
        // The second game's moves lose their first move: its second ply
        // (now its first) is the geese's, illegal for the fox to move.
        let path = some_games("bad", 2, |t| {
            let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
            let header: Vec<&str> = lines[0].split(',').collect();
            let moves = header.iter().position(|h| *h == "moves").unwrap();
            let mut cells: Vec<String> = lines[2].split(',').map(str::to_string).collect();
            cells[moves] = cells[moves]
                .split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
                .join(" ");
            lines[2] = cells.join(",");
            lines.join("\n") + "\n"
        });
        let err = start_game_positions(
            std::slice::from_ref(&path),
            Variant::classic(13, false).unwrap(),
        )
        .unwrap_err();
        assert!(err.contains(&format!("{path}, game 2: ply 1:")), "{err}");
        let missing = start_game_positions(&["no/such.csv".into()], Variant::two_foxes());
        assert!(missing.unwrap_err().contains("no/such.csv"));
        let _ = std::fs::remove_file(&path);
    }
}
