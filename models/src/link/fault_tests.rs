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
        let mut s = init(&m);
        // A redelivery first in line, where a rewind would be offered.
        s.messages[0] = Message {
            status: Status::Available,
            deliveries: 1,
            ..Message::default()
        };
        assert_eq!(s.first_redelivery(), Some(0));
        assert!(enabled(&m, &s).iter().all(|a| !matches!(
            a,
            Action::SlowAnswer(_) | Action::FinishAckLost(_) | Action::Nak(_) | Action::Rewind(_)
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

/// What nats-server 2.9.10 did in server_facts.rs's failing runs: A1
/// delivered (count 1), naked, its redelivery failed on an expired pull
/// request; A1 went out again counted 1, then, after its ack wait, counted
/// 3 (the failed delivery was counted).
#[test]
fn a_failed_redelivery_hands_the_last_new_message_out_again_counted_one() {
    let b = Bounds {
        asks: 1,
        naks: 1,
        rewinds: 1,
        ..Bounds::default()
    };
    let m = model("after-1649", b);
    let s = crate::run_enabled(&m, &init(&m), &[Action::Fetch(0), Action::Nak(0)]);
    assert!(enabled(&m, &s).contains(&Action::Rewind(0)));
    let s = crate::run_enabled(&m, &s, &[Action::Rewind(0)]);
    assert_eq!(s.rewinds_left, 0);
    assert_eq!(
        s.messages[0].deliveries, 2,
        "the failed delivery is counted"
    );
    assert!(s.messages[0].again);
    assert!(s.builders[0].buffer.is_empty(), "the fetch gives up empty");
    let mut log = Log::recording();
    let s = m.apply(&s, Action::Fetch(0), &mut log);
    let records = log.records();
    assert!(records.contains(&log::Record::Fetch {
        ask: 0,
        delivery: 1
    }));
    assert!(records.contains(&log::Record::AsNew { ask: 0, counted: 2 }));
    assert!(!s.messages[0].again);
    // Left unacked, it comes back after its ack wait counted 3.
    let mut s = crate::run_enabled(&m, &s, &[Action::Crash(0)]);
    while s.messages[0].status != Status::Available {
        s = crate::run_enabled(&m, &s, &[Action::Tick]);
    }
    let mut log = Log::recording();
    m.apply(&s, Action::Fetch(0), &mut log);
    assert!(log.records().contains(&log::Record::Fetch {
        ask: 0,
        delivery: 3
    }));
}

/// A rewind needs a redelivery first in line and winds the cursor back
/// past an acked message to nothing; a message never delivered is no
/// redelivery, and one rewind waits for the last to go out.
#[test]
fn a_rewind_fails_only_a_redelivery_and_passes_an_acked_message_by() {
    let b = Bounds {
        asks: 2,
        rewinds: 2,
        ..Bounds::default()
    };
    let m = model("before-1649", b);
    let s = init(&m);
    assert!(
        !enabled(&m, &s).contains(&Action::Rewind(0)),
        "nothing redelivered"
    );
    // A1 redelivered, A2 (the last handed out new) acked.
    let mut s = s;
    s.messages[0] = Message {
        status: Status::Available,
        deliveries: 1,
        ..Message::default()
    };
    s.messages[1] = Message {
        status: Status::Acked,
        deliveries: 1,
        ..Message::default()
    };
    let next = crate::run_enabled(&m, &s, &[Action::Rewind(1)]);
    assert!(next.messages.iter().all(|m| !m.again));
    assert!(matches!(
        next.messages[0].status,
        Status::Delivered { to: 1, .. }
    ));
    // A2 held instead: it goes out again.
    s.messages[1].status = Status::Delivered { to: 0, ack_in: 5 };
    let next = crate::run_enabled(&m, &s, &[Action::Rewind(1)]);
    assert!(next.messages[1].again);
    assert_eq!(next.first_available(), Some(1));
    // With A1 redelivered again (its ack wait ran out) before A2 went out,
    // no second rewind is offered: the cursor would go two back.
    let mut waiting = next;
    waiting.messages[0].status = Status::Available;
    assert_eq!(waiting.first_redelivery(), Some(0));
    let rewinds = |s: &State| {
        enabled(&m, s)
            .into_iter()
            .filter(|a| matches!(a, Action::Rewind(_)))
            .count()
    };
    assert_eq!(rewinds(&waiting), 0);
    // Once A2 has gone out, it is.
    waiting.messages[1].again = false;
    assert!(rewinds(&waiting) > 0);
}

/// The `again` mark and the budget left survive the packing.
#[test]
fn a_rewound_state_packs_and_unpacks_to_itself() {
    use crate::Packed;
    let mut m = model(
        "after-1649",
        Bounds {
            asks: 2,
            rewinds: 2,
            ..Bounds::default()
        },
    );
    m.reduced = false;
    let mut s = init(&m);
    s.rewinds_left = 1;
    s.messages[1] = Message {
        status: Status::Delivered { to: 1, ack_in: 3 },
        deliveries: 2,
        again: true,
        ..Message::default()
    };
    let mut words = vec![0u64; m.packed_words()];
    m.pack(&s, &mut words);
    assert_eq!(m.unpack(&words), s);
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
                rewinds: 1,
                ..Bounds::default()
            },
        );
        m.reduced = false;
        crate::assert_every_reachable_state_unpacks(&m, 20_000, design.name);
    }
}
