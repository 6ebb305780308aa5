//! Every budget in every phase of every command (issue 19): `mutate`'s
//! listing of a design's mutants, `simulate`'s walks, a signal that stops a
//! run as a reached deadline does, and the default memory budget.

mod common;

use common::command;
use serde_json::Value;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn code(output: &Output) -> i32 {
    output.status.code().expect("exited, not killed")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs slotcheck, killing it (and failing) if it outlives `limit`: a guard
/// against a budget that is ignored, far above what the budget allows.
fn guarded(limit: Duration, args: &[&str]) -> Output {
    let mut child = command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            let output = child.wait_with_output().unwrap();
            panic!("{args:?} outlived its budget\n{}", stdout(&output));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Bounds on which fail-open's mutants take minutes to list (every state
/// explored) and gigabytes to hold.
const LARGE_MUTATE: &[&str] = &[
    "mutate",
    "--design",
    "fail-open",
    "--requests",
    "3",
    "--crashes",
    "1",
    "--stalls",
    "1",
    "--json",
    "--quiet",
];

fn mutate_with(budget: &[&str]) -> (i32, Value) {
    let mut args = LARGE_MUTATE.to_vec();
    args.extend(budget);
    let output = guarded(Duration::from_secs(120), &args);
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    (code(&output), report)
}

#[test]
fn mutate_lists_mutants_within_every_budget() {
    for (budget, says) in [
        (&["--max-states", "100"][..], "state budget"),
        (&["--timeout", "1"][..], "time budget"),
        (&["--max-memory", "60M"][..], "memory budget"),
    ] {
        let (code, report) = mutate_with(budget);
        assert_eq!(code, 3, "{budget:?}: inconclusive");
        let why = report[0]["unlisted"].as_str().unwrap_or_default();
        assert!(
            why.contains(says),
            "{budget:?}: the listing is cut by it: {report}"
        );
        assert_eq!(report[0]["mutants"], serde_json::json!([]));
    }
}

#[test]
fn check_of_a_mutant_lists_within_the_budget() {
    let output = guarded(
        Duration::from_secs(120),
        &[
            "check",
            "--design",
            "fail-open",
            "--requests",
            "3",
            "--crashes",
            "1",
            "--stalls",
            "1",
            "--mutant",
            "fail-open/claim/write-skipped",
            "--max-states",
            "100",
        ],
    );
    assert_eq!(code(&output), 3);
    assert!(String::from_utf8_lossy(&output.stderr).contains("could not be listed"));
}
