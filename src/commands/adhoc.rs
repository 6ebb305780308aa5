//! The ad-hoc commands, once for every model: `compare` (every design on the
//! same bounds) and `check --design D` (one design, each violation told as a
//! story). A model takes part by saying how its bounds read ([`ToolModel`]).

use crate::check::{check, Limits, Outcome, Verdict};
use crate::models::ModelBounds;
use crate::models::{self, ToolModel};
use crate::report::comparison::{self, Comparison, DesignCheck, PropertyRecord, RunRecord};
use crate::report::itf::{self, Output};
use crate::report::see::{self, CheckOutputArgs, CompareOutputArgs};
use crate::report::table::{Cell, Column, TextTable};
use crate::report::{self, JsonArgs, Style};
use crate::simulate::check_trace_files;
use slotcheck_models::PropertyKind;
use std::path::Path;

/// The property names a user asked for, each checked against the model's.
fn property_names<M: ToolModel>(model: &M, asked: &[String]) -> Result<Vec<&'static str>, String> {
    let mut known: Vec<&'static str> = model.properties().iter().map(|p| p.name).collect();
    known.extend(model.progress().iter().map(|p| p.name));
    asked
        .iter()
        .map(|p| {
            known.iter().copied().find(|k| k == p).ok_or_else(|| {
                format!(
                    "--property: unknown {} property `{p}` (known: {})",
                    model.model_name(),
                    known.join(", ")
                )
            })
        })
        .collect()
}

/// `compare`: every design's model on the same bounds, one table. Exits 0
/// once every run finished (violations are the comparison's content), 3 if
/// any was cut short, even one that had decided every verdict by then: a
/// comparison's columns are only comparable when each run is whole.
pub fn compare<M: ToolModel>(
    models: Vec<M>,
    limits: &Limits,
    json: &JsonArgs,
    output: &CompareOutputArgs,
) -> Result<u8, String> {
    let first = models.first().ok_or("no design to compare")?.clone();
    let mut outputs = Vec::new();
    if let Some(file) = &json.json_out {
        outputs.push(Output::file("--json-out", file));
    }
    if let Some(file) = &output.html {
        outputs.push(Output::file("--html", file));
    }
    itf::check_outputs(&outputs, &[])?;
    let columns: Vec<(String, Outcome<M>)> = models
        .iter()
        .map(|m| (m.variant().to_string(), check(m.clone(), &[], limits)))
        .collect();
    let heading = format!("{}, {}", first.model_name(), first.bounds_line());
    let report = report::json_text(&Comparison::of(first.bounds_json(), &columns));
    if json.json {
        print!("{report}");
    } else {
        let style = Style::for_stdout();
        println!("{}\n", style.bold(&format!("slotcheck compare: {heading}")));
        print!("{}", report::comparison_table(&columns, style));
        let model_flag = models::model_flag(first.model_name());
        println!(
            "\nA violation's story: slotcheck check{model_flag} --design DESIGN [same bounds]"
        );
    }
    let mut writes = Vec::new();
    if let Some(file) = &json.json_out {
        writes.push((file.clone(), report.into_bytes()));
    }
    if let Some(file) = &output.html {
        let page = see::compare_page(&heading, &columns, |design| {
            models
                .iter()
                .find(|m| m.variant() == design)
                .cloned()
                .ok_or_else(|| format!("unknown design `{design}`"))
        })?;
        writes.push((file.clone(), page.into_bytes()));
    }
    itf::write_reports(&writes, |_| {})?;
    let cut = columns.iter().any(|(_, o)| {
        o.stats.cut.is_some() || o.results.iter().any(|r| r.verdict == Verdict::Inconclusive)
    });
    Ok(if cut { 3 } else { 0 })
}

/// Why a check exits 1 although no property is violated: the witnesses it
/// did not reach. A witness shows that the states a property guards are
/// reachable at all; without it a `holds` may be vacuous.
pub fn unreached_note<M: ToolModel>(outcome: &Outcome<M>) -> Option<String> {
    let unreached: Vec<&str> = outcome
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::NotReached)
        .map(|r| r.name)
        .collect();
    if unreached.is_empty() {
        return None;
    }
    let properties: Vec<String> = outcome
        .results
        .iter()
        .filter(|r| r.kind == PropertyKind::Always)
        .map(|r| format!("--property {}", r.name))
        .collect();
    let them = if unreached.len() == 1 { "it" } else { "them" };
    let mut note = format!(
        "{} not reached: the check fails (exit 1).\n\
A witness shows that the states the properties are about can happen at all;\n\
a property that holds on bounds where they cannot proves nothing.\n\
Larger bounds may reach {them}",
        unreached.join(", ")
    );
    if properties.is_empty() {
        note.push('.');
    } else {
        note.push_str(&format!(
            "; to check only the properties, name them:\n  {}",
            properties.join(" ")
        ));
    }
    Some(note)
}

/// `check --design D`: the verdicts, then each violation's shortest
/// counterexample as a story (or as JSON or diagrams); then the files asked
/// for (`--json-out`, `--html`, `--out` traces), each checked before the run
/// and written after the results are printed.
pub fn check_design<M: ToolModel>(
    model: M,
    properties: &[String],
    limits: &Limits,
    json: &JsonArgs,
    out: Option<&Path>,
    output: &CheckOutputArgs,
) -> Result<u8, String> {
    let names = property_names(&model, properties)?;
    let mut outputs = Vec::new();
    if let Some(file) = &json.json_out {
        outputs.push(Output::file("--json-out", file));
    }
    if let Some(file) = &output.html {
        outputs.push(Output::file("--html", file));
    }
    if let Some(dir) = out {
        outputs.push(Output::dir("--out", dir));
    }
    itf::check_outputs(&outputs, &[])?;
    let design = model.variant();
    let outcome = check(model.clone(), &names, limits);
    let heading = format!(
        "{design} on {}, {}",
        model.model_name(),
        model.bounds_line()
    );
    let code = outcome.exit_code() as u8;
    let note = unreached_note(&outcome);
    let report = (json.json || json.json_out.is_some())
        .then(|| report::json_text(&check_json(&model, &outcome)));
    if json.json {
        print!("{}", report.as_deref().unwrap_or_default());
        if let Some(note) = &note {
            eprintln!("note: {note}");
        }
    } else if see::print_diagrams(output, &model, design, &outcome) {
        if let Some(note) = &note {
            eprintln!("note: {note}");
        }
    } else {
        print_check_text(&model, &heading, &outcome, note.as_deref());
    }
    let mut writes = Vec::new();
    if let (Some(file), Some(report)) = (&json.json_out, report) {
        writes.push((file.clone(), report.into_bytes()));
    }
    if let Some(file) = &output.html {
        let page = see::check_page(&model, design, &heading, &outcome);
        writes.push((file.clone(), page.into_bytes()));
    }
    if let Some(dir) = out {
        writes.extend(check_trace_files(dir, &model, &outcome));
    }
    itf::write_reports(&writes, |file| {
        if file.to_string_lossy().ends_with(".itf.json") {
            eprintln!("trace saved: {} (slotcheck replay FILE)", file.display());
        }
    })?;
    Ok(code)
}

/// `check --design D --json`: verdicts, stories and statistics.
fn check_json<M: ToolModel>(model: &M, outcome: &Outcome<M>) -> DesignCheck {
    let design = model.variant();
    let results = outcome
        .results
        .iter()
        .map(|r| PropertyRecord {
            explanation: r.trace.as_ref().map(|t| report::told(model, r.name, t).1),
            loop_from: r.trace.as_ref().and_then(|t| t.loop_from),
            property: r.name.to_string(),
            steps: report::steps(r),
            story: match (r.verdict, outcome.story(model, r.name)) {
                (Verdict::Violated, Some(s)) => Some(comparison::steps_of(&s)),
                _ => None,
            },
            verdict: r.verdict.word(),
        })
        .collect();
    DesignCheck {
        bounds: model.bounds_json(),
        design: design.to_string(),
        model: model.model_name().to_string(),
        results,
        stats: RunRecord::of(design, &outcome.stats),
    }
}

fn print_check_text<M: ToolModel>(
    model: &M,
    heading: &str,
    outcome: &Outcome<M>,
    note: Option<&str>,
) {
    let design = model.variant();
    let style = Style::for_stdout();
    println!("{}\n", style.bold(&format!("slotcheck check: {heading}")));
    let mut verdicts = TextTable::new(vec![Column::left("").at_least(20), Column::left("")]);
    verdicts.headless = true;
    verdicts.margin = "  ".into();
    for r in &outcome.results {
        verdicts.row(vec![
            r.name.into(),
            Cell::painted(report::verdict_cell(r), r.verdict),
        ]);
    }
    print!("{}", verdicts.render(style));
    if let Some(note) = note {
        println!("\n{note}");
    }
    println!();
    print!(
        "{}",
        report::stats_table(&[(design.to_string(), outcome.stats)], style)
    );
    for r in outcome
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Violated)
    {
        let trace = r.trace.as_ref().expect("a violation has a trace");
        let (steps, ending) = report::told(model, r.name, trace);
        let length = match trace.loop_from {
            Some(from) => format!(
                "a lasso: {}, then a loop of {} that repeats for ever",
                report::count(from as u64, "step"),
                report::count((trace.steps() - from) as u64, "step")
            ),
            None => report::count(trace.steps() as u64, "step"),
        };
        println!(
            "\n{}",
            style.bold(&format!(
                "{}: the shortest counterexample, {length}",
                r.name
            ))
        );
        print!("{}", report::story_text(&steps, &ending));
    }
    if let Some(cut) = outcome.stats.cut {
        println!(
            "\ninconclusive: {}; what was not decided is not a verdict",
            cut.describe()
        );
    }
}
