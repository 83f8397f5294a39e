//! Alpha-beta speed: nodes per second at a fixed depth, and the depth reached
//! in 100 ms, from a few fixed positions (the Two Foxes start, a Two Foxes
//! middle game reached by a fixed line of depth-2 self-play, the classic start).
//!
//! `cargo bench -p halatafl-alphabeta -- --warm-up-time 1 --measurement-time 3`
//! The `nodes/` group's throughput line is nodes per second (criterion's
//! median); the `depth-in-100ms` lines print the median depth completed.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use halatafl_alphabeta::{Limits, SearchConfig, Searcher};
use halatafl_rules::{Game, Variant};
use std::time::Duration;

fn positions() -> Vec<(&'static str, Game)> {
    let mut middle = Game::start_of(Variant::two_foxes());
    let mut s = Searcher::new(SearchConfig::default(), 1);
    for _ in 0..16 {
        if middle.outcome().is_some() {
            break;
        }
        let r = s.search(
            &middle,
            &Limits {
                depth: Some(2),
                movetime: None,
                stop: None,
            },
        );
        middle.play_unchecked(r.best);
    }
    vec![
        ("two-foxes-start", Game::start_of(Variant::two_foxes())),
        ("two-foxes-middle", middle),
        (
            "classic-13-start",
            Game::start_of(Variant::classic(13, false).unwrap()),
        ),
    ]
}

fn bench_nodes(c: &mut Criterion) {
    let mut group = c.benchmark_group("nodes");
    group.sample_size(10);
    for (name, game) in positions() {
        let depth = 7;
        let limits = Limits {
            depth: Some(depth),
            movetime: None,
            stop: None,
        };
        let mut s = Searcher::new(SearchConfig::default(), 1);
        let nodes = s.search(&game, &limits).nodes;
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("{name}/depth{depth}"), |b| {
            b.iter(|| {
                s.new_game(1);
                s.search(&game, &limits)
            })
        });
    }
    group.finish();
}

fn bench_depth_in_100ms(c: &mut Criterion) {
    let mut group = c.benchmark_group("depth-in-100ms");
    group.sample_size(10);
    for (name, game) in positions() {
        let limits = Limits {
            depth: None,
            movetime: Some(Duration::from_millis(100)),
            stop: None,
        };
        let mut s = Searcher::new(SearchConfig::default(), 1);
        let mut depths = Vec::new();
        group.bench_function(name, |b| {
            b.iter(|| {
                s.new_game(1);
                let r = s.search(&game, &limits);
                depths.push(r.depth);
                r
            })
        });
        depths.sort_unstable();
        if !depths.is_empty() {
            println!(
                "{name}: median depth in 100 ms = {} ({} runs)",
                depths[depths.len() / 2],
                depths.len()
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench_nodes, bench_depth_in_100ms);
criterion_main!(benches);
