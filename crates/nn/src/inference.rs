//! Inference-only form of the network: batch norm folded into the preceding
//! convolutions, weights in the chosen precision (fp32, or bf16 where the CPU
//! has AMX/AVX512-BF16 or on a GPU) and in channels-last memory format, which
//! is what oneDNN's fast convolution kernels want on CPU.
//!
//! Folding: for `y = gamma * (conv(x, w) - mean) / sqrt(var + eps) + beta`,
//! use `w' = w * s` and `b' = beta - mean * s` with `s = gamma / sqrt(var + eps)`.

use crate::encoding::{INPUT_PLANES, INPUT_SIZE, POLICY_SIZE};
use crate::model::{ConvBn, PolicyValueNet};
use crate::targets::{AuxTarget, PerTarget};
use tch::{Device, Kind, Tensor};

/// Storage precision of the inference weights and activations; for
/// training, the precision of the forward pass's products (bf16 autocast,
/// see [`crate::autocast`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit floats (`f32`, also accepted as `fp32`): the default.
    F32,
    /// bfloat16 (`bf16`): half the memory traffic, fast only where the
    /// hardware has bf16 units (see [`cpu_has_fast_bf16`]).
    Bf16,
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Precision, String> {
        match s {
            "f32" | "fp32" => Ok(Precision::F32),
            "bf16" => Ok(Precision::Bf16),
            o => Err(format!("unknown precision `{o}`: expected f32 or bf16")),
        }
    }
}

impl Precision {
    /// The libtorch element type of this precision.
    pub fn kind(self) -> Kind {
        match self {
            Precision::F32 => Kind::Float,
            Precision::Bf16 => Kind::BFloat16,
        }
    }
}

/// The inference precision a config or agent spec asks for: a fixed one, or
/// `auto`, the faster of the two on this machine. Which is faster depends
/// on the CPU in ways its flags do not tell: AVX-512 BF16 made bf16 half as
/// fast as fp32 on one Intel Xeon and 1.5 times as fast on an AMD EPYC
/// (experiments/README.md), so `auto` measures instead of guessing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrecisionChoice {
    /// Always this precision.
    Fixed(Precision),
    /// The faster of fp32 and bf16 for this network, device and batch size,
    /// timed once when the network is loaded ([`PreparedNet::settle`]). On a
    /// CPU without bf16 units (see [`cpu_has_fast_bf16`]) bf16 is emulated
    /// and never faster, so fp32 is taken without timing.
    Auto,
}

impl std::str::FromStr for PrecisionChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<PrecisionChoice, String> {
        match s {
            "auto" => Ok(PrecisionChoice::Auto),
            other => other
                .parse::<Precision>()
                .map(PrecisionChoice::Fixed)
                .map_err(|_| format!("unknown precision `{other}`: expected f32, bf16 or auto")),
        }
    }
}

impl From<Precision> for PrecisionChoice {
    fn from(p: Precision) -> PrecisionChoice {
        PrecisionChoice::Fixed(p)
    }
}

impl std::fmt::Display for PrecisionChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrecisionChoice::Fixed(Precision::F32) => f.write_str("f32"),
            PrecisionChoice::Fixed(Precision::Bf16) => f.write_str("bf16"),
            PrecisionChoice::Auto => f.write_str("auto"),
        }
    }
}

/// What `auto` measured: each precision's inference rate on batches of
/// `batch` positions (medians of [`PRECISION_TRIAL_ROUNDS`] timed runs,
/// the two precisions taking turns so that a noisy neighbour slows both).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrecisionTrial {
    /// Positions per timed batch.
    pub batch: usize,
    /// fp32 positions per second.
    pub f32_per_second: f64,
    /// bf16 positions per second.
    pub bf16_per_second: f64,
}

impl PrecisionTrial {
    /// The precision kept: bf16 only when it was faster.
    pub fn chosen(&self) -> Precision {
        if self.bf16_per_second > self.f32_per_second {
            Precision::Bf16
        } else {
            Precision::F32
        }
    }
}

impl std::fmt::Display for PrecisionTrial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (measured at batch {}: f32 {:.0} positions/s, bf16 {:.0})",
            PrecisionChoice::Fixed(self.chosen()),
            self.batch,
            self.f32_per_second,
            self.bf16_per_second
        )
    }
}

/// Timed runs per precision in an `auto` trial ...
pub const PRECISION_TRIAL_ROUNDS: usize = 7;
/// ... after this many untimed ones each.
pub const PRECISION_TRIAL_WARMUP: usize = 2;

/// A network frozen for inference whose precision may still be open:
/// built where the checkpoint is loaded, settled where it will run (the
/// inference thread, whose libtorch thread count the trial must use).
pub enum PreparedNet {
    /// The precision is fixed.
    Ready(Box<InferenceNet>),
    /// `auto`: both forms, to be timed at `batch` positions.
    Trial {
        /// The fp32 form and the bf16 form.
        forms: Box<[InferenceNet; 2]>,
        /// Positions per timed batch: the batches the network will mostly see.
        batch: usize,
    },
}

impl PreparedNet {
    /// Freezes `net` as `choice` asks; `batch` is the batch size `auto`
    /// times (the batches the caller expects to send).
    pub fn new(
        net: &PolicyValueNet,
        choice: PrecisionChoice,
        device: Device,
        batch: usize,
    ) -> PreparedNet {
        match choice {
            PrecisionChoice::Fixed(p) => {
                PreparedNet::Ready(Box::new(InferenceNet::new(net, p, device)))
            }
            PrecisionChoice::Auto if device == Device::Cpu && !cpu_has_fast_bf16() => {
                PreparedNet::Ready(Box::new(InferenceNet::new(net, Precision::F32, device)))
            }
            PrecisionChoice::Auto => PreparedNet::Trial {
                forms: Box::new([
                    InferenceNet::new(net, Precision::F32, device),
                    InferenceNet::new(net, Precision::Bf16, device),
                ]),
                batch: batch.max(1),
            },
        }
    }

    /// The network to run: the fixed one, or the faster of the two, timed
    /// on the calling thread (its trial kept in [`InferenceNet::trial`]).
    pub fn settle(self) -> InferenceNet {
        let ([f32_net, bf16_net], batch) = match self {
            PreparedNet::Ready(net) => return *net,
            PreparedNet::Trial { forms, batch } => (*forms, batch),
        };
        let mut planes = vec![0.0f32; batch * INPUT_SIZE];
        let start = halatafl_rules::Position::start(halatafl_rules::Variant::two_foxes());
        for one in planes.chunks_exact_mut(INPUT_SIZE) {
            crate::encoding::encode_into(&start, 0, one);
        }
        let time = |net: &InferenceNet| {
            let began = std::time::Instant::now();
            net.run(&planes, batch);
            began.elapsed().as_secs_f64()
        };
        // Untimed runs first: oneDNN picks and caches its kernels per shape.
        for _ in 0..PRECISION_TRIAL_WARMUP {
            time(&f32_net);
            time(&bf16_net);
        }
        let (mut f32_times, mut bf16_times) = (Vec::new(), Vec::new());
        for _ in 0..PRECISION_TRIAL_ROUNDS {
            f32_times.push(time(&f32_net));
            bf16_times.push(time(&bf16_net));
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2].max(1e-9)
        };
        let trial = PrecisionTrial {
            batch,
            f32_per_second: batch as f64 / median(f32_times),
            bf16_per_second: batch as f64 / median(bf16_times),
        };
        let mut net = match trial.chosen() {
            Precision::Bf16 => bf16_net,
            Precision::F32 => f32_net,
        };
        net.trial = Some(trial);
        net
    }
}

/// NCHW logical shape, NHWC strides.
fn channels_last(t: &Tensor) -> Tensor {
    t.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
}

struct FoldedConv {
    weight: Tensor,
    bias: Tensor,
    padding: i64,
}

impl FoldedConv {
    fn from_conv_bn(cb: &ConvBn, kind: Kind, device: Device) -> FoldedConv {
        let bn = &cb.bn;
        let eps = 1e-5;
        let gamma = bn.ws.as_ref().expect("batch norm has a scale").detach();
        let beta = bn.bs.as_ref().expect("batch norm has a shift").detach();
        let scale = &gamma / (bn.running_var.detach() + eps).sqrt();
        let weight = cb.conv.ws.detach() * scale.view([-1, 1, 1, 1]);
        let bias = beta - bn.running_mean.detach() * &scale;
        let k = weight.size()[2];
        FoldedConv::new(weight, bias, k / 2, kind, device)
    }

    fn new(weight: Tensor, bias: Tensor, padding: i64, kind: Kind, device: Device) -> FoldedConv {
        FoldedConv {
            weight: channels_last(&weight.to_kind(kind).to_device(device)),
            bias: bias.to_kind(kind).to_device(device),
            padding,
        }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        x.conv2d(
            &self.weight,
            Some(&self.bias),
            [1, 1],
            [self.padding, self.padding],
            [1, 1],
            1,
        )
    }
}

/// A linear layer's weight and bias, in the inference precision.
type LinearWeights = (Tensor, Tensor);

/// A frozen copy of a [`PolicyValueNet`] for fast evaluation.
pub struct InferenceNet {
    input: FoldedConv,
    tower: Vec<(FoldedConv, FoldedConv)>,
    policy_hidden: FoldedConv,
    policy_out: FoldedConv,
    value_hidden: FoldedConv,
    value_fc: LinearWeights,
    value_out: LinearWeights,
    /// The auxiliary heads (1x1 convolution, hidden layer, output).
    aux_heads: Vec<(AuxTarget, FoldedConv, LinearWeights, LinearWeights)>,
    kind: Kind,
    device: Device,
    /// The `auto` trial that chose this precision, if one did.
    trial: Option<PrecisionTrial>,
}

/// Outputs for a batch, as plain vectors on the host.
pub struct InferenceOutput {
    /// [batch * POLICY_SIZE] segment logits.
    pub policy: Vec<f32>,
    /// [batch * 3] win/draw/loss probabilities of the side to move.
    pub wdl: Vec<f32>,
    /// Per auxiliary target, \[batch\] predictions in the label's units
    /// (for [`AuxTarget::MovesLeft`], plies to the end of the game, never
    /// negative); empty for a target whose head the network lacks.
    pub aux: PerTarget<Vec<f32>>,
}

impl InferenceNet {
    /// Freezes `net`: batch norms folded into their convolutions, weights
    /// detached, converted to `precision` and moved to `device`.
    pub fn new(net: &PolicyValueNet, precision: Precision, device: Device) -> InferenceNet {
        let _guard = tch::no_grad_guard();
        let kind = precision.kind();
        let fold = |cb: &ConvBn| FoldedConv::from_conv_bn(cb, kind, device);
        let linear = |l: &tch::nn::Linear| {
            (
                l.ws.detach().to_kind(kind).to_device(device),
                l.bs.as_ref()
                    .expect("linear layers have a bias")
                    .detach()
                    .to_kind(kind)
                    .to_device(device),
            )
        };
        let out_bias = net
            .policy_out
            .bs
            .as_ref()
            .expect("policy output has a bias")
            .detach();
        InferenceNet {
            input: fold(&net.input),
            tower: net
                .tower
                .iter()
                .map(|b| (fold(&b.first), fold(&b.second)))
                .collect(),
            policy_hidden: fold(&net.policy_hidden),
            policy_out: FoldedConv::new(net.policy_out.ws.detach(), out_bias, 0, kind, device),
            value_hidden: fold(&net.value_hidden),
            value_fc: linear(&net.value_fc),
            value_out: linear(&net.value_out),
            aux_heads: net
                .aux_heads
                .iter()
                .map(|h| (h.target, fold(&h.hidden), linear(&h.fc), linear(&h.out)))
                .collect(),
            kind,
            device,
            trial: None,
        }
    }

    /// The precision the weights and activations are stored in.
    pub fn precision(&self) -> Precision {
        if self.kind == Kind::BFloat16 {
            Precision::Bf16
        } else {
            Precision::F32
        }
    }

    /// The `auto` trial that chose [`InferenceNet::precision`], if one did.
    pub fn trial(&self) -> Option<PrecisionTrial> {
        self.trial
    }

    /// The device the weights live on and batches run on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Whether the network has `target`'s head ([`InferenceOutput::aux`]).
    pub fn has_head(&self, target: AuxTarget) -> bool {
        self.aux_heads.iter().any(|h| h.0 == target)
    }

    /// Runs `batch` positions whose planes are concatenated in `planes`.
    ///
    /// On CPU a batch of 2 or 3 runs as single positions: oneDNN's
    /// channels-last convolutions take about 0.3 ms for one position of
    /// `b4c32` but 0.9 ms for two or three (one thread, AVX2; batch 4 is
    /// 1.05 ms), and such batches are what two match games sharing one
    /// network send.
    pub fn run(&self, planes: &[f32], batch: usize) -> InferenceOutput {
        if self.device == Device::Cpu && (2..=3).contains(&batch) {
            let mut out = InferenceOutput {
                policy: Vec::with_capacity(batch * POLICY_SIZE),
                wdl: Vec::with_capacity(batch * 3),
                aux: PerTarget::default(),
            };
            for one in planes.chunks_exact(INPUT_SIZE) {
                let part = self.run_batch(one, 1);
                out.policy.extend_from_slice(&part.policy);
                out.wdl.extend_from_slice(&part.wdl);
                for (target, values) in out.aux.iter_mut() {
                    values.extend_from_slice(&part.aux[target]);
                }
            }
            return out;
        }
        self.run_batch(planes, batch)
    }

    fn run_batch(&self, planes: &[f32], batch: usize) -> InferenceOutput {
        let _guard = tch::no_grad_guard();
        let x = Tensor::from_slice(planes)
            .view([batch as i64, INPUT_PLANES as i64, 7, 7])
            .to_device(self.device)
            .to_kind(self.kind);
        let x = channels_last(&x);
        let (policy, value, trunk) = self.forward_trunk(&x);
        let mut aux = PerTarget::default();
        for (target, hidden, fc, out) in &self.aux_heads {
            let m = hidden.forward(&trunk).relu().flatten(1, -1);
            let m = m.linear(&fc.0, Some(&fc.1)).relu();
            let m = m.linear(&out.0, Some(&out.1)).reshape([-1]);
            let spec = target.spec();
            let mut values = m.to_kind(Kind::Float) * spec.scale;
            if let Some(floor) = spec.floor {
                values = values.clamp_min(floor);
            }
            let values = values.to_device(Device::Cpu).contiguous();
            aux[*target] = Vec::<f32>::try_from(values.view([-1])).expect("float tensor");
        }
        let policy = policy
            .to_kind(Kind::Float)
            .to_device(Device::Cpu)
            .contiguous();
        let wdl = value
            .to_kind(Kind::Float)
            .softmax(-1, Kind::Float)
            .to_device(Device::Cpu)
            .contiguous();
        InferenceOutput {
            policy: Vec::<f32>::try_from(policy.view([-1])).expect("float tensor"),
            wdl: Vec::<f32>::try_from(wdl.view([-1])).expect("float tensor"),
            aux,
        }
    }

    /// Tensor-level forward: (segment logits [B, POLICY_SIZE], value logits [B, 3]).
    pub fn forward(&self, x: &Tensor) -> (Tensor, Tensor) {
        let (policy, value, _) = self.forward_trunk(x);
        (policy, value)
    }

    /// Policy logits, value logits and the tower's output (for further heads).
    ///
    /// Activations and residual sums are computed in place: a batch's
    /// intermediate tensors are fresh, so nothing else sees them, and each
    /// saved allocation is one less trip through the allocator, which at
    /// self-play's batch sizes costs about as much as an element-wise pass.
    fn forward_trunk(&self, x: &Tensor) -> (Tensor, Tensor, Tensor) {
        let mut x = self.input.forward(x).relu_();
        for (a, b) in &self.tower {
            let y = a.forward(&x).relu_();
            let mut sum = b.forward(&y);
            sum += &x;
            x = sum.relu_();
        }
        let policy = self
            .policy_out
            .forward(&self.policy_hidden.forward(&x).relu_())
            .reshape([-1, POLICY_SIZE as i64]);
        let v = self.value_hidden.forward(&x).relu_().flatten(1, -1);
        let v = v.linear(&self.value_fc.0, Some(&self.value_fc.1)).relu_();
        let value = v.linear(&self.value_out.0, Some(&self.value_out.1));
        (policy, value, x)
    }
}

/// Whether bf16 is worth offering on this CPU: AMX or AVX512-BF16 (x86 only).
pub fn cpu_has_fast_bf16() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::fs::read_to_string("/proc/cpuinfo")
            .map(|s| s.contains(" amx_bf16") || s.contains(" avx512_bf16"))
            .unwrap_or(false)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
