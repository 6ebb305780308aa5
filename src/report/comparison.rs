//! The typed results of `compare` and `check --design`: each design's
//! verdicts, its run's figures, and a story's steps. Their JSON is serde's
//! (fields in alphabetical order, the order it has always had).

use crate::check::{Outcome, Stats};
use schemars::JsonSchema;
use serde::{Serialize, Serializer};
use serde_json::Value;
use slotcheck_models::{Narrated, PropertyKind, StoryStep};

/// Every design on the same bounds (`compare --json`).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Comparison {
    /// The bounds and options every design ran on.
    pub bounds: Value,
    pub results: Vec<DesignVerdict>,
    pub stats: Vec<RunRecord>,
}

/// One design's verdict on one property.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct DesignVerdict {
    pub design: String,
    /// `always` (must hold), `sometimes` (a witness to reach) or `progress`
    /// (must hold under weak fairness: no livelock, no wedge).
    pub kind: &'static str,
    /// A progress violation's lasso: the number of steps before its loop
    /// (the steps after them repeat for ever; equal to `steps` when the run
    /// stays in its last state); `null` for any other result.
    pub loop_from: Option<usize>,
    pub property: String,
    /// The steps of the counterexample or witness path, if there is one.
    pub steps: Option<usize>,
    pub verdict: &'static str,
}

/// One check run's figures.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RunRecord {
    /// Why the run was cut short, or `null`.
    pub cut_short: Option<&'static str>,
    /// The deepest BFS level reached.
    pub depth: Option<usize>,
    pub design: String,
    #[serde(serialize_with = "millis")]
    pub seconds: f64,
    /// States generated, duplicates included.
    pub states: usize,
    pub unique: usize,
}

/// A story's step: who did what, and the rows it changed.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct StepRecord {
    pub action: String,
    pub actor: String,
    pub changes: Vec<ChangeRecord>,
    /// 1-based.
    pub step: usize,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ChangeRecord {
    /// `null`: the row is new.
    pub after: Option<String>,
    /// `null`: the row is gone.
    pub before: Option<String>,
    pub row: String,
}

fn millis<S: Serializer>(seconds: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((seconds * 1000.0).round() / 1000.0)
}

impl RunRecord {
    pub fn of(design: &str, s: &Stats) -> Self {
        RunRecord {
            cut_short: s.cut.map(|c| c.describe()),
            depth: s.depth,
            design: design.to_string(),
            seconds: s.seconds,
            states: s.states,
            unique: s.unique,
        }
    }
}

impl Comparison {
    pub fn of<M: Narrated>(bounds: Value, columns: &[(String, Outcome<M>)]) -> Self {
        let mut results = Vec::new();
        let mut stats = Vec::new();
        for (design, outcome) in columns {
            for r in &outcome.results {
                results.push(DesignVerdict {
                    design: design.clone(),
                    kind: match r.kind {
                        PropertyKind::Always => "always",
                        PropertyKind::Sometimes => "sometimes",
                        PropertyKind::Progress => "progress",
                    },
                    loop_from: r.trace.as_ref().and_then(|t| t.loop_from),
                    property: r.name.to_string(),
                    steps: super::steps(r),
                    verdict: r.verdict.word(),
                });
            }
            stats.push(RunRecord::of(design, &outcome.stats));
        }
        Comparison {
            bounds,
            results,
            stats,
        }
    }
}

/// A story's steps as records.
pub fn steps_of(steps: &[StoryStep]) -> Vec<StepRecord> {
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| StepRecord {
            action: s.action.clone(),
            actor: s.actor.clone(),
            changes: s
                .changes
                .iter()
                .map(|c| ChangeRecord {
                    after: c.after.clone(),
                    before: c.before.clone(),
                    row: c.row.clone(),
                })
                .collect(),
            step: i + 1,
        })
        .collect()
}

/// One design checked alone (`check --design D --json`): each property's
/// verdict, a violation's story, and the run's figures.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct DesignCheck {
    /// The bounds and options the design ran on.
    pub bounds: Value,
    pub design: String,
    /// The model (`stovepipe`, `link`).
    pub model: String,
    pub results: Vec<PropertyRecord>,
    pub stats: RunRecord,
}

/// A property's verdict, with why and (for a violation) the story.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct PropertyRecord {
    /// Why the property fails (or the witness holds) in the path's last
    /// state, if there is a path.
    pub explanation: Option<String>,
    /// A progress violation's lasso: the number of steps before its loop
    /// (the steps after them repeat for ever; equal to `steps` when the run
    /// stays in its last state); `null` for any other result.
    pub loop_from: Option<usize>,
    pub property: String,
    pub steps: Option<usize>,
    /// The shortest counterexample told step by step; `null` unless violated.
    pub story: Option<Vec<StepRecord>>,
    pub verdict: &'static str,
}

/// The what-to-merge table (`compare --findings --json`): the findings as
/// columns, the designs as rows, a cell per design and finding.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FindingsTable {
    pub cells: Vec<FindingCell>,
    pub designs: Vec<FindingDesign>,
    pub findings: Vec<FindingColumn>,
    /// The designs that hold every finding (or reach every witness), under
    /// every reading checked.
    pub holds_every_finding: Vec<String>,
    /// How the broker holds a message in every cell: `parked` (until the
    /// next durable write, the contract's reading) or `delayed` (whatever
    /// was written, the model option `delayed-hold`).
    pub hold: &'static str,
    pub model: String,
    /// The workers' reads checked: `one-snapshot`, `split-read` (R's row,
    /// the queue row and the head in separate statements) or `both`.
    pub reading: &'static str,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FindingColumn {
    /// The scenario's bounds in words.
    pub bounds: String,
    pub id: String,
    pub property: String,
    pub title: String,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FindingDesign {
    /// What it changes, as a diff of the contract's admit table.
    pub change: String,
    /// What it costs to build.
    pub cost: String,
    pub name: String,
    /// With both readings: whether split reads break a finding it holds
    /// in one snapshot (`null`: one reading checked).
    pub needs_one_snapshot_read: Option<bool>,
    /// With both readings: what it needs of the read, in words.
    pub read: Option<String>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FindingCell {
    pub design: String,
    /// The finding's scenario id.
    pub finding: Option<String>,
    /// The reading the cell was checked under: `one-snapshot` or
    /// `split-read`.
    pub reading: &'static str,
    pub steps: Option<usize>,
    pub verdict: String,
}
