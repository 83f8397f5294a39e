//! The moves-left head: its output, its training, how checkpoints record it
//! (and how checkpoints from before it load), and the evaluator and agent
//! that pass its prediction to the search.

use halatafl_agent::AgentSpec;
use halatafl_mcts::{Evaluations, Evaluator, LeafBatch, TwoFoxesLeaf};
use halatafl_nn::checkpoint;
use halatafl_nn::encoding::encode;
use halatafl_nn::{
    AuxTarget, AuxWeights, Batch, InferenceNet, NetConfig, PerTarget, Precision, Sample,
    TrainConfig, Trainer,
};

const ML: AuxTarget = AuxTarget::MovesLeft;
use halatafl_rules::{Game, Variant};
use safetensors::SafeTensors;
use std::collections::BTreeMap;
use std::path::PathBuf;
use tch::{Device, Kind, Tensor};

fn tiny() -> NetConfig {
    NetConfig::parse_preset("b1c16").unwrap()
}

fn config(moves_left_weight: f64) -> TrainConfig {
    TrainConfig {
        warmup_steps: 0,
        lr: 3e-3,
        aux_weights: AuxWeights(PerTarget::from_fn(|_| moves_left_weight)),
        ..Default::default()
    }
}

fn with_head(seed: u64) -> Trainer {
    halatafl_nn::set_threads(2);
    Trainer::new(tiny().with_head(ML, true), config(1.0), Device::Cpu, seed)
}

/// Every position of one seeded game, each with its exact plies left, and
/// a uniform policy target.
fn game_samples(seed: u64) -> Vec<Sample> {
    let mut game = Game::start_of(Variant::two_foxes());
    let mut positions = Vec::new();
    let mut k = seed;
    while game.outcome().is_none() && positions.len() < 120 {
        let moves = game.position().legal_moves();
        positions.push((*game.position(), moves.len()));
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        game.play_unchecked(moves[(k >> 33) as usize % moves.len()]);
    }
    let n = positions.len();
    positions
        .into_iter()
        .enumerate()
        .map(|(i, (position, moves))| Sample {
            position,
            repetitions: 1,
            policy: vec![1.0 / moves as f32; moves],
            wdl: [0.0, 1.0, 0.0],
            aux: PerTarget::from_fn(|_| Some((n - i) as f32)),
        })
        .collect()
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("halatafl-ml-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_head_predicts_one_number_per_position_and_learns_plies_left() {
    let data: Vec<Sample> = game_samples(3).into_iter().take(24).collect();
    let refs: Vec<&Sample> = data.iter().collect();
    let batch = Batch::new(&refs, Device::Cpu);
    let mut t = with_head(5);
    let heads = t.net.forward_heads_t(&batch.planes, false);
    let m = heads.aux.take(ML).expect("the config asks for the head");
    assert_eq!(m.size(), vec![data.len() as i64]);
    assert_eq!(heads.value.size(), vec![data.len() as i64, 3]);

    let first = t.train_step(&batch).unwrap();
    let mut last = first;
    for _ in 0..60 {
        last = t.train_step(&batch).unwrap();
    }
    assert!(first.aux[ML] > 0.0, "{first:?}");
    assert!(
        last.aux[ML] < first.aux[ML] / 4.0,
        "the moves-left loss did not fall: {first:?} -> {last:?}"
    );
    // The total counts the weighted head loss.
    let unweighted = last.policy + last.value + last.l2;
    assert!(
        (last.total - unweighted - last.aux[ML]).abs() < 1e-4,
        "{last:?}"
    );

    // Inference reads the prediction back in plies, as the training graph has it.
    let net = InferenceNet::new(&t.net, Precision::F32, Device::Cpu);
    assert!(net.has_head(ML));
    let mut planes = Vec::new();
    for s in &data {
        planes.extend(encode(&s.position, 1));
    }
    let out = net.run(&planes, data.len());
    assert_eq!(out.aux[ML].len(), data.len());
    let reference = tch::no_grad(|| t.net.forward_heads_t(&batch.planes, false))
        .aux
        .take(ML)
        .unwrap();
    let reference = Vec::<f32>::try_from(reference).unwrap();
    for (i, (&got, &want)) in out.aux[ML].iter().zip(&reference).enumerate() {
        let want = (want as f64 * ML.spec().scale).max(0.0) as f32;
        assert!((got - want).abs() < 1e-2, "position {i}: {got} vs {want}");
        assert!(got >= 0.0);
    }
    // After fitting, an early position is predicted to last longer than a late one.
    assert!(
        out.aux[ML][0] > out.aux[ML][data.len() - 1] + 5.0,
        "{:?}",
        out.aux[ML]
    );
}

#[test]
fn samples_without_plies_left_do_not_train_the_head() {
    let mut data = game_samples(4);
    data.truncate(16);
    data.iter_mut().for_each(|s| s.aux[ML] = None);
    let refs: Vec<&Sample> = data.iter().collect();
    let batch = Batch::new(&refs, Device::Cpu);
    assert_eq!(batch.aux[ML].1.sum(Kind::Float).double_value(&[]), 0.0);
    let mut t = with_head(6);
    // Without L2, which decays every weight, nothing but the loss moves the head.
    t.config.l2 = 0.0;
    let before = t.net.aux_head(ML).unwrap().out.ws.copy();
    let losses = t.train_step(&batch).unwrap();
    assert_eq!(losses.aux[ML], 0.0);
    let after = &t.net.aux_head(ML).unwrap().out.ws;
    assert!(before.equal(after), "the head moved without a target");
    // A network without the head reports no moves-left loss.
    let mut plain = Trainer::new(tiny(), config(0.0), Device::Cpu, 6);
    assert!(plain.net.aux_head(ML).is_none());
    assert_eq!(plain.train_step(&batch).unwrap().aux[ML], 0.0);
}

#[test]
fn checkpoints_record_the_head_and_ones_without_it_keep_their_old_form() {
    let dir = scratch_dir("ckpt");
    let data = game_samples(5);
    let refs: Vec<&Sample> = data.iter().take(16).collect();
    let batch = Batch::new(&refs, Device::Cpu);

    // With the head: the metadata says so, the tensors are there, and a
    // round trip gives the same predictions.
    let mut t = with_head(7);
    t.train_step(&batch).unwrap();
    let path = dir.join("head.safetensors");
    checkpoint::save(&t, &path, &BTreeMap::new()).unwrap();
    let info = checkpoint::info(&path).unwrap();
    assert!(info.net.heads.has(ML));
    assert_eq!(info.train.aux_weights[ML], 1.0);
    let bytes = std::fs::read(&path).unwrap();
    let names: Vec<String> = SafeTensors::deserialize(&bytes)
        .unwrap()
        .names()
        .into_iter()
        .map(str::to_string)
        .collect();
    assert!(
        names.iter().any(|n| n == "net/moves_left.out.weight"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "opt/moves_left.out.weight/m"));
    let (loaded, _) =
        checkpoint::load(&path, Some(tiny().with_head(ML, true)), Device::Cpu).unwrap();
    let planes = &batch.planes;
    let a = tch::no_grad(|| t.net.forward_heads_t(planes, false))
        .aux
        .take(ML)
        .unwrap();
    let b = tch::no_grad(|| loaded.net.forward_heads_t(planes, false))
        .aux
        .take(ML)
        .unwrap();
    assert!(a.equal(&b));

    // Without the head: not a word about it in the metadata, so the file is
    // what builds from before the head wrote and read.
    let plain = Trainer::new(tiny(), config(0.0), Device::Cpu, 7);
    let plain_path = dir.join("plain.safetensors");
    checkpoint::save(&plain, &plain_path, &BTreeMap::new()).unwrap();
    let bytes = std::fs::read(&plain_path).unwrap();
    let (_, header) = SafeTensors::read_metadata(&bytes).unwrap();
    let meta = header.metadata().clone().unwrap();
    assert!(!meta["net"].contains("moves_left"), "{}", meta["net"]);
    assert!(!meta["train"].contains("moves_left"), "{}", meta["train"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_checkpoint_without_the_head_loads_as_it_is_and_gains_a_fresh_head_on_request() {
    let dir = scratch_dir("resume");
    let data = game_samples(6);
    let refs: Vec<&Sample> = data.iter().take(16).collect();
    let batch = Batch::new(&refs, Device::Cpu);
    let mut old = Trainer::new(tiny(), config(0.0), Device::Cpu, 8);
    old.train_step(&batch).unwrap();
    let path = dir.join("old.safetensors");
    checkpoint::save(&old, &path, &BTreeMap::new()).unwrap();

    // Asked for with the head, it still loads: as stored, without one.
    let (mut t, info) =
        checkpoint::load(&path, Some(tiny().with_head(ML, true)), Device::Cpu).unwrap();
    assert!(!info.net.heads.has(ML) && t.net.aux_head(ML).is_none());
    let net = InferenceNet::new(&t.net, Precision::F32, Device::Cpu);
    assert!(!net.has_head(ML));
    assert!(net.run(&encode(&data[0].position, 1), 1).aux[ML].is_empty());

    // Adding the head keeps every stored weight and moment.
    let value_before = t.net.value_out.ws.copy();
    let weights_before: Vec<(String, Tensor)> =
        t.vs.variables()
            .into_iter()
            .filter(|(_, v)| v.requires_grad())
            .collect();
    t.add_head(ML, 11);
    t.config = config(1.0);
    assert!(t.net.config.heads.has(ML) && t.net.aux_head(ML).is_some());
    assert!(value_before.equal(&t.net.value_out.ws));
    for (name, v) in weights_before {
        assert!(v.equal(&t.vs.variables()[&name]), "{name} changed");
    }
    let first = t.train_step(&batch).unwrap();
    assert!(first.aux[ML] > 0.0);
    // The policy and value heads go on from where they were: the old
    // trainer's next step has the same policy loss.
    let old_step = old.train_step(&batch).unwrap();
    assert!(
        (first.policy - old_step.policy).abs() < 1e-6,
        "{first:?} {old_step:?}"
    );
    // Saved, it is a network with the head, its optimizer state included.
    let path2 = dir.join("new.safetensors");
    checkpoint::save(&t, &path2, &BTreeMap::new()).unwrap();
    let (again, info) = checkpoint::load(&path2, Some(tiny()), Device::Cpu).unwrap();
    assert!(info.net.heads.has(ML) && again.net.aux_head(ML).is_some());
    // A different trunk is still refused.
    let err = checkpoint::load(
        &path2,
        Some(
            NetConfig::parse_preset("b2c16")
                .unwrap()
                .with_head(ML, true),
        ),
        Device::Cpu,
    )
    .unwrap_err();
    assert!(err.to_string().contains("b1c16"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_evaluator_passes_plies_left_to_the_search_and_agents_check_for_the_head() {
    let dir = scratch_dir("agent");
    let head = dir.join("head.safetensors");
    let plain = dir.join("plain.safetensors");
    checkpoint::save(&with_head(9), &head, &BTreeMap::new()).unwrap();
    checkpoint::save(
        &Trainer::new(tiny(), config(0.0), Device::Cpu, 9),
        &plain,
        &BTreeMap::new(),
    )
    .unwrap();
    let registry = halatafl_nn::NetRegistry::new(halatafl_nn::EvaluatorConfig::default());
    let game = Game::start_of(Variant::two_foxes());
    let moves = game.position().legal_moves();
    let mut batch = LeafBatch::<Game>::new();
    batch.push(
        TwoFoxesLeaf {
            position: *game.position(),
            repetitions: 1,
        },
        &moves,
    );
    let answer = |path: &PathBuf| {
        let (evaluator, _) = registry
            .network(halatafl_nn::NetSource::File(path), "cpu", Precision::F32)
            .unwrap();
        let mut out = Evaluations::new();
        // Twice: the second answer comes from the cache.
        let mut answers = Vec::new();
        for _ in 0..2 {
            out.prepare(&batch);
            evaluator.evaluate(&batch, &mut out);
            answers.push(out.plies_left(0));
        }
        assert_eq!(answers[0], answers[1], "the cache keeps the plies left");
        answers[0]
    };
    assert!(answer(&head).is_some_and(|p| p >= 0.0));
    assert_eq!(answer(&plain), None);

    let build = |spec: String| {
        let spec = AgentSpec::parse(&spec, &halatafl_nn::agent::net_forms()).unwrap();
        halatafl_nn::build_net_agent(&spec, 1, halatafl_rules::Variant::two_foxes(), &registry)
            .map(|_| ())
    };
    build(format!(
        "net:ckpt={},sims=8,moves_left=0.05",
        head.display()
    ))
    .unwrap();
    build(format!("net:ckpt={},sims=8,moves_left=0", plain.display())).unwrap();
    let err = build(format!(
        "net:ckpt={},sims=8,moves_left=0.05",
        plain.display()
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("moves_left") && err.contains("no moves-left head"),
        "{err}"
    );
    let err = build(format!("net:ckpt={},sims=8,moves_left=2", head.display()))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("moves_left") && err.contains("from 0 to 1"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
