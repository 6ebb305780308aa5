//! The what-to-merge table (`compare --findings`): every design of a model,
//! each on every finding's own bounds. A finding is a scenario file that
//! names one (`finding = "PROPERTY"`): its bounds are the smallest that show
//! it, its property is the one it breaks. A row per design, a column per
//! finding, each cell the verdict with its story, and what the design costs:
//! what a reviewer of the two PRs reads to know what to merge.

use crate::check::{Limits, Verdict};
use crate::models::{self, ForModel, ToolModel};
use crate::report::comparison::{FindingCell, FindingColumn, FindingDesign, FindingsTable};
use crate::report::html::{Matrix, MatrixDesign, MatrixFinding, Page, ResultRow, StatsRow};
use crate::report::table::{Cell, Column as Heading, TextTable};
use crate::report::Style;
use crate::scenario::{self, Selection};
use std::path::PathBuf;

/// A finding: a column.
pub struct Column {
    pub id: String,
    pub title: String,
    pub property: &'static str,
    /// The bounds in words, and as the flags that give them.
    pub bounds: String,
    pub flags: String,
    pub file: PathBuf,
}

/// The table: its columns, its designs, and a cell (with its story) per
/// design and finding.
pub struct Table {
    pub model: &'static str,
    /// The page the Markdown table's cells link to.
    pub stories_page: &'static str,
    pub columns: Vec<Column>,
    pub designs: Vec<MatrixDesign>,
    pub cells: Vec<ResultRow>,
    pub stats: Vec<StatsRow>,
}

/// The page of `model`'s stories.
fn stories_page(model: &str) -> &'static str {
    struct Page;
    impl ForModel for Page {
        type Out = &'static str;
        fn run<M: ToolModel>(self) -> Self::Out {
            M::stories_page()
        }
    }
    models::for_model(model, Page).unwrap_or(STORIES)
}

/// What each design of `model` (or each of `chosen`, names or
/// compositions) changes and costs.
fn designs(model: &str, chosen: &[String]) -> Result<Vec<MatrixDesign>, String> {
    struct Notes<'a>(&'a [String]);
    impl ForModel for Notes<'_> {
        type Out = Result<Vec<MatrixDesign>, String>;
        fn run<M: ToolModel>(self) -> Self::Out {
            let notes = if self.0.is_empty() {
                M::design_notes()
            } else {
                self.0
                    .iter()
                    .map(|d| M::design_note(d))
                    .collect::<Result<_, _>>()?
            };
            Ok(notes
                .into_iter()
                .map(|(name, change, cost)| MatrixDesign {
                    name: name.into(),
                    change: change.into(),
                    cost: cost.into(),
                })
                .collect())
        }
    }
    models::for_model(model, Notes(chosen)).unwrap_or_else(|| Ok(Vec::new()))
}

/// Runs every finding of `model` among the scenario files under `paths`, in
/// every design of the model or in `chosen` (names or compositions).
pub fn run(
    paths: &[PathBuf],
    model: &'static str,
    limits: &Limits,
    chosen: &[String],
) -> Result<Table, String> {
    let files = scenario::files(paths).map_err(|e| e.to_string())?;
    let scenarios = scenario::load_all(&files, &Selection::default()).map_err(|e| e.to_string())?;
    let mut table = Table {
        model,
        stories_page: stories_page(model),
        columns: Vec::new(),
        designs: designs(model, chosen)?,
        cells: Vec::new(),
        stats: Vec::new(),
    };
    for s in scenarios
        .iter()
        .filter(|s| s.heading.model == model && s.heading.finding.is_some())
    {
        let property = s.heading.finding.expect("filtered");
        table.columns.push(Column {
            id: s.heading.id.clone(),
            title: s.heading.title.clone(),
            property,
            bounds: s.heading.bounds_line.clone(),
            flags: s.heading.bounds_flags.clone(),
            file: s.heading.file.clone(),
        });
        for (cell, stats) in s.check_finding(limits, chosen)? {
            table.cells.push(cell);
            table.stats.push(stats);
        }
    }
    if table.columns.is_empty() {
        return Err(format!(
            "no {model} scenario names a finding (`finding = \"PROPERTY\"`) under {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(table)
}

impl Table {
    fn cell(&self, design: &str, finding: &str) -> Option<&ResultRow> {
        self.cells
            .iter()
            .find(|c| c.design == design && c.scenario.as_deref() == Some(finding))
    }

    /// Whether a run was cut short (its verdicts are then inconclusive).
    pub fn cut(&self) -> bool {
        self.stats.iter().any(|s| s.cut.is_some())
    }

    /// The designs that hold every finding.
    pub fn clean(&self) -> Vec<&str> {
        self.designs
            .iter()
            .filter(|d| {
                self.columns.iter().all(|c| {
                    self.cell(&d.name, &c.id)
                        .is_some_and(|cell| cell.got == Verdict::Holds.word())
                })
            })
            .map(|d| d.name.as_str())
            .collect()
    }
}

/// `violated (8 steps)`, `holds`, `inconclusive`.
fn verdict_words(cell: &ResultRow) -> String {
    match (cell.got.as_str(), cell.steps) {
        ("violated", Some(n)) => format!("violated ({})", crate::report::count(n as u64, "step")),
        (got, _) => got.to_string(),
    }
}

/// The table for a terminal: findings numbered, then a row per design with
/// each cell's steps (or `holds`), then the costs.
pub fn text(table: &Table, style: Style) -> String {
    let mut findings = TextTable::new(vec![
        Heading::left(""),
        Heading::left("finding"),
        Heading::left("property"),
        Heading::left("bounds"),
    ]);
    for (i, c) in table.columns.iter().enumerate() {
        findings.row(vec![
            format!("F{}", i + 1).into(),
            c.id.as_str().into(),
            c.property.into(),
            c.bounds.as_str().into(),
        ]);
    }
    let mut out = findings.render(style);
    out.push('\n');
    let mut headings = vec![Heading::left("design")];
    // Each finding's column as wide as `holds`, however short its cells.
    headings.extend((1..=table.columns.len()).map(|i| Heading::left(&format!("F{i}")).at_least(5)));
    let mut verdicts = TextTable::new(headings);
    for d in &table.designs {
        let mut row: Vec<Cell> = vec![d.name.as_str().into()];
        for c in &table.columns {
            let (text, verdict) = match table.cell(&d.name, &c.id) {
                None => ("-".to_string(), Verdict::Inconclusive),
                Some(cell) => match (cell.got.as_str(), cell.steps) {
                    ("violated", Some(n)) => (n.to_string(), Verdict::Violated),
                    ("holds", _) => ("holds".to_string(), Verdict::Holds),
                    _ => ("?".to_string(), Verdict::Inconclusive),
                },
            };
            row.push(Cell::painted(text, verdict));
        }
        verdicts.row(row);
    }
    out.push_str(&verdicts.render(style));
    out.push_str(
        "\na number: violated, the steps of the shortest counterexample; holds: not on the finding's bounds; ?: a budget ran out\n\n",
    );
    let mut costs = TextTable::new(vec![Heading::left("cost"), Heading::left("")]);
    for d in table.designs.iter().filter(|d| !d.cost.is_empty()) {
        costs.row(vec![d.name.as_str().into(), d.cost.as_str().into()]);
    }
    out.push_str(&costs.render(style));
    let clean = table.clean();
    out.push_str(&format!(
        "\nholds every finding: {}\n",
        if clean.is_empty() {
            "no design".to_string()
        } else {
            clean.join(", ")
        }
    ));
    out
}

/// The anchor GitHub gives the heading `design, finding` of the stories
/// page: lower case, punctuation dropped, spaces as dashes.
fn anchor(design: &str, finding: &str) -> String {
    format!("{design}, {finding}")
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Where the stories page lives, from the README, unless the model says.
pub const STORIES: &str = "docs/findings.md";

/// The table as Markdown, for the README: each finding's column header links
/// to its scenario file, each violation to its story on the stories page.
pub fn markdown(table: &Table) -> String {
    let mut out = String::from("| design |");
    for c in &table.columns {
        let file = c.file.display().to_string();
        out.push_str(&format!(" [{}]({file}) `{}` |", c.id, c.property));
    }
    out.push_str(" cost |\n|---|");
    for _ in &table.columns {
        out.push_str("---|");
    }
    out.push_str("---|\n");
    for d in &table.designs {
        out.push_str(&format!("| `{}` |", d.name));
        for c in &table.columns {
            let text = match table.cell(&d.name, &c.id) {
                None => "".to_string(),
                Some(cell) if cell.story.is_some() => format!(
                    "[{}]({}#{})",
                    verdict_words(cell),
                    table.stories_page,
                    anchor(&d.name, &c.id)
                ),
                Some(cell) => format!("**{}**", verdict_words(cell)),
            };
            out.push_str(&format!(" {text} |"));
        }
        out.push_str(&format!(" {} |\n", d.cost));
    }
    out
}

/// Every violation's story, as Markdown: the page the table's cells link
/// to. A heading per design and finding (`claim-first, SP-OCT-003`), the
/// command that tells it, and the story.
pub fn stories(table: &Table) -> String {
    let mut out = String::new();
    for c in &table.columns {
        out.push_str(&format!(
            "## {}: {}\n\n`{}` on {}.\n",
            c.id, c.title, c.property, c.bounds
        ));
        let cells: Vec<(&MatrixDesign, &ResultRow)> = table
            .designs
            .iter()
            .filter_map(|d| table.cell(&d.name, &c.id).map(|cell| (d, cell)))
            .collect();
        let holding: Vec<String> = cells
            .iter()
            .filter(|(_, cell)| cell.story.is_none())
            .map(|(d, cell)| match cell.got.as_str() {
                "holds" => format!("`{}`", d.name),
                other => format!("`{}` ({other})", d.name),
            })
            .collect();
        if !holding.is_empty() {
            out.push_str(&format!("It holds in {}.\n", holding.join(", ")));
        }
        for (d, cell) in cells {
            let Some(story) = &cell.story else { continue };
            out.push_str(&format!(
                "\n### {}, {}\n\n{} (`slotcheck check{} --design {} {} --property {}`):\n\n```text\n{}```\n",
                d.name,
                c.id,
                verdict_words(cell),
                models::model_flag(table.model),
                d.name,
                c.flags,
                c.property,
                story
            ));
        }
        out.push('\n');
    }
    out
}

/// The table as its typed record (`compare --findings --json`).
pub fn record(table: &Table) -> FindingsTable {
    FindingsTable {
        cells: table
            .cells
            .iter()
            .map(|c| FindingCell {
                design: c.design.clone(),
                finding: c.scenario.clone(),
                steps: c.steps,
                verdict: c.got.clone(),
            })
            .collect(),
        designs: table
            .designs
            .iter()
            .map(|d| FindingDesign {
                change: d.change.clone(),
                cost: d.cost.clone(),
                name: d.name.clone(),
            })
            .collect(),
        findings: table
            .columns
            .iter()
            .map(|c| FindingColumn {
                bounds: c.bounds.clone(),
                id: c.id.clone(),
                property: c.property.to_string(),
                title: c.title.clone(),
            })
            .collect(),
        holds_every_finding: table.clean().into_iter().map(String::from).collect(),
        model: table.model.to_string(),
    }
}

/// The HTML page: the table, the findings and the designs in words, then
/// every violation's story and diagram.
pub fn page(table: &Table) -> Page {
    Page {
        title: "slotcheck: what to merge".into(),
        subtitle: format!(
            "every {} design on every finding's own bounds ({} findings)",
            table.model,
            table.columns.len()
        ),
        rows: table.cells.clone(),
        stats: table.stats.clone(),
        sections: Vec::new(),
        matrix: Some(Matrix {
            findings: table
                .columns
                .iter()
                .map(|c| MatrixFinding {
                    id: c.id.clone(),
                    title: c.title.clone(),
                    property: c.property.into(),
                    bounds: c.bounds.clone(),
                })
                .collect(),
            designs: table.designs.clone(),
        }),
    }
}
