//! The network as a search [`Evaluator`]: any number of search threads call
//! `evaluate`; one inference thread owns the network (tch modules are not
//! `Sync`), gathers their requests into batches of up to `max_batch`
//! positions, runs them, and answers each caller on its own reply channel.
//!
//! Waiting for a batch to fill: the loop waits (at most `max_wait`) only for
//! callers it expects, those that have asked recently compared with their own
//! usual gap between requests. A lone search (a match game, `play`, the
//! engine protocol) is therefore answered at once instead of paying
//! `max_wait` per call, which at batch 1 cost twice the network's own time;
//! self-play workers that take turns still merge into one batch.
//!
//! A bounded, direct-mapped cache keyed by everything the encoding sees (the
//! Zobrist hash, the quiet counter, the repetition flag, the variant) holds the
//! priors over legal moves, the value and the auxiliary heads' predictions;
//! its hit rate is counted.

use crate::encoding::{encode_into, move_logits, softmax_in_place, INPUT_SIZE, POLICY_SIZE};
use crate::inference::{InferenceNet, InferenceOutput, Precision, PrecisionTrial};
use crate::targets::{AuxTarget, PerTarget};
use halatafl_mcts::{Evaluations, Evaluator, LeafBatch, TwoFoxesLeaf, Wdl};
use halatafl_rules::{Game, Position};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How a [`NetEvaluator`] batches, caches and threads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EvaluatorConfig {
    /// Most positions per network call.
    pub max_batch: usize,
    /// Longest wait for more requests from expected callers once one has
    /// arrived (see the module doc).
    pub max_wait: Duration,
    /// Cache entries (0 disables the cache).
    pub cache_entries: usize,
    /// Intra-op threads of the inference thread's libtorch pool.
    pub threads: usize,
}

impl Default for EvaluatorConfig {
    fn default() -> EvaluatorConfig {
        EvaluatorConfig {
            max_batch: 256,
            max_wait: Duration::from_micros(500),
            cache_entries: 1 << 18,
            threads: 1,
        }
    }
}

struct Request {
    planes: Vec<f32>,
    count: usize,
    reply: SyncSender<InferenceOutput>,
    /// The calling thread. A caller blocks until answered, so a batch being
    /// gathered holds at most one request per caller.
    caller: std::thread::ThreadId,
}

/// When a caller last asked and its usual gap between requests.
#[derive(Clone, Copy, Debug)]
struct CallerRhythm {
    last: Instant,
    gap: Duration,
}

/// The callers the inference loop expects to hear from soon, from their
/// request times.
#[derive(Default)]
struct Callers {
    rhythm: std::collections::HashMap<std::thread::ThreadId, CallerRhythm>,
}

impl Callers {
    /// Records a request. The gap is a running average over gaps clipped to
    /// twice the average, so one long pause (the opponent's turn) does not
    /// make a caller look busy for long afterwards.
    fn heard(&mut self, caller: std::thread::ThreadId, now: Instant) {
        match self.rhythm.get_mut(&caller) {
            Some(r) => {
                let gap = (now - r.last).min(r.gap * 2 + Duration::from_micros(200));
                r.gap = (r.gap * 3 + gap) / 4;
                r.last = now;
            }
            None => {
                self.rhythm.insert(
                    caller,
                    CallerRhythm {
                        last: now,
                        gap: Duration::from_millis(1),
                    },
                );
            }
        }
    }

    /// Callers whose next request is due: heard from within twice their usual
    /// gap (plus a little slack). Callers silent for a second are forgotten.
    fn expected(&mut self, now: Instant) -> usize {
        self.rhythm
            .retain(|_, r| now - r.last < Duration::from_secs(1));
        self.rhythm
            .values()
            .filter(|r| now - r.last <= r.gap * 2 + Duration::from_micros(500))
            .count()
    }
}

struct CacheEntry {
    key: u64,
    wdl: [f32; 3],
    /// Each auxiliary head's prediction, `None` for heads the net lacks.
    aux: PerTarget<Option<f32>>,
    priors: Box<[f32]>,
}

const SHARDS: usize = 64;

/// Counters for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EvaluatorStats {
    /// Cache lookups (none are counted while the cache is disabled).
    pub lookups: u64,
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Positions the network has run on.
    pub positions_run: u64,
    /// Network calls (batches) the inference thread has made.
    pub batches_run: u64,
}

/// The counters of several servers together (self-play's, one per
/// worker), so that rates are over the sums, not means of rates.
impl std::iter::Sum for EvaluatorStats {
    fn sum<I: Iterator<Item = EvaluatorStats>>(all: I) -> EvaluatorStats {
        all.fold(EvaluatorStats::default(), |a, b| EvaluatorStats {
            lookups: a.lookups + b.lookups,
            hits: a.hits + b.hits,
            positions_run: a.positions_run + b.positions_run,
            batches_run: a.batches_run + b.batches_run,
        })
    }
}

impl EvaluatorStats {
    /// Share of lookups answered from the cache; 0 without lookups.
    pub fn hit_rate(&self) -> f64 {
        if self.lookups == 0 {
            0.0
        } else {
            self.hits as f64 / self.lookups as f64
        }
    }

    /// Mean positions per network call; 0 before the first call.
    pub fn mean_batch(&self) -> f64 {
        if self.batches_run == 0 {
            0.0
        } else {
            self.positions_run as f64 / self.batches_run as f64
        }
    }
}

/// The network as a search [`Evaluator`] for halatafl games: the handle to
/// one inference thread (started by [`NetEvaluator::start`], stopped and
/// joined on drop) and its shared cache. See the module doc for how requests
/// are batched.
pub struct NetEvaluator {
    sender: Mutex<Sender<Request>>,
    shards: Vec<Mutex<Vec<Option<CacheEntry>>>>,
    slots_per_shard: usize,
    lookups: AtomicU64,
    hits: AtomicU64,
    positions_run: std::sync::Arc<AtomicU64>,
    batches_run: std::sync::Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The network's precision, and the `auto` trial that chose it.
    precision: (Precision, Option<PrecisionTrial>),
}

fn cache_key(leaf: &TwoFoxesLeaf) -> u64 {
    let p = &leaf.position;
    let v = p.variant();
    let extra = (p.quiet() as u64) << 8
        | (leaf.repetitions.min(2) as u64) << 4
        | (v.is_classic() as u64) << 3
        | (v.corner_links as u64) << 2
        | (v.sideways as u64) << 1;
    let mut z = extra.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    p.hash() ^ z ^ (z >> 31) ^ (v.geese as u64)
}

impl NetEvaluator {
    /// Starts the inference thread; `make_net` runs on it (so an `auto`
    /// precision trial, [`crate::PreparedNet::settle`], is timed with the
    /// thread's own libtorch threads), and this returns once it has.
    pub fn start(
        make_net: impl FnOnce() -> InferenceNet + Send + 'static,
        config: EvaluatorConfig,
    ) -> NetEvaluator {
        let (sender, receiver) = mpsc::channel::<Request>();
        let positions_run = std::sync::Arc::new(AtomicU64::new(0));
        let batches_run = std::sync::Arc::new(AtomicU64::new(0));
        let (pr, br) = (positions_run.clone(), batches_run.clone());
        let (made, made_receiver) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("halatafl-inference".into())
            .spawn(move || {
                crate::set_threads(config.threads);
                let net = make_net();
                // The receiver waits below; it cannot be gone.
                let _ = made.send((net.precision(), net.trial()));
                inference_loop(net, receiver, config, &pr, &br);
            })
            .expect("spawn inference thread");
        let precision = made_receiver
            .recv()
            .expect("the inference thread made its network");
        let shard_slots = if config.cache_entries == 0 {
            0
        } else {
            config.cache_entries.div_ceil(SHARDS)
        };
        NetEvaluator {
            sender: Mutex::new(sender),
            shards: (0..SHARDS)
                .map(|_| Mutex::new((0..shard_slots).map(|_| None).collect()))
                .collect(),
            slots_per_shard: shard_slots,
            lookups: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            positions_run,
            batches_run,
            thread: Some(thread),
            precision,
        }
    }

    /// The precision the network runs in.
    pub fn precision(&self) -> Precision {
        self.precision.0
    }

    /// The `auto` trial that chose [`NetEvaluator::precision`], if one did.
    pub fn trial(&self) -> Option<PrecisionTrial> {
        self.precision.1
    }

    /// The cache and batching counters so far.
    pub fn stats(&self) -> EvaluatorStats {
        EvaluatorStats {
            lookups: self.lookups.load(Ordering::Relaxed),
            hits: self.hits.load(Ordering::Relaxed),
            positions_run: self.positions_run.load(Ordering::Relaxed),
            batches_run: self.batches_run.load(Ordering::Relaxed),
        }
    }

    fn slot(&self, key: u64) -> (usize, usize) {
        let shard = (key % SHARDS as u64) as usize;
        let slot = ((key / SHARDS as u64) % self.slots_per_shard.max(1) as u64) as usize;
        (shard, slot)
    }

    /// The cached value and plies left of `key`, its priors copied into `priors`.
    fn lookup(&self, key: u64, priors: &mut [f32]) -> Option<(Wdl, PerTarget<Option<f32>>)> {
        if self.slots_per_shard == 0 {
            return None;
        }
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let (shard, slot) = self.slot(key);
        let guard = self.shards[shard].lock().expect("cache lock");
        match &guard[slot] {
            Some(e) if e.key == key && e.priors.len() == priors.len() => {
                priors.copy_from_slice(&e.priors);
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some((
                    Wdl {
                        win: e.wdl[0],
                        draw: e.wdl[1],
                        loss: e.wdl[2],
                    },
                    e.aux,
                ))
            }
            _ => None,
        }
    }

    fn store(&self, key: u64, priors: &[f32], wdl: [f32; 3], aux: PerTarget<Option<f32>>) {
        if self.slots_per_shard == 0 {
            return;
        }
        let (shard, slot) = self.slot(key);
        let mut guard = self.shards[shard].lock().expect("cache lock");
        guard[slot] = Some(CacheEntry {
            key,
            wdl,
            aux,
            priors: priors.into(),
        });
    }

    /// Runs the network on raw planes (no cache): for benchmarks and tests.
    pub fn run_planes(&self, planes: Vec<f32>, count: usize) -> InferenceOutput {
        let (reply, answer) = mpsc::sync_channel(1);
        self.sender
            .lock()
            .expect("sender lock")
            .send(Request {
                planes,
                count,
                reply,
                caller: std::thread::current().id(),
            })
            .expect("inference thread alive");
        answer.recv().expect("inference thread answers")
    }

    /// Priors over `position.legal_moves()` and the WDL value, for one position.
    pub fn evaluate_position(&self, position: &Position, repetitions: u8) -> (Vec<f32>, Wdl) {
        let mut batch = LeafBatch::<Game>::new();
        let moves = position.legal_moves();
        batch.push(
            TwoFoxesLeaf {
                position: *position,
                repetitions,
            },
            &moves,
        );
        let mut out = Evaluations::new();
        out.prepare(&batch);
        self.evaluate(&batch, &mut out);
        (out.priors(0).to_vec(), out.value(0))
    }
}

impl Drop for NetEvaluator {
    fn drop(&mut self) {
        // Closing the channel ends the inference loop.
        let (dead, _) = mpsc::channel();
        *self.sender.lock().expect("sender lock") = dead;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Adds a request to the batch being gathered; returns its position count.
fn join(callers: &mut Callers, r: Request, pending: &mut Vec<Request>) -> usize {
    callers.heard(r.caller, Instant::now());
    let count = r.count;
    pending.push(r);
    count
}

fn inference_loop(
    net: InferenceNet,
    receiver: Receiver<Request>,
    config: EvaluatorConfig,
    positions: &AtomicU64,
    batches: &AtomicU64,
) {
    let mut pending: Vec<Request> = Vec::new();
    let mut planes: Vec<f32> = Vec::new();
    let mut callers = Callers::default();
    while let Ok(first) = receiver.recv() {
        let start = Instant::now();
        let mut total = join(&mut callers, first, &mut pending);
        // Requests already queued join the batch whether expected or not.
        while total < config.max_batch {
            match receiver.try_recv() {
                Ok(r) => total += join(&mut callers, r, &mut pending),
                Err(_) => break,
            }
        }
        // One request per caller, so `pending.len()` callers have asked.
        let expected = callers.expected(start);
        let deadline = start + config.max_wait;
        while total < config.max_batch && pending.len() < expected {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            match receiver.recv_timeout(deadline - now) {
                Ok(r) => total += join(&mut callers, r, &mut pending),
                Err(_) => break,
            }
        }
        planes.clear();
        for r in &pending {
            planes.extend_from_slice(&r.planes);
        }
        let out = net.run(&planes, total);
        positions.fetch_add(total as u64, Ordering::Relaxed);
        batches.fetch_add(1, Ordering::Relaxed);
        let mut at = 0;
        for r in pending.drain(..) {
            let part = InferenceOutput {
                policy: out.policy[at * POLICY_SIZE..(at + r.count) * POLICY_SIZE].to_vec(),
                wdl: out.wdl[at * 3..(at + r.count) * 3].to_vec(),
                aux: PerTarget::from_fn(|t| match out.aux[t].is_empty() {
                    true => Vec::new(),
                    false => out.aux[t][at..at + r.count].to_vec(),
                }),
            };
            at += r.count;
            let _ = r.reply.send(part);
        }
    }
}

/// Hands the search the auxiliary predictions it uses: the plies left, for
/// its moves-left utility, and the geese still to be taken as the change of
/// the side to move's material (fewer geese for the geese, more for the
/// foxes), for its material utility (`halatafl_mcts::search`).
fn pass_to_search(out: &mut Evaluations, i: usize, leaf: &Position, aux: &PerTarget<Option<f32>>) {
    if let Some(plies) = aux[AuxTarget::MovesLeft] {
        out.set_plies_left(i, plies);
    }
    if let Some(taken) = aux[AuxTarget::GeeseTaken] {
        let change = match leaf.side() {
            halatafl_rules::Side::Geese => -taken,
            halatafl_rules::Side::Foxes => taken,
        };
        out.set_material_left(i, change);
    }
}

impl Evaluator<Game> for NetEvaluator {
    fn evaluate(&self, batch: &LeafBatch<Game>, out: &mut Evaluations) {
        let mut misses: Vec<(usize, u64)> = Vec::new();
        for i in 0..batch.len() {
            let key = cache_key(batch.leaf(i));
            match self.lookup(key, out.priors_mut(i)) {
                Some((wdl, aux)) => {
                    out.set_value(i, wdl);
                    pass_to_search(out, i, &batch.leaf(i).position, &aux);
                }
                None => misses.push((i, key)),
            }
        }
        if misses.is_empty() {
            return;
        }
        let mut planes = vec![0f32; misses.len() * INPUT_SIZE];
        for (k, &(i, _)) in misses.iter().enumerate() {
            let leaf = batch.leaf(i);
            encode_into(
                &leaf.position,
                leaf.repetitions as usize,
                &mut planes[k * INPUT_SIZE..(k + 1) * INPUT_SIZE],
            );
        }
        let result = self.run_planes(planes, misses.len());
        let mut logits = Vec::new();
        for (k, &(i, key)) in misses.iter().enumerate() {
            move_logits(
                &result.policy[k * POLICY_SIZE..(k + 1) * POLICY_SIZE],
                batch.moves(i),
                &mut logits,
            );
            softmax_in_place(&mut logits);
            out.priors_mut(i).copy_from_slice(&logits);
            let w = [
                result.wdl[k * 3],
                result.wdl[k * 3 + 1],
                result.wdl[k * 3 + 2],
            ];
            out.set_value(
                i,
                Wdl {
                    win: w[0],
                    draw: w[1],
                    loss: w[2],
                },
            );
            let aux = PerTarget::from_fn(|t| result.aux[t].get(k).copied());
            pass_to_search(out, i, &batch.leaf(i).position, &aux);
            self.store(key, &logits, w, aux);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_ids(n: usize) -> Vec<std::thread::ThreadId> {
        (0..n)
            .map(|_| {
                std::thread::spawn(|| std::thread::current().id())
                    .join()
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn callers_in_rhythm_are_expected_and_silent_ones_are_not() {
        let ids = thread_ids(2);
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut callers = Callers::default();
        // Two self-play workers taking turns every 2 ms.
        for k in 0..10u32 {
            callers.heard(ids[0], t0 + ms(2 * k as u64));
            callers.heard(ids[1], t0 + ms(2 * k as u64 + 1));
        }
        assert_eq!(callers.expected(t0 + ms(20)), 2);
        // The second stops (its game's opponent is thinking): after a few of
        // its usual gaps it is no longer waited for.
        for k in 10..20u32 {
            callers.heard(ids[0], t0 + ms(2 * k as u64));
        }
        assert_eq!(callers.expected(t0 + ms(40)), 1);
        // One long pause does not make the first look busy for long after.
        callers.heard(ids[0], t0 + ms(500));
        assert_eq!(callers.expected(t0 + ms(520)), 0);
        // Callers silent for over a second are forgotten.
        assert_eq!(callers.expected(t0 + ms(3000)), 0);
        assert!(callers.rhythm.is_empty());
    }
}
