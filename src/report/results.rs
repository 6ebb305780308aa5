//! The typed results every format renders. A runner (the scenario room)
//! fills them; `text`, JSON (serde), JUnit (`junit.rs`), HTML (`html.rs`)
//! each read them and nothing else, so a format is one renderer. The JSON
//! is these types serialized (fields in alphabetical order, the order it
//! has always had), and `docs/report.schema.json` is generated
//! from them (schemars): the shape is written down once, here.

use crate::check::{Stats, Verdict};
use schemars::JsonSchema;
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Exit statuses of a run that judges verdicts against expectations.
pub const EXIT_OK: u8 = 0;
pub const EXIT_REGRESSION: u8 = 1;
pub const EXIT_INVALID: u8 = 2;
pub const EXIT_INCONCLUSIVE: u8 = 3;
/// With `--strict-lengths` only: a story change and nothing worse.
pub const EXIT_STORY_CHANGE: u8 = 4;

/// A scenario run (`slotcheck check [PATH...]`): each scenario with its
/// checks, and the totals.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ScenarioRun {
    pub scenarios: Vec<ScenarioResult>,
    pub summary: RunSummary,
}

/// One scenario file's checks.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ScenarioResult {
    /// The model's bounds and options, as the scenario sets them.
    pub bounds: Value,
    /// The scenario file, as given.
    pub file: String,
    pub id: String,
    /// The model the scenario names (`stovepipe`, `link`).
    pub model: String,
    pub notes: Option<String>,
    pub results: Vec<CheckResult>,
    #[serde(serialize_with = "millis")]
    pub seconds: f64,
    /// Why the scenario did not run (`slow (--skip-slow)`), or `null`.
    pub skipped: Option<String>,
    /// Where the finding comes from (an audit, an issue).
    pub source: String,
    pub title: String,
    /// The same bounds for people: `asks 2, builders 2, ...`.
    #[serde(skip)]
    pub bounds_line: String,
    /// Each design's check run (stories are replays, not runs).
    #[serde(skip)]
    pub runs: Vec<RunFigures>,
}

/// A design's property (or scripted story) against what the scenario expects.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CheckResult {
    pub design: String,
    #[serde(serialize_with = "word")]
    #[schemars(with = "VerdictWord")]
    pub expected: Verdict,
    /// The step count the scenario pins, if it pins one.
    pub expected_steps: Option<usize>,
    /// The line the text output prints: `ok (violated, 8 steps)`.
    pub line: String,
    /// The property, or `story (PROPERTY)` for a scripted story.
    pub property: String,
    pub status: Status,
    /// The steps of the counterexample or witness path, if there is one.
    pub steps: Option<usize>,
    #[serde(serialize_with = "word")]
    #[schemars(with = "VerdictWord")]
    pub verdict: Verdict,
    /// A `sometimes` property (a witness) rather than an `always` one.
    #[serde(skip)]
    pub witness: bool,
    /// The path told as a story (`report::story_text`).
    #[serde(skip)]
    pub story: Option<String>,
    /// Why the property fails (or the witness holds) in the path's last state.
    #[serde(skip)]
    pub explanation: Option<String>,
    /// The path as a sequence diagram, an SVG document.
    #[serde(skip)]
    pub svg: Option<String>,
    /// The path as an ITF trace (counterexamples only: `--out`).
    #[serde(skip)]
    pub trace: Option<Value>,
    #[serde(skip)]
    pub seconds: f64,
}

/// The verdict words of JSON and scenario files.
#[derive(JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)] // only its schema is used
enum VerdictWord {
    Holds,
    Violated,
    Reached,
    NotReached,
    Inconclusive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// As expected (a pinned violation included).
    Ok,
    /// Not as expected: another verdict.
    Regression,
    /// Every verdict as expected, but the shortest story's length is not
    /// the pinned one: a harmless change or a repair breaks a pinned count
    /// as readily as a bug, so this is not a regression of the design.
    #[serde(rename = "story-change")]
    StoryChange,
    /// A budget ran out before the verdict was decided.
    Inconclusive,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RunSummary {
    /// The exit status: 0 all as expected (story changes included, unless
    /// `--strict-lengths`), 1 a regression, 3 inconclusive, 4 a story
    /// change under `--strict-lengths`.
    pub exit: u8,
    pub inconclusive: usize,
    pub ok: usize,
    pub regressions: usize,
    #[serde(serialize_with = "millis")]
    pub seconds: f64,
    pub skipped: usize,
    /// Checks whose verdict is as pinned but whose step count is not.
    pub story_changes: usize,
    /// Whether a story change fails the run (`--strict-lengths`).
    #[serde(skip)]
    pub strict_lengths: bool,
}

/// One check run's figures.
#[derive(Clone, Debug)]
pub struct RunFigures {
    pub design: String,
    pub stats: Stats,
}

fn millis<S: Serializer>(seconds: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((seconds * 1000.0).round() / 1000.0)
}

fn word<S: Serializer>(verdict: &Verdict, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(verdict.word())
}

impl ScenarioRun {
    /// The run of these scenarios, its summary counted from them.
    pub fn new(scenarios: Vec<ScenarioResult>, seconds: f64) -> Self {
        let count = |status| {
            scenarios
                .iter()
                .flat_map(|s| &s.results)
                .filter(|r| r.status == status)
                .count()
        };
        let (ok, regressions, inconclusive, story_changes) = (
            count(Status::Ok),
            count(Status::Regression),
            count(Status::Inconclusive),
            count(Status::StoryChange),
        );
        let exit = if regressions > 0 {
            EXIT_REGRESSION
        } else if inconclusive > 0 {
            EXIT_INCONCLUSIVE
        } else {
            EXIT_OK
        };
        let skipped = scenarios.iter().filter(|s| s.skipped.is_some()).count();
        ScenarioRun {
            scenarios,
            summary: RunSummary {
                ok,
                regressions,
                inconclusive,
                skipped,
                seconds,
                exit,
                story_changes,
                strict_lengths: false,
            },
        }
    }

    /// The run with `--strict-lengths`: a story change (and nothing worse)
    /// exits 4 instead of 0.
    pub fn strict_lengths(mut self, strict: bool) -> Self {
        let n = &mut self.summary;
        n.strict_lengths = strict;
        if strict && n.exit == EXIT_OK && n.story_changes > 0 {
            n.exit = EXIT_STORY_CHANGE;
        }
        self
    }

    pub fn results(&self) -> impl Iterator<Item = &CheckResult> {
        self.scenarios.iter().flat_map(|s| &s.results)
    }

    /// `39 scenarios, 2524 checks: 2524 ok, 0 regressions, 0 inconclusive (118.2 s)`.
    pub fn summary_line(&self) -> String {
        let n = &self.summary;
        let checks = self.results().count();
        let mut line = format!(
            "{}, {}: {} ok, {}, {} inconclusive",
            super::count(self.scenarios.len() as u64, "scenario"),
            super::count(checks as u64, "check"),
            n.ok,
            super::count(n.regressions as u64, "regression"),
            n.inconclusive,
        );
        if n.story_changes > 0 {
            line.push_str(&format!(
                ", {}",
                super::count(n.story_changes as u64, "story change")
            ));
        }
        if n.skipped > 0 {
            line.push_str(&format!(", {} skipped", n.skipped));
        }
        line.push_str(&format!(" ({:.1} s)", n.seconds));
        line
    }

    /// The run as pretty JSON, a newline at the end.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("JSON") + "\n"
    }

    /// Every counterexample (and every story) as files under `dir`:
    /// `ID/DESIGN.PROPERTY.txt` (the story) and `ID/DESIGN.PROPERTY.itf.json`.
    pub fn counterexample_files(&self, dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        for s in &self.scenarios {
            for r in &s.results {
                let (Some(story), Some(trace)) = (&r.story, &r.trace) else {
                    continue;
                };
                let stem = format!(
                    "{}.{}",
                    r.design,
                    r.property.replace("story (", "story.").replace(')', "")
                );
                let base = dir.join(&s.id);
                let heading = format!(
                    "{} ({}): {} on {}, {}\n{}\n\n",
                    s.id, s.title, r.property, r.design, r.line, s.bounds
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
}

/// The JSON schema of a scenario run's report (`docs/report.schema.json`).
pub fn scenario_run_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(ScenarioRun)).expect("a schema is JSON")
}
