//! `solve --order`: what ranks the mover's moves for df-pn's new leaves
//! (`halatafl_solver::order` gives the method): nothing, alpha-beta's
//! static evaluation of each child, or a network's policy.

use anyhow::{Context, Result};
use halatafl_agent::AgentSpec;
use halatafl_alphabeta::eval::{evaluate, EvalWeights};
use halatafl_nn::agent::{NetRegistry, NetSource};
use halatafl_nn::{NetEvaluator, Precision, PrecisionChoice};
use halatafl_rules::{Move, Position, Variant};
use halatafl_solver::MoveOrder;
use std::path::PathBuf;
use std::sync::Arc;

/// The forms `--order` takes, shown with a bad one.
pub const ORDER_FORMS: &str =
    "--order takes: none | eval (alpha-beta's static evaluation of each move) | \
best[:device=cpu|cuda,precision=f32|bf16|auto] (the shipped network's policy; f32 by default) | \
net:ckpt=PATH[,device=...,precision=...] (a checkpoint's policy)";

/// A parsed `--order`.
#[derive(Clone, Debug, PartialEq)]
pub enum OrderSpec {
    /// No ranking: plain df-pn leaves.
    None,
    /// Alpha-beta's static evaluation of the position after each move.
    Eval,
    /// A network's policy; `None` is the shipped network.
    Net {
        /// The checkpoint (`net:ckpt=`), or the shipped network (`best`).
        ckpt: Option<PathBuf>,
        /// Where the network runs.
        device: String,
        /// Its inference precision.
        precision: PrecisionChoice,
    },
}

impl std::str::FromStr for OrderSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<OrderSpec, String> {
        let spec = AgentSpec::parse(text, ORDER_FORMS).map_err(|e| e.to_string())?;
        let net = |ckpt: Option<PathBuf>| -> Result<OrderSpec, String> {
            let keys: &[&str] = if ckpt.is_some() {
                &["ckpt", "device", "precision"]
            } else {
                &["device", "precision"]
            };
            spec.check_keys(keys).map_err(|e| e.to_string())?;
            let device: String = spec
                .get_or("device", "cpu".to_string())
                .map_err(|e| e.to_string())?;
            halatafl_nn::parse_device(&device).map_err(|e| format!("--order {text}: {e}"))?;
            let precision = spec
                .get_or("precision", PrecisionChoice::Fixed(Precision::F32))
                .map_err(|e| e.to_string())?;
            Ok(OrderSpec::Net {
                ckpt,
                device,
                precision,
            })
        };
        match spec.kind.as_str() {
            "none" | "eval" if !spec.params.is_empty() => Err(format!(
                "--order {text}: `{}` takes no options\n{ORDER_FORMS}",
                spec.kind
            )),
            "none" => Ok(OrderSpec::None),
            "eval" => Ok(OrderSpec::Eval),
            "best" => net(None),
            "net" => {
                let ckpt: String =
                    spec.get("ckpt")
                        .map_err(|e| e.to_string())?
                        .ok_or_else(|| {
                            format!("--order {text}: `net` needs ckpt=PATH\n{ORDER_FORMS}")
                        })?;
                net(Some(PathBuf::from(ckpt)))
            }
            other => Err(format!(
                "--order {text}: unknown order `{other}`\n{ORDER_FORMS}"
            )),
        }
    }
}

impl std::fmt::Display for OrderSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            OrderSpec::None => write!(f, "none"),
            OrderSpec::Eval => write!(f, "eval"),
            OrderSpec::Net { ckpt: None, .. } => write!(f, "best"),
            OrderSpec::Net {
                ckpt: Some(path), ..
            } => write!(f, "net:ckpt={}", path.display()),
        }
    }
}

impl OrderSpec {
    /// The order for positions of `variant` (a network trained on another
    /// variant is refused, naming both), or `None` for `none`. Networks are
    /// loaded once per `registry`.
    pub fn build(
        &self,
        variant: Variant,
        registry: &NetRegistry,
    ) -> Result<Option<Arc<dyn MoveOrder>>> {
        Ok(match self {
            OrderSpec::None => None,
            OrderSpec::Eval => Some(Arc::new(EvalOrder)),
            OrderSpec::Net {
                ckpt,
                device,
                precision,
            } => {
                let source = match ckpt {
                    Some(path) => NetSource::File(path),
                    None => NetSource::Shipped,
                };
                let (evaluator, _) = registry
                    .network_for(source, device, *precision, variant)
                    .map_err(anyhow::Error::msg)
                    .context("--order")?;
                Some(Arc::new(NetOrder { evaluator }))
            }
        })
    }
}

/// Ranks each move by alpha-beta's static evaluation of the position it
/// leads to (for the side that moved; a move that ends the game by the
/// material rule or leaves the other side no move ranks by its result).
struct EvalOrder;

impl MoveOrder for EvalOrder {
    fn scores(&self, position: &Position, moves: &[Move], scores: &mut Vec<f32>) {
        scores.clear();
        let mover = position.side();
        let weights = EvalWeights::for_variant(position.variant());
        for &mv in moves {
            let mut child = *position;
            child.play_unchecked(mv);
            let score = if let Some(outcome) = child.material_outcome() {
                match outcome.winner {
                    Some(w) if w == mover => 1e9,
                    Some(_) => -1e9,
                    None => 0.0,
                }
            } else if child.count_legal_moves() == 0 {
                // The side that moved has shut the other in: a win.
                1e9
            } else {
                -(evaluate(&child, &weights) as f32)
            };
            scores.push(score);
        }
    }
}

/// Ranks the moves by a network's policy (one network call per position
/// ranked; the evaluator's cache and the solver's keep repeats cheap).
struct NetOrder {
    evaluator: Arc<NetEvaluator>,
}

impl MoveOrder for NetOrder {
    fn scores(&self, position: &Position, moves: &[Move], scores: &mut Vec<f32>) {
        // The policy comes over `position.legal_moves()`, the order the
        // solver passes; a list of another length ranks nothing (the
        // solver checks the length).
        let (priors, _) = self.evaluator.evaluate_position(position, 1);
        scores.clear();
        if priors.len() == moves.len() {
            scores.extend_from_slice(&priors);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_specs_parse_and_bad_ones_say_what_is_wrong() {
        assert_eq!("none".parse::<OrderSpec>(), Ok(OrderSpec::None));
        assert_eq!("eval".parse::<OrderSpec>(), Ok(OrderSpec::Eval));
        assert!(matches!(
            "best".parse::<OrderSpec>(),
            Ok(OrderSpec::Net { ckpt: None, .. })
        ));
        match "net:ckpt=a b.safetensors,precision=f32".parse::<OrderSpec>() {
            Ok(OrderSpec::Net {
                ckpt: Some(p),
                precision,
                device,
            }) => {
                assert_eq!(p, PathBuf::from("a b.safetensors"));
                assert_eq!(device, "cpu");
                assert_eq!(precision, PrecisionChoice::Fixed(Precision::F32));
            }
            other => panic!("{other:?}"),
        }
        let err = |s: &str| s.parse::<OrderSpec>().unwrap_err();
        assert!(err("net").contains("ckpt=PATH"), "{}", err("net"));
        assert!(
            err("best:sims=100").contains("`sims`"),
            "{}",
            err("best:sims=100")
        );
        assert!(err("eval:depth=2").contains("takes no options"));
        assert!(err("policy").contains("unknown order `policy`"));
        assert!(
            err("best:device=tpu").contains("tpu"),
            "{}",
            err("best:device=tpu")
        );
        assert!(err("best:precision=f16").contains("f16"));
    }

    #[test]
    fn the_evaluation_ranks_a_capture_first() {
        // Classic, five geese: the fox on d4 can take the goose on d5.
        let variant: Variant = "classic geese=13".parse().unwrap();
        let p = Position::from_fen(".../.../...G.../...F.../......./GGG/G.. f 0", variant).unwrap();
        let moves = p.legal_moves();
        assert!(moves.iter().any(|m| m.is_capture()));
        assert!(moves.iter().any(|m| !m.is_capture()));
        let mut scores = Vec::new();
        EvalOrder.scores(&p, &moves, &mut scores);
        assert_eq!(scores.len(), moves.len());
        let best = (0..moves.len())
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
            .unwrap();
        assert!(moves[best].is_capture(), "{} ranked first", moves[best]);
    }
}
