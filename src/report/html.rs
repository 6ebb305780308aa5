//! The HTML report: one self-contained page (inline CSS, inline SVG and one
//! small inline script; no font, stylesheet or script from a network), so it
//! opens offline and can be attached to a CI run as a single file. maud
//! writes it: text is escaped by construction, only our own SVG and style
//! go in unescaped (`PreEscaped`). Diagrams and folded stories are packed
//! once and drawn when opened (`html/lazy.rs`).
//!
//! The page is built from plain rows ([`Page`], [`ResultRow`], [`StatsRow`])
//! rather than from an [`Outcome`], so any runner can fill it: `check` and
//! `compare` through [`outcome_rows`], and a scenario runner by giving each
//! result its scenario and expected verdict:
//!
//! ```ignore
//! let page = html::Page {
//!     title: "slotcheck: nightly scenarios".into(),
//!     subtitle: "3 scenario files".into(),
//!     rows: vec![html::ResultRow {
//!         scenario: Some("SP-OCT-003".into()),
//!         design: "claim-first".into(),
//!         property: "no-wedge".into(),
//!         witness: false,
//!         expected: Some("holds".into()),
//!         got: "violated".into(),
//!         good: false,
//!         steps: Some(8),
//!         explanation: Some(model.explain("no-wedge", &trace.last)),
//!         story: Some(report::story_text(&steps, &ending)),
//!         svg: Some(Diagram::of(&model, "no-wedge", &steps, Some(&ending)).svg()),
//!     }],
//!     stats: vec![],
//! };
//! html::write(Path::new("report.html"), &page)?;
//! ```

use crate::check::Outcome;
use crate::report;
use crate::report::diagram::Diagram;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use slotcheck_models::{Narrated, PropertyKind};
use std::collections::HashMap;
use std::path::Path;

pub mod lazy;
pub mod scenario;
mod stories;

use stories::{folded_story, group_told, open_finding};

/// One verdict: a property of a design, in a scenario or not.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultRow {
    /// The scenario that ran it (`None` for `check` and `compare`).
    pub scenario: Option<String>,
    pub design: String,
    pub property: String,
    /// A `sometimes` property: a witness that must be reached.
    pub witness: bool,
    /// The verdict the scenario expects (`holds`, `violated`...), if any.
    pub expected: Option<String>,
    /// Set by a runner that judges its expectations itself (a pinned step
    /// count, or an inconclusive run, which is no regression); `None`: a
    /// regression is `expected` other than `got`.
    pub regression: Option<bool>,
    /// The verdict as expected but the pinned step count not (a scenario's
    /// story change): tagged, not outlined.
    pub story_change: bool,
    /// The verdict found (`holds`, `violated`, `reached`, `not-reached`,
    /// `inconclusive`).
    pub got: String,
    /// Whether `got` is what a sound design wants (`holds`, `reached`).
    pub good: bool,
    pub steps: Option<usize>,
    /// Why the property fails (or the witness holds) in the trace's last state.
    pub explanation: Option<String>,
    /// The story as text (`report::story_text`).
    pub story: Option<String>,
    /// The sequence diagram as an inline `<svg>` document.
    pub svg: Option<String>,
}

impl ResultRow {
    /// A scenario's verdict that differs from what it expects.
    pub fn is_regression(&self) -> bool {
        self.regression
            .unwrap_or_else(|| self.expected.as_ref().is_some_and(|e| *e != self.got))
    }

    fn column(&self) -> String {
        match &self.scenario {
            Some(scenario) => format!("{scenario} · {}", self.design),
            None => self.design.clone(),
        }
    }

    fn anchor(&self) -> String {
        let raw = format!("{}-{}", self.column(), self.property);
        let id: String = raw
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        format!("r-{id}")
    }
}

/// One run's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatsRow {
    pub label: String,
    pub states: usize,
    pub unique: usize,
    pub depth: Option<usize>,
    pub seconds: f64,
    /// Why the run was cut short, if it was.
    pub cut: Option<String>,
}

/// A scenario of a scenario run: its verdicts get a table of their own
/// (its designs side by side), since scenarios differ in model and bounds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Section {
    /// The scenario ID, as the rows name it.
    pub id: String,
    pub title: String,
    /// The model, bounds and options.
    pub bounds: String,
    pub notes: Option<String>,
    /// Why the scenario did not run, if it did not.
    pub skipped: Option<String>,
}

/// A finding: a column of the what-to-merge table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatrixFinding {
    /// Its scenario's ID, as the rows name it (`scenario`).
    pub id: String,
    pub title: String,
    pub property: String,
    /// The bounds it is checked on, in words.
    pub bounds: String,
}

/// A design: a row of the what-to-merge table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatrixDesign {
    pub name: String,
    /// What it changes, as a diff of the contract's admit table.
    pub change: String,
    /// What it costs to build.
    pub cost: String,
}

/// The what-to-merge table (`compare --findings`): designs as rows, findings
/// as columns, each cell a verdict linking to its story, the cost last.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Matrix {
    pub findings: Vec<MatrixFinding>,
    pub designs: Vec<MatrixDesign>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    pub title: String,
    /// The bounds, or what was run.
    pub subtitle: String,
    pub rows: Vec<ResultRow>,
    pub stats: Vec<StatsRow>,
    /// Scenario runs: one verdict table per scenario, in this order. Empty:
    /// one table over all rows.
    pub sections: Vec<Section>,
    /// The what-to-merge table, shown instead of the verdict tables.
    pub matrix: Option<Matrix>,
}

/// The rows and figures of one design's outcome, with a story and a diagram
/// for each violation and each reached witness.
pub fn outcome_rows<M: Narrated>(
    model: &M,
    design: &str,
    outcome: &Outcome<M>,
) -> (Vec<ResultRow>, StatsRow) {
    let rows = outcome
        .results
        .iter()
        .map(|r| {
            let mut row = ResultRow {
                design: design.to_string(),
                property: r.name.to_string(),
                witness: r.kind == PropertyKind::Sometimes,
                got: r.verdict.word().to_string(),
                good: r.verdict.is_good(),
                steps: report::steps(r),
                ..ResultRow::default()
            };
            if let Some(trace) = &r.trace {
                let (steps, ending) = report::told(model, r.name, trace);
                let title = format!("{}: {design}, {} steps", r.name, trace.steps());
                row.story = Some(report::story_text(&steps, &ending));
                row.svg = Some(Diagram::of(model, &title, &steps, Some(&ending)).svg());
                row.explanation = Some(ending);
            }
            row
        })
        .collect();
    let s = &outcome.stats;
    let stats = StatsRow {
        label: design.to_string(),
        states: s.states,
        unique: s.unique,
        depth: s.depth,
        seconds: s.seconds,
        cut: s.cut.map(|c| c.describe().to_string()),
    };
    (rows, stats)
}

// No max-width on the page: a diagram wider than the window scrolls inside
// its own box (whose lane headers stay in view), never the page sideways.
const STYLE: &str = "
body { font-family: sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
.subtitle { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.8em 0 1.5em; }
th, td { border: 1px solid #c8ccd4; padding: 0.3em 0.7em; text-align: left; }
th { background: #eef1f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.good { background: #e3f6e3; color: #16621a; }
.bad { background: #fbdada; color: #8f1111; font-weight: bold; }
.expected { background: #e3f6e3; color: #16621a; }
.unsure { background: #fff1c9; color: #7a5600; }
td.regression { outline: 3px solid #d00000; outline-offset: -3px; }
td a { color: inherit; }
.tag { font-size: 0.8em; font-weight: bold; color: #d00000; }
pre { background: #f6f7f9; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
.diagram { overflow: auto; max-height: 85vh; border: 1px solid #e0e2e8; }
.diagram .lane-heads { position: sticky; top: 0; z-index: 1; width: max-content; line-height: 0; box-shadow: 0 2px 3px rgba(0, 0, 0, 0.15); }
.diagram svg { display: block; }
.explanation { font-weight: bold; }
.legend span { padding: 0.1em 0.5em; margin-right: 0.5em; }
details.scenario { margin: 0.6em 0; }
details.scenario > summary h3, details.finding > summary h3 { display: inline; margin: 0; }
details.scenario > summary { cursor: pointer; }
.tally { color: #555; margin-left: 0.8em; font-size: 0.9em; }
details.finding { border-top: 2px solid #c8ccd4; padding-top: 0.5em; margin-top: 1em; }
details.finding > summary { cursor: pointer; }
details.finding > summary h3 { font-size: 1em; }
.bounds { color: #555; margin: 0; font-size: 0.9em; }
.notes { white-space: pre-wrap; font-size: 0.9em; max-width: 60em; }
";

/// A cell's colour. A scenario's verdict is judged against what it expects:
/// a violation the scenario pins is the finding reproduced, not a failure,
/// so only a regression is red there. Without an expectation (`check`,
/// `compare`) red is what a sound design would not give.
fn cell_class(row: &ResultRow) -> &'static str {
    match row.got.as_str() {
        "inconclusive" => "unsure",
        _ if row.expected.is_some() && !row.is_regression() => "expected",
        _ if row.expected.is_some() => "bad",
        _ if row.good => "good",
        _ => "bad",
    }
}

fn verdict_text(row: &ResultRow) -> String {
    let mut text = match (row.got.as_str(), row.steps) {
        ("violated", Some(n)) => format!("violated ({n} step{})", if n == 1 { "" } else { "s" }),
        ("not-reached", _) => "NOT reached".into(),
        (got, _) => got.to_string(),
    };
    if let Some(expected) = &row.expected {
        if row.is_regression() || row.story_change {
            text.push_str(&format!(" (expected {expected})"));
        }
    }
    text
}

/// A verdict, linked to its story when it has one.
fn verdict_link(row: &ResultRow, links: &Links) -> Markup {
    html! {
        @match links.get(&row.anchor()) {
            Some(anchor) => a href={ "#" (anchor) } { (verdict_text(row)) },
            None => (verdict_text(row)),
        }
    }
}

/// Where each told row's verdict links to (by the row's own anchor): its
/// own section, or the story it shares with other checks.
type Links = HashMap<String, String>;

/// The verdict table of one kind of property: a row per property, a column
/// per `column` (the design, or the scenario and design).
fn verdict_table(
    rows: &[&ResultRow],
    witness: bool,
    column_of: impl Fn(&ResultRow) -> String,
    links: &Links,
) -> Markup {
    let mut columns: Vec<String> = Vec::new();
    let mut properties: Vec<&str> = Vec::new();
    for row in rows.iter().filter(|r| r.witness == witness) {
        if !columns.contains(&column_of(row)) {
            columns.push(column_of(row));
        }
        if !properties.contains(&row.property.as_str()) {
            properties.push(&row.property);
        }
    }
    let cell = |property: &str, column: &str| {
        rows.iter()
            .find(|r| r.witness == witness && r.property == property && column_of(r) == column)
    };
    html! {
        @if !properties.is_empty() {
            table class=(if witness { "witnesses" } else { "verdicts" }) {
                thead { tr {
                    th { (if witness { "witness (sometimes)" } else { "property (always)" }) }
                    @for column in &columns { th { (column) } }
                } }
                tbody {
                    @for property in &properties {
                        tr {
                            th { (property) }
                            @for column in &columns {
                                @match cell(property, column) {
                                    None => td {},
                                    Some(row) => td class={ (cell_class(row)) @if row.is_regression() { " regression" } } {
                                        (verdict_link(row, links))
                                        @if row.is_regression() { " " span class="tag" { "REGRESSION" } }
                                        @if row.story_change { " " span class="tag" { "STORY CHANGE" } }
                                    },
                                }
                            }
                        }
                        "\n"
                    }
                }
            }
        }
    }
}

/// The what-to-merge table, then each finding and each design in words.
fn matrix_table(page: &Page, matrix: &Matrix, links: &Links) -> Markup {
    let cell = |design: &str, finding: &str| {
        page.rows
            .iter()
            .find(|r| r.design == design && r.scenario.as_deref() == Some(finding))
    };
    html! {
        table class="matrix" {
            thead { tr {
                th { "design" }
                @for f in &matrix.findings {
                    th title=(f.title) { a href={ "#f-" (f.id) } { (f.id) } br; small { (f.property) } }
                }
                th { "cost" }
            } }
            tbody {
                @for d in &matrix.designs {
                    tr {
                        th { a href={ "#d-" (d.name) } { (d.name) } }
                        @for f in &matrix.findings {
                            @match cell(&d.name, &f.id) {
                                None => td {},
                                Some(row) => td class=(cell_class(row)) { (verdict_link(row, links)) },
                            }
                        }
                        td { (d.cost) }
                    }
                    "\n"
                }
            }
        }
        h2 { "The findings" }
        dl {
            @for f in &matrix.findings {
                dt id={ "f-" (f.id) } { b { (f.id) } " (" (f.property) "; " (f.bounds) ")" }
                dd { (f.title) }
            }
        }
        h2 { "The designs" }
        dl {
            @for d in &matrix.designs {
                dt id={ "d-" (d.name) } { b { (d.name) } }
                dd { (d.change) br; i { "Cost:" } " " (d.cost) }
            }
        }
    }
}

/// A scenario: its heading and how its checks went, folded unless one is
/// a regression or inconclusive; inside, its bounds, notes and designs side
/// by side.
/// A scenario's section: open, with its tables in the page, when a check
/// regressed or was cut short; folded to one line otherwise, its body packed
/// with the stories and drawn when opened (most of a nightly page is the
/// tables of scenarios where everything went as expected).
fn scenario_section(
    page: &Page,
    section: &Section,
    links: &Links,
    stories: &mut lazy::Stories,
) -> Markup {
    let rows: Vec<&ResultRow> = page
        .rows
        .iter()
        .filter(|r| r.scenario.as_deref() == Some(section.id.as_str()))
        .collect();
    let regressions = rows.iter().filter(|r| r.is_regression()).count();
    let unsure = rows.iter().filter(|r| r.got == "inconclusive").count();
    let changed = rows.iter().filter(|r| r.story_change).count();
    let mut tally = match (&section.skipped, regressions, unsure) {
        (Some(why), _, _) => format!("skipped: {why}"),
        (None, 0, 0) => format!("{} as expected", report::count(rows.len() as u64, "check")),
        (None, _, _) => format!(
            "{}: {} as expected, {unsure} inconclusive",
            report::count(rows.len() as u64, "check"),
            rows.len() - regressions - unsure
        ),
    };
    if changed > 0 && section.skipped.is_none() {
        tally.push_str(&format!(
            " ({} among them)",
            report::count(changed as u64, "story change")
        ));
    }
    let design = |r: &ResultRow| r.design.clone();
    let body = html! {
        p class="bounds" { (section.bounds) }
        @if let Some(notes) = &section.notes {
            details { summary { "notes" } p class="notes" { (notes) } }
        }
        (verdict_table(&rows, false, design, links))
        (verdict_table(&rows, true, design, links))
    };
    // A story change is shown open too: its new story is what to read
    // before re-pinning its length.
    let open = regressions + unsure + changed > 0;
    html! {
        details class="scenario" id={ "s-" (section.id) } open[open] {
            summary {
                h3 {
                    (section.id) " — " (section.title)
                    @if regressions > 0 {
                        " " span class="tag" { (regressions) " REGRESSION" @if regressions > 1 { "S" } }
                    }
                    @if changed > 0 {
                        " " span class="tag" { (changed) " STORY CHANGE" @if changed > 1 { "S" } }
                    }
                }
                span class="tally" { (tally) }
            }
            @if open {
                (body)
            } @else {
                div class="lazy" data-entry=(stories.add(body.into_string())) {}
            }
        }
        "\n"
    }
}

/// The page as one HTML document: the regressions first, then the verdict
/// tables (a scenario folded when all its checks went as expected), the
/// violations, the witnesses and the statistics. Every diagram, and every
/// folded story, is drawn when it is opened (see `lazy.rs`).
pub fn render(page: &Page) -> String {
    let mut stories = lazy::Stories::default();
    let bad = page.rows.iter().filter(|r| !r.good).count();
    let judged = page.rows.iter().any(|r| r.expected.is_some());
    let regressions: Vec<&ResultRow> = page.rows.iter().filter(|r| r.is_regression()).collect();
    let mut summary = format!(
        "{} verdicts; {bad} a sound design would not have",
        page.rows.len()
    );
    if judged {
        summary.push_str(&format!(
            "; {} differ from what is expected",
            regressions.len()
        ));
    }
    // Scenarios with a regression first; the others in the run's order.
    let mut sections: Vec<&Section> = page.sections.iter().collect();
    sections.sort_by_key(|s| {
        !page
            .rows
            .iter()
            .any(|r| r.scenario.as_deref() == Some(s.id.as_str()) && r.is_regression())
    });
    let told = |witness: bool| -> Vec<&ResultRow> {
        page.rows
            .iter()
            .filter(|r| r.witness == witness && r.story.is_some() && !r.is_regression())
            .collect()
    };
    // Outside a scenario run a violation is the news: open, each on its
    // own. In one, a pinned violation is the finding reproduced: folded like
    // a witness, with the other checks that tell the same story.
    let mut links = Links::new();
    let open: Vec<&ResultRow> = regressions
        .iter()
        .copied()
        .filter(|r| r.story.is_some())
        .chain(if judged { Vec::new() } else { told(false) })
        .collect();
    for row in &open {
        links.insert(row.anchor(), row.anchor());
    }
    let mut next = 0;
    let violations = if judged {
        group_told(&told(false), &mut links, &mut next)
    } else {
        Vec::new()
    };
    let witnesses = group_told(&told(true), &mut links, &mut next);
    let links = &links;
    let body = html! {
        h1 { (page.title) }
        p class="subtitle" { (page.subtitle) }
        h2 { "Verdicts" }
        p class="summary" { (summary) }
        @if !regressions.is_empty() {
            h2 { "Regressions" }
            @for row in open.iter().filter(|r| r.is_regression()) {
                (open_finding(row, &mut stories))
            }
        }
        @if judged {
            p class="legend" {
                span class="expected" { "as the scenario expects (a pinned violation included)" }
                span class="bad" { "not as expected: a regression, outlined" }
                span class="unsure" { "inconclusive (a budget ran out)" }
            }
        } @else {
            p class="legend" {
                span class="good" { "holds / reached" }
                span class="bad" { "violated / NOT reached" }
                span class="unsure" { "inconclusive (a budget ran out)" }
            }
        }
        @if let Some(matrix) = &page.matrix {
            (matrix_table(page, matrix, links))
        } @else if page.sections.is_empty() {
            @let rows: Vec<&ResultRow> = page.rows.iter().collect();
            (verdict_table(&rows, false, ResultRow::column, links))
            (verdict_table(&rows, true, ResultRow::column, links))
        }
        @for section in &sections {
            (scenario_section(page, section, links, &mut stories))
        }
        h2 { "Violations" }
        @if violations.is_empty() && open.is_empty() {
            p { "None: every checked property holds on these bounds." }
        }
        @for row in open.iter().filter(|r| !r.is_regression()) {
            (open_finding(row, &mut stories))
        }
        @if !violations.is_empty() {
            p { "Each violation a scenario pins, as it expects, and the checks that tell the same story: open one for its story and diagram." }
        }
        @for (anchor, rows) in &violations {
            (folded_story(anchor, rows, &mut stories))
        }
        @if !witnesses.is_empty() {
            h2 { "Witnesses" }
            p { "The shortest path to each reached witness: evidence that the bounds reach what they are meant to." }
            @for (anchor, rows) in &witnesses {
                (folded_story(anchor, rows, &mut stories))
            }
        }
        @if !page.stats.is_empty() {
            h2 { "Statistics" }
            @if page.sections.is_empty() {
                (stats_table(page))
            } @else {
                // A run per scenario and design: folded, drawn when opened.
                details class="stats" {
                    summary { (report::count(page.stats.len() as u64, "run")) }
                    div class="lazy" data-entry=(stories.add(stats_table(page).into_string())) {}
                }
            }
        }
    };
    document(&page.title, html! { (body) (stories.script()) })
}

/// States, unique states, depth, seconds and why cut, per run.
fn stats_table(page: &Page) -> Markup {
    html! {
            table class="stats" {
                thead { tr { th { "run" } th { "states" } th { "unique" } th { "depth" } th { "seconds" } th { "cut short" } } }
                tbody {
                    @for s in &page.stats {
                        tr {
                            td { (s.label) }
                            td class="num" { (s.states) }
                            td class="num" { (s.unique) }
                            td class="num" { (s.depth.map_or("-".to_string(), |d| d.to_string())) }
                            td class="num" { (format!("{:.2}", s.seconds)) }
                            td { (s.cut.as_deref().unwrap_or("")) }
                        }
                        "\n"
                    }
                }
            }
    }
}

/// Our head and style around a body.
fn document(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body { (body) }
        }
    }
    .into_string()
        + "\n"
}

/// A page of our own style around a body of plain HTML (`slotcheck mutate`).
pub fn plain_page(title: &str, subtitle: &str, body: &str) -> String {
    document(
        title,
        html! { h1 { (title) } p class="subtitle" { (subtitle) } (PreEscaped(body)) },
    )
}

/// Writes the page whole or not at all.
pub fn write(path: &Path, page: &Page) -> Result<(), String> {
    crate::report::itf::write_atomically(path, render(page).as_bytes())
        .map_err(|e| format!("--html {}: {e}", path.display()))
}

#[cfg(test)]
mod tests;
