//! The policy/value network: a residual tower (He et al. 2016) with an
//! AlphaZero-style policy head (segment logits, see [`crate::encoding`]) and a
//! win/draw/loss value head. Built from an `nn::Path` with named sub-paths so
//! checkpoint tensor names read like `tower.3.second.conv.weight`.
//!
//! Optionally ([`NetConfig::heads`]) auxiliary heads, one per
//! [`AuxTarget`] asked for (Leela Chess Zero's moves-left head, MLH, 2020,
//! is the first; KataGo's search adds auxiliary predictions to its utility
//! the same way): each a 1x1 convolution, a hidden fully connected layer and
//! one linear output predicting its label divided by the target's scale, so
//! that the target is of order one like the other heads' (see
//! [`crate::trainer`] for the loss, [`crate::inference`] for how a
//! prediction is read back in the label's units).
use crate::config::NetConfig;
use crate::encoding::{GRID, INPUT_PLANES, POLICY_PLANES, POLICY_SIZE};
use crate::targets::{AuxTarget, PerTarget};
use tch::nn::{self, ModuleT};
use tch::Tensor;

/// Convolution without bias followed by batch norm: the bias would be
/// cancelled by the norm's mean, and the pair folds into one biased
/// convolution for inference.
#[derive(Debug)]
pub struct ConvBn {
    /// The convolution, without bias (tensors `conv.weight`).
    pub conv: nn::Conv2D,
    /// The batch norm applied to the convolution's output (tensors `bn.*`).
    pub bn: nn::BatchNorm,
}

impl ConvBn {
    fn new(p: nn::Path, cin: i64, cout: i64, k: i64) -> ConvBn {
        let cfg = nn::ConvConfig {
            padding: k / 2,
            bias: false,
            ..Default::default()
        };
        ConvBn {
            conv: nn::conv2d(&p / "conv", cin, cout, k, cfg),
            bn: nn::batch_norm2d(&p / "bn", cout, Default::default()),
        }
    }

    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        xs.apply(&self.conv).apply_t(&self.bn, train)
    }
}

/// One residual block of the tower: `relu(second(relu(first(x))) + x)`,
/// both convolutions 3x3 with the tower's channels.
#[derive(Debug)]
pub struct ResidualBlock {
    /// The first 3x3 convolution and norm, followed by a ReLU.
    pub first: ConvBn,
    /// The second 3x3 convolution and norm, whose output is added to the
    /// block's input before the final ReLU.
    pub second: ConvBn,
}

/// The whole network: an input convolution, the residual tower, and the
/// policy, value and (optional) auxiliary heads on the tower's output.
/// Field names are the checkpoint's tensor name prefixes.
#[derive(Debug)]
pub struct PolicyValueNet {
    /// The shape this network was built with.
    pub config: NetConfig,
    /// 3x3 convolution from the input planes to the tower's channels.
    pub input: ConvBn,
    /// The residual blocks, `config.blocks` of them.
    pub tower: Vec<ResidualBlock>,
    /// The policy head's 1x1 convolution to `config.policy_channels`.
    pub policy_hidden: ConvBn,
    /// The policy head's biased 1x1 convolution to the 16 policy planes
    /// (the segment logits).
    pub policy_out: nn::Conv2D,
    /// The value head's 1x1 convolution to `config.value_channels`.
    pub value_hidden: ConvBn,
    /// The value head's hidden fully connected layer (`config.value_hidden`
    /// wide).
    pub value_fc: nn::Linear,
    /// The value head's output layer: win/draw/loss logits.
    pub value_out: nn::Linear,
    /// The auxiliary heads the config asks for, in [`AuxTarget::ALL`] order.
    pub aux_heads: Vec<AuxHead>,
}

/// An auxiliary head: 1x1 convolution (with batch norm) -> fully connected
/// -> one output, the value head's shape with a single output.
#[derive(Debug)]
pub struct AuxHead {
    /// What the head predicts.
    pub target: AuxTarget,
    /// 1x1 convolution (with batch norm) to the value head's channels.
    pub hidden: ConvBn,
    /// Hidden fully connected layer, the value head's width.
    pub fc: nn::Linear,
    /// The single output: the label / the target's scale.
    pub out: nn::Linear,
}

impl AuxHead {
    /// Builds `target`'s head under `p / <its key>` (so the moves-left
    /// head's tensors are named `moves_left.*`), with the value head's sizes.
    pub fn new(p: &nn::Path, target: AuxTarget, config: &NetConfig) -> AuxHead {
        let p = p / target.spec().key;
        AuxHead {
            target,
            hidden: ConvBn::new(&p / "hidden", config.channels, config.value_channels, 1),
            fc: nn::linear(
                &p / "fc",
                config.value_channels * GRID as i64,
                config.value_hidden,
                Default::default(),
            ),
            out: nn::linear(&p / "out", config.value_hidden, 1, Default::default()),
        }
    }

    /// Trunk features -> \[B\] predicted label / the target's scale.
    pub fn forward_t(&self, trunk: &Tensor, train: bool) -> Tensor {
        self.hidden
            .forward_t(trunk, train)
            .relu()
            .flatten(1, -1)
            .apply(&self.fc)
            .relu()
            .apply(&self.out)
            .reshape([-1])
    }
}

/// Every head's output for a batch.
pub struct HeadOutputs {
    /// [B, POLICY_SIZE] segment logits.
    pub policy: Tensor,
    /// [B, 3] win/draw/loss logits for the side to move.
    pub value: Tensor,
    /// \[B\] each auxiliary head's prediction (label / the target's scale),
    /// for the heads the net has.
    pub aux: PerTarget<Option<Tensor>>,
}

impl PolicyValueNet {
    /// Builds a freshly initialised network of shape `config` whose tensors
    /// live under `p` (named like `tower.3.first.conv.weight`).
    pub fn new(p: &nn::Path, config: NetConfig) -> PolicyValueNet {
        let c = config.channels;
        let tower = (0..config.blocks)
            .map(|i| {
                let b = p / "tower" / i;
                ResidualBlock {
                    first: ConvBn::new(&b / "first", c, c, 3),
                    second: ConvBn::new(&b / "second", c, c, 3),
                }
            })
            .collect();
        PolicyValueNet {
            config,
            input: ConvBn::new(p / "input", INPUT_PLANES as i64, c, 3),
            tower,
            policy_hidden: ConvBn::new(p / "policy" / "hidden", c, config.policy_channels, 1),
            policy_out: nn::conv2d(
                p / "policy" / "out",
                config.policy_channels,
                POLICY_PLANES as i64,
                1,
                Default::default(),
            ),
            value_hidden: ConvBn::new(p / "value" / "hidden", c, config.value_channels, 1),
            value_fc: nn::linear(
                p / "value" / "fc",
                config.value_channels * GRID as i64,
                config.value_hidden,
                Default::default(),
            ),
            value_out: nn::linear(
                p / "value" / "out",
                config.value_hidden,
                3,
                Default::default(),
            ),
            aux_heads: config
                .heads
                .iter()
                .map(|t| AuxHead::new(p, t, &config))
                .collect(),
        }
    }

    /// `xs`: [B, INPUT_PLANES, 7, 7]. Returns (segment logits [B, POLICY_SIZE],
    /// value logits [B, 3] for win/draw/loss of the side to move).
    pub fn forward_t(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
        let heads = self.forward_heads_t(xs, train);
        (heads.policy, heads.value)
    }

    /// Every head, the auxiliary ones included.
    pub fn forward_heads_t(&self, xs: &Tensor, train: bool) -> HeadOutputs {
        let mut x = self.input.forward_t(xs, train).relu();
        for block in &self.tower {
            let y = block.first.forward_t(&x, train).relu();
            x = (block.second.forward_t(&y, train) + x).relu();
        }
        let policy = self
            .policy_hidden
            .forward_t(&x, train)
            .relu()
            .apply(&self.policy_out)
            .reshape([-1, POLICY_SIZE as i64]);
        let value = self
            .value_hidden
            .forward_t(&x, train)
            .relu()
            .flatten(1, -1)
            .apply(&self.value_fc)
            .relu()
            .apply(&self.value_out);
        let mut aux = PerTarget::from_fn(|_| None);
        for head in &self.aux_heads {
            aux[head.target] = Some(head.forward_t(&x, train));
        }
        HeadOutputs { policy, value, aux }
    }

    /// The head of `target`, when the network has it.
    pub fn aux_head(&self, target: AuxTarget) -> Option<&AuxHead> {
        self.aux_heads.iter().find(|h| h.target == target)
    }
}

impl ModuleT for PolicyValueNet {
    /// Concatenated [policy | value] logits, for generic tooling.
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        let (p, v) = PolicyValueNet::forward_t(self, xs, train);
        Tensor::cat(&[p, v], 1)
    }
}
