//! The run config: one TOML file holds every knob of a training run. Unknown
//! keys are errors that name the key and its line (`serde(deny_unknown_fields)`),
//! every default lives in one `Default` impl per section, and
//! [`RunConfig::validate`] range-checks every key before a run starts.

use halatafl_agent::AgentSpec;
use halatafl_arena::MAX_OPENING_PLIES;
use halatafl_nn::{
    AuxHeads, AuxTarget, AuxWeights, LrSchedule, NetConfig, OptimizerKind, TrainConfig,
};
use halatafl_rules::{Position, Side, Variant};
use serde::{Deserialize, Serialize};
use std::ops::{Bound, RangeBounds, RangeInclusive};
use std::path::Path;
use thiserror::Error;

/// A whole run config, one field per TOML section; a missing section or key
/// takes its default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// `[run]`: generations, master seed, threads, device.
    pub run: RunSection,
    /// `[game]`: the variant played.
    pub game: GameSection,
    /// `[network]`: the network's shape, inference settings, starting point.
    pub network: NetworkSection,
    /// `[bootstrap]`: the warm start from an expert's games.
    pub bootstrap: BootstrapSection,
    /// `[search]`: the self-play search.
    pub search: SearchSection,
    /// `[selfplay]`: games per generation, resigning, targets, opponent.
    pub selfplay: SelfPlaySection,
    /// `[replay]`: which samples training draws and how.
    pub replay: ReplaySection,
    /// `[train]`: the learning stage's batch, steps and optimizer.
    pub train: TrainSection,
    /// `[eval]`: evaluation matches after training.
    pub eval: EvalSection,
    /// `[async]`: the asynchronous stages (`async` is a Rust keyword).
    #[serde(rename = "async")]
    pub asynchronous: AsyncSection,
}

/// `[run]`: how long the run is, its seed, and what it runs on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Generations of self-play -> training -> evaluation.
    pub generations: u32,
    /// Master seed: every other seed is derived from it.
    pub seed: u64,
    /// Worker threads for self-play and evaluation games (at most
    /// [`MAX_THREADS`]; a stage with fewer games than threads uses one per game).
    pub threads: usize,
    /// libtorch intra-op threads for the trainer and the inference thread.
    pub torch_threads: usize,
    /// `cpu`, `cuda`, `cuda:N` or `auto`.
    pub device: String,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            generations: 4,
            seed: 1,
            threads: 2,
            torch_threads: 2,
            device: "cpu".into(),
        }
    }
}

impl RunSection {
    /// Checks this section's keys (see [`RunConfig::validate`]).
    pub fn check(&self) -> Result<(), ConfigError> {
        let r = self;
        count("run.generations", r.generations, 1..=MAX_GENERATIONS)?;
        count("run.threads", r.threads, 1..=MAX_THREADS)?;
        count("run.torch_threads", r.torch_threads, 1..=MAX_THREADS)?;
        halatafl_nn::parse_device(&r.device)
            .map_err(|e| bad("run.device", quoted(&r.device), e.to_string()))?;
        Ok(())
    }
}

/// `[game]`: the variant every game of the run is played in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GameSection {
    /// `two-foxes` or `classic`, with options: `classic geese=15 sideways`,
    /// `two-foxes corner-links`.
    pub variant: String,
}

impl Default for GameSection {
    fn default() -> Self {
        GameSection {
            variant: "two-foxes".into(),
        }
    }
}

/// `[network]`: the network trained, how self-play and evaluation run it,
/// and what generation 0 starts from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkSection {
    /// Preset `b<blocks>c<channels>`, e.g. `b4c32`, `b6c64`.
    pub preset: String,
    /// Inference precision in self-play and evaluation: `f32`, `bf16`, or
    /// `auto`: the faster of the two on this machine, timed at self-play's
    /// batch size when the process first loads a network (the choice and
    /// both rates go to the log).
    pub precision: String,
    /// Most positions per network call.
    pub max_batch: usize,
    /// Evaluation cache entries per inference server.
    pub cache_entries: usize,
    /// Inference threads self-play's workers share, each owning a copy of
    /// the network, its own cache and `run.torch_threads / servers`
    /// libtorch threads: `"auto"` (on a CPU one per worker up to
    /// `run.torch_threads`, so that each core runs its own small network
    /// calls without libtorch's thread barrier; on a GPU one, whose calls
    /// are the fuller) or a count. Worker `w` uses server `w mod servers`.
    pub inference_servers: ServerCount,
    /// Give the network a moves-left head (predicting the plies to the end
    /// of the game; needs `train.moves_left_weight` > 0 to train it). A run
    /// resumed with this on from a checkpoint without the head adds a
    /// freshly initialised one when it next trains (and says so in its log).
    /// Every auxiliary target has such a key, `<target>_head` (see
    /// [`AUX_KEYS`]).
    pub moves_left_head: bool,
    /// Give the network a geese-taken head (predicting the geese the foxes
    /// will still take; needs `train.geese_taken_weight` > 0 to train it).
    /// A search with `search.material_utility` > 0 then counts the
    /// predicted captures with those already made (KataGo's score utility).
    /// Added to a resumed run as `moves_left_head` is.
    pub geese_taken_head: bool,
    /// A checkpoint to start from: generation 0 is this network (e.g.
    /// `models/best.safetensors`, to train the shipped network further)
    /// instead of a seeded random one. Needs `bootstrap.games = 0` and the
    /// same preset. Read once, when the run's generation 0 is written; a
    /// relative path is from where `halatafl train` starts. Empty: none.
    pub init: String,
}

impl Default for NetworkSection {
    fn default() -> Self {
        NetworkSection {
            preset: "b4c32".into(),
            precision: "f32".into(),
            max_batch: 256,
            cache_entries: 1 << 18,
            inference_servers: ServerCount::Auto,
            moves_left_head: false,
            geese_taken_head: false,
            init: String::new(),
        }
    }
}

impl NetworkSection {
    /// The auxiliary heads asked for.
    pub fn heads(&self) -> AuxHeads {
        AUX_KEYS
            .iter()
            .fold(AuxHeads::NONE, |h, k| h.with(k.target, (k.head_of)(self)))
    }

    /// The network's shape: the preset, with the auxiliary heads asked for.
    pub fn net_config(&self) -> Result<NetConfig, ConfigError> {
        let text = &self.preset;
        NetConfig::parse_preset(text)
            .map(|c| NetConfig {
                heads: self.heads(),
                ..c
            })
            .map_err(|e| bad("network.preset", quoted(text), e))
    }

    /// Checks this section's keys; `weights` are the `[train]` section's
    /// auxiliary loss weights.
    pub fn check(&self, weights: &AuxWeights) -> Result<(), ConfigError> {
        let n = self;
        n.net_config()?;
        n.precision
            .parse::<halatafl_nn::PrecisionChoice>()
            .map_err(|e| bad("network.precision", quoted(&n.precision), e))?;
        count("network.max_batch", n.max_batch, 1..=MAX_BATCH)?;
        count(
            "network.cache_entries",
            n.cache_entries,
            0..=MAX_CACHE_ENTRIES,
        )?;
        if let ServerCount::Count(servers) = n.inference_servers {
            count("network.inference_servers", servers, 1..=MAX_THREADS)?;
        }
        // A head that is never trained would steer the search with noise.
        // A NaN weight is not positive either, so it is refused here too.
        for k in &AUX_KEYS {
            let weight = weights[k.target];
            if (k.head_of)(n) && (weight.is_nan() || weight <= 0.0) {
                return Err(bad(
                    k.head,
                    true,
                    format!(
                        "needs {} > 0 (an untrained head predicts nothing)",
                        k.weight
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `[network] inference_servers`: `"auto"` or a count (range-checked by
/// [`NetworkSection::check`]). Written back as it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerCount {
    /// One per self-play worker up to `run.torch_threads` on a CPU, one on
    /// a GPU.
    Auto,
    /// This many (fewer when there are fewer workers).
    Count(usize),
}

impl ServerCount {
    /// How self-play's `workers` workers are served: the number of
    /// inference servers and each one's libtorch threads, out of
    /// `torch_threads`, on a GPU when `gpu`.
    pub fn plan(self, workers: usize, torch_threads: usize, gpu: bool) -> (usize, usize) {
        let workers = workers.max(1);
        let torch_threads = torch_threads.max(1);
        let servers = match self {
            ServerCount::Auto if gpu => 1,
            ServerCount::Auto => workers.min(torch_threads),
            ServerCount::Count(n) => n.clamp(1, workers),
        };
        (servers, (torch_threads / servers).max(1))
    }
}

impl std::fmt::Display for ServerCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerCount::Auto => f.write_str("\"auto\""),
            ServerCount::Count(n) => write!(f, "{n}"),
        }
    }
}

impl Serialize for ServerCount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ServerCount::Auto => s.serialize_str("auto"),
            ServerCount::Count(n) => s.serialize_u64(*n as u64),
        }
    }
}

impl<'de> Deserialize<'de> for ServerCount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ServerCount, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ServerCount;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"auto\" or a positive integer")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ServerCount, E> {
                match v {
                    "auto" => Ok(ServerCount::Auto),
                    other => Err(E::custom(format!(
                        "inference_servers = {other:?}: expected \"auto\" or a positive integer"
                    ))),
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ServerCount, E> {
                usize::try_from(v).map(ServerCount::Count).map_err(|_| {
                    E::custom(format!(
                        "inference_servers = {v}: expected \"auto\" or a positive integer"
                    ))
                })
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ServerCount, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(-1))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// Warm start from an expert before generation 1 (see [`crate::bootstrap`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BootstrapSection {
    /// Expert games played as generation 0 (0: generation 0 is a randomly
    /// initialised network, pure self-play from scratch).
    pub games: usize,
    /// The expert, as a non-network agent spec. A depth-limited alpha-beta is
    /// deterministic, so the run stays reproducible; `ms=` would not be.
    pub agent: String,
    /// Random plies before the expert takes over (not recorded as samples),
    /// at most [`MAX_OPENING_PLIES`].
    pub opening_plies: usize,
    /// Training steps of generation 0, on the expert's samples alone.
    pub steps: u64,
    /// Share of every later training batch drawn from the expert's samples ...
    pub replay_fraction: f64,
    /// ... in generations 1 to this one (0: none after generation 0).
    pub replay_generations: u32,
    /// A second agent for a share of the expert's games (a non-network
    /// spec, e.g. `random`; empty: none): it plays `opponent_side` and the
    /// expert the other side, and only the expert's moves become samples,
    /// with the result against this opponent as their value target. Where
    /// one side wins every game between experts (classic Fox and Geese with
    /// 13 geese: the fox), the expert's own games teach the value head a
    /// constant; against a weak fox the expert's geese also win, and the
    /// positions they win from enter generation 0's data.
    pub opponent: String,
    /// Share of the expert's games played against `opponent`.
    pub opponent_fraction: f64,
    /// The side `opponent` plays: `geese`, `foxes`, or `either` (drawn per game).
    pub opponent_side: String,
}

impl Default for BootstrapSection {
    fn default() -> Self {
        BootstrapSection {
            games: 0,
            agent: "alphabeta:depth=4".into(),
            opening_plies: 6,
            steps: 1000,
            replay_fraction: 0.25,
            replay_generations: 3,
            opponent: String::new(),
            opponent_fraction: 0.0,
            opponent_side: "geese".into(),
        }
    }
}

impl BootstrapSection {
    /// Checks this section's keys; `init` is `network.init`.
    pub fn check(&self, init: &str) -> Result<(), ConfigError> {
        let b = self;
        count("bootstrap.games", b.games, 0..=MAX_GAMES)?;
        if !init.is_empty() && b.enabled() {
            return Err(bad(
                "network.init",
                quoted(init),
                "generation 0 is either this checkpoint or the expert's network: set bootstrap.games = 0",
            ));
        }
        if b.enabled() {
            non_network_agent(
                "bootstrap.agent",
                &b.agent,
                "the expert must be a non-network agent, e.g. alphabeta:depth=4",
            )?;
        }
        count(
            "bootstrap.opening_plies",
            b.opening_plies,
            0..=MAX_OPENING_PLIES,
        )?;
        let least_steps = if b.enabled() { 1 } else { 0 };
        count("bootstrap.steps", b.steps, least_steps..=MAX_STEPS)?;
        real(
            "bootstrap.replay_fraction",
            b.replay_fraction,
            closed(0.0, 1.0),
        )?;
        real(
            "bootstrap.opponent_fraction",
            b.opponent_fraction,
            closed(0.0, 1.0),
        )?;
        b.opponent_side()?;
        if b.has_opponent() {
            non_network_agent(
                "bootstrap.opponent",
                &b.opponent,
                "bootstrap.opponent_fraction > 0 needs a non-network agent, e.g. random",
            )?;
            // The expert's side of a game is told by its spec in the game's
            // row, so the two must differ.
            if b.opponent.trim() == b.agent.trim() {
                return Err(bad(
                    "bootstrap.opponent",
                    quoted(&b.opponent),
                    "must differ from bootstrap.agent (games between the two would be the expert's own)",
                ));
            }
        }
        Ok(())
    }

    /// `opponent_side` parsed.
    pub fn opponent_side(&self) -> Result<OpponentSide, ConfigError> {
        OpponentSide::parse("bootstrap.opponent_side", &self.opponent_side)
    }

    /// Whether some expert games are played against `opponent`.
    pub fn has_opponent(&self) -> bool {
        self.opponent_fraction > 0.0
    }
}

/// Which side `selfplay.opponent` plays in a game against it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpponentSide {
    /// The opponent plays the foxes, the network the geese.
    Foxes,
    /// The opponent plays the geese, the network the foxes.
    Geese,
    /// Foxes or geese with even odds, drawn per game.
    Either,
}

impl OpponentSide {
    /// The value of `key` (an `opponent_side` key).
    fn parse(key: &'static str, text: &str) -> Result<OpponentSide, ConfigError> {
        match text {
            "foxes" => Ok(OpponentSide::Foxes),
            "geese" => Ok(OpponentSide::Geese),
            "either" => Ok(OpponentSide::Either),
            other => Err(bad(key, quoted(other), "expected geese, foxes or either")),
        }
    }

    /// The side the opponent takes in one game; for `Either`, the foxes
    /// when `coin` says so (called only then, so a seeded stream of draws
    /// is consumed only by games that need it).
    pub fn draw(self, coin: impl FnOnce() -> bool) -> Side {
        match self {
            OpponentSide::Foxes => Side::Foxes,
            OpponentSide::Geese => Side::Geese,
            OpponentSide::Either if coin() => Side::Foxes,
            OpponentSide::Either => Side::Geese,
        }
    }
}

impl SelfPlaySection {
    /// `opponent_side` parsed.
    pub fn opponent_side(&self) -> Result<OpponentSide, ConfigError> {
        OpponentSide::parse("selfplay.opponent_side", &self.opponent_side)
    }

    /// Whether some games are played against `opponent`.
    pub fn has_opponent(&self) -> bool {
        self.opponent_fraction > 0.0
    }

    /// Whether some games may begin at positions of `start_suites` or
    /// `start_books`.
    pub fn has_start_pool(&self) -> bool {
        !self.start_suites.is_empty() || !self.start_books.is_empty()
    }
}

impl BootstrapSection {
    /// Whether the run starts from expert games (`games > 0`).
    pub fn enabled(&self) -> bool {
        self.games > 0
    }

    /// The share of generation `g`'s batches drawn from the expert's samples.
    pub fn fraction_in(&self, generation: u32) -> f64 {
        if self.enabled() && generation >= 1 && generation <= self.replay_generations {
            self.replay_fraction
        } else {
            0.0
        }
    }
}

/// `[search]`: the tree search self-play plays with (the network's moves in
/// games against `selfplay.opponent` included).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchSection {
    /// `puct` or `gumbel` root search.
    pub algorithm: String,
    /// Simulations of a full search (its positions become policy targets).
    pub simulations: u32,
    /// Playout cap randomization (Wu 2019, KataGo): a move gets a full search
    /// with this probability, else a fast search of `fast_simulations` whose
    /// position is not recorded. 1.0 disables it.
    pub full_search_probability: f64,
    /// Simulations of a fast search (playout cap randomization).
    pub fast_simulations: u32,
    /// PUCT c_init.
    pub c_puct: f32,
    /// First-play-urgency reduction.
    pub fpu_reduction: f32,
    /// Dirichlet alpha times the number of legal moves.
    pub dirichlet_alpha_scale: f32,
    /// Share of Dirichlet noise in the root priors (full searches only).
    pub dirichlet_epsilon: f32,
    /// Gumbel: actions sampled at the root.
    pub gumbel_m: u32,
    /// Move-choice temperature in the opening.
    pub temperature: f32,
    /// Plies played with `temperature`; after that, the most visited move.
    pub temperature_plies: u32,
    /// Leaves gathered from one tree per network call (virtual loss).
    pub leaves_per_tree: u32,
    /// `true`: `simulations` and `fast_simulations` count the visits the
    /// tree kept from the previous move already holds (KataGo's visits
    /// against playouts), so a move whose line was searched before costs
    /// only the rest; `puct` only.
    pub count_reused_visits: bool,
    /// Moves-left utility in self-play and evaluation searches (0: off; at
    /// most 1, useful around 0.05): a clearly winning side prefers lines
    /// that end sooner, a losing one lines that last longer (see
    /// `halatafl_mcts::search`). Needs `network.moves_left_head`; searches
    /// with a checkpoint that lacks the head play without it.
    pub moves_left_utility: f32,
    /// Material utility in self-play and evaluation searches (0: off; below
    /// 1): every backed-up value is mixed with the geese taken or kept since
    /// the root, so the foxes prefer lines that take geese and the geese
    /// lines that keep them (see `halatafl_mcts::search`).
    pub material_utility: f32,
    /// Capture search at each new leaf of self-play's and evaluation's
    /// searches (0: off; at most [`halatafl_mcts::MAX_CAPTURE_PLIES`]): a
    /// minimax of this many plies on material alone whose geese lost stand
    /// in for the network's prediction of the material, so that a goose
    /// left to a jump counts as lost at the leaf (the `captures=K` agent
    /// key). Needs `material_utility` > 0; with a geese-taken head the
    /// head's prediction is used instead.
    pub capture_plies: u32,
    /// The material utility of self-play's and evaluation's searches counts
    /// alpha-beta's evaluation, in geese, rather than the geese alone (the
    /// `material_eval=true` agent key; see `halatafl_mcts::search`). Needs
    /// `material_utility` > 0.
    pub material_eval: bool,
    /// Geese a point of the foxes' room is worth in the material utility's
    /// count in self-play's and evaluation's searches (the `room=w` agent
    /// key; 0: off; at most [`halatafl_mcts::MAX_ROOM_WEIGHT`]): the geese
    /// gain by walling the foxes in. Needs `material_utility` > 0.
    pub room_weight: f32,
    /// What a draw is worth to the geese in self-play's and evaluation's
    /// searches, above -1 and below 1 (the foxes count it at minus that;
    /// 0: a draw is worth 0, as its result is): the `geese_draw=v` agent
    /// key. Below 0 the geese avoid repetitions and the foxes seek them.
    /// The value target stays the result.
    pub geese_draw: f32,
    /// Past a root proven won, self-play's and evaluation's searches go on
    /// to their budget for the other moves' proofs and play the win whose
    /// proof keeps the most geese (the `cheapest_win=true` agent key; see
    /// `halatafl_mcts::search`). The policy target still shares itself
    /// among the proven wins.
    pub cheapest_win: bool,
}

/// The search keys' defaults are the search crate's self-play setting
/// ([`halatafl_mcts::MctsConfig::self_play`]), stated once there; only the
/// playout cap, which is the trainer's, is set here.
impl Default for SearchSection {
    fn default() -> Self {
        let m = halatafl_mcts::MctsConfig::self_play();
        SearchSection {
            algorithm: match m.root {
                halatafl_mcts::RootMode::Puct => "puct".into(),
                halatafl_mcts::RootMode::Gumbel => "gumbel".into(),
            },
            simulations: m.sims,
            full_search_probability: 0.25,
            fast_simulations: 16,
            c_puct: m.cpuct,
            fpu_reduction: m.fpu_reduction,
            dirichlet_alpha_scale: m.dirichlet_alpha_scale,
            dirichlet_epsilon: m.dirichlet_epsilon,
            gumbel_m: m.gumbel_m,
            temperature: m.temperature,
            temperature_plies: m.temperature_plies,
            leaves_per_tree: m.batch_size,
            count_reused_visits: m.count_reused_visits,
            moves_left_utility: m.moves_left_utility,
            material_utility: m.material_utility,
            capture_plies: m.capture_plies,
            material_eval: m.material_eval,
            room_weight: m.room_weight,
            geese_draw: m.geese_draw,
            cheapest_win: m.cheapest_win,
        }
    }
}

impl SearchSection {
    /// Checks this section's keys; `heads` are the `[network]` section's.
    pub fn check(&self, heads: AuxHeads) -> Result<(), ConfigError> {
        let s = self;
        if !matches!(s.algorithm.as_str(), "puct" | "gumbel") {
            return Err(bad(
                "search.algorithm",
                quoted(&s.algorithm),
                "expected puct or gumbel",
            ));
        }
        count("search.simulations", s.simulations, 1..=MAX_SIMULATIONS)?;
        real(
            "search.full_search_probability",
            s.full_search_probability,
            above(0.0, 1.0),
        )?;
        count(
            "search.fast_simulations",
            s.fast_simulations,
            1..=MAX_SIMULATIONS,
        )?;
        real("search.c_puct", s.c_puct, above(0.0, 100.0))?;
        // Values lie in [-1, 1], so a reduction beyond 2 changes nothing.
        real("search.fpu_reduction", s.fpu_reduction, closed(0.0, 2.0))?;
        real(
            "search.dirichlet_alpha_scale",
            s.dirichlet_alpha_scale,
            above(0.0, 1000.0),
        )?;
        real(
            "search.dirichlet_epsilon",
            s.dirichlet_epsilon,
            closed(0.0, 1.0),
        )?;
        count("search.gumbel_m", s.gumbel_m, 1..=1024)?;
        real("search.temperature", s.temperature, closed(0.0, 100.0))?;
        count(
            "search.leaves_per_tree",
            s.leaves_per_tree,
            1..=MAX_LEAVES_PER_TREE,
        )?;
        real(
            "search.moves_left_utility",
            s.moves_left_utility,
            closed(0.0, halatafl_nn::agent::MAX_MOVES_LEFT_UTILITY as f64),
        )?;
        // 1 would leave the result no weight at all.
        real(
            "search.material_utility",
            s.material_utility,
            closed_open(0.0, 1.0),
        )?;
        count(
            "search.capture_plies",
            s.capture_plies,
            0..=halatafl_mcts::MAX_CAPTURE_PLIES,
        )?;
        real(
            "search.room_weight",
            s.room_weight,
            closed(0.0, halatafl_mcts::MAX_ROOM_WEIGHT as f64),
        )?;
        // These act only through the material utility.
        for (key, on, value) in [
            (
                "search.capture_plies",
                s.capture_plies > 0,
                s.capture_plies.to_string(),
            ),
            (
                "search.material_eval",
                s.material_eval,
                s.material_eval.to_string(),
            ),
            (
                "search.room_weight",
                s.room_weight > 0.0,
                s.room_weight.to_string(),
            ),
        ] {
            if on && s.material_utility == 0.0 {
                return Err(bad(
                    key,
                    value,
                    "counts through the material utility: set search.material_utility above 0",
                ));
            }
        }
        // A draw worth a win or a loss would not be a draw.
        real("search.geese_draw", s.geese_draw, open_interval(-1.0, 1.0))?;
        if s.count_reused_visits && s.algorithm == "gumbel" {
            return Err(bad(
                "search.count_reused_visits",
                s.count_reused_visits,
                "applies to the puct root only: gumbel's sequential halving spends its whole budget",
            ));
        }
        if s.moves_left_utility > 0.0 && !heads.has(AuxTarget::MovesLeft) {
            return Err(bad(
                "search.moves_left_utility",
                s.moves_left_utility,
                "needs a network with a moves-left head: set network.moves_left_head = true",
            ));
        }
        Ok(())
    }
}

/// `[selfplay]`: the games each generation plays and the samples they give.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfPlaySection {
    /// Games per generation.
    pub games: usize,
    /// Games stepped together per worker thread (their leaves share network calls).
    pub concurrent_games: usize,
    /// A game still running after this many plies is adjudicated a draw.
    pub max_plies: usize,
    /// Resign when the searched value of the side to move stays below
    /// `-resign_threshold` for `resign_consecutive` of its moves (threshold
    /// 0 disables resigning).
    pub resign_threshold: f32,
    /// Consecutive own moves below the threshold before a side resigns.
    pub resign_consecutive: u32,
    /// Share of games that would resign but are played out, to measure how
    /// often resigning would have been wrong.
    pub resign_playout_fraction: f64,
    /// Samples per shard file.
    pub samples_per_shard: usize,
    /// Continuous self-play (KataGo's): a worker keeps all its
    /// `concurrent_games` slots playing until it has finished its share of
    /// `games`, and the games still running then go on in the next
    /// generation under the new network (saved as the generation's
    /// `running.json`, so `train --resume` continues them exactly). Network
    /// calls then stay full to the end instead of shrinking as the last
    /// games finish. A carried game's earlier samples keep the older
    /// network's search targets. Off: each generation plays its games from
    /// the start to the end.
    pub carry_over: bool,
    /// Proven value targets, in df-pn nodes a sample (0: off): before a
    /// finished game's samples are stored, a proof search of this many
    /// nodes asks whether each sample's side to move wins, and where it
    /// settles the question the exact result replaces the value target
    /// (the result and the search value alike). Only in classic Fox and
    /// Geese without sideways steps, where no position recurs and a proof
    /// holds whatever the game's history. See [`crate::proven_targets`].
    pub prove_targets: u64,
    /// With `prove_targets`: in a sample proven won for its side to move,
    /// each legal move is proven too (the same budget each), and the policy
    /// target keeps only the moves proven to keep the win (their visits,
    /// renormalised; evenly where they had none), as the MCTS-solver's root
    /// policy does for wins proven inside its tree.
    pub prove_policy: bool,
    /// Short-term value target, in plies (0: off, the plain game result). A
    /// sample's win/draw/loss target is the game's result blended toward a
    /// draw by `0.5^(plies to the end / result_half_life)`: a position 100
    /// plies before a loss is "less lost" than one 2 plies before it, so the
    /// losing side's search learns to prolong (and the winner's to hurry)
    /// where the plain result gives every move the same -1. Applied when a
    /// game's samples are written, so the shards hold the blended target.
    pub result_half_life: f32,
    /// Share of games that begin at a position drawn uniformly from the
    /// samples of earlier games (the replay window before this generation,
    /// and generation 0's expert games) and the positions of `start_games`
    /// instead of at the start: more
    /// varied middle games, where the start's games all pass through the
    /// same few openings. 0 (the default): every game begins at the start.
    pub start_position_fraction: f64,
    /// Game CSVs (`match`, `tournament`, `ladder` files, a run's
    /// `eval.csv`) whose positions join the positions games may begin at
    /// (every position before each game's end; see [`crate::starts`]):
    /// positions self-play from the start does not reach, e.g. those of
    /// games between weaker agents. Needs `start_position_fraction` > 0; a
    /// relative path is from where `halatafl train` starts. Empty: none.
    pub start_games: Vec<String>,
    /// Share of each generation's games that begin at a position of
    /// `start_suites` or `start_books`, drawn uniformly from both, before
    /// `start_position_fraction` is asked of the rest. Apart from that
    /// pool, so that a suite's or book's few hundred positions are not lost
    /// among the replay window's tens of thousands. 0 (the default): none.
    pub start_suite_fraction: f64,
    /// Suite CSVs (`halatafl solve --from-games` output, e.g.
    /// `data/suites/classic13.csv`) whose positions games may begin at
    /// (`start_suite_fraction`): the decisions a suite holds (one or few
    /// moves keep the value) to be played out from, not only judged. Only
    /// the positions are read, never the values. A relative path is from
    /// where `halatafl train` starts. Empty: none.
    pub start_suites: Vec<String>,
    /// Opening books (`match --book` files, e.g. cut from real games by
    /// `scripts/book-from-games.py`) whose openings' last positions join
    /// `start_suites`' positions in the pool `start_suite_fraction` draws
    /// from: chosen kinds of position, such as the walled-in foxes of
    /// `data/starts/`, to be played out by self-play. Only the positions are
    /// kept, not the moves before them (as for suites and earlier games). A
    /// relative path is from where `halatafl train` starts. Empty: none.
    pub start_books: Vec<String>,
    /// A fixed opponent for a share of the games (a non-network agent spec,
    /// e.g. `alphabeta:depth=7`; empty: none): it plays `opponent_side` and
    /// the network the other side, and only the network's moves become
    /// samples (the opponent's too with `opponent_samples`), with the
    /// result against this opponent as their value target. Self-play alone
    /// teaches the losing side nothing about where an imperfect opponent
    /// goes wrong: against the network's own geese
    /// every fox position is lost. This is AlphaStar's exploiter idea
    /// (Vinyals et al., Nature 2019) at its smallest; a depth-limited
    /// alpha-beta keeps the run reproducible.
    pub opponent: String,
    /// Share of each generation's games played against `opponent`.
    pub opponent_fraction: f64,
    /// The side `opponent` plays: `geese`, `foxes`, or `either` (drawn per game).
    pub opponent_side: String,
    /// The opponent's moves become samples too (behaviour cloning): at the
    /// rate the network's own positions are (`search.full_search_probability`),
    /// a position the opponent moves in is a sample whose policy target is
    /// the opponent's move alone and whose value target is the result for
    /// the opponent's side (the same discounting as every sample). It
    /// teaches the network's own side what the opponent does where self-play
    /// never goes: alpha-beta's geese wall the foxes in, the network's own
    /// geese fill the pen. Needs `opponent_fraction` > 0.
    pub opponent_samples: bool,
    /// Removed: a share of the opponent's moves drawn at random (with the
    /// opponent `self`) was no lead in classic at 0.2 or 0.5
    /// (experiments/README.md, "Classic: counting reused visits, and the
    /// own fox at one move in two random"). Read only so that runs whose
    /// `config.toml` has it at 0 still resume; any other value is refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opponent_random_moves: Option<f64>,
}

impl Default for SelfPlaySection {
    fn default() -> Self {
        SelfPlaySection {
            games: 64,
            concurrent_games: 16,
            max_plies: 400,
            resign_threshold: 0.95,
            resign_consecutive: 3,
            resign_playout_fraction: 0.2,
            samples_per_shard: 4096,
            carry_over: false,
            prove_targets: 0,
            prove_policy: false,
            result_half_life: 0.0,
            start_position_fraction: 0.0,
            start_games: Vec::new(),
            start_suite_fraction: 0.0,
            start_suites: Vec::new(),
            start_books: Vec::new(),
            opponent: String::new(),
            opponent_fraction: 0.0,
            opponent_side: "geese".into(),
            opponent_samples: false,
            opponent_random_moves: None,
        }
    }
}

impl SelfPlaySection {
    /// Checks this section's keys.
    pub fn check(&self) -> Result<(), ConfigError> {
        let p = self;
        count("selfplay.games", p.games, 1..=MAX_GAMES)?;
        count("selfplay.concurrent_games", p.concurrent_games, 1..=4096)?;
        count("selfplay.max_plies", p.max_plies, 1..=MAX_PLIES)?;
        real(
            "selfplay.resign_threshold",
            p.resign_threshold,
            closed(0.0, 1.0),
        )?;
        if !(1..=MAX_PLIES as u32).contains(&p.resign_consecutive) {
            return Err(bad(
                "selfplay.resign_consecutive",
                p.resign_consecutive,
                format!(
                    "must be an integer in [1, {MAX_PLIES}] (resign_threshold = 0 disables resigning)"
                ),
            ));
        }
        real(
            "selfplay.resign_playout_fraction",
            p.resign_playout_fraction,
            closed(0.0, 1.0),
        )?;
        count(
            "selfplay.samples_per_shard",
            p.samples_per_shard,
            1..=MAX_SAMPLES_PER_SHARD,
        )?;
        if p.prove_targets > halatafl_solver::proving::MAX_PROVE_NODES {
            return Err(bad(
                "selfplay.prove_targets",
                p.prove_targets,
                format!(
                    "must be a node count in [0, {}] (0: off)",
                    halatafl_solver::proving::MAX_PROVE_NODES
                ),
            ));
        }
        if p.prove_policy && p.prove_targets == 0 {
            return Err(bad(
                "selfplay.prove_policy",
                p.prove_policy,
                "needs selfplay.prove_targets > 0 (the proof search's nodes a position)",
            ));
        }
        real(
            "selfplay.result_half_life",
            p.result_half_life,
            closed(0.0, MAX_PLIES as f64),
        )?;
        real(
            "selfplay.start_position_fraction",
            p.start_position_fraction,
            closed(0.0, 1.0),
        )?;
        real(
            "selfplay.start_suite_fraction",
            p.start_suite_fraction,
            closed(0.0, 1.0),
        )?;
        real(
            "selfplay.opponent_fraction",
            p.opponent_fraction,
            closed(0.0, 1.0),
        )?;
        if let Some(share) = p.opponent_random_moves.filter(|&x| x != 0.0) {
            return Err(bad(
                "selfplay.opponent_random_moves",
                share,
                "this key was removed (its experiment found no gain); only 0 is read, so that older runs resume",
            ));
        }
        files_need_fraction(
            ("selfplay.start_games", &p.start_games),
            (
                "selfplay.start_position_fraction",
                p.start_position_fraction,
            ),
        )?;
        files_need_fraction(
            ("selfplay.start_suites", &p.start_suites),
            ("selfplay.start_suite_fraction", p.start_suite_fraction),
        )?;
        files_need_fraction(
            ("selfplay.start_books", &p.start_books),
            ("selfplay.start_suite_fraction", p.start_suite_fraction),
        )?;
        if !p.has_start_pool() && p.start_suite_fraction > 0.0 {
            return Err(bad(
                "selfplay.start_suite_fraction",
                p.start_suite_fraction,
                "games begin at suite or book positions only with files to draw them from: selfplay.start_suites or selfplay.start_books",
            ));
        }
        p.opponent_side()?;
        if p.has_opponent() {
            non_network_agent(
                "selfplay.opponent",
                &p.opponent,
                "selfplay.opponent_fraction > 0 needs a non-network agent, e.g. alphabeta:depth=7",
            )?;
        }
        if p.opponent_samples && !p.has_opponent() {
            return Err(bad(
                "selfplay.opponent_samples",
                p.opponent_samples,
                "needs games against an opponent: selfplay.opponent and selfplay.opponent_fraction > 0",
            ));
        }
        Ok(())
    }
}

/// `[replay]`: the replay window training draws its samples from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplaySection {
    /// Train on the samples of the last this-many generations.
    pub window_generations: u32,
    /// Left-right mirror each drawn sample with probability 1/2.
    pub mirror: bool,
    /// Value target = (1 - mix) * game result + mix * search value.
    pub search_value_mix: f32,
}

impl Default for ReplaySection {
    fn default() -> Self {
        ReplaySection {
            window_generations: 4,
            mirror: true,
            search_value_mix: 0.0,
        }
    }
}

impl ReplaySection {
    /// Checks this section's keys.
    pub fn check(&self) -> Result<(), ConfigError> {
        let w = self;
        count(
            "replay.window_generations",
            w.window_generations,
            1..=MAX_GENERATIONS,
        )?;
        real(
            "replay.search_value_mix",
            w.search_value_mix,
            closed(0.0, 1.0),
        )?;
        Ok(())
    }
}

/// `[train]`: the learning stage; [`RunConfig::train_config`] turns it
/// into the network crate's [`TrainConfig`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainSection {
    /// Samples per training step.
    pub batch_size: usize,
    /// Training steps of each generation from 1 on (generation 0 trains
    /// `bootstrap.steps`, on the expert's samples, when bootstrapped).
    pub steps_per_generation: u64,
    /// Write a train.csv row every this many steps.
    pub log_every: u64,
    /// `adam` or `sgd` (Nesterov momentum).
    pub optimizer: OptimizerKind,
    /// Base learning rate.
    pub lr: f64,
    /// SGD momentum, or Adam's beta1.
    pub momentum: f64,
    /// L2 coefficient on convolution and linear weights.
    pub l2: f64,
    /// Clip the global gradient norm to this (0: no clipping).
    pub grad_clip: f64,
    /// Steps of linear learning-rate warm-up at the start of training.
    pub warmup_steps: u64,
    /// `constant`, `cosine` (to `min_lr` over all generations' steps, the
    /// bootstrap's included) or `step` (x0.1 at half and at three quarters
    /// of those steps).
    pub schedule: String,
    /// The cosine schedule's final rate (at most `lr`); other schedules
    /// ignore it.
    pub min_lr: f64,
    /// `f32`, or `bf16` for mixed precision: the forward pass under bf16
    /// autocast, weights and losses in fp32. For GPUs and CPUs with AMX or
    /// AVX-512 BF16; `halatafl bench-net` shows whether it pays.
    pub precision: String,
    /// Weight of the moves-left head's loss against the policy loss (0:
    /// off; needs `network.moves_left_head`, which in turn needs it > 0).
    /// Every auxiliary target has such a key, `<target>_weight` (see
    /// [`AUX_KEYS`]).
    pub moves_left_weight: f64,
    /// Weight of the geese-taken head's loss (0: off; needs
    /// `network.geese_taken_head`, which in turn needs it > 0).
    pub geese_taken_weight: f64,
}

impl Default for TrainSection {
    fn default() -> Self {
        let t = TrainConfig::default();
        TrainSection {
            batch_size: 256,
            steps_per_generation: 200,
            log_every: 50,
            optimizer: t.optimizer,
            lr: t.lr,
            momentum: t.momentum,
            l2: t.l2,
            grad_clip: t.grad_clip,
            warmup_steps: t.warmup_steps,
            schedule: "constant".into(),
            min_lr: 1e-4,
            precision: "f32".into(),
            moves_left_weight: t.aux_weights[AuxTarget::MovesLeft],
            geese_taken_weight: t.aux_weights[AuxTarget::GeeseTaken],
        }
    }
}

impl TrainSection {
    /// Checks the keys read before the schedule and optimizer are parsed.
    pub fn check_before_schedule(&self) -> Result<(), ConfigError> {
        let t = self;
        count("train.batch_size", t.batch_size, 1..=MAX_BATCH)?;
        count(
            "train.steps_per_generation",
            t.steps_per_generation,
            1..=MAX_STEPS,
        )?;
        count("train.log_every", t.log_every, 1..=MAX_STEPS)?;
        real("train.lr", t.lr, above(0.0, 10.0))?;
        // SGD momentum or Adam's beta1: 1 would divide by zero in Adam's bias correction.
        real(
            "train.momentum",
            t.momentum,
            (Bound::Included(0.0), Bound::Excluded(1.0)),
        )?;
        real("train.l2", t.l2, closed(0.0, 1.0))?;
        real("train.grad_clip", t.grad_clip, closed(0.0, 1e6))?;
        count("train.warmup_steps", t.warmup_steps, 0..=MAX_STEPS)?;
        Ok(())
    }

    /// The auxiliary heads' loss weights.
    pub fn aux_weights(&self) -> AuxWeights {
        let mut weights = AuxWeights::default();
        for k in &AUX_KEYS {
            weights[k.target] = (k.weight_of)(self);
        }
        weights
    }

    /// Checks this section's keys; `heads` are the `[network]` section's.
    pub fn check(&self, heads: AuxHeads) -> Result<(), ConfigError> {
        let t = self;
        // The cosine schedule decays from lr to min_lr; other schedules ignore it.
        let min_lr_high = if t.schedule == "cosine" && t.lr.is_finite() {
            t.lr
        } else {
            10.0
        };
        real("train.min_lr", t.min_lr, closed(0.0, min_lr_high))?;
        for k in &AUX_KEYS {
            let weight = (k.weight_of)(t);
            real(k.weight, weight, closed(0.0, 100.0))?;
            if weight > 0.0 && !heads.has(k.target) {
                return Err(bad(
                    k.weight,
                    weight,
                    format!(
                        "must be 0 without a {} head: set {} = true",
                        k.target.spec().label,
                        k.head
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `[eval]`: the matches that measure each evaluated generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalSection {
    /// Evaluate every this many generations (and always the last).
    pub every: u32,
    /// Games per opponent (sides alternate).
    pub games: usize,
    /// Opponents as agent specs; `previous` is the previous generation's net.
    pub opponents: Vec<String>,
    /// Simulations of the trained agent in evaluation games.
    pub simulations: u32,
    /// Random opening plies (each opening played with both colours), at most
    /// [`MAX_OPENING_PLIES`].
    pub opening_plies: usize,
    /// Leaves per network call in the trained agent's search (virtual loss);
    /// evaluation games run one search each, so this is what fills batches.
    pub leaves_per_tree: u32,
    /// A solved suite (a CSV of `halatafl solve --from-games`, e.g.
    /// `data/suites/classic13.csv`) of the run's variant, empty for none.
    /// Each evaluated generation's raw policy and search (the evaluation
    /// games' agent) are judged on it: their error rates against the exact
    /// values, by stage, side and difficulty, go to `accuracy.csv`, the log
    /// and the report. A pair score cannot see most mistakes; this can. A
    /// relative path is from where `halatafl train` starts.
    pub suite: String,
    /// Positions of `suite` judged per generation, the same ones every
    /// generation (drawn once from the run's seed); 0: all of them.
    pub suite_positions: usize,
}

impl Default for EvalSection {
    fn default() -> Self {
        EvalSection {
            every: 1,
            games: 20,
            opponents: vec![
                "random".into(),
                "alphabeta:depth=2".into(),
                "previous".into(),
            ],
            simulations: 64,
            opening_plies: 2,
            leaves_per_tree: 4,
            suite: String::new(),
            suite_positions: 0,
        }
    }
}

impl EvalSection {
    /// Checks this section's keys; `variant` is the run's, when it parses.
    pub fn check(&self, variant: Option<Variant>) -> Result<(), ConfigError> {
        let e = self;
        count("eval.every", e.every, 1..=MAX_GENERATIONS)?;
        count("eval.games", e.games, 1..=MAX_GAMES)?;
        for spec in &e.opponents {
            check_opponent(spec, variant)?;
        }
        count("eval.simulations", e.simulations, 1..=MAX_SIMULATIONS)?;
        count("eval.opening_plies", e.opening_plies, 0..=MAX_OPENING_PLIES)?;
        count(
            "eval.leaves_per_tree",
            e.leaves_per_tree,
            1..=MAX_LEAVES_PER_TREE,
        )?;
        count(
            "eval.suite_positions",
            e.suite_positions,
            0..=MAX_SUITE_POSITIONS,
        )?;
        if !e.suite.is_empty() {
            let entries = halatafl_solver::suite::read_suite(Path::new(&e.suite))
                .map_err(|why| bad("eval.suite", quoted(&e.suite), why.to_string()))?;
            let suite_variant = entries[0].position.variant();
            if let Some(variant) = variant.filter(|v| *v != suite_variant) {
                return Err(bad(
                    "eval.suite",
                    quoted(&e.suite),
                    format!("its positions are {suite_variant}, and this run plays {variant}"),
                ));
            }
        }
        Ok(())
    }
}

/// The asynchronous mode: `halatafl stage selfplay`, `learn` and `evaluate` as
/// separate processes on one run directory (see [`crate::learn_stage`]).
/// `halatafl train` ignores this section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AsyncSection {
    /// Most training samples (steps x `train.batch_size`) per new self-play
    /// sample: before training checkpoint g the learner waits until the
    /// self-play shards hold g x steps_per_generation x batch_size /
    /// train_ratio samples (KataGo's rule; self-play is never held back).
    pub train_ratio: f64,
    /// Games a self-play worker plays with one checkpoint before it looks
    /// for a newer one; they become one shard.
    pub shard_games: usize,
    /// Seconds a waiting process sleeps before it looks again (for samples,
    /// checkpoints, or the end of the run).
    pub poll_seconds: f64,
    /// How far self-play may run ahead of the learner, in generations: a
    /// worker waits while the shards already hold the samples the learner
    /// needs for the checkpoint this many past its next one. Samples played
    /// further ahead would come from an ever older network, and workers that
    /// never wait starve a learner that shares their cores.
    pub max_ahead_generations: u32,
}

impl Default for AsyncSection {
    fn default() -> Self {
        AsyncSection {
            train_ratio: 8.0,
            shard_games: 16,
            poll_seconds: 2.0,
            max_ahead_generations: 2,
        }
    }
}

impl AsyncSection {
    /// Checks this section's keys; `max_plies` is `selfplay.max_plies`.
    pub fn check(&self, max_plies: usize) -> Result<(), ConfigError> {
        let a = self;
        real("async.train_ratio", a.train_ratio, above(0.0, 1e6))?;
        // A shard holds one batch of games, so the batch's longest possible
        // games must fit the shard bound.
        let most_games = MAX_SAMPLES_PER_SHARD / max_plies.max(1);
        if !(1..=most_games).contains(&a.shard_games) {
            return Err(bad(
                "async.shard_games",
                a.shard_games,
                format!(
                    "must be an integer in [1, {most_games}] (a shard of games of up to \
                     selfplay.max_plies = {} plies holds at most {MAX_SAMPLES_PER_SHARD} samples)",
                    max_plies
                ),
            ));
        }
        real("async.poll_seconds", a.poll_seconds, above(0.0, 3600.0))?;
        count(
            "async.max_ahead_generations",
            a.max_ahead_generations,
            0..=MAX_GENERATIONS,
        )?;
        Ok(())
    }
}

/// A config value that is out of its range or otherwise wrong, named as
/// `section.key` with the value and what it must be.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("{key} = {value}: {expected}")]
pub struct ConfigError {
    /// `section.key`, e.g. `train.lr`.
    pub key: &'static str,
    /// The value as written in TOML (strings quoted).
    pub value: String,
    /// What the value must be.
    pub expected: String,
}

impl From<ConfigError> for String {
    fn from(e: ConfigError) -> String {
        e.to_string()
    }
}

/// Most worker threads (`run.threads`, `run.torch_threads`): the arena's
/// bound, far above any machine's cores, low enough that a typo cannot spawn
/// a hundred thousand.
pub use halatafl_arena::MAX_THREADS;
/// Most generations (and replay window, evaluation interval) of a run.
pub const MAX_GENERATIONS: u32 = 100_000;
/// Most training steps of one stage (and of warm-up, and between log rows).
pub const MAX_STEPS: u64 = 100_000_000;
/// Most games of one stage (expert games, self-play games, games per
/// opponent): the arena's bound on a match.
pub use halatafl_arena::MAX_GAMES;
/// Most simulations of one search.
pub const MAX_SIMULATIONS: u32 = 1_000_000;
/// Most leaves gathered from one tree per network call (the MCTS `batch=` limit).
pub const MAX_LEAVES_PER_TREE: u32 = 4096;
/// Longest self-play game before adjudication; also bounds the samples one
/// game adds to a shard beyond `samples_per_shard`.
pub const MAX_PLIES: usize = 10_000;
/// Most samples per shard: with [`MAX_PLIES`] and a record of at most a few
/// hundred bytes, a shard stays well below [`crate::shard::MAX_SHARD_BYTES`].
pub const MAX_SAMPLES_PER_SHARD: usize = 1_000_000;
/// Most positions per network call and per training batch.
pub const MAX_BATCH: usize = 65_536;
/// Most evaluation cache entries (each holds a position's priors and value).
pub const MAX_CACHE_ENTRIES: usize = 1 << 26;
/// Most suite positions judged per evaluated generation (`eval.suite_positions`).
pub const MAX_SUITE_POSITIONS: usize = 1_000_000;

/// The run config's keys of one auxiliary target ([`halatafl_nn::targets`]):
/// `[network] <target>_head` and `[train] <target>_weight`, named as
/// checkpoints name them ([`AuxTarget::head_key`], [`AuxTarget::weight_key`]),
/// and the fields that hold them. A new target adds its two fields and one
/// entry here; the checks and the network and training configs follow.
pub struct AuxKeys {
    /// The target.
    pub target: AuxTarget,
    /// `network.<target>_head`.
    pub head: &'static str,
    /// `train.<target>_weight`.
    pub weight: &'static str,
    /// Reads the head's key.
    pub head_of: fn(&NetworkSection) -> bool,
    /// Reads the weight's key.
    pub weight_of: fn(&TrainSection) -> f64,
}

/// Every auxiliary target's keys, in [`AuxTarget::ALL`] order.
pub const AUX_KEYS: [AuxKeys; AuxTarget::COUNT] = [
    AuxKeys {
        target: AuxTarget::MovesLeft,
        head: "network.moves_left_head",
        weight: "train.moves_left_weight",
        head_of: |n| n.moves_left_head,
        weight_of: |t| t.moves_left_weight,
    },
    AuxKeys {
        target: AuxTarget::GeeseTaken,
        head: "network.geese_taken_head",
        weight: "train.geese_taken_weight",
        head_of: |n| n.geese_taken_head,
        weight_of: |t| t.geese_taken_weight,
    },
];

fn bad(
    key: &'static str,
    value: impl std::fmt::Display,
    expected: impl Into<String>,
) -> ConfigError {
    ConfigError {
        key,
        value: value.to_string(),
        expected: expected.into(),
    }
}

/// Start files (`files`: key, paths) are read only when their share of the
/// games (`fraction`: key, value) is above 0; files without it are refused.
fn files_need_fraction(
    (key, files): (&'static str, &[String]),
    (fraction_key, fraction): (&str, f64),
) -> Result<(), ConfigError> {
    if !files.is_empty() && fraction <= 0.0 {
        return Err(bad(
            key,
            format!("{files:?}"),
            format!("games begin at their positions only with {fraction_key} > 0"),
        ));
    }
    Ok(())
}

/// The expert and the self-play opponent are agents the CLI builds without
/// a checkpoint: `spec` must name one (`need` says what for when it does not).
fn non_network_agent(key: &'static str, spec: &str, need: &str) -> Result<(), ConfigError> {
    if spec.trim().is_empty() || halatafl_nn::agent::is_network_spec(spec) {
        return Err(bad(key, quoted(spec), need));
    }
    Ok(())
}

/// A string value as TOML writes it.
fn quoted(text: &str) -> String {
    format!("{text:?}")
}

/// An integer key that must lie in `range`.
fn count<T: PartialOrd + std::fmt::Display>(
    key: &'static str,
    value: T,
    range: RangeInclusive<T>,
) -> Result<(), ConfigError> {
    if range.contains(&value) {
        return Ok(());
    }
    let expected = format!("must be an integer in [{}, {}]", range.start(), range.end());
    Err(bad(key, value, expected))
}

/// A real key that must lie in `(low, high)` with the given ends; NaN lies in
/// no interval, so it is refused like an out-of-range value.
fn real<T: Into<f64> + std::fmt::Display + Copy>(
    key: &'static str,
    value: T,
    (low, high): (Bound<f64>, Bound<f64>),
) -> Result<(), ConfigError> {
    if (low, high).contains(&value.into()) {
        return Ok(());
    }
    let (open, a) = match low {
        Bound::Included(a) => ('[', a),
        Bound::Excluded(a) => ('(', a),
        Bound::Unbounded => ('(', f64::NEG_INFINITY),
    };
    let (close, b) = match high {
        Bound::Included(b) => (']', b),
        Bound::Excluded(b) => (')', b),
        Bound::Unbounded => (')', f64::INFINITY),
    };
    Err(bad(
        key,
        value,
        format!("must be a number in {open}{a}, {b}{close}"),
    ))
}

/// `[low, high]`.
fn closed(low: f64, high: f64) -> (Bound<f64>, Bound<f64>) {
    (Bound::Included(low), Bound::Included(high))
}

/// `[low, high)`.
fn closed_open(low: f64, high: f64) -> (Bound<f64>, Bound<f64>) {
    (Bound::Included(low), Bound::Excluded(high))
}

/// `(low, high)`.
fn open_interval(low: f64, high: f64) -> (Bound<f64>, Bound<f64>) {
    (Bound::Excluded(low), Bound::Excluded(high))
}

/// `(low, high]`.
fn above(low: f64, high: f64) -> (Bound<f64>, Bound<f64>) {
    (Bound::Excluded(low), Bound::Included(high))
}

impl RunConfig {
    /// Parses and validates a config's TOML text; `origin` (its file) begins
    /// every error message.
    pub fn from_toml(text: &str, origin: &Path) -> Result<RunConfig, String> {
        let config: RunConfig =
            toml::from_str(text).map_err(|e| format!("{}: {e}", origin.display()))?;
        config
            .validate()
            .map_err(|e| format!("{}: {e}", origin.display()))?;
        Ok(config)
    }

    /// Reads, parses and validates the config file at `path`.
    pub fn load(path: &Path) -> Result<RunConfig, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read config {}: {e}", path.display()))?;
        RunConfig::from_toml(&text, path)
    }

    /// The whole config as TOML, every key written (what a run directory
    /// keeps as its `config.toml`).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("config serialises")
    }

    /// The variant `game.variant` names.
    pub fn variant(&self) -> Result<Variant, ConfigError> {
        let text = &self.game.variant;
        text.parse::<Variant>()
            .map_err(|e| bad("game.variant", quoted(text), e.to_string()))
    }

    /// The network's shape, from `[network]`.
    pub fn net_config(&self) -> Result<NetConfig, ConfigError> {
        self.network.net_config()
    }

    /// The training step's settings from `[train]`: the schedule laid over
    /// every generation's steps (the bootstrap's included), the precision
    /// parsed, and the keys `[train]` does not have at their defaults.
    pub fn train_config(&self) -> Result<TrainConfig, ConfigError> {
        let t = &self.train;
        let bootstrap_steps = if self.bootstrap.enabled() {
            self.bootstrap.steps
        } else {
            0
        };
        // Both factors are bounded by validation; saturate rather than wrap
        // for a config that has not been validated yet.
        let total = t
            .steps_per_generation
            .saturating_mul(self.run.generations as u64)
            .saturating_add(bootstrap_steps);
        let schedule = match t.schedule.as_str() {
            "constant" => LrSchedule::Constant,
            "cosine" => LrSchedule::Cosine {
                total_steps: total,
                min_lr: t.min_lr,
            },
            "step" => LrSchedule::Step {
                milestones: vec![total / 2, total * 3 / 4],
                gamma: 0.1,
            },
            o => {
                return Err(bad(
                    "train.schedule",
                    quoted(o),
                    "expected constant, cosine or step",
                ))
            }
        };
        let precision = t
            .precision
            .parse::<halatafl_nn::Precision>()
            .map_err(|e| bad("train.precision", quoted(&t.precision), e))?;
        Ok(TrainConfig {
            precision,
            optimizer: t.optimizer,
            lr: t.lr,
            momentum: t.momentum,
            l2: t.l2,
            grad_clip: t.grad_clip,
            warmup_steps: t.warmup_steps,
            schedule,
            aux_weights: t.aux_weights(),
            ..TrainConfig::default()
        })
    }

    /// Checks every key against its range, in file order, and returns the
    /// first that is wrong. Keys not checked here take any value of their
    /// type: `run.seed`, `bootstrap.replay_generations` (generations after it
    /// draw no expert samples), `search.temperature_plies`, `replay.mirror`
    /// and `train.optimizer` (its type admits only `sgd` and `adam`).
    /// Runs before a run directory is made, and again when a run is resumed.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.run.check()?;
        self.variant()?;
        self.network.check(&self.train.aux_weights())?;
        self.bootstrap.check(&self.network.init)?;
        self.search.check(self.network.heads())?;
        self.selfplay.check()?;
        if self.selfplay.prove_targets > 0 {
            halatafl_solver::proving::proofs_are_exact_in(self.variant()?)
                .map_err(|why| bad("selfplay.prove_targets", self.selfplay.prove_targets, why))?;
        }
        self.replay.check()?;
        // train.min_lr is checked against train.lr after the schedule parses.
        self.train.check_before_schedule()?;
        self.train_config()?;
        self.train.check(self.network.heads())?;
        self.eval.check(self.variant().ok())?;
        self.start_game_positions()?;
        self.suite_and_book_starts()?;
        self.asynchronous.check(self.selfplay.max_plies)
    }

    /// The positions of `selfplay.start_games` ([`crate::starts`]), read and
    /// replayed; a file's error names the key. Empty without files.
    pub fn start_game_positions(&self) -> Result<Vec<Position>, ConfigError> {
        self.read_starts(
            "selfplay.start_games",
            &self.selfplay.start_games,
            crate::starts::start_game_positions,
        )
    }

    /// The pool `selfplay.start_suite_fraction` draws from: the positions
    /// of `selfplay.start_suites`, then those of `selfplay.start_books`
    /// ([`crate::starts`]); a file's error names its key. Empty without
    /// either.
    pub fn suite_and_book_starts(&self) -> Result<Vec<Position>, ConfigError> {
        let mut pool = self.read_starts(
            "selfplay.start_suites",
            &self.selfplay.start_suites,
            crate::starts::suite_positions,
        )?;
        pool.extend(self.read_starts(
            "selfplay.start_books",
            &self.selfplay.start_books,
            crate::starts::book_positions,
        )?);
        Ok(pool)
    }

    /// The positions `read` finds in `files` (the value of `key`) for this
    /// run's variant, its error under `key`; empty without files.
    fn read_starts(
        &self,
        key: &'static str,
        files: &[String],
        read: fn(&[String], Variant) -> Result<Vec<Position>, String>,
    ) -> Result<Vec<Position>, ConfigError> {
        if files.is_empty() {
            return Ok(Vec::new());
        }
        read(files, self.variant()?).map_err(|why| bad(key, format!("{files:?}"), why))
    }
}

/// An evaluation opponent that can be checked without building it: `previous`,
/// a non-empty spec, and for a `net` agent a `ckpt=` naming a readable
/// checkpoint of the run's variant (the CLI builds the other kinds before
/// the run starts). Without this, a missing checkpoint surfaced only after
/// generation 0 had been trained.
fn check_opponent(spec: &str, variant: Option<Variant>) -> Result<(), ConfigError> {
    let wrong = |why: String| bad("eval.opponents", quoted(spec), why);
    if spec.trim().is_empty() {
        return Err(wrong("an opponent spec is empty".into()));
    }
    // Decided by the parsed kind; a spec that does not parse is reported,
    // with every valid form, when the CLI builds it.
    if halatafl_nn::agent::network_kind(spec) != Some("net") {
        return Ok(());
    }
    let parsed = AgentSpec::parse(spec, &halatafl_nn::agent::net_forms())
        .map_err(|e| wrong(e.to_string()))?;
    let ckpt: String = parsed
        .get("ckpt")
        .map_err(|e| wrong(e.to_string()))?
        .ok_or_else(|| wrong("a network opponent needs `ckpt=PATH`".into()))?;
    let info = halatafl_nn::checkpoint::info(Path::new(&ckpt)).map_err(|e| wrong(e.to_string()))?;
    if let Some(variant) = variant {
        let trained = halatafl_nn::agent::trained_variant(&info);
        halatafl_nn::agent::check_trained_variant(&ckpt, trained, variant).map_err(wrong)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_auxiliary_target_has_its_keys_named_as_checkpoints_name_them() {
        for (k, target) in AUX_KEYS.iter().zip(AuxTarget::ALL) {
            assert_eq!(k.target, target);
            assert_eq!(k.head, format!("network.{}", target.head_key()));
            assert_eq!(k.weight, format!("train.{}", target.weight_key()));
        }
    }

    #[test]
    fn network_agents_are_told_by_their_parsed_kind() {
        for spec in ["net:ckpt=x", "best", "best:sims=4"] {
            assert!(non_network_agent("k", spec, "need").is_err(), "{spec}");
        }
        // Kinds that merely begin like one are left to the agent factory,
        // which names them as unknown.
        for spec in ["nettle", "network:x=1", "alphabeta:depth=2", "bestie"] {
            assert!(non_network_agent("k", spec, "need").is_ok(), "{spec}");
        }
    }

    #[test]
    fn every_shipped_config_is_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut seen = 0;
        // The presets, then the configs of the logged experiments.
        for dir in [dir.clone(), dir.join("experiments")] {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "toml") {
                    // Their data paths are from the repository's root, where
                    // they are run (the tests run in the crate's folder).
                    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
                    let text = std::fs::read_to_string(&path)
                        .unwrap()
                        .replace("\"data/", &format!("\"{}/data/", root.display()));
                    RunConfig::from_toml(&text, &path)
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    seen += 1;
                }
            }
        }
        assert!(
            seen >= 14,
            "4 presets and 10 experiment configs, found {seen}"
        );
    }

    /// A value each key must refuse (several for some), as TOML. A value may
    /// carry a second line for its section, for keys checked only in context.
    const BAD_VALUES: &[(&str, &str)] = &[
        ("run.generations", "0"),
        ("run.generations", "100001"),
        ("run.threads", "0"),
        ("run.threads", "100000"),
        ("run.torch_threads", "0"),
        ("run.torch_threads", "5000"),
        ("run.device", "\"tpu\""),
        ("game.variant", "\"chess\""),
        ("network.preset", "\"b1000000c1000000\""),
        ("network.precision", "\"f16\""),
        ("eval.suite", "\"no/such/suite.csv\""),
        // A suite of another variant than the run's (Two Foxes).
        ("eval.suite", "\"../../data/suites/classic13.csv\""),
        ("eval.suite_positions", "1000001"),
        ("network.max_batch", "0"),
        ("network.cache_entries", "1000000000"),
        ("network.moves_left_head", "true"),
        ("network.geese_taken_head", "true"),
        ("bootstrap.games", "100000000"),
        ("bootstrap.agent", "\"net:ckpt=x\"\ngames = 5"),
        ("bootstrap.agent", "\" \"\ngames = 5"),
        // A network by its parsed kind, not by how its text begins.
        ("bootstrap.agent", "\"best:sims=4\"\ngames = 5"),
        ("bootstrap.opening_plies", "100000"),
        ("bootstrap.steps", "0\ngames = 5"),
        ("bootstrap.replay_fraction", "1.5"),
        ("bootstrap.replay_fraction", "nan"),
        ("bootstrap.opponent_fraction", "1.5"),
        ("bootstrap.opponent", "\"best\"\nopponent_fraction = 0.5"),
        ("bootstrap.opponent", "\"\"\nopponent_fraction = 0.5"),
        (
            "bootstrap.opponent",
            "\"alphabeta:depth=4\"\nopponent_fraction = 0.5\nagent = \"alphabeta:depth=4\"",
        ),
        ("bootstrap.opponent_side", "\"pigs\""),
        ("search.algorithm", "\"alphazero\""),
        ("search.simulations", "0"),
        ("search.full_search_probability", "0.0"),
        ("search.full_search_probability", "nan"),
        ("search.fast_simulations", "0"),
        ("search.c_puct", "-1.0"),
        ("search.c_puct", "nan"),
        ("search.fpu_reduction", "-0.5"),
        ("search.dirichlet_alpha_scale", "0.0"),
        ("search.dirichlet_alpha_scale", "inf"),
        ("search.dirichlet_epsilon", "1.5"),
        ("search.gumbel_m", "0"),
        ("search.temperature", "nan"),
        ("search.temperature", "-1.0"),
        ("search.temperature", "inf"),
        ("search.leaves_per_tree", "0"),
        ("search.count_reused_visits", "true\nalgorithm = \"gumbel\""),
        ("search.moves_left_utility", "-0.1"),
        ("search.moves_left_utility", "2.0"),
        ("search.moves_left_utility", "nan"),
        ("search.material_utility", "1.0"),
        ("search.material_utility", "-0.1"),
        ("search.capture_plies", "7\nmaterial_utility = 0.3"),
        ("search.capture_plies", "3"),
        ("search.material_eval", "true"),
        ("search.room_weight", "0.5"),
        ("search.room_weight", "5.0\nmaterial_utility = 0.3"),
        ("search.room_weight", "-0.5\nmaterial_utility = 0.3"),
        ("search.geese_draw", "1.0"),
        ("search.geese_draw", "-1.0"),
        ("search.geese_draw", "nan"),
        ("search.moves_left_utility", "0.05"),
        ("selfplay.games", "0"),
        ("selfplay.concurrent_games", "0"),
        ("selfplay.max_plies", "0"),
        ("selfplay.resign_threshold", "-0.1"),
        ("selfplay.resign_threshold", "nan"),
        ("selfplay.resign_consecutive", "0"),
        ("selfplay.resign_playout_fraction", "2.0"),
        ("selfplay.samples_per_shard", "0"),
        ("selfplay.opponent_random_moves", "0.2"),
        ("selfplay.result_half_life", "-1.0"),
        ("selfplay.result_half_life", "nan"),
        ("selfplay.prove_targets", "20000000"),
        // The default variant is Two Foxes, where positions recur.
        ("selfplay.prove_targets", "1000"),
        ("selfplay.prove_policy", "true"),
        ("selfplay.start_position_fraction", "1.5"),
        (
            "selfplay.start_games",
            "[\"../../data/suites/classic13-games.csv\"]",
        ),
        (
            "selfplay.start_games",
            "[\"no/such/games.csv\"]\nstart_position_fraction = 0.5",
        ),
        // Classic games for a Two Foxes run.
        (
            "selfplay.start_games",
            "[\"../../data/suites/classic13-games.csv\"]\nstart_position_fraction = 0.5",
        ),
        ("selfplay.start_suite_fraction", "-0.5"),
        ("selfplay.start_suite_fraction", "0.25"),
        (
            "selfplay.start_suites",
            "[\"../../data/suites/classic13.csv\"]",
        ),
        (
            "selfplay.start_suites",
            "[\"no/such/suite.csv\"]\nstart_suite_fraction = 0.5",
        ),
        // A classic suite for a Two Foxes run.
        (
            "selfplay.start_suites",
            "[\"../../data/suites/classic13.csv\"]\nstart_suite_fraction = 0.5",
        ),
        // A games file is not a suite.
        (
            "selfplay.start_suites",
            "[\"../../data/suites/two-foxes-games.csv\"]\nstart_suite_fraction = 0.5",
        ),
        ("selfplay.start_books", "[\"../../data/beds/shutin40.book\"]"),
        (
            "selfplay.start_books",
            "[\"no/such/openings.book\"]\nstart_suite_fraction = 0.5",
        ),
        // A game CSV is not a book: its header is no move.
        (
            "selfplay.start_books",
            "[\"../../data/suites/two-foxes-games.csv\"]\nstart_suite_fraction = 0.5",
        ),
        // A Two Foxes book for a classic run.
        (
            "selfplay.start_books",
            "[\"../../data/beds/shutin40.book\"]\nstart_suite_fraction = 0.5\n[game]\nvariant = \"classic geese=13\"",
        ),
        ("selfplay.opponent_fraction", "1.5"),
        ("selfplay.opponent", "\"\"\nopponent_fraction = 0.5"),
        (
            "selfplay.opponent",
            "\"net:ckpt=x\"\nopponent_fraction = 0.5",
        ),
        ("selfplay.opponent", "\"best\"\nopponent_fraction = 0.5"),
        ("selfplay.opponent_side", "\"pigs\""),
        ("selfplay.opponent_samples", "true"),
        (
            "network.init",
            "\"models/best.safetensors\"\n[bootstrap]\ngames = 10",
        ),
        ("replay.window_generations", "0"),
        ("replay.search_value_mix", "2.0"),
        ("replay.search_value_mix", "-0.5"),
        ("train.batch_size", "0"),
        ("train.steps_per_generation", "0"),
        ("train.log_every", "0"),
        ("train.lr", "-0.1"),
        ("train.lr", "0.0"),
        ("train.lr", "nan"),
        ("train.momentum", "1.0"),
        ("train.l2", "-1.0"),
        ("train.grad_clip", "-1.0"),
        ("train.warmup_steps", "1000000000000"),
        ("train.schedule", "\"linear\""),
        ("train.min_lr", "-0.001"),
        ("train.precision", "\"f16\""),
        // `auto` chooses an inference precision; training's is fixed.
        ("train.precision", "\"auto\""),
        ("train.moves_left_weight", "-0.5"),
        ("train.moves_left_weight", "nan"),
        ("train.moves_left_weight", "0.5"),
        ("train.geese_taken_weight", "-0.5"),
        ("train.geese_taken_weight", "nan"),
        ("train.geese_taken_weight", "0.5"),
        ("train.min_lr", "0.5\nschedule = \"cosine\""),
        ("eval.every", "0"),
        ("eval.games", "0"),
        ("eval.opponents", "[\"random\", \"\"]"),
        ("eval.opponents", "[\"net:sims=4\"]"),
        (
            "eval.opponents",
            "[\"net:ckpt=/nonexistent/gen_0001.safetensors\"]",
        ),
        ("eval.simulations", "0"),
        ("eval.opening_plies", "100000"),
        ("eval.leaves_per_tree", "0"),
        ("network.inference_servers", "0"),
        ("network.inference_servers", "100000"),
        ("async.train_ratio", "0.0"),
        ("async.train_ratio", "nan"),
        ("async.shard_games", "0"),
        ("async.shard_games", "5000"),
        ("async.poll_seconds", "0.0"),
        ("async.poll_seconds", "86400.0"),
        ("async.max_ahead_generations", "200000"),
    ];

    /// Keys that take every value of their type (TOML refuses the others).
    const ANY_VALUE: &[&str] = &[
        "run.seed",
        "bootstrap.replay_generations",
        "search.temperature_plies",
        "search.cheapest_win",
        "replay.mirror",
        "selfplay.carry_over",
        "train.optimizer",
    ];

    #[test]
    fn every_key_refuses_bad_values_naming_the_key() {
        for (key, value) in BAD_VALUES {
            let (section, name) = key.split_once('.').unwrap();
            let text = format!("[{section}]\n{name} = {value}\n");
            let err = RunConfig::from_toml(&text, Path::new("bad.toml"))
                .expect_err(&format!("{key} = {value} was accepted"));
            assert!(
                err.starts_with(&format!("bad.toml: {key} = ")),
                "{key} = {value}: {err}"
            );
        }
        // Every key of the config is covered.
        let table: toml::Table = RunConfig::default().to_toml().parse().unwrap();
        for (section, keys) in &table {
            for name in keys.as_table().unwrap().keys() {
                let key = format!("{section}.{name}");
                assert!(
                    ANY_VALUE.contains(&key.as_str()) || BAD_VALUES.iter().any(|(k, _)| *k == key),
                    "{key} has no bad value in the table"
                );
            }
        }
        // What a range error says.
        let err = RunConfig::from_toml("[run]\nthreads = 100000\n", Path::new("x")).unwrap_err();
        assert_eq!(
            err,
            "x: run.threads = 100000: must be an integer in [1, 1024]"
        );
        let err = RunConfig::from_toml("[train]\nlr = nan\n", Path::new("x")).unwrap_err();
        assert_eq!(err, "x: train.lr = NaN: must be a number in (0, 10]");
        let err =
            RunConfig::from_toml("[train]\noptimizer = \"rmsprop\"\n", Path::new("x")).unwrap_err();
        assert!(
            err.contains("optimizer") && err.contains("rmsprop"),
            "{err}"
        );
    }

    #[test]
    fn books_alone_fill_the_pool_the_suite_fraction_draws_from() {
        let text = "[selfplay]\nstart_suite_fraction = 0.25\nstart_books = [\"../../data/beds/shutin40.book\", \"../../data/beds/neutral40.book\"]\n";
        let config = RunConfig::from_toml(text, Path::new("books.toml")).unwrap();
        assert!(config.selfplay.has_start_pool());
        let pool = config.suite_and_book_starts().unwrap();
        let shutin = crate::starts::book_positions(
            &["../../data/beds/shutin40.book".into()],
            Variant::two_foxes(),
        )
        .unwrap();
        assert_eq!(shutin.len(), 44);
        assert_eq!(&pool[..44], &shutin[..]);
        assert_eq!(pool.len(), 44 + 43);
    }

    #[test]
    fn inference_servers_read_auto_or_a_count_and_plan_the_threads() {
        let read = |v: &str| {
            RunConfig::from_toml(
                &format!("[network]\ninference_servers = {v}\n"),
                Path::new("s.toml"),
            )
            .map(|c| c.network.inference_servers)
        };
        assert_eq!(read("\"auto\"").unwrap(), ServerCount::Auto);
        assert_eq!(read("3").unwrap(), ServerCount::Count(3));
        for bad in ["\"many\"", "-1", "1.5"] {
            let err = read(bad).unwrap_err();
            assert!(
                err.contains("inference_servers") && err.contains("s.toml"),
                "{bad}: {err}"
            );
        }
        // Written back as given.
        let mut c = RunConfig::default();
        assert!(c.to_toml().contains("inference_servers = \"auto\""));
        c.network.inference_servers = ServerCount::Count(2);
        assert_eq!(
            RunConfig::from_toml(&c.to_toml(), Path::new("y")).unwrap(),
            c
        );
        // (servers, libtorch threads each) for (workers, torch threads, gpu).
        let auto = ServerCount::Auto;
        assert_eq!(auto.plan(2, 2, false), (2, 1));
        assert_eq!(auto.plan(1, 2, false), (1, 2));
        assert_eq!(auto.plan(4, 2, false), (2, 1));
        assert_eq!(auto.plan(2, 8, false), (2, 4));
        assert_eq!(auto.plan(2, 3, false), (2, 1));
        assert_eq!(auto.plan(4, 4, true), (1, 4));
        assert_eq!(ServerCount::Count(1).plan(2, 2, false), (1, 2));
        assert_eq!(ServerCount::Count(4).plan(2, 2, true), (2, 1));
    }

    #[test]
    fn a_removed_key_at_zero_still_reads() {
        let text = "[selfplay]\nopponent_random_moves = 0.0\n";
        let config = RunConfig::from_toml(text, Path::new("old.toml")).unwrap();
        assert_eq!(config.selfplay.opponent_random_moves, Some(0.0));
        assert_eq!(
            config.selfplay,
            SelfPlaySection {
                opponent_random_moves: Some(0.0),
                ..SelfPlaySection::default()
            }
        );
        assert!(!RunConfig::default()
            .to_toml()
            .contains("opponent_random_moves"));
    }

    #[test]
    fn unknown_keys_are_named_and_defaults_round_trip() {
        let err =
            RunConfig::from_toml("[search]\nsimulatons = 5\n", Path::new("x.toml")).unwrap_err();
        assert!(
            err.contains("simulatons") && err.contains("x.toml"),
            "{err}"
        );
        let err = RunConfig::from_toml("[serch]\n", Path::new("x.toml")).unwrap_err();
        assert!(err.contains("serch"), "{err}");
        let c = RunConfig::default();
        assert_eq!(
            RunConfig::from_toml(&c.to_toml(), Path::new("y")).unwrap(),
            c
        );
        let err =
            RunConfig::from_toml("[game]\nvariant = \"chess\"\n", Path::new("z")).unwrap_err();
        assert!(err.contains("chess"), "{err}");
    }
}
