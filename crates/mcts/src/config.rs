//! Every search setting and its default, in one place.

/// How the root spends its simulations.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RootMode {
    /// AlphaZero PUCT everywhere, Dirichlet noise at the root when `noise`.
    Puct,
    /// Gumbel-top-k with sequential halving at the root, the deterministic
    /// completed-Q selection below it (Danihelka et al. 2022).
    Gumbel,
}

/// The most plies [`MctsConfig::capture_plies`] may ask for: each goose
/// turn in it multiplies the work by the geese's twenty-odd moves.
pub const MAX_CAPTURE_PLIES: u32 = 6;

/// The most geese a point of the foxes' room may be worth
/// ([`MctsConfig::room_weight`]): at 4 the whole board's room is already
/// deep in the utility's flat tanh, and more only hides the geese.
pub const MAX_ROOM_WEIGHT: f32 = 4.0;

/// Search settings. [`MctsConfig::default`] is the setting for playing
/// strength (no noise, best move); [`MctsConfig::self_play`] adds the
/// exploration self-play needs.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsConfig {
    /// Simulations per move below the root (the root's own evaluation is extra).
    pub sims: u32,
    /// PUCT or Gumbel root search.
    pub root: RootMode,
    /// PUCT exploration constant c_init of AlphaZero's c(s) = c_init + ln((1 + N + c_base) / c_base).
    pub cpuct: f32,
    /// PUCT c_base (AlphaZero: 19652); the exploration term grows slowly with visits.
    pub cpuct_base: f32,
    /// First-play urgency: an unvisited child is valued at the parent's Q minus
    /// `fpu_reduction * sqrt(sum of priors of visited children)` (Leela Chess Zero).
    pub fpu_reduction: f32,
    /// Leaves gathered per evaluator call from one tree, kept apart by virtual loss.
    pub batch_size: u32,
    /// Each pending evaluation counts as this many lost visits along its path.
    pub virtual_loss: f32,
    /// Root exploration noise: Dirichlet noise in PUCT, Gumbel samples in Gumbel mode.
    pub noise: bool,
    /// Dirichlet alpha = `dirichlet_alpha_scale / number of legal moves`, so the
    /// noise stays equally spread whatever the branching (AlphaZero's 0.3 for
    /// chess is about 10 / 35 moves).
    pub dirichlet_alpha_scale: f32,
    /// Share of the Dirichlet noise in the root priors (AlphaZero: 0.25).
    pub dirichlet_epsilon: f32,
    /// Gumbel: number of root actions sampled without replacement (m).
    pub gumbel_m: u32,
    /// Gumbel: c_visit of sigma(q) = (c_visit + max_b N(b)) * c_scale * q.
    pub gumbel_c_visit: f32,
    /// Gumbel: c_scale of sigma(q) (with q min-max rescaled to [0, 1], as mctx does).
    pub gumbel_c_scale: f32,
    /// Temperature for moves played before ply `temperature_plies` (PUCT move
    /// choice by visits^(1/T)).
    pub temperature: f32,
    /// Game plies (counted from the game's start) that use `temperature`.
    pub temperature_plies: u32,
    /// Temperature after that; 0 plays the most visited move.
    pub final_temperature: f32,
    /// Keep the subtree of the played move for the next search.
    pub reuse_tree: bool,
    /// PUCT only: `sims` counts the visits a reused subtree already holds
    /// below the root, so a move costs only what its budget lacks (KataGo's
    /// `maxVisits`, against `maxPlayouts`' new simulations). The searched
    /// tree, and so the visit distribution a move is chosen and a policy
    /// target taken from, has the same size either way; the evaluations
    /// spent earlier on the played line are not spent again. Gumbel's
    /// sequential halving always spends its whole budget.
    pub count_reused_visits: bool,
    /// Moves-left utility u (0: off): with an evaluator that predicts plies
    /// left, a clearly winning side prefers lines that end sooner and a
    /// clearly losing side lines that last longer, by at most u per backed-up
    /// value (the formula is in [`crate::search`]).
    pub moves_left_utility: f32,
    /// Material utility m in [0, 1) (0: off): every backed-up value becomes
    /// `(1 - m) * q + m * tanh(gain / S)`, where `gain` is what the game's
    /// [`crate::SearchGame::material`] count changed by for that player
    /// between the root and the leaf (the formula is in [`crate::search`]).
    /// In Two Foxes the foxes then prefer lines that take geese and the geese
    /// lines that keep them, whatever the result.
    pub material_utility: f32,
    /// Plies of a capture search at each new leaf (0: off; at most
    /// [`crate::MAX_CAPTURE_PLIES`]). With the material utility on and no
    /// geese-taken head to predict, the material the side to move gains
    /// in it ([`crate::SearchGame::capture_outlook`]) stands in for the
    /// leaf's prediction, so a goose left to a jump counts as lost before
    /// the tree reaches the jump.
    pub capture_plies: u32,
    /// The material utility counts the game's hand-made evaluation
    /// ([`crate::SearchGame::evaluation`]: in Two Foxes and the classic
    /// game alpha-beta's, in geese) rather than the material alone, so a
    /// line gains by what the baseline values (the pen, advance, a closed
    /// formation, the foxes' room) as well as by the geese it keeps. Needs
    /// the utility on; a game without an evaluation counts its material.
    pub material_eval: bool,
    /// Geese a unit of [`crate::SearchGame::room`] is worth in the material
    /// utility's count (0: off): in Two Foxes a point of the foxes' room,
    /// so the geese gain by walling the foxes in and the foxes by keeping
    /// room. Needs the utility on.
    pub room_weight: f32,
    /// What a draw is worth to the geese, in (-1, 1); the foxes count it
    /// at minus that (0: a draw is worth 0 to both, as its result is).
    /// Every backed-up value becomes `q + v * d` for the player it is
    /// backed up for, with `d` the value's draw share (1 for a drawn
    /// game) and `v` this setting for the geese, `-v` for the foxes. In
    /// Two Foxes a draw is usually the foxes' best result: below 0 the
    /// geese steer away from repetitions and the foxes toward them.
    /// Games without geese ([`crate::SearchGame::geese_to_move`] `None`)
    /// keep a draw at 0.
    pub geese_draw: f32,
    /// With the root proven won, search on to the budget for other proven
    /// wins instead of stopping at the first, and play the winning move
    /// whose proof keeps the most [`crate::SearchGame::material`] for the
    /// winner (the proof's worst case: the loser picks the line that costs
    /// most). The first proof found is the one the search happened on;
    /// this one is as certain and keeps at least as much. An immediate win
    /// is still played first. In Two Foxes the proofs of a pen fill were
    /// found to cost about the same, so it kept no geese there
    /// (experiments/README.md, "the cheapest proven win").
    pub cheapest_win: bool,
}

impl Default for MctsConfig {
    fn default() -> MctsConfig {
        MctsConfig {
            sims: 800,
            root: RootMode::Puct,
            cpuct: 1.25,
            cpuct_base: 19652.0,
            fpu_reduction: 0.25,
            batch_size: 1,
            virtual_loss: 1.0,
            noise: false,
            dirichlet_alpha_scale: 10.0,
            dirichlet_epsilon: 0.25,
            gumbel_m: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 0.1,
            temperature: 1.0,
            temperature_plies: 0,
            final_temperature: 0.0,
            reuse_tree: true,
            count_reused_visits: false,
            moves_left_utility: 0.0,
            material_utility: 0.0,
            capture_plies: 0,
            material_eval: false,
            room_weight: 0.0,
            geese_draw: 0.0,
            cheapest_win: false,
        }
    }
}

impl MctsConfig {
    /// The self-play setting of training runs, and so the defaults of a run
    /// config's `[search]` section: root noise on, temperature 1 for the
    /// first 16 plies (then the most visited move), 64 simulations (many
    /// cheap searches teach more per CPU-second than few deep ones at this
    /// scale) and, for the Gumbel root, m = 8 actions (a sequential halving
    /// over 8 actions fits 64 simulations; 16 suits [`Default`]'s 800);
    /// everything else as [`Default`].
    pub fn self_play() -> MctsConfig {
        MctsConfig {
            sims: 64,
            noise: true,
            gumbel_m: 8,
            temperature_plies: 16,
            ..MctsConfig::default()
        }
    }

    /// The temperature for a move at game ply `ply`.
    pub fn temperature_at(&self, ply: usize) -> f32 {
        if (ply as u64) < self.temperature_plies as u64 {
            self.temperature
        } else {
            self.final_temperature
        }
    }
}
