//! PostgreSQL, the third engine: a private cluster (initdb into a temporary
//! folder, the server on a Unix socket as an unprivileged user) that is gone,
//! process and folder, once dropped; `replay --on postgres` and `live --on
//! postgres` from the command line; and the admit transaction's plain
//! `SELECT`, which loses updates at READ COMMITTED, while REPEATABLE READ
//! and SERIALIZABLE refuse the second writer (a serialization failure,
//! retried) and keep every invariant.

#![cfg(feature = "real")]

mod common;

use common::{code, stdout};
use slotcheck_sql::postgres::{self, Server};

fn alive(pid: &str) -> bool {
    std::process::Command::new("kill")
        .args(["-0", pid])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "PostgreSQL is not installed (apt-get install postgresql)"
)]
fn a_private_cluster_is_gone_once_dropped() {
    if let Some(why) = postgres::missing() {
        panic!("{why}");
    }
    let server = Server::start().expect("a private cluster");
    let dir = server.socket_dir();
    let pid = std::fs::read_to_string(dir.join("data/postmaster.pid"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .trim()
        .to_string();
    assert!(alive(&pid), "the server runs");
    let mut client = server.connect().unwrap();
    let row = client
        .query_one("SELECT current_setting('listen_addresses')", &[])
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "", "no TCP");
    drop(client);
    drop(server);
    assert!(!dir.exists(), "{} is left", dir.display());
    assert!(!alive(&pid), "the server {pid} outlived its drop");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "PostgreSQL is not installed (apt-get install postgresql)"
)]
fn replay_and_live_run_on_postgres_from_the_command_line() {
    let dir = common::scratch("postgres", "replay");
    let saved = common::slotcheck(&[
        "check",
        "--design",
        "claim-first",
        "--requests",
        "1",
        "--stalls",
        "0",
        "--property",
        "count-not-high",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&saved), 1);
    let trace = dir.join("claim-first-count-not-high-check.itf.json");
    let out = common::slotcheck(&["replay", "--on", "postgres", trace.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}{}", common::stderr(&out));
    assert!(text.contains("count-not-high violated"), "{text}");
    let out = common::slotcheck(&[
        "live", "--on", "postgres", "--runs", "1", "--queues", "8", "--seed", "1",
    ]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}{}", common::stderr(&out));
    assert!(text.contains("the model explains every one"), "{text}");
}

/// The admit transaction's rows read with a plain `SELECT`: at READ
/// COMMITTED an admit may read the queue row just before another admit
/// commits, then write over that admit's owners (a lost update: the log
/// departs at the claim that won on a stale version, and two builds may
/// run at K = 1); at REPEATABLE
/// READ and SERIALIZABLE PostgreSQL refuses the second writer's update of
/// a row changed since its snapshot (40001), the step is retried from the
/// read, and every invariant holds.
// (The steered test below finds it in run 1.) A hunt of up to 200 live runs (a minute or more): the nightly runs it
// (`cargo test --release --test postgres -- --ignored`), within CI's time the
// test command does not. Without PostgreSQL it fails, as under CI.
#[test]
#[ignore = "nightly: a hunt of up to 200 live runs on PostgreSQL"]
fn a_plain_admit_read_loses_updates_only_at_read_committed() {
    if let Some(why) = slotcheck_sql::postgres::missing() {
        panic!("{why}");
    }
    // Runs until a queue's log departs or an invariant breaks (the window,
    // a commit between the other admit's read and its UPDATE, is hit in
    // about one run in ten), at most 200.
    let out = common::slotcheck(&[
        "live",
        "--on",
        "postgres",
        "--isolation",
        "read-committed",
        "--tx-read",
        "plain",
        "--runs",
        "200",
        "--seed",
        "1",
    ]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}{}", common::stderr(&out));
    let says = text
        .lines()
        .find(|l| l.trim_start().starts_with("the log says:"))
        .unwrap_or_else(|| panic!("no departure: {text}"));
    assert!(
        says.contains("\"event\":\"transaction\"") && says.contains("\"won\":true"),
        "the lost update departs at the claim that won on a stale version: {says}"
    );
    for level in ["repeatable-read", "serializable"] {
        let out = common::slotcheck(&[
            "live",
            "--on",
            "postgres",
            "--isolation",
            level,
            "--tx-read",
            "plain",
            "--runs",
            "3",
            "--seed",
            "1",
        ]);
        let text = stdout(&out);
        assert_eq!(code(&out), 0, "{level}: {text}{}", common::stderr(&out));
        assert!(
            text.contains("the model explains every one"),
            "{level}: {text}"
        );
    }
}

/// The same window steered: pct holds a worker between its admit's reads
/// and writes. At READ COMMITTED the plain `SELECT` loses an update in run
/// 1 from seed 1 (the log departs at the claim that won on a stale
/// version). At REPEATABLE READ and SERIALIZABLE PostgreSQL refuses the
/// held writer (40001): with `--aborts logged` the refused transaction is
/// in the log as sent, `won: false, aborted: true`, and the worker reads
/// again, as docs/logging.md tells a service; every log conforms and
/// every invariant holds.
#[test]
#[cfg_attr(
    no_postgres,
    ignore = "PostgreSQL is not installed (apt-get install postgresql)"
)]
fn steered_a_plain_admit_read_loses_an_update_in_run_one_and_logged_aborts_conform() {
    if let Some(why) = slotcheck_sql::postgres::missing() {
        panic!("{why}");
    }
    let (exit, text) = common::admit_under_pct("postgres", "read-committed", "plain", &[]);
    assert!(exit == 1 || exit == 4, "exit {exit}: {text}");
    assert!(common::departs_at_a_won_claim(&text), "{text}");
    let dir = common::scratch("postgres", "aborts");
    let mut aborted = 0;
    for level in ["repeatable-read", "serializable"] {
        let log = dir.join(format!("{level}.ndjson"));
        let (exit, text) = common::admit_under_pct(
            "postgres",
            level,
            "plain",
            &["--aborts", "logged", "--log", log.to_str().unwrap()],
        );
        assert_eq!(exit, 0, "{level}: {text}");
        assert!(
            text.contains("the model explains every one (20 conform"),
            "{level}: {text}"
        );
        let lines = std::fs::read_to_string(&log).unwrap();
        for line in lines.lines().filter(|l| l.contains("\"aborted\":true")) {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["won"], false, "{line}");
            aborted += 1;
        }
    }
    // pct's hold makes PostgreSQL refuse at least one writer.
    assert!(
        aborted > 0,
        "no write was refused: nothing aborted was logged"
    );
}
