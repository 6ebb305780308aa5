//! `check --coverage`: which handler paths the scenario set reaches. Each
//! scenario's bounds are explored whole for every design of its model (no
//! property is checked), each step recording the path it took; a design's
//! path that no scenario reaches is listed, and one that the list of known
//! unreached paths does not name fails the run (the nightly's guard), as
//! does a listed path that is reached: the list must stay true.

use super::{load_all, Selection, EXIT_INCONCLUSIVE, EXIT_INVALID, EXIT_OK, EXIT_REGRESSION};
use crate::check::Limits;
use serde::Deserialize;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The paths known to be unreached, each with why (read when it exists).
pub const KNOWN: &str = "coverage/unreached.toml";

/// One design on one scenario's bounds: its paths and the ones reached.
pub struct Reached {
    pub design: String,
    pub paths: Vec<String>,
    /// Those reached (before the cut, if any).
    pub reached: BTreeSet<String>,
    /// What cut the exploration short.
    pub cut: Option<&'static str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownFile {
    #[serde(default)]
    unreached: Vec<KnownPath>,
}

/// A path no scenario reaches, and why that is all right (or what would).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownPath {
    model: String,
    /// A design's name, or `*` for every design that has the path.
    design: String,
    path: String,
    why: String,
}

impl KnownPath {
    fn names(&self, model: &str, design: &str, path: &str) -> bool {
        self.model == model && (self.design == "*" || self.design == design) && self.path == path
    }
}

/// One design's paths over the whole scenario set.
struct DesignCoverage {
    model: &'static str,
    design: String,
    paths: Vec<String>,
    reached: BTreeSet<String>,
    /// Scenarios whose exploration was cut: `scenario: why`.
    cut: Vec<String>,
}

/// The known list; none when the file does not exist.
fn read_known(file: &Path) -> Result<Vec<KnownPath>, String> {
    if !file.exists() {
        return Ok(Vec::new());
    }
    let (_, known): (String, KnownFile) = crate::report::read_toml(file)?;
    Ok(known.unreached)
}

/// Runs `check --coverage` over the scenario files of `paths`, printing
/// the coverage (text, or with `json` one JSON object); the exit code.
pub fn coverage_command(
    paths: &[PathBuf],
    selection: &Selection,
    limits: &Limits,
    known_file: &Path,
    json: bool,
) -> u8 {
    let fail = |message: String| {
        eprintln!("error: {message}");
        EXIT_INVALID
    };
    let known = match read_known(known_file) {
        Ok(k) => k,
        Err(e) => return fail(e),
    };
    let files = match super::files(paths) {
        Ok(f) => f,
        Err(e) => return fail(e.to_string()),
    };
    let scenarios = match load_all(&files, selection) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    // A selection that leaves nothing to walk is a typo, not full coverage.
    if let Err(e) = super::run::check_selection(&scenarios, selection) {
        return fail(e);
    }
    let mut designs: Vec<DesignCoverage> = Vec::new();
    let mut runs = 0;
    for scenario in &scenarios {
        let id = &scenario.heading.id;
        if (selection.skip_slow && scenario.slow)
            || !(selection.only.is_empty() || selection.only.contains(id))
        {
            continue;
        }
        runs += 1;
        for one in scenario.plan.coverage(limits, &|d| selection.design(d)) {
            let model = scenario.heading.model;
            let at = match designs
                .iter()
                .position(|d| d.model == model && d.design == one.design)
            {
                Some(at) => at,
                None => {
                    designs.push(DesignCoverage {
                        model,
                        design: one.design.clone(),
                        paths: one.paths.clone(),
                        reached: BTreeSet::new(),
                        cut: Vec::new(),
                    });
                    designs.len() - 1
                }
            };
            designs[at].reached.extend(one.reached);
            if let Some(why) = one.cut {
                designs[at].cut.push(format!("{id}: {why}"));
            }
        }
    }
    let why_known = |d: &DesignCoverage, path: &str| {
        known
            .iter()
            .find(|k| k.names(d.model, &d.design, path))
            .map(|k| k.why.clone())
    };
    // A listed path some design has and reaches: the list is out of date.
    // A path no design has is judged only where the run walked the designs
    // the entry names (all of its model's, for `*`): `--design` leaves the
    // others' entries alone.
    let judged = |k: &KnownPath| {
        let walked = |name: &str| {
            designs
                .iter()
                .any(|d| d.model == k.model && d.design == name)
        };
        if k.design == "*" {
            selection.designs.is_empty() && designs.iter().any(|d| d.model == k.model)
        } else {
            walked(&k.design)
        }
    };
    let mut stale: Vec<String> = Vec::new();
    for k in &known {
        let reached_by: Vec<&str> = designs
            .iter()
            .filter(|d| k.names(d.model, &d.design, &k.path) && d.reached.contains(&k.path))
            .map(|d| d.design.as_str())
            .collect();
        let has_it = designs
            .iter()
            .any(|d| k.names(d.model, &d.design, &k.path) && d.paths.contains(&k.path));
        if !reached_by.is_empty() {
            stale.push(format!(
                "{} {} `{}` is listed as unreached but {} reaches it",
                k.model,
                k.design,
                k.path,
                reached_by.join(", ")
            ));
        } else if !has_it && judged(k) {
            stale.push(format!(
                "{} {} `{}` is listed as unreached but no design of the run has that path",
                k.model, k.design, k.path
            ));
        }
    }
    let unreached = |d: &DesignCoverage| -> Vec<String> {
        d.paths
            .iter()
            .filter(|p| !d.reached.contains(*p))
            .cloned()
            .collect()
    };
    // A design whose exploration was cut may reach more: its unreached
    // paths are not judged (the run is inconclusive instead).
    let new: usize = designs
        .iter()
        .filter(|d| d.cut.is_empty())
        .map(|d| {
            unreached(d)
                .iter()
                .filter(|p| why_known(d, p).is_none())
                .count()
        })
        .sum();
    let cut = designs.iter().any(|d| !d.cut.is_empty());
    if json {
        let report = json!({
            "scenarios": runs,
            "known_file": known_file.display().to_string(),
            "designs": designs.iter().map(|d| json!({
                "model": d.model,
                "design": d.design,
                "paths": d.paths.len(),
                "reached": d.paths.iter().filter(|p| d.reached.contains(*p)).count(),
                "unreached": unreached(d).iter().map(|p| json!({
                    "path": p,
                    "known": why_known(d, p),
                })).collect::<Vec<_>>(),
                "cut": d.cut,
            })).collect::<Vec<_>>(),
            "new_unreached": new,
            "stale_known": stale,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("coverage is JSON")
        );
    } else {
        print!("{}", text(&designs, runs, &unreached, &why_known));
        for line in &stale {
            println!("stale: {line} ({})", known_file.display());
        }
        let total: usize = designs.iter().map(|d| unreached(d).len()).sum();
        let all: usize = designs.iter().map(|d| d.paths.len()).sum();
        let stale = match stale.len() {
            0 => String::new(),
            n => format!(", {n} known entries stale"),
        };
        let cut = match designs.iter().filter(|d| !d.cut.is_empty()).count() {
            0 => String::new(),
            n => format!(
                "; {} cut short, not judged (inconclusive)",
                crate::report::count(n as u64, "design")
            ),
        };
        println!(
            "summary: {total} of {all} paths (design by design) never reached on {}, {new} of them new (not in {}){stale}{cut}",
            crate::report::count(runs as u64, "scenario"),
            known_file.display(),
        );
    }
    if new > 0 || !stale.is_empty() {
        EXIT_REGRESSION
    } else if cut {
        EXIT_INCONCLUSIVE
    } else {
        EXIT_OK
    }
}

/// The coverage for people: per model, a line per design and under it
/// each path never reached, with why when it is known.
fn text(
    designs: &[DesignCoverage],
    runs: usize,
    unreached: &dyn Fn(&DesignCoverage) -> Vec<String>,
    why_known: &dyn Fn(&DesignCoverage, &str) -> Option<String>,
) -> String {
    let mut out = format!(
        "coverage: the handler paths (a step, and where it went) each design takes on the bounds of {}\n",
        crate::report::count(runs as u64, "scenario")
    );
    let mut models: BTreeMap<&str, Vec<&DesignCoverage>> = BTreeMap::new();
    for d in designs {
        models.entry(d.model).or_default().push(d);
    }
    let width = designs.iter().map(|d| d.design.len()).max().unwrap_or(0);
    for (model, of_model) in models {
        out += &format!("{model}\n");
        if of_model.iter().all(|d| d.paths.is_empty()) {
            out += "  no coverage marks in this model yet\n";
            continue;
        }
        // Each known path's reason once, after the model's designs.
        let mut reasons: Vec<(String, String)> = Vec::new();
        for d in of_model {
            let never = unreached(d);
            out += &format!(
                "  {:width$}  {} of {} reached\n",
                d.design,
                d.paths.len() - never.len(),
                crate::report::count(d.paths.len() as u64, "path"),
            );
            for path in &never {
                match why_known(d, path) {
                    Some(why) => {
                        out += &format!("    never (known): {path}\n");
                        if !reasons.iter().any(|(p, _)| p == path) {
                            reasons.push((path.clone(), why));
                        }
                    }
                    None if !d.cut.is_empty() => {
                        out += &format!("    not reached before the cut: {path}\n")
                    }
                    None => out += &format!("    NEW, never: {path}\n"),
                }
            }
            for cut in &d.cut {
                out += &format!("    cut: {cut}\n");
            }
        }
        if !reasons.is_empty() {
            out += "  why the known paths are never reached:\n";
            for (path, why) in reasons {
                out += &format!("    {path}: {why}\n");
            }
        }
    }
    out
}
