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

/// The actions enabled in `s`.
fn enabled(m: &Link, s: &State) -> Vec<Action> {
    let mut actions = Vec::new();
    m.actions(s, &mut actions);
    actions
}

/// The actions as `m` takes them, and the state they reach: where the model
/// splits a builder's start, a `Take` is its read and then the one step the
/// read enables for that builder (start or drop).
fn split(m: &Link, init: &State, actions: &[Action]) -> (Vec<Action>, State) {
    let mut s = *init;
    let mut steps = Vec::new();
    for &action in actions {
        let mut these = vec![action];
        if let Action::Take(b) = action {
            if m.splits_start() {
                let read = crate::run_enabled(m, &s, &[Action::Read(b)]);
                let act = enabled(m, &read)
                    .into_iter()
                    .find(|&a| a == Action::Start(b) || a == Action::Drop(b))
                    .expect("a read enables its start or drop");
                these = vec![Action::Read(b), act];
            }
        }
        s = crate::run_enabled(m, &s, &these);
        steps.extend(these);
    }
    (steps, s)
}

fn run(m: &Link, init: &State, actions: &[Action]) -> State {
    split(m, init, actions).1
}

/// The story of `actions`, a `Take` split as [`split`] does.
fn tell(m: &Link, init: &State, actions: &[Action]) -> Vec<crate::StoryStep> {
    m.tell(init, &split(m, init, actions).0)
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
        assert_eq!(
            enabled(&m, &m.initial_states()[0]).contains(&Action::FetchLate(0)),
            !design.fetch_wait.leaves_margin(),
            "{}",
            design.name
        );
    }
}

/// The abandoned pull request is served first: A1 is on the way to b1 while
/// its next fetch gets A2; b1 runs A2 while A1 lands in its buffer, and
/// heartbeats A2 until A1's ack wait runs out (no skew).
fn late_answer_until_its_deadline(m: &Link) -> State {
    let init = with_offsets(m, &[0, 0]);
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
    assert_eq!(*s.builders[0].buffer, [0]);
    for _ in 0..ACK_WAIT {
        if s.builders[0].run.unwrap().heartbeat_in == 0 {
            s = run(m, &s, &[Action::Heartbeat(0)]);
        }
        s = run(m, &s, &[Action::Tick]);
    }
    assert_eq!(s.messages[0].status, Status::Available);
    s
}

/// A1, the late answer, comes back after its ack wait and b2 runs it.
fn late_answer_redelivered(m: &Link) -> State {
    let s = late_answer_until_its_deadline(m);
    run(m, &s, &[Action::Fetch(1), Action::Take(1)])
}

#[test]
fn a_stale_ack_counts_by_default_and_not_with_the_option() {
    let mut m = model("check-only", 2, 0);
    // The path of the contract's first reading (a fetch meanwhile gets A2).
    m.options.single_late_answer = true;
    let s = late_answer_redelivered(&m);
    // b1 finishes A2 and reads A1: b2's key is fresh, so it acks the duplicate.
    let by_default = run(&m, &s, &[Action::Finish(0), Action::Take(0)]);
    assert!(by_default.dropped);
    assert_eq!(by_default.messages[0].status, Status::Acked);
    m.options.stale_ack_ignored = true;
    let ignored = run(&m, &s, &[Action::Finish(0), Action::Take(0)]);
    assert!(matches!(
        ignored.messages[0].status,
        Status::Delivered { to: 1, .. }
    ));
}

#[test]
fn time_waits_for_what_must_happen_at_once() {
    let m = model("after-1649", 1, 0);
    let init = m.initial_states()[0];
    assert!(!m.can_tick(&init), "an available ask is fetched at once");
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
    assert!(!m.can_tick(&s), "a due heartbeat is sent first");
}

#[test]
fn a_path_written_as_words_parses_back_to_the_same_actions() {
    let mut m = model("before-1649", 2, 0);
    m.options.single_late_answer = true;
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
    let story = tell(
        &m,
        &init,
        &[Action::Fetch(0), Action::Take(0), Action::Tick],
    );
    assert_eq!(story[0].actor, "t=0s b1 (its clock t=-40s)");
    assert_eq!(story[3].actor, "t=0s time");
    assert!(story[3]
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
    assert!(
        enabled(&m, &s).contains(&delay),
        "a due heartbeat may be made late"
    );
    s = m.next_state(&s, delay).unwrap();
    // Its lateness runs out: it is due again, and may not be delayed again.
    while s.builders[0].run.unwrap().grace > 0 {
        s = m.next_state(&s, Action::Tick).unwrap();
    }
    assert_eq!(s.lates_left, 1, "a late heartbeat is left in the budget");
    assert!(
        !enabled(&m, &s).contains(&delay),
        "the same heartbeat is not made late twice"
    );
}

/// The lines of a story, actor and action, one a step.
fn lines(story: &[crate::StoryStep]) -> Vec<String> {
    story
        .iter()
        .map(|s| format!("{}: {}", s.actor, s.action))
        .collect()
}

/// b1 runs A1 at t=0 and crashes at once; time passes until A1 comes back
/// at t=60s, and b2 takes it. No skew: the key's age is clamped at 25 s.
fn crash_story(m: &Link) -> Vec<crate::StoryStep> {
    let init = with_offsets(m, &[0, 0]);
    let mut actions = vec![Action::Fetch(0), Action::Take(0), Action::Crash(0)];
    actions.extend([Action::Tick; ACK_WAIT as usize]);
    actions.extend([Action::Fetch(1), Action::Take(1)]);
    run(m, &init, &actions);
    tell(m, &init, &actions)
}

#[test]
fn a_key_is_told_at_its_last_put_not_at_its_clamped_age() {
    let m = model("after-1649", 1, 0);
    let story = crash_story(&m);
    let key_rows: Vec<(usize, Option<&str>)> = story
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.changes
                .iter()
                .filter(|c| c.row == "A1 running key")
                .map(move |c| (i, c.after.as_deref()))
        })
        .collect();
    // Put once by b1's start, once by b2's: no renewal in between.
    assert_eq!(
        key_rows,
        [
            (2, Some("b1, last put t=0s, TTL ends t=120s")),
            (18, Some("b2, last put t=60s, TTL ends t=180s")),
        ]
    );
    // b1's key is stale, not gone (its TTL runs to t=120s): b2 puts over it.
    assert_eq!(
        story[18].action,
        "run A1, put its running key in the KV bucket over b1's key"
    );
    assert!(
        story[17].action.contains(
            "names b1, last put t=0s: 60 s ago by the server's clock, 60 s by its own: stale (25 s or more); decide to run it"
        ),
        "{}",
        story[17].action
    );
}

#[test]
fn a_key_past_the_buckets_ttl_is_told_gone_though_the_state_keeps_it_stale() {
    // Two asks, one delivery each: A1's message is spent at t=60s while b2
    // builds A2 on, so time runs past A1's key's TTL with nobody putting it.
    let mut m = model("after-1649", 2, 0);
    m.bounds.horizon = 150;
    m.bounds.longest_build = 150;
    m.bounds.max_deliver = 1;
    let init = with_offsets(&m, &[0, 0]);
    let mut actions = vec![
        Action::Fetch(0),
        Action::Take(0),
        Action::Crash(0),
        Action::Fetch(1),
        Action::Take(1),
    ];
    let mut s = run(&m, &init, &actions);
    while s.now < KEY_LIFETIME {
        let step = if s.builders[1].run.unwrap().heartbeat_in == 0 {
            Action::Heartbeat(1)
        } else {
            Action::Tick
        };
        s = run(&m, &s, &[step]);
        actions.push(step);
    }
    assert!(s.keys[0].is_some(), "the state keeps the stale key");
    let story = tell(&m, &init, &actions);
    let last = story.last().unwrap();
    assert_eq!(last.actor, "t=115s time");
    assert!(
        last.action
            .contains("at t=120s the running key of A1 expires: the KV bucket's TTL, 120 s after its last put"),
        "{}",
        last.action
    );
    assert!(last
        .changes
        .iter()
        .any(|c| c.row == "A1 running key" && c.after.is_none()));
}

#[test]
fn a_crash_says_where_the_message_of_what_it_loses_stands() {
    let m = model("after-1649", 1, 0);
    let story = crash_story(&m);
    assert_eq!(
        story[3].action,
        "crashes while building A1 and restarts idle: the build of A1 is lost \
         (A1's message is held by it until its ack wait runs out at t=60s, and then delivered again)"
    );
}

/// after-1649, no skew, b1's first heartbeat 50 s late: it is due at t=60s,
/// the very instant A1's ack wait runs out; b2 gets A1, b1's heartbeat puts
/// the key, b2 drops A1 as a duplicate (acking it) and b1 crashes.
fn late_heartbeat_story(m: &Link) -> Vec<crate::StoryStep> {
    let init = with_offsets(m, &[0, 0]);
    let mut actions = vec![
        Action::Fetch(0),
        Action::Take(0),
        Action::Tick,
        Action::Tick,
        Action::Delay(0),
    ];
    actions.extend([Action::Tick; 10]);
    actions.extend([
        Action::Fetch(1),
        Action::Heartbeat(0),
        Action::Take(1),
        Action::Crash(0),
    ]);
    let s = run(m, &init, &actions);
    assert!(s.is_lost(0));
    tell(m, &init, &actions)
}

fn late_by_50() -> Link {
    let mut m = model("after-1649", 1, 0);
    m.bounds.late_heartbeats = 1;
    m.bounds.late_by = 50;
    m
}

#[test]
fn a_crash_whose_message_is_acked_says_that_nothing_times_out() {
    let story = late_heartbeat_story(&late_by_50());
    let crash = &story.last().unwrap().action;
    assert!(
        crash.contains("the build of A1 is lost (A1's message is already acked: nothing times out, the server never delivers it again)"),
        "{crash}"
    );
    assert!(!crash.contains("time out;"), "{crash}");
}

#[test]
fn a_tick_tells_each_event_at_the_time_it_happens() {
    let m = model("after-1649", 1, 0);
    let story = crash_story(&m);
    let deadline = &story[15];
    assert_eq!(deadline.actor, "t=55s time");
    assert_eq!(
        deadline.action,
        "5 s pass; at t=60s the ack wait of A1 runs out unacked by b1: the server delivers it again"
    );
}

#[test]
fn a_deadline_and_a_heartbeat_at_one_instant_say_which_came_first() {
    let story = late_heartbeat_story(&late_by_50());
    let tied: Vec<String> = lines(&story)
        .into_iter()
        .filter(|l| l.contains("same instant"))
        .collect();
    assert_eq!(
        tied,
        [
            "t=55s time: 5 s pass; at t=60s the ack wait of A1 runs out unacked by b1 \
          (b1's heartbeat is due at this same instant; the model lets the ack wait run out first, \
          so its AckProgress comes too late to restart it): the server delivers it again"
        ]
    );
    // Where no heartbeat is due at the deadline, nothing is said of an order.
    let m = model("after-1649", 1, 0);
    assert!(!lines(&crash_story(&m))
        .iter()
        .any(|l| l.contains("same instant")));
}

#[test]
fn a_story_names_the_servers_concepts() {
    let story = late_heartbeat_story(&late_by_50());
    let text: String = story
        .iter()
        .map(|s| {
            let changes: Vec<String> = s
                .changes
                .iter()
                .map(|c| format!("{}: {:?} -> {:?}", c.row, c.before, c.after))
                .collect();
            format!("{}\n{}\n", s.action, changes.join("\n"))
        })
        .collect();
    for concept in [
        "pull request",
        "ack wait",
        "AckProgress (in-progress)",
        "max_deliver 3",
        "KV bucket",
        "TTL",
    ] {
        assert!(text.contains(concept), "{concept} missing from:\n{text}");
    }
    assert!(
        story[17]
            .action
            .contains("AckProgress (in-progress) restarts the ack wait of A1 (delivered to b2 now), to run out at t=120s"),
        "{}",
        story[17].action
    );
}

/// check-only, no skew, no fault: b1 finishes A2 at t=60s, the very instant
/// A1 (a late answer it buffered) comes back, and b2 fetches A1.
fn read_at_the_redelivery(m: &Link) -> State {
    let s = late_answer_until_its_deadline(m);
    run(m, &s, &[Action::Finish(0), Action::Fetch(1)])
}

#[test]
fn between_a_read_of_the_key_and_its_put_another_builder_acts() {
    let mut m = model("check-only", 2, 0);
    // The path of the contract's first reading (a fetch meanwhile gets A2).
    m.options.single_late_answer = true;
    let s = read_at_the_redelivery(&m);
    // b2 holds A1 in its buffer; b1 still buffers the late A1 it will read.
    let read = run(&m, &s, &[Action::Read(0)]);
    assert_eq!(
        read.builders[0].decided,
        Some(Decided {
            ask: 0,
            duplicate: false,
            conflict: false
        })
    );
    assert_eq!(read.keys[0], None, "b1 read no key and has not put one");
    let enabled = enabled(&m, &read);
    assert!(enabled.contains(&Action::Start(0)));
    assert!(enabled.contains(&Action::Read(1)), "b2 acts in the window");
    assert!(!m.can_tick(&read), "a decision is acted on at once");
    // b2 reads before b1 puts: no key either, so both run A1.
    let both = run(
        &m,
        &read,
        &[Action::Read(1), Action::Start(0), Action::Start(1)],
    );
    assert_eq!(both.runners(0).count(), 2);
    // Under atomic-start the read and the put are one step: b2 reads b1's
    // fresh key and drops A1.
    let mut atomic = m;
    atomic.options.atomic_start = true;
    let s = read_at_the_redelivery(&atomic);
    let one = run(&atomic, &s, &[Action::Take(0), Action::Take(1)]);
    assert_eq!(one.runners(0).collect::<Vec<_>>(), [0]);
    assert!(one.dropped);
}

#[test]
fn without_the_check_a_start_reads_nothing_shared_and_stays_one_step() {
    for design in ["before-1649", "margin-only"] {
        let m = model(design, 1, 0);
        let s = run(&m, &m.initial_states()[0], &[Action::Fetch(0)]);
        let enabled = enabled(&m, &s);
        assert!(enabled.contains(&Action::Take(0)), "{design}");
        assert!(!enabled.contains(&Action::Read(0)), "{design}");
    }
}

#[test]
fn the_oldest_pull_request_is_served_first() {
    let m = model("before-1649", 2, 0);
    let init = m.initial_states()[0];
    // b1's abandoned pull request is older than b2's fetch: it gets A1.
    let s = run(&m, &init, &[Action::FetchLate(0), Action::Fetch(1)]);
    assert_eq!(s.builders[0].on_the_way, Some(0));
    assert!(matches!(
        s.messages[0].status,
        Status::Delivered { to: 0, .. }
    ));
    assert_eq!(*s.builders[1].buffer, [1]);
    assert!(!m.can_tick(&s), "the answer lands first");
    let landed = run(&m, &s, &[Action::Land(0)]);
    assert_eq!(*landed.builders[0].buffer, [0]);
}

#[test]
fn a_crash_between_the_read_and_the_put_says_what_it_loses() {
    let m = model("check-only", 2, 0);
    let init = with_offsets(&m, &[0, 0]);
    let story = tell(
        &m,
        &init,
        &[Action::Fetch(0), Action::Read(0), Action::Crash(0)],
    );
    assert_eq!(
        story[2].action,
        "crashes and restarts idle: A1, read and not yet started, is lost \
         (A1's message is held by it until its ack wait runs out at t=60s, and then delivered again)"
    );
}

#[test]
fn every_reachable_state_unpacks_to_itself() {
    for design in DESIGNS.iter() {
        for atomic_start in [false, true] {
            let mut m = model(design.name, 2, 5);
            m.bounds.late_heartbeats = 1;
            m.options.atomic_start = atomic_start;
            m.reduced = false;
            crate::assert_every_reachable_state_unpacks(&m, 20_000, design.name);
        }
    }
}

#[test]
fn the_clients_expiry_rules_leave_these_margins() {
    use design::{fetch_expiry_us, fetch_margin_us};
    // The seed's fetchExpiryOf (nats.go 1.37.0 on): a tenth, at most 5 s.
    assert_eq!(fetch_margin_us(30, false), 3_000);
    assert_eq!(fetch_margin_us(100, false), 10_000);
    assert_eq!(fetch_margin_us(1000, false), 100_000);
    assert_eq!(fetch_expiry_us(60_000, false), 55_000_000);
    // nats.go up to 1.36.0 (Debian's 1.22.1): 10 ms, none under 20 ms.
    assert_eq!(fetch_margin_us(30, true), 10_000);
    assert_eq!(fetch_margin_us(100, true), 10_000);
    assert_eq!(fetch_margin_us(19, true), 0);
    for design in all_designs() {
        let mut m = Link::new(design, Bounds::default());
        assert_eq!(
            m.has_margin(),
            design.fetch_wait.leaves_margin(),
            "{}",
            design.name
        );
        m.options.expiry_less_10ms = true;
        assert!(m.has_margin(), "{}: 10 ms whatever the wait", design.name);
    }
    // So under the older client before-1649 has no late answer without a
    // slow network.
    let mut m = model("before-1649", 2, 0);
    m.options.expiry_less_10ms = true;
    assert!(!enabled(&m, &m.initial_states()[0]).contains(&Action::FetchLate(0)));
}

#[test]
fn the_clients_fetch_returns_the_earlier_answer_and_leaves_its_request_open() {
    let mut m = model("before-1649", 2, 0);
    let init = m.initial_states()[0];
    let late = run(&m, &init, &[Action::FetchLate(0)]);
    // The contract's first reading: a fetch meanwhile gets the next ask.
    m.options.single_late_answer = true;
    assert!(enabled(&m, &late).contains(&Action::Fetch(0)));
    assert!(!enabled(&m, &late).contains(&Action::FetchEarlier(0)));
    // The client's fetch, the default.
    m.options.single_late_answer = false;
    let e = enabled(&m, &late);
    assert!(e.contains(&Action::FetchEarlier(0)) && e.contains(&Action::Land(0)));
    assert!(
        !e.contains(&Action::Fetch(0)),
        "the earlier answer comes first"
    );
    let s = run(&m, &late, &[Action::FetchEarlier(0)]);
    assert_eq!(*s.builders[0].buffer, [0]);
    assert!(s.builders[0].open && s.builders[0].on_the_way.is_none());
    // A2 is available: the server answers the open request before time
    // passes, and b1 fetches nothing itself meanwhile.
    assert!(!m.can_tick(&s));
    let e = enabled(&m, &s);
    assert!(e.contains(&Action::Answer(0)) && e.contains(&Action::Take(0)));
    let s = run(&m, &s, &[Action::Take(0), Action::Answer(0)]);
    assert_eq!(s.builders[0].run.map(|r| r.ask), Some(0));
    assert_eq!(s.builders[0].on_the_way, Some(1));
    assert!(matches!(
        s.messages[1].status,
        Status::Delivered { to: 0, .. }
    ));
    // It lands in the buffer of a builder that is building.
    let s = run(&m, &s, &[Action::Land(0)]);
    assert_eq!(*s.builders[0].buffer, [1]);
    let story = m.tell(&late, &[Action::FetchEarlier(0)]);
    assert!(
        story[0].action.contains("stays open"),
        "{}",
        story[0].action
    );
}

#[test]
fn an_open_request_expires_before_time_passes_and_with_a_crash() {
    let m = model("before-1649", 1, 0);
    let init = m.initial_states()[0];
    let s = run(&m, &init, &[Action::FetchLate(0), Action::FetchEarlier(0)]);
    assert!(s.builders[0].open);
    assert!(
        !enabled(&m, &s).contains(&Action::Answer(0)),
        "nothing left"
    );
    let started = run(&m, &s, &[Action::Take(0)]);
    assert!(!run(&m, &started, &[Action::Tick]).builders[0].open);
    assert!(!run(&m, &s, &[Action::Crash(0)]).builders[0].open);
}

/// `redelivery-queue`: two ack waits that run out in the same tick join
/// the redelivery queue together, so either ask may be handed out first
/// (a `Queue` step puts the higher one first); without the option the
/// lowest-numbered is, and no `Queue` step exists.
#[test]
fn ack_waits_run_out_in_one_tick_in_any_order_under_the_redelivery_queue() {
    let plain = model("before-1649", 2, 0);
    let mut queued = plain;
    queued.options.redelivery_queue = true;
    let mut s = plain.initial_states()[0];
    for (a, to) in [(0, 0), (1, 1)] {
        s.messages[a] = Message {
            status: Status::Delivered { to, ack_in: 1 },
            deliveries: 1,
            queue: 0,
            again: false,
        };
    }
    let after = crate::run_enabled(&queued, &s, &[Action::Tick]);
    assert_eq!(
        after.messages.iter().map(|m| m.queue).collect::<Vec<_>>(),
        [1, 1]
    );
    assert!(enabled(&queued, &after).contains(&Action::Queue(1)));
    assert!(!enabled(&queued, &after).contains(&Action::Queue(0)));
    let first = crate::run_enabled(&queued, &after, &[Action::Queue(1), Action::Fetch(0)]);
    assert_eq!(first.builders[0].buffer[..], [1]);
    assert_eq!(first.messages[0].queue, 1, "A1 now heads the queue alone");
    let fetched = crate::run_enabled(&queued, &after, &[Action::Fetch(0)]);
    assert_eq!(fetched.builders[0].buffer[..], [0]);

    let before = crate::run_enabled(&plain, &s, &[Action::Tick]);
    assert!(before.messages.iter().all(|m| m.queue == 0));
    assert!(!enabled(&plain, &before)
        .iter()
        .any(|a| matches!(a, Action::Queue(_))));
}

/// `redelivery-queue`: a redelivery comes before a message never
/// delivered, whatever their numbers; a nak joins the back of the queue.
#[test]
fn the_redelivery_queue_comes_before_the_never_delivered_and_a_nak_joins_its_back() {
    let plain = model("before-1649", 3, 0);
    let mut queued = plain;
    queued.options.redelivery_queue = true;
    let mut s = plain.initial_states()[0];
    s.messages[1] = Message {
        status: Status::Available,
        deliveries: 1,
        queue: 1,
        again: false,
    };
    assert_eq!(s.first_available(), Some(1));
    s.messages[1].queue = 0;
    assert_eq!(s.first_available(), Some(0), "the option off: the lowest");
    s.messages[1].queue = 1;
    s.messages[2] = Message {
        status: Status::Delivered { to: 0, ack_in: 5 },
        deliveries: 1,
        queue: 0,
        again: false,
    };
    s.builders[0].buffer.push(2);
    s.naks_left = 1;
    let naked = crate::run_enabled(&queued, &s, &[Action::Nak(0)]);
    assert_eq!(
        naked.messages.iter().map(|m| m.queue).collect::<Vec<_>>(),
        [0, 1, 2]
    );
}

/// Each named repair is after-1649 composed with its part, and the five of
/// after-1649-repaired are that design: the names are aliases.
#[test]
fn the_named_repairs_are_compositions_of_after_1649() {
    use super::{compose, REPAIRS, REPAIR_PARTS};
    for repair in &REPAIR_PARTS {
        let named = format!("after-1649-{}", repair.name);
        let composed = compose(&format!("after-1649+{}", repair.name)).unwrap();
        assert_eq!(composed.name, named);
        assert!(REPAIRS.iter().any(|d| d.name == named));
    }
    let repaired =
        compose("after-1649+done-key+server-clock+defer-duplicates+hand-back+revision-start")
            .unwrap();
    assert_eq!(repaired.name, "after-1649-repaired");
}

/// A composition no name has gets the canonical name (the repairs in their
/// table's order), a change in the contract's steps, and is made once.
#[test]
fn a_new_composition_is_named_by_its_parts() {
    use super::compose;
    let d = compose("after-1649+sync-ack+hand-back").unwrap();
    assert_eq!(d.name, "after-1649+hand-back+sync-ack");
    assert_eq!(
        d.change,
        "after-1649, but a busy builder hands back what lands with a nak; step 5's ack is synchronous, retried until confirmed."
    );
    assert!(d.busy_buffer.hands_back() && d.finish_ack.sync());
    assert!(std::ptr::eq(
        d,
        compose("after-1649+hand-back+sync-ack").unwrap()
    ));
    // A repair of step 3 needs a base that makes the duplicate check.
    assert!(compose("before-1649+hand-back").is_ok());
    assert!(compose("before-1649+done-key")
        .unwrap_err()
        .contains("duplicate check"));
    assert!(compose("after-1649-hand-back+hand-back")
        .unwrap_err()
        .contains("changes nothing"));
    assert!(compose("after-1649+bogus")
        .unwrap_err()
        .contains("unknown repair"));
    assert!(compose("after-1650+hand-back")
        .unwrap_err()
        .contains("unknown design"));
}
