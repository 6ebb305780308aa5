//! `slotcheck validate` on link logs: every story of every link finding,
//! and random paths of every design, written as a log by an independent
//! writer (`validate/link_writer.rs`, from the story's words), conform with
//! the same violation; a log with one line changed departs at that line or,
//! where the change is still a behaviour of the model, conforms, and the
//! model's own explanation, written again by the writer, is that log (each
//! builder's lines, up to names); a log of one design departs from another
//! where they differ, or is shown so to be its behaviour.

mod common;
#[path = "validate/link_writer.rs"]
mod writer;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use slotcheck::check::{check, Limits, Verdict as Checked};
use slotcheck::validate::{validate_and_explain, Verdict};
use slotcheck_models::events::link::{Decision, Event};
use slotcheck_models::events::{self, Entry, Record};
use slotcheck_models::link::trace::LinkTrace;
use slotcheck_models::link::{all_designs, Bounds, Design, Link, Options};
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
    let header = writer::header(bounds.max_deliver, bounds.skew);
    let text = events::to_ndjson(Some(&header), records);
    let log = events::parse("test.ndjson", &text).expect("the writer writes a valid log");
    let lines = log
        .entries
        .into_iter()
        .filter_map(|(line, e)| match e {
            Entry::Link(r) => Some((line, r)),
            _ => None,
        })
        .collect();
    let trace = LinkTrace::new(design, options, &log.header, lines).expect("a log in bounds");
    validate_and_explain(&trace)
}

fn violated(verdict: &Verdict) -> Vec<String> {
    match verdict {
        Verdict::Conforms { violated, .. } => violated.iter().map(|v| v.property.clone()).collect(),
        _ => Vec::new(),
    }
}

/// Every link scenario: its id, options and bounds.
fn scenarios() -> Vec<(String, Options, Bounds)> {
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
        out.push((doc["id"].as_str().unwrap().to_string(), options, bounds));
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
/// link scenario's bounds.
fn counterexamples() -> Vec<Counterexample> {
    let mut out = Vec::new();
    for (id, options, bounds) in scenarios() {
        for design in all_designs() {
            let mut model = Link::new(design, bounds);
            model.options = options;
            let outcome = check(model, &[], &Limits::default());
            for result in &outcome.results {
                if result.verdict != Checked::Violated {
                    continue;
                }
                let trace = result.trace.as_ref().expect("a violation has a path");
                let story = model.tell(&trace.init, &trace.actions);
                out.push((id.clone(), design, options, result.name, bounds, story));
            }
        }
    }
    out
}

#[test]
fn every_story_of_every_link_finding_conforms_with_its_violation() {
    let all = counterexamples();
    assert!(all.len() > 40, "{} counterexamples", all.len());
    let mut failures = Vec::new();
    for (id, design, options, property, bounds, story) in &all {
        let records = writer::write(story, bounds.asks);
        let (verdict, _) = run(design, *options, bounds, &records);
        if !violated(&verdict).iter().any(|p| p == property) {
            failures.push(format!(
                "{id} {} {property}: {}",
                design.name,
                slotcheck::validate::text("", &verdict)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
#[ignore = "a debugging aid: SLOTCHECK_DEBUG=id:design:property prints one story, its log and its verdict"]
fn debug_one() {
    let want = std::env::var("SLOTCHECK_DEBUG").unwrap_or_default();
    for (id, design, options, property, bounds, story) in counterexamples() {
        if format!("{id}:{}:{property}", design.name) != want {
            continue;
        }
        for s in &story {
            println!("{}: {}", s.actor, s.action);
        }
        let records = writer::write(&story, bounds.asks);
        let header = writer::header(bounds.max_deliver, bounds.skew);
        print!("{}", events::to_ndjson(Some(&header), &records));
        let (verdict, _) = run(design, options, &bounds, &records);
        println!("{}", slotcheck::validate::text("", &verdict));
    }
}
