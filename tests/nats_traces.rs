//! The link traces the real-server tests replay (nats/tests/traces, made by
//! scripts/nats-traces.sh) still replay on the model and still violate
//! their property: when the model changes, this says they need making
//! again, so that the server is never asked to follow a story the model no
//! longer tells.

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
    assert_eq!(seen, 5);
}
