//! The end-of-match summary: per agent and per side, wins, draws, losses,
//! score with its 95% Wilson interval, and the Elo difference with its
//! interval; then the same score from game pairs (each opening played with
//! the sides swapped), whose interval keeps the side's effect out (see
//! [`crate::stats`]).

use crate::stats::{elo_from_score, fmt_elo, Moments, PairRecord, Record};
use crate::{GameRow, ThinkingTime};
use halatafl_rules::Side;
use std::collections::BTreeMap;
use std::fmt;

/// One agent's records: over all games, as foxes, as geese.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideRecords {
    /// The agent's spec.
    pub spec: String,
    /// Every game of the match.
    pub overall: Record,
    /// The games it had the foxes.
    pub foxes: Record,
    /// The games it had the geese.
    pub geese: Record,
    /// The two games of each opening, one with this agent on each side.
    pub pairs: PairRecord,
    /// Geese taken per game it had the foxes.
    pub taken_as_foxes: Moments,
    /// Geese lost per game it had the geese.
    pub lost_as_geese: Moments,
    /// Per pair: geese taken as foxes minus geese lost as geese (see
    /// [`crate::stats`], "the geese margin").
    pub margin: Moments,
    /// Per pair: 1 if the agent scored more than 1 point of 2 on the pair,
    /// 0 if less, and on an even pair 1, 1/2 or 0 as its margin is
    /// positive, zero or negative: the pair score with the geese margin
    /// breaking its ties (see [`crate::stats`], "the geese margin").
    pub result_then_margin: Moments,
    /// How its games as the foxes ended: games per (result for it, +1
    /// win, 0 draw, -1 loss; the rules' reason, e.g. `pen-filled`).
    pub ends_as_foxes: BTreeMap<(i32, String), u64>,
    /// How its games as the geese ended, the same way. Two Foxes' geese
    /// win by filling the pen or by shutting the foxes in (`no-moves`), and
    /// the two cost very different numbers of geese: the margin alone does
    /// not say which route an agent takes.
    pub ends_as_geese: BTreeMap<(i32, String), u64>,
    /// Thinking time over all games.
    pub time: ThinkingTime,
}

/// Agent A's and agent B's records in a match.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchSummary {
    /// Agent A's records first, then agent B's (each from its own side).
    pub agents: [SideRecords; 2],
}

/// The geese the foxes took in a game: one per `x` of its moves (a jump
/// over one goose; a chain `c5xe5xe3` takes two).
pub fn geese_taken(row: &GameRow) -> u32 {
    row.moves.matches('x').count() as u32
}

/// The result for whoever played `side`: +1 win, 0 draw, -1 loss.
pub(crate) fn result_for(row: &GameRow, side: Side) -> i32 {
    match row.result.as_str() {
        "draw" => 0,
        w if w == side.name() => 1,
        _ => -1,
    }
}

impl MatchSummary {
    /// Rows of a match from [`crate::run_match`]: game `g` had A on the foxes
    /// when `g` is odd (A and B may be the same spec).
    pub fn from_match(a: &str, b: &str, rows: &[GameRow]) -> MatchSummary {
        MatchSummary::from_rows(a, b, rows, |row| row.game % 2 == 1)
    }

    /// Rows of games between `a` and `b` from any source; `a_is_foxes` says
    /// which side A had in a row. The two games of an opening (same `opening`
    /// index, A on each side once) form a pair; an opening with any other
    /// set of games is counted game by game only.
    pub fn from_rows(
        a: &str,
        b: &str,
        rows: &[GameRow],
        a_is_foxes: impl Fn(&GameRow) -> bool,
    ) -> MatchSummary {
        let mut agents = [
            SideRecords {
                spec: a.to_string(),
                ..SideRecords::default()
            },
            SideRecords {
                spec: b.to_string(),
                ..SideRecords::default()
            },
        ];
        let mut by_opening: BTreeMap<usize, Vec<(bool, &GameRow)>> = BTreeMap::new();
        for row in rows {
            let a_foxes = a_is_foxes(row);
            by_opening
                .entry(row.opening)
                .or_default()
                .push((a_foxes, row));
            for (index, agent) in agents.iter_mut().enumerate() {
                let side = if (index == 0) == a_foxes {
                    Side::Foxes
                } else {
                    Side::Geese
                };
                let r = result_for(row, side);
                agent.overall.add(r);
                match side {
                    Side::Foxes => agent.foxes.add(r),
                    Side::Geese => agent.geese.add(r),
                }
                agent.time.add(row, side);
                let taken = geese_taken(row) as f64;
                let (moments, ends) = match side {
                    Side::Foxes => (&mut agent.taken_as_foxes, &mut agent.ends_as_foxes),
                    Side::Geese => (&mut agent.lost_as_geese, &mut agent.ends_as_geese),
                };
                moments.add(taken);
                *ends.entry((r, row.reason.clone())).or_default() += 1;
            }
        }
        for games in by_opening.values() {
            let (Some(fox_game), Some(geese_game), 2) = (
                games.iter().find(|(a_foxes, _)| *a_foxes),
                games.iter().find(|(a_foxes, _)| !*a_foxes),
                games.len(),
            ) else {
                continue;
            };
            agents[0].pairs.add(
                result_for(fox_game.1, Side::Foxes),
                result_for(geese_game.1, Side::Geese),
            );
            agents[1].pairs.add(
                result_for(fox_game.1, Side::Geese),
                result_for(geese_game.1, Side::Foxes),
            );
            // A's fox game is B's geese game and the other way round.
            let (a_took, b_took) = (
                geese_taken(fox_game.1) as f64,
                geese_taken(geese_game.1) as f64,
            );
            agents[0].margin.add(a_took - b_took);
            agents[1].margin.add(b_took - a_took);
            let a_points =
                result_for(fox_game.1, Side::Foxes) + result_for(geese_game.1, Side::Geese);
            let a_value = result_then_margin(a_points, a_took - b_took);
            agents[0].result_then_margin.add(a_value);
            agents[1].result_then_margin.add(1.0 - a_value);
        }
        MatchSummary { agents }
    }
}

/// One pair's value by result, then margin: `points` is the agent's result
/// sum over the pair (+1 win, 0 draw, -1 loss per game, so 0 is an even
/// pair) and `margin` its geese margin on it.
pub fn result_then_margin(points: i32, margin: f64) -> f64 {
    match points.cmp(&0) {
        std::cmp::Ordering::Greater => 1.0,
        std::cmp::Ordering::Less => 0.0,
        std::cmp::Ordering::Equal if margin > 0.0 => 1.0,
        std::cmp::Ordering::Equal if margin < 0.0 => 0.0,
        std::cmp::Ordering::Equal => 0.5,
    }
}

/// What the summary's intervals are, for the line above it.
pub const INTERVALS: &str = "95% intervals: Wilson on games, normal on game pairs";

/// `score S [LO, HI]  Elo E [ELO_LO, ELO_HI]`: the Elo interval maps the
/// score interval through the same increasing function.
fn score_and_elo(score: f64, (lo, hi): (f64, f64)) -> String {
    format!(
        "score {score:.3} [{lo:.3}, {hi:.3}]  Elo {} [{}, {}]",
        fmt_elo(elo_from_score(score)),
        fmt_elo(elo_from_score(lo)),
        fmt_elo(elo_from_score(hi))
    )
}

fn line(f: &mut fmt::Formatter<'_>, label: &str, r: &Record) -> fmt::Result {
    writeln!(
        f,
        "  {label:<9} {:>4} games  +{} ={} -{}  {}",
        r.games(),
        r.wins,
        r.draws,
        r.losses,
        score_and_elo(r.score(), r.interval())
    )
}

fn pair_line(f: &mut fmt::Formatter<'_>, p: &PairRecord) -> fmt::Result {
    let c = p.counts;
    writeln!(
        f,
        "  pairs     {:>4} pairs  ptnml(0-2) {}, {}, {}, {}, {}  {}",
        p.pairs(),
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        score_and_elo(p.score(), p.interval())
    )
}

/// `  geese     taken as foxes T, lost as geese L per game; margin per pair
/// +M [LO, HI]` (the margin only where there are pairs).
fn geese_line(f: &mut fmt::Formatter<'_>, a: &SideRecords) -> fmt::Result {
    let mean = |m: &Moments| {
        if m.n > 0 {
            format!("{:.2}", m.mean())
        } else {
            "-".into()
        }
    };
    write!(
        f,
        "  geese     taken as foxes {}, lost as geese {} per game",
        mean(&a.taken_as_foxes),
        mean(&a.lost_as_geese)
    )?;
    if a.margin.n > 0 {
        write!(f, "; margin per pair {}", margin_text(&a.margin))?;
        write!(
            f,
            "; pairs by result, then margin {}",
            result_then_margin_text(&a.result_then_margin)
        )?;
    }
    writeln!(f)
}

/// How one side's games ended, in the order the summary prints them (the
/// text's `ends` line and `summary --json`): wins, then draws, then losses,
/// and within each the commonest reason first (ties by name). Each as its
/// result's word (`won`, `drew`, `lost`), the rules' reason and the games.
pub fn ends_in_order(ends: &BTreeMap<(i32, String), u64>) -> Vec<(&'static str, &str, u64)> {
    let mut rows: Vec<(i32, &str, u64)> = ends
        .iter()
        .map(|((result, reason), &n)| (*result, reason.as_str(), n))
        .collect();
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(b.2.cmp(&a.2)).then(a.1.cmp(b.1)));
    let word = |result: i32| match result.cmp(&0) {
        std::cmp::Ordering::Greater => "won",
        std::cmp::Ordering::Equal => "drew",
        std::cmp::Ordering::Less => "lost",
    };
    rows.into_iter()
        .map(|(result, reason, n)| (word(result), reason, n))
        .collect()
}

/// `  ends      as foxes: drew 23 (threefold 21, fifty-moves 2), lost 14
/// (no-moves 12, pen-filled 2); as geese: won 33 (pen-filled 33), drew 7
/// (threefold 7)`: [`ends_in_order`] per side, each result with its total.
fn ends_line(f: &mut fmt::Formatter<'_>, a: &SideRecords) -> fmt::Result {
    let side = |ends: &BTreeMap<(i32, String), u64>| {
        // Runs of one result word, in order: "won 33 (pen-filled 33)".
        let mut groups: Vec<(&str, u64, Vec<String>)> = Vec::new();
        for (word, reason, n) in ends_in_order(ends) {
            match groups.last_mut() {
                Some((w, total, listed)) if *w == word => {
                    *total += n;
                    listed.push(format!("{reason} {n}"));
                }
                _ => groups.push((word, n, vec![format!("{reason} {n}")])),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(word, total, listed)| format!("{word} {total} ({})", listed.join(", ")))
            .collect();
        parts.join(", ")
    };
    let sides: Vec<String> = [
        ("as foxes", &a.ends_as_foxes),
        ("as geese", &a.ends_as_geese),
    ]
    .into_iter()
    .filter(|(_, ends)| !ends.is_empty())
    .map(|(name, ends)| format!("{name}: {}", side(ends)))
    .collect();
    if sides.is_empty() {
        return Ok(());
    }
    writeln!(f, "  ends      {}", sides.join("; "))
}

/// `0.640 [0.555, 0.725]`: pairs by result, then margin, with the 95%
/// interval clipped to [0, 1] (`-` without pairs).
pub fn result_then_margin_text(m: &Moments) -> String {
    if m.n == 0 {
        return "-".into();
    }
    let (lo, hi) = m.share_interval();
    format!("{:.3} [{lo:.3}, {hi:.3}]", m.mean())
}

/// `+1.50 [+0.42, +2.58]`: a margin per pair with its 95% interval (`-`
/// without pairs).
pub fn margin_text(m: &Moments) -> String {
    if m.n == 0 {
        return "-".into();
    }
    let (lo, hi) = m.interval();
    format!("{:+.2} [{lo:+.2}, {hi:+.2}]", m.mean())
}

/// Agent A's scores against agent B, then both agents' thinking time: B's
/// scores are A's mirrored (a win of one is a loss of the other), so they
/// say nothing new. The alternate form (`{:#}`) prints B's scores too.
/// Intervals are 95% (Wilson on games, normal on game pairs); Elo is the
/// difference to the other agent implied by the score. `ptnml(0-2)` counts
/// the pairs that scored 0, 1/2, 1, 3/2 and 2 points of 2, as Fishtest
/// prints them.
impl fmt::Display for MatchSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, a)) in ["A", "B"].iter().zip(&self.agents).enumerate() {
            writeln!(f, "agent {name}: {}", a.spec)?;
            if i == 0 || f.alternate() {
                line(f, "overall", &a.overall)?;
                line(f, "as foxes", &a.foxes)?;
                line(f, "as geese", &a.geese)?;
                if a.pairs.pairs() > 0 {
                    pair_line(f, &a.pairs)?;
                }
                geese_line(f, a)?;
                ends_line(f, a)?;
            }
            writeln!(
                f,
                "  time      {:.1} ms per move over {} moves",
                a.time.ms_per_move(),
                a.time.moves
            )?;
        }
        Ok(())
    }
}

impl MatchSummary {
    /// Agent A's result in one line, for a console that shows one line per
    /// match while a run goes: its score over game pairs (or games, without
    /// pairs) with the 95% interval, and its score per side.
    pub fn one_line(&self) -> String {
        let [me, _] = &self.agents;
        let (score, (lo, hi), over, n) = if me.pairs.pairs() > 0 {
            (
                me.pairs.score(),
                me.pairs.interval(),
                "pairs",
                me.pairs.pairs(),
            )
        } else {
            (
                me.overall.score(),
                me.overall.interval(),
                "games",
                me.overall.games(),
            )
        };
        let side = |r: &Record| {
            if r.games() > 0 {
                format!("{:.3}", r.score())
            } else {
                "-".into()
            }
        };
        let margin = if me.margin.n > 0 {
            format!(
                "; geese margin {} per pair; by result, then margin {}",
                margin_text(&me.margin),
                result_then_margin_text(&me.result_then_margin)
            )
        } else {
            String::new()
        };
        format!(
            "{score:.3} [{lo:.3}, {hi:.3}] over {n} {over}; as foxes {}, as geese {}{margin}",
            side(&me.foxes),
            side(&me.geese)
        )
    }
}

/// One line per opponent, from agent A's side of each summary: games, the
/// score over game pairs with its 95% interval (over games, Wilson, when no
/// opening was played both ways), the score as foxes and as geese, the
/// geese margin per pair with its 95% interval, the pairs by result, then
/// margin with theirs, and both
/// agents' thinking time per move. The compact form of several
/// [`MatchSummary`]s, for the end of a run; each entry's name heads its line.
pub fn scoreboard(entries: &[(String, MatchSummary)]) -> String {
    let width = entries
        .iter()
        .map(|(name, _)| name.len())
        .chain(["opponent".len()])
        .max()
        .unwrap_or(8);
    let mut out = format!(
        "{:<width$}  games  score [95% interval]    over   as foxes  as geese  geese margin [95%]      result, then margin    ms/move  theirs\n",
        "opponent"
    );
    for (name, summary) in entries {
        let [me, them] = &summary.agents;
        let (score, (lo, hi), over) = if me.pairs.pairs() > 0 {
            (me.pairs.score(), me.pairs.interval(), "pairs")
        } else {
            (me.overall.score(), me.overall.interval(), "games")
        };
        let side = |r: &Record| {
            if r.games() > 0 {
                format!("{:.3}", r.score())
            } else {
                "-".into()
            }
        };
        let margin = margin_text(&me.margin);
        let lexicographic = result_then_margin_text(&me.result_then_margin);
        out.push_str(&format!(
            "{name:<width$}  {:>5}  {score:.3} [{lo:.3}, {hi:.3}]  {over:<5}  {:>8}  {:>8}  {margin:<22}  {lexicographic:<21}  {:>7.1}  {:>6.1}\n",
            me.overall.games(),
            side(&me.foxes),
            side(&me.geese),
            me.time.ms_per_move(),
            them.time.ms_per_move(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(game: usize, opening: &str, plies: usize, seconds: [f64; 2]) -> GameRow {
        GameRow {
            game,
            opening: (game - 1) / 2,
            opening_moves: opening.into(),
            foxes: String::new(),
            geese: String::new(),
            result: "draw".into(),
            reason: "threefold".into(),
            plies,
            moves: String::new(),
            foxes_seconds: seconds[0],
            geese_seconds: seconds[1],
            seed: 0,
            variant: "two-foxes".into(),
        }
    }

    #[test]
    fn time_per_move_counts_only_the_agents_own_moves() {
        // 7 plies, no opening: foxes played plies 0, 2, 4, 6; geese 1, 3, 5.
        let r = row(1, "", 7, [0.4, 0.3]);
        assert_eq!(r.moves_by(Side::Foxes), 4);
        assert_eq!(r.moves_by(Side::Geese), 3);
        // Opening of 3 plies (foxes 0, 2; geese 1): the agents played 3..7.
        let r = row(1, "c7-c6 d3-d4 c6-c7", 7, [0.2, 0.2]);
        assert_eq!(r.moves_by(Side::Foxes), 2);
        assert_eq!(r.moves_by(Side::Geese), 2);
        // Game 1: A on the foxes (2 moves, 0.2 s); game 2: A on the geese.
        let rows = [
            r,
            row(2, "c7-c6 d3-d4", 6, [0.1, 0.4]), // plies 2..6: foxes 2, geese 2
        ];
        let s = MatchSummary::from_match("a", "b", &rows);
        assert_eq!(s.agents[0].time.moves, 4);
        assert!((s.agents[0].time.ms_per_move() - 1000.0 * 0.6 / 4.0).abs() < 1e-9);
        assert!((s.agents[1].time.ms_per_move() - 1000.0 * 0.3 / 4.0).abs() < 1e-9);
        assert!(s.to_string().contains("150.0 ms per move over 4 moves"));
    }

    /// The result decides a pair before the margin does: geese kept in a
    /// draw do not beat a win.
    #[test]
    fn pairs_by_result_then_margin_put_the_result_first() {
        assert_eq!(result_then_margin(1, -8.0), 1.0);
        assert_eq!(result_then_margin(-1, 6.0), 0.0);
        assert_eq!(result_then_margin(0, 2.0), 1.0);
        assert_eq!(result_then_margin(0, -1.0), 0.0);
        assert_eq!(result_then_margin(0, 0.0), 0.5);
        // A has the foxes in game 1 and takes seven geese, but B's geese
        // win; A's geese draw game 2, losing one. A's margin is +6, B's
        // result the better (a win and a draw against a loss and a draw),
        // so the pair is B's.
        let game = |game: usize, result: &str, moves: &str| GameRow {
            result: result.into(),
            moves: moves.into(),
            ..row(game, "", 10, [0.0, 0.0])
        };
        let rows = [
            game(1, "geese", "c5xe5xe3 e3xc3 c3xa3 a3xa5 a5xc5 c5xe5"),
            game(2, "draw", "c5xe5"),
        ];
        let s = MatchSummary::from_match("a", "b", &rows);
        let [a, b] = &s.agents;
        assert!((a.margin.mean() - 6.0).abs() < 1e-9);
        assert_eq!(a.result_then_margin.mean(), 0.0);
        assert_eq!(b.result_then_margin.mean(), 1.0);
    }

    #[test]
    fn the_geese_margin_counts_captures_per_pair_from_each_agents_side() {
        let game = |game: usize, moves: &str| GameRow {
            result: "geese".into(),
            moves: moves.into(),
            ..row(game, "", 10, [0.0, 0.0])
        };
        // A has the foxes in odd games. Pair 1: A takes 4 (a chain of two
        // and two single jumps), B takes 1: A +3. Pair 2: A takes 0, B 2:
        // A -2. Pair 3: A takes 4, B 0: A +4. Margins 3, -2, 4: mean 5/3.
        let rows = [
            game(1, "a3-b3 c5xe5xe3 c3-c4 e3xc3 b4-c4 c3xa3"),
            game(2, "d3-d4 c5xc3"),
            game(3, "d3-d4"),
            game(4, "c5xe5 e5xe3"),
            game(5, "c5xe5xe3 a3-a4 e3xc3xa3"),
            game(6, "d3-d4"),
        ];
        assert_eq!(geese_taken(&rows[0]), 4);
        assert_eq!(geese_taken(&rows[1]), 1);
        let s = MatchSummary::from_match("a", "b", &rows);
        let [a, b] = &s.agents;
        assert_eq!(a.margin.n, 3);
        assert!((a.margin.mean() - 5.0 / 3.0).abs() < 1e-9);
        assert!((b.margin.mean() + 5.0 / 3.0).abs() < 1e-9);
        // sd = sqrt(((4/3)^2 + (11/3)^2 + (7/3)^2) / 2) = sqrt(31/3).
        assert!((a.margin.sd() - (31.0f64 / 3.0).sqrt()).abs() < 1e-9);
        let half = crate::stats::Z95 * (31.0f64 / 3.0).sqrt() / 3f64.sqrt();
        let (lo, hi) = a.margin.interval();
        assert!((lo - (5.0 / 3.0 - half)).abs() < 1e-9 && (hi - (5.0 / 3.0 + half)).abs() < 1e-9);
        assert!((a.taken_as_foxes.mean() - 8.0 / 3.0).abs() < 1e-9);
        assert!((a.lost_as_geese.mean() - 1.0).abs() < 1e-9);
        // Every pair is even (the geese won both games), so the margin's
        // sign decides it: +3, -2, +4 give 1, 0, 1.
        assert_eq!(a.result_then_margin.n, 3);
        assert!((a.result_then_margin.mean() - 2.0 / 3.0).abs() < 1e-9);
        assert!((b.result_then_margin.mean() - 1.0 / 3.0).abs() < 1e-9);
        let text = s.to_string();
        assert!(
            text.contains(
                "geese     taken as foxes 2.67, lost as geese 1.00 per game; margin per pair +1.67"
            ),
            "{text}"
        );
        assert!(
            s.one_line().contains("; geese margin +1.67 ["),
            "{}",
            s.one_line()
        );
    }

    #[test]
    fn the_ends_line_says_how_each_sides_games_ended() {
        let end = |game: usize, result: &str, reason: &str| GameRow {
            result: result.into(),
            reason: reason.into(),
            ..row(game, "", 10, [0.0, 0.0])
        };
        // A has the foxes in odd games: it loses two to a shut-in and one
        // to the pen, and draws one; as the geese it fills the pen three
        // times and draws once.
        let rows = [
            end(1, "geese", "no-moves"),
            end(2, "geese", "pen-filled"),
            end(3, "geese", "pen-filled"),
            end(4, "geese", "pen-filled"),
            end(5, "geese", "no-moves"),
            end(6, "geese", "pen-filled"),
            end(7, "draw", "threefold"),
            end(8, "draw", "fifty-moves"),
        ];
        let s = MatchSummary::from_match("a", "b", &rows);
        let [a, b] = &s.agents;
        assert_eq!(a.ends_as_foxes[&(-1, "no-moves".to_string())], 2);
        assert_eq!(a.ends_as_geese[&(1, "pen-filled".to_string())], 3);
        assert_eq!(b.ends_as_geese[&(1, "no-moves".to_string())], 2);
        let text = s.to_string();
        assert!(
            text.contains(
                "  ends      as foxes: drew 1 (threefold 1), lost 3 (no-moves 2, pen-filled 1); \
                 as geese: won 3 (pen-filled 3), drew 1 (fifty-moves 1)\n"
            ),
            "{text}"
        );
        // B's line shows with the alternate form only, from its own side.
        let text = format!("{s:#}");
        assert!(
            text.contains(
                "  ends      as foxes: drew 1 (fifty-moves 1), lost 3 (pen-filled 3); \
                 as geese: won 3 (no-moves 2, pen-filled 1), drew 1 (threefold 1)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn games_pair_up_by_opening_with_sides_swapped() {
        let result = |game: usize, result: &str| GameRow {
            result: result.into(),
            ..row(game, "", 10, [0.0, 0.0])
        };
        // A has the foxes in odd games. Pair 1: the foxes win both (A 1 of 2);
        // pair 2: the geese win both (1 of 2); pair 3: A wins as the foxes and
        // draws as the geese (3/2): 3.5 of 6 points. Game 7 has no partner yet.
        let rows = [
            result(2, "foxes"),
            result(1, "foxes"),
            result(3, "geese"),
            result(4, "geese"),
            result(5, "foxes"),
            result(6, "draw"),
            result(7, "foxes"),
        ];
        let s = MatchSummary::from_match("a", "b", &rows);
        assert_eq!(s.agents[0].pairs.counts, [0, 0, 2, 1, 0]);
        assert_eq!(s.agents[1].pairs.counts, [0, 1, 2, 0, 0]);
        assert!((s.agents[0].pairs.score() - 7.0 / 12.0).abs() < 1e-12);
        let text = s.to_string();
        assert!(
            text.contains("pairs        3 pairs  ptnml(0-2) 0, 0, 2, 1, 0  score 0.583"),
            "{text}"
        );
        // Agent B's mirrored scores only in the alternate form.
        let b_block = text.split("agent B:").nth(1).unwrap();
        assert!(!b_block.contains("overall") && b_block.contains("ms per move"));
        let both = format!("{s:#}");
        let b_block = both.split("agent B:").nth(1).unwrap();
        assert!(
            b_block.contains("pairs        3 pairs  ptnml(0-2) 0, 1, 2, 0, 0  score 0.417"),
            "{both}"
        );
        // The scoreboard line: pair score, per side, times.
        let board = scoreboard(&[("b".to_string(), s.clone())]);
        let line = board.lines().nth(1).unwrap();
        assert!(line.starts_with("b "), "{board}");
        assert!(
            line.contains("  7  0.583 [") && line.contains("pairs"),
            "{board}"
        );
        // A has the foxes in games 1, 3, 5, 7: won 1, 5, 7 (3 of 4); as the
        // geese (2, 4, 6): won 4, drew 6 (1.5 of 3).
        assert!(line.contains("   0.750     0.500"), "{board}");
        // Without pairs (one game) there is no pairs line.
        let s = MatchSummary::from_match("a", "b", &rows[6..]);
        assert!(!s.to_string().contains("pairs"));
    }
}
