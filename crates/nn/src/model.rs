//! The policy/value network: a residual tower (He et al. 2016) with an
//! AlphaZero-style policy head (segment logits, see [`crate::encoding`]) and a
//! win/draw/loss value head. Built from an `nn::Path` with named sub-paths so
//! checkpoint tensor names read like `tower.3.conv2.weight`.

use crate::config::NetConfig;
use crate::encoding::{GRID, INPUT_PLANES, POLICY_PLANES, POLICY_SIZE};
use tch::nn::{self, ModuleT};
use tch::Tensor;

/// Convolution without bias followed by batch norm: the bias would be
/// cancelled by the norm's mean, and the pair folds into one biased
/// convolution for inference.
#[derive(Debug)]
pub struct ConvBn {
    pub conv: nn::Conv2D,
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

#[derive(Debug)]
pub struct ResidualBlock {
    pub first: ConvBn,
    pub second: ConvBn,
}

#[derive(Debug)]
pub struct PolicyValueNet {
    pub config: NetConfig,
    pub input: ConvBn,
    pub tower: Vec<ResidualBlock>,
    pub policy_hidden: ConvBn,
    pub policy_out: nn::Conv2D,
    pub value_hidden: ConvBn,
    pub value_fc: nn::Linear,
    pub value_out: nn::Linear,
}

impl PolicyValueNet {
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
        }
    }

    /// `xs`: [B, INPUT_PLANES, 7, 7]. Returns (segment logits [B, POLICY_SIZE],
    /// value logits [B, 3] for win/draw/loss of the side to move).
    pub fn forward_t(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
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
        (policy, value)
    }
}

impl ModuleT for PolicyValueNet {
    /// Concatenated [policy | value] logits, for generic tooling.
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        let (p, v) = PolicyValueNet::forward_t(self, xs, train);
        Tensor::cat(&[p, v], 1)
    }
}
