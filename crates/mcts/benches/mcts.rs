//! Search throughput from the Two Foxes start position.
//!
//! - `uniform`: uniform priors and draw values, so the time is the tree's own
//!   cost (selection, expansion, backup, walking the scratch game).
//! - `rollout`: classic MCTS, one random playout per leaf.
//! - `batch-fill`: virtual-loss batches of 8 and 32 leaves from one tree
//!   (uniform evaluator), and 16 trees in lockstep with 8 leaves each.
//!
//! `cargo bench -p halatafl-mcts -- --warm-up-time 1 --measurement-time 3`;
//! the throughput lines give simulations per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use halatafl_mcts::{Evaluator, Lockstep, MctsConfig, RolloutEvaluator, Search, UniformEvaluator};
use halatafl_rules::{Game, Variant};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Uniform evaluation that counts calls and leaves (to report batch fill).
#[derive(Default)]
struct Counting {
    calls: AtomicUsize,
    leaves: AtomicUsize,
}

impl Evaluator<Game> for Counting {
    fn evaluate(
        &self,
        batch: &halatafl_mcts::LeafBatch<Game>,
        out: &mut halatafl_mcts::Evaluations,
    ) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.leaves.fetch_add(batch.len(), Ordering::Relaxed);
        UniformEvaluator.evaluate(batch, out)
    }
}

fn search_once<E: Evaluator<Game>>(config: &MctsConfig, evaluator: &E, sims: u32) -> u32 {
    let mut search = Search::new(Game::start_of(Variant::two_foxes()), config.clone(), 1);
    search.run(evaluator, sims, None, None).simulations
}

fn bench_search(c: &mut Criterion) {
    let mut group = c.benchmark_group("mcts");
    group.sample_size(10);
    let config = MctsConfig::default();

    let sims = 4000;
    group.throughput(Throughput::Elements(sims as u64));
    group.bench_function("uniform/4000-sims", |b| {
        b.iter(|| search_once(&config, &UniformEvaluator, sims))
    });

    let sims = 500;
    let rollouts = RolloutEvaluator::new(7, 400);
    group.throughput(Throughput::Elements(sims as u64));
    group.bench_function("rollout/500-sims", |b| {
        b.iter(|| search_once(&config, &rollouts, sims))
    });

    let sims = 4000;
    group.throughput(Throughput::Elements(sims as u64));
    for batch in [8u32, 32] {
        let config = MctsConfig {
            batch_size: batch,
            ..MctsConfig::default()
        };
        let counting = Counting::default();
        search_once(&config, &counting, sims);
        let calls = counting.calls.load(Ordering::Relaxed);
        eprintln!(
            "batch-fill vloss-{batch}: {:.2} leaves per evaluator call ({} calls, 4000 sims)",
            counting.leaves.load(Ordering::Relaxed) as f64 / calls as f64,
            calls
        );
        group.bench_function(format!("batch-fill/vloss-{batch}/4000-sims"), |b| {
            b.iter(|| search_once(&config, &UniformEvaluator, sims))
        });
    }

    let (trees, sims) = (16u32, 500u32);
    let config = MctsConfig {
        batch_size: 8,
        ..MctsConfig::default()
    };
    group.throughput(Throughput::Elements((trees * sims) as u64));
    let fill = |evaluator: &Counting| {
        let mut searches: Vec<Search<Game>> = (0..trees)
            .map(|i| {
                let mut s = Search::new(
                    Game::start_of(Variant::two_foxes()),
                    config.clone(),
                    i as u64,
                );
                s.start_move(sims);
                s
            })
            .collect();
        Lockstep::new().run(&mut searches, evaluator);
    };
    let counting = Counting::default();
    fill(&counting);
    let calls = counting.calls.load(Ordering::Relaxed);
    eprintln!(
        "batch-fill lockstep 16 trees x 8: {:.2} leaves per evaluator call ({} calls)",
        counting.leaves.load(Ordering::Relaxed) as f64 / calls as f64,
        calls
    );
    group.bench_function("batch-fill/lockstep-16x8/500-sims", |b| {
        let mut lockstep = Lockstep::new();
        b.iter(|| {
            let mut searches: Vec<Search<Game>> = (0..trees)
                .map(|i| {
                    let mut s = Search::new(
                        Game::start_of(Variant::two_foxes()),
                        config.clone(),
                        i as u64,
                    );
                    s.start_move(sims);
                    s
                })
                .collect();
            lockstep.run(&mut searches, &UniformEvaluator);
            searches.len()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_search);
criterion_main!(benches);
