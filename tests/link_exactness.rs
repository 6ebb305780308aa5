//! The link model's stored state is exact (`docs/link-state.md`, *The
//! stored state*): on a matrix of small bounds, for every design, every property's
//! verdict and the length of every shortest counterexample and witness are
//! the same as with the whole state (the model with `reduced` off: every key,
//! every clock, one state per naming of builders), searched by a plain
//! breadth-first search; and every path the reduced search finds replays, on
//! whole states, as the model's own steps, to a state that shows what it
//! was found for, told and scripted with its builders named consistently.

use crate::common::shortest;
use slotcheck::check::{check, Limits, Outcome, Verdict};
use slotcheck_models::link::{all_designs, mutation, Action, Bounds, Link, State, DESIGNS};
use slotcheck_models::Narrated;
use stateright::{Expectation, Model};

/// Per property: its name and its shortest path's length, from slotcheck's
/// search (every verdict decided: no budget cuts these bounds).
/// [`lengths`] of the safety properties and witnesses alone: what the
/// plain BFS of `common::shortest` finds (progress needs the fair-cycle
/// check; its verdicts are compared stored against whole by `lengths`).
fn safety(outcome: &Outcome<Link>) -> Vec<(&'static str, Option<usize>)> {
    let progress: Vec<&str> = outcome
        .results
        .iter()
        .filter(|r| r.kind == slotcheck_models::PropertyKind::Progress)
        .map(|r| r.name)
        .collect();
    lengths(outcome)
        .into_iter()
        .filter(|(name, _)| !progress.contains(name))
        .collect()
}

fn lengths(outcome: &Outcome<Link>) -> Vec<(&'static str, Option<usize>)> {
    assert_eq!(outcome.stats.cut, None);
    outcome
        .results
        .iter()
        .map(|r| {
            let steps = r.trace.as_ref().map(|t| t.steps());
            match r.verdict {
                Verdict::Violated | Verdict::Reached => assert!(steps.is_some()),
                _ => assert!(steps.is_none()),
            }
            (r.name, steps)
        })
        .collect()
}

/// Each path replays on the whole model: every action enabled where it
/// stands, the last state the one the trace says, a discovery for its
/// property; the story tells every step; the script of its words parses
/// back to the same actions.
fn replays(whole: &Link, outcome: &Outcome<Link>, label: &str) {
    let properties = whole.properties();
    for r in &outcome.results {
        let Some(trace) = &r.trace else { continue };
        // A progress lasso is replayed on whole states by tests/progress.rs.
        if r.kind == slotcheck_models::PropertyKind::Progress {
            continue;
        }
        assert!(
            whole.init_states().contains(&trace.init),
            "{label} {}: an initial state",
            r.name
        );
        let mut state: State = trace.init;
        for action in &trace.actions {
            let mut enabled = Vec::new();
            whole.actions(&state, &mut enabled);
            assert!(
                enabled.contains(action),
                "{label} {}: {action:?} enabled",
                r.name
            );
            state = whole.next_state(&state, *action).unwrap();
        }
        assert_eq!(state, trace.last, "{label} {}", r.name);
        let property = properties.iter().find(|p| p.name == r.name).unwrap();
        let holds = (property.condition)(whole, &state);
        let discovery = match property.expectation {
            Expectation::Always => !holds,
            _ => holds,
        };
        assert!(
            discovery,
            "{label} {}: the path ends in a discovery",
            r.name
        );
        assert_eq!(
            whole.tell(&trace.init, &trace.actions).len(),
            trace.actions.len()
        );
        let words = whole.words(&trace.init, &trace.actions);
        assert_eq!(
            whole.parse(&trace.init, &words).ok().as_deref(),
            Some(&trace.actions[..]),
            "{label} {}: its script",
            r.name
        );
    }
}

fn bounds(asks: u8, builders: u8, skew: u16, crashes: u8, lates: u8) -> Bounds {
    Bounds {
        asks,
        builders,
        skew,
        horizon: 60,
        longest_build: 60,
        crashes,
        late_heartbeats: lates,
        ..Bounds::default()
    }
}

/// The matrix: one and two asks on two and three builders, clocks equal and
/// skewed, each fault of the contract alone and together, and the faults
/// the repairs answer (a slow answer, a lost ack, a nak).
fn matrix() -> Vec<(Bounds, bool)> {
    let mut m = Vec::new();
    for (asks, builders) in [(1, 2), (2, 2), (1, 3), (2, 3)] {
        for skew in [0, 10] {
            for (crashes, lates) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                if asks * builders >= 6 && skew > 0 && crashes + lates > 1 {
                    continue;
                }
                m.push((bounds(asks, builders, skew, crashes, lates), false));
            }
        }
    }
    m.push((bounds(2, 2, 10, 1, 1), true));
    m.push((bounds(1, 3, 10, 1, 0), true));
    for faults in [
        Bounds {
            slow_answers: 1,
            ..bounds(2, 2, 5, 0, 0)
        },
        Bounds {
            lost_acks: 1,
            ..bounds(2, 2, 5, 0, 0)
        },
        Bounds {
            naks: 1,
            max_deliver: 2,
            ..bounds(2, 2, 5, 1, 0)
        },
        Bounds {
            late_by: 50,
            horizon: 90,
            ..bounds(1, 3, 5, 0, 1)
        },
    ] {
        m.push((faults, false));
    }
    m.extend(clock_settings().into_iter().map(|b| (b, false)));
    m
}

/// Whether to run every clock setting (`SLOTCHECK_EXACTNESS=full`, as the
/// nightly workflow does) or only the one of them that fits the test
/// suite's time: the others take the whole-state model through skews of
/// 25 to 35 s, minutes of CPU each over every design.
fn full() -> bool {
    std::env::var("SLOTCHECK_EXACTNESS").is_ok_and(|v| v == "full")
}

/// Whether the test command runs the `i`th (setting, design) pair of a
/// test: every fifth (five is prime to the 12 and 34 pairs a setting takes,
/// so the designs take turns from setting to setting), so that each setting
/// and each design still comes up
/// and the suite stays within CI's time; `SLOTCHECK_EXACTNESS=full` (the
/// nightly) runs every pair.
fn sampled(i: usize) -> bool {
    full() || i.is_multiple_of(5)
}

/// Settings where the stored clocks, key ages and build lengths are cut by
/// the horizon: skews wide enough that an offset reads every key stale or
/// every key fresh, ack waits short enough to hand a message out again
/// before the horizon (or long enough not to), late heartbeats that let a
/// key age, and builds that can or cannot reach their longest.
fn clock_settings() -> Vec<Bounds> {
    let all = vec![
        Bounds {
            ack_wait: 15,
            horizon: 75,
            longest_build: 75,
            ..bounds(1, 3, 35, 1, 1)
        },
        Bounds {
            ack_wait: 15,
            horizon: 45,
            longest_build: 20,
            ..bounds(2, 2, 25, 1, 1)
        },
        Bounds {
            late_by: 50,
            horizon: 75,
            longest_build: 40,
            ..bounds(1, 2, 35, 1, 1)
        },
        Bounds {
            ack_wait: 30,
            fresh_for: 15,
            horizon: 50,
            ..bounds(2, 2, 20, 1, 1)
        },
    ];
    if full() {
        all
    } else {
        vec![all[2]]
    }
}

/// The stored model `reduced` against its whole one: the same verdicts and
/// shortest lengths, and each path it found replays on whole states.
fn agrees_with_the_whole(reduced: Link, label: &str) {
    let whole = Link {
        reduced: false,
        ..reduced
    };
    let outcome = check(reduced, &[], &Limits::default());
    assert_eq!(shortest(&whole), safety(&outcome), "{label}");
    replays(&whole, &outcome, label);
}

fn models(
    design: &'static slotcheck_models::link::Design,
    bounds: Bounds,
    atomic: bool,
) -> (Link, Link) {
    let mut reduced = Link::new(design, bounds);
    reduced.options.atomic_start = atomic;
    let whole = Link {
        reduced: false,
        ..reduced
    };
    (reduced, whole)
}

#[test]
fn the_stored_state_gives_every_verdict_and_shortest_length_of_the_whole_one() {
    let mut settings = 0;
    let mut fewer = 0;
    let mut pair = 0;
    for (bounds, atomic) in matrix() {
        pair += 1; // a shift per setting: each pair comes up on some setting
        for design in all_designs() {
            pair += 1;
            if !sampled(pair) {
                continue;
            }
            let (reduced, whole) = models(design, bounds, atomic);
            let label = format!("{} on {bounds:?}, atomic-start {atomic}", design.name);
            let outcome = check(reduced, &[], &Limits::default());
            assert_eq!(shortest(&whole), safety(&outcome), "{label}");
            let whole_outcome = check(whole, &[], &Limits::default());
            assert_eq!(lengths(&whole_outcome), lengths(&outcome), "{label}");
            replays(&whole, &outcome, &label);
            fewer += usize::from(outcome.stats.unique < whole_outcome.stats.unique);
            settings += 1;
        }
    }
    assert!(settings * 5 >= 300, "{settings} settings");
    // The reduction does something: most settings store fewer states.
    assert!(fewer * 2 > settings, "{fewer} of {settings} smaller");
}

#[test]
fn every_mutant_keeps_its_verdicts_and_lengths_on_the_stored_state() {
    let mut settings = vec![bounds(2, 2, 10, 1, 1), bounds(1, 3, 5, 1, 1)];
    settings.extend(clock_settings());
    let mut pair = 0;
    for bounds in settings {
        pair += 1;
        for design in all_designs() {
            for m in mutation::mutations(design) {
                pair += 1;
                if !sampled(pair) {
                    continue;
                }
                let (mut reduced, _) = models(design, bounds, false);
                reduced.mutation = Some(m);
                agrees_with_the_whole(reduced, &format!("{} on {bounds:?}", m.name(design.name)));
            }
        }
    }
}

/// The contract's first reading of the fetch (`single-late-answer`: one
/// late answer per builder, where the default is the client's fetch with
/// open pull requests) and the older client's expiry rule
/// (`expiry-less-10ms`) keep the stored state exact too: on the
/// settings where answers are late (no margin, or a slow answer) and where
/// an ask comes back within an instant (a nak, the hand-back's nak).
#[test]
fn the_fetch_options_keep_every_verdict_and_shortest_length() {
    let settings = [
        bounds(2, 2, 0, 1, 0),
        bounds(2, 2, 10, 1, 1),
        bounds(1, 3, 5, 1, 0),
        bounds(2, 3, 0, 0, 0),
        Bounds {
            slow_answers: 1,
            ..bounds(2, 2, 5, 0, 0)
        },
        Bounds {
            slow_answers: 1,
            naks: 1,
            ..bounds(2, 2, 0, 1, 0)
        },
        Bounds {
            naks: 1,
            max_deliver: 2,
            ..bounds(2, 2, 5, 1, 0)
        },
    ];
    let mut pair = 0;
    for bounds in settings {
        pair += 1;
        for (single_late_answer, expiry_less_10ms) in [(true, false), (true, true), (false, true)] {
            for design in all_designs() {
                pair += 1;
                if !sampled(pair) {
                    continue;
                }
                let (mut reduced, _) = models(design, bounds, false);
                reduced.options.single_late_answer = single_late_answer;
                reduced.options.expiry_less_10ms = expiry_less_10ms;
                let label = format!("{} on {bounds:?}, {:?}", design.name, reduced.options);
                agrees_with_the_whole(reduced, &label);
            }
        }
    }
}

/// `redelivery-queue` (the server hands out redeliveries in the order
/// their ack waits ran out, before any message never delivered) keeps the
/// stored state exact too: on settings where several ack waits run out
/// in one tick (crashes, a short ack wait) and where a nak sends an ask to
/// the back of the queue.
#[test]
fn the_redelivery_queue_keeps_every_verdict_and_shortest_length() {
    let settings = [
        Bounds {
            ack_wait: 15,
            ..bounds(2, 2, 0, 2, 0)
        },
        Bounds {
            ack_wait: 15,
            horizon: 45,
            ..bounds(3, 2, 0, 1, 0)
        },
        Bounds {
            ack_wait: 15,
            naks: 1,
            ..bounds(2, 2, 5, 1, 0)
        },
        Bounds {
            ack_wait: 15,
            lost_acks: 1,
            ..bounds(2, 1, 0, 1, 1)
        },
    ];
    let mut pair = 0;
    let mut queued = 0;
    for bounds in settings {
        pair += 1;
        for design in all_designs() {
            pair += 1;
            if !sampled(pair) {
                continue;
            }
            let (mut reduced, _) = models(design, bounds, false);
            reduced.options.redelivery_queue = true;
            agrees_with_the_whole(
                reduced,
                &format!("{} on {bounds:?}, redelivery-queue", design.name),
            );
            queued += 1;
        }
    }
    assert!(queued > 0, "some setting sampled");
}

/// `--rewinds` (nats-server before 2.10.14 fails a redelivery and hands
/// its last new message out again, counted 1) keeps the stored state exact
/// too: on settings where a redelivery comes (a crash, a nak, a short ack
/// wait), with the server's redelivery queue and without, where the message
/// wound back to may be held, acked, or out of deliveries.
#[test]
fn the_rewinds_keep_every_verdict_and_shortest_length() {
    let settings = [
        Bounds {
            rewinds: 1,
            ..bounds(2, 2, 0, 1, 0)
        },
        Bounds {
            rewinds: 1,
            ack_wait: 15,
            ..bounds(2, 2, 5, 1, 0)
        },
        Bounds {
            rewinds: 2,
            naks: 1,
            max_deliver: 2,
            ..bounds(2, 2, 0, 1, 0)
        },
        Bounds {
            rewinds: 1,
            ack_wait: 15,
            horizon: 45,
            ..bounds(3, 2, 0, 1, 0)
        },
    ];
    for bounds in settings {
        // Each setting makes rewinds, and a copy handed out again as new.
        let (whole, mut again) = (Link::new(&DESIGNS[1], bounds), 0);
        let steps = slotcheck_models::walk::each_step_within(&whole, &mut |_| true, &mut |s, a| {
            let next = whole.next_state(s, a).unwrap();
            again += usize::from(
                matches!(a, Action::Rewind(_)) && next.messages.iter().any(|m| m.again),
            );
            next
        });
        assert!(steps.is_some() && again > 0, "no rewind on {bounds:?}");
        for queue in [false, true] {
            // Every pair: a fault this new is checked in full.
            for design in all_designs() {
                let (mut reduced, _) = models(design, bounds, false);
                reduced.options.redelivery_queue = queue;
                let label = format!("{} on {bounds:?}, {:?}", design.name, reduced.options);
                agrees_with_the_whole(reduced, &label);
            }
        }
    }
}
