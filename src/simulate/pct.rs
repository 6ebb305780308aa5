//! PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi and
//! Nagarakatte, ASPLOS 2010): a scheduler built for rare interleavings.
//!
//! Each actor (a worker on a message, the client, a build, a fault on a
//! worker, a builder, the clock: [`ToolModel::actor`]) gets a random priority
//! when it first acts, and every step is taken by the enabled actor with the
//! highest priority, so actors run in long stretches rather than in the
//! fine-grained shuffle a uniform walk makes. At `depth - 1` change points,
//! steps drawn at the start of the walk, the actor that takes the step drops
//! below every other: that is where a preemption falls. A bug that needs `d`
//! actions in a given order (a release, a lost write, a retry) is found by
//! one walk with a probability of at least `1 / (n k^(d-1))` for `n` actors
//! and `k` steps, instead of the product of every step's odds that a uniform
//! walk needs.
//!
//! The change points are drawn from `1..=horizon`; a walk shorter than the
//! horizon sees only the points that fall within it. Everything is drawn
//! from the run's own generator, so a PCT run is reproduced by its seed and
//! number alone, as every other run.

use crate::models::ToolModel;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// The default horizon: about the length of a walk on the bounds the
/// findings need (two or three requests, a crash or two).
pub const DEFAULT_HORIZON: usize = 40;

/// Fault points per walk at most: the findings need one or two faults.
const MAX_FAULT_POINTS: u64 = 3;

/// One walk's PCT scheduler.
pub struct Pct {
    /// Steps (1-based) at which the acting actor's priority drops, with the
    /// priority it drops to (lower for later points, all below the initial
    /// priorities).
    change_points: BTreeMap<usize, u64>,
    /// Steps at which a fault is taken, when one is enabled: on the actor
    /// that has just acted if it can be struck, else on any.
    fault_points: BTreeSet<usize>,
    /// Every actor seen so far, with its priority.
    priorities: BTreeMap<u64, u64>,
    /// Where initial priorities start: above every changed one.
    floor: u64,
    /// The actor of the last step that was no fault.
    last: Option<u64>,
}

impl Pct {
    /// Draws the change points of a walk of PCT depth `depth` (at least 1:
    /// depth 1 has no change point and runs each actor as far as it goes),
    /// and its fault points.
    pub fn new(depth: u32, horizon: usize, rng: &mut ChaCha8Rng) -> Pct {
        let horizon = horizon.max(1);
        let points = depth.saturating_sub(1) as u64;
        let mut change_points = BTreeMap::new();
        for i in 0..points {
            let at = rng.random_range(1..=horizon);
            // Two points on one step: the later (lower) priority wins.
            change_points.insert(at, points - i);
        }
        let faults = rng.random_range(0..=MAX_FAULT_POINTS);
        let fault_points = (0..faults).map(|_| rng.random_range(1..=horizon)).collect();
        Pct {
            change_points,
            fault_points,
            priorities: BTreeMap::new(),
            floor: points + 1,
            last: None,
        }
    }

    /// `pct, change points at steps 5, 17; fault points at 9`.
    pub fn describe(&self) -> String {
        let list = |steps: Vec<usize>| {
            if steps.is_empty() {
                "none".to_string()
            } else {
                steps
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        format!(
            "pct, change points at steps {}; fault points at {}",
            list(self.change_points.keys().copied().collect()),
            list(self.fault_points.iter().copied().collect())
        )
    }

    /// The index in `enabled` of the action to take at `step` (1-based).
    /// Faults are taken only at fault points; every other step goes to the
    /// enabled actor of highest priority.
    pub fn choose<M: ToolModel>(
        &mut self,
        model: &M,
        state: &M::State,
        enabled: &[M::Action],
        step: usize,
        rng: &mut ChaCha8Rng,
    ) -> usize {
        let struck: Vec<Option<u64>> = enabled.iter().map(|a| model.fault_on(state, a)).collect();
        let faults: Vec<usize> = (0..enabled.len())
            .filter(|&i| struck[i].is_some())
            .collect();
        if self.fault_points.contains(&step) && !faults.is_empty() {
            let on_last: Vec<usize> = faults
                .iter()
                .copied()
                .filter(|&i| struck[i].is_some() && struck[i] == self.last)
                .collect();
            let pool = if on_last.is_empty() {
                &faults
            } else {
                &on_last
            };
            return pool[rng.random_range(0..pool.len())];
        }
        let others: Vec<usize> = (0..enabled.len())
            .filter(|&i| struck[i].is_none())
            .collect();
        if others.is_empty() {
            return rng.random_range(0..enabled.len());
        }
        let actors: Vec<u64> = others
            .iter()
            .map(|&i| model.actor(state, &enabled[i]))
            .collect();
        for &actor in &actors {
            if !self.priorities.contains_key(&actor) {
                let priority = self.floor + rng.random_range(0..1u64 << 32);
                self.priorities.insert(actor, priority);
            }
        }
        let best = actors
            .iter()
            .map(|a| self.priorities[a])
            .max()
            .expect("some action is enabled");
        let theirs: Vec<usize> = (0..others.len())
            .filter(|&k| self.priorities[&actors[k]] == best)
            .collect();
        let k = theirs[rng.random_range(0..theirs.len())];
        if let Some(&low) = self.change_points.get(&step) {
            self.priorities.insert(actors[k], low);
        }
        self.last = Some(actors[k]);
        others[k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::ToolModel;
    use crate::simulate::run_rng;
    use slotcheck_models::stovepipe::{Action, Bounds, Stovepipe, DESIGNS};
    use stateright::Model;

    /// With depth 1 there is no preemption: once a worker has started, it
    /// runs to its end unless an actor of higher priority is enabled, so
    /// every step that is no fault goes to the highest priority drawn.
    #[test]
    fn the_highest_priority_actor_takes_every_step_until_a_change_point() {
        let model = Stovepipe::new(DESIGNS[0], Bounds::default());
        for run in 0..50 {
            let mut rng = run_rng(7, run);
            let mut pct = Pct::new(1, DEFAULT_HORIZON, &mut rng);
            let mut state = model.init_states().remove(0);
            let mut enabled = Vec::new();
            for step in 1..200 {
                enabled.clear();
                model.actions(&state, &mut enabled);
                if enabled.is_empty() {
                    break;
                }
                let pick = pct.choose(&model, &state, &enabled, step, &mut rng);
                let chosen = model.actor(&state, &enabled[pick]);
                let is_fault = |a: &Action| model.fault_on(&state, a).is_some();
                // Faults are taken only at fault points, and then on the
                // actor that acted last when it can be struck.
                let faults_enabled = enabled.iter().any(is_fault);
                assert_eq!(
                    is_fault(&enabled[pick]),
                    faults_enabled && pct.fault_points.contains(&step)
                );
                if is_fault(&enabled[pick]) {
                    state = model.next_state(&state, enabled[pick]).unwrap();
                    continue;
                }
                for a in enabled.iter().filter(|a| !is_fault(a)) {
                    assert!(
                        pct.priorities[&model.actor(&state, a)] <= pct.priorities[&chosen],
                        "run {run} step {step}: {a:?} outranks the chosen {:?}",
                        enabled[pick]
                    );
                }
                state = model.next_state(&state, enabled[pick]).unwrap();
            }
        }
    }

    #[test]
    fn a_change_point_drops_the_acting_actor_below_every_other() {
        let model = Stovepipe::new(DESIGNS[0], Bounds::default());
        let mut rng = run_rng(1, 0);
        let mut pct = Pct::new(2, 1, &mut rng);
        let state = model.init_states().remove(0);
        let enabled = vec![Action::Arrive];
        pct.choose(&model, &state, &enabled, 1, &mut rng);
        assert_eq!(pct.priorities[&model.actor(&state, &Action::Arrive)], 1);
        assert!(pct.floor > 1);
    }
}
