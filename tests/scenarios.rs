//! `slotcheck check` over scenario files, through the built binary: the
//! shipped scenarios pass, a changed expectation is a regression (exit 1)
//! (a changed step count alone a story change: exit 0, or 4 when strict),
//! bad input names file:line:column and the field (exit 2) and writes no
//! report, and the reports are valid JUnit XML, JSON and ITF.

use crate::common;

use crate::common::{code, stderr, stdout};

use crate::common::{slotcheck, ROOT};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> common::Scratch {
    common::scratch("scenarios", name)
}

fn shipped(id: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join("scenarios").join(format!("{id}.toml"))).unwrap()
}

/// Checks that `xml` is well formed (quick-xml checks that end tags match,
/// attributes are quoted and unique) and returns the names of its elements.
fn xml_elements(xml: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut names = Vec::new();
    let mut depth = 0i32;
    loop {
        let event = reader.read_event().expect("well-formed XML");
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                if matches!(event, Event::Start(_)) {
                    depth += 1;
                }
                names.push(e.name().as_ref().to_string());
                for a in e.attributes() {
                    a.expect("well-formed attribute")
                        .normalized_value(quick_xml::XmlVersion::Explicit1_0)
                        .expect("valid attribute escapes");
                }
            }
            Event::End(_) => depth -= 1,
            Event::GeneralRef(r) => {
                let name = r.to_string();
                assert!(
                    ["amp", "lt", "gt", "quot", "apos"].contains(&name.as_str())
                        || name.starts_with('#'),
                    "undefined entity &{name};"
                );
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(depth, 0, "every element is closed");
    names
}

/// An ITF trace as `src/report/itf.rs` writes it.
fn assert_itf(path: &Path) {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
    assert_eq!(doc["#meta"]["format"], "ITF", "{}", path.display());
    let vars = doc["vars"].as_array().expect("vars");
    let states = doc["states"].as_array().expect("states");
    assert!(
        states.len() >= 2,
        "{}: a counterexample has steps",
        path.display()
    );
    for state in states {
        for var in vars {
            assert!(
                state.get(var.as_str().unwrap()).is_some(),
                "{}: every state has {var}",
                path.display()
            );
        }
    }
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

#[test]
fn every_shipped_scenario_runs_as_expected_and_the_reports_are_valid() {
    let dir = scratch("shipped");
    let junit = dir.join("junit.xml");
    let json = dir.join("report.json");
    let out = dir.join("traces");
    let html = dir.join("report.html");
    // nightly-n3-k2 is `slow = true`: CI runs it nightly, the test suite does
    // not. Nor the coverage grid's cells (`scenarios/grid-*.toml`, two
    // thirds of the guard's time, whose coverage tests/grid.rs checks
    // statically): the nightly's `slotcheck check` runs them.
    let files: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("grid-")
        })
        .collect();
    let threads = common::cores();
    let paths: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let output = slotcheck(
        &[
            &[
                "check",
                "--skip-slow",
                "--threads",
                &threads,
                "--html",
                html.to_str().unwrap(),
                "--junit",
                junit.to_str().unwrap(),
                "--json-out",
                json.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ][..],
            &paths,
        ]
        .concat(),
    );
    assert_eq!(code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    let text = stdout(&output);
    assert!(text.contains(" 0 regressions, 0 inconclusive"), "{text}");
    assert!(files.len() >= 6, "the issue's scenarios are shipped");
    for file in &files {
        let id = file.file_stem().unwrap().to_str().unwrap();
        assert!(text.contains(id), "a line for {id}:\n{text}");
    }

    let xml = std::fs::read_to_string(&junit).unwrap();
    let elements = xml_elements(&xml);
    assert_eq!(elements.iter().filter(|n| *n == "testsuites").count(), 1);
    assert_eq!(
        elements.iter().filter(|n| *n == "testsuite").count(),
        files.len()
    );
    assert!(elements.iter().filter(|n| *n == "testcase").count() > 3 * files.len());
    assert!(!elements.iter().any(|n| n == "failure"));

    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let schema: Value = serde_json::from_slice(
        &std::fs::read(Path::new(ROOT).join("docs/report.schema.json")).unwrap(),
    )
    .unwrap();
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(&report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not as docs/report.schema.json says: {errors:#?}"
    );
    assert_eq!(report["summary"]["regressions"], 0);
    assert_eq!(report["scenarios"].as_array().unwrap().len(), files.len());

    let traces: Vec<PathBuf> = files_under(&out)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".itf.json"))
        .collect();
    let violated = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["results"].as_array().unwrap())
        .filter(|r| r["verdict"] == "violated")
        .count();
    assert_eq!(
        traces.len(),
        violated,
        "one trace per counterexample and story"
    );
    let models: std::collections::BTreeSet<String> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models.len(), 2, "both models' scenarios ran: {models:?}");
    for trace in &traces {
        assert_itf(trace);
        let story = trace.to_string_lossy().replace(".itf.json", ".txt");
        assert!(Path::new(&story).exists(), "{story} beside its trace");
        // Every trace `--out` writes replays (one bounds encoding for every
        // writer and reader), from its own first state, to its violation.
        let replayed = slotcheck::simulate::replay::replay_file(trace)
            .unwrap_or_else(|e| panic!("{}: {e}", trace.display()));
        assert!(replayed.violates, "{}: {}", trace.display(), replayed.text);
        assert!(!replayed.text.contains("note:"), "{}", replayed.text);
    }
    the_page_keeps_every_story_in_under_a_megabyte(&html, &traces);
}

/// The HTML report of the run: a byte bound (the nightly run keeps the
/// whole set's page, slow scenarios included, under 1,000,000 bytes; this
/// run's leaves them room), and every counterexample's story on the page
/// or packed in it.
fn the_page_keeps_every_story_in_under_a_megabyte(html: &Path, traces: &[PathBuf]) {
    let page = std::fs::read_to_string(html).unwrap();
    assert!(
        page.len() < 900_000,
        "the scenario report is {} bytes: the nightly set's must stay under 1 MB",
        page.len()
    );
    let packed = slotcheck::report::html::lazy::unpack(&page).join("");
    let escape = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    for trace in traces {
        let file = trace.to_string_lossy().replace(".itf.json", ".txt");
        let text = std::fs::read_to_string(&file).unwrap();
        // The file is a heading, a blank line, then the story.
        let story = escape(text.split_once("\n\n").unwrap().1);
        assert!(
            page.contains(&story) || packed.contains(&story),
            "{file}: its story is not in the HTML report"
        );
    }
}

#[test]
fn a_changed_expectation_exits_1_and_names_the_regression() {
    let dir = scratch("regression");
    let text = shipped("SP-OCT-003").replace(
        "no-wedge = { verdict = \"violated\", steps = 8 }",
        "no-wedge = \"holds\"",
    );
    assert!(text.contains("no-wedge = \"holds\""));
    let file = dir.join("SP-OCT-003.toml");
    std::fs::write(&file, text).unwrap();
    let junit = dir.join("junit.xml");
    let output = slotcheck(&[
        "check",
        file.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let line = stdout(&output)
        .lines()
        .find(|l| l.contains("REGRESSION"))
        .expect("a regression line")
        .to_string();
    assert!(line.starts_with("SP-OCT-003"), "{line}");
    assert!(line.contains("claim-first"), "{line}");
    assert!(line.contains("no-wedge"), "{line}");
    assert!(
        line.contains("REGRESSION: expected holds, got violated (8 steps)"),
        "{line}"
    );
    // The JUnit failure carries the story.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml_elements(&xml).iter().any(|n| n == "failure"));
    assert!(xml.contains("crash; process(R1) is visible again"), "{xml}");
}

/// A scenario file whose pinned step count is wrong but whose verdicts are
/// right: a story change, not a regression. It warns and exits 0, fails
/// with exit 4 under `--strict-lengths`, and says so in every output.
#[test]
fn a_changed_step_count_is_a_story_change_and_exits_4_only_when_strict() {
    let dir = scratch("steps");
    let text = shipped("SP-OCT-003").replace(
        "count-not-high = { verdict = \"violated\", steps = 8 }",
        "count-not-high = { verdict = \"violated\", steps = 7 }",
    );
    assert!(text.contains("steps = 7 }"));
    let file = dir.join("x.toml");
    std::fs::write(&file, text).unwrap();
    let (junit, page) = (dir.join("junit.xml"), dir.join("report.html"));
    let run = |strict: bool| {
        let mut args = vec![
            "check",
            file.to_str().unwrap(),
            "--design",
            "claim-first",
            "--junit",
            junit.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ];
        if strict {
            args.push("--strict-lengths");
        }
        slotcheck(&args)
    };

    let output = run(false);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("story change: expected violated (7 steps), got violated (8 steps)"),
        "{text}"
    );
    assert!(!text.contains("REGRESSION"), "{text}");
    assert!(
        text.contains(" 0 regressions, 0 inconclusive, 1 story change"),
        "{text}"
    );
    assert!(
        stderr(&output).contains("warning: 1 story change"),
        "{}",
        stderr(&output)
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(!xml_elements(&xml).iter().any(|n| n == "failure"), "{xml}");
    assert!(
        xml.contains("<system-out>story change: expected violated (7 steps)"),
        "{xml}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("violated (8 steps) (expected violated (7 steps))</a> <span class=\"tag\">STORY CHANGE</span>"),
        "{html}"
    );
    assert!(!html.contains("class=\"bad regression\""));

    let output = run(true);
    assert_eq!(code(&output), 4, "{}", stderr(&output));
    assert!(!stderr(&output).contains("warning"));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<failure message=\"story change: expected violated (7 steps), got violated (8 steps) (the verdict as pinned)\" type=\"story-change\">"),
        "{xml}"
    );

    let output = slotcheck(&[
        "check",
        file.to_str().unwrap(),
        "--design",
        "claim-first",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["summary"]["story_changes"], 1);
    assert_eq!(report["summary"]["regressions"], 0);
    assert_eq!(report["summary"]["exit"], 0);
    let changed: Vec<&serde_json::Value> = report["scenarios"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "story-change")
        .collect();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["property"], "count-not-high");
    assert_eq!(changed[0]["expected_steps"], 7);
    assert_eq!(changed[0]["steps"], 8);
}

/// A wrong pinned verdict stays a regression (exit 1), with or without
/// `--strict-lengths`, even when its step count is pinned too.
#[test]
fn a_changed_verdict_is_still_a_regression_under_either_flag() {
    let dir = scratch("verdict");
    let text = shipped("SP-OCT-003").replace(
        "count-not-high = { verdict = \"violated\", steps = 8 }",
        "count-not-high = \"holds\"",
    );
    assert!(text.contains("count-not-high = \"holds\""));
    let file = dir.join("x.toml");
    std::fs::write(&file, text).unwrap();
    for strict in [false, true] {
        let mut args = vec!["check", file.to_str().unwrap(), "--design", "claim-first"];
        if strict {
            args.push("--strict-lengths");
        }
        let output = slotcheck(&args);
        assert_eq!(code(&output), 1, "{}", stderr(&output));
        assert!(
            stdout(&output).contains("REGRESSION: expected holds, got violated (8 steps)"),
            "{}",
            stdout(&output)
        );
        assert!(!stdout(&output).contains("story change"));
    }
}

#[test]
fn a_cut_short_run_is_inconclusive_and_exits_3() {
    let output = slotcheck(&[
        "check",
        "scenarios/SP-OCT-005.toml",
        "--design",
        "owner-keyed",
        "--max-states",
        "50",
    ]);
    assert_eq!(code(&output), 3, "{}", stdout(&output));
    assert!(
        stdout(&output).contains("inconclusive: the state budget"),
        "{}",
        stdout(&output)
    );
}

/// Runs `check` on `text` written beside a valid file, with every report
/// asked for, and returns stderr after checking that the run exited 2 and
/// wrote nothing.
fn invalid(name: &str, text: &str) -> String {
    let dir = scratch(name);
    std::fs::write(dir.join("a-valid.toml"), shipped("SP-OCT-003")).unwrap();
    std::fs::write(dir.join("broken.toml"), text).unwrap();
    let reports = dir.join("reports");
    let output = slotcheck(&[
        "check",
        dir.to_str().unwrap(),
        "--junit",
        reports.join("junit.xml").to_str().unwrap(),
        "--json-out",
        reports.join("report.json").to_str().unwrap(),
        "--out",
        reports.join("traces").to_str().unwrap(),
        "--html",
        reports.join("report.html").to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 2, "{}{}", stdout(&output), stderr(&output));
    assert!(!reports.exists(), "no report is written for invalid input");
    assert!(
        stdout(&output).is_empty(),
        "nothing ran: {}",
        stdout(&output)
    );
    stderr(&output)
}

/// The error line names `broken.toml:LINE:COLUMN` and the field.
fn assert_names(err: &str, line_column: &str, field: &str, says: &str) {
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with("error: "), "{err}");
    assert!(
        first.contains(&format!("broken.toml:{line_column}: ")),
        "{err}"
    );
    assert!(first.contains(&format!("`{field}`")), "{err}");
    assert!(first.contains(says), "{err}");
}

/// SP-OCT-003's text with one line replaced.
fn sp_oct_003_with(old: &str, new: &str) -> String {
    let text = shipped("SP-OCT-003");
    assert!(text.contains(old), "{old}");
    text.replacen(old, new, 1)
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect(needle) + 1
}

#[test]
fn malformed_toml_exits_2_with_its_position() {
    let text = sp_oct_003_with("stalls = 0", "stalls = = 0");
    let line = line_of(&text, "stalls = = 0");
    let err = invalid("malformed", &text);
    assert_names(&err, &format!("{line}:10"), "bounds.stalls", "invalid");
}

#[test]
fn an_unknown_key_exits_2_naming_it() {
    let text = sp_oct_003_with("stalls = 0", "stalls = 0\nstall = 1");
    let line = line_of(&text, "stall = 1");
    let err = invalid("unknown-key", &text);
    assert_names(
        &err,
        &format!("{line}:1"),
        "bounds.stall",
        "unknown field `stall`",
    );
}

#[test]
fn a_wrong_type_exits_2_naming_the_field() {
    let text = sp_oct_003_with("requests = 1", "requests = \"one\"");
    let line = line_of(&text, "requests = \"one\"");
    let err = invalid("wrong-type", &text);
    assert_names(
        &err,
        &format!("{line}:12"),
        "bounds.requests",
        "invalid type: string",
    );
}

#[test]
fn an_unknown_design_exits_2() {
    let text = sp_oct_003_with("[expect.owner-keyed]", "[expect.owner-keyd]");
    let line = line_of(&text, "[expect.owner-keyd]");
    let err = invalid("unknown-design", &text);
    assert_names(
        &err,
        &format!("{line}:2"),
        "expect.owner-keyd",
        "unknown design `owner-keyd`",
    );
}

#[test]
fn an_unknown_property_exits_2() {
    let text = sp_oct_003_with("count-not-low = \"holds\"", "count-not-lo = \"holds\"");
    let line = line_of(&text, "count-not-lo =");
    let err = invalid("unknown-property", &text);
    assert_names(
        &err,
        &format!("{line}:1"),
        "expect.claim-first.count-not-lo",
        "unknown property",
    );
}

#[test]
fn a_verdict_that_does_not_fit_the_property_exits_2() {
    let text = sp_oct_003_with(
        "some-superseded = \"not-reached\"",
        "some-superseded = \"holds\"",
    );
    let line = line_of(&text, "some-superseded = \"holds\"");
    let err = invalid("wrong-verdict", &text);
    assert_names(
        &err,
        &format!("{line}:19"),
        "expect.claim-first.some-superseded",
        "witness",
    );
}

#[test]
fn an_unknown_model_exits_2() {
    let text = sp_oct_003_with("model = \"stovepipe\"", "model = \"stovepip\"");
    let line = line_of(&text, "model = \"stovepip\"");
    let err = invalid("unknown-model", &text);
    assert_names(
        &err,
        &format!("{line}:9"),
        "model",
        "unknown model `stovepip`",
    );
}

#[test]
fn an_unknown_option_exits_2() {
    let text = sp_oct_003_with(
        "model = \"stovepipe\"",
        "model = \"stovepipe\"\noptions = [\"split-reads\"]",
    );
    let line = line_of(&text, "options = ");
    let err = invalid("unknown-option", &text);
    assert_names(
        &err,
        &format!("{line}:12"),
        "options",
        "unknown stovepipe option `split-reads`",
    );
}

#[test]
fn bounds_out_of_range_exit_2() {
    let text = sp_oct_003_with("requests = 1", "requests = 0");
    let line = line_of(&text, "requests = 0");
    let err = invalid("requests-zero", &text);
    assert_names(
        &err,
        &format!("{line}:12"),
        "bounds.requests",
        "must be a whole number from 1 to 32, not 0",
    );

    let text = sp_oct_003_with("crashes = 1", "crashes = 300");
    let line = line_of(&text, "crashes = 300");
    let err = invalid("crashes-big", &text);
    assert_names(&err, &format!("{line}:11"), "bounds.crashes", "300");
}

#[test]
fn a_story_step_that_is_not_enabled_exits_2() {
    // Worker 1 is dead after the crash: it cannot step.
    let text = sp_oct_003_with(
        "    \"step worker 2\",   # read: R1 accepted, count 1",
        "    \"step worker 1\",   # read: R1 accepted, count 1",
    );
    let line = line_of(&text, "\"step worker 1\",   # read: R1 accepted, count 1");
    let err = invalid("story-step", &text);
    assert_names(
        &err,
        &format!("{line}:5"),
        "story[0].steps[6]",
        "story step 7 `step worker 1`: worker 1 is not running",
    );
}

#[test]
fn a_story_step_that_is_not_a_step_exits_2() {
    let text = sp_oct_003_with("    \"arrive R1\",\n", "    \"arrive R2\",\n");
    let line = line_of(&text, "\"arrive R2\"");
    let err = invalid("story-words", &text);
    assert_names(
        &err,
        &format!("{line}:5"),
        "story[0].steps[0]",
        "the next to arrive is R1",
    );
}

#[test]
fn duplicate_ids_exit_2() {
    let err = invalid("duplicate", &shipped("SP-OCT-003"));
    assert!(
        err.contains("broken.toml:4:6: `id`: `SP-OCT-003` is also the ID of"),
        "{err}"
    );
}

#[test]
fn bounds_flags_are_refused_when_scenarios_bring_their_own() {
    let output = slotcheck(&["check", "scenarios/SP-OCT-003.toml", "--requests", "3"]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("--requests: scenario files bring their own model and bounds"),
        "{}",
        stderr(&output)
    );
    let output = slotcheck(&[
        "check",
        "scenarios/link-skew-40-loses-ask.toml",
        "--skew",
        "35",
    ]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("--skew: scenario files bring their own model and bounds"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn only_narrows_to_one_scenario_and_rejects_an_unknown_id() {
    let output = slotcheck(&[
        "check",
        "--only",
        "SP-OCT-003",
        "--design",
        "owner-keyed",
        "--property",
        "no-wedge",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let lines: Vec<String> = stdout(&output)
        .lines()
        .filter(|l| l.contains(" ok "))
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("SP-OCT-003")
            && lines[0].contains("owner-keyed")
            && lines[0].contains("no-wedge")
    );

    let output = slotcheck(&["check", "--only", "SP-OCT-999"]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("no scenario has the ID `SP-OCT-999`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn scenario_new_writes_a_template_that_asks_for_expectations() {
    let dir = scratch("new");
    let output = slotcheck(&[
        "scenario",
        "new",
        "SP-OCT-042",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let file = dir.join("SP-OCT-042.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("id = \"SP-OCT-042\""));
    // Valid TOML with every required key; it stops at the empty expectations.
    let output = slotcheck(&["check", file.to_str().unwrap()]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("`expect.claim-first`: no expectations"),
        "{}",
        stderr(&output)
    );
    // Never over an existing file.
    let again = slotcheck(&[
        "scenario",
        "new",
        "SP-OCT-042",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&again), 2);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn the_ad_hoc_check_of_one_design_still_works() {
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
    ]);
    assert_eq!(code(&output), 1);
    assert!(
        stdout(&output).contains("no-wedge: the shortest counterexample, 8 steps"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_missing_bound_exits_2_naming_its_table() {
    let text = sp_oct_003_with("stalls = 0\n", "");
    let line = line_of(&text, "[bounds]");
    let err = invalid("missing-bound", &text);
    assert_names(
        &err,
        &format!("{line}:1"),
        "bounds",
        "missing field `stalls`",
    );
}

#[test]
fn json_alone_prints_the_report_instead_of_the_lines() {
    let output = slotcheck(&[
        "check",
        "scenarios/SP-OCT-003.toml",
        "--design",
        "claim-first",
        "--json",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).expect("only JSON on stdout");
    let results = report["scenarios"][0]["results"].as_array().unwrap();
    let no_wedge = results
        .iter()
        .find(|r| r["property"] == "no-wedge")
        .unwrap();
    assert_eq!(no_wedge["status"], "ok");
    assert_eq!(no_wedge["verdict"], no_wedge["expected"]);
    assert_eq!(no_wedge["steps"], no_wedge["expected_steps"]);
}

/// A shipped link scenario's text with one line replaced.
fn link_with(old: &str, new: &str) -> String {
    let text = shipped("link-skew-40-loses-ask");
    assert!(text.contains(old), "{old}");
    text.replacen(old, new, 1)
}

#[test]
fn an_unknown_link_bound_exits_2_naming_it() {
    // `late_by` is the link model's key; the command line's `--late-by` is not.
    let text = link_with("late_by = 10", "late-by = 10");
    let line = line_of(&text, "late-by = 10");
    let err = invalid("link-unknown-key", &text);
    assert_names(
        &err,
        &format!("{line}:1"),
        "bounds.late-by",
        "unknown field `late-by`",
    );
}

#[test]
fn a_link_bound_the_model_rejects_exits_2_at_its_value() {
    let text = link_with("skew = 40", "skew = 42");
    let line = line_of(&text, "skew = 42");
    let err = invalid("link-skew", &text);
    assert_names(
        &err,
        &format!("{line}:8"),
        "bounds.skew",
        "skew must be a multiple of 5 s (one tick), not 42",
    );

    let text = link_with("longest_build = 60", "longest_build = 0");
    let line = line_of(&text, "longest_build = 0");
    let err = invalid("link-longest-build", &text);
    assert_names(
        &err,
        &format!("{line}:17"),
        "bounds.longest_build",
        "longest build must be at least 5 s",
    );
}

#[test]
fn a_link_story_in_the_other_model_s_words_exits_2() {
    let text = link_with("    \"fetch b2\",\n", "    \"arrive R1\",\n");
    let line = line_of(&text, "\"arrive R1\"");
    let err = invalid("link-story-words", &text);
    assert_names(
        &err,
        &format!("{line}:5"),
        "story[0].steps[0]",
        "`arrive R1` is not a step (tick, queue A1, fetch b1",
    );
}

#[test]
fn a_stovepipe_option_in_a_link_scenario_exits_2() {
    let text = link_with(
        "model = \"link\"",
        "model = \"link\"\noptions = [\"split-read\"]",
    );
    let line = line_of(&text, "options = ");
    let err = invalid("link-option", &text);
    assert_names(
        &err,
        &format!("{line}:12"),
        "options",
        "unknown link option `split-read` (known: stale-ack-ignored, atomic-start, single-late-answer, expiry-less-10ms, redelivery-queue)",
    );
}

#[test]
fn the_html_report_has_every_scenario_design_and_property_with_the_diagrams() {
    let dir = scratch("html");
    let page = dir.join("report.html");
    let json = dir.join("report.json");
    let output = slotcheck(&[
        "check",
        "scenarios/link-before-1649-double-run.toml",
        "scenarios/SP-OCT-003.toml",
        "--html",
        page.to_str().unwrap(),
        "--json-out",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    let html = std::fs::read_to_string(&page).unwrap();
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let scenarios = report["scenarios"].as_array().unwrap();
    let results: Vec<&Value> = scenarios
        .iter()
        .flat_map(|s| s["results"].as_array().unwrap())
        .collect();
    // One cell per scenario x design x property (stories included).
    assert!(
        html.contains(&format!("<p class=\"summary\">{} verdicts;", results.len())),
        "{html}"
    );
    assert!(html.contains("0 differ from what is expected"));
    for s in scenarios {
        let id = s["id"].as_str().unwrap();
        assert!(html.contains(&format!("<details class=\"scenario\" id=\"s-{id}\"")));
    }
    // What a browser draws when a folded part is opened: the page's packed
    // entries (every scenario here went as expected, so its tables are
    // packed too).
    let packed = slotcheck::report::html::lazy::unpack(&html).join("\n");
    let drawn = format!("{html}{packed}");
    // The link scenario's designs in the model's order, its double run the
    // finding reproduced (as expected, so not painted as a failure), linked
    // to its story, which is folded on the page with its diagram packed.
    assert!(drawn.contains(
        "<th>before-1649</th><th>after-1649</th><th>check-only</th><th>margin-only</th>"
    ));
    let link = "<td class=\"expected\"><a href=\"#t-";
    let at = drawn
        .find(link)
        .expect("a verdict linked to its folded story");
    let anchor = &drawn[at + link.len() - 2..];
    let anchor = &anchor[..anchor.find('"').unwrap()];
    assert!(html.contains(&format!("<details class=\"finding\" id=\"{anchor}\">")));
    assert!(drawn.contains("<th>story (no-double-run)</th>"));
    assert!(drawn.contains("no-double-run violated at t=60s: A2 is built by b1 and b2"));
    assert!(
        packed.contains("<div class=\"diagram\">"),
        "the diagrams are packed, drawn when opened"
    );
    assert!(
        drawn.contains("<td>link-before-1649-double-run · before-1649</td>"),
        "the statistics"
    );
    assert!(!drawn.contains("REGRESSION"));
}

#[test]
fn the_html_report_outlines_a_regression() {
    let dir = scratch("html-regression");
    let text = shipped("SP-OCT-003").replace(
        "no-wedge = { verdict = \"violated\", steps = 8 }",
        "no-wedge = \"holds\"",
    );
    let file = dir.join("SP-OCT-003.toml");
    std::fs::write(&file, text).unwrap();
    let page = dir.join("report.html");
    let output = slotcheck(&[
        "check",
        file.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<td class=\"bad regression\"><a href=\"#r-SP-OCT-003---claim-first-no-wedge\">violated (8 steps) (expected holds)</a> <span class=\"tag\">REGRESSION</span></td>"),
        "{html}"
    );
    assert!(html.contains("1 differ from what is expected"));
    assert_eq!(html.matches("class=\"bad regression\"").count(), 1);
}

#[test]
fn each_atomic_start_twin_pins_its_originals_bounds_under_the_option() {
    let dir = Path::new(ROOT).join("scenarios");
    let read = |path: &Path| -> toml::Table {
        toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    for file in files_under(&dir) {
        let name = file.file_name().unwrap().to_str().unwrap();
        let is_link = read(&file)["model"].as_str() == Some("link");
        if is_link && !name.ends_with("-atomic-start.toml") {
            let twin = name.replace(".toml", "-atomic-start.toml");
            assert!(dir.join(&twin).exists(), "{name} has no twin {twin}");
        }
    }
    for twin in files_under(&dir) {
        let name = twin.file_name().unwrap().to_str().unwrap();
        let Some(original) = name.strip_suffix("-atomic-start.toml") else {
            continue;
        };
        let (t, o) = (read(&twin), read(&dir.join(format!("{original}.toml"))));
        assert_eq!(t["bounds"], o["bounds"], "{name}");
        assert_eq!(t["model"], o["model"], "{name}");
        let options = |table: &toml::Table| -> Vec<String> {
            table
                .get("options")
                .and_then(|o| o.as_array())
                .map(|o| o.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                .unwrap_or_default()
        };
        let mut expected = options(&o);
        expected.push("atomic-start".into());
        assert_eq!(options(&t), expected, "{name}");
    }
}

/// The properties SP-OCT-003 pins for every design, in the model's order.
const PINNED: [&str; 8] = [
    "no-wedge",
    "builds-within-limit",
    "count-not-low",
    "count-not-high",
    "all-succeed",
    "some-superseded",
    "some-dead-lettered",
    "some-held",
];

fn bless(file: &Path) -> std::process::Output {
    let mut args = vec!["check", "--bless", file.to_str().unwrap()];
    for p in PINNED {
        args.extend(["--property", p]);
    }
    slotcheck(&args)
}

#[test]
fn bless_writes_back_a_removed_design_a_removed_property_and_a_changed_length() {
    let original = shipped("SP-OCT-003");
    // The last design's table gone, a property of the first design gone,
    // and a pinned length changed: bless must give back the shipped file.
    let last = original
        .find("[expect.owner-keyed-cas-only-repairs]")
        .unwrap();
    let stories = original[last..].find("\n# The source's telling").unwrap() + last;
    let mut edited = format!("{}{}", &original[..last - 1], &original[stories..]);
    let held = edited.find("some-held = \"reached\"\n").unwrap();
    edited.replace_range(held..held + "some-held = \"reached\"\n".len(), "");
    let edited = edited.replacen("steps = 8 }", "steps = 9 }", 1);
    assert_ne!(edited, original);
    let dir = scratch("bless");
    let file = dir.join("SP-OCT-003.toml");
    std::fs::write(&file, &edited).unwrap();
    let out = bless(&file);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains("+ [expect.owner-keyed-cas-only-repairs]\n"),
        "{said}"
    );
    assert!(
        said.contains("+ [expect.claim-first] some-held = \"reached\""),
        "{said}"
    );
    assert!(
        said.contains("- [expect.claim-first] no-wedge = { verdict = \"violated\", steps = 9 }"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    // Blessing a file the run confirms changes nothing.
    let again = bless(&file);
    assert_eq!(code(&again), 0);
    assert!(
        stdout(&again).contains("0 rewritten, 0 changed lines"),
        "{}",
        stdout(&again)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

#[test]
fn the_whole_guard_refuses_a_property_no_scenario_expects_until_it_is_blessed() {
    // A scenario folder of one file per model: SP-OCT-003 pins eight of the
    // stovepipe properties, link-before-1649-double-run every link one.
    let dir = scratch("property-guard");
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    for id in ["SP-OCT-003", "link-before-1649-double-run"] {
        std::fs::write(scenarios.join(format!("{id}.toml")), shipped(id)).unwrap();
    }
    let run = |args: &[&str]| {
        common::command()
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap()
    };
    let refused = run(&["check"]);
    assert_eq!(code(&refused), 2, "{}", stdout(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains("stovepipe/outcome-final")
            && said.contains("expected by no scenario under scenarios")
            && said.contains("--bless"),
        "{said}"
    );
    // Adding the properties is a bless (the progress ones too): then the
    // guard runs.
    let blessed = run(&["check", "--bless"]);
    assert_eq!(code(&blessed), 0, "{}", stderr(&blessed));
    assert!(stdout(&blessed).contains("+ [expect.owner-keyed] outcome-final = \"holds\""));
    let guarded = run(&["check"]);
    assert_eq!(code(&guarded), 0, "{}", stderr(&guarded));
}

#[test]
fn bless_leaves_a_slow_file_alone_under_skip_slow() {
    // nightly-n3-k2 takes hours on every design: --skip-slow must not run it.
    let original = shipped("nightly-n3-k2");
    let dir = scratch("bless-slow");
    let file = dir.join("nightly-n3-k2.toml");
    std::fs::write(&file, &original).unwrap();
    let out = slotcheck(&["check", "--bless", "--skip-slow", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.contains("skipped: slow (--skip-slow)"), "{said}");
    assert!(said.contains("1 slow skipped"), "{said}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}
