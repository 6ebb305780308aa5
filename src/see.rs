//! What `check` and `compare` add for people who would rather look than
//! read: `--format mermaid|svg` (the counterexamples as sequence diagrams)
//! and `--html FILE` (the report page). Kept apart from the commands so that
//! each model's command calls the same two functions.

use crate::check::{Outcome, Verdict};
use crate::diagram::{svg_document, Diagram};
use crate::html::{self, Page};
use clap::{Args, ValueEnum};
use slotcheck_models::Narrated;
use std::path::PathBuf;

/// How `check` writes its counterexamples.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Verdicts, statistics and numbered stories.
    #[default]
    Text,
    /// One Mermaid sequenceDiagram per violation (use --property for exactly one).
    Mermaid,
    /// One standalone SVG document, the violations one under the other.
    Svg,
}

#[derive(Args, Clone, Debug, Default)]
pub struct CheckOutputArgs {
    /// How to write the counterexamples: text stories, or sequence diagrams.
    #[arg(long, value_enum, default_value_t = Format::Text, conflicts_with = "json")]
    pub format: Format,
    /// Also write a self-contained HTML report (verdicts, statistics, each violation's story and diagram).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Args, Clone, Debug, Default)]
pub struct CompareOutputArgs {
    /// Also write a self-contained HTML report (the verdict table, statistics, each violation's story and diagram).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// The diagram of each violation of `outcome`, in the order of its results.
pub fn violation_diagrams<M: Narrated>(
    model: &M,
    design: &str,
    outcome: &Outcome<M>,
) -> Vec<Diagram> {
    outcome
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Violated)
        .filter_map(|r| {
            let trace = r.trace.as_ref()?;
            let steps = model.tell(&trace.init, &trace.actions);
            let ending = model.explain(r.name, &trace.last);
            let title = format!("{}: {design}, {} steps", r.name, trace.steps());
            Some(Diagram::of(model, &title, &steps, Some(&ending)))
        })
        .collect()
}

/// After a `check`: writes the HTML page if asked, and prints the diagrams
/// if asked. Returns whether it printed them (then the text is not printed).
pub fn after_check<M: Narrated>(
    args: &CheckOutputArgs,
    model: &M,
    design: &str,
    heading: &str,
    outcome: &Outcome<M>,
) -> Result<bool, String> {
    if let Some(path) = &args.html {
        let (rows, stats) = html::outcome_rows(model, design, outcome);
        let page = Page {
            title: format!("slotcheck check: {design}"),
            subtitle: heading.to_string(),
            rows,
            stats: vec![stats],
            sections: Vec::new(),
        };
        html::write(path, &page)?;
    }
    let diagrams = || violation_diagrams(model, design, outcome);
    match args.format {
        Format::Text => Ok(false),
        Format::Mermaid => {
            let diagrams = diagrams();
            if diagrams.is_empty() {
                println!("%% no violation: nothing to draw");
            }
            let texts: Vec<String> = diagrams.iter().map(Diagram::mermaid).collect();
            print!("{}", texts.join("\n"));
            Ok(true)
        }
        Format::Svg => {
            print!("{}", svg_document(&diagrams()));
            Ok(true)
        }
    }
}

/// After a `compare`: writes the HTML page if asked; `model_of` rebuilds
/// each design's model to tell its stories.
pub fn after_compare<M: Narrated>(
    args: &CompareOutputArgs,
    heading: &str,
    columns: &[(String, Outcome<M>)],
    model_of: impl Fn(&str) -> Result<M, String>,
) -> Result<(), String> {
    let Some(path) = &args.html else {
        return Ok(());
    };
    let mut page = Page {
        title: "slotcheck compare".into(),
        subtitle: heading.to_string(),
        ..Page::default()
    };
    for (design, outcome) in columns {
        let model = model_of(design)?;
        let (rows, stats) = html::outcome_rows(&model, design, outcome);
        page.rows.extend(rows);
        page.stats.push(stats);
    }
    html::write(path, &page)
}
