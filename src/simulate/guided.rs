//! Guided runs (`--guided`): a coverage-guided swarm. Every state a walk
//! reaches is fingerprinted; a state no earlier run reached is *new*, and
//! the path to it is kept. Each guided run either starts afresh, as a plain
//! or swarm run does, or resumes from a kept new state chosen at random
//! (with that run's bounds), replaying the path to it and walking on with
//! its own schedule (uniform, swarm weights or PCT, as the other options
//! say). Walks so crowd out from the states already covered, which is what
//! finds the interleavings a fresh walk reaches once in a hundred thousand:
//! an interleaving needing many unlikely choices in a row is reached a few
//! choices at a time, each new state a stepping stone. Half the resumed
//! runs start instead from a state on the path to the kept state drawn
//! (its initial state included): early states, shared by many kept paths,
//! are so retried often, with whatever faults they have left.
//!
//! Nothing model-specific is used: the fingerprint is the state's hash (and
//! the run's bounds), so the guidance is the same for every model.
//!
//! - **Determinism.** Run `r` depends on the seed and runs `0..r` (the
//!   states they kept), which are walked in order on one thread. So `--run
//!   N` walks runs `0..N` first, and guided runs cannot be split into
//!   shards (the command refuses `--shard` with `--guided`).
//! - **Memory.** The kept paths share their prefixes in one tree, and at
//!   most [`MAX_NODES`] steps are kept; beyond, runs resume from the states
//!   already kept.

use super::walk::walk_from;
use super::{plan, run_rng, Schedule, Settings, Walk};
use crate::models::ModelBounds;
use crate::models::ToolModel;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use stateright::{Model, Property};
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Steps kept in the tree of paths at most (a step is an action and two
/// indices: a few tens of bytes).
pub const MAX_NODES: usize = 2_000_000;

/// A guided run starts afresh with probability 1 in `FRESH`, else resumes
/// from a kept state: fresh starts keep the early states varied, resumed
/// ones reach past them.
const FRESH: u32 = 4;

/// No parent: a node that is an initial state.
const ROOT: u32 = u32::MAX;

struct Node<A> {
    parent: u32,
    /// The index of its run's root (model and initial state).
    root: u32,
    /// The step into this node; `None` for a root's own node.
    action: Option<A>,
}

struct Root<M: Model> {
    model: M,
    init: M::State,
    run: u64,
    /// The fingerprint of the run's bounds, mixed into its states'.
    bounds: u64,
}

/// What the guided runs have kept so far.
pub struct Guide<M: ToolModel> {
    roots: Vec<Root<M>>,
    nodes: Vec<Node<M::Action>>,
    /// The nodes of new states: where runs resume.
    kept: Vec<u32>,
    /// How many runs resumed from each kept state.
    resumed: Vec<u32>,
    seen: HashSet<u64>,
}

/// Where a run started: afresh, or from a kept state of an earlier run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Fresh,
    Resumed { run: u64, steps: usize },
}

impl Origin {
    /// For a violation's report: how to read the run's first steps.
    pub fn describe(self) -> Option<String> {
        match self {
            Origin::Fresh => None,
            Origin::Resumed { run, steps } => Some(format!(
                "guided: resumed from a state run {run} reached first, after {steps} steps"
            )),
        }
    }
}

fn fingerprint<T: Hash + ?Sized>(salt: u64, value: &T) -> u64 {
    // SipHash with fixed keys: the same fingerprint on every machine.
    let mut h = DefaultHasher::new();
    salt.hash(&mut h);
    value.hash(&mut h);
    h.finish()
}

impl<M: ToolModel> Default for Guide<M> {
    fn default() -> Self {
        Guide {
            roots: Vec::new(),
            nodes: Vec::new(),
            kept: Vec::new(),
            resumed: Vec::new(),
            seen: HashSet::new(),
        }
    }
}

impl<M: ToolModel> Guide<M> {
    /// How many new states have been kept.
    pub fn kept(&self) -> usize {
        self.kept.len()
    }

    /// The path to `node`: its root's model and initial state, the actions.
    fn path(&self, node: u32) -> (&Root<M>, Vec<M::Action>) {
        let mut actions = Vec::new();
        let mut at = node;
        while at != ROOT {
            let n = &self.nodes[at as usize];
            if let Some(a) = &n.action {
                actions.push(a.clone());
            }
            at = n.parent;
        }
        actions.reverse();
        (
            &self.roots[self.nodes[node as usize].root as usize],
            actions,
        )
    }

    /// `node` and every node on the path to it, its root's included.
    fn chain(&self, node: u32) -> Vec<u32> {
        let mut chain = vec![node];
        let mut at = self.nodes[node as usize].parent;
        while at != ROOT {
            chain.push(at);
            at = self.nodes[at as usize].parent;
        }
        chain
    }

    fn keep(&mut self, node: u32) {
        self.kept.push(node);
        self.resumed.push(0);
    }

    /// The salt of a run's fingerprints: its bounds, which its root keeps.
    fn salt(&self, model: &M, from: Option<u32>) -> u64 {
        match from {
            Some(node) => self.roots[self.nodes[node as usize].root as usize].bounds,
            None => fingerprint(0, &model.bounds_line()),
        }
    }

    /// Keeps what run `run`'s walk reached first: `reached[i]` is the
    /// fingerprint of the state after the walk's `begun + i` steps, from
    /// node `from` (or a new root).
    #[allow(clippy::too_many_arguments)]
    fn learn(
        &mut self,
        run: u64,
        model: &M,
        from: Option<u32>,
        bounds: u64,
        walk: &Walk<M>,
        begun: usize,
        reached: &[u64],
    ) {
        let new: Vec<bool> = reached
            .iter()
            .map(|&f| self.seen.len() < MAX_NODES && self.seen.insert(f))
            .collect();
        let Some(last_new) = new.iter().rposition(|&n| n) else {
            return;
        };
        if self.nodes.len() + last_new + 1 > MAX_NODES {
            return;
        }
        let mut parent = match from {
            Some(node) => node,
            None => {
                self.roots.push(Root {
                    model: model.clone(),
                    init: walk.init.clone(),
                    run,
                    bounds,
                });
                self.nodes.push(Node {
                    parent: ROOT,
                    root: (self.roots.len() - 1) as u32,
                    action: None,
                });
                (self.nodes.len() - 1) as u32
            }
        };
        if new[0] {
            self.keep(parent);
        }
        for (i, &is_new) in new.iter().enumerate().skip(1).take(last_new) {
            let node = Node {
                parent,
                root: self.nodes[parent as usize].root,
                action: Some(walk.actions[begun + i - 1].clone()),
            };
            self.nodes.push(node);
            parent = (self.nodes.len() - 1) as u32;
            if is_new {
                self.keep(parent);
            }
        }
    }
}

/// One run drawn and walked: its model (its bounds), its schedule, the walk
/// and where it started.
pub struct DrawnRun<M: ToolModel> {
    pub model: M,
    pub schedule: Schedule,
    pub walk: Walk<M>,
    pub origin: Origin,
}

/// Draws run `run` of `settings` and walks it: with a guide, perhaps from
/// a state an earlier run kept, and what it reaches first is kept. Without
/// one, the draws of a plain, swarm or PCT run, which depend on the seed
/// and `run` alone.
pub fn draw_and_walk<M: ToolModel>(
    base: &M,
    properties: &[Property<M>],
    settings: &Settings,
    guide: Option<&mut Guide<M>>,
    run: u64,
) -> Result<DrawnRun<M>, String> {
    let mut rng: ChaCha8Rng = run_rng(settings.seed, run);
    let (model, weights) = plan(base, settings.swarm.as_deref(), &mut rng)?;
    let Some(guide) = guide else {
        let mut schedule = Schedule::of_run(settings.pct, weights, &mut rng);
        let walk = walk_from(
            &model,
            properties,
            &mut schedule,
            settings.depth,
            settings.liveness,
            None,
            &mut |_| {},
            &mut rng,
        );
        return Ok(DrawnRun {
            model,
            schedule,
            walk,
            origin: Origin::Fresh,
        });
    };
    let from = (!guide.kept.is_empty() && rng.random_range(0..FRESH) != 0).then(|| {
        // Of two kept states drawn, the one resumed from less often (on a
        // tie the newer): every state gets its turn, and the newest, at the
        // edge of what is covered, are taken first.
        let n = guide.kept.len();
        let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
        let (ra, rb) = (guide.resumed[a], guide.resumed[b]);
        let k = if ra < rb || (ra == rb && a > b) { a } else { b };
        guide.resumed[k] += 1;
        let node = guide.kept[k];
        // Half the time, from a state on the path to it instead: a prefix
        // is shared by many kept paths, so an early state whose faults are
        // not yet spent is retried far more often than its one turn among
        // the kept states (owner-keyed-stall-crash needs a stall and a
        // crash at two exact points).
        if rng.random_bool(0.5) {
            let path = guide.chain(node);
            path[rng.random_range(0..path.len())]
        } else {
            node
        }
    });
    let (model, start, origin) = match from {
        None => (model, None, Origin::Fresh),
        Some(node) => {
            let (root, path) = guide.path(node);
            let origin = Origin::Resumed {
                run: root.run,
                steps: path.len(),
            };
            (root.model.clone(), Some((root.init.clone(), path)), origin)
        }
    };
    let begun = start.as_ref().map_or(0, |(_, p)| p.len());
    let mut schedule = Schedule::of_run(settings.pct, weights, &mut rng);
    let salt = guide.salt(&model, from);
    let mut reached = Vec::new();
    let walk = walk_from(
        &model,
        properties,
        &mut schedule,
        settings.depth,
        settings.liveness,
        start,
        &mut |s| reached.push(fingerprint(salt, s)),
        &mut rng,
    );
    guide.learn(run, &model, from, salt, &walk, begun, &reached);
    Ok(DrawnRun {
        model,
        schedule,
        walk,
        origin,
    })
}
