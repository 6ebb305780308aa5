//! The typed result of `validate --json`: each design tried against the
//! log, each queue's verdict. The JSON is these types serialized (fields in
//! alphabetical order, the order it has always had); the validate room
//! fills them.

use super::comparison::StepRecord;
use schemars::JsonSchema;
use serde::Serialize;

/// A log judged against one design or every design (`validate --json`).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Validation {
    pub designs: Vec<DesignValidation>,
    /// The command's exit status: one design's, or the best design's.
    pub exit_code: u8,
    /// The designs that explain the log (exit 0 or 1).
    pub explained_by: Vec<String>,
    /// The log file, as given (several: their names).
    pub log: String,
    /// What the log lacks that its header or `--expect-queues` asks for
    /// (then the exit code is at least 3's).
    pub missing: Vec<String>,
    pub model: String,
    /// The model options the log was judged under (`--option`).
    pub options: Vec<String>,
    /// The queues (streams) validated, each design: every queue that
    /// logged a line, and each the header names that did not.
    pub queues_validated: usize,
}

/// One design against every queue of the log.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct DesignValidation {
    pub design: String,
    /// The worst of its queues'.
    pub exit_code: u8,
    pub queues: Vec<QueueVerdict>,
}

/// One queue's verdict. Which fields are present depends on it: `names`
/// and `violated` (and `story` with a violation) when it conforms; `line`,
/// `says`, `candidates`, `state` and `allowed` when it departs; `line` and
/// `candidates` when inconclusive.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct QueueVerdict {
    /// The silent steps the explanation told assumed (crashes, stalls,
    /// late heartbeats, unlogged deliveries), when it conforms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assumed: Option<Vec<AssumedStep>>,
    /// With several files: `file:line` of `line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// What the model could log at the departing line instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<String>>,
    /// The model states that explain the log up to `line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<usize>,
    /// 0 conforms, 1 conforms with a violation, 3 inconclusive, 4 departs.
    pub exit_code: u8,
    /// The log's line (1-based) where it departs or the budget ran out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The model's names for the log's (`R1 = pr-101`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub names: Option<String>,
    pub queue: String,
    /// What the log says at the departing line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub says: Option<String>,
    /// The rows of the first candidate state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<Vec<RowValue>>,
    /// The explanation that breaks most, told step by step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub story: Option<Vec<StepRecord>>,
    /// `conforms`, `conforms, with a violation`, `conforms, with a
    /// violation possible` (`--strict`), `departs`, `inconclusive`.
    pub verdict: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub violated: Option<Vec<ViolatedProperty>>,
    /// Why it is inconclusive: what grew past the budget (the line, and what
    /// the candidates differ in), what the model cannot hold, or that the
    /// queue logged nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// A silent step an explanation of the log assumed.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct AssumedStep {
    /// The line it comes before (absent: after the last).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_line: Option<usize>,
    pub step: String,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RowValue {
    pub row: String,
    pub value: String,
}

/// An `always` property an explanation of the log breaks.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ViolatedProperty {
    /// Every explanation of the log breaks it (else some does).
    pub certain: bool,
    pub property: String,
    /// Why, in the model's words, at the first state that breaks it.
    pub why: String,
}
