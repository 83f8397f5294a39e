//! Network tests on CPU with tiny presets: learning, checkpoints, inference
//! forms, and the batching evaluator under concurrency.

use halatafl_nn::checkpoint::{self, CheckpointError};
use halatafl_nn::encoding::{encode, POLICY_SIZE};
use halatafl_nn::{Batch, InferenceNet, NetConfig, Precision, Sample, TrainConfig, Trainer};
use halatafl_rules::{Game, Position, Variant};
use rand::{Rng, SeedableRng};
use safetensors::SafeTensors;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use tch::{Device, Kind};

/// Positions from seeded random games with made-up, position-dependent targets.
fn samples(n: usize, seed: u64) -> Vec<Sample> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut game = Game::start_of(Variant::two_foxes());
        while game.outcome().is_none() && out.len() < n {
            let moves = game.position().legal_moves();
            let mut policy = vec![0.0; moves.len()];
            policy[rng.random_range(0..moves.len())] = 1.0;
            let wdl = match rng.random_range(0..3) {
                0 => [1.0, 0.0, 0.0],
                1 => [0.0, 1.0, 0.0],
                _ => [0.0, 0.0, 1.0],
            };
            out.push(Sample {
                position: *game.position(),
                repetitions: game.repetitions() as u8,
                policy,
                wdl,
                aux: Default::default(),
            });
            game.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
    }
    out
}

fn tiny() -> NetConfig {
    NetConfig::parse_preset("b1c16").unwrap()
}

fn trainer(seed: u64) -> Trainer {
    halatafl_nn::set_threads(2);
    Trainer::new(
        tiny(),
        TrainConfig {
            warmup_steps: 0,
            lr: 3e-3,
            ..Default::default()
        },
        Device::Cpu,
        seed,
    )
}

/// A trainer after `steps` steps on `n` seeded samples (so batch norm has
/// non-trivial running statistics and distinct positions get distinct
/// outputs), with the samples and their batch.
fn trained(n: usize, seed: u64, steps: usize) -> (Trainer, Vec<Sample>, Batch) {
    let data = samples(n, seed);
    let refs: Vec<&Sample> = data.iter().collect();
    let batch = Batch::new(&refs, Device::Cpu);
    let mut t = trainer(seed);
    for _ in 0..steps {
        t.train_step(&batch).unwrap();
    }
    (t, data, batch)
}

/// A seed fixes a trainer's initial weights even while other threads build
/// trainers with other seeds (libtorch has one generator per process).
#[test]
fn a_seed_fixes_the_weights_while_other_threads_build_trainers() {
    let alone = trainer(7);
    let built: Vec<Trainer> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8u64)
            .map(|i| scope.spawn(move || trainer(if i % 2 == 0 { 7 } else { 100 + i })))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let weights = alone.vs.variables();
    for (i, t) in built.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
        for (name, var) in t.vs.variables() {
            assert!(
                var.equal(&weights[&name]),
                "trainer {i}: {name} differs from the same seed's alone"
            );
        }
    }
    let other = built[1].vs.variables();
    assert!(
        other.iter().any(|(name, var)| !var.equal(&weights[name])),
        "another seed gave the same weights"
    );
}

#[test]
fn tiny_net_overfits_a_fixed_batch() {
    let data = samples(32, 1);
    let refs: Vec<&Sample> = data.iter().collect();
    let batch = Batch::new(&refs, Device::Cpu);
    let mut t = trainer(1);
    let first = t.train_step(&batch).unwrap();
    let mut last = first;
    for _ in 0..300 {
        last = t.train_step(&batch).unwrap();
    }
    // One-hot targets: a perfect fit has zero cross-entropy. Start: about
    // ln(moves) + ln(3) ~ 4.
    assert!(first.policy + first.value > 3.0, "{first:?}");
    assert!(
        last.policy < 0.2 && last.value < 0.2,
        "did not overfit: {last:?}"
    );
}

/// bf16 mixed precision: the weights stay fp32 while the products run in
/// bf16, and the network still fits a fixed batch, with a first loss close
/// to the fp32 trainer's from the same initial weights.
#[test]
fn bf16_mixed_precision_trains_fp32_weights_and_overfits_a_fixed_batch() {
    let data = samples(32, 1);
    let refs: Vec<&Sample> = data.iter().collect();
    let batch = Batch::new(&refs, Device::Cpu);
    let f32_trainer = trainer(1);
    let mut t = trainer(1);
    t.config.precision = Precision::Bf16;
    let (p32, v32, _) = f32_trainer.losses(&batch, false);
    let (p16, v16, _) = t.losses(&batch, false);
    let (p32, v32) = (p32.double_value(&[]), v32.double_value(&[]));
    let (p16, v16) = (p16.double_value(&[]), v16.double_value(&[]));
    assert!(
        (p32 - p16).abs() < 0.05 && (v32 - v16).abs() < 0.05,
        "bf16 losses {p16} {v16} far from fp32 {p32} {v32}"
    );
    let first = t.train_step(&batch).unwrap();
    let mut last = first;
    for _ in 0..300 {
        last = t.train_step(&batch).unwrap();
    }
    for (name, var) in t.vs.variables() {
        assert_eq!(var.kind(), Kind::Float, "{name} is not kept in fp32");
    }
    assert!(
        last.policy < 0.3 && last.value < 0.3,
        "did not overfit in bf16: {last:?}"
    );
}

fn outputs(net: &InferenceNet, positions: &[Position]) -> (Vec<f32>, Vec<f32>) {
    let mut planes = Vec::new();
    for p in positions {
        planes.extend(encode(p, 1));
    }
    let out = net.run(&planes, positions.len());
    (out.policy, out.wdl)
}

#[test]
fn save_then_load_gives_identical_outputs_and_bad_files_are_refused() {
    let dir = std::env::temp_dir().join(format!("halatafl-nn-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut t, data, batch) = trained(16, 2, 5);
    let path = dir.join("ckpt.safetensors");
    let mut extra = BTreeMap::new();
    extra.insert("generation".to_string(), "3".to_string());
    checkpoint::save(&t, &path, &extra).unwrap();
    let (mut loaded, info) = checkpoint::load(&path, Some(tiny()), Device::Cpu).unwrap();
    assert_eq!(info.step, 5);
    assert_eq!(info.extra.get("generation").map(String::as_str), Some("3"));
    let positions: Vec<Position> = data.iter().map(|s| s.position).collect();
    let a = outputs(
        &InferenceNet::new(&t.net, Precision::F32, Device::Cpu),
        &positions,
    );
    let b = outputs(
        &InferenceNet::new(&loaded.net, Precision::F32, Device::Cpu),
        &positions,
    );
    assert_eq!(a, b, "outputs differ after a save/load round trip");
    // The optimizer state came back too: one more step from each stays equal.
    let la = t.train_step(&batch).unwrap();
    let lb = loaded.train_step(&batch).unwrap();
    assert_eq!(la.total, lb.total);

    // A different expected shape is refused with both names.
    let err = checkpoint::load(
        &path,
        Some(NetConfig::parse_preset("b2c16").unwrap()),
        Device::Cpu,
    )
    .unwrap_err();
    assert!(
        matches!(err, CheckpointError::Mismatch { .. }) && err.to_string().contains("b1c16"),
        "{err}"
    );
    // Truncated file.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.join("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = checkpoint::load(&cut, None, Device::Cpu).unwrap_err();
    assert!(matches!(err, CheckpointError::Corrupt { .. }), "{err}");
    // Garbage.
    std::fs::write(&cut, b"not a checkpoint at all").unwrap();
    assert!(checkpoint::load(&cut, None, Device::Cpu).is_err());
    // Another encoding version.
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&bytes[8..8 + header_len]).unwrap();
    let changed = header.replace("\"encoding_version\":\"1\"", "\"encoding_version\":\"9\"");
    assert_ne!(changed, header, "header holds the encoding version");
    let mut patched = bytes.clone();
    patched[8..8 + header_len].copy_from_slice(changed.as_bytes());
    std::fs::write(&cut, &patched).unwrap();
    let err = checkpoint::load(&cut, None, Device::Cpu).unwrap_err();
    assert!(err.to_string().contains("encoding version 9"), "{err}");
    // Missing file.
    assert!(matches!(
        checkpoint::load(&dir.join("nope"), None, Device::Cpu),
        Err(CheckpointError::Io { .. })
    ));
    std::fs::remove_dir_all(&dir).ok();
}

/// A copy of checkpoint `from` at `to` with its metadata changed by `edit`
/// (the tensors, and so their checksum, stay as they are).
fn with_metadata(from: &Path, to: &Path, edit: impl FnOnce(&mut HashMap<String, String>)) {
    let bytes = std::fs::read(from).unwrap();
    let (_, header) = SafeTensors::read_metadata(&bytes).unwrap();
    let mut meta = header.metadata().clone().unwrap();
    edit(&mut meta);
    let tensors = SafeTensors::deserialize(&bytes).unwrap();
    std::fs::write(
        to,
        safetensors::serialize(tensors.tensors(), Some(meta)).unwrap(),
    )
    .unwrap();
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("halatafl-nn-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn damaged_checkpoints_are_refused_and_version_1_loads_unverified() {
    let dir = scratch_dir("damage");
    let (t, data, _) = trained(8, 4, 2);
    let path = dir.join("ckpt.safetensors");
    checkpoint::save(&t, &path, &BTreeMap::new()).unwrap();
    let info = checkpoint::info(&path).unwrap();
    assert!(info.tensor_crc32.is_some());
    let bytes = std::fs::read(&path).unwrap();
    let data_start = 8 + u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;

    // A flipped bit in a tensor's lowest mantissa byte (tensor data is 4-byte
    // aligned): the value stays finite and plausible, only the checksum sees it.
    let mut flipped = bytes.clone();
    flipped[data_start + 4 * 10] ^= 0x01;
    let damaged = dir.join("flipped.safetensors");
    std::fs::write(&damaged, &flipped).unwrap();
    let err = checkpoint::load(&damaged, None, Device::Cpu).unwrap_err();
    let CheckpointError::Checksum {
        stored, computed, ..
    } = err
    else {
        panic!("expected a checksum error, got {err}");
    };
    assert_ne!(stored, computed);
    let text = err.to_string();
    assert!(
        text.contains("flipped.safetensors")
            && text.contains(&format!("{stored:08x}"))
            && text.contains(&format!("{computed:08x}")),
        "{text}"
    );

    // Metadata claiming a network of a million blocks of a million channels
    // is refused before libtorch is asked for terabytes.
    let huge = dir.join("huge.safetensors");
    with_metadata(&path, &huge, |meta| {
        let mut net: serde_json::Value = serde_json::from_str(&meta["net"]).unwrap();
        net["blocks"] = 1_000_000.into();
        net["channels"] = 1_000_000.into();
        meta.insert("net".into(), net.to_string());
    });
    for err in [
        checkpoint::load(&huge, None, Device::Cpu).unwrap_err(),
        checkpoint::info(&huge).unwrap_err(),
    ] {
        assert!(
            matches!(err, CheckpointError::Mismatch { .. })
                && err.to_string().contains("blocks = 1000000"),
            "{err}"
        );
    }

    // Version 1 (no checksum) loads, unverified, with the same weights.
    let old = dir.join("v1.safetensors");
    with_metadata(&path, &old, |meta| {
        meta.insert("format_version".into(), "1".into());
        meta.remove("tensor_crc32");
    });
    let (loaded, info) = checkpoint::load(&old, None, Device::Cpu).unwrap();
    assert_eq!(info.tensor_crc32, None);
    let positions: Vec<Position> = data.iter().map(|s| s.position).collect();
    assert_eq!(
        outputs(
            &InferenceNet::new(&t.net, Precision::F32, Device::Cpu),
            &positions
        ),
        outputs(
            &InferenceNet::new(&loaded.net, Precision::F32, Device::Cpu),
            &positions
        ),
    );
    // A current-version file without its checksum, or an unknown version, is refused.
    for (version, crc, expected) in [
        (checkpoint::FORMAT_VERSION, None, "tensor_crc32"),
        ("7", info.tensor_crc32, "format version 7 is not 2"),
    ] {
        let other = dir.join("other.safetensors");
        with_metadata(&path, &other, |meta| {
            meta.insert("format_version".into(), version.into());
            if crc.is_none() {
                meta.remove("tensor_crc32");
            }
        });
        let err = checkpoint::load(&other, None, Device::Cpu).unwrap_err();
        assert!(err.to_string().contains(expected), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn devices_directories_and_oversized_files_are_refused_before_reading() {
    let dir = scratch_dir("size");
    // A sparse file one byte over the limit: nothing is read, so this is quick.
    let big = dir.join("big.safetensors");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(checkpoint::MAX_CHECKPOINT_BYTES + 1)
        .unwrap();
    let err = checkpoint::load(&big, None, Device::Cpu).unwrap_err();
    assert!(
        matches!(err, CheckpointError::Io { .. })
            && err.to_string().contains(&format!(
                "more than the {}",
                checkpoint::MAX_CHECKPOINT_BYTES
            )),
        "{err}"
    );
    let mut others = vec![dir.clone()];
    if Path::new("/dev/zero").exists() {
        others.push(PathBuf::from("/dev/zero"));
    }
    for path in others {
        let err = checkpoint::load(&path, None, Device::Cpu).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_non_finite_loss_is_refused_and_changes_nothing() {
    let mut data = samples(8, 5);
    data[3].wdl = [f32::NAN, 0.0, 0.0];
    let refs: Vec<&Sample> = data.iter().collect();
    let batch = Batch::new(&refs, Device::Cpu);
    let mut t = trainer(5);
    let before: Vec<f32> = Vec::try_from(t.net.input.conv.ws.view([-1])).unwrap();
    let err = t.train_step(&batch).unwrap_err();
    assert_eq!((err.step, err.what), (1, "value loss"), "{err}");
    assert!(err.to_string().contains("value loss is NaN"), "{err}");
    assert_eq!(t.step, 0);
    let after: Vec<f32> = Vec::try_from(t.net.input.conv.ws.view([-1])).unwrap();
    assert_eq!(before, after, "a refused step must not move the weights");
}

#[test]
fn folded_inference_matches_training_graph_and_bf16_is_close() {
    let (t, data, batch) = trained(24, 3, 20);
    let (p_ref, v_ref) = tch::no_grad(|| t.net.forward_t(&batch.planes, false));
    let folded = InferenceNet::new(&t.net, Precision::F32, Device::Cpu);
    let positions: Vec<Position> = data.iter().map(|s| s.position).collect();
    let (p, wdl) = outputs(&folded, &positions);
    let p_ref = Vec::<f32>::try_from(p_ref.view([-1])).unwrap();
    let wdl_ref = Vec::<f32>::try_from(v_ref.softmax(-1, Kind::Float).view([-1])).unwrap();
    let max_diff = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    };
    assert_eq!(p.len(), positions.len() * POLICY_SIZE);
    assert!(
        max_diff(&p, &p_ref) < 1e-3,
        "folded policy differs by {}",
        max_diff(&p, &p_ref)
    );
    assert!(max_diff(&wdl, &wdl_ref) < 1e-4);
    let bf16 = InferenceNet::new(&t.net, Precision::Bf16, Device::Cpu);
    let (pb, wb) = outputs(&bf16, &positions);
    assert!(
        max_diff(&wb, &wdl_ref) < 0.05,
        "bf16 value off by {}",
        max_diff(&wb, &wdl_ref)
    );
    let scale = p_ref.iter().map(|x| x.abs()).fold(0.0, f32::max).max(1.0);
    assert!(
        max_diff(&pb, &p_ref) / scale < 0.05,
        "bf16 policy off by {}",
        max_diff(&pb, &p_ref)
    );
}

#[test]
fn auto_precision_keeps_the_faster_form_and_says_what_it_measured() {
    use halatafl_nn::inference::cpu_has_fast_bf16;
    use halatafl_nn::{EvaluatorConfig, NetEvaluator, PrecisionChoice, PreparedNet};
    assert_eq!("auto".parse(), Ok(PrecisionChoice::Auto));
    assert_eq!("bf16".parse(), Ok(PrecisionChoice::Fixed(Precision::Bf16)));
    let bad = "fp16".parse::<PrecisionChoice>().unwrap_err();
    assert!(bad.contains("`fp16`") && bad.contains("auto"), "{bad}");
    assert_eq!(PrecisionChoice::Auto.to_string(), "auto");

    let (t, data, _) = trained(24, 3, 20);
    let positions: Vec<Position> = data.iter().map(|s| s.position).collect();
    let fixed = PreparedNet::new(&t.net, Precision::Bf16.into(), Device::Cpu, 16).settle();
    assert_eq!(fixed.precision(), Precision::Bf16);
    assert!(fixed.trial().is_none(), "a fixed precision is not timed");

    let auto = PreparedNet::new(&t.net, PrecisionChoice::Auto, Device::Cpu, 16).settle();
    match auto.trial() {
        // Without bf16 units bf16 is emulated: fp32 without a trial.
        None => {
            assert!(!cpu_has_fast_bf16());
            assert_eq!(auto.precision(), Precision::F32);
        }
        Some(trial) => {
            assert_eq!(trial.batch, 16);
            assert!(trial.f32_per_second > 0.0 && trial.bf16_per_second > 0.0);
            let faster = if trial.bf16_per_second > trial.f32_per_second {
                Precision::Bf16
            } else {
                Precision::F32
            };
            assert_eq!((trial.chosen(), auto.precision()), (faster, faster));
            assert!(
                trial.to_string().contains("measured at batch 16"),
                "{trial}"
            );
        }
    }
    // Whichever it kept computes the same network.
    let reference = InferenceNet::new(&t.net, Precision::F32, Device::Cpu);
    let (p_ref, w_ref) = outputs(&reference, &positions);
    let (p, w) = outputs(&auto, &positions);
    let off = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    };
    let scale = p_ref.iter().map(|x| x.abs()).fold(0.0, f32::max).max(1.0);
    assert!(off(&p, &p_ref) / scale < 0.05 && off(&w, &w_ref) < 0.05);

    // The evaluator reports the precision its thread settled on.
    let prepared = PreparedNet::new(&t.net, PrecisionChoice::Auto, Device::Cpu, 8);
    let served = NetEvaluator::start(move || prepared.settle(), EvaluatorConfig::default());
    assert_eq!(
        served.trial().map(|t| t.chosen()),
        served.trial().map(|_| served.precision())
    );
    assert_eq!(served.trial().is_some(), cpu_has_fast_bf16());
}

#[test]
fn batching_evaluator_answers_each_caller_its_own_position() {
    use halatafl_mcts::{Evaluations, Evaluator, LeafBatch, TwoFoxesLeaf};
    use halatafl_nn::{EvaluatorConfig, NetEvaluator};
    use std::sync::Arc;
    let (t, data, _) = trained(64, 4, 10);
    let reference = InferenceNet::new(&t.net, Precision::F32, Device::Cpu);
    let expected: Vec<(Vec<f32>, Vec<f32>)> = data
        .iter()
        .map(|s| outputs(&reference, &[s.position]))
        .collect();
    let served = InferenceNet::new(&t.net, Precision::F32, Device::Cpu);
    let config = EvaluatorConfig {
        max_batch: 32,
        cache_entries: 0,
        ..Default::default()
    };
    let evaluator = Arc::new(NetEvaluator::start(move || served, config));
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let evaluator = evaluator.clone();
            let data = &data;
            let expected = &expected;
            scope.spawn(move || {
                for round in 0..8 {
                    let i = (thread * 16 + round * 5) % data.len();
                    let s = &data[i];
                    let moves = s.position.legal_moves();
                    let mut b = LeafBatch::<Game>::new();
                    b.push(
                        TwoFoxesLeaf {
                            position: s.position,
                            repetitions: 1,
                        },
                        &moves,
                    );
                    let mut out = Evaluations::new();
                    out.prepare(&b);
                    evaluator.evaluate(&b, &mut out);
                    let v = out.value(0);
                    let w = &expected[i].1;
                    assert!(
                        (v.win - w[0]).abs() < 1e-4 && (v.loss - w[2]).abs() < 1e-4,
                        "thread {thread} got another position's value"
                    );
                    let mut logits = Vec::new();
                    halatafl_nn::encoding::move_logits(&expected[i].0, &moves, &mut logits);
                    halatafl_nn::encoding::softmax_in_place(&mut logits);
                    for (a, b) in logits.iter().zip(out.priors(0)) {
                        assert!((a - b).abs() < 1e-4);
                    }
                }
            });
        }
    });
    let stats = evaluator.stats();
    assert_eq!(stats.positions_run, 32);
    assert!(stats.batches_run <= 32);
}

#[test]
fn net_agents_search_by_simulations_or_by_time_or_play_the_raw_policy() {
    use halatafl_agent::{AgentSpec, Budget};
    let dir = std::env::temp_dir().join(format!("halatafl-nn-agent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("net.safetensors");
    checkpoint::save(&trainer(4), &path, &BTreeMap::new()).unwrap();
    let registry = halatafl_nn::NetRegistry::new(halatafl_nn::EvaluatorConfig::default());
    let game = Game::start_of(Variant::default());
    let nodes = |spec: &str| {
        let spec = AgentSpec::parse(spec, &halatafl_nn::agent::net_forms()).unwrap();
        let mut agent =
            halatafl_nn::build_net_agent(&spec, 1, Variant::default(), &registry).unwrap();
        agent.choose(&game, &Budget::default()).info.nodes
    };
    let ckpt = path.display();
    assert_eq!(nodes(&format!("net:ckpt={ckpt}")), 1, "raw policy");
    assert_eq!(nodes(&format!("net:ckpt={ckpt},sims=0")), 1, "raw policy");
    assert_eq!(nodes(&format!("net:ckpt={ckpt},sims=12")), 12);
    assert_eq!(nodes(&format!("net:ckpt={ckpt},ms=60000,sims=7")), 7);
    // A time budget alone: searches until the time is up.
    assert!(nodes(&format!("net:ckpt={ckpt},ms=40")) > 1);
    let bad = AgentSpec::parse(
        &format!("net:ckpt={ckpt},ms=0"),
        &halatafl_nn::agent::net_forms(),
    )
    .unwrap();
    let err = halatafl_nn::build_net_agent(&bad, 1, Variant::default(), &registry)
        .err()
        .expect("ms=0 is refused")
        .to_string();
    assert!(err.contains("ms"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn small_batches_give_each_position_what_it_gets_alone() {
    // Batches of 2 and 3 run position by position on CPU; every batch size
    // must still answer each position as a batch of one does.
    let (t, data, _) = trained(8, 2, 5);
    let net = InferenceNet::new(&t.net, Precision::F32, Device::Cpu);
    let positions: Vec<Position> = data.iter().map(|s| s.position).collect();
    let alone: Vec<(Vec<f32>, Vec<f32>)> = positions.iter().map(|p| outputs(&net, &[*p])).collect();
    for size in 2..=5 {
        let (policy, wdl) = outputs(&net, &positions[..size]);
        let per = policy.len() / size;
        for (i, (p, w)) in alone.iter().take(size).enumerate() {
            for (a, b) in p.iter().zip(&policy[i * per..(i + 1) * per]) {
                assert!(
                    (a - b).abs() < 1e-4,
                    "batch {size}, position {i}: policy differs"
                );
            }
            for (a, b) in w.iter().zip(&wdl[i * 3..(i + 1) * 3]) {
                assert!(
                    (a - b).abs() < 1e-4,
                    "batch {size}, position {i}: value differs"
                );
            }
        }
    }
}

#[test]
fn a_lone_caller_is_answered_without_waiting_for_a_batch_to_fill() {
    use halatafl_nn::{EvaluatorConfig, NetEvaluator};
    use std::time::{Duration, Instant};
    let t = trainer(2);
    let served = InferenceNet::new(&t.net, Precision::F32, Device::Cpu);
    // A wait this long would make 20 calls take 100 s if the loop waited.
    let config = EvaluatorConfig {
        max_wait: Duration::from_secs(5),
        cache_entries: 0,
        ..Default::default()
    };
    let evaluator = NetEvaluator::start(move || served, config);
    let position = samples(1, 2)[0].position;
    let start = Instant::now();
    for _ in 0..20 {
        evaluator.evaluate_position(&position, 1);
    }
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "a lone caller waited for others: {:?} for 20 calls",
        start.elapsed()
    );
    assert_eq!(evaluator.stats().batches_run, 20);
}

#[test]
fn a_network_refuses_a_variant_it_was_not_trained_on() {
    let dir = scratch_dir("net-variant");
    let registry = halatafl_nn::NetRegistry::new(halatafl_nn::EvaluatorConfig::default());
    let classic = Variant::classic(13, false).unwrap();
    let build = |path: &Path, variant: Variant| {
        let spec = halatafl_agent::AgentSpec::parse(
            &format!("net:ckpt={}", path.display()),
            &halatafl_nn::agent::net_forms(),
        )
        .unwrap();
        halatafl_nn::build_net_agent(&spec, 1, variant, &registry).map(|_| ())
    };
    // Recorded: only its own variant.
    let mut extra = BTreeMap::new();
    extra.insert(checkpoint::VARIANT_KEY.to_string(), classic.to_string());
    let path = dir.join("classic.safetensors");
    checkpoint::save(&trainer(5), &path, &extra).unwrap();
    build(&path, classic).unwrap();
    let err = build(&path, Variant::two_foxes())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("trained on classic geese=13") && err.contains("this game is two-foxes"),
        "{err}"
    );
    // Not recorded (written before runs recorded it): any variant.
    let path = dir.join("old.safetensors");
    checkpoint::save(&trainer(5), &path, &BTreeMap::new()).unwrap();
    build(&path, classic).unwrap();
    build(&path, Variant::two_foxes()).unwrap();
    // The shipped network is a Two Foxes network.
    let shipped = halatafl_agent::AgentSpec::parse("best", "").unwrap();
    assert!(halatafl_nn::build_shipped_agent(&shipped, 1, Variant::two_foxes(), &registry).is_ok());
    let err = halatafl_nn::build_shipped_agent(&shipped, 1, classic, &registry)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("models/best.safetensors was trained on two-foxes"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `checkpoint::average` gives each tensor (batch-norm statistics included)
/// the mean of the files' tensors, keeps the last file's step and metadata,
/// records its sources, and refuses a different network or variant by name.
#[test]
fn averaged_checkpoints_hold_the_mean_of_each_tensor() {
    let dir = scratch_dir("average");
    let (a, _, _) = trained(32, 1, 3);
    let (b, _, _) = trained(32, 2, 5);
    let mut extra = BTreeMap::new();
    extra.insert(checkpoint::VARIANT_KEY.to_string(), "two-foxes".to_string());
    extra.insert("generation".to_string(), "7".to_string());
    let (pa, pb) = (dir.join("a.safetensors"), dir.join("b.safetensors"));
    checkpoint::save(&a, &pa, &extra).unwrap();
    checkpoint::save(&b, &pb, &extra).unwrap();
    let (avg, info) = checkpoint::average(&[pa.clone(), pb.clone()], Device::Cpu).unwrap();
    assert_eq!(info.step, 5, "the last file's step");
    assert_eq!(info.extra["generation"], "7");
    assert_eq!(
        info.extra[checkpoint::AVERAGED_FROM_KEY],
        "a.safetensors,b.safetensors"
    );
    let (va, vb, vm) = (a.vs.variables(), b.vs.variables(), avg.vs.variables());
    assert!(
        vm.keys().any(|k| k.contains("running_var")),
        "statistics are averaged too"
    );
    for (name, m) in &vm {
        let want = (&va[name] + &vb[name]) / 2.0;
        let diff = (m - &want).abs().max().double_value(&[]);
        assert!(diff < 1e-6, "{name}: off by {diff}");
    }
    // Saved and reloaded, the average is an ordinary checkpoint.
    let out = dir.join("avg.safetensors");
    checkpoint::save(&avg, &out, &info.extra).unwrap();
    assert_eq!(
        checkpoint::info(&out).unwrap().extra[checkpoint::AVERAGED_FROM_KEY],
        "a.safetensors,b.safetensors"
    );
    // Another network, another variant: refused, naming the file.
    let other = Trainer::new(
        NetConfig::parse_preset("b1c8").unwrap(),
        TrainConfig::default(),
        Device::Cpu,
        3,
    );
    let po = dir.join("other.safetensors");
    checkpoint::save(&other, &po, &extra).unwrap();
    let err = checkpoint::average(&[po.clone(), pb.clone()], Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("other.safetensors") && err.contains("cannot be averaged"),
        "{err}"
    );
    extra.insert(
        checkpoint::VARIANT_KEY.to_string(),
        "classic geese=13".to_string(),
    );
    let pc = dir.join("classic.safetensors");
    checkpoint::save(&a, &pc, &extra).unwrap();
    let err = checkpoint::average(&[pc, pb], Device::Cpu)
        .unwrap_err()
        .to_string();
    assert!(err.contains("trained on classic geese=13"), "{err}");
    assert!(checkpoint::average(&[], Device::Cpu).is_err());
    std::fs::remove_dir_all(&dir).ok();
}
