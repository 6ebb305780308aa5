//! The ad-hoc commands, once for every model: `compare` (every design on the
//! same bounds) and `check --design D` (one design, each violation told as a
//! story). A model takes part by saying how its bounds read ([`Described`]).

use crate::check::{check, Limits, Outcome, Verdict};
use crate::itf::write_atomically;
use crate::report::{self, Style};
use crate::see::{self, CheckOutputArgs, CompareOutputArgs};
use crate::simulate::{save_check_traces, Simulated};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// How a model's bounds read, in reports.
pub trait Described: Simulated {
    /// The bounds and options as JSON (the `bounds` of a report).
    fn bounds_json(&self) -> Value;
    /// The bounds in words: `requests 2, max_concurrent 1, ...`.
    fn bounds_line(&self) -> String;
}

/// Where a JSON report goes: stdout (`--json`) or a file (`--json FILE`).
pub type JsonTarget = Option<Option<PathBuf>>;

fn emit_json(value: &Value, target: &Option<PathBuf>) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).expect("JSON");
    match target {
        Some(file) => write_atomically(file, format!("{text}\n").as_bytes())
            .map_err(|e| format!("{}: {e}", file.display())),
        None => {
            println!("{text}");
            Ok(())
        }
    }
}

/// The property names a user asked for, each checked against the model's.
fn property_names<M: Described>(model: &M, asked: &[String]) -> Result<Vec<&'static str>, String> {
    let known: Vec<&'static str> = model.properties().iter().map(|p| p.name).collect();
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
/// one was cut short.
pub fn compare<M: Described>(
    models: Vec<M>,
    limits: &Limits,
    json: bool,
    output: &CompareOutputArgs,
) -> Result<u8, String> {
    let first = models.first().ok_or("no design to compare")?.clone();
    let columns: Vec<(String, Outcome<M>)> = models
        .iter()
        .map(|m| (m.variant().to_string(), check(m.clone(), &[], limits)))
        .collect();
    let heading = format!("{}, {}", first.model_name(), first.bounds_line());
    see::after_compare(output, &heading, &columns, |design| {
        models
            .iter()
            .find(|m| m.variant() == design)
            .cloned()
            .ok_or_else(|| format!("unknown design `{design}`"))
    })?;
    if json {
        emit_json(
            &report::comparison_json(first.bounds_json(), &columns),
            &None,
        )?;
    } else {
        let style = Style::for_stdout();
        println!("{}\n", style.bold(&format!("slotcheck compare: {heading}")));
        print!("{}", report::comparison_table(&columns, style));
        let model_flag = match first.model_name() {
            "stovepipe" => String::new(),
            other => format!(" --model {other}"),
        };
        println!(
            "\nA violation's story: slotcheck check{model_flag} --design DESIGN [same bounds]"
        );
    }
    let inconclusive = columns
        .iter()
        .flat_map(|(_, o)| &o.results)
        .any(|r| r.verdict == Verdict::Inconclusive);
    Ok(if inconclusive { 3 } else { 0 })
}

/// `check --design D`: the verdicts, then each violation's shortest
/// counterexample as a story (or as JSON, diagrams, an HTML page, traces).
pub fn check_design<M: Described>(
    model: M,
    properties: &[String],
    limits: &Limits,
    json: &JsonTarget,
    out: Option<&Path>,
    output: &CheckOutputArgs,
) -> Result<u8, String> {
    let names = property_names(&model, properties)?;
    let design = model.variant();
    let outcome = check(model.clone(), &names, limits);
    if let Some(dir) = out {
        for file in save_check_traces(dir, &model, &outcome)? {
            eprintln!("trace saved: {} (slotcheck replay FILE)", file.display());
        }
    }
    let heading = format!(
        "{design} on {}, {}",
        model.model_name(),
        model.bounds_line()
    );
    let code = outcome.exit_code() as u8;
    if see::after_check(output, &model, design, &heading, &outcome)? {
        return Ok(code);
    }
    if let Some(target) = json {
        let results: Vec<Value> = outcome
            .results
            .iter()
            .map(|r| {
                json!({
                    "property": r.name,
                    "verdict": r.verdict.word(),
                    "steps": report::steps(r),
                    "explanation": r.trace.as_ref().map(|t| model.explain(r.name, &t.last)),
                    "story": match (r.verdict, outcome.story(&model, r.name)) {
                        (Verdict::Violated, Some(s)) => report::story_json(&s),
                        _ => Value::Null,
                    },
                })
            })
            .collect();
        let value = json!({
            "model": model.model_name(),
            "design": design,
            "bounds": model.bounds_json(),
            "results": results,
            "stats": report::stats_json(design, &outcome.stats),
        });
        emit_json(&value, target)?;
        return Ok(code);
    }
    let style = Style::for_stdout();
    println!("{}\n", style.bold(&format!("slotcheck check: {heading}")));
    for r in &outcome.results {
        let cell = report::verdict_cell(r);
        println!("  {:<22}{}", r.name, style.verdict(r.verdict, &cell));
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
        let steps = model.tell(&trace.init, &trace.actions);
        println!(
            "\n{}",
            style.bold(&format!(
                "{}: the shortest counterexample, {} steps",
                r.name,
                trace.steps()
            ))
        );
        print!(
            "{}",
            report::story_text(&steps, &model.explain(r.name, &trace.last))
        );
    }
    if let Some(cut) = outcome.stats.cut {
        println!(
            "\ninconclusive: {}; what was not decided is not a verdict",
            cut.describe()
        );
    }
    Ok(code)
}
