//! Every named stovepipe design behaves as it did when its baseline was
//! written (issue 20: designs became values built from parts): on each
//! stovepipe scenario in `scenarios/`, for every design the scenario
//! expects something of, and on `compare`'s default bounds for every
//! design, each property's verdict, the length of its shortest
//! counterexample or witness, and the state counts are those of
//! `tests/designs_unchanged.txt`, as `slotcheck compare --json` reports
//! them. The baseline was recorded from the build of commit 15d6b6a, the
//! code before designs became values (its `compare` ran every design, and
//! the lines of the designs each case keeps were kept: the same figures,
//! since each design's check is its own). `SLOTCHECK_WRITE_DESIGNS=1 cargo
//! test --release --test designs_unchanged -- --ignored` writes it again from this
//! build, for a change to a design's behaviour, never for a refactor.

use crate::common;

use serde_json::Value;
use slotcheck::models::ToolModel;
use slotcheck_models::stovepipe::Stovepipe;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// The binary that records: this build, or with `SLOTCHECK_DESIGNS_BIN` another
/// (a build of the code before a change, to write the baseline from it; one
/// whose `compare` takes `--design`).
fn binary() -> String {
    std::env::var("SLOTCHECK_DESIGNS_BIN").unwrap_or_else(|_| common::BIN.to_string())
}

/// `slotcheck compare --json` on these bound flags of each named design
/// `keep` keeps: one line per property and one for the counts, in the
/// model's order of designs.
fn record(out: &mut String, case: &str, flags: &[String], keep: impl Fn(&str) -> bool) {
    let designs = Stovepipe::design_names()
        .into_iter()
        .filter(|d| keep(d))
        .flat_map(|d| ["--design", d]);
    let output = Command::new(binary())
        .current_dir(common::ROOT)
        .arg("compare")
        .args(flags)
        .args(designs)
        .arg("--json")
        .output()
        .expect("slotcheck runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{case}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("compare's JSON");
    for r in report["results"].as_array().unwrap() {
        let design = r["design"].as_str().unwrap();
        if !keep(design) {
            continue;
        }
        let steps = r["steps"]
            .as_u64()
            .map_or("-".to_string(), |n| n.to_string());
        let (property, verdict) = (&r["property"], &r["verdict"]);
        writeln!(
            out,
            "{case} {design} {} {} {steps}",
            property.as_str().unwrap(),
            verdict.as_str().unwrap()
        )
        .unwrap();
    }
    for s in report["stats"].as_array().unwrap() {
        let design = s["design"].as_str().unwrap();
        if keep(design) {
            writeln!(
                out,
                "{case} {design} states {} unique {}",
                s["states"], s["unique"]
            )
            .unwrap();
        }
    }
}

/// The bound flags and options of a stovepipe scenario file.
fn scenario_flags(scenario: &toml::Table) -> Vec<String> {
    let b = scenario["bounds"].as_table().expect("[bounds]");
    let mut flags = Vec::new();
    for key in [
        "requests",
        "max_concurrent",
        "crashes",
        "stalls",
        "max_deliveries",
    ] {
        flags.push(format!("--{}", key.replace('_', "-")));
        flags.push(b[key].as_integer().expect("a whole bound").to_string());
    }
    for option in scenario
        .get("options")
        .and_then(|o| o.as_array())
        .into_iter()
        .flatten()
    {
        flags.push("--option".into());
        flags.push(option.as_str().unwrap().into());
    }
    flags
}

/// The record of every case: the scenarios in file order (the slow ones
/// left out: the nightly run checks their verdicts and lengths, which
/// their files pin), then the default bounds.
fn records() -> String {
    let mut out = String::new();
    let dir = Path::new(common::ROOT).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    for file in files {
        let scenario: toml::Table = std::fs::read_to_string(&file).unwrap().parse().unwrap();
        let slow = scenario.get("slow").and_then(|s| s.as_bool()) == Some(true);
        if scenario["model"].as_str() != Some("stovepipe") || slow {
            continue;
        }
        let case = scenario["id"].as_str().unwrap().to_string();
        let designs = scenario["expect"].as_table().expect("[expect.DESIGN]");
        record(&mut out, &case, &scenario_flags(&scenario), |d| {
            designs.contains_key(d)
        });
    }
    record(&mut out, "default-bounds", &[], |_| true);
    out
}

// Minutes of CPU (every design on every stovepipe scenario, a second time:
// tests/scenarios.rs runs the same checks for their verdicts and lengths),
// so the nightly runs it (`cargo test --release -- --ignored`) and the test
// command leaves it out; a change to a design's behaviour shows there first.
#[test]
#[ignore = "nightly: every design on every scenario, minutes of CPU"]
fn every_named_design_keeps_its_verdicts_lengths_and_state_counts() {
    let path = Path::new(common::ROOT).join("tests/designs_unchanged.txt");
    let now = records();
    if std::env::var_os("SLOTCHECK_WRITE_DESIGNS").is_some() {
        std::fs::write(&path, &now).unwrap();
    }
    let baseline = std::fs::read_to_string(&path).unwrap_or_default();
    let changed: Vec<String> = baseline
        .lines()
        .zip(now.lines())
        .filter(|(was, is)| was != is)
        .map(|(was, is)| format!("  was: {was}\n  now: {is}"))
        .take(20)
        .collect();
    assert!(
        changed.is_empty() && baseline.lines().count() == now.lines().count(),
        "a named design behaves differently from tests/designs_unchanged.txt ({} lines then, {} now):\n{}",
        baseline.lines().count(),
        now.lines().count(),
        changed.join("\n")
    );
}
