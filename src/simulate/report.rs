//! The JSON report of `simulate --json`, and `merge` of the shards' reports
//! into the report of one run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

// ---------------------------------------------------------------- reports

/// The JSON report of `simulate --json`: a function of the options alone
/// (no timings), so that equal options give equal bytes and `merge` of the
/// shards gives the single run's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    pub model: String,
    pub seed: u64,
    pub runs: u64,
    pub only_run: Option<u64>,
    pub depth: usize,
    /// Swarm ranges by bound name, `[low, high]`; `null` for plain runs.
    pub swarm: Option<BTreeMap<String, [u32; 2]>>,
    /// The bounds given (those of every run unless swarming).
    pub bounds: BTreeMap<String, u32>,
    pub options: Vec<String>,
    pub shrink: bool,
    /// PCT's `[depth, horizon]` when every walk was scheduled by PCT
    /// (`--pct`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct: Option<[usize; 2]>,
    /// Whether runs were coverage-guided (`--guided`); absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub guided: bool,
    /// `null` when every run is covered; else the shards covered, of how many.
    pub shard: Option<ShardCover>,
    pub designs: Vec<DesignReport>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardCover {
    pub of: u64,
    pub covered: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DesignReport {
    pub design: String,
    /// Runs done (of the covered shards).
    pub runs: u64,
    /// States visited, initial states included.
    pub states: u64,
    /// Walks stopped by `--depth` rather than by a state with nothing
    /// enabled: a wedge beyond the depth is not seen.
    pub cut_at_depth: u64,
    pub violations: Vec<ViolationReport>,
    /// Every witness, with the runs that reached it (0: never).
    pub witnesses: Vec<WitnessReport>,
    /// Why the runs stopped before the last (a budget or a signal): what
    /// was not run is not a verdict. Absent when every run was done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ViolationReport {
    pub property: String,
    /// How many runs violated it.
    pub runs: u64,
    /// The first run that did: the one shown and saved.
    pub first_run: u64,
    pub seed: u64,
    /// The walk up to its first violating state.
    pub original_steps: usize,
    pub shrunk_steps: usize,
    /// Whether the last stage (BFS on the shrunk bounds) gave the trace.
    pub shortest_by_search: bool,
    /// The bounds of the shrunk trace.
    pub bounds: BTreeMap<String, u32>,
    /// The shrunk trace as scripted steps.
    pub steps: Vec<String>,
    pub explanation: String,
    /// The saved ITF trace, if saved.
    pub trace: Option<String>,
    /// The run as it was drawn (its bounds and options before shrinking,
    /// its schedule, its fault phase): with the seed and run number, all
    /// a reader needs to reproduce it from the report alone.
    #[serde(default)]
    pub drawn: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WitnessReport {
    pub property: String,
    pub runs: u64,
    pub first_run: Option<u64>,
}

/// Combines shard reports into one: the same as the single run's once every
/// shard is in. The shards must share every option.
pub fn merge(reports: &[Report]) -> Result<Report, String> {
    let names: Vec<String> = (1..=reports.len()).map(|i| format!("report {i}")).collect();
    merge_named(reports, &names)
}

/// [`merge`], each report named in errors as `names` says (its file).
pub fn merge_named(reports: &[Report], names: &[String]) -> Result<Report, String> {
    let (first, rest) = reports.split_first().ok_or("merge: no report given")?;
    let header = |r: &Report| {
        let mut h = r.clone();
        h.designs.clear();
        h.shard = None;
        h
    };
    let of = first.shard.as_ref().map_or(1, |s| s.of);
    let mut covered: Vec<u64> = Vec::new();
    for (i, r) in reports.iter().enumerate() {
        if header(r) != header(first) {
            return Err(format!(
                "merge: {} was made with other options (seed, runs, depth, bounds, swarm, pct, shrink) than {}",
                names[i], names[0]
            ));
        }
        let cover = r.shard.clone().unwrap_or(ShardCover {
            of: 1,
            covered: vec![1],
        });
        if cover.of != of {
            return Err(format!(
                "merge: {} splits the runs into {} shards, {} into {of}",
                names[i], cover.of, names[0]
            ));
        }
        for s in cover.covered {
            if covered.contains(&s) {
                return Err(format!(
                    "merge: shard {s}/{of} is given twice (again in {})",
                    names[i]
                ));
            }
            covered.push(s);
        }
        let designs: Vec<&str> = r.designs.iter().map(|d| d.design.as_str()).collect();
        let expected: Vec<&str> = first.designs.iter().map(|d| d.design.as_str()).collect();
        if designs != expected {
            return Err(format!(
                "merge: {} has other designs than {}",
                names[i], names[0]
            ));
        }
    }
    covered.sort_unstable();
    let mut merged = first.clone();
    for r in rest {
        for (into, from) in merged.designs.iter_mut().zip(&r.designs) {
            merge_design(into, from);
        }
    }
    merged.shard = if covered.len() as u64 == of {
        None
    } else {
        Some(ShardCover { of, covered })
    };
    Ok(merged)
}

fn merge_design(into: &mut DesignReport, from: &DesignReport) {
    into.runs += from.runs;
    into.states += from.states;
    into.cut_at_depth += from.cut_at_depth;
    if into.cut.is_none() {
        into.cut = from.cut.clone();
    }
    for v in &from.violations {
        match into
            .violations
            .iter_mut()
            .find(|w| w.property == v.property)
        {
            Some(w) => {
                let runs = w.runs + v.runs;
                if v.first_run < w.first_run {
                    *w = v.clone();
                }
                w.runs = runs;
            }
            None => into.violations.push(v.clone()),
        }
    }
    // As a single run lists them.
    into.violations.sort_by(|a, b| a.property.cmp(&b.property));
    for (w, x) in into.witnesses.iter_mut().zip(&from.witnesses) {
        w.runs += x.runs;
        w.first_run = match (w.first_run, x.first_run) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}
