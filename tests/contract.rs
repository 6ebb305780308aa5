//! The stovepipe model pinned to its source: one test per row of the table
//! "What is claimed, and what is found" in `docs/stovepipe.md`,
//! on the smallest bounds that show it, asserting the verdict and the shape of
//! the counterexample; and the witnesses next to every verdict.

use slotcheck::check::{check, Limits, Outcome, Verdict};
use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe};
use slotcheck_models::StoryStep;

fn model(design: &str, requests: u8, crashes: u8, stalls: u8, max_deliveries: u8) -> Stovepipe {
    Stovepipe::new(
        design_named(design).unwrap(),
        Bounds {
            requests,
            max_concurrent: 1,
            crashes,
            stalls,
            max_deliveries,
        },
    )
}

fn run(model: Stovepipe) -> Outcome<Stovepipe> {
    let outcome = check(model, &[], &Limits::default());
    assert_eq!(outcome.stats.cut, None, "an unlimited run is never cut");
    outcome
}

fn verdict(outcome: &Outcome<Stovepipe>, property: &str) -> Verdict {
    outcome.result(property).unwrap().verdict
}

fn story(outcome: &Outcome<Stovepipe>, model: &Stovepipe, property: &str) -> Vec<StoryStep> {
    outcome
        .story(model, property)
        .expect("a violation has a story")
}

fn position(story: &[StoryStep], what: impl Fn(&StoryStep) -> bool) -> Option<usize> {
    story.iter().position(what)
}

#[test]
fn sp_oct_003_claim_first_wedges_after_a_crash_between_claim_and_processing_write() {
    let m = model("claim-first", 1, 1, 0, 2);
    let outcome = run(m);
    assert_eq!(verdict(&outcome, "no-wedge"), Verdict::Violated);
    assert_eq!(verdict(&outcome, "count-not-high"), Verdict::Violated);

    let story = story(&outcome, &m, "no-wedge");
    let claim =
        position(&story, |s| s.action == "CAS queue in_flight_count 0 -> 1").expect("a claim");
    let crash = position(&story, |s| s.action.starts_with("crash")).expect("a crash");
    assert!(claim < crash, "the crash follows the claim");
    assert!(
        !story.iter().any(|s| s.action.contains("-> processing")),
        "the processing write never lands"
    );
    // Holds ever after: after the crash only deliveries, reads and holds.
    for step in &story[crash + 1..] {
        assert!(
            step.action.starts_with("deliver")
                || step.action.starts_with("read")
                || step.action.starts_with("hold"),
            "unexpected step after the crash: {step:?}"
        );
    }
    assert!(story
        .last()
        .unwrap()
        .action
        .contains("gate closed (in_flight_count 1 >= K 1)"));
    let last = &outcome
        .result("no-wedge")
        .unwrap()
        .trace
        .as_ref()
        .unwrap()
        .last;
    assert!(m.is_wedged(last));
}

#[test]
fn sp_oct_005_claim_first_releases_twice_after_a_retried_outcome_write() {
    let m = model("claim-first", 2, 1, 0, 2);
    let outcome = run(m);
    assert_eq!(verdict(&outcome, "count-not-low"), Verdict::Violated);
    // With two requests the stolen slot does not yet over-admit...
    assert_eq!(verdict(&outcome, "builds-within-limit"), Verdict::Holds);

    let story = story(&outcome, &m, "count-not-low");
    let releases: Vec<usize> = story
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            s.actor.contains("(signal R1")
                && s.action.starts_with("CAS queue in_flight_count 1 -> 0")
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(releases.len(), 2, "signal(R1) releases twice: {story:#?}");
    // The story says which release is the second, and whose slot it takes.
    assert!(!story[releases[0]].action.contains("second release"));
    assert!(
        story[releases[1]]
            .action
            .contains("the second release for R1 since its claim"),
        "{story:#?}"
    );
    let crash = position(&story, |s| {
        s.actor.contains("(signal R1") && s.action.starts_with("crash")
    })
    .expect("the signal worker crashes before its outcome write");
    assert!(releases[0] < crash && crash < releases[1]);
    // The second release took R2's slot: R2 is processing at the end.
    let last = &outcome
        .result("count-not-low")
        .unwrap()
        .trace
        .as_ref()
        .unwrap()
        .last;
    assert_eq!(last.processing().count(), 1);

    // ...with three, it does.
    let outcome = run(model("claim-first", 3, 1, 0, 2));
    assert_eq!(verdict(&outcome, "builds-within-limit"), Verdict::Violated);
}

#[test]
fn fail_open_over_admits_by_exactly_one_with_two_heads_and_no_faults() {
    let m = model("fail-open", 2, 0, 0, 2);
    let outcome = run(m);
    assert_eq!(verdict(&outcome, "builds-within-limit"), Verdict::Violated);
    let trace = outcome
        .result("builds-within-limit")
        .unwrap()
        .trace
        .as_ref()
        .unwrap();
    assert_eq!(
        trace.last.running_builds().count(),
        2,
        "K + 1 builds, not more"
    );
    let story = story(&outcome, &m, "builds-within-limit");
    assert!(
        !story.iter().any(|s| s.actor.starts_with("fault")),
        "no faults at all"
    );
    // Both heads passed the gate on a count of 0.
    let passed = story
        .iter()
        .filter(|s| s.action.starts_with("read R") && s.action.contains("in_flight_count 0"))
        .count();
    assert!(passed >= 2, "{story:#?}");
}

#[test]
fn fail_open_does_not_wedge_without_stalls() {
    let outcome = run(model("fail-open", 2, 1, 0, 2));
    assert_eq!(verdict(&outcome, "no-wedge"), Verdict::Holds);
    assert_eq!(verdict(&outcome, "count-not-high"), Verdict::Holds);
    for witness in ["all-succeed", "some-superseded", "some-held"] {
        assert_eq!(verdict(&outcome, witness), Verdict::Reached, "{witness}");
    }
}

#[test]
fn fail_open_stall_residual_goes_high_and_wedges() {
    let m = model("fail-open", 2, 0, 1, 2);
    let outcome = run(m);
    assert_eq!(verdict(&outcome, "count-not-high"), Verdict::Violated);
    assert_eq!(verdict(&outcome, "no-wedge"), Verdict::Violated);
    // The residual: a stalled delivery wakes after its redelivery finished the
    // validation and adds its count + 1 on top.
    let story = story(&outcome, &m, "count-not-high");
    let stall = position(&story, |s| s.action.starts_with("stall")).expect("a stall");
    let stalled_worker = story[stall]
        .actor
        .trim_start_matches("fault on ")
        .to_string();
    let late_count_up = position(&story, |s| {
        s.actor == stalled_worker && s.action.starts_with("CAS queue in_flight_count")
    })
    .expect("the stalled worker writes the count");
    assert!(late_count_up > stall);
}

#[test]
fn owner_keyed_holds_under_crashes_alone_with_every_witness_reached() {
    for requests in [1, 2] {
        let outcome = run(model("owner-keyed", requests, 1, 0, 2));
        for property in ["no-wedge", "count-not-low", "count-not-high"] {
            assert_eq!(
                verdict(&outcome, property),
                Verdict::Holds,
                "{property}, N={requests}"
            );
        }
    }
    // The same bounds on which claim-first wedges, with every witness reached.
    let bounds = |design| model(design, 2, 1, 0, 1);
    let owner = run(bounds("owner-keyed"));
    for property in ["no-wedge", "count-not-low", "count-not-high"] {
        assert_eq!(verdict(&owner, property), Verdict::Holds, "{property}");
    }
    for witness in [
        "all-succeed",
        "some-superseded",
        "some-dead-lettered",
        "some-held",
    ] {
        assert_eq!(verdict(&owner, witness), Verdict::Reached, "{witness}");
    }
    let claim_first = run(bounds("claim-first"));
    assert_eq!(verdict(&claim_first, "no-wedge"), Verdict::Violated);
}

/// Beyond the source: with one stall, a stale first delivery's processing
/// write lands after its redelivery released the slot to supersede it.
#[test]
fn finding_owner_keyed_loses_a_slot_under_one_stall() {
    let m = model("owner-keyed", 2, 0, 1, 2);
    let outcome = run(m);
    assert_eq!(verdict(&outcome, "count-not-low"), Verdict::Violated);
    assert_eq!(verdict(&outcome, "builds-within-limit"), Verdict::Violated);
    let story = story(&outcome, &m, "builds-within-limit");
    let release = position(&story, |s| {
        s.actor.contains("(process R1, delivery 2)") && s.action.contains("{R1} -> {}")
    })
    .expect("the redelivery releases R1's slot before superseding it");
    let late_write = position(&story, |s| {
        s.actor.contains("(process R1, delivery 1)") && s.action == "CAS R1 accepted -> processing"
    })
    .expect("the stalled first delivery writes processing");
    assert!(release < late_write, "{story:#?}");
}

/// Beyond the source: the DLQ releases a request whose build still runs (a
/// running build is not cancelled), so the next head over-admits. (Fail-open
/// does too, but its two-heads story is shorter, so that is the one shown.)
#[test]
fn finding_dead_lettering_a_running_build_over_admits() {
    for design in ["claim-first", "owner-keyed"] {
        let m = model(design, 2, 1, 0, 1);
        let outcome = run(m);
        assert_eq!(
            verdict(&outcome, "builds-within-limit"),
            Verdict::Violated,
            "{design}"
        );
        let story = story(&outcome, &m, "builds-within-limit");
        assert!(
            story.iter().any(|s| s.actor.contains("(dlq R")),
            "{design}: the DLQ takes part: {story:#?}"
        );
    }
}

/// Beyond the source: a stalled first delivery claims a slot for a request its
/// redelivery already superseded, then crashes before the processing write
/// that would have unwound it; the message is acked, so nothing releases it.
#[test]
fn finding_owner_keyed_wedges_under_one_stall_and_one_crash() {
    let m = model("owner-keyed", 2, 1, 1, 2);
    let outcome = run(m);
    assert_eq!(verdict(&outcome, "no-wedge"), Verdict::Violated);
    assert_eq!(verdict(&outcome, "count-not-high"), Verdict::Violated);
    let story = story(&outcome, &m, "no-wedge");
    let superseded = position(&story, |s| s.action == "CAS R1 accepted -> superseded")
        .expect("the redelivery supersedes R1");
    let late_claim = position(&story, |s| {
        s.actor.contains("(process R1, delivery 1)") && s.action.contains("{} -> {R1}")
    })
    .expect("the stalled first delivery claims afterwards");
    let crash = position(&story, |s| {
        s.action == "crash; process(R1) was already handed out again and is gone"
    })
    .expect("then it crashes, its message already acked by the redelivery");
    assert!(superseded < late_claim && late_claim < crash, "{story:#?}");
    // Without the crash the stale claim unwinds: no wedge with stalls alone.
    let stalls_only = run(model("owner-keyed", 2, 0, 1, 2));
    assert_eq!(verdict(&stalls_only, "no-wedge"), Verdict::Holds);
}

/// The contract's finer reading, `split-read` (R, the queue and the head read
/// in three steps), changes no verdict under crashes; each read just takes
/// three steps, so SP-OCT-003's two reads make its story 4 steps longer.
#[test]
fn split_read_gives_the_same_verdicts_under_crashes() {
    use slotcheck_models::NamedOptions;
    for design in ["claim-first", "fail-open", "owner-keyed"] {
        let snapshot = model(design, 2, 1, 0, 2);
        let mut split = snapshot;
        split.options.set("split-read").unwrap();
        let (a, b) = (run(snapshot), run(split));
        for (x, y) in a.results.iter().zip(&b.results) {
            assert_eq!(x.verdict, y.verdict, "{design} {}", x.name);
        }
        assert!(b.stats.unique > a.stats.unique, "more interleavings");
    }
    let mut m = model("claim-first", 1, 1, 0, 2);
    m.options.set("split-read").unwrap();
    let outcome = run(m);
    let steps = outcome
        .result("no-wedge")
        .unwrap()
        .trace
        .as_ref()
        .unwrap()
        .steps();
    assert_eq!(steps, 8 + 2 * 2);
}
