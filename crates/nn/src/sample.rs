//! Training samples and batches.

use crate::encoding::{encode_into, for_each_segment, INPUT_PLANES, INPUT_SIZE, POLICY_SIZE};
use crate::model::MOVES_LEFT_SCALE;
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
    /// Plies from this position to the end of its game (1 for the last
    /// position before the end), the moves-left head's target; `None` where
    /// the end is not known (samples from before the field existed, games cut
    /// short: see `halatafl_train::selfplay`), which the head does not train on.
    pub plies_left: Option<u16>,
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
            plies_left: self.plies_left,
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
    /// \[B\] moves-left targets: plies left / [`MOVES_LEFT_SCALE`] (0 where unknown).
    pub moves_left: Tensor,
    /// \[B\] 1 where the sample has a moves-left target, else 0.
    pub moves_left_mask: Tensor,
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
        let mut moves_left = vec![0f32; b];
        let mut moves_left_mask = vec![0f32; b];
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
            if let Some(plies) = s.plies_left {
                moves_left[i] = (plies as f64 / MOVES_LEFT_SCALE) as f32;
                moves_left_mask[i] = 1.0;
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
            moves_left: Tensor::from_slice(&moves_left).to_device(device),
            moves_left_mask: Tensor::from_slice(&moves_left_mask).to_device(device),
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
