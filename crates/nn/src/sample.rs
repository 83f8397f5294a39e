//! Training samples and batches.

use crate::encoding::{encode_into, for_each_segment, INPUT_PLANES, INPUT_SIZE, POLICY_SIZE};
use crate::targets::PerTarget;
use halatafl_rules::{Move, Position};
use tch::{Device, Kind, Tensor};

/// One position seen in self-play with its training targets.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The position, side to move included.
    pub position: Position,
    /// Times this position had stood on the board in its game, counting then.
    pub repetitions: u8,
    /// Target distribution over `position.legal_moves()`, in that order.
    pub policy: Vec<f32>,
    /// Win/draw/loss target for the side to move (the game's result, or a
    /// blend with the search value).
    pub wdl: [f32; 3],
    /// Each auxiliary target's label, in the target's units (for
    /// [`AuxTarget::MovesLeft`](crate::AuxTarget::MovesLeft), the plies from
    /// this position to the end of its game, 1 for the last position before
    /// the end); `None` where the game does not reveal it (see
    /// [`AuxTarget::label`](crate::AuxTarget::label)) or the sample is older
    /// than the target, which its head then does not train on.
    pub aux: PerTarget<Option<f32>>,
}

impl Sample {
    /// The same sample seen in the left-right mirror: the policy is permuted to
    /// follow the mirrored position's move order.
    pub fn mirror(&self) -> Sample {
        let position = self.position.mirror();
        let original = self.position.legal_moves();
        let mirrored = position.legal_moves();
        let policy = mirrored
            .iter()
            .map(|m| {
                let back = m.mirror();
                original
                    .iter()
                    .position(|o| *o == back)
                    .map(|i| self.policy[i])
                    .unwrap_or(0.0)
            })
            .collect();
        Sample {
            position,
            repetitions: self.repetitions,
            policy,
            wdl: self.wdl,
            aux: self.aux,
        }
    }
}

/// Tensors for one training step.
pub struct Batch {
    /// [B, INPUT_PLANES, 7, 7]
    pub planes: Tensor,
    /// [B, M, L] segment indices of every legal move (padding: POLICY_SIZE,
    /// which points at an appended zero logit).
    pub move_segments: Tensor,
    /// [B, M] true for real moves.
    pub move_mask: Tensor,
    /// [B, M] policy targets.
    pub policy: Tensor,
    /// [B, 3] value targets.
    pub wdl: Tensor,
    /// Per auxiliary target: (\[B\] labels / the target's scale, 0 where
    /// unknown; \[B\] 1 where the sample has a label, else 0).
    pub aux: PerTarget<(Tensor, Tensor)>,
    /// Samples in the batch (B).
    pub len: usize,
}

impl Batch {
    /// Encodes `samples` into one batch of tensors on `device`, padding every
    /// sample's move list to the longest one and every move to the longest
    /// chain.
    pub fn new(samples: &[&Sample], device: Device) -> Batch {
        let b = samples.len();
        let move_lists: Vec<Vec<Move>> = samples
            .iter()
            .map(|s| s.position.legal_moves().to_vec())
            .collect();
        let max_moves = move_lists.iter().map(|m| m.len()).max().unwrap_or(1).max(1);
        let max_len = move_lists
            .iter()
            .flatten()
            .map(|m| m.jumps().max(1))
            .max()
            .unwrap_or(1);
        let mut planes = vec![0f32; b * INPUT_SIZE];
        let mut segs = vec![POLICY_SIZE as i64; b * max_moves * max_len];
        let mut mask = vec![false; b * max_moves];
        let mut policy = vec![0f32; b * max_moves];
        let mut wdl = vec![0f32; b * 3];
        let mut aux = PerTarget::from_fn(|_| (vec![0f32; b], vec![0f32; b]));
        for (i, (s, moves)) in samples.iter().zip(&move_lists).enumerate() {
            encode_into(
                &s.position,
                s.repetitions as usize,
                &mut planes[i * INPUT_SIZE..(i + 1) * INPUT_SIZE],
            );
            assert_eq!(
                moves.len(),
                s.policy.len(),
                "policy target does not match the legal moves of {}",
                s.position
            );
            for (j, &m) in moves.iter().enumerate() {
                mask[i * max_moves + j] = true;
                policy[i * max_moves + j] = s.policy[j];
                let base = (i * max_moves + j) * max_len;
                let mut k = 0;
                for_each_segment(m, |seg| {
                    segs[base + k] = seg as i64;
                    k += 1;
                });
            }
            wdl[i * 3..i * 3 + 3].copy_from_slice(&s.wdl);
            for (target, (labels, mask)) in aux.iter_mut() {
                if let Some(label) = s.aux[target] {
                    labels[i] = (label as f64 / target.spec().scale) as f32;
                    mask[i] = 1.0;
                }
            }
        }
        let (b, m, l) = (b as i64, max_moves as i64, max_len as i64);
        Batch {
            planes: Tensor::from_slice(&planes)
                .view([b, INPUT_PLANES as i64, 7, 7])
                .to_device(device),
            move_segments: Tensor::from_slice(&segs).view([b, m, l]).to_device(device),
            move_mask: Tensor::from_slice(&mask).view([b, m]).to_device(device),
            policy: Tensor::from_slice(&policy).view([b, m]).to_device(device),
            wdl: Tensor::from_slice(&wdl).view([b, 3]).to_device(device),
            aux: aux.map(|_, (labels, mask)| {
                (
                    Tensor::from_slice(&labels).to_device(device),
                    Tensor::from_slice(&mask).to_device(device),
                )
            }),
            len: samples.len(),
        }
    }

    /// Log-probabilities of every legal move from segment logits [B, POLICY_SIZE].
    pub fn move_log_probs(&self, segment_logits: &Tensor) -> Tensor {
        let size = segment_logits.size();
        let padded = Tensor::cat(
            &[
                segment_logits.shallow_clone(),
                segment_logits.zeros_like().narrow(1, 0, 1),
            ],
            1,
        );
        debug_assert_eq!(size[1], POLICY_SIZE as i64);
        let dims = self.move_segments.size();
        let gathered = padded.gather(
            1,
            &self.move_segments.view([dims[0], dims[1] * dims[2]]),
            false,
        );
        let logits =
            gathered
                .view([dims[0], dims[1], dims[2]])
                .sum_dim_intlist(2, false, Kind::Float);
        let masked = logits.masked_fill(&self.move_mask.logical_not(), -1e9);
        masked.log_softmax(1, Kind::Float)
    }
}
