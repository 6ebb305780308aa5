//! What `check` and `compare` add for people who would rather look than
//! read: `--format mermaid|svg` (the counterexamples as sequence diagrams)
//! and `--html FILE` (the report page). Kept apart from the commands so that
//! each model's command calls the same two functions.

use crate::check::{Outcome, Verdict};
use crate::report::diagram::{svg_document, Diagram};
use crate::report::html::{self, Page};
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
    /// How to write the counterexamples: text stories, or sequence diagrams
    /// (ad-hoc checks; a scenario run draws them in its --html report).
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
            let (steps, ending) = crate::report::told(model, r.name, trace);
            let title = format!(
                "{}: {design}, {}",
                r.name,
                crate::report::count(trace.steps() as u64, "step")
            );
            Some(Diagram::of(model, &title, &steps, Some(&ending)))
        })
        .collect()
}

/// Prints the diagrams `args.format` asks for, if any; returns whether it
/// did (then the text is not printed). With no violation there is nothing
/// to draw, and an empty diagram (an SVG of height 0) would look like a
/// drawing that failed: it says so on standard error and prints nothing.
pub fn print_diagrams<M: Narrated>(
    args: &CheckOutputArgs,
    model: &M,
    design: &str,
    outcome: &Outcome<M>,
) -> bool {
    if args.format == Format::Text {
        return false;
    }
    let diagrams = violation_diagrams(model, design, outcome);
    if diagrams.is_empty() {
        eprintln!("no violation: nothing to draw");
        return true;
    }
    match args.format {
        Format::Text => unreachable!("text draws nothing"),
        Format::Mermaid => {
            let texts: Vec<String> = diagrams.iter().map(Diagram::mermaid).collect();
            print!("{}", texts.join("\n"));
        }
        Format::Svg => print!("{}", svg_document(&diagrams)),
    }
    true
}

/// The HTML page of a `check --design` run.
pub fn check_page<M: Narrated>(
    model: &M,
    design: &str,
    heading: &str,
    outcome: &Outcome<M>,
) -> String {
    let (rows, stats) = html::outcome_rows(model, design, outcome);
    html::render(&Page {
        title: format!("slotcheck check: {design}"),
        subtitle: heading.to_string(),
        rows,
        stats: vec![stats],
        ..Page::default()
    })
}

/// The HTML page of a `compare` run; `model_of` rebuilds each design's
/// model to tell its stories.
pub fn compare_page<M: Narrated>(
    heading: &str,
    columns: &[(String, Outcome<M>)],
    model_of: impl Fn(&str) -> Result<M, String>,
) -> Result<String, String> {
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
    Ok(html::render(&page))
}
