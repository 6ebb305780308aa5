//! `slotcheck validate`: every story the checker tells (every finding's, and
//! random paths of every design), written as a log by an independent writer
//! (`validate/writer.rs`, from the story's words and rows), conforms with
//! the same violation; a log with one event changed departs at that line,
//! or, where the change is still a behaviour of the model, conforms, and
//! the model's own explanation, written again by the writer, is that log.

use crate::common;
#[path = "validate/writer.rs"]
pub(crate) mod writer;

use crate::common::slotcheck;
use slotcheck::check::{check, Limits, Verdict as Checked};
use slotcheck::validate::{validate_and_explain, Verdict};
use slotcheck_models::events::stovepipe::Event;
use slotcheck_models::events::{self, Header, ModelName, Record};
use slotcheck_models::stovepipe::trace::{queues, QueueTrace};
use slotcheck_models::stovepipe::{design_named, Bounds, Design, Stovepipe, DESIGNS};
use slotcheck_models::{Narrated, StoryStep};
use stateright::{Expectation, Model};
use std::path::Path;

fn header(bounds: &Bounds) -> Header {
    Header {
        model: Some(ModelName::Stovepipe),
        max_concurrent: Some(bounds.max_concurrent),
        max_deliveries: Some(bounds.max_deliveries),
        ..Header::default()
    }
}

/// The log as a file's text, read back by the parser, and validated against
/// `design`: the verdict, and the model's explanation when it conforms.
fn run(
    design: Design,
    bounds: &Bounds,
    records: &[Record<Event>],
) -> (Verdict, Option<Vec<StoryStep>>) {
    let text = events::to_ndjson(Some(&header(bounds)), records);
    let mut log = events::parse("test.ndjson", &text).expect("the writer writes a valid log");
    let lines = log.stovepipe_lines();
    let mut split = queues(lines);
    let (_, split_read, events) = split.pop().unwrap_or_default();
    let trace = QueueTrace::new(design, &log.header, split_read, events).expect("a log in bounds");
    validate_and_explain(&trace)
}

/// The stovepipe findings: each scenario file that names one, with its
/// bounds.
fn findings() -> Vec<(String, String, Bounds)> {
    let dir = Path::new(common::ROOT).join("scenarios");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let doc: toml::Table = text.parse().unwrap();
        let model = doc.get("model").and_then(|m| m.as_str());
        let (Some("stovepipe"), Some(finding)) =
            (model, doc.get("finding").and_then(|f| f.as_str()))
        else {
            continue;
        };
        let b = doc["bounds"].as_table().unwrap();
        let n = |k: &str, default: u8| b.get(k).map_or(default, |v| v.as_integer().unwrap() as u8);
        let defaults = Bounds::default();
        let bounds = Bounds {
            requests: n("requests", defaults.requests),
            max_concurrent: n("max_concurrent", defaults.max_concurrent),
            crashes: n("crashes", defaults.crashes),
            stalls: n("stalls", defaults.stalls),
            max_deliveries: n("max_deliveries", defaults.max_deliveries),
        };
        out.push((
            doc["id"].as_str().unwrap().to_string(),
            finding.to_string(),
            bounds,
        ));
    }
    assert!(out.len() >= 10, "the findings are found: {}", out.len());
    out
}

/// A counterexample as a story: (finding, design, property, bounds, story).
type Counterexample = (String, &'static str, &'static str, Bounds, Vec<StoryStep>);

/// Every counterexample of every `always` property of every design, on each
/// finding's bounds. Found once for the tests that use them (the checks take
/// most of their time), the designs shared out among the cores.
fn counterexamples() -> &'static [Counterexample] {
    static FOUND: std::sync::OnceLock<Vec<Counterexample>> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        let cases: Vec<(String, Stovepipe)> = findings()
            .into_iter()
            .flat_map(|(id, _, bounds)| {
                DESIGNS
                    .iter()
                    .map(move |&design| (id.clone(), Stovepipe::new(design, bounds)))
            })
            .collect();
        common::par_map(&cases, |(id, model)| {
            let outcome = check(*model, &[], &Limits::default());
            let mut mine = Vec::new();
            for result in &outcome.results {
                // A finite log cannot show a fair loop: validate judges the
                // safety properties, so progress lassos are not logs.
                if result.verdict != Checked::Violated
                    || result.kind == slotcheck_models::PropertyKind::Progress
                {
                    continue;
                }
                let trace = result.trace.as_ref().expect("a violation has a path");
                let story = model.tell(&trace.init, &trace.actions);
                mine.push((
                    id.clone(),
                    model.design.name,
                    result.name,
                    model.bounds,
                    story,
                ));
            }
            mine
        })
        .into_iter()
        .flatten()
        .collect()
    })
}

#[test]
fn every_story_of_every_finding_conforms_with_its_violation() {
    let all = counterexamples();
    assert!(all.len() > 50, "{} counterexamples", all.len());
    let mut failures = Vec::new();
    for (id, design, property, bounds, story) in all {
        // Workers named otherwise than a story numbers them (`worker 3`):
        // validate's explanation says the log's names, so written again it
        // is the log, names and all.
        let records = named_otherwise(&writer::write(story));
        let (verdict, explanation) = run(design_named(design).unwrap(), bounds, &records);
        if !verdict.violated_properties().iter().any(|p| p == property) {
            failures.push(format!(
                "{id} {design} {property}: {}",
                slotcheck::validate::text("", &verdict)
            ));
        }
        let again = explanation.map(|story| writer::write(&story));
        if again.map(|r| events::to_ndjson(None, &r)) != Some(events::to_ndjson(None, &records)) {
            failures.push(format!(
                "{id} {design} {property}: the explanation, written again, names the workers otherwise than the log"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The log with each worker `worker-N` named `host-{9 - N}` (no story's
/// numbering).
fn named_otherwise(records: &[Record<Event>]) -> Vec<Record<Event>> {
    let rename = |name: &mut String| {
        if let Some(n) = name.strip_prefix("worker-") {
            *name = format!("host-{}", 9 - n.parse::<i32>().unwrap());
        }
    };
    let mut out = records.to_vec();
    for r in &mut out {
        rename(&mut r.actor);
        if let Event::Deliver { worker, .. } = &mut r.event {
            rename(worker);
        }
    }
    out
}

/// A random path of the model, cut after its last logged step (faults after
/// it leave no line), and the `always` properties broken along it.
fn random_path(model: &Stovepipe, seed: u64, most: usize) -> (Vec<StoryStep>, Vec<String>) {
    let actions = common::random_walk(model, model.initial_state(), seed, most, |a| !a.is_fault());
    let mut broken = Vec::new();
    let mut s = model.initial_state();
    for &a in &actions {
        s = model.next_state(&s, a).unwrap();
        for p in model.properties() {
            let name = p.name.to_string();
            if p.expectation == Expectation::Always
                && !(p.condition)(model, &s)
                && !broken.contains(&name)
            {
                broken.push(name);
            }
        }
    }
    (model.tell(&model.initial_state(), &actions), broken)
}

const RANDOM_BOUNDS: Bounds = Bounds {
    requests: 3,
    max_concurrent: 1,
    crashes: 2,
    stalls: 1,
    max_deliveries: 2,
};

#[test]
fn random_paths_of_every_design_conform_with_every_violation_they_show() {
    let mut failures = Vec::new();
    for &design in DESIGNS.iter() {
        let model = Stovepipe::new(design, RANDOM_BOUNDS);
        for seed in 0..40 {
            let (story, broken) = random_path(&model, seed, 60);
            let records = writer::write(&story);
            let (verdict, _) = run(design, &RANDOM_BOUNDS, &records);
            let reported = verdict.violated_properties();
            let conforms = matches!(verdict, Verdict::Conforms { .. });
            if !conforms || broken.iter().any(|p| !reported.contains(&p.as_str())) {
                failures.push(format!(
                    "{} seed {seed}: broken {broken:?}: {}",
                    design.name,
                    slotcheck::validate::text("", &verdict)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The log with requests renamed in the order they arrive and workers in
/// the order they are first named: what a log says, whatever its names.
fn canonical(records: &[Record<Event>]) -> String {
    let text = events::to_ndjson(None, records);
    let mut names: Vec<String> = Vec::new();
    for r in records {
        let named = match &r.event {
            Event::Arrive { request } => Some(request.clone()),
            Event::Deliver { worker, .. } => Some(worker.clone()),
            _ => (r.actor.starts_with("worker-")).then(|| r.actor.clone()),
        };
        if let Some(n) = named.filter(|n| !names.contains(n)) {
            names.push(n);
        }
    }
    // Two passes, through placeholders, so that no new name is renamed.
    let mut out = text;
    for (i, n) in names.iter().enumerate() {
        out = out.replace(&format!("\"{n}\""), &format!("\"#{i}#\""));
    }
    out
}

/// One event changed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Change {
    /// A CAS (or transaction, or reap) that won now lost, or the reverse.
    Flipped,
    /// A version read is one more.
    VersionRead,
    Deleted,
    /// Swapped with the next event.
    Swapped,
}

/// The log with event `k` changed, if that change applies to it.
fn changed(records: &[Record<Event>], k: usize, change: Change) -> Option<Vec<Record<Event>>> {
    let mut out = records.to_vec();
    match change {
        Change::Flipped => match &mut out[k].event {
            Event::Cas { won, .. } | Event::Transaction { won, .. } | Event::Reap { won, .. } => {
                *won = !*won
            }
            _ => return None,
        },
        Change::VersionRead => match &mut out[k].event {
            Event::Read { request, .. } | Event::RereadRequest { request } => request.version += 1,
            Event::ReadQueue { queue_row } | Event::RereadQueue { queue_row } => {
                queue_row.version += 1
            }
            _ => return None,
        },
        Change::Deleted => {
            out.remove(k);
        }
        Change::Swapped => {
            if k + 1 >= out.len() {
                return None;
            }
            out.swap(k, k + 1);
        }
    }
    Some(out)
}

/// Whether event `k` is the first to show the row whose version
/// [`Change::VersionRead`] changes there.
fn first_sight(records: &[Record<Event>], k: usize) -> bool {
    use slotcheck_models::events::stovepipe::RowName;
    // The row: a request's (by its id), or the queue row (None).
    let row = match &records[k].event {
        Event::Read { request, .. } | Event::RereadRequest { request } => Some(&request.id),
        _ => None,
    };
    let shows = |event: &Event| match (event, row) {
        (
            Event::Read { request, .. }
            | Event::ReadRequest { request }
            | Event::RereadRequest { request },
            Some(id),
        ) => request.id == *id,
        (
            Event::Cas {
                row: RowName::Request,
                request: Some(r),
                ..
            },
            Some(id),
        ) => r == id,
        (Event::Transaction { writes, .. }, Some(id)) => {
            writes.iter().any(|w| w.request.as_ref() == Some(id))
        }
        (
            Event::Read { .. }
            | Event::ReadQueue { .. }
            | Event::RereadQueue { .. }
            | Event::Reap { .. }
            | Event::Transaction { .. }
            | Event::Cas {
                row: RowName::Queue,
                ..
            },
            None,
        ) => true,
        _ => false,
    };
    !records[..k].iter().any(|r| shows(&r.event))
}

#[test]
fn a_changed_event_departs_at_its_line_or_is_still_a_behaviour_of_the_model() {
    let mut departed = [0usize; 4];
    let mut justified = [0usize; 4];
    let mut failures = Vec::new();
    let changes = [
        Change::Flipped,
        Change::VersionRead,
        Change::Deleted,
        Change::Swapped,
    ];
    for &design in DESIGNS.iter() {
        let model = Stovepipe::new(design, RANDOM_BOUNDS);
        for seed in 100..108 {
            let (story, _) = random_path(&model, seed, 60);
            let records = writer::write(&story);
            let (unchanged, _) = run(design, &RANDOM_BOUNDS, &records);
            assert!(
                matches!(unchanged, Verdict::Conforms { .. }),
                "{} seed {seed}: {}",
                design.name,
                slotcheck::validate::text("", &unchanged)
            );
            for (c, &change) in changes.iter().enumerate() {
                for k in 0..records.len() {
                    let Some(mutant) = changed(&records, k, change) else {
                        continue;
                    };
                    // Line 1 is the header: event k is on line k + 2.
                    let line = k + 2;
                    let (verdict, explanation) = run(design, &RANDOM_BOUNDS, &mutant);
                    match verdict {
                        Verdict::Departs { line: at, .. } => {
                            // A row's first version shown is the row's own
                            // (any versions): read one more there, it is the
                            // next line that shows the row that departs.
                            let exact = change == Change::Flipped
                                || (change == Change::VersionRead && !first_sight(&records, k));
                            if (exact && at != line) || at < line {
                                failures.push(format!(
                                    "{} seed {seed} {change:?} at line {line}: departs at {at}",
                                    design.name
                                ));
                            }
                            departed[c] += 1;
                        }
                        Verdict::Conforms { .. } => {
                            // Still a behaviour: the model's explanation,
                            // told and written again, is the changed log.
                            let again = writer::write(&explanation.expect("asked for"));
                            if canonical(&again) != canonical(&mutant) {
                                failures.push(format!(
                                    "{} seed {seed} {change:?} at line {line}: conforms, but the model's explanation logs otherwise",
                                    design.name
                                ));
                            }
                            justified[c] += 1;
                        }
                        Verdict::Inconclusive { .. } => failures.push(format!(
                            "{} seed {seed} {change:?} at line {line}: inconclusive",
                            design.name
                        )),
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("changed events (flipped, version read, deleted, swapped): departed {departed:?}, still behaviours {justified:?}");
    // Each kind of change was caught somewhere.
    assert!(
        departed.iter().all(|&n| n > 0),
        "departed {departed:?}, justified {justified:?}"
    );
}

#[test]
fn a_log_of_one_design_departs_from_another_where_they_differ() {
    let all = counterexamples();
    let mut departures = 0;
    let mut failures = Vec::new();
    for (id, design, property, bounds, story) in all.iter().step_by(3) {
        let records = writer::write(story);
        for &other in DESIGNS.iter().filter(|d| d.name != *design) {
            let (verdict, explanation) = run(other, bounds, &records);
            match verdict {
                Verdict::Departs { .. } => departures += 1,
                Verdict::Conforms { .. } => {
                    let again = writer::write(&explanation.expect("asked for"));
                    if canonical(&again) != canonical(&records) {
                        failures.push(format!("{id} {design} {property} against {}", other.name));
                    }
                }
                Verdict::Inconclusive { line, .. } => failures.push(format!(
                    "{id} {design} {property} against {}: inconclusive at {line}",
                    other.name
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(departures > 0);
    // The finding the recommended design repairs: owner-keyed's wedge under
    // a stall and a crash is no behaviour of the repair.
    let (_, _, _, bounds, story) = all
        .iter()
        .find(|(id, d, p, _, _)| {
            id == "owner-keyed-stall-crash" && *d == "owner-keyed" && *p == "no-wedge"
        })
        .expect("the finding's story");
    let records = writer::write(story);
    let recommended = design_named("owner-keyed-atomic-admit-dlq-cancels").unwrap();
    assert!(matches!(
        run(recommended, bounds, &records).0,
        Verdict::Departs { .. }
    ));
}

#[test]
fn the_example_log_conforms_and_a_lost_cas_in_it_departs_at_its_line() {
    let output = slotcheck(&[
        "validate",
        "docs/examples/stovepipe.ndjson",
        "--design",
        "owner-keyed-atomic-admit-dlq-cancels",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let text =
        std::fs::read_to_string(Path::new(common::ROOT).join("docs/examples/stovepipe.ndjson"))
            .unwrap();
    let dir = common::scratch("validate", "example");
    let changed = text.replacen(
        r#""set":{"state":"succeeded"},"won":true"#,
        r#""set":{"state":"succeeded"},"won":false"#,
        1,
    );
    assert_ne!(changed, text);
    let path = dir.join("lost.ndjson");
    std::fs::write(&path, changed).unwrap();
    let output = slotcheck(&[
        "validate",
        path.to_str().unwrap(),
        "--design",
        "owner-keyed-atomic-admit-dlq-cancels",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(4), "{stdout}");
    assert!(stdout.contains("departs at line 16"), "{stdout}");
    // Without --design: which designs explain it.
    let output = slotcheck(&["validate", "docs/examples/stovepipe.ndjson"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "explained by: owner-keyed-atomic-admit, owner-keyed-atomic-admit-dlq-cancels"
        ),
        "{stdout}"
    );
}

#[test]
fn a_bad_log_exits_2_naming_file_line_and_field() {
    let dir = common::scratch("validate", "bad");
    let path = dir.join("bad.ndjson");
    std::fs::write(
        &path,
        "{\"event\":\"header\",\"model\":\"stovepipe\",\"max_concurrent\":1,\"max_deliveries\":2}\n{\"actor\":\"client\",\"event\":\"arrive\"}\n",
    )
    .unwrap();
    let output = slotcheck(&["validate", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr.contains("bad.ndjson:2: field `request` is missing"),
        "{stderr}"
    );
    std::fs::write(&path, "{\"event\":\"header\",\"model\":\"stovepipe\"}\n{\"actor\":\"client\",\"event\":\"arrive\",\"request\":\"a\"}\n").unwrap();
    let output = slotcheck(&[
        "validate",
        path.to_str().unwrap(),
        "--design",
        "owner-keyed",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr.contains("bad.ndjson:2: field `max_concurrent` is missing"),
        "{stderr}"
    );
}

#[test]
fn each_queue_is_validated_on_its_own() {
    let text =
        std::fs::read_to_string(Path::new(common::ROOT).join("docs/examples/stovepipe.ndjson"))
            .unwrap();
    let mut lines: Vec<String> = vec![text.lines().next().unwrap().to_string()];
    // Two queues, interleaved line by line; queue b's lost CAS departs.
    for line in text.lines().skip(1) {
        lines.push(line.replacen('{', "{\"queue\":\"a\",", 1));
        let b = line.replacen('{', "{\"queue\":\"b\",", 1);
        lines.push(b.replacen(
            r#""set":{"state":"succeeded"},"won":true"#,
            r#""set":{"state":"succeeded"},"won":false"#,
            1,
        ));
    }
    let dir = common::scratch("validate", "queues");
    let path = dir.join("two.ndjson");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let output = slotcheck(&[
        "validate",
        path.to_str().unwrap(),
        "--design",
        "owner-keyed-atomic-admit-dlq-cancels",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(4));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let queues = &report["designs"][0]["queues"];
    assert_eq!(queues[0]["queue"], "a");
    assert_eq!(queues[0]["verdict"], "conforms");
    assert_eq!(queues[1]["queue"], "b");
    assert_eq!(queues[1]["verdict"], "departs");
    // Line 16 of the example is queue b's line 31 here.
    assert_eq!(queues[1]["line"], 31);
}

#[test]
fn the_schema_file_is_generated_from_the_types() {
    let path = Path::new(common::ROOT).join("docs/validate.schema.json");
    let schema = serde_json::to_string_pretty(&events::schema()).unwrap() + "\n";
    if std::env::var_os("SLOTCHECK_WRITE_SCHEMA").is_some() {
        std::fs::write(&path, &schema).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == schema,
        "docs/validate.schema.json is not the types' schema: run SLOTCHECK_WRITE_SCHEMA=1 cargo test --release --test model validate::"
    );
}

/// A log written in each process's own order is judged as its ordered
/// twin is: it conforms (and so does the ordered log with its processes
/// named), with every violation the ordered log (`truth`) shows.
pub(crate) fn judged_as_ordered(verdict: &Verdict, in_order: &Verdict, truth: &Verdict) -> bool {
    let found = verdict.violated_properties();
    matches!(verdict, Verdict::Conforms { .. })
        && matches!(in_order, Verdict::Conforms { .. })
        && truth
            .violated_properties()
            .iter()
            .all(|p| found.contains(p))
}
