//! Tournament ratings: maximum-likelihood Bradley-Terry (Elo) with draws
//! counted as half a win, and 95% intervals from the observed Fisher
//! information.
//!
//! Model (Bradley & Terry, "Rank analysis of incomplete block designs",
//! Biometrika 39, 1952; the logistic Elo curve): player `i` scores against
//! `j` with probability `p_ij = 1 / (1 + exp(r_j - r_i))`. A draw is half a
//! win and half a loss, so with `s_ij` points out of `n_ij` games the
//! log-likelihood is `sum over pairs of s_ij ln p_ij + (n_ij - s_ij) ln(1 - p_ij)`.
//! Draws as half-wins give the same ratings as Davidson's draw model when the
//! draw rate does not depend on the rating gap, and need no extra parameter.
//!
//! Prior: one virtual draw is added to every pair that played, so a clean
//! sweep gives a large but finite gap (as BayesElo's prior does).
//!
//! Fit: Newton's method on the gradient `g_i = sum_j (s_ij - n_ij p_ij)` with
//! the information matrix `I_ii = sum_j n_ij p_ij (1 - p_ij)`,
//! `I_ij = -n_ij p_ij (1 - p_ij)`. Ratings are only defined up to a constant,
//! so they are centred on mean 0 and `I`'s pseudo-inverse
//! `(I + J/k)^-1 - J/k` (`J` all ones) is used for the step and as the
//! covariance; a rating's interval is `± 1.96 sqrt(cov_ii)`. Natural units
//! are converted to Elo by `400 / ln 10`.

use crate::stats::Z95;
use crate::GameRow;
use serde::Serialize;

/// One player's row of the rating table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rating {
    /// The player's spec.
    pub agent: String,
    /// Games it played.
    pub games: u64,
    /// Its points: a win 1, a draw 1/2 (the virtual draws of the prior not
    /// counted).
    pub points: f64,
    /// `points / games` (0.5 without games).
    pub score: f64,
    /// Elo, mean 0 over the players.
    pub elo: f64,
    /// Lower end of the 95% interval of `elo`.
    pub elo_low: f64,
    /// Upper end of the 95% interval of `elo`.
    pub elo_high: f64,
}

const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// Inverse of a small dense matrix by Gauss-Jordan elimination with pivoting.
fn invert(mut m: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = m.len();
    let mut inv: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| (i == j) as u8 as f64).collect())
        .collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, pivot);
        inv.swap(col, pivot);
        let d = m[col][col];
        for j in 0..n {
            m[col][j] /= d;
            inv[col][j] /= d;
        }
        for row in 0..n {
            if row != col {
                let factor = m[row][col];
                if factor != 0.0 {
                    for j in 0..n {
                        m[row][j] -= factor * m[col][j];
                        inv[row][j] -= factor * inv[col][j];
                    }
                }
            }
        }
    }
    Some(inv)
}

/// Fits ratings for `k` players from `points[i][j]` (points of `i` against
/// `j`) and `games[i][j]`. Returns (elo, elo standard error) per player.
pub fn fit_ratings(points: &[Vec<f64>], games: &[Vec<f64>]) -> Vec<(f64, f64)> {
    let k = points.len();
    let mut s = points.to_vec();
    let mut n = games.to_vec();
    for i in 0..k {
        for j in 0..k {
            if i != j && n[i][j] > 0.0 {
                s[i][j] += 0.5;
                n[i][j] += 1.0;
            }
        }
    }
    let mut r = vec![0.0f64; k];
    let mut cov = vec![vec![0.0; k]; k];
    for _ in 0..100 {
        let mut grad = vec![0.0; k];
        let mut info = vec![vec![1.0 / k as f64; k]; k];
        for i in 0..k {
            for j in 0..k {
                if i == j || n[i][j] == 0.0 {
                    continue;
                }
                let p = 1.0 / (1.0 + (r[j] - r[i]).exp());
                grad[i] += s[i][j] - n[i][j] * p;
                let w = n[i][j] * p * (1.0 - p);
                info[i][i] += w;
                info[i][j] -= w;
            }
        }
        let Some(inv) = invert(info) else { break };
        for i in 0..k {
            for j in 0..k {
                cov[i][j] = inv[i][j] - 1.0 / k as f64;
            }
        }
        let step: Vec<f64> = (0..k)
            .map(|i| (0..k).map(|j| cov[i][j] * grad[j]).sum())
            .collect();
        let mut biggest = 0.0f64;
        for i in 0..k {
            r[i] += step[i];
            biggest = biggest.max(step[i].abs());
        }
        let mean = r.iter().sum::<f64>() / k as f64;
        r.iter_mut().for_each(|x| *x -= mean);
        if biggest < 1e-10 {
            break;
        }
    }
    (0..k)
        .map(|i| (r[i] * ELO_PER_NAT, cov[i][i].max(0.0).sqrt() * ELO_PER_NAT))
        .collect()
}

/// The rating table of a tournament's rows, in the order of `agents`.
pub fn ratings_from_rows(agents: &[String], rows: &[GameRow]) -> Vec<Rating> {
    let k = agents.len();
    let index = |spec: &str| agents.iter().position(|a| a == spec);
    let mut points = vec![vec![0.0; k]; k];
    let mut games = vec![vec![0.0; k]; k];
    for row in rows {
        let (Some(f), Some(g)) = (index(&row.foxes), index(&row.geese)) else {
            continue;
        };
        let foxes_points = match row.result.as_str() {
            "foxes" => 1.0,
            "draw" => 0.5,
            _ => 0.0,
        };
        points[f][g] += foxes_points;
        points[g][f] += 1.0 - foxes_points;
        games[f][g] += 1.0;
        games[g][f] += 1.0;
    }
    let fitted = fit_ratings(&points, &games);
    (0..k)
        .map(|i| {
            let n: f64 = games[i].iter().sum();
            let p: f64 = points[i].iter().sum();
            let (elo, se) = fitted[i];
            Rating {
                agent: agents[i].clone(),
                games: n as u64,
                points: p,
                score: if n > 0.0 { p / n } else { 0.5 },
                elo,
                elo_low: elo - Z95 * se,
                elo_high: elo + Z95 * se,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_players_by_hand() {
        // 7 points of 10, plus the virtual draw: 7.5 of 11, p = 15/22.
        // Gap = ln(p / (1 - p)) = ln(15/7) = 0.762140 nats = 132.40 Elo,
        // so +66.20 and -66.20. Information a = 11 p (1-p) = 2.386364; the
        // pseudo-inverse of a[[1,-1],[-1,1]] has diagonal 1/(4a) = 0.104762,
        // SE = 0.323669 nats = 56.227 Elo.
        let points = vec![vec![0.0, 7.0], vec![3.0, 0.0]];
        let games = vec![vec![0.0, 10.0], vec![10.0, 0.0]];
        let fit = fit_ratings(&points, &games);
        assert!((fit[0].0 - 66.20).abs() < 0.01, "{fit:?}");
        assert!((fit[1].0 + 66.20).abs() < 0.01);
        assert!((fit[0].1 - 56.227).abs() < 0.01, "{fit:?}");
    }

    #[test]
    fn three_players_are_ordered_and_sweeps_stay_finite() {
        // A beats B 8-2, B beats C 8-2, A sweeps C 10-0.
        let points = vec![
            vec![0.0, 8.0, 10.0],
            vec![2.0, 0.0, 8.0],
            vec![0.0, 2.0, 0.0],
        ];
        let games = vec![
            vec![0.0, 10.0, 10.0],
            vec![10.0, 0.0, 10.0],
            vec![10.0, 10.0, 0.0],
        ];
        let fit = fit_ratings(&points, &games);
        assert!(fit[0].0 > fit[1].0 && fit[1].0 > fit[2].0, "{fit:?}");
        assert!(fit
            .iter()
            .all(|(e, s)| e.is_finite() && s.is_finite() && *s > 0.0));
        assert!((fit.iter().map(|f| f.0).sum::<f64>()).abs() < 1e-6);
        // Symmetric results give B the middle, at 0.
        assert!(fit[1].0.abs() < 1e-6);
    }
}
