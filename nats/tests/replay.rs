//! Each link finding's story (tests/traces, from `scripts/nats-traces.sh`)
//! run on a real nats-server, and judged from the server's evidence; the Go
//! builder's replays (`replay_go.rs`) are this binary's module `go`. One
//! server for this file's replays; each replay has its own stream and
//! buckets.

mod clocked;
#[path = "replay_go.rs"]
mod go;

use slotcheck_nats::design::Design;
use slotcheck_nats::replay::{replay, Options, Outcome, Verdict};
use slotcheck_nats::script::Script;
use slotcheck_nats::server::Server;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

fn server() -> SocketAddr {
    static SERVER: OnceLock<Server> = OnceLock::new();
    let server = SERVER.get_or_init(|| Server::start().expect("a private nats-server"));
    format!("127.0.0.1:{}", server.port()).parse().unwrap()
}

fn script(name: &str) -> Script {
    let path = format!(
        "{}/tests/traces/{name}.itf.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Script::of_itf(&serde_json::from_str(&text).unwrap()).unwrap()
}

fn run(name: &str, run: &str, options: Options) -> Outcome {
    let script = script(name);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcome = runtime
        .block_on(replay(server(), run, &script, &options))
        .unwrap();
    clocked::say(outcome.text());
    // Every line is one of `slotcheck validate`'s events (validate itself
    // checks stovepipe logs only so far).
    let log = slotcheck_models::events::parse(run, &outcome.log).unwrap();
    assert!(
        log.entries.len() > script.asks.len(),
        "the asks published and more"
    );
    outcome
}

/// Replays a finding's trace and asserts the server reproduced it.
fn reproduced(name: &str, run_name: &str, options: Options) -> Outcome {
    let outcome = run(name, run_name, options);
    assert_eq!(outcome.verdict, Verdict::Reproduced, "{name}");
    outcome
}

fn options() -> Options {
    Options::default()
}

fn late_answers(outcome: &Outcome) -> usize {
    outcome
        .log
        .lines()
        .filter(|l| l.contains("\"late_answer\""))
        .count()
}

/// Who put each ask's running key, from the bucket's history.
fn key_putters(outcome: &Outcome, ask: &str) -> Vec<String> {
    outcome
        .evidence
        .asks
        .iter()
        .find(|a| a.ask == ask)
        .map(|a| a.running_key_history.clone())
        .unwrap_or_default()
}

fn before_1649_builds_a_late_answer_twice() {
    let outcome = reproduced(
        "before-1649-late-answer-double-run",
        "late_answer",
        options(),
    );
    assert_eq!(
        late_answers(&outcome),
        1,
        "one answer landed after its fetch gave up"
    );
    let twice = &outcome.violations.double_runs;
    assert_eq!(twice.len(), 1);
    // The server's side: the ask was delivered twice, and both builders put its key.
    let ask = &outcome.builds.last().unwrap().ask;
    assert_eq!(key_putters(&outcome, ask), ["b1", "b2"]);
    assert_eq!(
        outcome.evidence.delivered, 3,
        "two asks, one of them delivered again"
    );
}

fn before_1649_builds_twice_when_a_heartbeat_is_50s_late() {
    let outcome = reproduced(
        "before-1649-late-heartbeat-double-run",
        "late_heartbeat",
        options(),
    );
    assert_eq!(late_answers(&outcome), 0);
    assert_eq!(key_putters(&outcome, "A1"), ["b1", "b2"]);
    assert_eq!(outcome.evidence.delivered, 2);
}

fn check_only_loses_an_ask_started_late_from_a_buffer() {
    let outcome = reproduced(
        "check-only-loses-late-started-ask",
        "late_started",
        options(),
    );
    one_ask_acked_away_unbuilt(&outcome);
}

fn check_only_builds_twice_between_the_get_and_the_put() {
    reproduced("check-only-get-put-double-run", "get_put", options());
}

fn after_1649_loses_an_ask_at_a_skew_of_40s_and_not_at_35s() {
    reproduced("after-1649-skew-40-loses-ask", "skew_40", options());
    let at_35 = run(
        "after-1649-skew-40-loses-ask",
        "skew_35",
        Options {
            skew_s: Some(35),
            ..options()
        },
    );
    // At 35 s the key reads 25 s old, not fresh: b1 runs the redelivery
    // where the 40 s story drops it.
    match at_35.verdict {
        Verdict::Diverged(why) => assert!(why.contains("decided to run it"), "{why}"),
        other => panic!("at 35 s: {other:?}"),
    }
}

/// The held question: after-1649's builder on the story of check-only,
/// with the network delaying its link past the fetch margin.
fn after_1649_builds_twice_and_loses_an_ask_when_the_delay_beats_its_margin() {
    let after = |name, run_name| {
        run(
            name,
            run_name,
            Options {
                design: Some(Design::AFTER_1649),
                ..options()
            },
        )
    };
    let twice = after("check-only-get-put-double-run", "delay_twice");
    assert_eq!(twice.verdict, Verdict::Reproduced);
    assert_eq!(late_answers(&twice), 1);
    let lost = after("check-only-loses-late-started-ask", "delay_lost");
    assert_eq!(lost.verdict, Verdict::Reproduced);
    assert_eq!(late_answers(&lost), 1);
}

/// And without the delay the margin holds: the fetch gets its answer.
fn after_1649_without_delay_gets_its_answer_within_the_fetch() {
    let outcome = run(
        "check-only-get-put-double-run",
        "no_delay",
        Options {
            design: Some(Design::AFTER_1649),
            late_delay: Some(Duration::ZERO),
            ..options()
        },
    );
    match &outcome.verdict {
        Verdict::Diverged(why) => assert!(why.contains("did not give up"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(late_answers(&outcome), 0);
}

/// The ask's evidence from the server: its message, result and key history.
fn ask_evidence<'a>(outcome: &'a Outcome, ask: &str) -> &'a slotcheck_nats::bus::AskEvidence {
    outcome
        .evidence
        .asks
        .iter()
        .find(|a| a.ask == ask)
        .unwrap_or_else(|| panic!("no evidence of {ask}"))
}

fn check_only_builds_twice_when_a_clock_is_15s_ahead() {
    let outcome = reproduced("check-only-skew-15-double-run", "skew_15", options());
    assert_eq!(outcome.violations.double_runs.len(), 1);
    assert_eq!(late_answers(&outcome), 1);
    assert_eq!(
        outcome.evidence.delivered, 3,
        "two asks, one of them delivered again"
    );
}

fn after_1649_builds_twice_when_a_heartbeat_is_50s_late() {
    let outcome = reproduced(
        "after-1649-late-heartbeat-double-run",
        "after_late_twice",
        options(),
    );
    assert_eq!(key_putters(&outcome, "A1"), ["b1", "b2"]);
    assert_eq!(outcome.evidence.delivered, 2);
}

fn after_1649_loses_an_ask_when_a_heartbeat_is_50s_late_and_its_builder_crashes() {
    let outcome = reproduced(
        "after-1649-late-heartbeat-loses-ask",
        "after_late_lost",
        options(),
    );
    // b2 read b1's fresh key and acked the redelivery away; only b1 ever
    // put the key, and b1 died before its result.
    let a1 = ask_evidence(&outcome, "A1");
    assert!(!a1.in_stream && a1.result_by.is_none());
    assert_eq!(a1.running_key_history, ["b1", "b1"]);
    assert_eq!(outcome.evidence.delivered, 2);
}

fn after_1649_builds_a_finished_ask_again_when_its_ack_is_lost() {
    let outcome = reproduced("after-1649-lost-ack-rebuild", "lost_ack", options());
    // The result is announced and the key deleted, yet the message stayed
    // and came back after the ack wait, to find no key.
    let a1 = ask_evidence(&outcome, "A1");
    assert_eq!(a1.result_by.as_deref(), Some("b1"));
    assert!(a1.in_stream);
    assert_eq!(a1.running_key_history, ["b1", "(deleted)", "b1"]);
    assert_eq!(
        (outcome.evidence.delivered, outcome.evidence.redelivered),
        (2, 1)
    );
}

fn after_1649_loses_an_ask_to_a_crash_and_two_naks() {
    let outcome = reproduced("after-1649-naks-exhaust-deliveries", "naks", options());
    // Three deliveries (the crashed one and two naked at once), none of
    // them built: the message stays in the stream, never handed out again.
    let naks = outcome
        .log
        .lines()
        .filter(|l| l.contains("\"nak\""))
        .count();
    assert_eq!(naks, 2);
    assert_eq!(outcome.evidence.delivered, 3);
    let a1 = ask_evidence(&outcome, "A1");
    assert!(a1.in_stream && a1.result_by.is_none());
    assert!(a1.running_key_history.is_empty(), "never built");
}

fn after_1649_builds_twice_when_an_answer_is_slower_than_its_margin() {
    let outcome = reproduced("after-1649-slow-answer-double-run", "slow_twice", options());
    assert_eq!(late_answers(&outcome), 1);
    assert_eq!(outcome.violations.double_runs.len(), 1);
    assert_eq!(outcome.evidence.delivered, 3);
}

fn after_1649_loses_an_ask_when_an_answer_is_slower_than_its_margin() {
    let outcome = reproduced("after-1649-slow-answer-loses-ask", "slow_lost", options());
    assert_eq!(late_answers(&outcome), 1);
    one_ask_acked_away_unbuilt(&outcome);
}

fn after_1649_builds_after_a_result_when_an_answer_is_slower_than_its_margin() {
    let outcome = reproduced(
        "after-1649-slow-answer-run-after-result",
        "slow_after",
        options(),
    );
    assert_eq!(late_answers(&outcome), 1);
    assert_eq!(outcome.violations.runs_after_result.len(), 1);
}

fn after_1649_at_an_ack_wait_of_15s_builds_after_a_result() {
    let outcome = reproduced(
        "after-1649-ack-wait-15-run-after-result",
        "ack_wait_15",
        options(),
    );
    // The redelivery came while its first builder still built it (its
    // heartbeat late by less than the source's period), and the other read
    // it after that finish had deleted the key.
    assert_eq!(outcome.violations.runs_after_result.len(), 1);
    // The ask built again (which of the two the shortest story picks
    // is the search's): its key put by one builder, deleted by its
    // finish, put again by the other.
    let ask = &outcome.builds.last().unwrap().ask;
    let history = key_putters(&outcome, ask);
    assert_eq!(history.len(), 3, "{history:?}");
    assert_eq!(history[1], "(deleted)");
    assert_ne!(history[0], history[2]);
    assert_eq!(outcome.evidence.delivered, 3);
}

/// One ask has no result and is gone from the stream: the duplicate check
/// acked it away without building it.
fn one_ask_acked_away_unbuilt(outcome: &Outcome) {
    let lost: Vec<_> = outcome
        .evidence
        .asks
        .iter()
        .filter(|a| a.result_by.is_none())
        .collect();
    assert_eq!(lost.len(), 1);
    assert!(!lost[0].in_stream, "the duplicate check acked it away");
}

/// A builder's replay of a story: its name, the run's name, the options.
pub(crate) type Run = fn(&str, &str, Options) -> Outcome;

/// The recommendation on the server, through a builder (its `run` and
/// options): its two findings reproduce.
pub(crate) fn repaired_reproduces_its_findings(run: Run, base: fn() -> Options) {
    let twice = run(
        "after-1649-repaired-late-heartbeat-double-run",
        "repaired_twice",
        base(),
    );
    assert_eq!(twice.verdict, Verdict::Reproduced);
    assert_eq!(key_putters(&twice, "A1"), ["b1", "b2"]);
    let naks = run(
        "after-1649-repaired-naks-exhaust-deliveries",
        "repaired_naks",
        base(),
    );
    assert_eq!(naks.verdict, Verdict::Reproduced);
    assert_eq!(naks.evidence.delivered, 3);
}

/// nats-server 2.9's failed redelivery, steered (a pull request expired
/// when the consumer takes the redelivery, `Bus::expired_pull`), through a
/// builder: its three findings reproduce, each with A2 handed out again
/// counted 1 (its `server` lines: both deliveries of A2 say 1) and three
/// deliveries in the consumer's count (the failed one is none).
pub(crate) fn rewinds_reproduce(run: Run, base: fn() -> Options) {
    let counted_one = |outcome: &Outcome| {
        outcome
            .log
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|l| l["event"] == "server" && l["ask"] == "A2" && l["num_delivered"] == 1)
            .count()
    };
    let rebuild = run("after-1649-rewind-rebuild", "rewind_rebuild", base());
    assert_eq!(rebuild.verdict, Verdict::Reproduced);
    let history = key_history(&rebuild, "A2");
    assert_eq!(
        history.last().map(String::as_str),
        Some("b1"),
        "{history:?}"
    );
    assert!(history.contains(&"(deleted)".to_string()), "{history:?}");
    let nak = run("after-1649-rewind-nak-double-run", "rewind_nak", base());
    assert_eq!(nak.verdict, Verdict::Reproduced);
    assert_eq!(key_history(&nak, "A2"), ["b1", "b2"]);
    let skew = run(
        "after-1649-rewind-skew-35-double-run",
        "rewind_skew",
        base(),
    );
    assert_eq!(skew.verdict, Verdict::Reproduced);
    assert_eq!(
        key_history(&skew, "A2").last().map(String::as_str),
        Some("b2")
    );
    for outcome in [&rebuild, &nak, &skew] {
        assert_eq!(counted_one(outcome), 2, "A2 counted 1 twice");
        assert_eq!(outcome.evidence.delivered, 3);
    }
}

/// The running key's history of `ask`, from the bucket.
fn key_history(outcome: &Outcome, ask: &str) -> Vec<String> {
    ask_evidence(outcome, ask).running_key_history.clone()
}

/// The recommendation on after-1649's stories: each stops where a repair
/// acts (or runs to its end), and the server's evidence shows no violation
/// of the story's property. All at once: each waits on the clock.
pub(crate) fn repaired_stops_the_stories_of_after_1649(run: Run, base: fn() -> Options) {
    let repaired = Design::parse("after-1649-repaired").unwrap();
    let stories = [
        // Hand-back: the late answer went back at once; b1 holds nothing to read.
        (
            "after-1649-slow-answer-double-run",
            Some("(read b1)"),
            "read None",
        ),
        // The done key: the redelivery after the lost ack is dropped.
        (
            "after-1649-lost-ack-rebuild",
            Some("(read b1)"),
            "decided to drop it",
        ),
        // The server clock: 40 s of skew do not make the crashed key fresh.
        (
            "after-1649-skew-40-loses-ask",
            Some("(read b2)"),
            "decided to run it",
        ),
        // The duplicate deferred: left to its ack wait, not acked away.
        ("after-1649-late-heartbeat-loses-ask", None, ""),
        // nats-server 2.9's failed redelivery: the revision-checked start
        // fails the second put; the done key and the server clock drop the
        // copy handed out again.
        (
            "after-1649-rewind-nak-double-run",
            Some("(start b2)"),
            "revision-checked put",
        ),
        (
            "after-1649-rewind-rebuild",
            Some("(read b1)"),
            "decided to drop it",
        ),
        (
            "after-1649-rewind-skew-35-double-run",
            Some("(read b2)"),
            "decided to drop it",
        ),
    ];
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let runs: Vec<_> = stories
            .iter()
            .map(|&(story, _, _)| {
                scope.spawn(move || {
                    run(
                        story,
                        &format!("repaired_{}", story.replace('-', "_")),
                        Options {
                            design: Some(repaired),
                            ..base()
                        },
                    )
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for ((story, stops_at, why), outcome) in stories.into_iter().zip(outcomes) {
        clocked::say(outcome.text());
        match (&outcome.verdict, stops_at) {
            (Verdict::Diverged(said), Some(step)) => {
                assert!(said.contains(step) && said.contains(why), "{story}: {said}")
            }
            (Verdict::NotReproduced, None) => {}
            (other, _) => panic!("{story}: {other:?}"),
        }
        assert!(
            outcome.violations.of_property(&outcome.property).is_empty(),
            "{story}: the evidence shows {} violated",
            outcome.property
        );
    }
}

fn after_1649_repaired_reproduces_its_findings_on_the_server() {
    repaired_reproduces_its_findings(run, options);
}

fn after_1649_repaired_stops_the_stories_of_after_1649_on_the_server() {
    repaired_stops_the_stories_of_after_1649(run, options);
}

fn after_1649_rebuilds_and_builds_twice_when_the_server_fails_a_redelivery() {
    rewinds_reproduce(run, options);
}

/// This file's replays, longest first.
const TESTS: &[(&str, fn())] = clocked::named![
    after_1649_repaired_stops_the_stories_of_after_1649_on_the_server,
    after_1649_builds_twice_and_loses_an_ask_when_the_delay_beats_its_margin,
    after_1649_repaired_reproduces_its_findings_on_the_server,
    before_1649_builds_a_late_answer_twice,
    before_1649_builds_twice_when_a_heartbeat_is_50s_late,
    check_only_loses_an_ask_started_late_from_a_buffer,
    check_only_builds_twice_between_the_get_and_the_put,
    after_1649_loses_an_ask_at_a_skew_of_40s_and_not_at_35s,
    after_1649_without_delay_gets_its_answer_within_the_fetch,
    check_only_builds_twice_when_a_clock_is_15s_ahead,
    after_1649_builds_twice_when_a_heartbeat_is_50s_late,
    after_1649_loses_an_ask_when_a_heartbeat_is_50s_late_and_its_builder_crashes,
    after_1649_builds_a_finished_ask_again_when_its_ack_is_lost,
    after_1649_loses_an_ask_to_a_crash_and_two_naks,
    after_1649_builds_twice_when_an_answer_is_slower_than_its_margin,
    after_1649_loses_an_ask_when_an_answer_is_slower_than_its_margin,
    after_1649_builds_after_a_result_when_an_answer_is_slower_than_its_margin,
    after_1649_at_an_ack_wait_of_15s_builds_after_a_result,
    after_1649_rebuilds_and_builds_twice_when_the_server_fails_a_redelivery,
];

/// The replays through the reference builder, and as `go::` those through
/// the Go builder (`replay_go.rs`), in one binary: twelve at a time.
fn main() {
    clocked::main(&[
        clocked::Group {
            prefix: "",
            tests: TESTS,
            nightly: &[],
            missing: cfg!(no_nats_server),
        },
        clocked::Group {
            prefix: "go::",
            tests: go::TESTS,
            nightly: go::NIGHTLY,
            missing: cfg!(any(no_nats_server, no_go)),
        },
    ]);
}
