//! Live runs on both engines: the recommended design keeps every invariant
//! on the real rows of every queue, every log line is an event of
//! `slotcheck validate`'s format, and a bounded run stops by itself.

mod common;

use slotcheck_models::events::{self, Entry};
use slotcheck_sql::engine::Dialect;
use slotcheck_sql::live::{self, Config};
use slotcheck_sql::parts::parts_named;
use slotcheck_sql::Backend;
use std::time::Duration;

const RECOMMENDED: &str = "owner-keyed-atomic-admit-dlq-cancels";

fn config(backend: &Backend, design: &str, seed: u64) -> Config {
    let mut c = Config::new(
        design,
        parts_named(design).unwrap(),
        Dialect::of(backend.engine),
        seed,
    );
    c.queues = 12;
    c.timeout = Duration::from_secs(60);
    c
}

/// Runs the recommended design on a few seeds; every queue drains and
/// keeps every invariant, and its log parses line by line.
fn recommended_stays_clean(backend: &Backend) {
    for seed in 1..=3 {
        let outcome = live::run(backend, &config(backend, RECOMMENDED, seed)).unwrap();
        assert_eq!(outcome.cut, None, "seed {seed}: the run drained");
        for q in &outcome.queues {
            assert!(
                q.violations.is_empty(),
                "seed {seed}, queue {}: {:?}\n{:?}",
                q.queue,
                q.violations,
                q.rows
            );
            assert!(
                q.max_running <= 1,
                "seed {seed}: {} builds at once",
                q.max_running
            );
        }
        let text: Vec<String> = outcome.log.iter().map(|l| l.to_string()).collect();
        let log = events::parse("live", &text.join("\n")).expect("every line is an event");
        let records = log
            .entries
            .iter()
            .filter(|(_, e)| matches!(e, Entry::Stovepipe(_)))
            .count();
        assert_eq!(records as u64, outcome.statements);
        assert!(
            records > 12 * 3 * 5,
            "each queue's three requests log their steps"
        );
    }
}

#[test]
fn recommended_design_stays_clean_live_on_sqlite() {
    recommended_stays_clean(&Backend::sqlite().unwrap());
}

#[test]
#[cfg_attr(
    no_mariadb,
    ignore = "MariaDB is not installed (apt-get install mariadb-server)"
)]
fn recommended_design_stays_clean_live_on_mariadb() {
    recommended_stays_clean(&common::mariadb_backend("live"));
}

/// A run bounded in statements stops by itself, said so.
#[test]
fn a_bounded_run_stops_by_itself() {
    let backend = Backend::sqlite().unwrap();
    let mut c = config(&backend, "owner-keyed", 7);
    c.max_statements = 20;
    let outcome = live::run(&backend, &c).unwrap();
    assert!(outcome.cut.is_some_and(|why| why.contains("statements")));
}
