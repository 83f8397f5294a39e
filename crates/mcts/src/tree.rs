//! The tree: one `Vec` of nodes addressed by `u32`, each node's children a
//! contiguous range of it (in the order of the parent's legal moves).
//!
//! Statistics live in the child (the edge), from the point of view of the
//! player who made the move into it, so a parent picks the child with the
//! highest value. A node is about 56 bytes for Two Foxes (the 24-byte move
//! included; see the `node_size` test) and 28 for tic-tac-toe.

use crate::game::Terminal;

pub(crate) const ROOT: u32 = 0;

/// Where a node is in its life.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Kind {
    /// Never reached by a simulation.
    Fresh = 0,
    /// Waiting for its evaluation (in a batch).
    Pending = 1,
    /// Evaluated, children allocated.
    Expanded = 2,
    /// The game is over here; `proven` holds the result.
    Terminal = 3,
}

/// Result proven by the MCTS-solver, from the mover's point of view.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Proven {
    Unknown = 0,
    Win = 1,
    Draw = 2,
    Loss = 3,
}

impl Proven {
    pub(crate) fn from_terminal(t: Terminal) -> Proven {
        match t {
            Terminal::Win => Proven::Win,
            Terminal::Draw => Proven::Draw,
            Terminal::Loss => Proven::Loss,
        }
    }

    pub(crate) fn terminal(self) -> Option<Terminal> {
        match self {
            Proven::Unknown => None,
            Proven::Win => Some(Terminal::Win),
            Proven::Draw => Some(Terminal::Draw),
            Proven::Loss => Some(Terminal::Loss),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Node<M> {
    /// The move from the parent into this node (meaningless at the root).
    pub mv: M,
    /// Index of the first child; `num_children` follow it. 0 = none (the root
    /// is node 0 and is never a child).
    pub first_child: u32,
    pub visits: u32,
    /// Sum of backed-up `win - loss`, for the player who moved into this node.
    pub value_sum: f32,
    /// Sum of backed-up draw probabilities.
    pub draw_sum: f32,
    /// The evaluator's `win - loss` for the side to move here (Gumbel's
    /// completed Q mixes it in).
    pub raw_q: f32,
    /// Prior of the move into this node, as the top 16 bits of an `f32`
    /// (bfloat16: 8 significant bits is plenty for a prior).
    prior_bits: u16,
    /// Simulations under way through this node (virtual loss).
    pub in_flight: u16,
    pub num_children: u16,
    /// `Kind` in bits 0-1, `Proven` in bits 2-3.
    state: u8,
}

impl<M: Copy> Node<M> {
    pub(crate) fn new(mv: M, prior: f32) -> Node<M> {
        Node {
            mv,
            first_child: 0,
            visits: 0,
            value_sum: 0.0,
            draw_sum: 0.0,
            raw_q: 0.0,
            prior_bits: bf16_bits(prior),
            in_flight: 0,
            num_children: 0,
            state: 0,
        }
    }

    #[inline]
    pub(crate) fn prior(&self) -> f32 {
        f32::from_bits((self.prior_bits as u32) << 16)
    }

    #[inline]
    pub(crate) fn kind(&self) -> Kind {
        match self.state & 3 {
            0 => Kind::Fresh,
            1 => Kind::Pending,
            2 => Kind::Expanded,
            _ => Kind::Terminal,
        }
    }

    #[inline]
    pub(crate) fn set_kind(&mut self, k: Kind) {
        self.state = (self.state & !3) | k as u8;
    }

    #[inline]
    pub(crate) fn proven(&self) -> Proven {
        match (self.state >> 2) & 3 {
            0 => Proven::Unknown,
            1 => Proven::Win,
            2 => Proven::Draw,
            _ => Proven::Loss,
        }
    }

    #[inline]
    pub(crate) fn set_proven(&mut self, p: Proven) {
        self.state = (self.state & 3) | ((p as u8) << 2);
    }

    #[inline]
    pub(crate) fn children(&self) -> std::ops::Range<usize> {
        let s = self.first_child as usize;
        s..s + self.num_children as usize
    }

    /// Mean `win - loss` for the mover over real visits (0 if none).
    #[inline]
    pub(crate) fn q(&self) -> f32 {
        if self.visits == 0 {
            0.0
        } else {
            self.value_sum / self.visits as f32
        }
    }

    #[inline]
    pub(crate) fn draw(&self) -> f32 {
        if self.visits == 0 {
            0.0
        } else {
            self.draw_sum / self.visits as f32
        }
    }
}

/// Round-to-nearest bfloat16 of a non-negative finite prior.
fn bf16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let rounded = bits.wrapping_add(0x7FFF + ((bits >> 16) & 1));
    (rounded >> 16) as u16
}

/// The node arena.
#[derive(Clone, Debug)]
pub(crate) struct Tree<M> {
    pub nodes: Vec<Node<M>>,
    /// Each node's evaluator predictions (NaN: none), parallel to `nodes`
    /// while the search uses a utility that reads them (moves-left,
    /// material), empty otherwise: kept beside the nodes, not in them, so
    /// searches without those utilities pay no memory for them (see the
    /// `node_size` test).
    predicted: Vec<Predicted>,
    track_predictions: bool,
    /// Spare arena for tree reuse, kept to avoid reallocating.
    spare: Vec<Node<M>>,
    origin: Vec<u32>,
}

/// What the evaluator predicted at a node, beyond priors and value.
#[derive(Clone, Copy, Debug)]
struct Predicted {
    /// Plies to the end of the game.
    plies_left: f32,
    /// Change of the side to move's material to the end of the game.
    material_left: f32,
}

impl Predicted {
    const NONE: Predicted = Predicted {
        plies_left: f32::NAN,
        material_left: f32::NAN,
    };
}

impl<M: Copy> Tree<M> {
    pub(crate) fn new(root_move: M) -> Tree<M> {
        Tree {
            nodes: vec![Node::new(root_move, 1.0)],
            predicted: Vec::new(),
            track_predictions: false,
            spare: Vec::new(),
            origin: Vec::new(),
        }
    }

    /// Keeps (or stops keeping) each node's predictions.
    pub(crate) fn track_predictions(&mut self, on: bool) {
        self.track_predictions = on;
        self.predicted.clear();
        if on {
            self.predicted.resize(self.nodes.len(), Predicted::NONE);
        }
    }

    /// Node `i`'s predicted plies left, if known (and kept).
    #[inline]
    pub(crate) fn plies_left(&self, i: u32) -> Option<f32> {
        self.predicted
            .get(i as usize)
            .map(|p| p.plies_left)
            .filter(|p| !p.is_nan())
    }

    /// Records node `i`'s predicted plies left (ignored when not kept).
    pub(crate) fn set_plies_left(&mut self, i: u32, plies: f32) {
        if let Some(p) = self.predicted.get_mut(i as usize) {
            p.plies_left = plies;
        }
    }

    /// Node `i`'s predicted material change to the end, for its side to
    /// move, if known (and kept).
    #[inline]
    pub(crate) fn material_left(&self, i: u32) -> Option<f32> {
        self.predicted
            .get(i as usize)
            .map(|p| p.material_left)
            .filter(|m| !m.is_nan())
    }

    /// Records node `i`'s predicted material change (ignored when not kept).
    pub(crate) fn set_material_left(&mut self, i: u32, change: f32) {
        if let Some(p) = self.predicted.get_mut(i as usize) {
            p.material_left = change;
        }
    }

    pub(crate) fn reset(&mut self, root_move: M) {
        self.nodes.clear();
        self.nodes.push(Node::new(root_move, 1.0));
        self.track_predictions(self.track_predictions);
    }

    #[inline]
    pub(crate) fn root(&self) -> &Node<M> {
        &self.nodes[ROOT as usize]
    }

    /// Appends children with the given moves and (normalised) priors; returns
    /// the index of the first.
    pub(crate) fn add_children(&mut self, moves: &[M], priors: impl Iterator<Item = f32>) -> u32 {
        let first = self.nodes.len() as u32;
        self.nodes
            .extend(moves.iter().zip(priors).map(|(&m, p)| Node::new(m, p)));
        if self.track_predictions {
            self.predicted.resize(self.nodes.len(), Predicted::NONE);
        }
        first
    }

    /// Makes node `new_root` the root, keeping its subtree (breadth first, so
    /// every child range stays contiguous) and dropping the rest. No simulation
    /// may be pending.
    pub(crate) fn reroot(&mut self, new_root: u32) {
        let mut out = std::mem::take(&mut self.spare);
        out.clear();
        self.origin.clear();
        out.push(self.nodes[new_root as usize]);
        self.origin.push(new_root);
        let mut i = 0;
        while i < out.len() {
            let old = self.nodes[self.origin[i] as usize];
            if old.num_children > 0 {
                let first = out.len() as u32;
                for c in old.children() {
                    out.push(self.nodes[c]);
                    self.origin.push(c as u32);
                }
                out[i].first_child = first;
            }
            i += 1;
        }
        self.spare = std::mem::replace(&mut self.nodes, out);
        self.spare.clear();
        if self.track_predictions {
            let kept: Vec<Predicted> = self
                .origin
                .iter()
                .map(|&o| self.predicted[o as usize])
                .collect();
            self.predicted = kept;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_size() {
        let two_foxes = std::mem::size_of::<Node<halatafl_rules::Move>>();
        let small = std::mem::size_of::<Node<u8>>();
        println!(
            "bytes per node: Two Foxes {two_foxes} (move {}), u8 moves {small}",
            std::mem::size_of::<halatafl_rules::Move>()
        );
        assert!(two_foxes <= 56, "{two_foxes}");
        assert!(small <= 28, "{small}");
    }

    #[test]
    fn prior_and_state_packing() {
        let mut n = Node::new(0u8, 0.3);
        assert!((n.prior() - 0.3).abs() < 0.3 / 128.0);
        assert!(Node::new(0u8, 1e-6).prior() > 0.0);
        n.set_kind(Kind::Pending);
        n.set_proven(Proven::Draw);
        assert_eq!((n.kind(), n.proven()), (Kind::Pending, Proven::Draw));
        n.set_kind(Kind::Terminal);
        assert_eq!((n.kind(), n.proven()), (Kind::Terminal, Proven::Draw));
        n.set_proven(Proven::Loss);
        assert_eq!((n.kind(), n.proven()), (Kind::Terminal, Proven::Loss));
    }

    #[test]
    fn reroot_keeps_ranges_contiguous() {
        let mut t = Tree::new(0u8);
        let c = t.add_children(&[1, 2], [0.5, 0.5].into_iter());
        t.nodes[0].first_child = c;
        t.nodes[0].num_children = 2;
        let g = t.add_children(&[3, 4, 5], [0.2, 0.3, 0.5].into_iter());
        t.nodes[2].first_child = g;
        t.nodes[2].num_children = 3;
        t.nodes[2].visits = 7;
        t.reroot(2);
        assert_eq!(t.nodes.len(), 4);
        assert_eq!(t.root().visits, 7);
        let moves: Vec<u8> = t.root().children().map(|i| t.nodes[i].mv).collect();
        assert_eq!(moves, vec![3, 4, 5]);
    }

    #[test]
    fn predictions_follow_their_nodes_through_reroot_and_reset() {
        let mut t = Tree::new(0u8);
        assert_eq!(t.plies_left(ROOT), None);
        t.set_plies_left(ROOT, 9.0);
        t.set_material_left(ROOT, -2.0);
        assert_eq!(t.plies_left(ROOT), None, "not kept unless asked");
        assert_eq!(t.material_left(ROOT), None, "not kept unless asked");
        t.track_predictions(true);
        let c = t.add_children(&[1, 2], [0.5, 0.5].into_iter());
        t.nodes[0].first_child = c;
        t.nodes[0].num_children = 2;
        let g = t.add_children(&[3, 4], [0.5, 0.5].into_iter());
        t.nodes[2].first_child = g;
        t.nodes[2].num_children = 2;
        t.set_plies_left(2, 20.0);
        t.set_plies_left(g + 1, 19.0);
        t.set_material_left(g + 1, 1.5);
        t.reroot(2);
        assert_eq!(t.plies_left(ROOT), Some(20.0));
        assert_eq!(t.material_left(ROOT), None);
        let second = t.root().first_child + 1;
        assert_eq!(t.plies_left(second), Some(19.0));
        assert_eq!(t.material_left(second), Some(1.5));
        assert_eq!(t.plies_left(second - 1), None);
        t.reset(7);
        assert_eq!(t.plies_left(ROOT), None);
        assert_eq!(t.material_left(second), None);
        t.set_plies_left(ROOT, 3.0);
        assert_eq!(t.plies_left(ROOT), Some(3.0));
    }
}
