//! Every counterexample of every stovepipe finding (each scenario file that
//! names one, docs/findings.md), for every design on the finding's bounds,
//! replays on SQLite and on MariaDB with the database's rows equal to the
//! model's after every step, and ends in the same violation, visible in the
//! rows where the rows alone can show it.

#![cfg(feature = "real")]

mod common;

use slotcheck::check::{check, Limits, Trace, Verdict};
use slotcheck::commands::live_stovepipe::validate_log;
use slotcheck_models::stovepipe::{Bounds, Stovepipe, DESIGNS};
use slotcheck_sql::engine::Dialect;
use slotcheck_sql::live::{self, Config};
use slotcheck_sql::mariadb::{self, Server};
use slotcheck_sql::parts::parts_named;
use slotcheck_sql::replay::{replay, Failure};
use slotcheck_sql::Backend;
use std::path::PathBuf;
use std::sync::Arc;

/// The properties the rows alone can show (the others need the history).
const VISIBLE: [&str; 5] = [
    "no-wedge",
    "builds-within-limit",
    "count-not-low",
    "count-not-high",
    "no-message-left-in-flight",
];

/// Each finding's file name and bounds.
fn findings() -> Vec<(String, Bounds)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let Ok(table) = std::fs::read_to_string(&path)
            .unwrap()
            .parse::<toml::Table>()
        else {
            continue;
        };
        if table.get("model").and_then(|m| m.as_str()) != Some("stovepipe")
            || table.get("finding").is_none()
        {
            continue;
        }
        let b = table["bounds"].as_table().unwrap();
        let get = |k: &str| b[k].as_integer().unwrap() as u8;
        out.push((
            path.file_name().unwrap().to_string_lossy().into_owned(),
            Bounds {
                requests: get("requests"),
                max_concurrent: get("max_concurrent"),
                crashes: get("crashes"),
                stalls: get("stalls"),
                max_deliveries: get("max_deliveries"),
            },
        ));
    }
    out
}

/// A counterexample to replay: its finding's file, its design's model, the
/// property it breaks and its path.
type Counterexample = (String, Stovepipe, &'static str, Trace<Stovepipe>);

/// Every finding's counterexamples, for every design on the finding's
/// bounds. Found once for the three engines' tests (the checks take most of
/// their time), the designs shared out among the cores.
fn counterexamples() -> &'static [Counterexample] {
    static FOUND: std::sync::OnceLock<Vec<Counterexample>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        let findings = findings();
        assert!(findings.len() >= 10, "the findings are scenario files");
        let cases: Vec<(String, Stovepipe)> = findings
            .into_iter()
            .flat_map(|(file, bounds)| {
                DESIGNS
                    .into_iter()
                    .map(move |design| (file.clone(), Stovepipe::new(design, bounds)))
            })
            .collect();
        common::par_map(&cases, |(file, model)| {
            let outcome = check(*model, &[], &Limits::default());
            outcome
                .results
                .into_iter()
                .filter(|r| r.verdict == Verdict::Violated)
                .filter_map(|r| Some((file.clone(), *model, r.name, r.trace?)))
                .collect::<Vec<Counterexample>>()
        })
        .into_iter()
        .flatten()
        .collect()
    })
}

/// Replays every counterexample on each backend; returns how many.
fn replay_findings(backends: &[&Backend]) -> usize {
    let mut replayed = 0;
    for (file, model, property, trace) in counterexamples() {
        for backend in backends {
            let engine = backend.engine.name();
            match replay(backend, model, &trace.init, &trace.actions) {
                Ok(done) => {
                    if VISIBLE.contains(property) {
                        assert!(
                            done.violations.contains(property),
                            "{file}, {} on {engine}: the rows do not show {property}: {:?}",
                            model.design.name,
                            done.rows
                        );
                    }
                }
                Err(Failure::Conformance(c)) => panic!(
                    "{file}, {} ({property}) on {engine}:\n{}",
                    model.design.name,
                    c.text()
                ),
                Err(Failure::Database(e)) => panic!("{file} on {engine}: {e}"),
            }
            replayed += 1;
        }
    }
    replayed
}

#[test]
fn every_finding_replays_on_sqlite() {
    let sqlite = Backend::sqlite().unwrap();
    let replayed = replay_findings(&[&sqlite]);
    assert!(replayed >= 40, "only {replayed} counterexamples replayed");
}

/// The build script marks this ignored, and says so, when MariaDB is not
/// installed and `CI` is not set; with `CI` set it runs and fails.
#[test]
#[cfg_attr(
    no_mariadb,
    ignore = "MariaDB is not installed (apt-get install mariadb-server)"
)]
fn every_finding_replays_on_mariadb() {
    if let Some(why) = mariadb::missing() {
        panic!("{why}");
    }
    let server = Arc::new(Server::start().expect("a private MariaDB server"));
    let backend = Backend::mariadb(server, "findings").unwrap();
    let replayed = replay_findings(&[&backend]);
    assert!(replayed >= 40, "only {replayed} counterexamples replayed");
}

/// Live runs of the recommended design with crashes and stalls: every
/// queue's log, as the statements returned it, is a behaviour of the model,
/// in commit order (the turnstile) or, without it, each worker thread's
/// lines in its own order.
fn live_logs_conform(backend: &Backend) {
    live_logs_conform_ordered(backend, true)
}

fn live_logs_conform_ordered(backend: &Backend, turnstile: bool) {
    let design = "owner-keyed-atomic-admit-dlq-cancels";
    for seed in 1..=2 {
        let mut c = Config::new(
            design,
            parts_named(design).unwrap(),
            Dialect::of(backend.engine),
            seed,
        );
        c.queues = 10;
        c.crash_percent = 8;
        c.stall_percent = 8;
        c.turnstile = turnstile;
        let outcome = live::run(backend, &c).unwrap();
        let named = outcome
            .log
            .iter()
            .skip(1)
            .all(|l| l.get("process").is_some());
        assert_eq!(
            named, !turnstile,
            "lines name their process without the turnstile"
        );
        let v = validate_log(design, &outcome).unwrap();
        assert_eq!(
            (v.conform, v.departs, v.inconclusive),
            (10, 0, 0),
            "seed {seed}: {}",
            v.first_departure.unwrap_or_default()
        );
    }
}

#[test]
fn live_logs_conform_on_sqlite() {
    live_logs_conform(&Backend::sqlite().unwrap());
}

#[test]
fn live_logs_without_the_turnstile_conform_on_sqlite() {
    live_logs_conform_ordered(&Backend::sqlite().unwrap(), false);
}

#[test]
#[cfg_attr(
    no_mariadb,
    ignore = "MariaDB is not installed (apt-get install mariadb-server)"
)]
fn live_logs_without_the_turnstile_conform_on_mariadb() {
    let server = Arc::new(Server::start().expect("a private MariaDB server"));
    live_logs_conform_ordered(&Backend::mariadb(server, "unordered").unwrap(), false);
}

#[test]
#[cfg_attr(
    no_mariadb,
    ignore = "MariaDB is not installed (apt-get install mariadb-server)"
)]
fn live_logs_conform_on_mariadb() {
    let server = Arc::new(Server::start().expect("a private MariaDB server"));
    live_logs_conform(&Backend::mariadb(server, "live").unwrap());
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "PostgreSQL is not installed (apt-get install postgresql)"
)]
fn every_finding_replays_on_postgres() {
    if let Some(why) = slotcheck_sql::postgres::missing() {
        panic!("{why}");
    }
    let server = Arc::new(slotcheck_sql::postgres::Server::start().expect("a private cluster"));
    let backend = Backend::postgres(server, "findings").unwrap();
    let replayed = replay_findings(&[&backend]);
    assert!(replayed >= 40, "only {replayed} counterexamples replayed");
}

#[test]
#[cfg_attr(
    no_postgres,
    ignore = "PostgreSQL is not installed (apt-get install postgresql)"
)]
fn live_logs_conform_on_postgres() {
    let server = Arc::new(slotcheck_sql::postgres::Server::start().expect("a private cluster"));
    live_logs_conform(&Backend::postgres(server, "live").unwrap());
}

/// `live --until`: claim-first's wedge is found live and named (it takes a
/// run or two; the bound is generous), and a property a live run does not
/// judge is refused.
#[test]
fn live_runs_until_an_invariant_breaks() {
    let args = [
        "live",
        "--on",
        "sqlite",
        "--design",
        "claim-first",
        "--until",
        "no-wedge",
        "--runs",
        "100",
        "--seed",
        "1",
    ];
    let output = common::slotcheck(&args);
    let text = common::stdout(&output);
    assert_eq!(common::code(&output), 1, "{text}");
    assert!(text.contains("`no-wedge` broken live in run "), "{text}");
    assert!(text.contains("the model explains every one"), "{text}");
    let output = common::slotcheck(&["live", "--until", "outcome-final"]);
    assert_eq!(common::code(&output), 2);
    assert!(common::stderr(&output).contains("--until"));
}

/// The former recommendation under every SQL variant SQLite has: no
/// invariant broken in these runs and every log explained, said in the
/// last line; beside each row the model's verdict for its reading.
#[test]
fn the_isolation_table_says_which_variants_keep_every_invariant() {
    let output = common::slotcheck(&[
        "live",
        "--isolation-table",
        "--on",
        "sqlite",
        "--runs",
        "1",
        "--queues",
        "10",
    ]);
    let text = common::stdout(&output);
    assert_eq!(common::code(&output), 0, "{text}");
    // "kept" alone only where the model holds too: the joined and the
    // transaction reads (one snapshot in SQLite); the separate reads are
    // split, which the model breaks.
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("every log conforms"))
        .collect();
    assert_eq!(rows.len(), 12, "{text}");
    for row in rows {
        let split = row.contains(" separate ");
        assert_eq!(row.contains("  kept  "), !split, "{row}");
        assert_eq!(row.contains("kept here, window not hit"), split, "{row}");
        assert!(
            row.trim_end().ends_with(if split {
                "split-read: violated: builds-within-limit (20 steps), count-not-low (23 steps)"
            } else {
                "one snapshot: holds"
            }),
            "{row}"
        );
    }
    assert!(
        text.trim_end().ends_with(
            "no variant broke an invariant in these runs, and the model explained every queue's log"
        ),
        "{text}"
    );
}

/// `live --schedule guided --aim`: the director follows the split-read
/// finding's story over real worker threads and SQLite, so the former
/// recommendation (whose admit reads FOR UPDATE) breaks in the first run,
/// every queue; the recommendation, steered by the same story, holds, and
/// every log of both is a behaviour of its model.
#[test]
fn a_guided_live_run_reaches_the_split_read_finding_and_the_recommendation_holds() {
    let steer = |design: &str| {
        common::slotcheck(&[
            "live",
            "--on",
            "sqlite",
            "--design",
            design,
            "--aim",
            "split-read-stale-head",
            "--schedule",
            "guided",
            "--runs",
            "1",
            "--queues",
            "3",
        ])
    };
    let output = steer("owner-keyed-atomic-admit-dlq-cancels");
    let text = common::stdout(&output);
    assert_eq!(common::code(&output), 1, "{text}");
    assert!(
        text.contains("steered by guided: the story of owner-keyed-atomic-admit-dlq-cancels violating builds-within-limit in split-read-stale-head (20 steps)"),
        "{text}"
    );
    assert!(
        text.contains("`builds-within-limit` broken live in run 1 (seed 1); 3 queue(s)"),
        "{text}"
    );
    assert!(text.contains("the model explains every one"), "{text}");
    let output = steer("owner-keyed-atomic-admit-supersede-first-dlq-cancels");
    let text = common::stdout(&output);
    assert_eq!(common::code(&output), 0, "{text}");
    assert!(
        text.contains("the model explains every one (3 conform"),
        "{text}"
    );
    // guided needs a story; an unknown scheduler is a usage error.
    let output = common::slotcheck(&["live", "--schedule", "guided"]);
    assert_eq!(common::code(&output), 2);
    assert!(common::stderr(&output).contains("--aim"));
    let output = common::slotcheck(&["live", "--schedule", "fifo"]);
    assert_eq!(common::code(&output), 2);
}

/// The test that guards the admit's locking read, steered: pct holds a
/// worker between its admit's reads and writes, so at READ COMMITTED a
/// plain `SELECT` lets another admit commit in between and the held claim
/// wins on a stale version: run 1 from seed 1 catches it (its log departs
/// at that claim), every time, not once in a few free runs. With `FOR
/// UPDATE` the same steered run keeps every invariant and every log
/// conforms.
#[test]
#[cfg_attr(
    no_mariadb,
    ignore = "MariaDB is not installed (apt-get install mariadb-server)"
)]
fn the_admit_without_its_locking_read_is_caught_by_pct_in_run_one() {
    if let Some(why) = mariadb::missing() {
        panic!("{why}");
    }
    let (exit, text) = common::admit_under_pct("mariadb", "read-committed", "plain", &[]);
    assert!(exit == 1 || exit == 4, "exit {exit}: {text}");
    assert!(common::departs_at_a_won_claim(&text), "{text}");
    let (exit, text) = common::admit_under_pct("mariadb", "read-committed", "for-update", &[]);
    assert_eq!(exit, 0, "{text}");
    assert!(
        text.contains("the model explains every one (20 conform"),
        "{text}"
    );
}
