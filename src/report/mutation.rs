//! The typed result of `mutate --json`: each design's mutants and their
//! fates, and its score. The JSON is these types serialized (fields in
//! alphabetical order, the order it has always had); the mutate room fills
//! them.

use schemars::JsonSchema;
use serde::Serialize;

/// A design's mutants (`mutate --json` prints a list of these).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct DesignMutants {
    pub design: String,
    /// Mutants listed as equivalent, and indeed not killed.
    pub equivalent: usize,
    pub killed: usize,
    /// Survivors listed as known (counted in `survived` too).
    pub known_survivors: usize,
    pub mutants: Vec<MutantRecord>,
    /// Killed, of the mutants not listed as equivalent (1 when none).
    pub score: f64,
    pub survived: usize,
    /// Why the design's mutants could not all be listed, or `null`.
    pub unlisted: Option<String>,
}

/// One mutant and its fate.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct MutantRecord {
    /// What the mutant changes, in words.
    pub change: String,
    pub fate: Fate,
    /// The property that killed it (fates `killed`, `listed-but-killed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub killed_by: Option<KillRecord>,
    /// With `--search`: the smallest bounds that kill a survivor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub killed_on_larger_bounds: Option<KillRecord>,
    /// What the list says it is (`equivalent`, `known survivor`), for a
    /// listed mutant that was killed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listed_as: Option<String>,
    /// `design/step/operator`.
    pub name: String,
    /// With `--verdicts-only`: what the mutant changes on the given bounds,
    /// where the default criterion would judge it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_given_bounds: Option<GivenBoundsRecord>,
    /// The list's reason (equivalent, known), or why it is inconclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// What became of a mutant.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Fate {
    Killed,
    Survived,
    Equivalent,
    KnownSurvivor,
    ListedButKilled,
    Inconclusive,
}

/// What a mutant changes on the given bounds (`mutate --verdicts-only`).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct GivenBoundsRecord {
    pub change: GivenChange,
    /// The first property whose shortest length alone differs (change
    /// `length-only`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length: Option<KillRecord>,
}

/// A verdict differs (killed there either way), only a shortest length
/// does (what masking hides from `--verdicts-only`), or nothing does.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum GivenChange {
    Verdict,
    LengthOnly,
    Nothing,
}

/// A property that tells a mutant from its design, on some bounds.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct KillRecord {
    /// The bounds in words.
    pub bounds: String,
    /// The design's verdict.
    pub design: String,
    /// The same bounds as flags.
    pub flags: String,
    /// The mutant's verdict.
    pub mutant: String,
    pub property: String,
}
