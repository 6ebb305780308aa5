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

//!
//! The room: `format.rs` the file as serde reads it, `source.rs` where an
//! error is, `load.rs` loading and validating, `plan.rs` a scenario's
//! checks, `run.rs` running and the `check` command over files (it fills
//! `report::results`, whose renderers write JUnit, JSON and HTML),
//! `template.rs` `scenario new`, `findings.rs` the what-to-merge table. It
//! may use `check`, `simulate`, `report` and `models` (the registry finds a
//! file's model by name); never a model by name, nor the command line.

mod bless;
pub mod coverage;
pub mod findings;
mod format;
pub mod grid;
mod load;
mod plan;
mod run;
mod source;
mod template;

pub use load::{files, load, load_all, parse};
pub use run::{
    bless_command, check_command, check_selection, run_all, CheckRun, EXIT_INCONCLUSIVE,
    EXIT_INVALID, EXIT_OK, EXIT_REGRESSION, EXIT_STORY_CHANGE,
};
pub use source::InputError;
pub use template::{template, write_template};

use crate::check::{Limits, Stats, Verdict};
use crate::report::html::{self, StatsRow};
use format::Expected;
use run::plural;
use serde_json::Value as Json;
use std::path::PathBuf;

/// Where scenario files live, relative to the working directory.
pub const SCENARIO_DIR: &str = "scenarios";

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

pub use crate::report::results::Status;

impl Finding {
    /// `ok (violated, 8 steps)`, `REGRESSION: expected holds, got violated (7 steps)`,
    /// `story change: expected violated (7 steps), got violated (8 steps) ...`.
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
            Status::StoryChange => format!(
                "story change: expected {}, got {got} (the verdict as pinned)",
                self.expected
            ),
            Status::Inconclusive => format!(
                "inconclusive: {}",
                self.cut.unwrap_or("the run was cut short")
            ),
        }
    }
}

impl Finding {
    /// The finding as the reports' typed result.
    fn into_result(self) -> crate::report::results::CheckResult {
        crate::report::results::CheckResult {
            line: self.describe(),
            design: self.design,
            expected: self.expected.verdict,
            expected_steps: self.expected.steps,
            property: self.subject,
            status: self.status,
            steps: self.steps,
            verdict: self.verdict,
            witness: self.witness,
            story: self.story,
            explanation: self.explanation,
            svg: self.svg,
            trace: self.trace,
            seconds: self.seconds,
        }
    }
}

fn judge(expected: Expected, verdict: Verdict, steps: Option<usize>) -> Status {
    if verdict == Verdict::Inconclusive {
        Status::Inconclusive
    } else if verdict == expected.verdict && expected.steps.is_none_or(|n| Some(n) == steps) {
        Status::Ok
    } else if verdict == expected.verdict {
        // Only the shortest story's length moved.
        Status::StoryChange
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

    /// Checks the scenario's finding in every design of its model (or in
    /// `designs`, names or compositions, when some are given), on its
    /// bounds: one column of the what-to-merge table, a cell per design (its
    /// verdict, steps and story), with each run's figures.
    pub fn check_finding(
        &self,
        limits: &Limits,
        designs: &[String],
        options: &[&str],
    ) -> Result<Vec<(html::ResultRow, StatsRow)>, String> {
        match self.heading.finding {
            Some(property) => self
                .plan
                .check_finding(self, property, limits, designs, options),
            None => Ok(Vec::new()),
        }
    }
}

impl Scenario {
    /// For each design the scenario expects to violate its finding: the
    /// first simulated run of `settings` that does, within `max_runs`
    /// (`None`: none did). The simulator's power on the finding.
    pub fn hunt(
        &self,
        settings: &crate::simulate::Settings,
        max_runs: u64,
    ) -> Result<Vec<(String, Option<u64>)>, String> {
        match self.heading.finding {
            Some(property) => self.plan.hunt(property, settings, max_runs),
            None => Ok(Vec::new()),
        }
    }
}

/// A scenario's checks for one model, behind a trait so that the runner
/// needs no generics.
trait Plan {
    /// See [`Scenario::hunt`].
    fn hunt(
        &self,
        property: &'static str,
        settings: &crate::simulate::Settings,
        max_runs: u64,
    ) -> Result<Vec<(String, Option<u64>)>, String>;
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
    /// Every design the file names, then every other design of the model
    /// (those `chosen` takes), on every property of the model: what `check
    /// --bless` writes.
    fn bless(&self, limits: &Limits, chosen: &dyn Fn(&str) -> bool) -> Vec<bless::Blessed>;
    /// Every design of the model on the scenario's bounds: its paths and
    /// the ones its steps take (`check --coverage`), or what cut the run.
    fn coverage(&self, limits: &Limits, chosen: &dyn Fn(&str) -> bool) -> Vec<coverage::Reached>;
    /// See [`Scenario::check_finding`].
    fn check_finding(
        &self,
        scenario: &Scenario,
        property: &'static str,
        limits: &Limits,
        designs: &[String],
        options: &[&str],
    ) -> Result<Vec<(html::ResultRow, StatsRow)>, String>;
}

/// One design's check run in a scenario: its figures, for the reports.
#[derive(Clone, Debug)]
pub struct RunStats {
    pub design: String,
    pub stats: Stats,
}

#[cfg(test)]
mod tests {
    use super::source::field_at;
    use super::*;
    use crate::report::line_column;
    use crate::report::xml_escape;
    use std::path::Path;

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
    fn a_verdict_differs_by_word_a_story_by_steps_and_inconclusive_is_its_own() {
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
            Status::StoryChange
        );
        assert_eq!(
            judge(violated(Some(8)), Verdict::Holds, None),
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
