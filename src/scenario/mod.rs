//! Scenario files: one TOML file per audit finding, under `scenarios/`. A
//! scenario names a model, its bounds and options, the verdict it expects for
//! each design and property, and optionally a scripted story that must replay
//! step by step and end in a violation. `slotcheck check` loads every file
//! first (any invalid file stops the run before anything is checked or
//! written), then runs each scenario and compares every verdict with its
//! expectation.
//!
//! The format is read in two passes: the `model` key first, then the whole
//! file as that model's scenario, so that each model's bounds are checked by
//! its own struct (with `deny_unknown_fields`) and errors keep their spans.

pub mod findings;

use crate::check::{check, Limits, Stats, Verdict};
use crate::models::bounds::Whole;
use crate::models::{self, ForModel, ToolModel, MODELS};
use crate::report;
use crate::report::diagram::Diagram;
use crate::report::html::{self, StatsRow};
use crate::report::itf;
use crate::report::xml_escape;
use crate::simulate::model_meta;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{json, Value as Json};
use slotcheck_models::{Narrated, PropertyKind};
use stateright::{Expectation, Model};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;
use toml::Spanned;

/// Where scenario files live, relative to the working directory.
pub const SCENARIO_DIR: &str = "scenarios";

/// Bad input: the file, where in it (when known), the field, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub file: PathBuf,
    /// 1-based line and column.
    pub at: Option<(usize, usize)>,
    /// The dotted key, e.g. `bounds.requests`.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, column)) = self.at {
            write!(f, ":{line}:{column}")?;
        }
        write!(f, ": ")?;
        if let Some(field) = &self.field {
            write!(f, "`{field}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

/// A file's text, for turning byte offsets into positions and field names.
struct Source<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn error(
        &self,
        span: Option<std::ops::Range<usize>>,
        field: Option<String>,
        message: impl Into<String>,
    ) -> InputError {
        InputError {
            file: self.file.to_path_buf(),
            at: span.map(|s| line_column(self.text, s.start)),
            field,
            message: message.into(),
        }
    }

    fn at<T>(
        &self,
        spanned: &Spanned<T>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> InputError {
        self.error(Some(spanned.span()), Some(field.into()), message)
    }

    /// The byte range of the `[TABLE]` header's table (to the next header),
    /// or the whole text.
    fn table(&self, table: &str) -> std::ops::Range<usize> {
        let header = format!("[{table}]");
        match self.text.find(&header) {
            Some(start) => {
                let body = start + header.len();
                let end = self.text[body..]
                    .find("\n[")
                    .map_or(self.text.len(), |i| body + i + 1);
                start..end
            }
            None => 0..self.text.len(),
        }
    }

    /// An error at a table key: at its `[TABLE.KEY]` header or its `KEY =`
    /// line in the table, else at the table.
    fn key(&self, table: &str, key: &str, message: impl Into<String>) -> InputError {
        let within = self.table(table);
        let field = format!("{table}.{key}");
        let header = format!("[{field}]");
        let found = self.text.find(&header).map(|i| i + 1).or_else(|| {
            let region = &self.text[within.clone()];
            let mut offset = 0;
            for line in region.split_inclusive('\n') {
                let trimmed = line.trim_start();
                let bare = trimmed.trim_start_matches('"');
                if bare.starts_with(key)
                    && bare[key.len()..]
                        .trim_start_matches('"')
                        .trim_start()
                        .starts_with('=')
                {
                    return Some(within.start + offset + (line.len() - trimmed.len()));
                }
                offset += line.len();
            }
            None
        });
        let start = found.unwrap_or(within.start);
        self.error(Some(start..start), Some(field), message)
    }

    /// A `toml` error, with the field guessed from the text at its span
    /// (the crate does not expose the key path).
    fn toml(&self, error: toml::de::Error) -> InputError {
        let span = error.span();
        let message = error.message().trim_end().replace('\n', "; ");
        // A missing field is reported at its table: the header names it, a
        // key on the line would not be the field.
        let field = span.as_ref().and_then(|s| {
            let at_header = self.text[s.start.min(self.text.len())..].starts_with('[');
            if message.starts_with("missing field") && !at_header {
                None
            } else {
                field_at(self.text, s.start)
            }
        });
        self.error(span, field, message)
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// The dotted key at a byte offset of a TOML text: the last table header
/// above it, the key of its line (or of the multi-line array it sits in),
/// and an inline table's inner key. A best effort for error messages.
fn field_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let mut header: Option<String> = None;
    let mut array_key: Option<String> = None;
    for line in text[..line_start].lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            header = Some(
                trimmed
                    .trim_matches(|c| c == '[' || c == ']')
                    .trim()
                    .to_string(),
            );
            array_key = None;
        } else if let Some((key, value)) = trimmed.split_once('=') {
            let open = value.trim_start().starts_with('[') && !value.contains(']');
            array_key = open.then(|| unquote(key));
        } else if trimmed.starts_with(']') {
            array_key = None;
        }
    }
    let line = &text[line_start..line_end];
    let column = offset - line_start;
    // The prefix up to the end of the word at the offset (an unknown key's
    // span starts at the key itself).
    let word_end = line[column..]
        .find(|c: char| c.is_whitespace() || c == '=' || c == ',' || c == '}')
        .map_or(line.len(), |i| column + i);
    let prefix = &line[..word_end];
    let mut keys: Vec<String> = Vec::new();
    if line.trim_start().starts_with('[') {
        return header_of(line);
    }
    let mut rest = prefix;
    while let Some(eq) = rest.find('=') {
        let key_text = &rest[..eq];
        let key = key_text
            .rsplit(['{', ','])
            .next()
            .map(unquote)
            .unwrap_or_default();
        if !key.is_empty() {
            keys.push(key);
        }
        rest = &rest[eq + 1..];
    }
    let tail = unquote(rest.rsplit(['{', ',']).next().unwrap_or(""));
    let tail_is_key =
        !tail.is_empty() && !rest.contains('"') && line[word_end..].trim_start().starts_with('=');
    if tail_is_key {
        keys.push(tail);
    }
    if keys.len() > 2 {
        keys.drain(1..keys.len() - 1);
    }
    if keys.is_empty() {
        if let Some(key) = array_key {
            keys.push(key);
        }
    }
    let mut parts: Vec<String> = header.into_iter().collect();
    parts.extend(keys);
    (!parts.is_empty()).then(|| parts.join("."))
}

fn header_of(line: &str) -> Option<String> {
    let name = line.trim().trim_matches(|c| c == '[' || c == ']').trim();
    (!name.is_empty()).then(|| name.to_string())
}

fn unquote(key: &str) -> String {
    key.trim().trim_matches('"').trim().to_string()
}

/// What a scenario expects of one property on one design.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    pub verdict: Verdict,
    /// The length of the shortest counterexample (or witness path).
    pub steps: Option<usize>,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.verdict.word())?;
        if let Some(n) = self.steps {
            write!(f, " ({n} step{})", if n == 1 { "" } else { "s" })?;
        }
        Ok(())
    }
}

fn verdict_named(word: &str) -> Option<Verdict> {
    match word {
        "holds" => Some(Verdict::Holds),
        "violated" => Some(Verdict::Violated),
        "reached" => Some(Verdict::Reached),
        "not-reached" => Some(Verdict::NotReached),
        _ => None,
    }
}

fn verdict_word<E: de::Error>(word: &str) -> Result<Verdict, E> {
    verdict_named(word).ok_or_else(|| {
        E::custom(format!(
            "unknown verdict `{word}` (expected {VERDICT_WORDS})"
        ))
    })
}

const VERDICT_WORDS: &str = "`holds`, `violated`, `reached`, `not-reached`";

/// `"holds"` or `{ verdict = "violated", steps = 8 }`.
impl<'de> Deserialize<'de> for Expected {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ExpectedVisitor;
        impl<'de> Visitor<'de> for ExpectedVisitor {
            type Value = Expected;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "a verdict ({VERDICT_WORDS}) or a table {{ verdict = \"violated\", steps = N }}"
                )
            }
            fn visit_str<E: de::Error>(self, word: &str) -> Result<Expected, E> {
                let verdict = verdict_word(word)?;
                Ok(Expected {
                    verdict,
                    steps: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Expected, A::Error> {
                let mut verdict = None;
                let mut steps = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "verdict" => {
                            let word: String = map.next_value()?;
                            verdict = Some(verdict_word::<A::Error>(&word)?);
                        }
                        "steps" => {
                            let Whole(n) = map.next_value()?;
                            let n = usize::try_from(n).map_err(|_| {
                                de::Error::custom(format!(
                                    "`steps` is a number of steps, 0 or more, not {n}"
                                ))
                            })?;
                            steps = Some(n);
                        }
                        other => {
                            return Err(de::Error::unknown_field(other, &["verdict", "steps"]))
                        }
                    }
                }
                let verdict = verdict.ok_or_else(|| de::Error::missing_field("verdict"))?;
                Ok(Expected { verdict, steps })
            }
        }
        deserializer.deserialize_any(ExpectedVisitor)
    }
}

/// The `model` key alone: which model's format the rest of the file follows.
#[derive(Deserialize)]
struct Header {
    model: Spanned<String>,
}

// `toml` spans neither map keys nor tables made by `[headers]`, so keys are
// found in the text when an error needs them (`Source::key`).
type Expectations = BTreeMap<String, BTreeMap<String, Spanned<Expected>>>;

/// A scenario file as written, `B` being the model's bounds.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile<B> {
    id: Spanned<String>,
    title: String,
    source: String,
    #[serde(default)]
    notes: Option<String>,
    #[allow(dead_code)] // read by the first pass
    model: String,
    /// Left out of `--skip-slow` runs (the nightly scenario).
    #[serde(default)]
    slow: bool,
    /// The `always` property that shows the finding: a column of the
    /// what-to-merge table (`compare --findings`).
    #[serde(default)]
    finding: Option<Spanned<String>>,
    bounds: Spanned<B>,
    #[serde(default)]
    options: Vec<Spanned<String>>,
    expect: Expectations,
    #[serde(default)]
    story: Vec<StoryFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoryFile {
    design: Spanned<String>,
    /// The property the story's last state must violate.
    violates: Spanned<String>,
    steps: Spanned<Vec<Spanned<String>>>,
}

/// One line of a run: a design's property (or story) against its expectation.
#[derive(Clone, Debug)]
pub struct Finding {
    pub design: String,
    /// The property, or `story (PROPERTY)`.
    pub subject: String,
    pub expected: Expected,
    pub verdict: Verdict,
    pub steps: Option<usize>,
    pub status: Status,
    /// A witness (`sometimes`) rather than an `always` property.
    pub witness: bool,
    /// The counterexample (or a reached witness's path) told as a story.
    pub story: Option<String>,
    /// Why the property fails (the witness holds) in the path's last state.
    pub explanation: Option<String>,
    /// The same path as a sequence diagram, an SVG document.
    pub svg: Option<String>,
    /// The same path as an ITF trace.
    pub trace: Option<Json>,
    pub seconds: f64,
    /// What cut the run short, for inconclusive lines.
    pub cut: Option<&'static str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    Regression,
    Inconclusive,
}

impl Finding {
    /// `ok (violated, 8 steps)`, `REGRESSION: expected holds, got violated (7 steps)`.
    pub fn describe(&self) -> String {
        let got = Expected {
            verdict: self.verdict,
            steps: self.steps.filter(|_| self.verdict != Verdict::Holds),
        };
        match self.status {
            Status::Ok => match got.steps {
                Some(n) => format!("ok ({}, {n} step{})", got.verdict.word(), plural(n)),
                None => format!("ok ({})", got.verdict.word()),
            },
            Status::Regression => format!("REGRESSION: expected {}, got {got}", self.expected),
            Status::Inconclusive => format!(
                "inconclusive: {}",
                self.cut.unwrap_or("the run was cut short")
            ),
        }
    }
}

fn judge(expected: Expected, verdict: Verdict, steps: Option<usize>) -> Status {
    if verdict == Verdict::Inconclusive {
        Status::Inconclusive
    } else if verdict == expected.verdict && expected.steps.is_none_or(|n| Some(n) == steps) {
        Status::Ok
    } else {
        Status::Regression
    }
}

/// What narrows a run: designs, properties, scenario IDs, slow scenarios.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub designs: Vec<String>,
    pub properties: Vec<String>,
    pub only: Vec<String>,
    pub skip_slow: bool,
}

impl Selection {
    fn design(&self, name: &str) -> bool {
        self.designs.is_empty() || self.designs.iter().any(|d| d == name)
    }
    fn property(&self, name: &str) -> bool {
        self.properties.is_empty() || self.properties.iter().any(|p| p == name)
    }
}

/// What names a scenario and its bounds, in a file and in every report.
#[derive(Clone)]
pub struct Heading {
    pub file: PathBuf,
    pub id: String,
    /// Where the ID is written in the file (1-based line and column).
    pub id_at: (usize, usize),
    pub title: String,
    pub source: String,
    pub notes: Option<String>,
    pub model: &'static str,
    /// The bounds and options, as reports show them.
    pub bounds: Json,
    /// The same for people: `asks 2, builders 2, skew 0 s, ...`.
    pub bounds_line: String,
    /// The same as the flags that give them: `--requests 2 ...`.
    pub bounds_flags: String,
    /// The property that shows the scenario's finding, if it names one.
    pub finding: Option<&'static str>,
}

/// A loaded, validated scenario.
pub struct Scenario {
    pub heading: Heading,
    pub slow: bool,
    plan: Box<dyn Plan>,
}

impl Scenario {
    /// Runs every selected check of the scenario; also each design's run
    /// figures.
    pub fn run(&self, selection: &Selection, limits: &Limits) -> (Vec<Finding>, Vec<RunStats>) {
        self.plan.run(self, selection, limits)
    }

    /// The model's `#meta` on the scenario's bounds and options (design: the
    /// first of the model), for `ToolModel::from_meta`.
    pub fn meta(&self) -> Json {
        self.plan.meta()
    }

    /// Checks the scenario's finding in every design of its model, on its
    /// bounds: one column of the what-to-merge table, a cell per design (its
    /// verdict, steps and story), with each run's figures.
    pub fn check_finding(&self, limits: &Limits) -> Vec<(html::ResultRow, StatsRow)> {
        match self.heading.finding {
            Some(property) => self.plan.check_finding(self, property, limits),
            None => Vec::new(),
        }
    }
}

/// A scenario's checks for one model, behind a trait so that the runner
/// needs no generics.
trait Plan {
    /// Whether some design of the scenario has an expectation for `property`.
    fn expects(&self, property: &str) -> bool;
    /// Whether the scenario expects anything of `design` (or tells its story).
    fn has_design(&self, design: &str) -> bool;
    /// How many checks (design × property, and stories) `selection` leaves.
    fn selected(&self, selection: &Selection) -> usize;
    fn run(
        &self,
        scenario: &Scenario,
        selection: &Selection,
        limits: &Limits,
    ) -> (Vec<Finding>, Vec<RunStats>);
    /// The `#meta` of the scenario's first design's model: what
    /// `ToolModel::from_meta` rebuilds any design from on these bounds.
    fn meta(&self) -> Json;
    /// See [`Scenario::check_finding`].
    fn check_finding(
        &self,
        scenario: &Scenario,
        property: &'static str,
        limits: &Limits,
    ) -> Vec<(html::ResultRow, StatsRow)>;
}

/// One design's check run in a scenario: its figures, for the reports.
#[derive(Clone, Debug)]
pub struct RunStats {
    pub design: String,
    pub stats: Stats,
}

/// One design's model and what is expected of its properties.
struct DesignPlan<M> {
    design: String,
    model: M,
    expectations: Vec<(&'static str, Expected)>,
}

/// A scripted story, already replayed once at load time.
struct StoryPlan<M: Model> {
    design: String,
    model: M,
    violates: &'static str,
    actions: Vec<M::Action>,
}

struct ModelPlan<M: Model> {
    designs: Vec<DesignPlan<M>>,
    stories: Vec<StoryPlan<M>>,
    /// Every design of the model on the scenario's bounds, in the model's
    /// order, for its finding's row of the what-to-merge table.
    every_design: Vec<(String, M)>,
}

/// The ITF `#meta` of a scenario's trace: the model, design and bounds as
/// every trace writer records them (`simulate::model_meta`, which
/// `slotcheck replay` reads back), plus the scenario and the property.
fn trace_meta<M: ToolModel>(scenario: &Scenario, model: &M, property: &str) -> Json {
    let mut meta = model_meta(model);
    meta["scenario"] = json!(scenario.heading.id);
    meta["property"] = json!(property);
    meta["command"] = json!("check");
    meta
}

impl<M: ToolModel> Plan for ModelPlan<M> {
    fn expects(&self, property: &str) -> bool {
        self.designs
            .iter()
            .any(|d| d.expectations.iter().any(|(name, _)| *name == property))
            || self.stories.iter().any(|s| s.violates == property)
    }

    fn has_design(&self, design: &str) -> bool {
        self.designs.iter().any(|d| d.design == design)
            || self.stories.iter().any(|s| s.design == design)
    }

    fn selected(&self, selection: &Selection) -> usize {
        let checks: usize = self
            .designs
            .iter()
            .filter(|d| selection.design(&d.design))
            .map(|d| {
                d.expectations
                    .iter()
                    .filter(|(name, _)| selection.property(name))
                    .count()
            })
            .sum();
        let stories = self
            .stories
            .iter()
            .filter(|s| selection.design(&s.design) && selection.property(s.violates))
            .count();
        checks + stories
    }

    fn meta(&self) -> Json {
        model_meta(&self.every_design[0].1)
    }

    fn check_finding(
        &self,
        scenario: &Scenario,
        property: &'static str,
        limits: &Limits,
    ) -> Vec<(html::ResultRow, StatsRow)> {
        self.every_design
            .iter()
            .map(|(design, model)| {
                let outcome = check(model.clone(), &[property], limits);
                let (mut rows, mut stats) = html::outcome_rows(model, design, &outcome);
                let mut row = rows.remove(0);
                row.scenario = Some(scenario.heading.id.clone());
                stats.label = format!("{} · {design}", scenario.heading.id);
                (row, stats)
            })
            .collect()
    }

    fn run(
        &self,
        scenario: &Scenario,
        selection: &Selection,
        limits: &Limits,
    ) -> (Vec<Finding>, Vec<RunStats>) {
        let mut findings = Vec::new();
        let mut runs = Vec::new();
        for plan in self.designs.iter().filter(|d| selection.design(&d.design)) {
            let names: Vec<&'static str> = plan
                .expectations
                .iter()
                .map(|(name, _)| *name)
                .filter(|name| selection.property(name))
                .collect();
            if names.is_empty() {
                continue;
            }
            let outcome = check(plan.model.clone(), &names, limits);
            runs.push(RunStats {
                design: plan.design.clone(),
                stats: outcome.stats,
            });
            let cut = outcome.stats.cut.map(|c| c.describe());
            for (name, expected) in plan.expectations.iter().filter(|(n, _)| names.contains(n)) {
                let result = outcome
                    .result(name)
                    .expect("every checked property has a result");
                let steps = report::steps(result);
                // A violation's or a reached witness's path, told; the
                // diagram is cheap next to the check that found the path.
                let told = result.trace.as_ref().map(|t| {
                    let told = plan.model.tell(&t.init, &t.actions);
                    let ending = plan.model.explain(name, &t.last);
                    let title = format!(
                        "{name}: {}, {}",
                        plan.design,
                        report::count(t.steps() as u64, "step")
                    );
                    (
                        report::story_text(&told, &ending),
                        Diagram::of(&plan.model, &title, &told, Some(&ending)).svg(),
                        ending,
                    )
                });
                // Only counterexamples are saved as traces (`--out`).
                let trace = match (&result.trace, result.verdict) {
                    (Some(t), Verdict::Violated) => Some(itf::trace(
                        &plan.model,
                        trace_meta(scenario, &plan.model, name),
                        &t.init,
                        &t.actions,
                    )),
                    _ => None,
                };
                let (story, svg, explanation) = match told {
                    Some((story, svg, ending)) => (Some(story), Some(svg), Some(ending)),
                    None => (None, None, None),
                };
                findings.push(Finding {
                    design: plan.design.clone(),
                    subject: name.to_string(),
                    expected: *expected,
                    verdict: result.verdict,
                    steps,
                    status: judge(*expected, result.verdict, steps),
                    witness: result.kind == PropertyKind::Sometimes,
                    story,
                    explanation,
                    svg,
                    trace,
                    // One run decides all of a design's properties; share its time.
                    seconds: outcome.stats.seconds / names.len() as f64,
                    cut,
                });
            }
        }
        for story in self
            .stories
            .iter()
            .filter(|s| selection.design(&s.design) && selection.property(s.violates))
        {
            findings.push(replay(scenario, story));
        }
        (findings, runs)
    }
}

/// Replays a story and judges its last state: it must violate its property.
fn replay<M: ToolModel>(scenario: &Scenario, story: &StoryPlan<M>) -> Finding {
    let started = Instant::now();
    let init = story.model.init_states().remove(0);
    let mut last = init.clone();
    for action in &story.actions {
        last = story
            .model
            .next_state(&last, action.clone())
            .expect("a replayed story's steps were enabled at load time");
    }
    let violated = property_violated(&story.model, story.violates, &last);
    let expected = Expected {
        verdict: Verdict::Violated,
        steps: None,
    };
    let verdict = if violated {
        Verdict::Violated
    } else {
        Verdict::Holds
    };
    let ending = if violated {
        story.model.explain(story.violates, &last)
    } else {
        format!("{} holds in the story's last state", story.violates)
    };
    let told = story.model.tell(&init, &story.actions);
    let title = format!(
        "story ({}): {}, {}",
        story.violates,
        story.design,
        report::count(story.actions.len() as u64, "step")
    );
    Finding {
        design: story.design.clone(),
        subject: format!("story ({})", story.violates),
        expected,
        verdict,
        steps: Some(story.actions.len()),
        status: judge(expected, verdict, None),
        witness: false,
        story: Some(report::story_text(&told, &ending)),
        svg: Some(Diagram::of(&story.model, &title, &told, Some(&ending)).svg()),
        explanation: Some(ending),
        trace: Some(itf::trace(
            &story.model,
            trace_meta(scenario, &story.model, story.violates),
            &init,
            &story.actions,
        )),
        seconds: started.elapsed().as_secs_f64(),
        cut: None,
    }
}

/// Whether an `always` property fails in `state`.
fn property_violated<M: Model>(model: &M, name: &str, state: &M::State) -> bool {
    model
        .properties()
        .into_iter()
        .find(|p| p.name == name)
        .is_some_and(|p| p.expectation == Expectation::Always && !(p.condition)(model, state))
}

/// Reads and validates one scenario file.
pub fn load(file: &Path) -> Result<Scenario, InputError> {
    let text = std::fs::read_to_string(file).map_err(|e| InputError {
        file: file.to_path_buf(),
        at: None,
        field: None,
        message: format!("cannot read: {e}"),
    })?;
    parse(file, &text)
}

/// Parses and validates a scenario's text; `file` names it in errors.
pub fn parse(file: &Path, text: &str) -> Result<Scenario, InputError> {
    let source = Source { file, text };
    let header: Header = toml::from_str(text).map_err(|e| source.toml(e))?;
    // Each model's scenarios are read with its own bounds (the registry
    // finds the model by name).
    let name = header.model.get_ref().as_str();
    models::for_model(name, ModelScenario(&source)).unwrap_or_else(|| {
        Err(source.at(
            &header.model,
            "model",
            format!("unknown model `{name}` (known: {})", MODELS.join(", ")),
        ))
    })
}

/// Reads a scenario of the model `run` is called with.
struct ModelScenario<'a, 'b>(&'a Source<'b>);

impl ForModel for ModelScenario<'_, '_> {
    type Out = Result<Scenario, InputError>;

    fn run<M: ToolModel>(self) -> Self::Out {
        let source = self.0;
        let raw: ScenarioFile<M::ScenarioBounds> =
            toml::from_str(source.text).map_err(|e| source.toml(e))?;
        let mut base = M::from_scenario(&raw.bounds)
            .map_err(|e| source.error(Some(e.span), Some(e.field), e.message))?;
        for option in &raw.options {
            base.set_option(option.get_ref())
                .map_err(|message| source.at(option, "options", message))?;
        }
        let known_designs = M::design_names();
        finish(
            source,
            raw,
            M::NAME,
            (base.bounds_json(), base.bounds_line()),
            &known_designs,
            |design| base.with_design(design),
        )
    }
}

/// The model-independent rest of loading: the ID, the expectations and the
/// stories, each checked against the model's designs and properties.
fn finish<B, M>(
    source: &Source,
    raw: ScenarioFile<B>,
    model_name: &'static str,
    (bounds, bounds_line): (Json, String),
    known_designs: &[&str],
    model_for: impl Fn(&str) -> Option<M>,
) -> Result<Scenario, InputError>
where
    M: ToolModel,
{
    let id = raw.id.get_ref();
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(source.at(
            &raw.id,
            "id",
            format!("`{id}` is not an ID: use letters, digits, `-`, `_` and `.` (it names report files)"),
        ));
    }
    let unknown_design = |name: &str| {
        format!(
            "unknown design `{name}` (known: {})",
            known_designs.join(", ")
        )
    };
    if raw.expect.is_empty() {
        let at = source.text.find("[expect").unwrap_or(0);
        return Err(source.error(
            Some(at..at),
            Some("expect".into()),
            "no expectations: add a table [expect.DESIGN] with `PROPERTY = \"VERDICT\"` lines",
        ));
    }
    let mut designs = Vec::new();
    for (design, properties) in &raw.expect {
        let field = format!("expect.{design}");
        let model = model_for(design)
            .ok_or_else(|| source.key("expect", design, unknown_design(design)))?;
        if properties.is_empty() {
            return Err(source.key(
                "expect",
                design,
                "no expectations for this design: add `PROPERTY = \"VERDICT\"` lines",
            ));
        }
        let mut expectations = Vec::new();
        for (property, expected) in properties {
            let (name, kind) = property_named(&model, property).ok_or_else(|| {
                source.key(
                    &field,
                    property,
                    format!(
                        "unknown property `{property}` (known: {})",
                        property_names(&model).join(", ")
                    ),
                )
            })?;
            let field = format!("{field}.{property}");
            let e = *expected.get_ref();
            let fits = match kind {
                PropertyKind::Always => matches!(e.verdict, Verdict::Holds | Verdict::Violated),
                PropertyKind::Sometimes => {
                    matches!(e.verdict, Verdict::Reached | Verdict::NotReached)
                }
            };
            if !fits {
                let words = match kind {
                    PropertyKind::Always => "an `always` property: expect `holds` or `violated`",
                    PropertyKind::Sometimes => {
                        "a witness (`sometimes`): expect `reached` or `not-reached`"
                    }
                };
                return Err(source.at(expected, field, format!("`{name}` is {words}")));
            }
            if e.steps.is_some() && !matches!(e.verdict, Verdict::Violated | Verdict::Reached) {
                return Err(source.at(
                    expected,
                    field,
                    format!(
                        "`steps` needs a path: only `violated` and `reached` have one, not `{}`",
                        e.verdict.word()
                    ),
                ));
            }
            expectations.push((name, e));
        }
        // In the model's order (always properties first), not the map's.
        let order = property_names(&model);
        expectations.sort_by_key(|(name, _)| order.iter().position(|n| n == name));
        designs.push(DesignPlan {
            design: design.clone(),
            model,
            expectations,
        });
    }
    // In the model's order (the reports' columns), not the file's map order.
    designs.sort_by_key(|d| known_designs.iter().position(|k| *k == d.design));
    let every_design: Vec<(String, M)> = known_designs
        .iter()
        .filter_map(|d| model_for(d).map(|m| (d.to_string(), m)))
        .collect();
    let finding = match &raw.finding {
        None => None,
        Some(name) => {
            let model = &every_design[0].1;
            match property_named(model, name.get_ref()) {
                Some((property, PropertyKind::Always)) => Some(property),
                Some((property, PropertyKind::Sometimes)) => {
                    return Err(source.at(
                        name,
                        "finding",
                        format!("`{property}` is a witness (`sometimes`): a finding is an `always` property a design breaks"),
                    ))
                }
                None => {
                    return Err(source.at(
                        name,
                        "finding",
                        format!(
                            "unknown property `{}` (known: {})",
                            name.get_ref(),
                            property_names(model).join(", ")
                        ),
                    ))
                }
            }
        }
    };
    let mut stories = Vec::new();
    for (i, story) in raw.story.iter().enumerate() {
        let field = format!("story[{i}]");
        let model = model_for(story.design.get_ref()).ok_or_else(|| {
            source.at(
                &story.design,
                format!("{field}.design"),
                unknown_design(story.design.get_ref()),
            )
        })?;
        let violates = match property_named(&model, story.violates.get_ref()) {
            Some((name, PropertyKind::Always)) => name,
            Some((name, PropertyKind::Sometimes)) => {
                return Err(source.at(
                    &story.violates,
                    format!("{field}.violates"),
                    format!("`{name}` is a witness (`sometimes`): a story must end violating an `always` property"),
                ))
            }
            None => {
                return Err(source.at(
                    &story.violates,
                    format!("{field}.violates"),
                    format!(
                        "unknown property `{}` (known: {})",
                        story.violates.get_ref(),
                        property_names(&model).join(", ")
                    ),
                ))
            }
        };
        let steps: Vec<String> = story
            .steps
            .get_ref()
            .iter()
            .map(|s| s.get_ref().clone())
            .collect();
        if steps.is_empty() {
            return Err(source.at(
                &story.steps,
                format!("{field}.steps"),
                "a story needs at least one step",
            ));
        }
        let init = model.init_states().remove(0);
        let actions = model.parse(&init, &steps).map_err(|e| {
            source.at(
                &story.steps.get_ref()[e.index],
                format!("{field}.steps[{}]", e.index),
                format!(
                    "story step {} `{}`: {}",
                    e.index + 1,
                    steps[e.index],
                    e.message
                ),
            )
        })?;
        stories.push(StoryPlan {
            design: story.design.get_ref().clone(),
            model,
            violates,
            actions,
        });
    }
    Ok(Scenario {
        heading: Heading {
            file: source.file.to_path_buf(),
            id: id.clone(),
            id_at: line_column(source.text, raw.id.span().start),
            title: raw.title,
            source: raw.source,
            notes: raw.notes,
            model: model_name,
            bounds,
            bounds_line,
            bounds_flags: every_design[0].1.bounds_flags(),
            finding,
        },
        slow: raw.slow,
        plan: Box::new(ModelPlan {
            designs,
            stories,
            every_design,
        }),
    })
}

fn property_named<M: Narrated>(model: &M, name: &str) -> Option<(&'static str, PropertyKind)> {
    let p = model.properties().into_iter().find(|p| p.name == name)?;
    Some((p.name, model.kind_of(p.name)?))
}

fn property_names<M: Model>(model: &M) -> Vec<&'static str> {
    model.properties().iter().map(|p| p.name).collect()
}

const NO_SUCH_FILE: &str = "no such file or directory";

/// The scenario files named by `paths` (directories: their `*.toml` files,
/// sorted), or every file under `scenarios/` when none is named.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let default = [PathBuf::from(SCENARIO_DIR)];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| InputError {
                file: path.clone(),
                at: None,
                field: None,
                message: format!("cannot read the directory: {e}"),
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            found.sort();
            files.extend(found);
        } else if path.exists() {
            files.push(path.clone());
        } else {
            return Err(InputError {
                file: path.clone(),
                at: None,
                field: None,
                message: NO_SUCH_FILE.into(),
            });
        }
    }
    Ok(files)
}

/// Loads every file, checking that IDs are unique and `--only` names one;
/// stops at the first invalid file.
pub fn load_all(files: &[PathBuf], selection: &Selection) -> Result<Vec<Scenario>, InputError> {
    let mut scenarios: Vec<Scenario> = Vec::new();
    for file in files {
        let scenario = load(file)?;
        if let Some(other) = scenarios
            .iter()
            .find(|s| s.heading.id == scenario.heading.id)
        {
            let (line, column) = other.heading.id_at;
            return Err(InputError {
                file: file.clone(),
                at: Some(scenario.heading.id_at),
                field: Some("id".into()),
                message: format!(
                    "`{}` is also the ID of {}:{line}:{column}; each scenario needs its own",
                    scenario.heading.id,
                    other.heading.file.display()
                ),
            });
        }
        scenarios.push(scenario);
    }
    for id in &selection.only {
        if !scenarios.iter().any(|s| &s.heading.id == id) {
            return Err(InputError {
                file: PathBuf::from("--only"),
                at: None,
                field: None,
                message: format!(
                    "no scenario has the ID `{id}` (known: {})",
                    scenarios
                        .iter()
                        .map(|s| s.heading.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
    }
    Ok(scenarios)
}

/// A whole run: each scenario with its findings, or why it was skipped.
pub struct RunReport {
    pub scenarios: Vec<(ScenarioSummary, Vec<Finding>)>,
    pub seconds: f64,
}

pub struct ScenarioSummary {
    pub heading: Heading,
    pub skipped: Option<&'static str>,
    pub seconds: f64,
    /// Each design's check run (stories are replays, not runs).
    pub runs: Vec<RunStats>,
}

impl RunReport {
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.scenarios.iter().flat_map(|(_, f)| f)
    }

    fn count(&self, status: Status) -> usize {
        self.findings().filter(|f| f.status == status).count()
    }

    /// 1 a verdict differs from its expectation; 3 something was
    /// inconclusive; 0 all as expected.
    pub fn exit_code(&self) -> u8 {
        if self.count(Status::Regression) > 0 {
            EXIT_REGRESSION
        } else if self.count(Status::Inconclusive) > 0 {
            EXIT_INCONCLUSIVE
        } else {
            EXIT_OK
        }
    }

    pub fn summary(&self) -> String {
        let skipped = self
            .scenarios
            .iter()
            .filter(|(s, _)| s.skipped.is_some())
            .count();
        let mut line = format!(
            "{} scenario{}, {} check{}: {} ok, {} regression{}, {} inconclusive",
            self.scenarios.len(),
            plural(self.scenarios.len()),
            self.findings().count(),
            plural(self.findings().count()),
            self.count(Status::Ok),
            self.count(Status::Regression),
            plural(self.count(Status::Regression)),
            self.count(Status::Inconclusive),
        );
        if skipped > 0 {
            line.push_str(&format!(", {skipped} skipped"));
        }
        line.push_str(&format!(" ({:.1} s)", self.seconds));
        line
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Runs the selected scenarios, printing one line per check as it is
/// decided (and the story under each regression).
pub fn run_all(
    scenarios: &[Scenario],
    selection: &Selection,
    limits: &Limits,
    mut print: impl FnMut(&str),
) -> RunReport {
    let started = Instant::now();
    let mut out = Vec::new();
    let id_width = scenarios
        .iter()
        .map(|s| s.heading.id.len())
        .max()
        .unwrap_or(0);
    for scenario in scenarios {
        if !selection.only.is_empty() && !selection.only.contains(&scenario.heading.id) {
            continue;
        }
        let skipped = (selection.skip_slow && scenario.slow).then_some("slow (--skip-slow)");
        let scenario_started = Instant::now();
        let (findings, runs) = if skipped.is_some() {
            print(&format!(
                "{:<id_width$}  skipped: slow (--skip-slow)",
                scenario.heading.id
            ));
            (Vec::new(), Vec::new())
        } else {
            let (findings, runs) = scenario.run(selection, limits);
            for f in &findings {
                print(&format!(
                    "{:<id_width$}  {:<12} {:<28} {}",
                    scenario.heading.id,
                    f.design,
                    f.subject,
                    f.describe()
                ));
                if f.status == Status::Regression {
                    if let Some(story) = &f.story {
                        print(&indent(story, "      "));
                    }
                }
            }
            (findings, runs)
        };
        out.push((
            ScenarioSummary {
                heading: scenario.heading.clone(),
                skipped,
                seconds: scenario_started.elapsed().as_secs_f64(),
                runs,
            },
            findings,
        ));
    }
    RunReport {
        scenarios: out,
        seconds: started.elapsed().as_secs_f64(),
    }
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The run as JUnit XML: a testsuite per scenario, a testcase per design ×
/// property; a regression is a failure with the story as its text, an
/// inconclusive check an error, a skipped scenario one skipped testcase.
pub fn junit(report: &RunReport) -> String {
    let total = report.findings().count();
    let failures = report.count(Status::Regression);
    let errors = report.count(Status::Inconclusive);
    let skipped = report
        .scenarios
        .iter()
        .filter(|(s, _)| s.skipped.is_some())
        .count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"slotcheck\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{:.3}\">\n",
        total + skipped,
        report.seconds
    ));
    for (s, findings) in &report.scenarios {
        let count = |status| findings.iter().filter(|f| f.status == status).count();
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\" file=\"{}\">\n",
            xml_escape(&s.heading.id),
            findings.len().max(usize::from(s.skipped.is_some())),
            count(Status::Regression),
            count(Status::Inconclusive),
            usize::from(s.skipped.is_some()),
            s.seconds,
            xml_escape(&s.heading.file.display().to_string()),
        ));
        xml.push_str("    <properties>\n");
        for (name, value) in [
            ("title", s.heading.title.clone()),
            ("source", s.heading.source.clone()),
            ("model", s.heading.model.to_string()),
            ("bounds", s.heading.bounds.to_string()),
        ] {
            xml.push_str(&format!(
                "      <property name=\"{name}\" value=\"{}\"/>\n",
                xml_escape(&value)
            ));
        }
        xml.push_str("    </properties>\n");
        if let Some(why) = s.skipped {
            xml.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"(scenario)\"><skipped message=\"{}\"/></testcase>\n",
                xml_escape(&s.heading.id),
                xml_escape(why)
            ));
        }
        for f in findings {
            let open = format!(
                "    <testcase classname=\"{}.{}\" name=\"{}\" time=\"{:.3}\"",
                xml_escape(&s.heading.id),
                xml_escape(&f.design),
                xml_escape(&f.subject),
                f.seconds
            );
            match f.status {
                Status::Ok => xml.push_str(&format!("{open}/>\n")),
                Status::Regression => xml.push_str(&format!(
                    "{open}>\n      <failure type=\"regression\" message=\"{}\">{}</failure>\n    </testcase>\n",
                    xml_escape(&f.describe()),
                    xml_escape(f.story.as_deref().unwrap_or("(no counterexample: the property holds)"))
                )),
                Status::Inconclusive => xml.push_str(&format!(
                    "{open}>\n      <error type=\"inconclusive\" message=\"{}\"/>\n    </testcase>\n",
                    xml_escape(&f.describe())
                )),
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// The run as one JSON object.
pub fn json_report(report: &RunReport) -> Json {
    let scenarios: Vec<Json> = report
        .scenarios
        .iter()
        .map(|(s, findings)| {
            json!({
                "id": s.heading.id,
                "file": s.heading.file.display().to_string(),
                "title": s.heading.title,
                "source": s.heading.source,
                "notes": s.heading.notes,
                "model": s.heading.model,
                "bounds": s.heading.bounds,
                "skipped": s.skipped,
                "seconds": (s.seconds * 1000.0).round() / 1000.0,
                "results": findings.iter().map(|f| json!({
                    "design": f.design,
                    "property": f.subject,
                    "expected": f.expected.verdict.word(),
                    "expected_steps": f.expected.steps,
                    "verdict": f.verdict.word(),
                    "steps": f.steps,
                    "status": match f.status {
                        Status::Ok => "ok",
                        Status::Regression => "regression",
                        Status::Inconclusive => "inconclusive",
                    },
                    "line": f.describe(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "scenarios": scenarios,
        "summary": {
            "ok": report.count(Status::Ok),
            "regressions": report.count(Status::Regression),
            "inconclusive": report.count(Status::Inconclusive),
            "skipped": report.scenarios.iter().filter(|(s, _)| s.skipped.is_some()).count(),
            "seconds": (report.seconds * 1000.0).round() / 1000.0,
            "exit": report.exit_code(),
        },
    })
}

/// Every counterexample (and every story) as files under `dir`:
/// `ID/DESIGN.PROPERTY.txt` (the story) and `ID/DESIGN.PROPERTY.itf.json`.
pub fn counterexample_files(report: &RunReport, dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for (s, findings) in &report.scenarios {
        for f in findings {
            let (Some(story), Some(trace)) = (&f.story, &f.trace) else {
                continue;
            };
            let stem = format!(
                "{}.{}",
                f.design,
                f.subject.replace("story (", "story.").replace(')', "")
            );
            let base = dir.join(&s.heading.id);
            let heading = format!(
                "{} ({}): {} on {}, {}\n{}\n\n",
                s.heading.id,
                s.heading.title,
                f.subject,
                f.design,
                f.describe(),
                s.heading.bounds
            );
            files.push((
                base.join(format!("{stem}.txt")),
                format!("{heading}{story}").into_bytes(),
            ));
            files.push((
                base.join(format!("{stem}.itf.json")),
                serde_json::to_vec_pretty(trace).expect("JSON"),
            ));
        }
    }
    files
}

/// The run as one HTML page: a verdict table per scenario (expected against
/// got, regressions outlined), the statistics of each design's run, and each
/// violation's and story's explanation, diagram and story.
pub fn html_page(report: &RunReport, paths: &[PathBuf]) -> html::Page {
    let from = if paths.is_empty() {
        format!("{SCENARIO_DIR}/")
    } else {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut page = html::Page {
        title: "slotcheck check: scenarios".into(),
        subtitle: format!("{from}: {}", report.summary()),
        ..html::Page::default()
    };
    for (s, findings) in &report.scenarios {
        page.sections.push(html::Section {
            id: s.heading.id.clone(),
            title: s.heading.title.clone(),
            bounds: format!(
                "{}: {}; source: {}",
                s.heading.model, s.heading.bounds_line, s.heading.source
            ),
            notes: s.heading.notes.clone(),
            skipped: s.skipped.map(String::from),
        });
        for f in findings {
            page.rows.push(html::ResultRow {
                scenario: Some(s.heading.id.clone()),
                design: f.design.clone(),
                property: f.subject.clone(),
                witness: f.witness,
                expected: Some(f.expected.to_string()),
                regression: Some(f.status == Status::Regression),
                got: f.verdict.word().to_string(),
                good: f.verdict.is_good(),
                steps: f.steps.filter(|_| f.verdict != Verdict::Holds),
                explanation: f.explanation.clone(),
                story: f.story.clone(),
                svg: f.svg.clone(),
            });
        }
        for run in &s.runs {
            page.stats.push(html::StatsRow {
                label: format!("{} · {}", s.heading.id, run.design),
                states: run.stats.states,
                unique: run.stats.unique,
                depth: run.stats.depth,
                seconds: run.stats.seconds,
                cut: run.stats.cut.map(|c| c.describe().to_string()),
            });
        }
    }
    page
}

/// Everything `slotcheck check` was asked for, in scenario mode.
pub struct CheckRun {
    pub paths: Vec<PathBuf>,
    pub selection: Selection,
    pub limits: Limits,
    pub junit: Option<PathBuf>,
    /// `--json`: the report on standard output instead of the lines.
    pub json: bool,
    /// `--json-out FILE`: the report written there too.
    pub json_out: Option<PathBuf>,
    pub out: Option<PathBuf>,
    /// The HTML report's file.
    pub html: Option<PathBuf>,
}

impl CheckRun {
    /// Every file or directory the run will write, with its flag.
    fn outputs(&self) -> Vec<itf::Output> {
        let mut outputs = Vec::new();
        if let Some(file) = &self.junit {
            outputs.push(itf::Output::file("--junit", file));
        }
        if let Some(file) = &self.json_out {
            outputs.push(itf::Output::file("--json-out", file));
        }
        if let Some(file) = &self.html {
            outputs.push(itf::Output::file("--html", file));
        }
        if let Some(dir) = &self.out {
            outputs.push(itf::Output::dir("--out", dir));
        }
        outputs
    }
}

/// Exit statuses of a scenario run.
pub const EXIT_OK: u8 = 0;
pub const EXIT_REGRESSION: u8 = 1;
pub const EXIT_INVALID: u8 = 2;
pub const EXIT_INCONCLUSIVE: u8 = 3;

/// Refuses a selection that leaves nothing to check: each filter must
/// select something among the scenarios the others leave, and together
/// they must leave at least one check. A run of "0 checks" that passes
/// would tell CI that a typo is a success.
pub fn check_selection(scenarios: &[Scenario], selection: &Selection) -> Result<(), String> {
    let chosen: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| selection.only.is_empty() || selection.only.contains(&s.heading.id))
        .collect();
    let running: Vec<&Scenario> = chosen
        .iter()
        .copied()
        .filter(|s| !(selection.skip_slow && s.slow))
        .collect();
    if running.is_empty() && !chosen.is_empty() {
        let ids: Vec<&str> = chosen.iter().map(|s| s.heading.id.as_str()).collect();
        return Err(format!(
            "--skip-slow leaves out every selected scenario ({}: `slow = true`)",
            ids.join(", ")
        ));
    }
    let flags = |flag: &str, names: &[String]| -> String {
        names
            .iter()
            .map(|n| format!("{flag} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for design in &selection.designs {
        if !running.iter().any(|s| s.plan.has_design(design)) {
            return Err(format!(
                "--design {design}: no selected scenario expects anything of it"
            ));
        }
    }
    for property in &selection.properties {
        if !running.iter().any(|s| s.plan.expects(property)) {
            return Err(format!(
                "--property {property}: no selected scenario expects anything of it"
            ));
        }
    }
    if running
        .iter()
        .map(|s| s.plan.selected(selection))
        .sum::<usize>()
        == 0
    {
        return Err(format!(
            "{} with {} select no check: no selected scenario expects these properties of these designs",
            flags("--design", &selection.designs),
            flags("--property", &selection.properties)
        ));
    }
    Ok(())
}

/// `slotcheck check [PATH...]`: loads every file (any invalid one stops the
/// run with exit 2 before anything runs or is written), checks the filters
/// and that every report can be written, runs, prints a line per check and
/// a summary, then writes the reports, each whole or not at all. A report
/// that cannot be written after all is an error (exit 2) once the results
/// are printed.
pub fn check_command(run: CheckRun) -> u8 {
    let fail = |message: String| {
        eprintln!("error: {message}");
        EXIT_INVALID
    };
    let files = match files(&run.paths) {
        Ok(f) => f,
        Err(e) if run.json && e.message == NO_SUCH_FILE => {
            // `--json FILE` wrote a file before `--json-out` existed.
            return fail(format!(
                "{e} (--json prints the report on standard output; --json-out FILE writes it to a file)"
            ));
        }
        Err(e) => return fail(e.to_string()),
    };
    let scenarios = match load_all(&files, &run.selection) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    if scenarios.is_empty() {
        return fail(format!(
            "no scenario files in {}",
            if run.paths.is_empty() {
                SCENARIO_DIR.to_string()
            } else {
                run.paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    if let Err(e) = check_selection(&scenarios, &run.selection) {
        return fail(e);
    }
    if let Err(e) = itf::check_outputs(&run.outputs(), &files) {
        return fail(e);
    }
    let report = run_all(&scenarios, &run.selection, &run.limits, |line| {
        if !run.json {
            println!("{line}");
        }
    });
    let json_text = serde_json::to_string_pretty(&json_report(&report)).expect("JSON") + "\n";
    if run.json {
        print!("{json_text}");
    } else {
        println!("\n{}", report.summary());
    }
    let mut writes: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    if let Some(file) = &run.junit {
        writes.push((file.clone(), junit(&report).into_bytes()));
    }
    if let Some(file) = &run.json_out {
        writes.push((file.clone(), json_text.into_bytes()));
    }
    if let Some(dir) = &run.out {
        writes.extend(counterexample_files(&report, dir));
    }
    if let Some(file) = &run.html {
        writes.push((
            file.clone(),
            html::render(&html_page(&report, &run.paths)).into_bytes(),
        ));
    }
    if let Err(e) = itf::write_reports(&writes, |_| {}) {
        return fail(e);
    }
    report.exit_code()
}

/// Writes the template for `id` to `dir/ID.toml`, never over an existing file.
pub fn write_template(id: &str, dir: &Path) -> Result<PathBuf, String> {
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "`{id}` is not an ID: use letters, digits, `-`, `_` and `.`"
        ));
    }
    let path = dir.join(format!("{id}.toml"));
    if path.exists() {
        return Err(format!(
            "{}: already exists; not overwritten",
            path.display()
        ));
    }
    itf::write_atomically(&path, template(id).as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    Ok(path)
}

/// A commented template for `slotcheck scenario new ID`.
pub fn template(id: &str) -> String {
    format!(
        r#"# Scenario {id}: one audit finding, checked by `slotcheck check`.
# Fill in every field; `slotcheck check {SCENARIO_DIR}/{id}.toml` runs it.
id = "{id}"
title = "What the finding says, in one line"
source = "Where it comes from: document, section, PR"
# notes = "What the model found beyond the source's claim, and why it stands."
model = "stovepipe"          # or "link" (other bounds: see the README)
# slow = true                # leave out of `--skip-slow` runs (tests); for big bounds
# options = ["split-read"]   # model options (see the README)

# The smallest bounds that show the finding: every bound is required.
[bounds]
requests = 1        # N: requests arriving, in ID order
max_concurrent = 1  # K: the queue's limit
crashes = 0         # worker deaths
stalls = 0          # visibility expiries while a worker still runs
max_deliveries = 2  # attempts before a message is dead-lettered

# What each design must give, from the source's claims AND a run of the model
# (the model is the truth; a contradiction is a finding: say so in `notes`).
# Verdicts: "holds" / "violated" for properties, "reached" / "not-reached" for
# witnesses; {{ verdict = "violated", steps = N }} pins the shortest path too.
[expect.claim-first]
# no-wedge = "holds"
# count-not-high = {{ verdict = "violated", steps = 8 }}

[expect.fail-open]
# no-wedge = "holds"

[expect.owner-keyed]
# no-wedge = "holds"

# Optional: the finding's own telling, replayed literally. Every step must be
# enabled where it stands, and the last state must violate `violates`.
# [[story]]
# design = "claim-first"
# violates = "no-wedge"
# steps = [
#     "arrive R1",
#     "deliver process R1",
#     "step worker 1",
#     "crash worker 1",
# ]
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_lines_and_columns() {
        let text = "a = 1\nbb = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        assert_eq!(line_column(text, 11), (2, 6));
    }

    #[test]
    fn the_field_at_an_offset_is_the_table_and_the_key() {
        let text = "id = \"x\"\n[bounds]\nrequests = \"2\"\n[expect.fail-open]\nno-wedge = { verdict = \"held\" }\n";
        let at = |needle: &str| field_at(text, text.find(needle).unwrap());
        assert_eq!(at("\"2\"").as_deref(), Some("bounds.requests"));
        assert_eq!(at("requests").as_deref(), Some("bounds.requests"));
        assert_eq!(
            at("\"held\"").as_deref(),
            Some("expect.fail-open.no-wedge.verdict")
        );
        assert_eq!(at("\"x\"").as_deref(), Some("id"));
    }

    #[test]
    fn xml_escaping_covers_markup_and_control_characters() {
        assert_eq!(
            xml_escape("a<b & \"c\" 'd'>\u{1b}[0m"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\u{FFFD}[0m"
        );
    }

    #[test]
    fn a_verdict_differs_by_steps_or_word_and_inconclusive_is_its_own() {
        let violated = |steps| Expected {
            verdict: Verdict::Violated,
            steps,
        };
        assert_eq!(
            judge(violated(Some(8)), Verdict::Violated, Some(8)),
            Status::Ok
        );
        assert_eq!(
            judge(violated(None), Verdict::Violated, Some(9)),
            Status::Ok
        );
        assert_eq!(
            judge(violated(Some(8)), Verdict::Violated, Some(9)),
            Status::Regression
        );
        assert_eq!(
            judge(violated(None), Verdict::Holds, None),
            Status::Regression
        );
        assert_eq!(
            judge(violated(None), Verdict::Inconclusive, None),
            Status::Inconclusive
        );
    }

    #[test]
    fn the_template_parses_but_asks_for_expectations() {
        let error = parse(Path::new("t.toml"), &template("SP-NEW-1"))
            .err()
            .expect("a fresh template has no expectations yet");
        assert_eq!(error.field.as_deref(), Some("expect.claim-first"));
        assert!(error.message.contains("no expectations"), "{error}");
    }
}
