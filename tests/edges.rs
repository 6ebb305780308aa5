//! The command line at its edges, through the built binary (issue 12): an
//! output never destroys an input, output paths are checked before a run,
//! traces replay, filters that select nothing and corrupted traces are
//! usage errors, and every message says what the user typed.

mod common;

use common::{code, stderr, stdout};

use common::{slotcheck, ROOT};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

fn scratch(name: &str) -> common::Scratch {
    common::scratch("edges", name)
}

fn shipped(id: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join("scenarios").join(format!("{id}.toml"))).unwrap()
}

/// Runs slotcheck and expects it to end within `limit`: a command that must
/// refuse its arguments before exploring is given bounds that take minutes,
/// so a refusal that comes only after the run shows here as a kill.
fn within(limit: Duration, args: &[&str]) -> Output {
    common::run_within(limit, args, "still ran: not refused before the run")
}

/// Hidden temporary files (`.NAME.PID.tmp`) left anywhere under `dir`.
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(temporaries(&path));
        } else if path.to_string_lossy().ends_with(".tmp") {
            found.push(path);
        }
    }
    found
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

// ---------------------------------------------------------------- item 1

#[test]
fn json_never_takes_the_scenario_path_as_its_file() {
    let dir = scratch("json-path");
    let file = dir.join("SP-OCT-003.toml");
    std::fs::write(&file, shipped("SP-OCT-003")).unwrap();
    let output = slotcheck(&["check", "--json", file.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        shipped("SP-OCT-003"),
        "the scenario file is untouched"
    );
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).expect("the report on stdout");
    let scenarios = report["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 1, "only the file given was run");
    assert_eq!(scenarios[0]["id"], "SP-OCT-003");
}

#[test]
fn an_output_that_is_an_input_or_another_output_is_refused() {
    let dir = scratch("output-is-input");
    let file = dir.join("SP-OCT-003.toml");
    std::fs::write(&file, shipped("SP-OCT-003")).unwrap();
    let path = file.to_str().unwrap();
    for flag in ["--json-out", "--junit", "--html"] {
        let output = slotcheck(&["check", path, flag, path]);
        assert_eq!(code(&output), 2, "{flag}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(&format!("{flag} {path}: is an input of this run")),
            "{flag}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "nothing ran");
    }
    // The same file by another spelling, through the default directory.
    let output = slotcheck(&[
        "check",
        "--json-out",
        "./scenarios/../scenarios/SP-OCT-003.toml",
    ]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        shipped("SP-OCT-003")
    );
    // Two reports on one file: one would overwrite the other.
    let report = dir.join("report");
    let report = report.to_str().unwrap();
    let output = slotcheck(&["check", path, "--junit", report, "--html", report]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("--junit and --html both write"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn json_out_writes_the_report_and_the_text_is_still_printed() {
    let dir = scratch("json-out");
    let json = dir.join("check.json");
    // Ad hoc (item 9: the human results stay on stdout).
    let output = slotcheck(&[
        "check",
        "--design",
        "claim-first",
        "--requests",
        "1",
        "--stalls",
        "0",
        "--quiet",
        "--json-out",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    assert!(
        stdout(&output).contains("no-wedge: the shortest counterexample, 8 steps"),
        "{}",
        stdout(&output)
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["design"], "claim-first");
    // Scenarios.
    let output = slotcheck(&[
        "check",
        "scenarios/SP-OCT-003.toml",
        "--json-out",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(stdout(&output).contains("SP-OCT-003  claim-first"));
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["scenarios"][0]["id"], "SP-OCT-003");
    // Compare.
    let output = slotcheck(&[
        "compare",
        "--requests",
        "1",
        "--stalls",
        "0",
        "--json-out",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(stdout(&output).contains("slotcheck compare: stovepipe"));
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        report["stats"].as_array().unwrap().len(),
        slotcheck_models::stovepipe::DESIGNS.len()
    );
    // Simulate.
    let output = slotcheck(&[
        "simulate",
        "--runs",
        "10",
        "--no-save",
        "--json-out",
        json.to_str().unwrap(),
    ]);
    assert!(stdout(&output).contains("slotcheck simulate: stovepipe"));
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["runs"], 10);
}

// ---------------------------------------------------------------- item 2

#[test]
fn every_trace_check_out_writes_for_every_design_of_both_models_replays() {
    let dir = scratch("adhoc-traces");
    let small: [(&str, &[&str]); 2] = [
        ("stovepipe", &["--requests", "1", "--stalls", "0"]),
        (
            "link",
            &[
                "--asks",
                "1",
                "--skew",
                "40",
                "--horizon",
                "60",
                "--late-heartbeats",
                "0",
            ],
        ),
    ];
    let designs = |model: &str| -> Vec<&'static str> {
        match model {
            "stovepipe" => slotcheck_models::stovepipe::DESIGNS
                .iter()
                .map(|d| d.name)
                .collect(),
            _ => slotcheck_models::link::DESIGNS
                .iter()
                .map(|d| d.name)
                .collect(),
        }
    };
    for (model, bounds) in small {
        for design in designs(model) {
            let out = dir.join(model).join(design);
            let mut args = vec!["check", "--model", model, "--design", design, "--quiet"];
            args.extend(bounds);
            args.extend(["--out", out.to_str().unwrap()]);
            let output = slotcheck(&args);
            assert_ne!(code(&output), 2, "{args:?}: {}", stderr(&output));
        }
    }
    let traces = files_under(&dir);
    assert!(traces.len() >= 4, "{traces:?}");
    for trace in &traces {
        let replayed = slotcheck::simulate::replay::replay_file(trace)
            .unwrap_or_else(|e| panic!("{}: {e}", trace.display()));
        assert!(replayed.violates, "{}: {}", trace.display(), replayed.text);
        assert!(!replayed.text.contains("note:"), "{}", replayed.text);
    }
}

// ---------------------------------------------------------------- item 3

#[test]
fn an_unwritable_output_is_refused_before_the_run_in_every_command() {
    // Each of these runs for minutes if it explores first.
    let big = ["--requests", "3", "--stalls", "2", "--quiet"];
    let bad = "/proc/slotcheck-none/x.out";
    let cases: Vec<Vec<&str>> = vec![
        ["check", "--design", "fail-open", "--html", bad].to_vec(),
        ["check", "--design", "fail-open", "--json-out", bad].to_vec(),
        ["check", "--design", "fail-open", "--out", bad].to_vec(),
        ["compare", "--html", bad].to_vec(),
        ["compare", "--json-out", bad].to_vec(),
    ];
    for mut args in cases {
        args.extend(big);
        let output = within(Duration::from_secs(20), &args);
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(bad),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "{args:?}");
    }
    // Scenario runs (every scenario, the nightly one too) and simulations.
    for args in [
        ["check", "--junit", bad].to_vec(),
        ["check", "--json-out", bad].to_vec(),
        ["check", "--html", bad].to_vec(),
        ["check", "--out", bad].to_vec(),
        ["simulate", "--runs", "100000000", "--out", bad].to_vec(),
        [
            "simulate",
            "--runs",
            "100000000",
            "--no-save",
            "--json-out",
            bad,
        ]
        .to_vec(),
    ] {
        let output = within(Duration::from_secs(20), &args);
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(bad),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn a_directory_given_as_a_file_is_named_and_leaves_no_temporary_file() {
    let dir = scratch("directory-output");
    let existing = dir.join("existdir");
    std::fs::create_dir(&existing).unwrap();
    let path = existing.to_str().unwrap();
    let small = ["--requests", "1", "--stalls", "0", "--quiet"];
    for flag in ["--html", "--json-out"] {
        let mut args = vec!["check", "--design", "claim-first", flag, path];
        args.extend(small);
        let output = slotcheck(&args);
        assert_eq!(code(&output), 2, "{flag}");
        assert!(
            stderr(&output).contains(&format!("{flag} {path}: is a directory")),
            "{flag}: {}",
            stderr(&output)
        );
    }
    let output = slotcheck(&["check", "scenarios/SP-OCT-003.toml", "--junit", path]);
    assert_eq!(code(&output), 2);
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
}

#[test]
fn a_write_that_fails_after_the_run_still_prints_the_results() {
    let dir = scratch("late-failure");
    // A directory where a trace file must go: only known once the run found
    // the counterexample.
    std::fs::create_dir_all(dir.join("claim-first-no-wedge-check.itf.json")).unwrap();
    let output = slotcheck(&[
        "check",
        "--design",
        "claim-first",
        "--requests",
        "1",
        "--stalls",
        "0",
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stdout(&output).contains("no-wedge: the shortest counterexample, 8 steps"),
        "{}",
        stdout(&output)
    );
    assert!(
        stderr(&output).contains("claim-first-no-wedge-check.itf.json: is a directory"),
        "{}",
        stderr(&output)
    );
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));

    // A scenario run: a file where its traces' directory must go.
    let out = dir.join("traces");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("SP-OCT-003"), "in the way").unwrap();
    let output = slotcheck(&[
        "check",
        "scenarios/SP-OCT-003.toml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stdout(&output).contains("1 scenario, "),
        "the summary is printed: {}",
        stdout(&output)
    );
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
}

// ---------------------------------------------------------------- item 5

#[test]
fn compare_exits_3_when_a_run_was_cut_even_with_every_verdict_decided() {
    // fail-open decides every property within 50,000 states and is cut
    // there; the other two designs finish.
    let output = slotcheck(&[
        "compare",
        "--crashes",
        "0",
        "--max-deliveries",
        "1",
        "--max-states",
        "50000",
        "--quiet",
    ]);
    assert!(stdout(&output).contains("cut short"), "{}", stdout(&output));
    assert_eq!(code(&output), 3, "{}", stdout(&output));
    let output = slotcheck(&[
        "compare",
        "--crashes",
        "0",
        "--max-deliveries",
        "1",
        "--max-states",
        "50000",
        "--quiet",
        "--json",
    ]);
    assert_eq!(code(&output), 3);
}

// ---------------------------------------------------------------- item 6

#[test]
fn a_corrupted_trace_is_a_bad_file() {
    let dir = scratch("corrupt");
    let output = slotcheck(&[
        "check",
        "--design",
        "claim-first",
        "--requests",
        "1",
        "--stalls",
        "0",
        "--property",
        "no-wedge",
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 1);
    let file = dir.join("claim-first-no-wedge-check.itf.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let mut emptied = doc.clone();
    emptied["states"] = Value::Array(Vec::new());
    let mut truncated = doc.clone();
    truncated["states"].as_array_mut().unwrap().truncate(6);
    let mut other_bounds = doc.clone();
    other_bounds["#meta"]["bounds"]["crashes"] = serde_json::json!(0);
    let mut edited_start = doc.clone();
    edited_start["states"][0]["crashes_left"] = serde_json::json!({ "#bigint": "5" });
    for (name, corrupt, says) in [
        ("emptied", emptied, "no states"),
        (
            "truncated",
            truncated,
            "`#meta.steps` says 8 steps, but it has 5",
        ),
        ("other-bounds", other_bounds, "not an initial state"),
        ("edited-start", edited_start, "not an initial state"),
    ] {
        let bad = dir.join(format!("{name}.itf.json"));
        std::fs::write(&bad, serde_json::to_vec(&corrupt).unwrap()).unwrap();
        let output = slotcheck(&["replay", bad.to_str().unwrap()]);
        assert_eq!(code(&output), 2, "{name}: {}", stdout(&output));
        assert!(
            stderr(&output).contains(says),
            "{name}: {}",
            stderr(&output)
        );
        assert!(!stdout(&output).contains("no longer violated"), "{name}");
    }
}

// ---------------------------------------------------------------- item 7

#[test]
fn filters_that_select_nothing_are_usage_errors() {
    // A design and a property that the file names, but never together.
    let dir = scratch("select-nothing");
    let narrow = dir.join("narrow.toml");
    let text = shipped("SP-OCT-003");
    let cut = text.find("[expect.claim-first]").unwrap();
    let head = &text[..cut];
    std::fs::write(
        &narrow,
        format!(
            "{head}[expect.claim-first]\ncount-not-high = \"violated\"\n\n[expect.owner-keyed]\nno-wedge = \"holds\"\n"
        ),
    )
    .unwrap();
    let output = slotcheck(&[
        "check",
        narrow.to_str().unwrap(),
        "--design",
        "owner-keyed",
        "--property",
        "count-not-high",
    ]);
    assert_eq!(code(&output), 2, "{}", stdout(&output));
    assert!(
        stderr(&output)
            .contains("--design owner-keyed with --property count-not-high select no check"),
        "{}",
        stderr(&output)
    );
    for (args, says) in [
        (
            vec!["check", "--only", "SP-OCT-003", "--design", "before-1649"],
            "--design before-1649: no selected scenario expects anything of it",
        ),
        (
            vec!["check", "--only", "nightly-n3-k2", "--skip-slow"],
            "--skip-slow leaves out every selected scenario",
        ),
        (
            vec![
                "check",
                "--only",
                "SP-OCT-003",
                "--property",
                "no-double-run",
            ],
            "--property no-double-run: no selected scenario expects anything of it",
        ),
        (vec!["simulate", "--runs", "0"], "--runs"),
        (vec!["simulate", "--runs", "1", "--shard", "2/2"], "no run"),
    ] {
        let output = slotcheck(&args);
        assert_eq!(code(&output), 2, "{args:?}: {}", stdout(&output));
        assert!(
            stderr(&output).contains(says),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "{args:?}: {}", stdout(&output));
    }
}

// ---------------------------------------------------------------- item 8

#[test]
fn unreached_witnesses_say_why_the_check_fails() {
    let output = slotcheck(&[
        "check",
        "--design",
        "owner-keyed",
        "--requests",
        "1",
        "--crashes",
        "1",
        "--stalls",
        "0",
        "--quiet",
    ]);
    assert_eq!(code(&output), 1);
    let text = stdout(&output);
    assert!(
        text.contains("some-superseded, some-dead-lettered, some-held not reached"),
        "{text}"
    );
    assert!(text.contains("--property"), "{text}");
}

// ---------------------------------------------------------------- item 9

#[test]
fn scenario_flags_and_bounds_together_name_both() {
    let output = slotcheck(&[
        "check",
        "--design",
        "claim-first",
        "--junit",
        "j.xml",
        "--requests",
        "1",
    ]);
    assert_eq!(code(&output), 2);
    let err = stderr(&output);
    assert!(
        err.contains("--requests") && err.contains("--junit"),
        "{err}"
    );
    assert!(!err.contains("give --design"), "{err}");
    // `--option` is the flag's name, not `--options`.
    let output = slotcheck(&["check", "--option", "split-read"]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("--option: ") && !stderr(&output).contains("--options"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn format_is_refused_where_it_cannot_be_honoured_and_draws_nothing_empty() {
    let output = slotcheck(&["check", "scenarios/SP-OCT-003.toml", "--format", "svg"]);
    assert_eq!(code(&output), 2, "{}", stdout(&output));
    assert!(stderr(&output).contains("--format"), "{}", stderr(&output));

    for format in ["svg", "mermaid"] {
        let output = slotcheck(&[
            "check",
            "--design",
            "owner-keyed",
            "--requests",
            "1",
            "--stalls",
            "0",
            "--property",
            "no-wedge",
            "--quiet",
            "--format",
            format,
        ]);
        assert_eq!(code(&output), 0);
        assert!(stdout(&output).is_empty(), "{format}: {}", stdout(&output));
        assert!(
            stderr(&output).contains("no violation: nothing to draw"),
            "{format}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn explore_refuses_a_trace_of_other_bounds() {
    let dir = scratch("explore-from");
    let output = slotcheck(&[
        "check",
        "--design",
        "claim-first",
        "--requests",
        "1",
        "--stalls",
        "0",
        "--property",
        "no-wedge",
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 1);
    let trace = dir.join("claim-first-no-wedge-check.itf.json");
    let output = within(
        Duration::from_secs(20),
        &[
            "explore",
            "--design",
            "claim-first",
            "--requests",
            "2",
            "--stalls",
            "0",
            "--port",
            "0",
            "--from",
            trace.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("recorded on requests 1,"),
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("--requests 1"),
        "{}",
        stderr(&output)
    );
}

// ---------------------------------------------------------------- item 10

#[test]
fn errors_speak_the_users_language() {
    let output = slotcheck(&["check", "--design", "claim-first", "--requests", "-1"]);
    assert_eq!(code(&output), 2);
    let err = stderr(&output);
    assert!(
        err.contains("'-1'") && err.contains("from 1 to 32"),
        "{err}"
    );
    assert!(!err.contains("tip: to pass"), "{err}");

    let output = slotcheck(&["simulate", "--swarm", "--range", "stalls=5..=1"]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("--range stalls=5..=1: the range is empty"),
        "{}",
        stderr(&output)
    );

    // Zero budgets are refused alike.
    for flag in ["--max-states", "--timeout"] {
        let output = slotcheck(&["check", "--design", "claim-first", flag, "0"]);
        assert_eq!(code(&output), 2, "{flag}");
        assert!(
            stderr(&output).contains(flag),
            "{flag}: {}",
            stderr(&output)
        );
    }

    // "1 run", whatever the rate that follows says ("14501 runs/s").
    let output = slotcheck(&["simulate", "--design", "claim-first", "--runs", "1"]);
    let one_runs = |text: &str| text.contains(" 1 runs") || text.starts_with("1 runs");
    assert!(!one_runs(&stdout(&output)), "{}", stdout(&output));
    assert!(!one_runs(&stderr(&output)), "{}", stderr(&output));
}

#[test]
fn a_bound_out_of_its_type_names_the_field_the_range_and_the_value() {
    let dir = scratch("bound-1000");
    let text = shipped("SP-OCT-003").replacen("crashes = 1", "crashes = 1000", 1);
    let file = dir.join("big.toml");
    std::fs::write(&file, &text).unwrap();
    let output = slotcheck(&["check", file.to_str().unwrap()]);
    assert_eq!(code(&output), 2);
    let err = stderr(&output);
    assert!(
        err.contains("`bounds.crashes`: must be a whole number from 0 to 255, not 1000"),
        "{err}"
    );
    assert!(!err.contains("u8"), "{err}");
}

#[test]
fn a_duplicate_id_names_both_files_and_lines() {
    let dir = scratch("duplicate-id");
    std::fs::write(dir.join("a.toml"), shipped("SP-OCT-003")).unwrap();
    let padded = format!("# a copy\n\n{}", shipped("SP-OCT-003"));
    std::fs::write(dir.join("b.toml"), padded).unwrap();
    let output = slotcheck(&["check", dir.to_str().unwrap()]);
    assert_eq!(code(&output), 2);
    let err = stderr(&output);
    let line = shipped("SP-OCT-003")
        .lines()
        .position(|l| l.starts_with("id = "))
        .unwrap()
        + 1;
    assert!(
        err.contains(&format!("b.toml:{}:6: `id`", line + 2)),
        "{err}"
    );
    assert!(err.contains(&format!("a.toml:{line}:6")), "{err}");
}

/// `--timeout` is one promise for the whole command: every design of a
/// compare shares it, so the designs after the first find it spent.
#[test]
fn compare_timeout_bounds_the_whole_command_not_each_design() {
    let output = slotcheck(&[
        "compare",
        "--requests",
        "3",
        "--max-concurrent",
        "2",
        "--crashes",
        "2",
        "--timeout",
        "0.5",
        "--json",
        "--quiet",
    ]);
    assert_eq!(code(&output), 3);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let stats = report["stats"].as_array().unwrap();
    assert!(stats.iter().all(|s| s["cut_short"].is_string()));
    let last = stats.last().unwrap();
    assert_eq!(
        last["unique"], 1,
        "the last design found the deadline spent"
    );
}
