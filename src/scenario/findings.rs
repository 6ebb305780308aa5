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
    /// A cell per design and finding, under [`Table::reading`].
    pub cells: Vec<ResultRow>,
    pub stats: Vec<StatsRow>,
    /// How the workers read in `cells`.
    pub reading: Reading,
    /// With both readings: the cells under split reads (`cells` are then
    /// the one-snapshot ones).
    pub split: Option<Vec<ResultRow>>,
    /// How the broker holds a message, in every cell.
    pub hold: Hold,
}

/// How the broker holds a message the gate turned away: parked until the
/// next durable write (the contract's reading), or delayed whatever was
/// written (the model option `delayed-hold`, SQS's
/// `ChangeMessageVisibility`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    Parked,
    Delayed,
}

/// The model option of delayed holds.
pub const DELAYED_HOLD: &str = "delayed-hold";

impl Hold {
    pub fn word(self) -> &'static str {
        match self {
            Hold::Parked => "parked",
            Hold::Delayed => "delayed",
        }
    }

    /// The model options a check under this hold adds.
    fn options(self) -> &'static [&'static str] {
        match self {
            Hold::Parked => &[],
            Hold::Delayed => &[DELAYED_HOLD],
        }
    }

    /// The flags that give it to `check`.
    fn flags(self) -> String {
        self.options()
            .iter()
            .map(|o| format!(" --option {o}"))
            .collect()
    }
}

/// How a worker reads R's row, the queue row and the latest head: in one
/// snapshot (one joined `SELECT`, or a read transaction at REPEATABLE
/// READ), or in separate statements (the model option `split-read`: three
/// `SELECT`s, or a transaction at READ COMMITTED).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    OneSnapshot,
    SplitRead,
    /// Both: every finding under each.
    Both,
}

/// The model option of split reads.
const SPLIT_READ: &str = "split-read";

/// What a design needs of the read, next to it in the table.
pub const NEEDS_ONE_SNAPSHOT: &str =
    "needs a one-snapshot read: one joined `SELECT`, or a read transaction at REPEATABLE READ";

impl Reading {
    pub fn word(self) -> &'static str {
        match self {
            Reading::OneSnapshot => "one-snapshot",
            Reading::SplitRead => "split-read",
            Reading::Both => "both",
        }
    }

    /// The model options a check under this reading adds (one reading).
    fn options(self) -> &'static [&'static str] {
        match self {
            Reading::SplitRead => &[SPLIT_READ],
            _ => &[],
        }
    }
}

/// Whether `model` has a split reading at all (a model option
/// `split-read`).
pub fn model_reads_split(model: &str) -> bool {
    model_has_option(model, SPLIT_READ)
}

/// Whether `model` has the model option `option`.
fn model_has_option(model: &str, option: &'static str) -> bool {
    struct Has(&'static str);
    impl ForModel for Has {
        type Out = bool;
        fn run<M: ToolModel>(self) -> Self::Out {
            let mut m = M::first_design(M::DEFAULT_BOUNDS);
            m.set_option(self.0).is_ok()
        }
    }
    models::for_model(model, Has(option)).unwrap_or(false)
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
    reading: Reading,
    hold: Hold,
) -> Result<Table, String> {
    if reading != Reading::OneSnapshot && !model_reads_split(model) {
        return Err(format!(
            "--reading {}: the {model} model has no split reads (its workers read one row at a time)",
            reading.word()
        ));
    }
    if hold != Hold::Parked && !model_has_option(model, DELAYED_HOLD) {
        return Err(format!(
            "--hold {}: the {model} model has no holds",
            hold.word()
        ));
    }
    let files = scenario::files(paths).map_err(|e| e.to_string())?;
    let scenarios = scenario::load_all(&files, &Selection::default()).map_err(|e| e.to_string())?;
    let mut table = Table {
        model,
        stories_page: stories_page(model),
        columns: Vec::new(),
        designs: designs(model, chosen)?,
        cells: Vec::new(),
        stats: Vec::new(),
        reading,
        split: (reading == Reading::Both).then(Vec::new),
        hold,
    };
    let first = match reading {
        Reading::Both => Reading::OneSnapshot,
        one => one,
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
        let with = |reading: &[&'static str]| -> Vec<&'static str> {
            reading.iter().chain(hold.options()).copied().collect()
        };
        for (cell, mut stats) in s.check_finding(limits, chosen, &with(first.options()))? {
            if hold != Hold::Parked {
                stats.label.push_str(&format!(" · {} holds", hold.word()));
            }
            table.cells.push(cell);
            table.stats.push(stats);
        }
        if let Some(split) = &mut table.split {
            for (cell, mut stats) in s.check_finding(limits, chosen, &with(&[SPLIT_READ]))? {
                stats.label.push_str(" · split reads");
                if hold != Hold::Parked {
                    stats.label.push_str(&format!(" · {} holds", hold.word()));
                }
                split.push(cell);
                table.stats.push(stats);
            }
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

    /// The cell under split reads, when both readings were checked.
    fn split_cell(&self, design: &str, finding: &str) -> Option<&ResultRow> {
        self.split
            .as_ref()?
            .iter()
            .find(|c| c.design == design && c.scenario.as_deref() == Some(finding))
    }

    /// With both readings: the findings `design` holds in one snapshot
    /// and breaks under split reads (empty: the read is no condition of it).
    pub fn broken_by_split_reads(&self, design: &str) -> Vec<&Column> {
        self.columns
            .iter()
            .filter(|c| {
                let held = |cell: Option<&ResultRow>| {
                    cell.is_some_and(|cell| cell.got == Verdict::Holds.word())
                };
                held(self.cell(design, &c.id)) && !held(self.split_cell(design, &c.id))
            })
            .filter(|_| self.split.is_some())
            .collect()
    }

    /// What `design` needs of the read, in words (both readings checked).
    pub fn read_words(&self, design: &str) -> Option<String> {
        self.split.as_ref()?;
        let broken = self.broken_by_split_reads(design);
        let holds_one = self.columns.iter().all(|c| {
            self.cell(design, &c.id)
                .is_some_and(|cell| cell.got == Verdict::Holds.word())
        });
        Some(if broken.is_empty() && holds_one {
            "either read: one snapshot or separate statements".to_string()
        } else if broken.is_empty() {
            "split reads change no verdict".to_string()
        } else {
            let ids: Vec<&str> = broken.iter().map(|c| c.id.as_str()).collect();
            format!(
                "{NEEDS_ONE_SNAPSHOT} (split reads break {})",
                ids.join(", ")
            )
        })
    }

    /// Whether a run was cut short (its verdicts are then inconclusive).
    pub fn cut(&self) -> bool {
        self.stats.iter().any(|s| s.cut.is_some())
    }

    /// The designs that hold every finding (under every reading checked).
    pub fn clean(&self) -> Vec<&str> {
        self.designs
            .iter()
            .filter(|d| {
                self.columns.iter().all(|c| {
                    self.cell(&d.name, &c.id)
                        .is_some_and(|cell| cell.got == Verdict::Holds.word())
                        && (self.split.is_none()
                            || self
                                .split_cell(&d.name, &c.id)
                                .is_some_and(|cell| cell.got == Verdict::Holds.word()))
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

/// A row per design, a column per finding: each cell's steps (or
/// `holds`), as `lookup` finds the cell.
fn verdict_table<'t>(
    table: &'t Table,
    style: Style,
    lookup: impl Fn(&str, &str) -> Option<&'t ResultRow>,
) -> String {
    let mut headings = vec![Heading::left("design")];
    // Each finding's column as wide as `holds`, however short its cells.
    headings.extend((1..=table.columns.len()).map(|i| Heading::left(&format!("F{i}")).at_least(5)));
    let mut verdicts = TextTable::new(headings);
    for d in &table.designs {
        let mut row: Vec<Cell> = vec![d.name.as_str().into()];
        for c in &table.columns {
            let (text, verdict) = match lookup(&d.name, &c.id) {
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
    verdicts.render(style)
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
    out.push_str(&verdict_table(table, style, |d, f| table.cell(d, f)));
    if table.split.is_some() {
        out.push_str("\nsplit reads (--option split-read: R, the queue row and the head read in three statements)\n");
        out.push_str(&verdict_table(table, style, |d, f| table.split_cell(d, f)));
    }
    out.push_str(
        "\na number: violated, the steps of the shortest counterexample; holds: not on the finding's bounds; ?: a budget ran out\n\n",
    );
    let mut costs = TextTable::new(vec![Heading::left("cost"), Heading::left("")]);
    for d in table.designs.iter().filter(|d| !d.cost.is_empty()) {
        costs.row(vec![d.name.as_str().into(), d.cost.as_str().into()]);
    }
    out.push_str(&costs.render(style));
    if table.split.is_some() {
        let mut reads = TextTable::new(vec![Heading::left("read"), Heading::left("")]);
        for d in &table.designs {
            let words = table.read_words(&d.name).unwrap_or_default();
            reads.row(vec![d.name.as_str().into(), words.into()]);
        }
        out.push('\n');
        out.push_str(&reads.render(style));
    }
    let clean = table.clean();
    out.push_str(&format!(
        "\nholds every finding{}{}: {}\n",
        match table.reading {
            Reading::OneSnapshot => " (one-snapshot reads)",
            Reading::SplitRead => " (split reads)",
            Reading::Both => " under both readings",
        },
        match table.hold {
            Hold::Parked => "",
            Hold::Delayed => ", delayed holds",
        },
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
    let reads = table.split.is_some();
    if reads {
        out.push_str(" read |");
    }
    out.push_str(" cost |\n|---|");
    for _ in &table.columns {
        out.push_str("---|");
    }
    if reads {
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
            let split = table.split_cell(&d.name, &c.id);
            let text = match (table.cell(&d.name, &c.id), split) {
                // Only a verdict that differs: a split read is longer anyway.
                (Some(one), Some(split)) if split.got != one.got => {
                    let words = match &split.story {
                        Some(_) => format!(
                            "[{}]({}#{})",
                            verdict_words(split),
                            table.stories_page,
                            anchor(&d.name, &format!("{} split reads", c.id))
                        ),
                        None => verdict_words(split),
                    };
                    format!("{text}; split reads: {words}")
                }
                _ => text,
            };
            out.push_str(&format!(" {text} |"));
        }
        if let Some(words) = table.read_words(&d.name) {
            out.push_str(&format!(" {words} |"));
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
                "\n### {}, {}\n\n{} (`slotcheck check{} --design {} {}{} --property {}`):\n\n```text\n{}```\n",
                d.name,
                c.id,
                verdict_words(cell),
                models::model_flag(table.model),
                d.name,
                c.flags,
                table.hold.flags(),
                c.property,
                story
            ));
        }
        // Under split reads: the stories of the cells that differ from one
        // snapshot's.
        for d in &table.designs {
            let (Some(one), Some(split)) =
                (table.cell(&d.name, &c.id), table.split_cell(&d.name, &c.id))
            else {
                continue;
            };
            let Some(story) = &split.story else { continue };
            if split.got == one.got {
                continue;
            }
            out.push_str(&format!(
                "\n### {}, {} split reads\n\n{} with split reads (`slotcheck check{} --design {} {}{} --option {SPLIT_READ} --property {}`):\n\n```text\n{}```\n",
                d.name,
                c.id,
                verdict_words(split),
                models::model_flag(table.model),
                d.name,
                c.flags,
                table.hold.flags(),
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
    let first = match table.reading {
        Reading::Both => Reading::OneSnapshot,
        one => one,
    };
    let tagged = table.cells.iter().map(|c| (first, c)).chain(
        table
            .split
            .iter()
            .flatten()
            .map(|c| (Reading::SplitRead, c)),
    );
    FindingsTable {
        cells: tagged
            .map(|(reading, c)| FindingCell {
                design: c.design.clone(),
                finding: c.scenario.clone(),
                reading: reading.word(),
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
                needs_one_snapshot_read: table
                    .split
                    .is_some()
                    .then(|| !table.broken_by_split_reads(&d.name).is_empty()),
                read: table.read_words(&d.name),
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
        hold: table.hold.word(),
        model: table.model.to_string(),
        reading: table.reading.word(),
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
