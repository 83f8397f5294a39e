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
        }
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
    fn forward_trunk(&self, x: &Tensor) -> (Tensor, Tensor, Tensor) {
        let mut x = self.input.forward(x).relu();
        for (a, b) in &self.tower {
            let y = a.forward(&x).relu();
            x = (b.forward(&y) + x).relu();
        }
        let policy = self
            .policy_out
            .forward(&self.policy_hidden.forward(&x).relu())
            .reshape([-1, POLICY_SIZE as i64]);
        let v = self.value_hidden.forward(&x).relu().flatten(1, -1);
        let v = v.linear(&self.value_fc.0, Some(&self.value_fc.1)).relu();
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
