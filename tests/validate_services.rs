//! `slotcheck validate` on logs as services write them (issue 38): any
//! versions, `null` sets, errors naming the field; nothing to judge is not
//! a pass; the candidate budget a team sets and what its report names;
//! certain and possible violations (`--strict`) and the silent steps an
//! explanation assumed; logs in each process's own order, merged.

use crate::common;
// The independent log writer, validate.rs's.
use crate::validate::writer;

use crate::common::slotcheck;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use slotcheck::validate::{validate_with, Options, Verdict};
use slotcheck_models::events::stovepipe::Event;
use slotcheck_models::events::{self, Header, ModelName, Record};
use slotcheck_models::stovepipe::trace::{queues, QueueTrace};
use slotcheck_models::stovepipe::{Bounds, Design, Stovepipe, DESIGNS};
use slotcheck_models::{Narrated, StoryStep};
use std::collections::HashMap;
use std::path::Path;

const BOUNDS: Bounds = Bounds {
    requests: 3,
    max_concurrent: 1,
    crashes: 2,
    stalls: 1,
    max_deliveries: 2,
};

fn header(bounds: &Bounds) -> Header {
    Header {
        model: Some(ModelName::Stovepipe),
        max_concurrent: Some(bounds.max_concurrent),
        max_deliveries: Some(bounds.max_deliveries),
        ..Header::default()
    }
}

/// A log's text validated against `design`, as the command reads it.
fn run_text(design: Design, text: &str, options: &Options) -> Verdict {
    let mut log = events::parse("test.ndjson", text).expect("a valid log");
    let lines = log.stovepipe_lines();
    let (_, split_read, events) = queues(lines).pop().unwrap_or_default();
    let trace = QueueTrace::new(design, &log.header, split_read, events).expect("in bounds");
    validate_with(&trace, options)
}

/// A random path of the model, cut after its last logged step.
fn random_story(model: &Stovepipe, seed: u64, most: usize) -> Vec<StoryStep> {
    let actions = common::random_walk(model, model.initial_state(), seed, most, |a| !a.is_fault());
    model.tell(&model.initial_state(), &actions)
}

/// The log with every version of the queue row moved by 1,000 and of each
/// request's row by 500 and more (as a production database's rows are),
/// and each empty owner list written `null` (as Go writes a nil slice).
fn as_production(text: &str) -> String {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
        shift(&mut value, None);
        out.push(
            value
                .to_string()
                .replace(
                    "\"in_flight_request_ids\":[]",
                    "\"in_flight_request_ids\":null",
                )
                .replace("\"removed\":[]", "\"removed\":null"),
        );
    }
    out.join("\n") + "\n"
}

/// Moves every version in a line: a request row's (an object with an `id`,
/// or a write naming its `request`) by 500 plus 7 per request number, the
/// queue row's by 1,000.
fn shift(value: &mut serde_json::Value, request: Option<&str>) {
    let by = |request: Option<&str>| match request {
        Some(id) => 500 + 7 * id.trim_start_matches("pr-").parse::<u64>().unwrap(),
        None => 1000,
    };
    let serde_json::Value::Object(map) = value else {
        return;
    };
    let row_request = match (map.get("row"), map.get("request"), map.get("id")) {
        (Some(row), Some(serde_json::Value::String(r)), _) if row == "request" => Some(r.clone()),
        (None, _, Some(serde_json::Value::String(id))) => Some(id.clone()),
        _ => None,
    };
    let here = row_request.as_deref().or(request);
    for key in ["version", "expected_version"] {
        if let Some(serde_json::Value::Number(v)) = map.get(key).cloned() {
            map.insert(key.into(), (v.as_u64().unwrap() + by(here)).into());
        }
    }
    for (key, inner) in map.iter_mut() {
        match inner {
            serde_json::Value::Object(_) => {
                shift(inner, if key == "request" { None } else { here })
            }
            serde_json::Value::Array(items) => {
                for item in items {
                    shift(item, None)
                }
            }
            _ => {}
        }
    }
}

fn verdict_key(v: &Verdict) -> (u8, Vec<String>) {
    (
        v.exit_code(),
        v.violated_properties()
            .iter()
            .map(|s| s.to_string())
            .collect(),
    )
}

#[test]
fn production_versions_and_null_sets_conform_as_the_models_numbering_does() {
    let mut failures = Vec::new();
    let mut shifted_reads = 0;
    for &design in DESIGNS.iter() {
        let model = Stovepipe::new(design, BOUNDS);
        for seed in 0..6 {
            let story = random_story(&model, seed, 50);
            let records = writer::write(&story);
            let text = events::to_ndjson(Some(&header(&BOUNDS)), &records);
            let production = as_production(&text);
            assert_ne!(production, text);
            let before = run_text(design, &text, &Options::default());
            let after = run_text(design, &production, &Options::default());
            if verdict_key(&before) != verdict_key(&after) {
                failures.push(format!(
                    "{} seed {seed}: {} before, {} after",
                    design.name,
                    slotcheck::validate::text("", &before),
                    slotcheck::validate::text("", &after)
                ));
            }
            // A version read one more than the row's departs at that line,
            // its version said in the log's numbering.
            let lines: Vec<&str> = production.lines().collect();
            if let Some(at) = (1..lines.len())
                .skip(lines.len() / 2)
                .find(|&i| lines[i].contains("\"event\":\"read\""))
            {
                let mut value: serde_json::Value = serde_json::from_str(lines[at]).unwrap();
                let v = value["queue_row"]["version"].as_u64().unwrap();
                value["queue_row"]["version"] = (v + 1).into();
                let mut changed: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                changed[at] = value.to_string();
                match run_text(design, &(changed.join("\n") + "\n"), &Options::default()) {
                    Verdict::Departs { line, allowed, .. } if line == at + 1 => {
                        shifted_reads += 1;
                        if !allowed
                            .iter()
                            .any(|a| a.contains(&format!("\"version\":{v}")))
                        {
                            failures.push(format!(
                                "{} seed {seed}: the model's read is not said in the log's numbering: {allowed:?}",
                                design.name
                            ));
                        }
                    }
                    other => failures.push(format!(
                        "{} seed {seed}: a read off by one at line {}: {}",
                        design.name,
                        at + 1,
                        slotcheck::validate::text("", &other)
                    )),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(shifted_reads > 20, "{shifted_reads}");
}

fn example() -> String {
    std::fs::read_to_string(Path::new(common::ROOT).join("docs/examples/stovepipe.ndjson")).unwrap()
}

const RECOMMENDED: &str = "owner-keyed-atomic-admit-dlq-cancels";

#[test]
fn a_bad_value_is_an_error_naming_its_field() {
    let dir = common::scratch("validate_services", "field");
    let path = dir.join("bad.ndjson");
    std::fs::write(
        &path,
        example().replacen("\"state\":\"accepted\"", "\"state\":\"ACCEPTED\"", 1),
    )
    .unwrap();
    let output = slotcheck(&["validate", path.to_str().unwrap(), "--design", RECOMMENDED]);
    let stderr = common::stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.ndjson:4: field `request.state`: unknown value `ACCEPTED`"),
        "{stderr}"
    );
    std::fs::write(
        &path,
        example().replacen("\"version\":1}", "\"version\":\"1\"}", 1),
    )
    .unwrap();
    let output = slotcheck(&["validate", path.to_str().unwrap(), "--design", RECOMMENDED]);
    let stderr = common::stderr(&output);
    assert!(
        stderr.contains("bad.ndjson:4: field `request.version`"),
        "{stderr}"
    );
}

#[test]
fn nothing_to_judge_is_inconclusive_and_missing_queues_are_named() {
    let dir = common::scratch("validate_services", "nothing");
    let text = example();
    let head = text.lines().next().unwrap();
    // A header alone.
    let path = dir.join("header.ndjson");
    std::fs::write(&path, format!("{head}\n")).unwrap();
    let output = slotcheck(&["validate", path.to_str().unwrap(), "--design", RECOMMENDED]);
    let stdout = common::stdout(&output);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("the log has no events, nothing to judge"),
        "{stdout}"
    );
    assert!(stdout.contains("0 queue(s) validated"), "{stdout}");
    // Queues a and b logged; the header names c too.
    let mut lines = vec![head.replacen('{', "{\"queues\":[\"a\",\"b\",\"c\"],", 1)];
    for line in text.lines().skip(1) {
        lines.push(line.replacen('{', "{\"queue\":\"a\",", 1));
        lines.push(line.replacen('{', "{\"queue\":\"b\",", 1));
    }
    let path = dir.join("three.ndjson");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let output = slotcheck(&["validate", path.to_str().unwrap(), "--design", RECOMMENDED]);
    let stdout = common::stdout(&output);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("queue `c` (named in the header) logged no line"),
        "{stdout}"
    );
    assert!(stdout.contains("3 queue(s) validated"), "{stdout}");
    let output = slotcheck(&[
        "validate",
        path.to_str().unwrap(),
        "--design",
        RECOMMENDED,
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["exit_code"], 3);
    assert_eq!(report["queues_validated"], 3);
    assert_eq!(report["designs"][0]["queues"][2]["queue"], "c");
    assert_eq!(report["designs"][0]["queues"][2]["verdict"], "inconclusive");
    // Without the header's list: --expect-queues counts them.
    lines[0] = head.to_string();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let file = path.to_str().unwrap();
    let output = slotcheck(&["validate", file, "--design", RECOMMENDED]);
    assert_eq!(output.status.code(), Some(0), "{}", common::stdout(&output));
    let output = slotcheck(&[
        "validate",
        file,
        "--design",
        RECOMMENDED,
        "--expect-queues",
        "3",
    ]);
    let stdout = common::stdout(&output);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("3 queue(s) expected, the log has 2"),
        "{stdout}"
    );
    // A departure still departs.
    lines[1] = lines[1].replacen("\"arrive\"", "\"finish_build\"", 1);
    std::fs::write(&path, lines.join("\n")).unwrap();
    let output = slotcheck(&[
        "validate",
        file,
        "--design",
        RECOMMENDED,
        "--expect-queues",
        "3",
    ]);
    assert_eq!(output.status.code(), Some(4), "{}", common::stdout(&output));
}

/// The recommended design's random logs with crashes and stalls: the first
/// whose explanation leaves several candidates open.
fn ambiguous_log() -> (Design, String) {
    let design = slotcheck_models::stovepipe::design_named(RECOMMENDED).unwrap();
    let model = Stovepipe::new(design, BOUNDS);
    for seed in 0..200 {
        let story = random_story(&model, seed, 60);
        let text = events::to_ndjson(Some(&header(&BOUNDS)), &writer::write(&story));
        let tight = Options {
            max_candidates: 1,
            ..Options::default()
        };
        if matches!(
            run_text(design, &text, &tight),
            Verdict::Inconclusive { .. }
        ) {
            return (design, text);
        }
    }
    panic!("no log of the recommended design leaves two candidates open");
}

#[test]
fn the_candidate_budget_is_the_teams_and_its_report_names_the_line_and_what_grew() {
    let (design, text) = ambiguous_log();
    assert!(matches!(
        run_text(design, &text, &Options::default()),
        Verdict::Conforms { .. }
    ));
    let dir = common::scratch("validate_services", "budget");
    let path = dir.join("open.ndjson");
    std::fs::write(&path, &text).unwrap();
    let file = path.to_str().unwrap();
    let output = slotcheck(&[
        "validate",
        file,
        "--design",
        RECOMMENDED,
        "--max-candidates",
        "1",
    ]);
    let stdout = common::stdout(&output);
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("inconclusive at line "), "{stdout}");
    assert!(
        stdout.contains("more than the budget of 1 (--max-candidates)"),
        "{stdout}"
    );
    assert!(stdout.contains("the candidates differ"), "{stdout}");
    let output = slotcheck(&["validate", file, "--design", RECOMMENDED]);
    assert!(common::code(&output) <= 1, "{}", common::stdout(&output));
}

#[test]
fn strict_exits_1_only_for_a_certain_violation_and_reports_list_what_was_assumed() {
    let mut possible_only = 0;
    let mut certain = 0;
    let mut assumed_crash = 0;
    for &design in DESIGNS.iter() {
        let model = Stovepipe::new(design, BOUNDS);
        for seed in 0..40 {
            let story = random_story(&model, seed, 60);
            let text = events::to_ndjson(Some(&header(&BOUNDS)), &writer::write(&story));
            let lax = run_text(design, &text, &Options::default());
            let strict = run_text(
                design,
                &text,
                &Options {
                    strict: true,
                    ..Options::default()
                },
            );
            let Verdict::Conforms {
                violated, assumed, ..
            } = &lax
            else {
                panic!(
                    "{} seed {seed}: {}",
                    design.name,
                    slotcheck::validate::text("", &lax)
                );
            };
            if violated.is_empty() {
                assert_eq!(strict.exit_code(), 0);
            } else if violated.iter().any(|v| v.certain) {
                certain += 1;
                assert_eq!((lax.exit_code(), strict.exit_code()), (1, 1));
            } else {
                possible_only += 1;
                assert_eq!((lax.exit_code(), strict.exit_code()), (1, 0));
                assert!(slotcheck::validate::text("", &strict).contains("none for certain"));
            }
            // A crash in the middle of the story (a worker that logs
            // nothing more, its message delivered again) is assumed.
            let crashed_before_end = story
                .iter()
                .rposition(|s| s.actor.starts_with("fault on") && s.action.contains("crash"))
                .is_some_and(|at| at + 1 < story.len());
            if crashed_before_end && !assumed.is_empty() {
                assumed_crash += 1;
                assert!(assumed.iter().any(|a| a.before.is_some()), "{assumed:?}");
            }
        }
    }
    assert!(
        possible_only > 0 && certain > 0,
        "possible {possible_only}, certain {certain}"
    );
    assert!(assumed_crash > 0);
}

/// The process that writes a line: each worker its own, the client, the
/// broker and the build system theirs.
fn process_of(record: &Record<Event>) -> String {
    record.actor.clone()
}

/// The log as its processes wrote it without a turnstile: each line names
/// its process and its sequence there, and the processes' lines are
/// interleaved at random (each process's in its own order).
fn unordered(records: &[Record<Event>], seed: u64) -> Vec<Record<Event>> {
    let mut by_process: Vec<(String, std::collections::VecDeque<Record<Event>>)> = Vec::new();
    let mut seqs: HashMap<String, u64> = HashMap::new();
    for r in records {
        let p = process_of(r);
        let seq = seqs.entry(p.clone()).or_default();
        *seq += 1;
        let mut r = r.clone();
        r.process = Some(p.clone());
        r.seq = Some(*seq);
        match by_process.iter_mut().find(|(name, _)| *name == p) {
            Some((_, lines)) => lines.push_back(r),
            None => by_process.push((p, [r].into())),
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    loop {
        let open: Vec<usize> = (0..by_process.len())
            .filter(|&i| !by_process[i].1.is_empty())
            .collect();
        if open.is_empty() {
            return out;
        }
        let i = open[rng.random_range(0..open.len())];
        out.push(by_process[i].1.pop_front().unwrap());
    }
}

#[test]
fn logs_in_each_processs_own_order_conform_as_the_ordered_log_does() {
    let mut failures = Vec::new();
    let mut reordered = 0;
    for &design in DESIGNS.iter() {
        let model = Stovepipe::new(design, BOUNDS);
        for seed in 0..6 {
            let story = random_story(&model, 500 + seed, 50);
            let records = writer::write(&story);
            let ordered = events::to_ndjson(Some(&header(&BOUNDS)), &records);
            let truth = run_text(design, &ordered, &Options::default());
            let shuffled = unordered(&records, seed);
            if shuffled
                .iter()
                .map(|r| &r.event)
                .ne(records.iter().map(|r| &r.event))
            {
                reordered += 1;
            }
            let text = events::to_ndjson(Some(&header(&BOUNDS)), &shuffled);
            // The ordered log with its processes named is still valid.
            let named: Vec<Record<Event>> = records
                .iter()
                .map(|r| Record {
                    process: Some(process_of(r)),
                    ..r.clone()
                })
                .collect();
            let in_order = run_text(
                design,
                &events::to_ndjson(Some(&header(&BOUNDS)), &named),
                &Options::default(),
            );
            let verdict = run_text(design, &text, &Options::default());
            if !crate::validate::judged_as_ordered(&verdict, &in_order, &truth) {
                failures.push(format!(
                    "{} seed {seed}: {} (in order: {})",
                    design.name,
                    slotcheck::validate::text("", &verdict),
                    slotcheck::validate::text("", &in_order)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(reordered > 30, "{reordered}");
}

#[test]
fn several_files_one_per_process_are_merged() {
    let dir = common::scratch("validate_services", "files");
    let text = example();
    let head = text.lines().next().unwrap();
    let mut files: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines().skip(1) {
        let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
        // No times: the order across files is the rows' versions'.
        value.as_object_mut().unwrap().remove("ts_ms");
        let actor = value["actor"].as_str().unwrap().to_string();
        let file = match files.iter_mut().find(|(a, _)| *a == actor) {
            Some(f) => f,
            None => {
                files.push((actor.clone(), vec![head.to_string()]));
                files.last_mut().unwrap()
            }
        };
        value["seq"] = (file.1.len() as u64).into();
        file.1.push(value.to_string());
    }
    // The files in the reverse order of their first lines.
    files.reverse();
    let mut paths = Vec::new();
    for (actor, lines) in &files {
        let path = dir.join(format!("{actor}.ndjson"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        paths.push(path.to_str().unwrap().to_string());
    }
    let mut args = vec!["validate"];
    args.extend(paths.iter().map(String::as_str));
    args.extend(["--design", RECOMMENDED]);
    let output = slotcheck(&args);
    assert_eq!(output.status.code(), Some(0), "{}", common::stdout(&output));
    // A lost CAS in w-3's file departs, at a line named by its file (the
    // first line no order of the rest can take).
    let w3 = dir.join("w-3.ndjson");
    let changed: Vec<String> = std::fs::read_to_string(&w3)
        .unwrap()
        .lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            if value["set"]["state"] == "succeeded" {
                value["won"] = false.into();
            }
            value.to_string()
        })
        .collect();
    assert!(changed.iter().any(|l| l.contains("\"won\":false")));
    std::fs::write(&w3, changed.join("\n") + "\n").unwrap();
    let output = slotcheck(&args);
    let stdout = common::stdout(&output);
    assert_eq!(output.status.code(), Some(4), "{stdout}");
    assert!(stdout.contains(".ndjson:"), "{stdout}");
    // Two files whose headers differ are a bad log.
    std::fs::write(&w3, "{\"event\":\"header\",\"model\":\"stovepipe\",\"max_concurrent\":2,\"max_deliveries\":2}\n").unwrap();
    let output = slotcheck(&args);
    assert_eq!(output.status.code(), Some(2), "{}", common::stderr(&output));
    assert!(common::stderr(&output).contains("the header differs"));
}

/// A builder whose heartbeats stop after its start: the model explains it
/// by a heartbeat late by up to 600 s, unless the header bounds how late a
/// heartbeat may be; then it departs. The late heartbeat the explanation
/// assumed is listed.
#[test]
fn timing_the_header_bounds_is_all_validate_assumes() {
    let text =
        std::fs::read_to_string(Path::new(common::ROOT).join("docs/examples/link.ndjson")).unwrap();
    let silent: Vec<String> = text
        .lines()
        .filter(|l| !l.contains("\"heartbeat\""))
        .map(|l| {
            l.replace("\"ts_ms\":14000", "\"ts_ms\":44000")
                .replace("\"ts_ms\":14003", "\"ts_ms\":44003")
                .replace("\"ts_ms\":14006", "\"ts_ms\":44006")
                .replace("\"ts_ms\":14100", "\"ts_ms\":44100")
        })
        .collect();
    let dir = common::scratch("validate_services", "timing");
    let path = dir.join("quiet.ndjson");
    std::fs::write(&path, silent.join("\n") + "\n").unwrap();
    let file = path.to_str().unwrap();
    let output = slotcheck(&["validate", file, "--design", "after-1649"]);
    let stdout = common::stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("silent steps assumed"), "{stdout}");
    assert!(stdout.contains("late"), "{stdout}");
    let mut bounded = silent.clone();
    bounded[0] = bounded[0].replacen('{', "{\"heartbeat_late_s\":5,", 1);
    std::fs::write(&path, bounded.join("\n") + "\n").unwrap();
    let output = slotcheck(&["validate", file, "--design", "after-1649"]);
    let stdout = common::stdout(&output);
    assert_eq!(output.status.code(), Some(4), "{stdout}");
}
