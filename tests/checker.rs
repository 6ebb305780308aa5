//! What slotcheck's search promises, each pinned where stateright 0.31's own
//! BFS falls short: shortest counterexamples with several properties, a
//! timeout and a memory budget that stop a run, a cut run that says
//! inconclusive, and counts
//! and traces that do not depend on the thread count.

use slotcheck::check::{check, Cut, Limits, Verdict};
use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe, DESIGNS};
use slotcheck_models::{Narrated, Packed, ScriptError, StoryStep, Value};
use stateright::{Checker, Model, Property};
use std::time::{Duration, Instant};

/// The notes' line model: x goes from 0 up to `end`, or jumps to `end` from
/// 0 (a longer and a shorter way into a violation are both there).
#[derive(Clone)]
struct Line {
    end: u32,
}

impl Model for Line {
    type State = u32;
    type Action = u32;

    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }

    fn actions(&self, x: &u32, actions: &mut Vec<u32>) {
        if *x < self.end {
            actions.push(x + 1);
        }
    }

    fn next_state(&self, _: &u32, to: u32) -> Option<u32> {
        Some(to)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("below-3", |_, x| *x < 3),
            Property::sometimes("never", |_, _| false),
        ]
    }
}

/// A model whose state is one `u32`, packed in one word.
macro_rules! packed_in_one_word {
    ($model:ty) => {
        impl Packed for $model {
            fn packed_words(&self) -> usize {
                1
            }
            fn pack(&self, x: &u32, words: &mut [u64]) {
                words[0] = *x as u64;
            }
            fn unpack(&self, words: &[u64]) -> u32 {
                words[0] as u32
            }
        }
    };
}

packed_in_one_word!(Line);

impl Narrated for Line {
    fn rows(&self, x: &u32) -> Vec<(String, String)> {
        vec![("x".into(), x.to_string())]
    }
    fn values(&self, x: &u32) -> Vec<(String, Value)> {
        vec![("x".into(), Value::Int(*x as i64))]
    }
    fn tell(&self, _: &u32, actions: &[u32]) -> Vec<StoryStep> {
        actions
            .iter()
            .map(|to| StoryStep {
                actor: "x".into(),
                action: format!("x = {to}"),
                changes: vec![],
            })
            .collect()
    }
    fn words(&self, _: &u32, actions: &[u32]) -> Vec<String> {
        actions.iter().map(|to| format!("to {to}")).collect()
    }
    fn parse(&self, _: &u32, _: &[String]) -> Result<Vec<u32>, ScriptError> {
        Err(ScriptError {
            index: 0,
            message: "not scripted".into(),
        })
    }
    fn explain(&self, property: &str, x: &u32) -> String {
        format!("{property} at x = {x}")
    }
}

#[test]
fn stateright_alone_keeps_a_longer_counterexample_when_other_properties_run_on() {
    // The pitfall the harness exists for: with a witness still missing, the
    // checker goes on and overwrites the 3-step discovery with later ones.
    let checker = Line { end: 10 }.checker().spawn_bfs().join();
    let raw = checker.discovery("below-3").unwrap().into_actions().len();
    assert!(
        raw > 3,
        "stateright 0.31 gave {raw} steps; if it is 3, the pitfall is fixed upstream"
    );
}

#[test]
fn the_harness_keeps_the_shortest_counterexample_with_several_properties() {
    for threads in [1, 2] {
        let limits = Limits {
            threads,
            ..Limits::default()
        };
        let outcome = check(Line { end: 10 }, &[], &limits);
        let below = outcome.result("below-3").unwrap();
        assert_eq!(below.verdict, Verdict::Violated);
        assert_eq!(
            below.trace.as_ref().unwrap().steps(),
            3,
            "threads {threads}"
        );
        assert_eq!(
            outcome.result("never").unwrap().verdict,
            Verdict::NotReached
        );
        assert_eq!(outcome.stats.unique, 11, "every state explored");
    }
}

#[test]
fn a_timeout_stops_a_one_thread_run_and_makes_it_inconclusive() {
    let started = Instant::now();
    let limits = Limits {
        timeout: Some(Duration::from_millis(200)),
        ..Limits::default()
    };
    let outcome = check(Line { end: u32::MAX }, &["never"], &limits);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the run stopped"
    );
    assert_eq!(outcome.stats.cut, Some(Cut::Timeout));
    assert_eq!(
        outcome.result("never").unwrap().verdict,
        Verdict::Inconclusive
    );
}

#[test]
fn a_memory_budget_cuts_the_run_before_the_machine_would() {
    let limits = Limits {
        max_memory: Some(1),
        ..Limits::default()
    };
    let outcome = check(Line { end: u32::MAX }, &["never"], &limits);
    assert_eq!(outcome.stats.cut, Some(Cut::MaxMemory));
    assert_eq!(
        outcome.result("never").unwrap().verdict,
        Verdict::Inconclusive
    );
    assert_eq!(outcome.exit_code(), 3);
}

#[test]
fn a_state_budget_cuts_the_run_and_only_undecided_verdicts_become_inconclusive() {
    let limits = Limits {
        max_states: Some(1000),
        ..Limits::default()
    };
    let outcome = check(Line { end: 1_000_000 }, &[], &limits);
    assert_eq!(outcome.stats.cut, Some(Cut::MaxStates));
    assert!(outcome.stats.states <= 1000);
    // The violation was found before the cut: it stands, with its trace.
    assert_eq!(
        outcome.result("below-3").unwrap().verdict,
        Verdict::Violated
    );
    assert_eq!(
        outcome.result("never").unwrap().verdict,
        Verdict::Inconclusive
    );
    assert_eq!(outcome.exit_code(), 1);

    let holds_only = check(Line { end: 1_000_000 }, &["never"], &limits);
    assert_eq!(holds_only.exit_code(), 3, "inconclusive, never holds");
}

#[test]
fn one_to_four_threads_give_the_same_counts_verdicts_and_traces() {
    // Both fault kinds, small enough for a test, large enough for the two
    // threads to share work.
    let bounds = |crashes, stalls| Bounds {
        requests: 2,
        max_concurrent: 1,
        crashes,
        stalls,
        max_deliveries: 2,
    };
    for (design, bounds) in DESIGNS
        .iter()
        .flat_map(|d| [(d, bounds(1, 0)), (d, bounds(0, 1))])
    {
        let model = Stovepipe::new(design_named(design.name).unwrap(), bounds);
        let run = |threads| {
            check(
                model,
                &[],
                &Limits {
                    threads,
                    ..Limits::default()
                },
            )
        };
        let one = run(1);
        // Each way the search shares a level: two threads (one judges
        // the successors in order, both make them), three (the insertion
        // shared, shards split unevenly between them) and four (evenly,
        // and on a two-core machine more threads than cores).
        for two in [run(2), run(3), run(4)] {
            assert_eq!(one.stats.unique, two.stats.unique, "{}", design.name);
            assert_eq!(one.stats.states, two.stats.states, "{}", design.name);
            // Levels are whole whatever the thread count: the same depth.
            assert!(one.stats.depth.is_some());
            assert_eq!(one.stats.depth, two.stats.depth);
            for (a, b) in one.results.iter().zip(&two.results) {
                assert_eq!(a.verdict, b.verdict, "{} {}", design.name, a.name);
                let actions = |r: &slotcheck::check::PropertyResult<Stovepipe>| {
                    r.trace.as_ref().map(|t| t.actions.clone())
                };
                assert_eq!(
                    actions(a),
                    actions(b),
                    "{} {}: the same trace",
                    design.name,
                    a.name
                );
            }
        }
    }
}

#[test]
fn a_deadline_is_shared_by_every_run_of_a_command() {
    // A command's --timeout sets one deadline; a run that starts after it
    // stops at once, inconclusive, rather than getting a timeout of its own.
    let limits = Limits {
        deadline: Some(Instant::now()),
        ..Limits::default()
    };
    let outcome = check(Line { end: u32::MAX }, &["never"], &limits);
    assert_eq!(outcome.stats.cut, Some(Cut::Timeout));
    assert_eq!(outcome.stats.unique, 1, "nothing past the initial state");
    assert_eq!(outcome.exit_code(), 3);
}

/// A model whose levels are thousands of states wide (each state's number
/// holds its level above 16 bits and its place below), and whose `actions`
/// panics in one state of a wide level: a bug in a model, met by whichever
/// thread makes that state's successors.
#[derive(Clone)]
struct Fan {
    panics_at: u32,
}

impl Model for Fan {
    type State = u32;
    type Action = u32;

    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }

    fn actions(&self, x: &u32, actions: &mut Vec<u32>) {
        assert_ne!(*x, self.panics_at, "a model's bug");
        let (level, place) = (x >> 16, x & 0xffff);
        if level < 20 {
            for b in 0..2 {
                actions.push((level + 1) << 16 | (2 * place + b) & 0xffff);
            }
        }
    }

    fn next_state(&self, _: &u32, to: u32) -> Option<u32> {
        Some(to)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::sometimes("never", |_, _| false)]
    }
}

packed_in_one_word!(Fan);

/// Told as the line model tells its states.
impl Narrated for Fan {
    fn rows(&self, x: &u32) -> Vec<(String, String)> {
        Line { end: 0 }.rows(x)
    }
    fn values(&self, x: &u32) -> Vec<(String, Value)> {
        Line { end: 0 }.values(x)
    }
    fn tell(&self, init: &u32, actions: &[u32]) -> Vec<StoryStep> {
        Line { end: 0 }.tell(init, actions)
    }
    fn words(&self, init: &u32, actions: &[u32]) -> Vec<String> {
        Line { end: 0 }.words(init, actions)
    }
    fn parse(&self, init: &u32, words: &[String]) -> Result<Vec<u32>, ScriptError> {
        Line { end: 0 }.parse(init, words)
    }
    fn explain(&self, property: &str, x: &u32) -> String {
        Line { end: 0 }.explain(property, x)
    }
}

#[test]
fn a_panic_in_the_model_ends_the_check_whatever_the_thread_count() {
    // Two threads wait on each other's chunks: a panic on either side must
    // reach the caller, not leave the other waiting for ever.
    let wide = Fan {
        panics_at: u32::MAX,
    };
    let unique = check(wide, &[], &Limits::default()).stats.unique;
    assert!(unique > 200_000, "wide levels: {unique} states");
    // Places early, in the middle and late in a level of 256 chunks, so
    // that both threads of two meet one: the one judging, the other making.
    let places = [0, 300, 3000, 30_000, 65_000];
    for (threads, place) in [1, 2, 3].into_iter().flat_map(|t| places.map(|p| (t, p))) {
        let fan = Fan {
            panics_at: 18 << 16 | place,
        };
        let limits = Limits {
            threads,
            ..Limits::default()
        };
        let run = std::panic::catch_unwind(|| check(fan, &[], &limits));
        assert!(
            run.is_err(),
            "threads {threads}: the panic reached the caller"
        );
    }
}
