//! The network as a search [`Evaluator`]: any number of search threads call
//! `evaluate`; one inference thread owns the network (tch modules are not
//! `Sync`), gathers their requests into batches of up to `max_batch`
//! positions (waiting at most `max_wait` for a batch to fill), runs them, and
//! answers each caller on its own reply channel.
//!
//! A bounded, direct-mapped cache keyed by everything the encoding sees (the
//! Zobrist hash, the quiet counter, the repetition flag, the variant) holds the
//! priors over legal moves and the value; its hit rate is counted.

use crate::encoding::{encode_into, move_logits, softmax_in_place, INPUT_SIZE, POLICY_SIZE};
use crate::inference::{InferenceNet, InferenceOutput};
use halatafl_mcts::{Evaluations, Evaluator, LeafBatch, TwoFoxesLeaf, Wdl};
use halatafl_rules::{Game, Position};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EvaluatorConfig {
    /// Most positions per network call.
    pub max_batch: usize,
    /// Longest wait for more requests once one has arrived.
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
}

struct CacheEntry {
    key: u64,
    wdl: [f32; 3],
    priors: Box<[f32]>,
}

const SHARDS: usize = 64;

/// Counters for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EvaluatorStats {
    pub lookups: u64,
    pub hits: u64,
    pub positions_run: u64,
    pub batches_run: u64,
}

impl EvaluatorStats {
    pub fn hit_rate(&self) -> f64 {
        if self.lookups == 0 {
            0.0
        } else {
            self.hits as f64 / self.lookups as f64
        }
    }
    pub fn mean_batch(&self) -> f64 {
        if self.batches_run == 0 {
            0.0
        } else {
            self.positions_run as f64 / self.batches_run as f64
        }
    }
}

pub struct NetEvaluator {
    sender: Mutex<Sender<Request>>,
    shards: Vec<Mutex<Vec<Option<CacheEntry>>>>,
    slots_per_shard: usize,
    lookups: AtomicU64,
    hits: AtomicU64,
    positions_run: std::sync::Arc<AtomicU64>,
    batches_run: std::sync::Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
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
    /// Starts the inference thread; `make_net` runs on it.
    pub fn start(
        make_net: impl FnOnce() -> InferenceNet + Send + 'static,
        config: EvaluatorConfig,
    ) -> NetEvaluator {
        let (sender, receiver) = mpsc::channel::<Request>();
        let positions_run = std::sync::Arc::new(AtomicU64::new(0));
        let batches_run = std::sync::Arc::new(AtomicU64::new(0));
        let (pr, br) = (positions_run.clone(), batches_run.clone());
        let thread = std::thread::Builder::new()
            .name("halatafl-inference".into())
            .spawn(move || {
                crate::set_threads(config.threads);
                let net = make_net();
                inference_loop(net, receiver, config, &pr, &br);
            })
            .expect("spawn inference thread");
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
        }
    }

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

    fn lookup(&self, key: u64, priors: &mut [f32]) -> Option<Wdl> {
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
                Some(Wdl {
                    win: e.wdl[0],
                    draw: e.wdl[1],
                    loss: e.wdl[2],
                })
            }
            _ => None,
        }
    }

    fn store(&self, key: u64, priors: &[f32], wdl: [f32; 3]) {
        if self.slots_per_shard == 0 {
            return;
        }
        let (shard, slot) = self.slot(key);
        let mut guard = self.shards[shard].lock().expect("cache lock");
        guard[slot] = Some(CacheEntry {
            key,
            wdl,
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

fn inference_loop(
    net: InferenceNet,
    receiver: Receiver<Request>,
    config: EvaluatorConfig,
    positions: &AtomicU64,
    batches: &AtomicU64,
) {
    let mut pending: Vec<Request> = Vec::new();
    let mut planes: Vec<f32> = Vec::new();
    while let Ok(first) = receiver.recv() {
        let mut total = first.count;
        pending.push(first);
        let deadline = Instant::now() + config.max_wait;
        while total < config.max_batch {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            match receiver.recv_timeout(deadline - now) {
                Ok(r) => {
                    total += r.count;
                    pending.push(r);
                }
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
            };
            at += r.count;
            let _ = r.reply.send(part);
        }
    }
}

impl Evaluator<Game> for NetEvaluator {
    fn evaluate(&self, batch: &LeafBatch<Game>, out: &mut Evaluations) {
        let mut misses: Vec<(usize, u64)> = Vec::new();
        for i in 0..batch.len() {
            let key = cache_key(batch.leaf(i));
            match self.lookup(key, out.priors_mut(i)) {
                Some(wdl) => out.set_value(i, wdl),
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
            self.store(key, &logits, w);
        }
    }
}
