//! Single handler steps, checked against the contract's rules one at a time.

use super::*;
use crate::Narrated;
use stateright::Model;

fn model(design: &str, requests: u8, k: u8) -> Stovepipe {
    Stovepipe::new(
        design_named(design).unwrap(),
        Bounds {
            requests,
            max_concurrent: k,
            crashes: 1,
            stalls: 1,
            max_deliveries: 2,
        },
    )
}

/// Runs actions in order from the initial state, each of which must be enabled.
fn run(m: &Stovepipe, actions: &[Action]) -> State {
    crate::run_enabled(m, &m.initial_state(), actions)
}

fn deliver(r: Req, kind: MessageKind) -> Action {
    Action::Deliver { request: r, kind }
}

/// The index of the (only) worker for `r` and `kind`.
fn worker(s: &State, r: Req, kind: MessageKind) -> usize {
    s.workers
        .iter()
        .position(|w| w.request == r && w.message == kind)
        .unwrap()
}

fn step(m: &Stovepipe, s: &State, r: Req, kind: MessageKind) -> State {
    m.next_state(s, Action::Step(worker(s, r, kind))).unwrap()
}

#[test]
fn a_claim_whose_queue_row_changed_since_the_read_loses_and_restarts() {
    let m = model("claim-first", 2, 2);
    // R1 and R2 both read the queue at v1; R2 is the latest head.
    let mut s = run(&m, &[Action::Arrive, Action::Arrive]);
    s = m.next_state(&s, deliver(1, MessageKind::Process)).unwrap();
    s = step(&m, &s, 1, MessageKind::Process); // read
    assert_eq!(s.workers[0].pc, Pc::Claim);
    // Someone else writes the queue row: the worker's CAS must lose.
    s.queue.version += 1;
    let after = step(&m, &s, 1, MessageKind::Process);
    assert_eq!(after.queue, s.queue, "a lost CAS writes nothing");
    assert_eq!(after.workers[0].pc, Pc::Read, "a lost claim restarts");
}

#[test]
fn a_counter_release_at_zero_is_clamped_and_still_written() {
    let design = design_named("claim-first").unwrap();
    assert_eq!(
        design.slots().release(Slots::Count(0), 0),
        Some(Slots::Count(0))
    );
    assert_eq!(
        design.slots().release(Slots::Count(2), 0),
        Some(Slots::Count(1))
    );
}

#[test]
fn an_owner_keyed_release_of_an_absent_request_writes_nothing() {
    let m = model("owner-keyed", 1, 1);
    let design = m.design;
    assert_eq!(design.slots().release(Slots::Owners(0b10), 0), None);
    assert_eq!(
        design.slots().release(Slots::Owners(0b11), 0),
        Some(Slots::Owners(0b10))
    );
    // In a handler: a signal for R1 that is not in the set decides at its
    // read that there is nothing to release and goes on to the outcome write:
    // no step writes nothing.
    let mut s = run(&m, &[Action::Arrive]);
    s.requests[0].state = RequestState::Processing;
    s.builds[0] = Build::Running;
    s = m.next_state(&s, Action::FinishBuild(0)).unwrap();
    s = m.next_state(&s, deliver(0, MessageKind::Signal)).unwrap();
    let before = s.queue;
    s = step(&m, &s, 0, MessageKind::Signal); // read: R1 not in the set
    assert_eq!(s.queue, before);
    assert_eq!(s.workers[0].pc, Pc::WriteOutcome);
}

#[test]
fn a_hold_parks_the_message_without_an_attempt_and_a_write_wakes_it() {
    let m = model("claim-first", 2, 1);
    let mut s = run(&m, &[Action::Arrive]);
    s.queue.slots = Slots::Count(1); // the gate is closed
    s = m.next_state(&s, deliver(0, MessageKind::Process)).unwrap();
    s = step(&m, &s, 0, MessageKind::Process); // read: gate closed
    assert_eq!(s.workers[0].pc, Pc::Hold);
    s = step(&m, &s, 0, MessageKind::Process);
    let held = s.message(0, MessageKind::Process).unwrap();
    assert_eq!((held.status, held.attempts), (Delivery::Parked, 0));
    s = m.next_state(&s, Action::Arrive).unwrap(); // a durable write
    assert_eq!(
        s.message(0, MessageKind::Process).unwrap().status,
        Delivery::Visible
    );
}

#[test]
fn a_hold_after_a_write_since_the_read_leaves_the_message_visible() {
    let m = model("claim-first", 2, 1);
    let mut s = run(&m, &[Action::Arrive]);
    s.queue.slots = Slots::Count(1);
    s = m.next_state(&s, deliver(0, MessageKind::Process)).unwrap();
    s = step(&m, &s, 0, MessageKind::Process); // read: gate closed
    s = m.next_state(&s, Action::Arrive).unwrap(); // the head moves on
    s = step(&m, &s, 0, MessageKind::Process); // hold
    assert_eq!(
        s.message(0, MessageKind::Process).unwrap().status,
        Delivery::Visible
    );
}

#[test]
fn a_crash_at_max_deliveries_replaces_the_message_by_a_dead_one() {
    let mut m = model("claim-first", 1, 1);
    m.bounds.max_deliveries = 1;
    let s = run(
        &m,
        &[
            Action::Arrive,
            deliver(0, MessageKind::Process),
            Action::Crash(0),
        ],
    );
    assert!(s.message(0, MessageKind::Process).is_none());
    let dead = s.message(0, MessageKind::DeadProcess).unwrap();
    assert_eq!(dead.status, Delivery::Visible);
    assert_eq!(s.crashes_left, 0);
}

#[test]
fn a_stalled_workers_ack_changes_nothing() {
    let m = model("claim-first", 1, 1);
    let mut s = run(
        &m,
        &[
            Action::Arrive,
            deliver(0, MessageKind::Process),
            Action::Stall(0),
            deliver(0, MessageKind::Process),
        ],
    );
    assert_eq!(s.workers.len(), 2);
    // Run the stale worker (the one that no longer holds its message) to its ack.
    let stale = |s: &State| s.workers.iter().position(|w| !w.holds_message).unwrap();
    while s.workers[stale(&s)].pc != Pc::Ack {
        s = m.next_state(&s, Action::Step(stale(&s))).unwrap();
    }
    let before = s.message(0, MessageKind::Process).copied();
    s = m.next_state(&s, Action::Step(stale(&s))).unwrap();
    assert_eq!(s.message(0, MessageKind::Process).copied(), before);
}

#[test]
fn duplicate_admission_submits_once_and_leaves_the_slots_alone() {
    let m = model("owner-keyed", 1, 1);
    let mut s = run(&m, &[Action::Arrive]);
    s.requests[0].state = RequestState::Processing;
    s.builds[0] = Build::Running;
    s.queue.slots = Slots::Owners(1);
    s = m.next_state(&s, deliver(0, MessageKind::Process)).unwrap();
    s = step(&m, &s, 0, MessageKind::Process);
    assert_eq!(s.workers[0].pc, Pc::SubmitBuild);
    let queue = s.queue;
    s = step(&m, &s, 0, MessageKind::Process);
    assert_eq!(s.queue, queue);
    assert_eq!(s.builds[0], Build::Running);
}

#[test]
fn workers_are_kept_sorted_so_their_order_is_not_state() {
    let m = model("claim-first", 2, 2);
    let a = run(
        &m,
        &[
            Action::Arrive,
            Action::Arrive,
            deliver(0, MessageKind::Process),
            deliver(1, MessageKind::Process),
        ],
    );
    let b = run(
        &m,
        &[
            Action::Arrive,
            Action::Arrive,
            deliver(1, MessageKind::Process),
            deliver(0, MessageKind::Process),
        ],
    );
    assert_eq!(a, b);
}

#[test]
fn the_story_names_each_worker_by_its_delivery() {
    let m = model("claim-first", 1, 1);
    let actions = [
        Action::Arrive,
        deliver(0, MessageKind::Process),
        Action::Step(0),
        Action::Step(0),
        Action::Crash(0),
        deliver(0, MessageKind::Process),
    ];
    let story = m.tell(&m.initial_state(), &actions);
    assert_eq!(story[2].actor, "worker 1 (process R1, delivery 1)");
    assert_eq!(story[3].action, "CAS queue in_flight_count 0 -> 1");
    assert_eq!(story[4].actor, "fault on worker 1 (process R1, delivery 1)");
    assert_eq!(story[5].action, "deliver process(R1) (attempt 2)");
    let changed: Vec<&str> = story[3].changes.iter().map(|c| c.row.as_str()).collect();
    assert_eq!(changed, ["queue"], "only the rows that changed are shown");
}

#[test]
fn a_path_written_as_words_parses_back_to_the_same_actions() {
    let m = model("claim-first", 2, 1);
    let actions = [
        Action::Arrive,
        deliver(0, MessageKind::Process),
        Action::Step(0),
        Action::Arrive,
        deliver(1, MessageKind::Process),
        Action::Step(1),
        Action::Crash(0),
    ];
    let init = m.initial_state();
    let words = m.words(&init, &actions);
    assert_eq!(words[0], "arrive R1");
    assert_eq!(words[4], "deliver process R2");
    assert_eq!(words[6], "crash worker 1");
    assert_eq!(m.parse(&init, &words).unwrap(), actions);
}

#[test]
fn a_scripted_step_that_is_not_enabled_is_refused_with_its_index() {
    let m = model("claim-first", 1, 1);
    let script: Vec<String> = ["arrive R1", "step worker 1"].map(String::from).into();
    let err = m.parse(&m.initial_state(), &script).unwrap_err();
    assert_eq!(err.index, 1);
    assert!(err.message.contains("worker 1 is not running"), "{err}");
    let script: Vec<String> = ["arrive R2"].map(String::from).into();
    let err = m.parse(&m.initial_state(), &script).unwrap_err();
    assert!(err.message.contains("ID order"), "{err}");
}

#[test]
fn states_differing_only_in_versions_no_read_can_tell_apart_are_one_state() {
    use std::hash::{BuildHasher, RandomState};
    let m = model("claim-first", 1, 1);
    let a = run(&m, &[Action::Arrive]);
    let mut b = a.clone();
    b.queue.version += 2; // e.g. a claim and a release happened
    assert_eq!(a, b);
    let hasher = RandomState::new();
    assert_eq!(hasher.hash_one(&a), hasher.hash_one(&b));

    // A worker's read tells them apart: current in one, stale in the other.
    let with_reader = |s: &State| {
        let s = m.next_state(s, deliver(0, MessageKind::Process)).unwrap();
        m.next_state(&s, Action::Step(0)).unwrap()
    };
    let read_a = with_reader(&a);
    let mut stale = read_a.clone();
    stale.queue.version += 1;
    assert_ne!(read_a, stale);
}
