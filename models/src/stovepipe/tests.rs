//! Single handler steps, checked against the contract's rules one at a time,
//! and the state's representation: what it keeps, forgets and packs.

use super::*;
use crate::{Narrated, Packed};
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
    s.workers()
        .position(|w| w.request == r && w.message == kind)
        .unwrap()
}

fn step(m: &Stovepipe, s: &State, r: Req, kind: MessageKind) -> State {
    m.next_state(s, Action::Step(worker(s, r, kind))).unwrap()
}

/// Another worker's write to the queue row, as the worker at hand sees it.
fn queue_written_by_another(s: &mut State) {
    s.for_each_worker(|w| w.fresh.queue = false);
}

#[test]
fn a_claim_whose_queue_row_changed_since_the_read_loses_and_restarts() {
    let m = model("claim-first", 2, 2);
    // R2 reads the queue; R2 is the latest head.
    let mut s = run(&m, &[Action::Arrive, Action::Arrive]);
    s = m.next_state(&s, deliver(1, MessageKind::Process)).unwrap();
    s = step(&m, &s, 1, MessageKind::Process); // read
    assert_eq!(s.worker(0).pc, Pc::Claim);
    queue_written_by_another(&mut s);
    let after = step(&m, &s, 1, MessageKind::Process);
    assert_eq!(after.count(), s.count(), "a lost CAS writes nothing");
    assert_eq!(after.worker(0).pc, Pc::Read, "a lost claim restarts");
}

#[test]
fn a_counter_release_at_zero_is_clamped_and_still_written() {
    let slots = design_named("claim-first").unwrap().slots;
    assert_eq!(slots.released(Slots::Count(0), 0), Some(Slots::Count(0)));
    assert_eq!(slots.released(Slots::Count(2), 0), Some(Slots::Count(1)));
}

#[test]
fn an_owner_keyed_release_of_an_absent_request_is_decided_at_the_read() {
    let m = model("owner-keyed", 1, 1);
    let slots = m.design.slots;
    assert_eq!(slots.released(Slots::Owners(0b10), 0), None);
    assert_eq!(
        slots.released(Slots::Owners(0b11), 0),
        Some(Slots::Owners(0b10))
    );
    // A signal for R1, which is not in the set, decides at its read that
    // there is nothing to release and goes on to the outcome write: no step
    // writes nothing.
    let mut s = run(&m, &[Action::Arrive]);
    s.set_request(0, RequestState::Processing);
    s.set_build(0, Build::Running);
    s = m.next_state(&s, Action::FinishBuild(0)).unwrap();
    s = m.next_state(&s, deliver(0, MessageKind::Signal)).unwrap();
    s = step(&m, &s, 0, MessageKind::Signal); // read: R1 not in the set
    assert_eq!(m.slots(&s), Slots::Owners(0));
    assert_eq!(s.worker(0).pc, Pc::WriteOutcome);
}

#[test]
fn a_hold_parks_the_message_without_an_attempt_and_a_write_wakes_it() {
    let m = model("claim-first", 2, 1);
    let mut s = run(&m, &[Action::Arrive]);
    s.set_count(1); // the gate is closed
    s = m.next_state(&s, deliver(0, MessageKind::Process)).unwrap();
    s = step(&m, &s, 0, MessageKind::Process); // read: gate closed
    assert_eq!(s.worker(0).pc, Pc::Hold);
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
fn a_delayed_hold_may_come_back_before_any_write_and_then_holds_again() {
    let mut m = model("claim-first", 2, 1);
    let held = |m: &Stovepipe| {
        let mut s = run(m, &[Action::Arrive]);
        s.set_count(1); // the gate is closed
        s = m.next_state(&s, deliver(0, MessageKind::Process)).unwrap();
        s = step(m, &s, 0, MessageKind::Process); // read: gate closed
        step(m, &s, 0, MessageKind::Process) // hold
    };
    let redelivery = deliver(0, MessageKind::Process);
    let enabled = |m: &Stovepipe, s: &State| {
        let mut actions = Vec::new();
        m.actions(s, &mut actions);
        actions.contains(&redelivery)
    };
    // Parked (the default): nothing brings it back but a write.
    let parked = held(&m);
    assert!(!enabled(&m, &parked));
    // Delayed: it may come back at once, still at attempt 0, and its new
    // worker, reading the same rows, holds again: no progress, so a state
    // with only held messages is still a wedge.
    m.options.delayed_hold = true;
    let mut s = held(&m);
    assert_eq!(
        s.message(0, MessageKind::Process).unwrap().status,
        Delivery::Parked
    );
    assert!(enabled(&m, &s));
    s = m.next_state(&s, redelivery).unwrap();
    s = step(&m, &s, 0, MessageKind::Process);
    assert_eq!(s.worker(0).pc, Pc::Hold);
    s = step(&m, &s, 0, MessageKind::Process);
    assert_eq!(s, held(&m));
}

#[test]
fn an_aborted_write_changes_nothing_and_the_worker_reads_again() {
    let mut m = model("owner-keyed", 1, 1);
    let mut s = run(&m, &[Action::Arrive]);
    s = m.next_state(&s, deliver(0, MessageKind::Process)).unwrap();
    s = step(&m, &s, 0, MessageKind::Process); // read: the gate is open
    assert_eq!(s.worker(0).pc, Pc::Claim);
    let abort = Action::Abort(worker(&s, 0, MessageKind::Process));
    let enabled = |m: &Stovepipe, s: &State| {
        let mut actions = Vec::new();
        m.actions(s, &mut actions);
        actions.contains(&abort)
    };
    // Only with the option: the contract's default database never refuses.
    assert!(!enabled(&m, &s));
    m.options.aborts = true;
    assert!(enabled(&m, &s));
    let after = m.next_state(&s, abort).unwrap();
    assert_eq!(after.worker(0).pc, Pc::Read);
    assert_eq!(
        (m.slots(&after), after.requests().collect::<Vec<_>>()),
        (m.slots(&s), s.requests().collect::<Vec<_>>())
    );
    // Its read sees the same rows, and it claims again.
    let again = step(&m, &after, 0, MessageKind::Process);
    assert_eq!(again, s);
}

#[test]
fn a_hold_after_a_write_since_the_read_leaves_the_message_visible() {
    let m = model("claim-first", 2, 1);
    let mut s = run(&m, &[Action::Arrive]);
    s.set_count(1);
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
    assert_eq!(s.crashes_left(), 0);
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
    assert_eq!(s.workers_len(), 2);
    // Run the stale worker (the one that no longer holds its message) to its ack.
    let stale = |s: &State| s.workers().position(|w| !w.holds_message).unwrap();
    while s.worker(stale(&s)).pc != Pc::Ack {
        s = m.next_state(&s, Action::Step(stale(&s))).unwrap();
    }
    let before = s.message(0, MessageKind::Process);
    s = m.next_state(&s, Action::Step(stale(&s))).unwrap();
    assert_eq!(s.message(0, MessageKind::Process), before);
}

#[test]
fn duplicate_admission_submits_once_and_leaves_the_slots_alone() {
    let m = model("owner-keyed", 1, 1);
    let mut s = run(&m, &[Action::Arrive]);
    s.set_request(0, RequestState::Processing);
    s.set_build(0, Build::Running);
    s.set_owns_slot(0, true);
    s = m.next_state(&s, deliver(0, MessageKind::Process)).unwrap();
    s = step(&m, &s, 0, MessageKind::Process);
    assert_eq!(s.worker(0).pc, Pc::SubmitBuild);
    let slots = m.slots(&s);
    s = step(&m, &s, 0, MessageKind::Process);
    assert_eq!(m.slots(&s), slots);
    assert_eq!(s.build(0), Build::Running);
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
fn the_story_names_each_worker_by_its_delivery_and_counts_versions() {
    let m = model("claim-first", 1, 1);
    let actions = [
        Action::Arrive,
        deliver(0, MessageKind::Process),
        Action::Step(0),
        Action::Step(0),
        Action::Crash(0),
        deliver(0, MessageKind::Process),
        Action::Step(0),
    ];
    let story = m.tell(&m.initial_state(), &actions);
    assert_eq!(
        story[1].action,
        "deliver process(R1) to worker 1 (attempt 1)"
    );
    assert_eq!(story[2].actor, "worker 1 (process R1, delivery 1)");
    assert_eq!(story[3].action, "CAS queue in_flight_count 0 -> 1");
    assert_eq!(story[4].actor, "fault on worker 1 (process R1, delivery 1)");
    assert_eq!(
        story[5].action,
        "deliver process(R1) to worker 2 (attempt 2)"
    );
    // The checked state keeps no versions; the story counts them.
    assert_eq!(
        story[6].action,
        "read R1 accepted v1, queue in_flight_count 1 v2, latest head R1"
    );
    let changed: Vec<&str> = story[3].changes.iter().map(|c| c.row.as_str()).collect();
    assert_eq!(changed, ["queue"], "only the rows that changed are shown");
    assert_eq!(
        story[3].changes[0].after.as_deref(),
        Some("in_flight_count 1 (v2)")
    );
}

#[test]
fn a_lost_cas_tells_the_versions_it_read_and_found() {
    // Two deliveries of process(R2) (the first stalled) both read the queue
    // at v1; the first claims, so the second's claim loses.
    let m = model("claim-first", 2, 2);
    let script: Vec<String> = [
        "arrive R1",
        "arrive R2",
        "deliver process R2",
        "stall worker 1",
        "deliver process R2",
        "step worker 1",
        "step worker 2",
        "step worker 1",
        "step worker 2",
    ]
    .map(String::from)
    .into();
    let init = m.initial_state();
    let actions = m.parse(&init, &script).unwrap();
    let story = m.tell(&init, &actions);
    assert_eq!(story[7].action, "CAS queue in_flight_count 0 -> 1");
    assert_eq!(
        story[8].action,
        "CAS queue in_flight_count 0 -> 1 lost (queue is at v2, read v1)"
    );
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
fn a_split_read_takes_three_steps_each_saying_what_it_read() {
    let mut m = model("claim-first", 1, 1);
    m.options.split_read = true;
    let actions = [
        Action::Arrive,
        deliver(0, MessageKind::Process),
        Action::Step(0),
        Action::Step(0),
        Action::Step(0),
    ];
    let s = run(&m, &actions);
    assert_eq!(s.worker(0).pc, Pc::Claim);
    let story = m.tell(&m.initial_state(), &actions);
    assert_eq!(story[2].action, "read R1 accepted v1");
    assert_eq!(story[3].action, "read queue in_flight_count 0 v1");
    assert_eq!(story[4].action, "read latest head R1");
}

#[test]
fn a_lone_readers_first_part_is_offered_alone_with_its_faults() {
    let mut m = model("claim-first", 2, 1);
    m.options.split_read = true;
    let offered = |s: &State| {
        let mut actions = Vec::new();
        m.actions(s, &mut actions);
        actions
    };
    let every = |s: &State| {
        let mut actions = Vec::new();
        m.every_action(s, &mut actions);
        actions
    };
    // R1's worker is R1's only one and holds R1's only message: no one
    // else can write R1's row before it reads it.
    let s = run(
        &m,
        &[
            Action::Arrive,
            Action::Arrive,
            deliver(0, MessageKind::Process),
        ],
    );
    assert_eq!(
        offered(&s),
        [Action::Step(0), Action::Crash(0), Action::Stall(0)]
    );
    assert!(
        every(&s).contains(&deliver(1, MessageKind::Process)),
        "the rest stays enabled, for fairness"
    );
    // After its stall another worker may take R1's message and write R1's
    // row first: every step is offered.
    let s = m.next_state(&s, Action::Stall(0)).unwrap();
    assert_eq!(offered(&s), every(&s));
    let s = m.next_state(&s, deliver(0, MessageKind::Process)).unwrap();
    assert_eq!(offered(&s), every(&s));
    // Without split reads, or under `aborts`, nothing is reduced.
    let s = run(
        &m,
        &[
            Action::Arrive,
            Action::Arrive,
            deliver(0, MessageKind::Process),
        ],
    );
    for reading in [
        Options::default(),
        Options {
            aborts: true,
            split_read: true,
            ..Options::default()
        },
    ] {
        let other = Stovepipe {
            options: reading,
            ..m
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        other.actions(&s, &mut a);
        other.every_action(&s, &mut b);
        assert_eq!(a, b, "{reading:?}");
    }
}

#[test]
fn what_no_later_step_can_use_is_forgotten_so_such_states_are_one() {
    // A worker about to supersede R1 only asks whether R1's row is as it
    // read it: whether the queue row changed since is forgotten.
    let m = model("claim-first", 2, 1);
    let s = run(
        &m,
        &[
            Action::Arrive,
            deliver(0, MessageKind::Process),
            Action::Arrive,
            Action::Step(0), // read: R1 is no longer the latest head
        ],
    );
    assert_eq!(s.worker(0).pc, Pc::Supersede);
    let mut stale = s;
    stale.for_each_worker(|w| w.fresh.queue = false);
    stale.forget(|w| m.remembered(w));
    assert_eq!(s, stale);
    // Kept, the two are two states (the exactness test compares both ways).
    let mut keeping = m;
    keeping.forget_dead_reads = false;
    let kept = run(
        &keeping,
        &[
            Action::Arrive,
            deliver(0, MessageKind::Process),
            Action::Arrive,
            Action::Step(0),
        ],
    );
    let mut changed = kept;
    changed.for_each_worker(|w| w.fresh.queue = false);
    assert_ne!(kept, changed);
}

#[test]
#[should_panic(expected = "liveness says it has forgotten")]
fn a_step_that_uses_what_its_liveness_said_was_forgotten_is_caught() {
    // claim-first, with a liveness table that says the claim forgot its read.
    handlers::CLAIM_FORGETS_QUEUE.set(true);
    let m = model("claim-first", 2, 1);
    run(
        &m,
        &[
            Action::Arrive,
            deliver(0, MessageKind::Process),
            Action::Step(0), // read
            Action::Step(0), // claim: uses the queue row it forgot
        ],
    );
}

#[test]
fn three_requests_pack_into_32_bytes() {
    let bounds = |requests, crashes, stalls, max_concurrent| Bounds {
        requests,
        max_concurrent,
        crashes,
        stalls,
        max_deliveries: 2,
    };
    for b in [bounds(3, 1, 1, 1), bounds(3, 2, 1, 2), bounds(3, 1, 2, 1)] {
        let m = Stovepipe::new(DESIGNS[2], b);
        assert_eq!(m.packed_words() * 8, 32, "{b:?}");
    }
}

#[test]
fn every_reachable_state_unpacks_to_itself() {
    for design in DESIGNS {
        let m = Stovepipe {
            // The stored form of a renamed state is another state
            // (`rename.rs` tests it).
            rename_requests: false,
            ..Stovepipe::new(
                design,
                Bounds {
                    requests: 3,
                    max_concurrent: 1,
                    crashes: 1,
                    stalls: 1,
                    max_deliveries: 2,
                },
            )
        };
        crate::assert_every_reachable_state_unpacks(&m, 20_000, design.name);
    }
}

#[test]
fn every_step_code_reads_back_as_its_step() {
    for (i, &pc) in PLAIN_PCS.iter().enumerate() {
        assert_eq!(pc.code(), i as u32, "{pc:?}");
    }
    for code in 0..64 {
        let plain = PLAIN_PCS.len() as u32;
        if code < plain + 5 + 5 * 4 {
            assert_eq!(Pc::from_code(code).code(), code);
        }
    }
}
