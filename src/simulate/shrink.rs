//! Shrinking a random walk's counterexample before it is shown: delta
//! debugging over its scripted steps, then lower bounds while it still
//! fails, then a bounded breadth-first search on those bounds, which gives
//! the shortest trace when its budget reaches it.
//!
//! Candidates are scripts (`arrive R1`, `crash worker 1`...) re-parsed with
//! [`Narrated::parse`], which refuses a step that is no longer enabled; a
//! candidate is kept only if it still violates the same property, and is
//! cut at its first violating state.

use crate::check::{check, Limits, Verdict};
use crate::models::ModelBounds;
use crate::models::ToolModel;
use crate::simulate::discovered;
use stateright::{Model, Property};

/// A shrunk counterexample: the model (bounds may be lower) and the path.
pub struct Shrunk<M: Model> {
    pub model: M,
    /// The initial state the path starts from.
    pub init: M::State,
    pub actions: Vec<M::Action>,
    /// Whether the bounded search gave the path (the shortest on the bounds).
    pub by_search: bool,
}

impl<M: ToolModel> Shrunk<M> {
    pub fn unshrunk(model: &M, init: &M::State, actions: &[M::Action]) -> Self {
        Shrunk {
            model: model.clone(),
            init: init.clone(),
            actions: actions.to_vec(),
            by_search: false,
        }
    }
}

/// Candidate scripts tried per delta-debugging pass at most: bounds the cost
/// of a long walk.
const MAX_TESTS: usize = 4000;

/// The script cut at its first state that violates `property`, in canonical
/// words; `None` when a step is refused or nothing is violated.
fn still_fails<M: ToolModel>(
    model: &M,
    init: &M::State,
    property: &Property<M>,
    script: &[String],
) -> Option<Vec<String>> {
    let actions = model.parse(init, script).ok()?;
    let mut state = init.clone();
    if discovered(model, property, &state) {
        return Some(Vec::new());
    }
    for (i, action) in actions.iter().enumerate() {
        state = model.next_state(&state, action.clone())?;
        if discovered(model, property, &state) {
            return Some(model.words(init, &actions[..=i]));
        }
    }
    None
}

/// Delta debugging (complements only: a violation needs its prefix, so
/// subsets alone rarely fail): remove chunks of steps while the rest still
/// fails, halving the chunks when none can go.
fn ddmin<M: ToolModel>(
    model: &M,
    init: &M::State,
    property: &Property<M>,
    mut script: Vec<String>,
    within: &Limits,
) -> Vec<String> {
    let mut chunks = 2usize;
    let mut tests = 0;
    let mut watch = crate::check::budget::Watch::new(within, std::time::Instant::now());
    while script.len() >= 2 && tests < MAX_TESTS && watch.over(0).is_none() {
        let size = script.len().div_ceil(chunks);
        let mut reduced = false;
        for start in (0..script.len())
            .step_by(size)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            tests += 1;
            let mut candidate = script[..start].to_vec();
            candidate.extend_from_slice(&script[(start + size).min(script.len())..]);
            if let Some(shorter) = still_fails(model, init, property, &candidate) {
                script = shorter;
                chunks = (chunks - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if chunks >= script.len() {
                break;
            }
            chunks = (chunks * 2).min(script.len());
        }
    }
    script
}

/// Takes out whole actors (workers, requests) while the rest still fails,
/// then removes chunks again.
fn remove_actors<M: ToolModel>(
    model: &mut M,
    init: &mut M::State,
    property: &Property<M>,
    mut script: Vec<String>,
    within: &Limits,
) -> Vec<String> {
    let mut tests = 0;
    'again: while tests < MAX_TESTS {
        for (candidate, candidate_script) in model.removals(&script) {
            tests += 1;
            let Some(candidate_init) = candidate.init_like(init) else {
                continue;
            };
            if let Some(shorter) =
                still_fails(&candidate, &candidate_init, property, &candidate_script)
            {
                *model = candidate;
                *init = candidate_init;
                script = ddmin(model, init, property, shorter, within);
                continue 'again;
            }
        }
        break;
    }
    script
}

/// Shrinks `actions` (a path of `model` ending in a violation of
/// `property`); `budget` is the states the final search may generate (0: no
/// search); `within`: the command's deadline and memory budget, which cut
/// the searches too (a cut search shrinks nothing: the trace stays longer
/// but true).
pub fn shrink<M: ToolModel>(
    model: &M,
    init: &M::State,
    actions: &[M::Action],
    property: &'static str,
    budget: usize,
    within: &Limits,
) -> Shrunk<M> {
    let Some(p) = model.properties().into_iter().find(|p| p.name == property) else {
        return Shrunk::unshrunk(model, init, actions);
    };
    let Some(mut script) = still_fails(model, init, &p, &model.words(init, actions)) else {
        return Shrunk::unshrunk(model, init, actions);
    };
    // The command's budgets between the phases too (delta debugging took
    // `simulate --timeout 2` to 2.5 s): once one runs out, the trace stays
    // as far as it was shrunk, longer but true.
    let spent = || {
        crate::check::budget::Watch::new(within, std::time::Instant::now())
            .over(0)
            .is_some()
    };
    if spent() {
        return Shrunk::unshrunk(model, init, actions);
    }
    let mut best = model.clone();
    let mut init = init.clone();
    script = ddmin(&best, &init, &p, script, within);
    if !spent() {
        script = remove_actors(&mut best, &mut init, &p, script, within);
    }
    while !spent() {
        let mut lowered = false;
        for (name, value) in best.bound_values() {
            let Some(lower) = value.checked_sub(1) else {
                continue;
            };
            let Ok(candidate) = best.with_bounds(&[(name, lower)]) else {
                continue;
            };
            let Some(candidate_init) = candidate.init_like(&init) else {
                continue;
            };
            let Some(cp) = candidate
                .properties()
                .into_iter()
                .find(|p| p.name == property)
            else {
                continue;
            };
            if let Some(shorter) = still_fails(&candidate, &candidate_init, &cp, &script) {
                best = candidate;
                init = candidate_init;
                script = shorter;
                lowered = true;
            }
        }
        if !lowered || spent() {
            break;
        }
        let p = best
            .properties()
            .into_iter()
            .find(|p| p.name == property)
            .expect("same properties");
        script = ddmin(&best, &init, &p, script, within);
        script = remove_actors(&mut best, &mut init, &p, script, within);
    }
    let mut actions = best.parse(&init, &script).expect("a kept script parses");
    let mut by_search = false;
    if budget > 0 && !spent() {
        // The search is the oracle now: a bound may go lower than the script
        // allows when another, no longer path fails on the lower bounds.
        let search = |m: &M| {
            let limits = Limits {
                max_states: Some(budget),
                deadline: within.deadline,
                max_memory: within.max_memory,
                // The shortest path is all it needs, not the counts.
                stop_once_found: true,
                ..Limits::default()
            };
            let outcome = check(m.clone(), &[property], &limits);
            let r = outcome.result(property)?;
            match (r.verdict, &r.trace) {
                (Verdict::Violated, Some(trace)) => {
                    Some((trace.init.clone(), trace.actions.clone()))
                }
                _ => None,
            }
        };
        if let Some((first, shortest)) = search(&best).filter(|t| t.1.len() <= actions.len()) {
            init = first;
            actions = shortest;
            by_search = true;
        }
        'lower: loop {
            for (name, value) in best.bound_values() {
                let Some(lower) = value.checked_sub(1) else {
                    continue;
                };
                let Ok(candidate) = best.with_bounds(&[(name, lower)]) else {
                    continue;
                };
                if let Some((first, shortest)) =
                    search(&candidate).filter(|t| t.1.len() <= actions.len())
                {
                    best = candidate;
                    init = first;
                    actions = shortest;
                    by_search = true;
                    continue 'lower;
                }
            }
            break;
        }
    }
    Shrunk {
        model: best,
        init,
        actions,
        by_search,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::{run_rng, walk};
    use slotcheck_models::stovepipe::{design_named, Action, Stovepipe, NO_WEDGE};

    #[test]
    fn delta_debugging_alone_removes_steps_and_lowers_fault_budgets_to_those_used() {
        let model = Stovepipe::new(
            design_named("claim-first").unwrap(),
            crate::models::stovepipe::DEFAULT_BOUNDS,
        );
        let properties: Vec<_> = model
            .properties()
            .into_iter()
            .filter(|p| p.name == NO_WEDGE)
            .collect();
        let (long, property) = (0..1000)
            .find_map(|run| {
                let w = walk(
                    &model,
                    &properties,
                    &mut super::super::Schedule::Uniform,
                    500,
                    &mut run_rng(0, run),
                );
                let at = w.violated[0].filter(|&at| at > 12)?;
                Some((w.actions[..at].to_vec(), &properties[0]))
            })
            .expect("a long wedge within 1000 runs");
        let shrunk = shrink(
            &model,
            &model.initial_state(),
            &long,
            NO_WEDGE,
            0,
            &Limits::default(),
        );
        assert!(!shrunk.by_search);
        assert!(shrunk.actions.len() < long.len());
        // Still a wedge, on the model it was shrunk for.
        let init = shrunk.model.initial_state();
        let last = crate::simulate::last_state(&shrunk.model, &init, &shrunk.actions);
        assert!(crate::simulate::discovered(&shrunk.model, property, &last));
        let used = |f: fn(&Action) -> bool| shrunk.actions.iter().filter(|a| f(a)).count();
        let b = shrunk.model.bounds;
        assert_eq!(b.crashes as usize, used(|a| matches!(a, Action::Crash(_))));
        assert_eq!(b.stalls as usize, used(|a| matches!(a, Action::Stall(_))));
    }
}
