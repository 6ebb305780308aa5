//! What a user meets at the edges (issue 19): a tampered trace is a bad
//! file, errors name their place, a registered design is guarded by the
//! scenarios, the template lists everything, and CI reads a short report.

mod common;

use common::{code, stderr, stdout};

use common::{command, slotcheck};
use serde_json::Value;
use std::path::Path;

// ---------------------------------------------------------------- item 9

#[test]
fn a_tampered_trace_is_a_bad_file_not_a_fixed_model() {
    let dir = common::scratch("trust", "tampered");
    let out = dir.to_str().unwrap();
    let saved = slotcheck(&[
        "check",
        "--design",
        "claim-first",
        "--requests",
        "1",
        "--stalls",
        "0",
        "--quiet",
        "--out",
        out,
    ]);
    assert_eq!(code(&saved), 1);
    let file = dir.join("claim-first-count-not-high-check.itf.json");
    let original: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let write = |name: &str, doc: &Value| {
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_vec(doc).unwrap()).unwrap();
        path
    };
    let replay = |path: &Path| slotcheck(&["replay", path.to_str().unwrap()]);

    // The last state dropped, and `steps` lowered or deleted.
    let mut dropped = original.clone();
    dropped["states"].as_array_mut().unwrap().pop();
    let steps = dropped["#meta"]["steps"].as_u64().unwrap();
    dropped["#meta"]["steps"] = (steps - 1).into();
    let mut no_steps = dropped.clone();
    no_steps["#meta"].as_object_mut().unwrap().remove("steps");
    // The property renamed to another, which the last state keeps.
    let mut renamed = original.clone();
    renamed["#meta"]["property"] = "builds-within-limit".into();
    for (name, doc) in [
        ("dropped", &dropped),
        ("no-steps", &no_steps),
        ("renamed", &renamed),
    ] {
        let output = replay(&write(name, doc));
        assert_eq!(
            code(&output),
            2,
            "{name}: {}{}",
            stdout(&output),
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("the file is inconsistent"),
            "{name}: {}",
            stderr(&output)
        );
    }
    // A witness is no counterexample: a usage error.
    let mut witness = original.clone();
    witness["#meta"]["property"] = "all-succeed".into();
    let output = replay(&write("witness", &witness));
    assert_eq!(code(&output), 2);
    assert!(stderr(&output).contains("a witness"), "{}", stderr(&output));
    // The untouched trace still replays as a violation.
    assert_eq!(code(&replay(&file)), 1);
}

// ---------------------------------------------------------------- item 10

#[test]
fn errors_name_the_file_and_line() {
    let dir = common::scratch("trust", "places");
    // Invalid UTF-8 on line 3 of a scenario and of a list of equivalents.
    let scenario = dir.join("bad.toml");
    std::fs::write(&scenario, b"id = \"X\"\ntitle = \"t\"\nsource = \"\xff\"\n").unwrap();
    let output = slotcheck(&["check", scenario.to_str().unwrap()]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains(&format!(
            "{}:3:11: byte 0xff is not UTF-8",
            scenario.display()
        )),
        "{}",
        stderr(&output)
    );
    let list = dir.join("equivalent.toml");
    std::fs::write(&list, b"[[mutant]]\nname = \"a/b\"\nwhy = \"\xfe\"\n").unwrap();
    let args = [
        "mutate",
        "--design",
        "fail-open",
        "--requests",
        "1",
        "--stalls",
        "0",
        "--equivalent",
    ];
    let output = slotcheck(&[&args[..], &[list.to_str().unwrap()]].concat());
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains(&format!("{}:3:8:", list.display())),
        "{}",
        stderr(&output)
    );
    // An entry that names no mutant, on line 4.
    std::fs::write(
        &list,
        "[[mutant]]\nname = \"fail-open/x\"\nwhy = \"y\"\n[[mutant]]\nwhy = \"no name\"\n",
    )
    .unwrap();
    let output = slotcheck(&[&args[..], &[list.to_str().unwrap()]].concat());
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains(&format!("{}:4: an entry names no mutant", list.display())),
        "{}",
        stderr(&output)
    );
    // merge names the file, not "report 2".
    let shard = |seed: &str, name: &str| {
        let file = dir.join(name);
        let output = slotcheck(&[
            "simulate",
            "--design",
            "claim-first",
            "--runs",
            "4",
            "--seed",
            seed,
            "--no-save",
            "--json-out",
            file.to_str().unwrap(),
        ]);
        assert!(file.exists(), "{}", stderr(&output));
        file
    };
    let (a, b) = (shard("1", "a.json"), shard("2", "b.json"));
    let output = slotcheck(&["merge", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains(&format!(
            "merge: {} was made with other options",
            b.display()
        )),
        "{}",
        stderr(&output)
    );
}

// ---------------------------------------------------------------- item 12

#[test]
fn the_whole_guard_refuses_a_registered_design_no_scenario_expects() {
    let dir = common::scratch("trust", "unguarded");
    std::fs::create_dir_all(dir.join("scenarios")).unwrap();
    std::fs::write(
        dir.join("scenarios/X-1.toml"),
        "id = \"X-1\"\ntitle = \"t\"\nsource = \"s\"\nmodel = \"stovepipe\"\n\
         [bounds]\nrequests = 1\nmax_concurrent = 1\ncrashes = 0\nstalls = 0\nmax_deliveries = 2\n\
         [expect.claim-first]\nbuilds-within-limit = \"holds\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| command().current_dir(&dir).args(args).output().unwrap();
    let output = run(&["check"]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    let errors = stderr(&output);
    for unguarded in [
        "stovepipe/fail-open",
        "stovepipe/owner-keyed-atomic-admit-dlq-cancels",
        "link/after-1649",
    ] {
        assert!(errors.contains(unguarded), "{unguarded}: {errors}");
    }
    assert!(!errors.contains("stovepipe/claim-first"), "{errors}");
    assert!(stdout(&output).is_empty(), "refused before the run");
    // A file named on the command line is a run of that file, not the guard.
    let output = run(&["check", "scenarios/X-1.toml"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
}

// ---------------------------------------------------------------- item 13

#[test]
fn the_template_has_every_design_and_every_key_each_commented() {
    let dir = common::scratch("trust", "template");
    let output = slotcheck(&["scenario", "new", "T-1", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = std::fs::read_to_string(dir.join("T-1.toml")).unwrap();
    for design in slotcheck_models::stovepipe::DESIGNS.iter() {
        assert!(
            text.contains(&format!("[expect.{}]", design.name)),
            "{}",
            design.name
        );
    }
    for design in slotcheck_models::link::DESIGNS.iter() {
        assert!(
            text.contains(design.name),
            "the link design {}",
            design.name
        );
    }
    for key in [
        "id",
        "title",
        "source",
        "notes",
        "model",
        "slow",
        "options",
        "finding",
        "requests",
        "max_concurrent",
        "crashes",
        "stalls",
        "max_deliveries",
        "design",
        "violates",
        "steps",
    ] {
        let line = text
            .lines()
            .find(|l| l.trim_start_matches("# ").starts_with(&format!("{key} =")))
            .unwrap_or_else(|| panic!("no `{key}` in the template"));
        assert!(
            line.trim_start_matches("# ").contains('#'),
            "`{key}` has no comment: {line}"
        );
    }
}

// ---------------------------------------------------------------- item 14

#[test]
fn the_scenario_check_aligns_its_columns_and_can_print_only_regressions() {
    let output = slotcheck(&["check", "scenarios/SP-OCT-003.toml"]);
    assert_eq!(code(&output), 0);
    let text = stdout(&output);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("SP-OCT-003"))
        .collect();
    assert!(lines.len() > 50);
    // The property column starts at one place on every line, long design
    // names included.
    let column_start = |line: &str, k: usize| {
        let b = line.as_bytes();
        (1..b.len())
            .filter(|&i| b[i] != b' ' && b[i - 1] == b' ')
            .nth(k)
            .unwrap()
    };
    let starts: std::collections::BTreeSet<(usize, usize)> = lines
        .iter()
        .map(|l| (column_start(l, 0), column_start(l, 1)))
        .collect();
    assert_eq!(starts.len(), 1, "{starts:?}");

    // Only the regressions and the summary: a pass is one line.
    let output = slotcheck(&["check", "scenarios/SP-OCT-003.toml", "--regressions-only"]);
    assert_eq!(code(&output), 0);
    let text = stdout(&output);
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    assert!(text.contains("0 regressions"), "{text}");

    // A regression is printed, with its story.
    let dir = common::scratch("trust", "regressions-only");
    let shipped =
        std::fs::read_to_string(Path::new(common::ROOT).join("scenarios/SP-OCT-003.toml")).unwrap();
    let wrong = shipped.replacen(
        "[expect.owner-keyed]\nno-wedge = \"holds\"",
        "[expect.owner-keyed]\nno-wedge = \"violated\"",
        1,
    );
    assert_ne!(wrong, shipped);
    let file = dir.join("SP-OCT-003.toml");
    std::fs::write(&file, wrong).unwrap();
    let output = slotcheck(&["check", file.to_str().unwrap(), "--regressions-only"]);
    let text = stdout(&output);
    assert_eq!(code(&output), 1, "{text}{}", stderr(&output));
    let checks: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("SP-OCT-003"))
        .collect();
    assert_eq!(checks.len(), 1, "{text}");
    assert!(
        checks[0].contains("owner-keyed ") && checks[0].contains("no-wedge"),
        "{text}"
    );
    assert!(text.contains("1 regression"), "{text}");
}

// ---------------------------------------------------------------- item 11

/// Without Chromium the browser tests must look skipped: each is marked
/// ignored by the cfg build.rs sets (with one cargo warning), and build.rs
/// leaves them to fail under CI.
#[test]
fn every_browser_test_is_ignored_without_chromium_and_build_rs_says_so() {
    let root = Path::new(common::ROOT);
    let browser = std::fs::read_to_string(root.join("tests/browser.rs")).unwrap();
    let tests = browser.matches("#[test]\n").count();
    let ignored = browser
        .matches("#[test]\n#[cfg_attr(\n    chromium_missing,\n    ignore = ")
        .count();
    assert!(tests > 0);
    assert_eq!(ignored, tests, "every browser test can be ignored");
    let build = std::fs::read_to_string(root.join("build.rs")).unwrap();
    for needed in [
        "cargo:rustc-cfg=chromium_missing",
        "cargo:warning=",
        "var_os(\"CI\")",
    ] {
        assert!(build.contains(needed), "build.rs: {needed}");
    }
}
