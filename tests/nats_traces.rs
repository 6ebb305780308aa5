//! The link traces the real-server tests replay (nats/tests/traces, made by
//! scripts/nats-traces.sh) still replay on the model and still violate
//! their property: when the model changes, this says they need making
//! again, so that the server is never asked to follow a story the model no
//! longer tells. And the stories the source's builder cannot follow are
//! refused before any server starts.

mod common;

#[test]
fn every_nats_trace_still_replays_on_the_model() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/nats/tests/traces");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let out = common::slotcheck(&["replay", path.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}: no longer replays to its violation on the model; run scripts/nats-traces.sh\n{}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        seen += 1;
    }
    // One a row of docs/real-jetstream.md, Each finding on the real server,
    // and after-1649-repaired's two (The recommendation on the server).
    assert_eq!(seen, 19);
}

/// An `atomic-start` story (the KV get and put of the running key in one
/// step) is not a behaviour of the source's builder, which does them in two
/// round trips: `replay --on nats` says so and starts no server.
#[cfg(feature = "real")]
#[test]
fn replay_on_nats_refuses_an_atomic_start_story() {
    let out_dir = common::scratch("nats_traces", "atomic-start");
    let check = common::slotcheck(&[
        "check",
        "--model",
        "link",
        "--design",
        "check-only",
        "--property",
        "no-double-run",
        "--option",
        "atomic-start",
        "--asks",
        "2",
        "--builders",
        "2",
        "--skew",
        "15",
        "--horizon",
        "60",
        "--longest-build",
        "60",
        "--crashes",
        "0",
        "--late-heartbeats",
        "0",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(common::code(&check), 1, "{}", common::stderr(&check));
    let trace = out_dir.join("check-only-no-double-run-check.itf.json");
    let replay = common::slotcheck(&["replay", "--on", "nats", trace.to_str().unwrap()]);
    assert_eq!(common::code(&replay), 2, "{}", common::stdout(&replay));
    let said = common::stderr(&replay);
    assert!(
        said.contains("`atomic-start` makes the KV get and the put of the running key one step")
            && said.contains("a get, then a put"),
        "{said}"
    );
    assert!(
        !common::stdout(&replay).contains("replay on a real nats-server"),
        "no replay ran"
    );
}
