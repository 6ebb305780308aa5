//! The faults beyond the contract (a late answer past the margin, a lost
//! ack, a nak) and the repairs of after-1649, one rule at a time.

use super::*;
use stateright::Model;

fn model(design: &str, bounds: Bounds) -> Link {
    Link::new(design_named(design).unwrap(), bounds)
}

fn enabled(m: &Link, s: &State) -> Vec<Action> {
    let mut actions = Vec::new();
    m.actions(s, &mut actions);
    actions
}

fn init(m: &Link) -> State {
    m.initial_states().swap_remove(0)
}

#[test]
fn with_no_budget_no_new_fault_is_ever_enabled() {
    for design in all_designs() {
        let m = model(design.name, Bounds::default());
        let s = init(&m);
        assert!(enabled(&m, &s).iter().all(|a| !matches!(
            a,
            Action::SlowAnswer(_) | Action::FinishAckLost(_) | Action::Nak(_)
        )));
    }
}

#[test]
fn a_slow_answer_is_the_margins_fault_and_spends_its_budget() {
    let b = Bounds {
        slow_answers: 1,
        ..Bounds::default()
    };
    let with = model("after-1649", b);
    let s = init(&with);
    assert!(enabled(&with, &s).contains(&Action::SlowAnswer(0)));
    let next = crate::run_enabled(&with, &s, &[Action::SlowAnswer(0)]);
    assert_eq!(next.slow_answers_left, 0);
    assert_eq!(next.builders[0].on_the_way, Some(0));
    assert!(!enabled(&with, &next).contains(&Action::SlowAnswer(1)));
    // Without the margin a late answer needs no fault.
    let without = model("check-only", b);
    assert!(!enabled(&without, &init(&without)).contains(&Action::SlowAnswer(0)));
}

#[test]
fn a_lost_ack_leaves_the_message_to_its_ack_wait_unless_the_ack_is_synchronous() {
    let b = Bounds {
        asks: 1,
        lost_acks: 1,
        ..Bounds::default()
    };
    let m = model("after-1649", b);
    let s = crate::run_enabled(&m, &init(&m), &[Action::Fetch(0), Action::Read(0)]);
    let s = crate::run_enabled(&m, &s, &[Action::Start(0), Action::Tick]);
    let lost = crate::run_enabled(&m, &s, &[Action::FinishAckLost(0)]);
    assert!(lost.results[0]);
    assert!(matches!(
        lost.messages[0].status,
        Status::Delivered { to: 0, .. }
    ));
    assert_eq!(lost.keys[0], None, "the finish still deletes the key");
    let sync = model("after-1649-sync-ack", b);
    let s = crate::run_enabled(&sync, &init(&sync), &[Action::Fetch(0), Action::Read(0)]);
    let s = crate::run_enabled(&sync, &s, &[Action::Start(0), Action::Tick]);
    assert!(!enabled(&sync, &s).contains(&Action::FinishAckLost(0)));
}

#[test]
fn a_nak_hands_the_ask_out_again_at_once_or_never_at_its_last_delivery() {
    let b = Bounds {
        asks: 1,
        naks: 2,
        max_deliver: 2,
        ..Bounds::default()
    };
    let m = model("after-1649", b);
    let s = crate::run_enabled(&m, &init(&m), &[Action::Fetch(0), Action::Nak(0)]);
    assert_eq!(s.messages[0].status, Status::Available);
    let s = crate::run_enabled(&m, &s, &[Action::Fetch(0), Action::Nak(0)]);
    assert_eq!(s.messages[0].status, Status::Exhausted);
    assert!(s.is_lost(0));
}

#[test]
fn the_done_key_drops_a_copy_handed_out_after_the_finish() {
    let b = Bounds {
        asks: 1,
        lost_acks: 1,
        ..Bounds::default()
    };
    let m = model("after-1649-done-key", b);
    let s = crate::run_enabled(&m, &init(&m), &[Action::Fetch(0), Action::Read(0)]);
    let s = crate::run_enabled(&m, &s, &[Action::Start(0), Action::Tick]);
    let s = crate::run_enabled(&m, &s, &[Action::FinishAckLost(0)]);
    assert!(s.keys[0].is_some_and(|k| k.done));
    let mut s = s;
    while s.messages[0].status != Status::Available {
        s = crate::run_enabled(&m, &s, &[Action::Tick]);
    }
    let s = crate::run_enabled(&m, &s, &[Action::Fetch(1), Action::Read(1)]);
    assert!(s.builders[1].decided.is_some_and(|d| d.duplicate));
    let s = crate::run_enabled(&m, &s, &[Action::Drop(1)]);
    assert_eq!(s.messages[0].status, Status::Acked);
}

#[test]
fn a_put_between_the_read_and_a_revision_checked_start_makes_it_a_drop() {
    let b = Bounds {
        asks: 1,
        ..Bounds::default()
    };
    let m = model("after-1649-revision-start", b);
    // Both read no key (b1's copy from a fetch, b2's from its own: two
    // deliveries of one ask, as after a redelivery), then b1 puts first.
    let mut s = init(&m);
    s.builders[0].buffer.push(0);
    s.builders[1].buffer.push(0);
    let s = crate::run_enabled(
        &m,
        &s,
        &[Action::Read(0), Action::Read(1), Action::Start(0)],
    );
    assert!(s.builders[1].decided.is_some_and(|d| d.conflict));
    // Its start is tried, and the put fails: it acks and does not run.
    let s = crate::run_enabled(&m, &s, &[Action::Start(1)]);
    assert_eq!(s.runners(0).count(), 1);
    assert!(s.dropped);
}

#[test]
fn every_reachable_state_of_the_repairs_under_every_fault_unpacks_to_itself() {
    for design in &REPAIRS {
        let mut m = model(
            design.name,
            Bounds {
                skew: 5,
                late_heartbeats: 1,
                slow_answers: 1,
                lost_acks: 1,
                naks: 1,
                ..Bounds::default()
            },
        );
        m.reduced = false;
        crate::assert_every_reachable_state_unpacks(&m, 20_000, design.name);
    }
}
