//! Each link finding's story (tests/traces) run on a real nats-server
//! through the Go builder (go/src/slotcheck/builder, on Debian's nats.go),
//! driven step by step, and judged from the server's evidence as
//! tests/replay.rs does for the reference builder, whose binary holds this
//! file as its module `go`. One server for this module's replays; each
//! replay has its own stream and buckets.

use super::clocked;

use slotcheck_nats::bus::{Bus, Names};
use slotcheck_nats::design::{Design, Timing};
use slotcheck_nats::gobuilder::GoBuilder;
use slotcheck_nats::log::Log;
use slotcheck_nats::machine::BuilderKind;
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

fn go() -> Options {
    Options {
        builder: BuilderKind::Go,
        ..Options::default()
    }
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
    // The Go builder's events are `slotcheck validate`'s.
    let log = slotcheck_models::events::parse(run, &outcome.log).unwrap();
    assert!(log.entries.len() > script.asks.len());
    assert!(
        outcome.log.lines().any(|l| l.contains("\"actor\":\"b1\"")),
        "the Go builder's own events are in the log"
    );
    outcome
}

fn reproduced(name: &str, run_name: &str) -> Outcome {
    let outcome = run(name, run_name, go());
    assert_eq!(outcome.verdict, Verdict::Reproduced, "{name}");
    outcome
}

fn late_answers(outcome: &Outcome) -> usize {
    outcome
        .log
        .lines()
        .filter(|l| l.contains("\"late_answer\""))
        .count()
}

fn key_putters(outcome: &Outcome, ask: &str) -> Vec<String> {
    ask_evidence(outcome, ask).running_key_history.clone()
}

fn ask_evidence<'a>(outcome: &'a Outcome, ask: &str) -> &'a slotcheck_nats::bus::AskEvidence {
    outcome
        .evidence
        .asks
        .iter()
        .find(|a| a.ask == ask)
        .unwrap_or_else(|| panic!("no evidence of {ask}"))
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

fn before_1649_builds_a_late_answer_twice() {
    let outcome = reproduced("before-1649-late-answer-double-run", "late_answer");
    assert_eq!(late_answers(&outcome), 1);
    assert_eq!(outcome.violations.double_runs.len(), 1);
    let ask = &outcome.builds.last().unwrap().ask;
    assert_eq!(key_putters(&outcome, ask), ["b1", "b2"]);
    assert_eq!(outcome.evidence.delivered, 3);
}

fn before_1649_builds_twice_when_a_heartbeat_is_50s_late() {
    let outcome = reproduced("before-1649-late-heartbeat-double-run", "late_heartbeat");
    assert_eq!(late_answers(&outcome), 0);
    assert_eq!(key_putters(&outcome, "A1"), ["b1", "b2"]);
    assert_eq!(outcome.evidence.delivered, 2);
}

fn check_only_loses_an_ask_started_late_from_a_buffer() {
    let outcome = reproduced("check-only-loses-late-started-ask", "late_started");
    assert_eq!(late_answers(&outcome), 1);
    one_ask_acked_away_unbuilt(&outcome);
}

fn check_only_builds_twice_between_the_get_and_the_put() {
    let outcome = reproduced("check-only-get-put-double-run", "get_put");
    assert_eq!(outcome.violations.double_runs.len(), 1);
}

fn check_only_builds_twice_when_a_clock_is_15s_ahead() {
    let outcome = reproduced("check-only-skew-15-double-run", "skew_15");
    assert_eq!(outcome.violations.double_runs.len(), 1);
    assert_eq!(late_answers(&outcome), 1);
    assert_eq!(outcome.evidence.delivered, 3);
}

fn after_1649_loses_an_ask_at_a_skew_of_40s_and_not_at_35s() {
    reproduced("after-1649-skew-40-loses-ask", "skew_40");
    let at_35 = run(
        "after-1649-skew-40-loses-ask",
        "skew_35",
        Options {
            skew_s: Some(35),
            ..go()
        },
    );
    match at_35.verdict {
        Verdict::Diverged(why) => assert!(why.contains("decided to run it"), "{why}"),
        other => panic!("at 35 s: {other:?}"),
    }
}

// The nightly's (`cargo test --release -p slotcheck-nats --test replay
// -- --ignored go::`): within CI's time the test command replays this finding
// through the Rust builder (tests/replay.rs) and its slow-answer twin
// through nats.go.
fn after_1649_builds_twice_and_loses_an_ask_when_the_delay_beats_its_margin() {
    let after = |name, run_name| {
        run(
            name,
            run_name,
            Options {
                design: Some(Design::AFTER_1649),
                ..go()
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

fn after_1649_builds_twice_when_a_heartbeat_is_50s_late() {
    let outcome = reproduced("after-1649-late-heartbeat-double-run", "after_late_twice");
    assert_eq!(key_putters(&outcome, "A1"), ["b1", "b2"]);
    assert_eq!(outcome.evidence.delivered, 2);
}

fn after_1649_loses_an_ask_when_a_heartbeat_is_50s_late_and_its_builder_crashes() {
    let outcome = reproduced("after-1649-late-heartbeat-loses-ask", "after_late_lost");
    let a1 = ask_evidence(&outcome, "A1");
    assert!(!a1.in_stream && a1.result_by.is_none());
    assert_eq!(a1.running_key_history, ["b1", "b1"]);
    assert_eq!(outcome.evidence.delivered, 2);
}

fn after_1649_builds_a_finished_ask_again_when_its_ack_is_lost() {
    let outcome = reproduced("after-1649-lost-ack-rebuild", "lost_ack");
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
    let outcome = reproduced("after-1649-naks-exhaust-deliveries", "naks");
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
    let outcome = reproduced("after-1649-slow-answer-double-run", "slow_twice");
    assert_eq!(late_answers(&outcome), 1);
    assert_eq!(outcome.violations.double_runs.len(), 1);
    assert_eq!(outcome.evidence.delivered, 3);
}

// The nightly's (`cargo test --release -p slotcheck-nats --test replay
// -- --ignored go::`): within CI's time the test command replays this finding
// through the Rust builder (tests/replay.rs) and its slow-answer twin
// through nats.go.
fn after_1649_loses_an_ask_when_an_answer_is_slower_than_its_margin() {
    let outcome = reproduced("after-1649-slow-answer-loses-ask", "slow_lost");
    assert_eq!(late_answers(&outcome), 1);
    one_ask_acked_away_unbuilt(&outcome);
}

// The nightly's (`cargo test --release -p slotcheck-nats --test replay
// -- --ignored go::`): within CI's time the test command replays this finding
// through the Rust builder (tests/replay.rs) and its slow-answer twin
// through nats.go.
fn after_1649_builds_after_a_result_when_an_answer_is_slower_than_its_margin() {
    let outcome = reproduced("after-1649-slow-answer-run-after-result", "slow_after");
    assert_eq!(late_answers(&outcome), 1);
    assert_eq!(outcome.violations.runs_after_result.len(), 1);
}

fn after_1649_at_an_ack_wait_of_15s_builds_after_a_result() {
    let outcome = reproduced("after-1649-ack-wait-15-run-after-result", "ack_wait_15");
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

/// A Go builder connected to a run's stream and buckets on the shared
/// server.
fn with_builder<T>(run: &str, body: impl AsyncFnOnce(GoBuilder, Bus) -> T) -> T {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let names = Names::of(run);
        let timing = Timing::default();
        let log = Log::new(&Default::default(), &names.stream);
        let url = format!("nats://{}", server());
        let bus = Bus::create(&url, names.clone(), timing, 3, log.clone())
            .await
            .unwrap();
        let builder = GoBuilder::launch("b1", Design::AFTER_1649, timing, 0, &url, &names, &log)
            .await
            .unwrap();
        body(builder, bus).await
    })
}

/// Whether a process still runs (a zombie waiting to be reaped does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// A builder process that dies is an error naming the builder and the
/// step, at once, not a hang.
fn a_go_builder_that_dies_is_an_error_naming_it_and_the_step() {
    let (error, took) = with_builder("dies", async |mut builder, mut bus| {
        bus.publish("A1").await.unwrap();
        let pid = builder.pid().unwrap();
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        builder.at_step("step 1 (fetch b1)");
        let began = std::time::Instant::now();
        let error = builder.fetch().await.unwrap_err().to_string();
        (error, began.elapsed())
    });
    assert!(
        error.contains("the Go builder b1") && error.contains("step 1 (fetch b1)"),
        "{error}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// Without its stream the builder cannot start: the error says why, in the
/// builder's own words.
fn a_go_builder_that_cannot_bind_says_why() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let error = runtime.block_on(async {
        let names = Names::of("no_such_run");
        let log = Log::new(&Default::default(), &names.stream);
        let url = format!("nats://{}", server());
        GoBuilder::launch(
            "b1",
            Design::AFTER_1649,
            Timing::default(),
            0,
            &url,
            &names,
            &log,
        )
        .await
        .err()
        .unwrap()
        .to_string()
    });
    assert!(
        error.contains("the Go builder b1") && error.contains("its start"),
        "{error}"
    );
    assert!(error.contains("pull subscribe"), "{error}");
}

/// No builder process outlives its handle: stopped, it exits; dropped, it
/// is killed.
fn no_go_builder_outlives_its_handle() {
    let stopped = with_builder("stopped", async |mut builder, _bus| {
        let pid = builder.pid().unwrap();
        builder.stop().await;
        pid
    });
    assert!(!alive(stopped), "stopped builder {stopped} still runs");
    let dropped = with_builder("dropped", async |builder, _bus| builder.pid().unwrap());
    std::thread::sleep(Duration::from_millis(200));
    assert!(!alive(dropped), "dropped builder {dropped} still runs");
}

/// The recommendation on the server, through the Go builder: as the
/// reference builder's (`replay.rs`).
fn after_1649_repaired_reproduces_its_findings_on_the_server() {
    super::repaired_reproduces_its_findings(run, go);
}

fn after_1649_repaired_stops_the_stories_of_after_1649_on_the_server() {
    super::repaired_stops_the_stories_of_after_1649(run, go);
}

/// nats-server 2.9's failed redelivery through the Go builder: as the
/// reference builder's (`replay.rs`).
fn after_1649_rebuilds_and_builds_twice_when_the_server_fails_a_redelivery() {
    super::rewinds_reproduce(run, go);
}

/// This file's replays, longest first (`replay.rs` runs them, as `go::`).
pub const TESTS: &[(&str, fn())] = clocked::named![
    after_1649_repaired_stops_the_stories_of_after_1649_on_the_server,
    after_1649_builds_twice_and_loses_an_ask_when_the_delay_beats_its_margin,
    after_1649_repaired_reproduces_its_findings_on_the_server,
    before_1649_builds_a_late_answer_twice,
    before_1649_builds_twice_when_a_heartbeat_is_50s_late,
    check_only_loses_an_ask_started_late_from_a_buffer,
    check_only_builds_twice_between_the_get_and_the_put,
    check_only_builds_twice_when_a_clock_is_15s_ahead,
    after_1649_loses_an_ask_at_a_skew_of_40s_and_not_at_35s,
    after_1649_builds_twice_when_a_heartbeat_is_50s_late,
    after_1649_loses_an_ask_when_a_heartbeat_is_50s_late_and_its_builder_crashes,
    after_1649_builds_a_finished_ask_again_when_its_ack_is_lost,
    after_1649_loses_an_ask_to_a_crash_and_two_naks,
    after_1649_builds_twice_when_an_answer_is_slower_than_its_margin,
    after_1649_loses_an_ask_when_an_answer_is_slower_than_its_margin,
    after_1649_builds_after_a_result_when_an_answer_is_slower_than_its_margin,
    after_1649_at_an_ack_wait_of_15s_builds_after_a_result,
    a_go_builder_that_dies_is_an_error_naming_it_and_the_step,
    a_go_builder_that_cannot_bind_says_why,
    no_go_builder_outlives_its_handle,
    after_1649_rebuilds_and_builds_twice_when_the_server_fails_a_redelivery,
];

/// Nightly: the slow-answer replays through nats.go (the Rust builder
/// replays them in the test command).
pub const NIGHTLY: &[&str] = &[
    "after_1649_builds_twice_and_loses_an_ask_when_the_delay_beats_its_margin",
    "after_1649_loses_an_ask_when_an_answer_is_slower_than_its_margin",
    "after_1649_builds_after_a_result_when_an_answer_is_slower_than_its_margin",
];
