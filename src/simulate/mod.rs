//! `slotcheck simulate`: seeded random walks over the same model `check`
//! explores, for bounds too large to exhaust.
//!
//! - **Determinism.** Run `r` draws everything (its swarm bounds and weights,
//!   then every step) from its own ChaCha8 stream: the seed's generator with
//!   stream `r`. A run therefore does not depend on any other run, which is
//!   what makes `--run N` reproduce it alone and `--shard I/N` split the work
//!   with no change to any result. Standard output is a function of the
//!   options alone; timings go to standard error.
//! - **Swarm.** With `--swarm` each run draws its own bounds from ranges and
//!   its own weights over action kinds, so that rare interleavings are not
//!   drowned by common ones; what is model-specific sits behind [`ToolModel`].
//! - **What is reported.** For each design and property: how many runs
//!   violated it and the first (lowest-numbered) run that did, shrunk
//!   (`crate::simulate::shrink`) and saved as an ITF trace for `slotcheck replay`.

//!
//! The room: `mod.rs` the walks (plain and swarm) and one design's
//! simulation; `swarm.rs` what a swarm run draws; `shrink.rs` shortening a
//! counterexample; `trace.rs` saving a path as an ITF trace and what
//! rebuilds its model; `replay.rs` re-running one; `report.rs` the JSON
//! report and the merge of shards; `text.rs` the report as text. It may use
//! `check` (shrinking's last stage), `report` and `models`' trait, never a
//! model by name, a scenario or the command line.

pub mod guided;
pub mod pct;
pub mod replay;
pub mod report;
pub mod shrink;
pub mod swarm;
pub mod text;
pub mod trace;
pub mod walk;

pub use report::{
    merge, merge_named, DesignReport, Report, ShardCover, ViolationReport, WitnessReport,
};
pub use swarm::{plan, swarm_ranges};
pub use trace::{
    bounds_map, bounds_words, check_trace_files, last_state, model_meta, save_trace, trace_text,
};
pub(crate) use walk::discovered;
pub use walk::{walk, walk_from, walk_live, Walk};

use crate::check::budget::Watch;
use crate::check::Limits;
use crate::models::ToolModel;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use shrink::Shrunk;
use stateright::{Expectation, Model, Property};
use std::fmt::Debug;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::Instant;

/// Which runs this machine takes: run `r` belongs to shard `r mod N + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based, as CI matrices count.
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("--shard: `{text}` is not I/N with 1 <= I <= N (e.g. 2/4)");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    pub fn owns(self, run: u64) -> bool {
        run % self.count == self.index - 1
    }
}

/// Everything a simulation is a function of.
#[derive(Clone, Debug)]
pub struct Settings {
    pub seed: u64,
    /// Runs `0..runs`.
    pub runs: u64,
    /// Only this run (it must still belong to the shard).
    pub only_run: Option<u64>,
    /// Steps per walk at most.
    pub depth: usize,
    /// Swarm ranges by bound name; `None`: every run uses the model's bounds
    /// and picks among enabled actions uniformly.
    pub swarm: Option<Vec<(String, RangeInclusive<u32>)>>,
    pub shard: Shard,
    pub shrink: bool,
    /// States the exhaustive stage of shrinking may generate.
    pub shrink_states: usize,
    /// Where counterexamples are saved; `None`: not saved.
    pub out: Option<PathBuf>,
    /// The command's budgets (`--timeout`, `--max-memory`; a signal): the
    /// walks stop when one runs out, and the report says so. Only a cut
    /// run depends on them.
    pub budget: Limits,
    /// Schedule every walk with PCT instead of uniformly (or by swarm
    /// weights); `None`: as before.
    pub pct: Option<PctSettings>,
    /// The liveness phase: after a fault phase of `0..=L` steps (drawn per
    /// run), faults are off and every request (ask) must be settled before
    /// the walk ends (nothing enabled, or `depth` steps); `None`: no
    /// liveness phase.
    pub liveness: Option<usize>,
    /// Coverage-guided runs ([`guided`]): a run may resume from a state an
    /// earlier run reached first. Runs then depend on the runs before them.
    pub guided: bool,
}

impl Settings {
    /// `runs` plain walks of at most `depth` steps from `seed`: the whole
    /// shard, no swarm, no PCT, no liveness phase, no guidance, nothing
    /// shrunk or saved, no budget.
    pub fn new(seed: u64, runs: u64, depth: usize) -> Self {
        Settings {
            seed,
            runs,
            only_run: None,
            depth,
            swarm: None,
            shard: Shard::WHOLE,
            shrink: false,
            shrink_states: 0,
            out: None,
            budget: Limits::default(),
            pct: None,
            liveness: None,
            guided: false,
        }
    }
}

/// The name a liveness violation is reported under.
pub const SETTLES: &str = "settles-after-faults";

/// `--pct DEPTH` and `--pct-horizon STEPS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PctSettings {
    /// Change points per walk, plus one.
    pub depth: u32,
    /// Change points fall on steps `1..=horizon`.
    pub horizon: usize,
}

/// How a walk picks its next action among those enabled.
pub enum Schedule {
    /// Uniformly.
    Uniform,
    /// A kind by its swarm weight, then uniformly within it.
    Weights(Vec<u32>),
    /// By PCT's priorities ([`pct`]).
    Pct(pct::Pct),
}

impl Schedule {
    /// The schedule in words, for a violation's report: what a reader needs
    /// to know of the run beyond its seed and number.
    pub fn describe<M: ToolModel>(&self, model: &M) -> String {
        match self {
            Schedule::Uniform => "uniform".to_string(),
            Schedule::Weights(w) => format!(
                "swarm weights {}",
                model
                    .action_kinds()
                    .iter()
                    .zip(w)
                    .map(|(k, w)| format!("{k} {w}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Schedule::Pct(p) => p.describe(),
        }
    }

    /// The schedule of one run: PCT when asked (its change points drawn
    /// now, after the swarm's draws), else the swarm's weights, if any.
    pub fn of_run(
        pct: Option<PctSettings>,
        weights: Option<Vec<u32>>,
        rng: &mut ChaCha8Rng,
    ) -> Schedule {
        match (pct, weights) {
            (Some(p), weights) => {
                // Half the runs walk as without PCT (uniformly, or by the
                // swarm's weights): the orderings PCT's long stretches make
                // rare are the ones those walks take all the time.
                let depth = rng.random_range(0..=p.depth);
                match (depth, weights) {
                    (0, Some(w)) => Schedule::Weights(w),
                    (0, None) => Schedule::Uniform,
                    (d, _) => Schedule::Pct(pct::Pct::new(d, p.horizon, rng)),
                }
            }
            (None, Some(w)) => Schedule::Weights(w),
            (None, None) => Schedule::Uniform,
        }
    }
}

/// The generator of run `run`: ChaCha8 from `seed`, on stream `run`.
pub fn run_rng(seed: u64, run: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(run);
    rng
}

/// The first violation of a property among the runs done, before shrinking.
struct Found<M: Model> {
    runs: u64,
    first_run: u64,
    model: M,
    init: M::State,
    actions: Vec<M::Action>,
    /// How the run was drawn: its bounds and options, its schedule.
    drawn: String,
    fault_phase: Option<usize>,
}

/// One design's simulation: the report plus the shrunk traces (for stories).
pub struct DesignRun<M: Model> {
    pub report: DesignReport,
    pub shrunk: Vec<Shrunk<M>>,
    /// Traces that could not be saved: the run goes on and its results are
    /// still printed, and the command then exits 2.
    pub write_errors: Vec<String>,
}

/// Timings, which are not part of the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timing {
    pub walk_seconds: f64,
    pub shrink_seconds: f64,
}

/// The runs walked, in order: this shard's; for guided runs every run up
/// to the last reported, since each depends on those before it.
fn walked_runs(settings: &Settings) -> Box<dyn Iterator<Item = u64> + '_> {
    if settings.guided {
        Box::new(0..settings.only_run.map_or(settings.runs, |r| r + 1))
    } else {
        Box::new(runs_of(settings))
    }
}

/// The runs of this shard, in order.
pub fn runs_of(settings: &Settings) -> impl Iterator<Item = u64> + '_ {
    let range = match settings.only_run {
        Some(r) => r..r + 1,
        None => 0..settings.runs,
    };
    range.filter(|&r| settings.shard.owns(r))
}

/// Simulates one model (one design) under `settings`.
pub fn simulate<M: ToolModel>(
    base: &M,
    settings: &Settings,
    timing: &mut Timing,
) -> Result<DesignRun<M>, String> {
    let properties = base.properties();
    let started = Instant::now();
    // One slot per property, and the last for the liveness phase.
    let mut found: Vec<Option<Found<M>>> = (0..=properties.len()).map(|_| None).collect();
    let mut reached: Vec<(u64, Option<u64>)> = vec![(0, None); properties.len()];
    let (mut runs, mut states, mut cut_at_depth) = (0u64, 0u64, 0u64);
    let mut watch = Watch::new(&settings.budget, started);
    let mut cut = None;
    let mut guide = settings.guided.then(guided::Guide::default);
    for run in walked_runs(settings) {
        if let Some(why) = watch.over(0) {
            cut = Some(why);
            break;
        }
        let guided::DrawnRun {
            model,
            schedule,
            walk,
            origin,
        } = guided::draw_and_walk(base, &properties, settings, guide.as_mut(), run)?;
        if !settings.shard.owns(run) || settings.only_run.is_some_and(|r| r != run) {
            // A guided run before `--run N`: walked for what it keeps.
            continue;
        }
        runs += 1;
        cut_at_depth += u64::from(walk.cut_at_depth);
        states += walk.states;
        let liveness = walk.unsettled;
        let broken = walk.violated.iter().copied().chain([liveness]);
        for (k, at) in broken.enumerate() {
            let Some(at) = at else { continue };
            match &mut found[k] {
                Some(f) => f.runs += 1,
                slot => {
                    let mut drawn =
                        format!("{}; {}", bounds_words(&model), schedule.describe(&model));
                    if let Some(f) = walk.fault_phase {
                        drawn.push_str(&format!("; faults off after step {f}"));
                    }
                    if let Some(o) = origin.describe() {
                        drawn.push_str(&format!("; {o}"));
                    }
                    *slot = Some(Found {
                        runs: 1,
                        first_run: run,
                        model: model.clone(),
                        init: walk.init.clone(),
                        actions: walk.actions[..at].to_vec(),
                        drawn,
                        fault_phase: walk.fault_phase,
                    })
                }
            }
        }
        for (k, hit) in walk.reached.iter().enumerate() {
            if *hit {
                reached[k].0 += 1;
                reached[k].1.get_or_insert(run);
            }
        }
    }
    timing.walk_seconds += started.elapsed().as_secs_f64();

    let started = Instant::now();
    let mut violations = Vec::new();
    let mut shrunk_traces = Vec::new();
    let mut write_errors = Vec::new();
    for (k, f) in found.into_iter().enumerate() {
        let Some(f) = f else { continue };
        let liveness = k == properties.len();
        let name = if liveness {
            SETTLES
        } else {
            properties[k].name
        };
        // A liveness violation rests on the drawn fault phase and bound,
        // which shrinking's other bounds do not keep: it is told as found.
        let shrunk = if settings.shrink && !liveness {
            shrink::shrink(
                &f.model,
                &f.init,
                &f.actions,
                name,
                settings.shrink_states,
                &settings.budget,
            )
        } else {
            Shrunk::unshrunk(&f.model, &f.init, &f.actions)
        };
        let init = shrunk.init.clone();
        let last = last_state(&shrunk.model, &init, &shrunk.actions);
        let trace = match &settings.out {
            Some(dir) => {
                let meta = json!({
                    "property": name,
                    "seed": settings.seed,
                    "run": f.first_run,
                    "original_steps": f.actions.len(),
                    "command": "simulate",
                });
                let file = format!(
                    "{}-{}-seed{}-run{}.itf.json",
                    base.variant(),
                    name,
                    settings.seed,
                    f.first_run
                );
                match save_trace(&dir.join(file), &shrunk.model, meta, &init, &shrunk.actions) {
                    Ok(path) => Some(path),
                    Err(e) => {
                        write_errors.push(e);
                        None
                    }
                }
            }
            None => None,
        };
        violations.push(ViolationReport {
            property: name.to_string(),
            runs: f.runs,
            first_run: f.first_run,
            seed: settings.seed,
            original_steps: f.actions.len(),
            shrunk_steps: shrunk.actions.len(),
            shortest_by_search: shrunk.by_search,
            bounds: bounds_map(&shrunk.model),
            steps: shrunk.model.words(&init, &shrunk.actions),
            explanation: if liveness {
                let off = f.fault_phase.unwrap_or(0);
                let len = f.actions.len();
                let when = if len > off {
                    format!(
                        "faults were off after step {off}, and the walk ended {} later",
                        crate::report::count((len - off) as u64, "step")
                    )
                } else {
                    format!("the walk ended at step {len}, before its faults were off (after step {off})")
                };
                format!(
                    "{SETTLES} violated: {when}; {}",
                    shrunk.model.unsettled(&last)
                )
            } else {
                shrunk.model.explain(name, &last)
            },
            trace: trace.map(|p| p.display().to_string()),
            drawn: f.drawn.clone(),
        });
        shrunk_traces.push(shrunk);
    }
    timing.shrink_seconds += started.elapsed().as_secs_f64();
    // By name, as `merge` sorts them, so that merged shards equal one run.
    let mut pairs: Vec<_> = violations.into_iter().zip(shrunk_traces).collect();
    pairs.sort_by(|(a, _), (b, _)| a.property.cmp(&b.property));
    let (violations, shrunk_traces): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
    let witnesses = properties
        .iter()
        .zip(&reached)
        .filter(|(p, _)| p.expectation == Expectation::Sometimes)
        .map(|(p, &(runs, first_run))| WitnessReport {
            property: p.name.to_string(),
            runs,
            first_run,
        })
        .collect();
    Ok(DesignRun {
        report: DesignReport {
            design: base.variant().to_string(),
            runs,
            states,
            cut_at_depth,
            violations,
            witnesses,
            cut: cut.map(|c| c.describe().to_string()),
        },
        shrunk: shrunk_traces,
        write_errors,
    })
}

/// A run number and its walk up to a violation.
pub type FirstViolation<M> = (u64, Vec<<M as Model>::Action>);

/// The first run of `settings` (its seed, swarm and PCT; not its run
/// count) whose walk violates `property`, among runs `0..max_runs`: the run
/// number and the walk up to the violation. What `simulate --bench` and the
/// test of the simulator's power count.
pub fn first_violation<M: ToolModel>(
    base: &M,
    property: &str,
    settings: &Settings,
    max_runs: u64,
) -> Result<Option<FirstViolation<M>>, String> {
    let properties: Vec<Property<M>> = base
        .properties()
        .into_iter()
        .filter(|p| p.name == property)
        .collect();
    if properties.is_empty() {
        return Err(format!("no property `{property}`"));
    }
    let mut guide = settings.guided.then(guided::Guide::default);
    let settings = &Settings {
        liveness: None,
        ..settings.clone()
    };
    // The command's budgets, between runs: a cut hunt finds nothing, and
    // its caller, seeing the budget gone, does not count it.
    let mut watch = crate::check::budget::Watch::new(&settings.budget, std::time::Instant::now());
    for run in 0..max_runs {
        if watch.over(0).is_some() {
            return Ok(None);
        }
        let w = guided::draw_and_walk(base, &properties, settings, guide.as_mut(), run)?.walk;
        if let Some(at) = w.violated[0] {
            return Ok(Some((run, w.actions[..at].to_vec())));
        }
    }
    Ok(None)
}

/// Simulates each model and puts the designs' reports together.
pub fn simulate_all<M: ToolModel>(
    models: &[M],
    settings: &Settings,
    timing: &mut Timing,
) -> Result<(Report, Vec<DesignRun<M>>), String> {
    let first = models.first().ok_or("no design to simulate")?;
    let mut runs = Vec::new();
    for model in models {
        runs.push(simulate(model, settings, timing)?);
    }
    let report = Report {
        model: first.model_name().to_string(),
        seed: settings.seed,
        runs: settings.runs,
        only_run: settings.only_run,
        depth: settings.depth,
        swarm: settings.swarm.as_ref().map(|ranges| {
            ranges
                .iter()
                .map(|(n, r)| (n.clone(), [*r.start(), *r.end()]))
                .collect()
        }),
        bounds: bounds_map(first),
        options: first.option_names().iter().map(|s| s.to_string()).collect(),
        shrink: settings.shrink,
        pct: settings.pct.map(|p| [p.depth as usize, p.horizon]),
        guided: settings.guided,
        shard: (settings.shard != Shard::WHOLE).then(|| ShardCover {
            of: settings.shard.count,
            covered: vec![settings.shard.index],
        }),
        designs: runs.iter().map(|r| r.report.clone()).collect(),
    };
    Ok((report, runs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotcheck_models::stovepipe::{Bounds, Stovepipe, DESIGNS};

    #[test]
    fn the_shards_of_a_run_range_are_disjoint_and_cover_it() {
        let shards: Vec<Shard> = (1..=4)
            .map(|i| Shard::parse(&format!("{i}/4")).unwrap())
            .collect();
        for run in 0..100 {
            assert_eq!(shards.iter().filter(|s| s.owns(run)).count(), 1);
        }
        for bad in ["0/4", "5/4", "1/0", "2", "a/b"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn swarm_ranges_are_checked_against_the_model() {
        let model = Stovepipe::new(DESIGNS[0], Bounds::default());
        let ranges = swarm_ranges(&model, &["stalls=0".into(), "requests=2..=5".into()]).unwrap();
        assert!(ranges.contains(&("stalls".to_string(), 0..=0)));
        assert!(ranges.contains(&("requests".to_string(), 2..=5)));
        for bad in ["requests=0", "nothing=1", "crashes=3..=1", "stalls"] {
            assert!(swarm_ranges(&model, &[bad.to_string()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_kind_weighted_zero_is_never_taken_while_another_kind_is_enabled() {
        let model = Stovepipe::new(
            DESIGNS[0],
            Bounds {
                crashes: 4,
                stalls: 2,
                ..Bounds::default()
            },
        );
        let properties = model.properties();
        // arrive, deliver, step, finish-build; no crash, no stall.
        let weights = [1, 1, 1, 1, 0, 0];
        let mut faults = 0;
        for run in 0..200 {
            let mut rng = run_rng(1, run);
            let mut schedule = Schedule::Weights(weights.to_vec());
            let w = walk(&model, &properties, &mut schedule, 500, &mut rng);
            faults += w.actions.iter().filter(|a| a.is_fault()).count();
        }
        assert_eq!(faults, 0);
        // Uniform walks on the same model do crash.
        let mut rng = run_rng(1, 0);
        let crashes: usize = (0..200)
            .map(|_| walk(&model, &properties, &mut Schedule::Uniform, 500, &mut rng))
            .map(|w| w.actions.iter().filter(|a| a.is_fault()).count())
            .sum();
        assert!(crashes > 0);
    }

    #[test]
    fn a_run_depends_on_the_seed_and_its_index_alone() {
        let model = Stovepipe::new(DESIGNS[1], Bounds::default());
        let properties = model.properties();
        let actions = |seed, run| {
            walk(
                &model,
                &properties,
                &mut Schedule::Uniform,
                500,
                &mut run_rng(seed, run),
            )
            .actions
        };
        assert_eq!(actions(3, 7), actions(3, 7));
        let distinct: std::collections::BTreeSet<_> = (0..20)
            .map(|run| format!("{:?}", actions(3, run)))
            .collect();
        assert!(distinct.len() > 10, "runs of one seed differ");
        assert_ne!(actions(3, 7), actions(4, 7));
    }

    #[test]
    fn merge_refuses_reports_of_other_options() {
        let model = Stovepipe::new(DESIGNS[0], Bounds::default());
        let settings = |seed, shard: &str| Settings {
            shard: Shard::parse(shard).unwrap(),
            ..Settings::new(seed, 20, 100)
        };
        let report = |seed, shard| {
            simulate_all(&[model], &settings(seed, shard), &mut Timing::default())
                .unwrap()
                .0
        };
        assert!(merge(&[report(1, "1/2"), report(2, "2/2")]).is_err());
        assert!(merge(&[report(1, "1/2"), report(1, "1/2")]).is_err());
        let whole = merge(&[report(1, "2/2"), report(1, "1/2")]).unwrap();
        assert_eq!(whole, report(1, "1/1"));
    }
}
