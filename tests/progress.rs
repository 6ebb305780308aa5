//! Progress under weak fairness (`docs/checking.md`, "Progress"): the
//! reaping gate that reaps only superseded owners is caught with a lasso;
//! each lasso the check prints is a fair loop in which the property stays
//! pending (checked here step by step on whole states); and the verdicts
//! agree with a second algorithm, a plain fixed point over whole states
//! (Emerson and Lei's, for weak fairness as a generalized Büchi condition),
//! on a small instance of each model.

use crate::common;

use slotcheck::check::{check, Limits, Verdict};
use slotcheck_models::link::{self, Link};
use slotcheck_models::stovepipe::mutation::{Mutation, Operator, Site};
use slotcheck_models::stovepipe::{
    design_named, Bounds, Handler, Pc, Stovepipe, HELD_RELEASED, REQUESTS_FINISH, SLOTS_SETTLE,
};
use slotcheck_models::{Narrated, Packed, PropertyKind};
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;

/// Two requests, K 1, a crash, a stall, one delivery: a dead-lettered
/// request can keep a slot (a stalled claim lands after the DLQ), which the
/// reaping gate gives back.
const SMALL: Bounds = Bounds {
    requests: 2,
    max_concurrent: 1,
    crashes: 1,
    stalls: 1,
    max_deliveries: 1,
};

fn reaping_gate() -> Stovepipe {
    Stovepipe::new(design_named("owner-keyed-reaping-gate").unwrap(), SMALL)
}

const REAPS_SUPERSEDED_ONLY: Mutation = Mutation {
    site: Site {
        handler: Handler::Process,
        pc: Pc::Reap,
    },
    operator: Operator::ReapsSupersededOnly,
};

#[test]
fn a_gate_that_reaps_only_superseded_owners_is_caught_by_progress_alone() {
    let design = reaping_gate();
    let mutant = design.mutant(REAPS_SUPERSEDED_ONLY);
    let limits = Limits::default();
    let before = check(design, &[], &limits);
    let after = check(mutant, &[], &limits);
    assert_eq!(
        before.result(REQUESTS_FINISH).unwrap().verdict,
        Verdict::Holds
    );
    let caught = after.result(REQUESTS_FINISH).unwrap();
    assert_eq!(caught.verdict, Verdict::Violated);
    assert_eq!(caught.kind, PropertyKind::Progress);
    let trace = caught.trace.as_ref().unwrap();
    let from = trace.loop_from.expect("a lasso");
    assert!(from < trace.steps(), "a loop, not a stutter");
    // Every safety verdict and witness is as the design's: only progress
    // tells the mutant apart.
    for r in before
        .results
        .iter()
        .filter(|r| r.kind != PropertyKind::Progress)
    {
        assert_eq!(
            after.result(r.name).unwrap().verdict,
            r.verdict,
            "{}: the mutant changes a safety verdict",
            r.name
        );
    }
}

#[test]
fn the_lasso_is_told_with_its_loop_repeating_for_ever_in_text_and_itf() {
    let dir = common::scratch("progress", "lasso");
    let design = "owner-keyed-reaping-gate";
    let mutant = format!("{design}/reap/reaps-superseded-only");
    let out = dir.to_str().unwrap();
    let output = common::slotcheck(&[
        "check",
        "--design",
        design,
        "--mutant",
        &mutant,
        "--property",
        REQUESTS_FINISH,
        "--requests",
        "2",
        "--crashes",
        "1",
        "--stalls",
        "1",
        "--max-deliveries",
        "1",
        "--out",
        out,
    ]);
    let text = common::stdout(&output);
    assert_eq!(common::code(&output), 1, "{text}");
    assert!(text.contains("a lasso:"), "{text}");
    assert!(text.contains("repeat for ever] "), "{text}");
    assert!(
        text.contains("reap"),
        "the loop holds behind the reap: {text}"
    );
    let file: std::path::PathBuf = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".itf.json"))
        .expect("an ITF trace");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let states = doc["states"].as_array().unwrap().len();
    let index = doc["loop"].as_u64().expect("ITF's loop index") as usize;
    assert!(
        index >= 1 && index < states,
        "loop {index} of {states} states"
    );
    // The last state is the loop's start, as the rows show it.
    let rows = |i: usize| {
        let mut s = doc["states"][i].clone();
        s.as_object_mut().unwrap().remove("#meta");
        s.as_object_mut().unwrap().remove("action");
        s
    };
    assert_eq!(rows(index - 1), rows(states - 1));
    // Replayed, it still violates, told with its loop.
    let replayed = common::slotcheck(&["replay", file.to_str().unwrap()]);
    let told = common::stdout(&replayed);
    assert_eq!(
        common::code(&replayed),
        1,
        "{told}{}",
        common::stderr(&replayed)
    );
    assert!(told.contains("repeat for ever"), "{told}");
}

#[test]
fn the_lasso_is_the_same_whatever_the_thread_count() {
    let mutant = reaping_gate().mutant(REAPS_SUPERSEDED_ONLY);
    let run = |threads| {
        let outcome = check(
            mutant,
            &[REQUESTS_FINISH],
            &Limits {
                threads,
                ..Limits::default()
            },
        );
        let t = outcome
            .result(REQUESTS_FINISH)
            .unwrap()
            .trace
            .as_ref()
            .unwrap();
        (t.actions.clone(), t.loop_from)
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

/// Checks a lasso on whole states: the loop comes back to its start (as
/// stored), one thing stays pending all along it, and every fairness class
/// enabled in all its states is taken in it (or, with no loop, nothing
/// fair is enabled at its end).
fn assert_fair_lasso<M>(model: &M, property: &str)
where
    M: Narrated + Packed + Clone + Sync,
    M::State: Clone + std::fmt::Debug,
    M::Action: Clone + std::fmt::Debug,
{
    let outcome = check(model.clone(), &[], &Limits::default());
    let result = outcome.result(property).unwrap();
    let trace = result.trace.as_ref().expect("a violation");
    let from = trace.loop_from.unwrap();
    let pending = model
        .progress()
        .into_iter()
        .find(|p| p.name == property)
        .unwrap()
        .pending;
    let mut states = vec![trace.init.clone()];
    for a in &trace.actions {
        let next = model.next_state(states.last().unwrap(), a.clone()).unwrap();
        states.push(next);
    }
    let stored = |s: &M::State| {
        let mut w = vec![0; model.packed_words()];
        model.pack(s, &mut w);
        w
    };
    let enabled = |s: &M::State| -> HashSet<u64> {
        let mut actions = Vec::new();
        model.actions(s, &mut actions);
        actions
            .iter()
            .filter_map(|a| model.fairness(s, a))
            .collect()
    };
    let looped = &states[from..];
    assert_eq!(stored(&looped[0]), stored(looped.last().unwrap()));
    let common = looped
        .iter()
        .fold(u64::MAX, |acc, s| acc & pending(model, s));
    assert_ne!(
        common, 0,
        "{property}: nothing stays pending along the loop"
    );
    if from == trace.steps() {
        assert!(
            enabled(&looped[0]).is_empty(),
            "a stutter where nothing fair is enabled"
        );
        return;
    }
    let always: HashSet<u64> = looped
        .iter()
        .map(enabled)
        .reduce(|a, b| a.intersection(&b).copied().collect())
        .unwrap();
    let taken: HashSet<u64> = trace.actions[from..]
        .iter()
        .zip(&states[from..])
        .filter_map(|(a, s)| model.fairness(s, a))
        .collect();
    for class in always {
        assert!(
            taken.contains(&class),
            "class {class:#x} enabled throughout, never taken"
        );
    }
}

#[test]
fn every_lasso_is_a_fair_loop_that_owes_throughout() {
    let mutant = reaping_gate().mutant(REAPS_SUPERSEDED_ONLY);
    assert_fair_lasso(&mutant, REQUESTS_FINISH);
    // A stutter: the reaping gate's slot field never comes to match.
    assert_fair_lasso(&reaping_gate(), SLOTS_SETTLE);
}

/// The second algorithm: whether some reachable fair run keeps one thing
/// of `property` pending for ever, by a greatest fixed point over whole
/// states (no packing, no Tarjan): for each thing owed, the states that
/// owe it and, within them, reach for every fairness class an edge that
/// takes it or leaves from a state where it is not enabled, again and
/// again. A state where nothing fair is enabled (and the bounds did not
/// stop the run) steps to itself.
fn violated_by_fixed_point<M>(model: &M, properties: &[&str]) -> Vec<bool>
where
    M: Narrated,
    M::State: Clone + Eq + Hash,
{
    // The whole graph, breadth first.
    let mut index: HashMap<M::State, usize> = HashMap::new();
    let mut states: Vec<M::State> = Vec::new();
    let mut queue = VecDeque::new();
    for s in model.init_states() {
        if !index.contains_key(&s) {
            index.insert(s.clone(), states.len());
            states.push(s.clone());
            queue.push_back(s);
        }
    }
    // Per state: its edges (target, class) and its enabled classes.
    let mut edges: Vec<Vec<(usize, Option<u64>)>> = Vec::new();
    let mut enabled: Vec<HashSet<u64>> = Vec::new();
    let mut at = 0;
    while at < states.len() {
        let s = states[at].clone();
        let mut actions = Vec::new();
        model.actions(&s, &mut actions);
        let mut out = Vec::new();
        let mut classes = HashSet::new();
        for a in actions {
            let class = model.fairness(&s, &a);
            classes.extend(class);
            if let Some(next) = model.next_state(&s, a) {
                let n = *index.entry(next.clone()).or_insert_with(|| {
                    states.push(next);
                    states.len() - 1
                });
                out.push((n, class));
            }
        }
        if classes.is_empty() && !model.stopped_by_bounds(&s) {
            out.push((at, None));
        }
        edges.push(out);
        enabled.push(classes);
        at += 1;
    }
    let n = states.len();
    let all_classes: Vec<u64> = {
        let mut c: Vec<u64> = enabled.iter().flatten().copied().collect();
        c.sort_unstable();
        c.dedup();
        c
    };
    let mut reverse: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (u, out) in edges.iter().enumerate() {
        for &(v, _) in out {
            reverse[v].push(u);
        }
    }
    properties
        .iter()
        .map(|property| {
            let pending = model
                .progress()
                .into_iter()
                .find(|p| p.name == *property)
                .unwrap()
                .pending;
            let owed: Vec<u64> = states.iter().map(|s| pending(model, s)).collect();
            fair_owing(&owed, &edges, &reverse, &enabled, &all_classes)
        })
        .collect()
}

/// Whether a fair run keeps one bit of `owed` set for ever (the fixed
/// point of [`violated_by_fixed_point`]).
fn fair_owing(
    owed: &[u64],
    edges: &[Vec<(usize, Option<u64>)>],
    reverse: &[Vec<usize>],
    enabled: &[HashSet<u64>],
    all_classes: &[u64],
) -> bool {
    let n = owed.len();
    for bit in 0..64 {
        let mut z: Vec<bool> = owed.iter().map(|m| m & (1 << bit) != 0).collect();
        if !z.iter().any(|&b| b) {
            continue;
        }
        loop {
            let mut next = z.clone();
            for &f in all_classes {
                // States of Z with a Z-edge that meets f; then every state
                // of Z that reaches one within Z.
                let mut reach = vec![false; n];
                let mut todo = Vec::new();
                for u in (0..n).filter(|&u| z[u]) {
                    let meets = edges[u]
                        .iter()
                        .any(|&(v, c)| z[v] && (c == Some(f) || !enabled[u].contains(&f)));
                    if meets {
                        reach[u] = true;
                        todo.push(u);
                    }
                }
                while let Some(v) = todo.pop() {
                    for &u in &reverse[v] {
                        if z[u] && !reach[u] {
                            reach[u] = true;
                            todo.push(u);
                        }
                    }
                }
                for u in 0..n {
                    next[u] &= reach[u];
                }
            }
            // And a step that stays in Z.
            for u in 0..n {
                next[u] &= edges[u].iter().any(|&(v, _)| z[v]);
            }
            if next == z {
                break;
            }
            z = next;
        }
        if z.iter().any(|&b| b) {
            return true;
        }
    }
    false
}

fn verdict_of<M>(model: &M, property: &'static str) -> bool
where
    M: Narrated + Packed + Clone + Sync,
    M::State: Clone,
    M::Action: Clone,
{
    let outcome = check(model.clone(), &[property], &Limits::default());
    match outcome.result(property).unwrap().verdict {
        Verdict::Violated => true,
        Verdict::Holds => false,
        other => panic!("{property}: {other:?}"),
    }
}

#[test]
fn a_fixed_point_over_whole_states_agrees_on_stovepipe() {
    let mutant = reaping_gate().mutant(REAPS_SUPERSEDED_ONLY);
    let design = reaping_gate();
    let properties = [REQUESTS_FINISH, HELD_RELEASED, SLOTS_SETTLE];
    for (model, expected) in [
        (mutant, [true, false, true]),
        (design, [false, false, true]),
    ] {
        let by_check: Vec<bool> = properties.iter().map(|p| verdict_of(&model, p)).collect();
        assert_eq!(by_check, expected);
        assert_eq!(
            violated_by_fixed_point(&model, &properties),
            expected,
            "the fixed point disagrees"
        );
    }
}

#[test]
fn a_fixed_point_over_whole_states_agrees_on_link() {
    let bounds = link::Bounds {
        asks: 1,
        builders: 2,
        ..link::Bounds::default()
    };
    for design in ["after-1649", "check-only"] {
        let model = Link::new(link::design_named(design).unwrap(), bounds);
        let properties = [link::ASKS_COMPLETE, link::BUILDERS_FREE];
        let by_check: Vec<bool> = properties.iter().map(|p| verdict_of(&model, p)).collect();
        assert_eq!(
            violated_by_fixed_point(&model, &properties),
            by_check,
            "{design}: the fixed point disagrees"
        );
    }
}

/// Whether some of `runs` seeded walks with a liveness phase (faults only in
/// the first 0..=20 steps, then every request must finish within 400 steps)
/// ends unsettled: the simulator's verdict on `requests-finish`.
fn simulator_finds_unsettled(model: &Stovepipe, runs: u64) -> bool {
    use slotcheck::simulate::{run_rng, walk_live, Schedule};
    (0..runs).any(|run| {
        let mut rng = run_rng(36, run);
        let walk = walk_live(model, &[], &mut Schedule::Uniform, 400, Some(20), &mut rng);
        walk.unsettled.is_some()
    })
}

#[test]
fn the_simulators_liveness_phase_agrees_with_the_exhaustive_verdict() {
    let mutant = reaping_gate().mutant(REAPS_SUPERSEDED_ONLY);
    let atomic = Stovepipe::new(design_named("owner-keyed-atomic-admit").unwrap(), SMALL);
    let wedging = Stovepipe::new(design_named("owner-keyed").unwrap(), SMALL);
    for model in [reaping_gate(), atomic, mutant, wedging] {
        let exhaustive = verdict_of(&model, REQUESTS_FINISH);
        assert_eq!(
            simulator_finds_unsettled(&model, 2000),
            exhaustive,
            "{}{}: the simulator's liveness phase disagrees with requests-finish",
            model.design.name,
            if model.mutation.is_some() {
                " (mutant)"
            } else {
                ""
            }
        );
    }
}
