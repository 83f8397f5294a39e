//! The network on a CUDA GPU: inference in fp32 and bf16 against the CPU,
//! bf16 mixed-precision training, and the batching evaluator. Each test
//! skips itself with a message on a machine where libtorch sees no GPU
//! (CI's machines, most laptops), so the suite passes everywhere and checks
//! the GPU wherever there is one.

use halatafl_nn::bench::{compare_with_cpu, random_samples};
use halatafl_nn::{Batch, EvaluatorConfig, InferenceNet, NetConfig, NetEvaluator, Precision};
use halatafl_nn::{Sample, TrainConfig, Trainer};
use tch::{Device, Kind};

/// The GPU, or `None` after saying why the test is skipped.
fn gpu(test: &str) -> Option<Device> {
    if tch::Cuda::is_available() {
        Some(Device::Cuda(0))
    } else {
        eprintln!("{test}: skipped, libtorch sees no CUDA GPU on this machine");
        None
    }
}

fn preset() -> NetConfig {
    NetConfig::parse_preset("b4c32").unwrap()
}

#[test]
fn gpu_inference_matches_the_cpu_in_fp32_and_bf16() {
    let Some(device) = gpu("gpu_inference_matches_the_cpu_in_fp32_and_bf16") else {
        return;
    };
    let (policy, wdl) = compare_with_cpu(preset(), device, Precision::F32, 64);
    assert!(policy < 1e-3 && wdl < 1e-4, "fp32 on GPU: {policy} {wdl}");
    let (policy, wdl) = compare_with_cpu(preset(), device, Precision::Bf16, 64);
    assert!(policy < 0.1 && wdl < 0.02, "bf16 on GPU: {policy} {wdl}");
}

#[test]
fn gpu_training_in_bf16_mixed_precision_learns_with_fp32_weights() {
    let Some(device) = gpu("gpu_training_in_bf16_mixed_precision_learns_with_fp32_weights") else {
        return;
    };
    let data: Vec<Sample> = random_samples(256, 5);
    let refs: Vec<&Sample> = data.iter().collect();
    let batch = Batch::new(&refs, device);
    let config = TrainConfig {
        precision: Precision::Bf16,
        warmup_steps: 0,
        ..TrainConfig::default()
    };
    let mut trainer = Trainer::new(preset(), config, device, 3);
    let first = trainer.train_step(&batch).unwrap();
    let mut last = first;
    for _ in 0..50 {
        last = trainer.train_step(&batch).unwrap();
    }
    assert!(last.total < first.total, "{first:?} -> {last:?}");
    for (name, var) in trainer.vs.variables() {
        assert_eq!(var.kind(), Kind::Float, "{name}");
        assert_eq!(var.device(), device, "{name}");
    }
}

#[test]
fn the_batching_evaluator_serves_searches_from_the_gpu() {
    let Some(device) = gpu("the_batching_evaluator_serves_searches_from_the_gpu") else {
        return;
    };
    let evaluator = NetEvaluator::start(
        move || {
            let trainer = Trainer::new(preset(), TrainConfig::default(), Device::Cpu, 4);
            InferenceNet::new(&trainer.net, Precision::Bf16, device)
        },
        EvaluatorConfig::default(),
    );
    for s in &random_samples(8, 6) {
        let (priors, value) = evaluator.evaluate_position(&s.position, s.repetitions);
        let sum: f32 = priors.iter().sum();
        assert!((sum - 1.0).abs() < 1e-3, "priors sum to {sum}");
        assert!(value.q().abs() <= 1.0 + 1e-3, "{value:?}");
    }
}
