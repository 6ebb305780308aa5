//! The claims of the link source (issue 1649), each pinned with the smallest
//! bounds that show it, and what the model found beyond them. Every verdict
//! comes from the checker; a claim that something holds says which
//! witnesses were reached, so that it is not a holds on states never met.

use crate::common;

use slotcheck::check::{check, Limits, Outcome, Verdict};
use slotcheck_models::link::{
    design_named, Bounds, Link, Options, ASKS_FINISH, NO_DOUBLE_RUN, NO_LOST_ASK, SOME_DROPPED,
    SOME_REDELIVERED,
};

fn bounds(asks: u8, skew: u16, crashes: u8, horizon: u16) -> Bounds {
    Bounds {
        asks,
        builders: 2,
        skew,
        horizon,
        longest_build: horizon,
        crashes,
        late_heartbeats: 0,
        late_by: 10,
        max_deliver: 3,
        ..Bounds::default()
    }
}

fn run(design: &str, bounds: Bounds, options: Options) -> Outcome<Link> {
    let mut model = Link::new(design_named(design).unwrap(), bounds);
    model.options = options;
    check(model, &[], &Limits::default())
}

/// The source's reading (the KV get and the put two steps) and
/// `atomic-start`: each claim's verdicts are checked on both (the stories
/// are told in the source's reading).
fn readings() -> [Options; 2] {
    [
        Options::default(),
        Options {
            atomic_start: true,
            ..Options::default()
        },
    ]
}

fn verdict(outcome: &Outcome<Link>, property: &str) -> Verdict {
    outcome.result(property).unwrap().verdict
}

#[test]
fn before_1649_an_ask_in_a_busy_builders_buffer_is_run_twice() {
    // Two asks (the first keeps the builder busy), no fault, no skew: the
    // late answer alone. The fetch margin alone prevents it.
    let b = bounds(2, 0, 0, 60);
    let before = run("before-1649", b, Options::default());
    assert_eq!(verdict(&before, NO_DOUBLE_RUN), Verdict::Violated);
    assert_eq!(verdict(&before, SOME_REDELIVERED), Verdict::Reached);
    let trace = before
        .result(NO_DOUBLE_RUN)
        .unwrap()
        .trace
        .as_ref()
        .unwrap();
    assert_eq!(
        trace.last.now, 12,
        "the duplicate runs at t=60s, an ack wait after the late answer"
    );
    for options in readings() {
        for design in ["after-1649", "margin-only"] {
            let o = run(design, b, options);
            assert_eq!(verdict(&o, NO_DOUBLE_RUN), Verdict::Holds, "{design}");
        }
    }
    // check-only holds only when the key's read and put are one step (see
    // the finding below).
    let atomic = readings()[1];
    let o = run("check-only", b, atomic);
    assert_eq!(verdict(&o, NO_DOUBLE_RUN), Verdict::Holds);
    // Without a late answer nothing is ever redelivered: the margin removes
    // the only cause; check-only drops that duplicate (and in the source's
    // reading builds twice another way: the finding below).
    let after = run("after-1649", b, Options::default());
    assert_eq!(verdict(&after, SOME_REDELIVERED), Verdict::NotReached);
    let check_only = run("check-only", b, Options::default());
    assert_eq!(verdict(&check_only, SOME_DROPPED), Verdict::Reached);
}

#[test]
fn after_1649_no_ask_runs_twice_or_is_lost_with_a_skew_within_35_s() {
    let b = bounds(2, 35, 1, 65);
    for options in readings() {
        let after = run("after-1649", b, options);
        for p in [NO_DOUBLE_RUN, NO_LOST_ASK, ASKS_FINISH] {
            assert_eq!(verdict(&after, p), Verdict::Holds, "{p} {options:?}");
        }
        assert_eq!(verdict(&after, SOME_REDELIVERED), Verdict::Reached);
        // Within these bounds the duplicate check never fires in after-1649.
        assert_eq!(verdict(&after, SOME_DROPPED), Verdict::NotReached);
    }
}

#[test]
fn a_skew_over_35_s_loses_the_ask_of_a_crashed_builder_in_after_1649() {
    // One ask: its builder crashes; the redelivery comes an ack wait (60 s)
    // after the last heartbeat, and a builder whose clock is 40 s behind
    // reads the key as 20 s old, fresh, and drops the ask.
    for options in readings() {
        let lost = run("after-1649", bounds(1, 40, 1, 60), options);
        assert_eq!(verdict(&lost, NO_LOST_ASK), Verdict::Violated);
        assert_eq!(verdict(&lost, ASKS_FINISH), Verdict::Violated);
        assert_eq!(verdict(&lost, NO_DOUBLE_RUN), Verdict::Holds);
        assert_eq!(verdict(&lost, SOME_DROPPED), Verdict::Reached);
        // 35 s is the last skew that holds on the same bounds.
        let held = run("after-1649", bounds(1, 35, 1, 60), options);
        assert_eq!(verdict(&held, NO_LOST_ASK), Verdict::Holds);
        assert_eq!(verdict(&held, SOME_REDELIVERED), Verdict::Reached);
    }
}

#[test]
fn finding_check_only_loses_an_ask_started_late_from_its_buffer() {
    // Without the margin the ask waits in a busy builder's buffer; its ack
    // deadline runs from delivery, so after its builder crashes it comes back
    // only 20 s after the last heartbeat: the key looks fresh and the
    // redelivery is dropped. No skew needed, and stale-ack-ignored does not
    // help (the dropping builder is the current holder).
    let b = bounds(2, 0, 1, 60);
    for reading in readings() {
        let options = Options {
            stale_ack_ignored: true,
            ..reading
        };
        for options in [reading, options] {
            let o = run("check-only", b, options);
            assert_eq!(verdict(&o, NO_LOST_ASK), Verdict::Violated, "{options:?}");
            assert_eq!(verdict(&o, SOME_DROPPED), Verdict::Reached);
        }
    }
    let after = run("after-1649", b, Options::default());
    assert_eq!(verdict(&after, NO_LOST_ASK), Verdict::Holds);
}

#[test]
fn finding_check_only_runs_an_ask_twice_between_the_get_and_the_put() {
    // No fault, no skew: at the instant a buffered late answer comes back,
    // its holder reads no key and, before it puts one, another builder
    // fetches the redelivery and reads no key either. Under atomic-start the
    // read and the put are one step and check-only holds.
    let b = bounds(2, 0, 0, 60);
    let [split, atomic] = readings();
    let o = run("check-only", b, split);
    assert_eq!(verdict(&o, NO_DOUBLE_RUN), Verdict::Violated);
    let trace = o.result(NO_DOUBLE_RUN).unwrap().trace.as_ref().unwrap();
    // 29 steps: nats.go's fetch returns the earlier answer and its own
    // request is answered later, a step each (docs/link-reality.md).
    assert_eq!(trace.steps(), 29);
    assert_eq!(trace.last.now, 12, "both put at t=60s");
    assert_eq!(verdict(&o, SOME_REDELIVERED), Verdict::Reached);
    assert_eq!(
        verdict(&run("check-only", b, atomic), NO_DOUBLE_RUN),
        Verdict::Holds
    );
    // The margin leaves no late answer to come back: after-1649 holds on
    // both readings (above).
}

#[test]
fn finding_a_heartbeat_50_s_late_runs_an_ask_twice_in_every_design() {
    // The in-progress and the key are put together, so when a heartbeat is
    // late past the ack wait the key is as stale as the deadline: the check
    // cannot tell a late builder from a dead one.
    let mut b = bounds(1, 0, 1, 60);
    b.late_heartbeats = 1;
    for options in readings() {
        b.late_by = 50;
        for design in ["before-1649", "after-1649", "check-only", "margin-only"] {
            let o = run(design, b, options);
            assert_eq!(verdict(&o, NO_DOUBLE_RUN), Verdict::Violated, "{design}");
            assert_eq!(verdict(&o, SOME_REDELIVERED), Verdict::Reached);
        }
        // With the check, the late heartbeat's fresh key makes a second
        // redelivery a duplicate; its holder then crashes and the ask is lost.
        let after = run("after-1649", b, options);
        assert_eq!(verdict(&after, NO_LOST_ASK), Verdict::Violated);
        assert_eq!(verdict(&after, SOME_DROPPED), Verdict::Reached);
        // A heartbeat 45 s late does not reach the ack wait.
        b.late_by = 45;
        let o = run("after-1649", b, options);
        assert_eq!(verdict(&o, NO_DOUBLE_RUN), Verdict::Holds);
        assert_eq!(verdict(&o, NO_LOST_ASK), Verdict::Holds);
        assert_eq!(verdict(&o, SOME_REDELIVERED), Verdict::Reached);
    }
}

#[test]
fn finding_check_only_builds_twice_when_the_readers_clock_is_15_s_ahead() {
    // A key heartbeated 10 s ago reads as 25 s old on a clock 15 s ahead: not
    // fresh, so the duplicate from the busy builder's buffer runs. 10 s ahead
    // still drops it, when the read and the put are one step; in the
    // source's reading the window between them builds twice at any skew.
    let [split, atomic] = readings();
    let b = bounds(2, 15, 0, 60);
    let o = run("check-only", b, atomic);
    assert_eq!(verdict(&o, NO_DOUBLE_RUN), Verdict::Violated);
    assert_eq!(verdict(&o, SOME_DROPPED), Verdict::Reached);
    // In the source's reading the clock-ahead path is still the shorter one:
    // a step shorter than the window between the get and the put (29).
    let o = run("check-only", b, split);
    let trace = o.result(NO_DOUBLE_RUN).unwrap().trace.as_ref().unwrap();
    assert_eq!(trace.steps(), 28);
    let o = run("check-only", bounds(2, 10, 0, 60), atomic);
    assert_eq!(verdict(&o, NO_DOUBLE_RUN), Verdict::Holds);
    assert_eq!(verdict(&o, SOME_DROPPED), Verdict::Reached);
}

/// The lines (actor and action) of the story of the shortest path that
/// breaks `property`.
fn story(design: &str, bounds: Bounds, property: &str) -> Vec<String> {
    let model = Link::new(design_named(design).unwrap(), bounds);
    let outcome = check(model, &[], &Limits::default());
    outcome
        .story(&model, property)
        .expect("a violation has a story")
        .iter()
        .map(|s| format!("{}: {}", s.actor, s.action))
        .collect()
}

#[test]
fn the_story_of_the_ask_lost_past_35_s_tells_each_event_as_it_happened() {
    let lines = story("after-1649", bounds(1, 40, 1, 60), NO_LOST_ASK);
    let told = lines.join("\n");
    // The crash says where its message stands: it times out, and when.
    assert!(
        told.contains(
            "crashes while building A1 and restarts idle: the build of A1 is lost \
             (A1's message is held by it until its ack wait runs out at t=60s, and then delivered again)"
        ),
        "{told}"
    );
    // The deadline is told at t=60s, the time it passes, by the tick to it.
    assert!(
        told.contains("t=55s time: 5 s pass; at t=60s the ack wait of A1 runs out unacked by b1"),
        "{told}"
    );
    // The key is told at its one put, t=0s, not at an age clamped later;
    // the drop is the step after the read.
    let [.., read, drop] = &lines[..] else {
        panic!("{told}")
    };
    assert!(
        read.contains(
            "names b1, last put t=0s: 60 s ago by the server's clock, 20 s by its own: fresh (under 25 s); decide to drop it as a duplicate"
        ),
        "{told}"
    );
    assert!(drop.contains("drop A1 as a duplicate; ack A1"), "{told}");
}

#[test]
fn the_story_of_the_heartbeat_50_s_late_says_the_deadline_came_first_and_nothing_times_out() {
    let mut b = bounds(1, 0, 1, 60);
    b.late_heartbeats = 1;
    b.late_by = 50;
    let lines = story("after-1649", b, NO_LOST_ASK);
    let told = lines.join("\n");
    // The tie the finding rests on is told where it decides.
    assert!(
        told.contains(
            "t=55s time: 5 s pass; at t=60s the ack wait of A1 runs out unacked by b1 \
             (b1's heartbeat is due at this same instant; the model lets the ack wait run out first"
        ),
        "{told}"
    );
    // The crash loses an ask whose message the drop already acked.
    assert!(
        lines.last().unwrap().contains(
            "crashes while building A1 and restarts idle: the build of A1 is lost \
             (A1's message is already acked: nothing times out, the server never delivers it again)"
        ),
        "{told}"
    );
}

/// `check --model link --design after-1649 --skew-range RANGE` on the
/// smallest bounds of the skew claim (one ask, no late heartbeat).
fn skew_range(range: &str) -> std::process::Output {
    common::slotcheck(&[
        "check",
        "--model",
        "link",
        "--design",
        "after-1649",
        "--skew-range",
        range,
        "--asks",
        "1",
        "--horizon",
        "60",
        "--longest-build",
        "60",
        "--late-heartbeats",
        "0",
        "--quiet",
    ])
}

#[test]
fn the_skew_boundary_of_after_1649_is_measured_at_35_s() {
    let output = skew_range("30..45");
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "a skew in the range breaks it\n{text}"
    );
    assert!(
        text.contains("after-1649: every property holds up to a skew of 35 s; at 40 s no-lost-ask is violated (19 steps)"),
        "{text}"
    );
    assert!(
        text.contains("no-lost-ask: the shortest counterexample at a skew of 40 s"),
        "{text}"
    );
    // One row per skew, a tick apart.
    for skew in ["30 s", "35 s", "40 s", "45 s"] {
        assert!(text.lines().any(|l| l.starts_with(skew)), "{skew}\n{text}");
    }
    for (range, says) in [
        ("0..7", "not a multiple of the model's tick"),
        ("40..35", "is more than"),
        ("35", "write FROM..TO"),
    ] {
        let output = skew_range(range);
        assert_eq!(output.status.code(), Some(2), "{range}");
        let error = String::from_utf8(output.stderr).unwrap();
        assert!(error.contains(says), "{range}: {error}");
    }
    // Within the 35 s the source promises, it holds: exit 0.
    assert_eq!(skew_range("30..35").status.code(), Some(0));
}
