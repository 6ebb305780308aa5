//! The whole-space walk that coverage marks and mutation sites need: every
//! step of every reachable state, each handed to the caller, who applies it
//! with a log of its own and keeps what the log recorded. No search order,
//! no traces: only which steps exist.

use crate::Packed;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

/// The sets of states seen while exploring: so many that each grows by a
/// few tens of kilobytes at a time. They fill evenly, so they double at
/// about the same time; with 64, the doublings came megabytes between two
/// looks at the memory budget, past it by 5%.
const SEEN_SHARDS: usize = 1024;

/// A step taken: the state, the action, and where it went (the caller
/// applies it with a log of its own).
pub type Step<'a, M> = dyn FnMut(
        &<M as stateright::Model>::State,
        <M as stateright::Model>::Action,
    ) -> <M as stateright::Model>::State
    + 'a;

/// Walks every reachable state of `model` and hands each of its steps to
/// `step`, which returns where the step went: the model explored whole,
/// under a budget (`go_on` is asked, with the states visited so far, every
/// few hundred states; `None` when it said stop).
pub fn each_step_within<M: Packed>(
    model: &M,
    go_on: &mut dyn FnMut(usize) -> bool,
    step: &mut Step<M>,
) -> Option<()> {
    // In shards, so that no one set's growth (a doubling) outruns the
    // memory budget between two looks at it; packed (exact, a few words
    // where a state takes hundreds of bytes), so that the largest bounds
    // the scenarios use fit.
    let mut seen: Vec<HashSet<Box<[u64]>>> = (0..SEEN_SHARDS).map(|_| HashSet::new()).collect();
    let shard = |words: &[u64]| {
        let mut hasher = std::hash::DefaultHasher::new();
        words.hash(&mut hasher);
        hasher.finish() as usize % SEEN_SHARDS
    };
    let pack = |state: &M::State| {
        let mut words = vec![0; model.packed_words()].into_boxed_slice();
        model.pack(state, &mut words);
        words
    };
    let mut visited = 0usize;
    let mut todo: Vec<Box<[u64]>> = model.init_states().iter().map(pack).collect();
    let mut actions = Vec::new();
    while let Some(words) = todo.pop() {
        let state = model.unpack(&words);
        if !seen[shard(&words)].insert(words) {
            continue;
        }
        visited += 1;
        if visited.is_multiple_of(256) && !go_on(visited) {
            return None;
        }
        model.actions(&state, &mut actions);
        for action in actions.drain(..) {
            let next = pack(&step(&state, action));
            if !seen[shard(&next)].contains(&next) {
                todo.push(next);
            }
        }
    }
    Some(())
}
