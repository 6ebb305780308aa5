//! The reduction of split reads is exact (`docs/stovepipe.md`, *Split
//! reads*): with `split-read`, the model that takes a split read's next
//! part at once (`reduce_split_reads`, the default) gives, on a grid of
//! small bounds, for every design and a sample of each design's mutants,
//! every property's verdict (progress included) and the length of every
//! shortest counterexample and witness that the model gives with every
//! interleaving (`reduce_split_reads` off), searched by slotcheck and by
//! the plain breadth-first search of `common::shortest`; every path it
//! finds replays as the unreduced model's own steps to a state that shows
//! what it was found for; and it lists the same mutants.

use crate::common::{bounds, shortest, stovepipe_with};
use slotcheck::check::{check, Limits, Outcome, Verdict};
use slotcheck_models::stovepipe::{mutation, Bounds, Design, Stovepipe, DESIGNS};
use slotcheck_models::PropertyKind;
use stateright::{Expectation, Model};

/// Per property: its name, its verdict and its path's length (a progress
/// lasso's too: its prefix and loop), from slotcheck's search.
pub(crate) fn lengths(outcome: &Outcome<Stovepipe>) -> Vec<(&'static str, Verdict, Option<usize>)> {
    assert_eq!(outcome.stats.cut, None);
    outcome
        .results
        .iter()
        .map(|r| (r.name, r.verdict, r.trace.as_ref().map(|t| t.steps())))
        .collect()
}

/// The safety properties' and witnesses' lengths alone, as
/// `common::shortest` gives them.
fn safety(outcome: &Outcome<Stovepipe>) -> Vec<(&'static str, Option<usize>)> {
    outcome
        .results
        .iter()
        .filter(|r| r.kind != PropertyKind::Progress)
        .map(|r| (r.name, r.trace.as_ref().map(|t| t.steps())))
        .collect()
}

/// Each path the reduced search found is the unreduced model's: every
/// action enabled where it stands, and the last state a discovery.
pub(crate) fn replays(whole: &Stovepipe, outcome: &Outcome<Stovepipe>, label: &str) {
    let properties = whole.properties();
    for r in &outcome.results {
        let Some(trace) = &r.trace else { continue };
        let mut state = trace.init;
        let mut enabled = Vec::new();
        for action in &trace.actions {
            enabled.clear();
            whole.actions(&state, &mut enabled);
            assert!(enabled.contains(action), "{label} {}: {action:?}", r.name);
            state = whole.next_state(&state, *action).unwrap();
        }
        assert_eq!(state, trace.last, "{label} {}", r.name);
        if r.kind == PropertyKind::Progress {
            continue;
        }
        let property = properties.iter().find(|p| p.name == r.name).unwrap();
        let holds = (property.condition)(whole, &state);
        let found = match property.expectation {
            Expectation::Always => !holds,
            _ => holds,
        };
        assert!(found, "{label} {}: the path ends in a discovery", r.name);
    }
}

/// The grid: one request under two stalls, and a crash and a stall (the
/// mixes where a stalled write lands between a redelivery's reads); two
/// requests with each fault alone and together, two slots, and the options
/// that change what follows a read (an abort restarts it; a delayed hold
/// comes back whatever was written); three requests with a crash, where a
/// lone reader's first part goes first while two other requests' workers
/// run. `SLOTCHECK_EXACTNESS=full` adds three requests with a stall, with
/// and without delayed holds (tens of seconds each).
fn grid() -> Vec<(Bounds, &'static [&'static str])> {
    let mut grid: Vec<(Bounds, &'static [&'static str])> = vec![
        (bounds(1, 1, 1, 1, 2), &[]),
        (bounds(1, 1, 0, 2, 2), &[]),
        (bounds(2, 1, 0, 0, 2), &[]),
        (bounds(2, 1, 1, 0, 2), &[]),
        (bounds(2, 1, 0, 1, 2), &[]),
        (bounds(2, 1, 1, 1, 1), &[]),
        (bounds(2, 2, 0, 1, 2), &[]),
        (bounds(2, 1, 0, 1, 2), &["aborts"]),
        (bounds(2, 1, 0, 1, 2), &["delayed-hold"]),
        (bounds(3, 1, 1, 0, 1), &[]),
    ];
    if full() {
        grid.push((bounds(3, 1, 0, 1, 1), &[]));
        grid.push((bounds(3, 1, 0, 1, 1), &["delayed-hold"]));
    }
    grid
}

/// The model on `bounds` with `split-read` and `options`, reduced, and the
/// same unreduced.
fn models(design: Design, bounds: Bounds, options: &[&str]) -> (Stovepipe, Stovepipe) {
    let mut reduced = stovepipe_with(design, bounds, options);
    reduced.options.split_read = true;
    assert!(reduced.reduce_split_reads, "on by default");
    let whole = Stovepipe {
        reduce_split_reads: false,
        ..reduced
    };
    (reduced, whole)
}

/// Whether to run a pair: every `every`th (shifted from setting to
/// setting, so that the designs take turns), within CI's time;
/// `SLOTCHECK_EXACTNESS=full` (the nightly) runs every pair.
fn sampled(i: usize, every: usize) -> bool {
    full() || i.is_multiple_of(every)
}

/// `SLOTCHECK_EXACTNESS=full`: the nightly's whole grid.
fn full() -> bool {
    std::env::var("SLOTCHECK_EXACTNESS").is_ok_and(|v| v == "full")
}

#[test]
fn split_reads_reduced_give_every_verdict_and_shortest_length_of_every_interleaving() {
    let (mut settings, mut fewer) = (0, 0);
    for (setting, (bounds, options)) in grid().into_iter().enumerate() {
        for (i, design) in DESIGNS.iter().enumerate() {
            // One request: every design; more: every fourth.
            if bounds.requests > 1 && !sampled(setting + i, 4) {
                continue;
            }
            let (reduced, whole) = models(*design, bounds, options);
            let label = format!("{} on {bounds:?} {options:?}", design.name);
            let outcome = check(reduced, &[], &Limits::default());
            let whole_outcome = check(whole, &[], &Limits::default());
            assert_eq!(lengths(&outcome), lengths(&whole_outcome), "{label}");
            assert_eq!(safety(&outcome), shortest(&whole), "{label}");
            replays(&whole, &outcome, &label);
            fewer += usize::from(outcome.stats.unique < whole_outcome.stats.unique);
            settings += 1;
        }
    }
    assert!(settings * 4 >= grid().len() * DESIGNS.len(), "{settings}");
    // It reduces: every setting stores fewer states.
    assert_eq!(fewer, settings, "{fewer} of {settings} smaller");
}

#[test]
fn split_reads_reduced_keep_every_mutants_verdicts_and_lengths() {
    let settings = [bounds(1, 1, 1, 1, 2), bounds(1, 1, 0, 2, 2)];
    let (mut pair, mut mutants) = (0, 0);
    for bounds in settings {
        for design in DESIGNS.iter() {
            let (reduced, whole) = models(*design, bounds, &[]);
            let listed = mutation::mutations(&reduced);
            assert_eq!(listed, mutation::mutations(&whole), "{}", design.name);
            for m in listed {
                pair += 1;
                if !sampled(pair, 7) {
                    continue;
                }
                let (reduced, whole) = (reduced.mutant(m), whole.mutant(m));
                let label = format!("{} on {bounds:?}", m.name(design.name));
                let outcome = check(reduced, &[], &Limits::default());
                let whole_outcome = check(whole, &[], &Limits::default());
                assert_eq!(lengths(&outcome), lengths(&whole_outcome), "{label}");
                replays(&whole, &outcome, &label);
                mutants += 1;
            }
        }
    }
    assert!(mutants * 7 + 7 > pair, "{mutants} of {pair}");
}

/// Off without `split-read`: the one-snapshot read has no parts.
#[test]
fn one_snapshot_reads_are_not_reduced() {
    let (reduced, _) = models(DESIGNS[0], bounds(2, 1, 1, 0, 2), &[]);
    let snapshot = Stovepipe {
        options: Default::default(),
        ..reduced
    };
    let whole = Stovepipe {
        reduce_split_reads: false,
        ..snapshot
    };
    let (a, b) = (
        check(snapshot, &[], &Limits::default()),
        check(whole, &[], &Limits::default()),
    );
    assert_eq!(a.stats.unique, b.stats.unique);
    assert_eq!(lengths(&a), lengths(&b));
}
