//! `slotcheck mutate`: mutation testing of the designs. Each mutant changes
//! one step of a design in one way (a CAS that ignores its version, a write
//! skipped, two writes swapped, a release done twice, the gate off by one...);
//! it is checked on the same bounds as the design, and it is **killed** when
//! some property's verdict or shortest counterexample differs from the
//! design's, that is, when the scenario files' expectations would catch it.
//! A mutant that survives shows a weakness of the properties or the bounds,
//! unless it cannot change behaviour at all: such **equivalent** mutants are
//! listed, each with its reason, in `mutants/equivalent.toml`. The same file
//! lists the known survivors (`[[survivor]]`), each with what it teaches:
//! they count as survived, and with `--allow-known-survivors` do not fail the
//! run, so that a nightly run fails only on a new one. A listed mutant that
//! is killed is reported, so that the list stays true.
//!
//! The room: `mod.rs` the list, the runs and the judgement, `output.rs` the
//! text, JSON and HTML. It may use `check`, `report` and `models`' trait
//! (each model's mutants are [`ToolModel::mutants`]); never a model by
//! name, the simulator, a scenario or the command line (the `mutate`
//! command in `commands/` loads the scenarios whose bounds it adds).

mod output;

pub use output::{html, records, text};

use crate::check::{budget, check, Limits, Outcome, Verdict};
use crate::models::ModelBounds;
use crate::models::ToolModel;
use crate::report::mutation::KillRecord;
use crate::report::{self, count};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// The mutants listed as equivalent, each with why, and the known
/// survivors, each with what it teaches.
#[derive(Clone, Debug, Default)]
pub struct Equivalents {
    pub reasons: BTreeMap<String, String>,
    pub survivors: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EquivalentsFile {
    #[serde(default)]
    mutant: Vec<toml::Spanned<EquivalentEntry>>,
    #[serde(default)]
    survivor: Vec<toml::Spanned<EquivalentEntry>>,
}

/// One entry: a mutant by its full name, or the same steps and operators
/// (`step/operator`) in several designs.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EquivalentEntry {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    designs: Vec<String>,
    #[serde(default)]
    mutants: Vec<String>,
    why: String,
}

impl Equivalents {
    /// Reads the list; an entry without a reason, or named twice, is an error
    /// naming the file and line.
    pub fn load(file: &Path) -> Result<Equivalents, String> {
        let (text, raw): (String, EquivalentsFile) = report::read_toml(file)?;
        let mut reasons = BTreeMap::new();
        let mut survivors = BTreeMap::new();
        for (entries, list, what) in [
            (raw.mutant, &mut reasons, "an equivalent mutant says why"),
            (
                raw.survivor,
                &mut survivors,
                "a known survivor says what it teaches",
            ),
        ] {
            for entry in entries {
                let (line, _) = report::line_column(&text, entry.span().start);
                let at = format!("{}:{line}", file.display());
                let entry = entry.into_inner();
                let mut names: Vec<String> = entry.name.into_iter().collect();
                for design in &entry.designs {
                    names.extend(entry.mutants.iter().map(|m| format!("{design}/{m}")));
                }
                if names.is_empty() {
                    return Err(format!(
                        "{at}: an entry names no mutant: give `name`, or `designs` and `mutants`"
                    ));
                }
                for name in names {
                    if entry.why.trim().is_empty() {
                        return Err(format!("{at}: `{name}` has no reason (`why`): {what}"));
                    }
                    if list.insert(name.clone(), entry.why.clone()).is_some() {
                        return Err(format!("{at}: `{name}` is listed twice"));
                    }
                }
            }
        }
        if let Some(name) = reasons.keys().find(|n| survivors.contains_key(*n)) {
            return Err(format!(
                "{}: `{name}` is listed both as equivalent and as a known survivor",
                file.display()
            ));
        }
        Ok(Equivalents { reasons, survivors })
    }
}

/// How a mutant was killed: the first property that differs, the mutant's
/// and the design's verdicts there (with steps), and on which bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Kill {
    pub property: &'static str,
    pub mutant: String,
    pub design: String,
    pub bounds: String,
    pub flags: String,
}

impl Kill {
    /// `PROPERTY: MUTANT'S VERDICT, the design DESIGN'S`.
    fn words(&self) -> String {
        format!(
            "{}: {}, the design {}",
            self.property, self.mutant, self.design
        )
    }

    fn record(&self) -> KillRecord {
        KillRecord {
            bounds: self.bounds.clone(),
            design: self.design.clone(),
            flags: self.flags.clone(),
            mutant: self.mutant.clone(),
            property: self.property.to_string(),
        }
    }
}

/// What became of a mutant.
#[derive(Clone, Debug, PartialEq)]
pub enum Fate {
    Killed(Kill),
    /// Not killed on the bounds given; with `--search`, the smallest bounds
    /// of the ladder that kill it, if any.
    Survived(Option<Kill>),
    /// Listed as equivalent, and indeed not killed.
    Equivalent(String),
    /// Listed as a known survivor (with what it teaches), and not killed:
    /// it counts as survived, but does not fail the run.
    Known(String),
    /// Listed (as equivalent or as a known survivor), yet killed: the list
    /// is wrong.
    ListedButKilled {
        listed_as: &'static str,
        why: String,
        kill: Kill,
    },
    /// A budget ran out before it was decided.
    Inconclusive(String),
}

/// With `--verdicts-only`: what a mutant changes on the given bounds (the
/// first), where the default criterion would judge it. It tells a mutant
/// that masking hides there from one that changes nothing there.
#[derive(Clone, Debug, PartialEq)]
pub enum OnGivenBounds {
    /// A verdict differs: killed there by either criterion.
    Verdict,
    /// Only a shortest length differs (the first such property): the
    /// default criterion kills it there, `--verdicts-only` does not.
    LengthOnly(Kill),
    /// Nothing differs: it survives there by either criterion.
    Nothing,
}

pub struct MutantReport {
    pub name: String,
    pub change: String,
    pub fate: Fate,
    /// With `--verdicts-only` (and a check on the given bounds that was
    /// not cut short); else `None`.
    pub on_given_bounds: Option<OnGivenBounds>,
}

pub struct DesignReport {
    pub design: String,
    pub mutants: Vec<MutantReport>,
    /// Why the design's mutants could not all be listed (a budget ran out
    /// while finding them): the design is inconclusive.
    pub unlisted: Option<String>,
}

impl DesignReport {
    fn counted(&self, f: impl Fn(&Fate) -> bool) -> usize {
        self.mutants.iter().filter(|m| f(&m.fate)).count()
    }
    pub fn killed(&self) -> usize {
        self.counted(|f| matches!(f, Fate::Killed(_)))
    }
    /// Survived, known survivors included.
    pub fn survived(&self) -> usize {
        self.counted(|f| matches!(f, Fate::Survived(_) | Fate::Known(_)))
    }
    /// Survived, and listed as known survivors.
    pub fn known(&self) -> usize {
        self.counted(|f| matches!(f, Fate::Known(_)))
    }
    pub fn equivalent(&self) -> usize {
        self.counted(|f| matches!(f, Fate::Equivalent(_)))
    }
    /// Killed, of the mutants that could be (all but the equivalent ones).
    pub fn score(&self) -> f64 {
        let counted = self.mutants.len() - self.equivalent();
        if counted == 0 {
            1.0
        } else {
            self.killed() as f64 / counted as f64
        }
    }
}

/// `violated (9 steps)`, `holds`.
fn verdict_of<M: ToolModel>(outcome: &Outcome<M>, property: &str) -> (Verdict, Option<usize>) {
    let r = outcome.result(property).expect("the same properties");
    (r.verdict, report::steps(r))
}

fn words((verdict, steps): (Verdict, Option<usize>)) -> String {
    match (verdict, steps) {
        (Verdict::Violated, Some(n)) => format!("violated ({})", count(n as u64, "step")),
        (Verdict::Reached, Some(n)) => format!("reached ({})", count(n as u64, "step")),
        (v, _) => v.word().to_string(),
    }
}

/// The first property whose verdict or shortest path differs; with
/// `verdicts_only`, whose verdict differs (a changed length alone is a
/// story change, not a bug made visible).
fn difference<M: ToolModel>(
    design: &Outcome<M>,
    mutant: &Outcome<M>,
    verdicts_only: bool,
) -> Option<(&'static str, String, String)> {
    design.results.iter().find_map(|r| {
        let (d, m) = (verdict_of(design, r.name), verdict_of(mutant, r.name));
        let differs = if verdicts_only { d.0 != m.0 } else { d != m };
        differs.then(|| (r.name, words(m), words(d)))
    })
}

/// The fate of one mutant: checked on each set of bounds in turn (the
/// design's outcome there beside it) until some property differs. With
/// `verdicts_only`, also what it changes on the first bounds by the default
/// criterion (the same check, judged twice).
fn judge<M: ToolModel>(
    name: &str,
    sets: &[(&M, &Outcome<M>, &BTreeMap<String, M>)],
    limits: &Limits,
    verdicts_only: bool,
) -> (Fate, Option<OnGivenBounds>) {
    let mut on_given_bounds = None;
    for (i, (model, original, found)) in sets.iter().enumerate() {
        // The same mutant on these bounds, if its step is taken there.
        let Some(mutant) = found.get(name) else {
            continue;
        };
        let outcome = check(mutant.clone(), &[], limits);
        if let Some(cut) = outcome.stats.cut.or(original.stats.cut) {
            return (
                Fate::Inconclusive(cut.describe().to_string()),
                on_given_bounds,
            );
        }
        let kill = |(property, m, d): (&'static str, String, String)| Kill {
            property,
            mutant: m,
            design: d,
            bounds: model.bounds_line(),
            flags: model.bounds_flags(),
        };
        let by_verdict = difference(original, &outcome, verdicts_only);
        if verdicts_only && i == 0 {
            on_given_bounds = Some(match (&by_verdict, difference(original, &outcome, false)) {
                (Some(_), _) => OnGivenBounds::Verdict,
                (None, Some(length)) => OnGivenBounds::LengthOnly(kill(length)),
                (None, None) => OnGivenBounds::Nothing,
            });
        }
        if let Some(found) = by_verdict {
            return (Fate::Killed(kill(found)), on_given_bounds);
        }
    }
    (Fate::Survived(None), on_given_bounds)
}

/// A rung of the ladder, worked out once for every survivor that climbs it:
/// the design on those bounds, its outcome there, and its mutants there.
struct Rung<M: ToolModel> {
    model: M,
    outcome: Outcome<M>,
    mutants: BTreeMap<String, M>,
}

/// For a survivor, the first bounds of the ladder on which it dies.
fn search<M: ToolModel>(
    name: &str,
    ladder: &[M],
    rungs: &[OnceLock<Rung<M>>],
    limits: &Limits,
    verdicts_only: bool,
) -> Option<Kill> {
    for (model, rung) in ladder.iter().zip(rungs) {
        let rung = rung.get_or_init(|| Rung {
            model: model.clone(),
            outcome: check(model.clone(), &[], limits),
            // Cut short, no mutant is found there: the climb goes on to
            // be cut by the same budget at its next check.
            mutants: budget::within(limits, |go_on| model.mutants_within(go_on))
                .unwrap_or_default()
                .into_iter()
                .map(|(n, _, m)| (n, m))
                .collect(),
        });
        if !rung.mutants.contains_key(name) {
            continue;
        }
        let sets = [(&rung.model, &rung.outcome, &rung.mutants)];
        if let (Fate::Killed(kill), _) = judge(name, &sets, limits, verdicts_only) {
            return Some(kill);
        }
    }
    None
}

/// Checks every mutant of each design on each of its bounds. `designs`:
/// per design, its model on each set of bounds (the first is where its
/// mutants are found). Mutants are checked `limits.threads` at a time, each
/// on one thread; the report is the same whatever that number. With
/// `verdicts_only` a mutant is killed only by a changed verdict.
pub fn run<M: ToolModel>(
    designs: &[Vec<M>],
    equivalents: &Equivalents,
    limits: &Limits,
    search_bounds: bool,
    verdicts_only: bool,
) -> Vec<DesignReport> {
    let one = Limits {
        threads: 1,
        ..*limits
    };
    designs
        .iter()
        .map(|models| {
            let first = &models[0];
            let originals: Vec<Outcome<M>> = models
                .iter()
                .map(|m| check(m.clone(), &[], limits))
                .collect();
            let listed = match budget::within(limits, |go_on| first.mutants_within(go_on)) {
                Ok(listed) => listed,
                Err(cut) => {
                    return DesignReport {
                        design: first.variant().to_string(),
                        mutants: Vec::new(),
                        unlisted: Some(cut.describe().to_string()),
                    }
                }
            };
            // The mutants are found on the first bounds (exploring them);
            // on the others each is the same mutation on those bounds.
            let on_bounds: Vec<BTreeMap<String, M>> = models
                .iter()
                .map(|other| {
                    listed
                        .iter()
                        .map(|(n, _, m)| (n.clone(), m.on_bounds_of(other)))
                        .collect()
                })
                .collect();
            let sets: Vec<(&M, &Outcome<M>, &BTreeMap<String, M>)> = models
                .iter()
                .zip(&originals)
                .zip(&on_bounds)
                .map(|((m, o), f)| (m, o, f))
                .collect();
            let ladder = if search_bounds {
                first.ladder()
            } else {
                Vec::new()
            };
            let rungs: Vec<OnceLock<Rung<M>>> = ladder.iter().map(|_| OnceLock::new()).collect();
            let fates = crate::check::map_on_threads(&listed, limits.threads, |(name, _, _)| {
                let (mut fate, given) = judge(name, &sets, &one, verdicts_only);
                if fate == Fate::Survived(None) && !equivalents.reasons.contains_key(name) {
                    fate = Fate::Survived(search(name, &ladder, &rungs, &one, verdicts_only));
                }
                (fate, given)
            });
            let mutants = listed
                .into_iter()
                .zip(fates)
                .map(|((name, change, _), judged)| {
                    let (mut fate, on_given_bounds) = judged;
                    let listed = [
                        (equivalents.reasons.get(&name), "equivalent"),
                        (equivalents.survivors.get(&name), "a known survivor"),
                    ];
                    if let Some((Some(why), listed_as)) = listed.into_iter().find(|l| l.0.is_some())
                    {
                        fate = match fate {
                            Fate::Killed(kill) => Fate::ListedButKilled {
                                listed_as,
                                why: why.clone(),
                                kill,
                            },
                            Fate::Survived(_) if listed_as == "equivalent" => {
                                Fate::Equivalent(why.clone())
                            }
                            Fate::Survived(_) => Fate::Known(why.clone()),
                            other => other,
                        };
                    }
                    MutantReport {
                        name,
                        change,
                        fate,
                        on_given_bounds,
                    }
                })
                .collect();
            DesignReport {
                design: first.variant().to_string(),
                mutants,
                unlisted: None,
            }
        })
        .collect()
}

/// 1 a survivor (a known one too, unless `allow_known`) or a listed mutant
/// killed; 3 a budget ran out (while judging a mutant or listing a
/// design's); else 0.
pub fn exit_code(reports: &[DesignReport], allow_known: bool) -> u8 {
    let fates = || {
        reports
            .iter()
            .flat_map(|r| r.mutants.iter().map(|m| &m.fate))
    };
    let fails = |f: &Fate| match f {
        Fate::Survived(_) | Fate::ListedButKilled { .. } => true,
        Fate::Known(_) => !allow_known,
        _ => false,
    };
    if fates().any(fails) {
        1
    } else if fates().any(|f| matches!(f, Fate::Inconclusive(_)))
        || reports.iter().any(|r| r.unlisted.is_some())
    {
        3
    } else {
        0
    }
}
