//! The HTML report: one self-contained page (inline CSS and inline SVG, no
//! script, no font or stylesheet from a network), so it opens offline and can
//! be attached to a CI run as a single file.
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
use crate::report::diagram::{split_heads, Diagram};
use crate::report::xml_escape;
use slotcheck_models::{Narrated, PropertyKind};
use std::path::Path;

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
                let steps = model.tell(&trace.init, &trace.actions);
                let ending = model.explain(r.name, &trace.last);
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
section.finding { border-top: 2px solid #c8ccd4; padding-top: 0.5em; margin-top: 1.5em; }
pre { background: #f6f7f9; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
.diagram { overflow: auto; max-height: 85vh; border: 1px solid #e0e2e8; }
.diagram .lane-heads { position: sticky; top: 0; z-index: 1; width: max-content; line-height: 0; box-shadow: 0 2px 3px rgba(0, 0, 0, 0.15); }
.diagram svg { display: block; }
.explanation { font-weight: bold; }
.legend span { padding: 0.1em 0.5em; margin-right: 0.5em; }
section.scenario h3 { margin-bottom: 0.1em; }
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
        if row.is_regression() {
            text.push_str(&format!(" (expected {expected})"));
        }
    }
    text
}

/// The verdict table of one kind of property: a row per property, a column
/// per `column` (the design, or the scenario and design).
fn verdict_table(
    rows: &[&ResultRow],
    witness: bool,
    column_of: impl Fn(&ResultRow) -> String,
    out: &mut String,
) {
    let mut columns: Vec<String> = Vec::new();
    let mut properties: Vec<String> = Vec::new();
    for row in rows.iter().filter(|r| r.witness == witness) {
        if !columns.contains(&column_of(row)) {
            columns.push(column_of(row));
        }
        if !properties.contains(&row.property) {
            properties.push(row.property.clone());
        }
    }
    if properties.is_empty() {
        return;
    }
    let class = if witness { "witnesses" } else { "verdicts" };
    out.push_str(&format!(
        "<table class=\"{class}\"><thead><tr><th>{}</th>",
        if witness {
            "witness (sometimes)"
        } else {
            "property (always)"
        }
    ));
    for column in &columns {
        out.push_str(&format!("<th>{}</th>", xml_escape(column)));
    }
    out.push_str("</tr></thead><tbody>\n");
    for property in &properties {
        out.push_str(&format!("<tr><th>{}</th>", xml_escape(property)));
        for column in &columns {
            let found = rows.iter().find(|r| {
                r.witness == witness && &r.property == property && &column_of(r) == column
            });
            match found {
                None => out.push_str("<td></td>"),
                Some(row) => {
                    let mut class = cell_class(row).to_string();
                    if row.is_regression() {
                        class.push_str(" regression");
                    }
                    let text = xml_escape(&verdict_text(row));
                    let text = if row.story.is_some() {
                        format!("<a href=\"#{}\">{text}</a>", row.anchor())
                    } else {
                        text
                    };
                    let tag = if row.is_regression() {
                        " <span class=\"tag\">REGRESSION</span>"
                    } else {
                        ""
                    };
                    out.push_str(&format!("<td class=\"{class}\">{text}{tag}</td>"));
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// The what-to-merge table, then each finding and each design in words.
fn matrix_table(page: &Page, matrix: &Matrix, out: &mut String) {
    out.push_str("<table class=\"matrix\"><thead><tr><th>design</th>");
    for f in &matrix.findings {
        out.push_str(&format!(
            "<th title=\"{}\"><a href=\"#f-{}\">{}</a><br><small>{}</small></th>",
            xml_escape(&f.title),
            xml_escape(&f.id),
            xml_escape(&f.id),
            xml_escape(&f.property)
        ));
    }
    out.push_str("<th>cost</th></tr></thead><tbody>\n");
    for d in &matrix.designs {
        out.push_str(&format!(
            "<tr><th><a href=\"#d-{}\">{}</a></th>",
            xml_escape(&d.name),
            xml_escape(&d.name)
        ));
        for f in &matrix.findings {
            let found = page
                .rows
                .iter()
                .find(|r| r.design == d.name && r.scenario.as_deref() == Some(f.id.as_str()));
            match found {
                None => out.push_str("<td></td>"),
                Some(row) => {
                    let text = xml_escape(&verdict_text(row));
                    let text = if row.story.is_some() {
                        format!("<a href=\"#{}\">{text}</a>", row.anchor())
                    } else {
                        text
                    };
                    out.push_str(&format!("<td class=\"{}\">{text}</td>", cell_class(row)));
                }
            }
        }
        out.push_str(&format!("<td>{}</td></tr>\n", xml_escape(&d.cost)));
    }
    out.push_str("</tbody></table>\n<h2>The findings</h2>\n<dl>\n");
    for f in &matrix.findings {
        out.push_str(&format!(
            "<dt id=\"f-{}\"><b>{}</b> ({}; {})</dt><dd>{}</dd>\n",
            xml_escape(&f.id),
            xml_escape(&f.id),
            xml_escape(&f.property),
            xml_escape(&f.bounds),
            xml_escape(&f.title)
        ));
    }
    out.push_str("</dl>\n<h2>The designs</h2>\n<dl>\n");
    for d in &matrix.designs {
        out.push_str(&format!(
            "<dt id=\"d-{}\"><b>{}</b></dt><dd>{}<br><i>Cost:</i> {}</dd>\n",
            xml_escape(&d.name),
            xml_escape(&d.name),
            xml_escape(&d.change),
            xml_escape(&d.cost)
        ));
    }
    out.push_str("</dl>\n");
}

/// A scenario's heading, bounds and notes, then its designs side by side.
fn scenario_section(page: &Page, section: &Section, out: &mut String) {
    let rows: Vec<&ResultRow> = page
        .rows
        .iter()
        .filter(|r| r.scenario.as_deref() == Some(section.id.as_str()))
        .collect();
    let regressions = rows.iter().filter(|r| r.is_regression()).count();
    out.push_str(&format!(
        "<section class=\"scenario\" id=\"s-{}\">\n<h3>{} — {}{}</h3>\n<p class=\"bounds\">{}</p>\n",
        xml_escape(&section.id),
        xml_escape(&section.id),
        xml_escape(&section.title),
        if regressions > 0 {
            format!(" <span class=\"tag\">{regressions} REGRESSION{}</span>", if regressions == 1 { "" } else { "S" })
        } else {
            String::new()
        },
        xml_escape(&section.bounds)
    ));
    if let Some(notes) = &section.notes {
        out.push_str(&format!(
            "<details><summary>notes</summary><p class=\"notes\">{}</p></details>\n",
            xml_escape(notes)
        ));
    }
    if let Some(why) = &section.skipped {
        out.push_str(&format!("<p>skipped: {}</p>\n", xml_escape(why)));
    }
    let design = |r: &ResultRow| r.design.clone();
    verdict_table(&rows, false, design, out);
    verdict_table(&rows, true, design, out);
    out.push_str("</section>\n");
}

fn finding(row: &ResultRow, open: bool, out: &mut String) {
    let heading = format!("{}: {} — {}", row.property, row.column(), verdict_text(row));
    out.push_str(&format!(
        "<section class=\"finding\" id=\"{}\">\n<h3>{}</h3>\n",
        row.anchor(),
        xml_escape(&heading)
    ));
    if let Some(explanation) = &row.explanation {
        out.push_str(&format!(
            "<p class=\"explanation\">{}</p>\n",
            xml_escape(explanation)
        ));
    }
    out.push_str(&format!(
        "<details{}><summary>the story and its diagram</summary>\n",
        if open { " open" } else { "" }
    ));
    if let Some(svg) = &row.svg {
        out.push_str(&diagram_box(svg));
    }
    if let Some(story) = &row.story {
        out.push_str(&format!(
            "<pre class=\"story\">{}</pre>\n",
            xml_escape(story)
        ));
    }
    out.push_str("</details>\n</section>\n");
}

/// A diagram in its own scrolling box, its lane headers kept in view while
/// the events scroll under them. The SVG is ours (diagram.rs escapes its
/// text); the XML prolog, if any, is not allowed inside HTML.
fn diagram_box(svg: &str) -> String {
    let svg = svg.trim_start_matches(|c| c != '<');
    match split_heads(svg) {
        Some((heads, events)) => format!(
            "<div class=\"diagram\"><div class=\"lane-heads\">{heads}</div>{events}</div>\n"
        ),
        None => format!("<div class=\"diagram\">{svg}</div>\n"),
    }
}

/// The page as one HTML document.
pub fn render(page: &Page) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(&format!("<title>{}</title>\n", xml_escape(&page.title)));
    out.push_str(&format!("<style>{STYLE}</style>\n</head>\n<body>\n"));
    out.push_str(&format!(
        "<h1>{}</h1>\n<p class=\"subtitle\">{}</p>\n",
        xml_escape(&page.title),
        xml_escape(&page.subtitle)
    ));
    let bad = page.rows.iter().filter(|r| !r.good).count();
    let regressions = page.rows.iter().filter(|r| r.is_regression()).count();
    let mut summary = format!(
        "{} verdicts; {bad} a sound design would not have",
        page.rows.len()
    );
    if page.rows.iter().any(|r| r.expected.is_some()) {
        summary.push_str(&format!("; {regressions} differ from what is expected"));
    }
    out.push_str(&format!(
        "<h2>Verdicts</h2>\n<p class=\"summary\">{}</p>\n",
        xml_escape(&summary)
    ));
    if page.rows.iter().any(|r| r.expected.is_some()) {
        out.push_str("<p class=\"legend\"><span class=\"expected\">as the scenario expects (a pinned violation included)</span><span class=\"bad\">not as expected: a regression, outlined</span><span class=\"unsure\">inconclusive (a budget ran out)</span></p>\n");
    } else {
        out.push_str("<p class=\"legend\"><span class=\"good\">holds / reached</span><span class=\"bad\">violated / NOT reached</span><span class=\"unsure\">inconclusive (a budget ran out)</span></p>\n");
    }
    if let Some(matrix) = &page.matrix {
        matrix_table(page, matrix, &mut out);
    } else if page.sections.is_empty() {
        let rows: Vec<&ResultRow> = page.rows.iter().collect();
        verdict_table(&rows, false, ResultRow::column, &mut out);
        verdict_table(&rows, true, ResultRow::column, &mut out);
    }
    for section in &page.sections {
        scenario_section(page, section, &mut out);
    }

    if !page.stats.is_empty() {
        out.push_str("<h2>Statistics</h2>\n<table class=\"stats\"><thead><tr><th>run</th><th>states</th><th>unique</th><th>depth</th><th>seconds</th><th>cut short</th></tr></thead><tbody>\n");
        for s in &page.stats {
            out.push_str(&format!(
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2}</td><td>{}</td></tr>\n",
                xml_escape(&s.label),
                s.states,
                s.unique,
                s.depth.map_or("-".to_string(), |d| d.to_string()),
                s.seconds,
                xml_escape(s.cut.as_deref().unwrap_or(""))
            ));
        }
        out.push_str("</tbody></table>\n");
    }

    let violations: Vec<&ResultRow> = page
        .rows
        .iter()
        .filter(|r| !r.witness && r.story.is_some())
        .collect();
    out.push_str("<h2>Violations</h2>\n");
    if violations.is_empty() {
        out.push_str("<p>None: every checked property holds on these bounds.</p>\n");
    }
    for row in violations {
        finding(row, true, &mut out);
    }
    let witnesses: Vec<&ResultRow> = page
        .rows
        .iter()
        .filter(|r| r.witness && r.story.is_some())
        .collect();
    if !witnesses.is_empty() {
        out.push_str("<h2>Witnesses</h2>\n<p>The shortest path to each reached witness: evidence that the bounds reach what they are meant to.</p>\n");
        for row in witnesses {
            finding(row, false, &mut out);
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// A page of our own style around a body of plain HTML (`slotcheck mutate`).
pub fn plain_page(title: &str, subtitle: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n<p class=\"subtitle\">{}</p>\n{body}</body>\n</html>\n",
        xml_escape(title),
        xml_escape(title),
        xml_escape(subtitle)
    )
}

/// Writes the page whole or not at all.
pub fn write(path: &Path, page: &Page) -> Result<(), String> {
    crate::report::itf::write_atomically(path, render(page).as_bytes())
        .map_err(|e| format!("--html {}: {e}", path.display()))
}

#[cfg(test)]
mod tests;
