//! Single steps of the link model, checked against the contract one rule at
//! a time.

use super::*;
use crate::Narrated;
use stateright::Model;

fn model(design: &str, asks: u8, skew: u16) -> Link {
    Link::new(
        design_named(design).unwrap(),
        Bounds {
            asks,
            skew,
            ..Bounds::default()
        },
    )
}

fn run(m: &Link, init: &State, actions: &[Action]) -> State {
    crate::run_enabled(m, init, actions)
}

/// The initial state in which the builders' offsets are these (in ticks).
fn with_offsets(m: &Link, offsets: &[i8]) -> State {
    m.initial_states()
        .into_iter()
        .find(|s| {
            s.builders
                .iter()
                .map(|b| b.offset)
                .eq(offsets.iter().copied())
        })
        .unwrap()
}

#[test]
fn offsets_are_every_whole_tick_within_the_skew_and_never_decrease() {
    let m = model("after-1649", 1, 10);
    let offsets: Vec<Vec<i8>> = m
        .initial_states()
        .iter()
        .map(|s| s.builders.iter().map(|b| b.offset).collect())
        .collect();
    // Two builders, offsets -2..=2 ticks, unordered pairs: 5 * 6 / 2.
    assert_eq!(offsets.len(), 15);
    assert!(offsets.iter().all(|o| o[0] <= o[1]));
    assert!(offsets.contains(&vec![-2, 2]));
}

/// b2 runs A1 and crashes at once; time passes until A1 comes back; b1
/// (whose offset is the first, offsets never decrease) takes it.
fn crash_then_redelivery(m: &Link, offsets: &[i8]) -> State {
    let init = with_offsets(m, offsets);
    let mut s = run(
        m,
        &init,
        &[Action::Fetch(1), Action::Take(1), Action::Crash(1)],
    );
    for _ in 0..ACK_WAIT {
        s = run(m, &s, &[Action::Tick]);
    }
    assert_eq!(s.messages[0].status, Status::Available);
    run(m, &s, &[Action::Fetch(0), Action::Take(0)])
}

#[test]
fn a_key_is_judged_fresh_on_the_readers_clock() {
    let m = model("after-1649", 1, 40);
    // The key is 60 s old; by a clock 35 s behind, 25 s: not fresh, it runs.
    let s = crash_then_redelivery(&m, &[-7, 0]);
    assert_eq!(s.builders[0].run.map(|r| r.ask), Some(0));
    // By a clock 40 s behind, 20 s: fresh, dropped, and the ask is lost.
    let s = crash_then_redelivery(&m, &[-8, 0]);
    assert!(s.dropped && s.builders[0].run.is_none());
    assert!(s.is_lost(0));
}

#[test]
fn designs_without_the_check_run_a_duplicate_whatever_the_key() {
    let m = model("margin-only", 1, 40);
    let s = crash_then_redelivery(&m, &[-8, 0]);
    assert_eq!(s.builders[0].run.map(|r| r.ask), Some(0));
    assert!(!s.dropped);
}

#[test]
fn only_designs_without_the_margin_have_late_answers() {
    for design in &DESIGNS {
        let m = Link::new(design, Bounds::default());
        let mut enabled = Vec::new();
        m.actions(&m.initial_states()[0], &mut enabled);
        assert_eq!(
            enabled.contains(&Action::FetchLate(0)),
            !design.fetch_margin,
            "{}",
            design.name
        );
    }
}

/// b1 runs A1 while a late answer lands A2 in its buffer; A2 comes back
/// after the ack wait and b2 runs it.
fn late_answer_redelivered(m: &Link) -> State {
    let init = m.initial_states()[0];
    let mut s = run(
        m,
        &init,
        &[
            Action::FetchLate(0),
            Action::Fetch(0),
            Action::Take(0),
            Action::Land(0),
        ],
    );
    assert_eq!(*s.builders[0].buffer, [1]);
    for _ in 0..ACK_WAIT {
        if s.builders[0].run.unwrap().heartbeat_in == 0 {
            s = run(m, &s, &[Action::Heartbeat(0)]);
        }
        s = run(m, &s, &[Action::Tick]);
    }
    run(m, &s, &[Action::Fetch(1), Action::Take(1)])
}

#[test]
fn a_stale_ack_counts_by_default_and_not_with_the_option() {
    let mut m = model("check-only", 2, 0);
    let s = late_answer_redelivered(&m);
    // b1 finishes A1 and reads A2: b2's key is fresh, so it acks the duplicate.
    let by_default = run(&m, &s, &[Action::Finish(0), Action::Take(0)]);
    assert!(by_default.dropped);
    assert_eq!(by_default.messages[1].status, Status::Acked);
    m.options.stale_ack_ignored = true;
    let ignored = run(&m, &s, &[Action::Finish(0), Action::Take(0)]);
    assert!(matches!(
        ignored.messages[1].status,
        Status::Delivered { to: 1, .. }
    ));
}

#[test]
fn time_waits_for_what_must_happen_at_once() {
    let m = model("after-1649", 1, 0);
    let init = m.initial_states()[0];
    let mut enabled = Vec::new();
    m.actions(&init, &mut enabled);
    assert!(
        !enabled.contains(&Action::Tick),
        "an available ask is fetched at once"
    );
    let s = run(
        &m,
        &init,
        &[
            Action::Fetch(0),
            Action::Take(0),
            Action::Tick,
            Action::Tick,
        ],
    );
    enabled.clear();
    m.actions(&s, &mut enabled);
    assert!(
        !enabled.contains(&Action::Tick),
        "a due heartbeat is sent first"
    );
}

#[test]
fn a_path_written_as_words_parses_back_to_the_same_actions() {
    let m = model("before-1649", 2, 0);
    let init = m.initial_states()[0];
    let actions = [
        Action::FetchLate(0),
        Action::Fetch(0),
        Action::Take(0),
        Action::Land(0),
        Action::Tick,
        Action::Crash(0),
    ];
    let words = m.words(&init, &actions);
    assert_eq!(words[0], "fetch-late b1");
    assert_eq!(m.parse(&init, &words).unwrap(), actions);
    let err = m.parse(&init, &["take b3".to_string()]).unwrap_err();
    assert!(err.message.contains("no builder b3"), "{err}");
}

#[test]
fn the_story_tells_the_time_and_each_builders_clock() {
    let m = model("after-1649", 1, 40);
    let init = with_offsets(&m, &[-8, 0]);
    let story = m.tell(&init, &[Action::Fetch(0), Action::Take(0), Action::Tick]);
    assert_eq!(story[0].actor, "t=0s b1 (its clock t=-40s)");
    assert_eq!(story[2].actor, "t=0s time");
    assert!(story[2]
        .changes
        .iter()
        .any(|c| c.after.as_deref() == Some("t=5s")));
}

#[test]
fn bounds_that_are_not_whole_ticks_are_refused_by_name() {
    let b = Bounds {
        skew: 12,
        ..Bounds::default()
    };
    assert!(b.validate().unwrap_err().contains("skew"));
    let b = Bounds {
        builders: 0,
        ..Bounds::default()
    };
    assert!(b.validate().unwrap_err().contains("builders"));
}

#[test]
fn a_heartbeat_is_late_at_most_once_so_its_lateness_stays_within_the_bound() {
    let mut m = model("after-1649", 1, 0);
    m.bounds.late_heartbeats = 2;
    let init = with_offsets(&m, &[0, 0]);
    // b1 takes A1 and runs until its first heartbeat is due.
    let mut s = run(&m, &init, &[Action::Fetch(0), Action::Take(0)]);
    while s.builders[0].run.unwrap().heartbeat_in > 0 {
        s = m.next_state(&s, Action::Tick).unwrap();
    }
    let delay = Action::Delay(0);
    let enabled = |s: &State| {
        let mut actions = Vec::new();
        m.actions(s, &mut actions);
        actions.contains(&delay)
    };
    assert!(enabled(&s), "a due heartbeat may be made late");
    s = m.next_state(&s, delay).unwrap();
    // Its lateness runs out: it is due again, and may not be delayed again.
    while s.builders[0].run.unwrap().grace > 0 {
        s = m.next_state(&s, Action::Tick).unwrap();
    }
    assert_eq!(s.lates_left, 1, "a late heartbeat is left in the budget");
    assert!(!enabled(&s), "the same heartbeat is not made late twice");
}
