//! Gumbel root search (Danihelka, Guez, Schrittwieser, Silver 2022, "Policy
//! improvement by planning with Gumbel").
//!
//! - Gumbel-top-k: sample g(a) ~ Gumbel(0, 1) and consider the m actions with
//!   the largest g(a) + logits(a), m = min(`gumbel_m`, legal moves, sims).
//! - Sequential halving: ceil(log2 m) phases; each phase gives every remaining
//!   action an equal share of the phase's simulations, then keeps the better
//!   half by g(a) + logits(a) + sigma(q̂(a)). The action played is the best one
//!   left when the budget is spent.
//! - sigma(q) = (c_visit + max_b N(b)) * c_scale * q, with q min-max rescaled
//!   to [0, 1] over the node's children (as in DeepMind's mctx).
//! - Completed Q: visited actions keep their Q; unvisited ones get
//!   v_mix = (v̂ + (ΣN / Σ_{visited} π) Σ_{visited} π(a) q(a)) / (1 + ΣN).
//! - Improved policy (the training target): π' = softmax(logits + sigma(completed Q)).
//! - Below the root, the deterministic selection of the paper (eq. 14):
//!   argmax_a π'(a) - N(a) / (1 + ΣN).

use crate::config::MctsConfig;

/// One child as the Gumbel formulas see it, from the parent's side to move.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChildStats {
    pub prior: f32,
    /// Visits, in-flight ones included.
    pub visits: f32,
    /// Mean value for the parent's side to move (virtual loss included), or
    /// the exact value if proven; meaningless when `visits == 0` and not proven.
    pub q: f32,
    pub proven: bool,
}

/// Fills `sigma` with sigma(completed Q) for every child, given the parent's
/// raw value estimate `raw_q` (for its side to move).
pub(crate) fn sigma_completed_q(
    children: &[ChildStats],
    raw_q: f32,
    config: &MctsConfig,
    sigma: &mut Vec<f32>,
) {
    let mut sum_n = 0.0f32;
    let mut max_n = 0.0f32;
    let mut visited_prior = 0.0f32;
    let mut weighted_q = 0.0f32;
    for c in children {
        sum_n += c.visits;
        max_n = max_n.max(c.visits);
        if c.visits > 0.0 {
            visited_prior += c.prior;
            weighted_q += c.prior * c.q;
        }
    }
    let v_mix = if sum_n > 0.0 && visited_prior > 0.0 {
        (raw_q + sum_n / visited_prior * weighted_q) / (1.0 + sum_n)
    } else {
        raw_q
    };
    sigma.clear();
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for c in children {
        let q = if c.visits > 0.0 || c.proven {
            c.q
        } else {
            v_mix
        };
        lo = lo.min(q);
        hi = hi.max(q);
        sigma.push(q);
    }
    let scale = (config.gumbel_c_visit + max_n) * config.gumbel_c_scale;
    let span = hi - lo;
    for s in sigma.iter_mut() {
        let q01 = if span > 1e-9 { (*s - lo) / span } else { 0.5 };
        *s = scale * q01;
    }
}

/// ln(prior), with a floor so zero priors stay finite.
#[inline]
pub(crate) fn logit(prior: f32) -> f32 {
    prior.max(1e-12).ln()
}

/// softmax(logits + sigma) into `out`.
pub(crate) fn improved_policy(children: &[ChildStats], sigma: &[f32], out: &mut Vec<f32>) {
    out.clear();
    let mut max = f32::NEG_INFINITY;
    for (c, s) in children.iter().zip(sigma) {
        let x = logit(c.prior) + s;
        max = max.max(x);
        out.push(x);
    }
    let mut z = 0.0;
    for x in out.iter_mut() {
        *x = (*x - max).exp();
        z += *x;
    }
    for x in out.iter_mut() {
        *x /= z;
    }
}

/// The sequential-halving schedule at the root.
#[derive(Clone, Debug, Default)]
pub(crate) struct GumbelRoot {
    /// Gumbel sample per root child (zeros without noise).
    pub g: Vec<f32>,
    /// Root child offsets still in the running, best first after each halving.
    pub considered: Vec<u32>,
    /// Root child offsets still to simulate in this phase (popped from the end).
    pub schedule: Vec<u32>,
    pub phases_left: u32,
    /// Simulations not yet scheduled.
    pub unscheduled: u32,
    pub done: bool,
}

impl GumbelRoot {
    /// Starts a search of `budget` simulations over root children whose
    /// `g + logits` are `scores`; `excluded` children (proven losses) are left
    /// out unless every child is.
    pub(crate) fn start(&mut self, scores: &[f32], excluded: &[bool], m: u32, budget: u32) {
        let mut order: Vec<u32> = (0..scores.len() as u32)
            .filter(|&i| !excluded[i as usize])
            .collect();
        if order.is_empty() {
            order = (0..scores.len() as u32).collect();
        }
        order.sort_by(|&a, &b| scores[b as usize].total_cmp(&scores[a as usize]));
        let m = (m as usize)
            .min(order.len())
            .min(budget.max(1) as usize)
            .max(1);
        order.truncate(m);
        self.considered = order;
        self.phases_left = if m <= 1 {
            1
        } else {
            (usize::BITS - (m - 1).leading_zeros()).max(1)
        };
        self.unscheduled = budget;
        self.done = budget == 0;
        self.schedule.clear();
        if !self.done {
            self.plan_phase();
        }
    }

    /// Schedules the next phase: an equal share of what is left per phase for
    /// each remaining action, round-robin so batches hold different actions.
    fn plan_phase(&mut self) {
        let k = self.considered.len() as u32;
        let per = (self.unscheduled / (self.phases_left.max(1) * k)).max(1);
        let total = (per * k).min(self.unscheduled);
        let mut sched = Vec::with_capacity(total as usize);
        'fill: for _ in 0..per {
            for &a in &self.considered {
                if sched.len() as u32 == total {
                    break 'fill;
                }
                sched.push(a);
            }
        }
        sched.reverse();
        self.schedule = sched;
        self.unscheduled -= total;
        self.phases_left = self.phases_left.saturating_sub(1);
    }

    pub(crate) fn next_action(&mut self) -> Option<u32> {
        self.schedule.pop()
    }

    /// A forced simulation could not run (collision): try it again later.
    pub(crate) fn requeue(&mut self, a: u32) {
        self.schedule.insert(0, a);
    }

    /// Ends a phase (schedule empty, nothing in flight): keeps the better half
    /// by `scores` (g + logits + sigma(q̂)) and plans the next phase, or
    /// finishes.
    pub(crate) fn end_phase(&mut self, scores: &[f32]) {
        if self.phases_left == 0 || self.unscheduled == 0 {
            self.done = true;
            return;
        }
        self.considered
            .sort_by(|&a, &b| scores[b as usize].total_cmp(&scores[a as usize]));
        let keep = self.considered.len().div_ceil(2);
        self.considered.truncate(keep.max(1));
        self.plan_phase();
    }
}
