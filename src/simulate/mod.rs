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
//!   drowned by common ones; what is model-specific sits behind [`Simulated`].
//! - **What is reported.** For each design and property: how many runs
//!   violated it and the first (lowest-numbered) run that did, shrunk
//!   (`crate::simulate::shrink`) and saved as an ITF trace for `slotcheck replay`.

pub mod replay;
pub mod shrink;

use crate::check::{check, Limits, Verdict};
use crate::report;
use crate::report::itf;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value as Json};
use shrink::Shrunk;
use slotcheck_models::stovepipe::{
    design_named, Action, Bounds, Stovepipe, BUILDS_WITHIN_LIMIT, COUNT_NOT_HIGH, COUNT_NOT_LOW,
    DESIGNS, NO_WEDGE,
};
use slotcheck_models::{Narrated, Packed};
use stateright::{Expectation, Model, Property};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What the simulator, the shrinker and replay need from a model beyond
/// stateright's [`Model`] and [`Narrated`]: its bounds by name (to draw,
/// lower and record them), the kind of each action (for swarm weights), and
/// how to rebuild it from a trace's `#meta`. A second model implements this
/// and a line in `crate::simulate::replay::replay_document`.
pub trait Simulated:
    Packed
    + Narrated<
        State: Clone + Eq + Hash + Debug + Send + Sync + 'static,
        Action: Clone + PartialEq + Debug + Send + Sync + 'static,
    > + Clone
    + Send
    + Sync
    + 'static
{
    /// `stovepipe`: the `model` field of a trace's `#meta`.
    fn model_name(&self) -> &'static str;
    /// The design (or variant) of the model: `claim-first`.
    fn variant(&self) -> &'static str;
    /// The kinds of actions swarm weights are drawn for.
    fn action_kinds(&self) -> &'static [&'static str];
    /// The index in [`Self::action_kinds`] of an action.
    fn action_kind(&self, action: &Self::Action) -> usize;
    /// Every bound by name, with the range a swarm run draws it from.
    fn swarm_ranges(&self) -> Vec<(&'static str, RangeInclusive<u32>)>;
    /// Every bound by name, with this model's value.
    fn bound_values(&self) -> Vec<(&'static str, u32)>;
    /// The same model with the named bounds changed; an error when a value is
    /// out of the model's range.
    fn with_bounds(&self, values: &[(&str, u32)]) -> Result<Self, String>;
    /// The model's options by name (`split-read`).
    fn option_names(&self) -> Vec<&'static str>;
    /// The model a trace's `#meta` describes (`design`, `bounds`, `options`).
    fn from_meta(meta: &Map<String, Json>) -> Result<Self, String>;
    /// The initial state a walk starts from: uniform among the model's
    /// initial states, drawing nothing when there is one (so that such a
    /// model's walks stay as they were). A model with many overrides this to
    /// draw one without listing them all.
    fn pick_init(&self, rng: &mut ChaCha8Rng) -> Self::State {
        let mut inits = self.init_states();
        let k = if inits.len() == 1 {
            0
        } else {
            rng.random_range(0..inits.len())
        };
        inits.swap_remove(k)
    }
    /// The initial state of this model that keeps what the path needs of
    /// `like`, an initial state of the same model on other bounds (a
    /// builder's clock offset): where shrinking starts once it has lowered a
    /// bound; `None` when this model has no such state. Default: the first.
    fn init_like(&self, _like: &Self::State) -> Option<Self::State> {
        self.init_states().into_iter().next()
    }
    /// Scripts with one actor taken out whole (a worker, a request), renamed
    /// so that the rest still parses, each with the model to run it on (a
    /// request taken out lowers the request bound, or a wedge that needs
    /// every request to have arrived is lost): what removing chunks of
    /// steps cannot do when later steps name actors by number. Default:
    /// none.
    fn removals(&self, _script: &[String]) -> Vec<(Self, Vec<String>)> {
        Vec::new()
    }
}

/// `{"model", "design", "bounds": {name: value}, "options"}`: what rebuilds
/// a model from a trace.
pub fn model_meta<M: Simulated>(model: &M) -> Json {
    json!({
        "model": model.model_name(),
        "design": model.variant(),
        "bounds": bounds_map(model),
        "options": model.option_names(),
    })
}

fn bounds_map<M: Simulated>(model: &M) -> BTreeMap<String, u32> {
    model
        .bound_values()
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
}

/// The bounds a trace's `#meta` records, applied to `model` by name, and its
/// options: what every model's [`Simulated::from_meta`] reads.
pub fn meta_bounds_and_options<M: Simulated>(
    model: &M,
    meta: &Map<String, Json>,
) -> Result<(M, Vec<String>), String> {
    let bounds = meta
        .get("bounds")
        .and_then(Json::as_object)
        .ok_or("`#meta` has no `bounds` object")?;
    let mut values = Vec::new();
    for (name, _) in model.bound_values() {
        let value = bounds
            .get(name)
            .and_then(Json::as_u64)
            .ok_or_else(|| format!("`#meta.bounds` has no number `{name}`"))?;
        values.push((
            name,
            u32::try_from(value).map_err(|_| format!("{name} too large"))?,
        ));
    }
    let model = model.with_bounds(&values)?;
    let mut options = Vec::new();
    for name in meta
        .get("options")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let name = name.as_str().ok_or("`#meta.options` holds a non-string")?;
        options.push(name.to_string());
    }
    Ok((model, options))
}

/// `requests 2, max_concurrent 1, ...`.
pub fn bounds_words<M: Simulated>(model: &M) -> String {
    let mut words: Vec<String> = model
        .bound_values()
        .iter()
        .map(|(name, value)| format!("{name} {value}"))
        .collect();
    words.extend(model.option_names().iter().map(|o| format!("option {o}")));
    words.join(", ")
}

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
}

/// The generator of run `run`: ChaCha8 from `seed`, on stream `run`.
pub fn run_rng(seed: u64, run: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(run);
    rng
}

/// The top of a swarm weight: each action kind gets `0..=MAX_WEIGHT`.
const MAX_WEIGHT: u32 = 8;

/// What run `run` draws before its first step: its model (swarm bounds) and
/// its weights over action kinds. Plain runs draw nothing.
pub fn plan<M: Simulated>(
    base: &M,
    swarm: Option<&[(String, RangeInclusive<u32>)]>,
    rng: &mut ChaCha8Rng,
) -> Result<(M, Option<Vec<u32>>), String> {
    let Some(ranges) = swarm else {
        return Ok((base.clone(), None));
    };
    let values: Vec<(&str, u32)> = ranges
        .iter()
        .map(|(name, range)| (name.as_str(), rng.random_range(range.clone())))
        .collect();
    let model = base.with_bounds(&values)?;
    let weights = (0..base.action_kinds().len())
        .map(|_| rng.random_range(0..=MAX_WEIGHT))
        .collect();
    Ok((model, Some(weights)))
}

/// One walk: its steps, and where each property was first violated or
/// reached (the number of steps before that state).
pub struct Walk<M: Model> {
    /// The initial state it started from.
    pub init: M::State,
    pub actions: Vec<M::Action>,
    pub states: u64,
    /// Whether the walk stopped at `depth` with actions still enabled.
    pub cut_at_depth: bool,
    pub violated: Vec<Option<usize>>,
    pub reached: Vec<bool>,
}

/// Whether property `p` is broken (an `always`) or met (a `sometimes`) in `s`.
pub(crate) fn discovered<M: Model>(model: &M, p: &Property<M>, s: &M::State) -> bool {
    let holds = (p.condition)(model, s);
    match p.expectation {
        Expectation::Always => !holds,
        Expectation::Sometimes => holds,
        // `eventually` is judged on whole paths; walks do not judge it.
        Expectation::Eventually => false,
    }
}

/// A random walk from the model's first initial state, checking every
/// property on every state, until no action is enabled or `depth` steps.
pub fn walk<M: Simulated>(
    model: &M,
    properties: &[Property<M>],
    weights: Option<&[u32]>,
    depth: usize,
    rng: &mut ChaCha8Rng,
) -> Walk<M> {
    let init = model.pick_init(rng);
    let mut state = init.clone();
    let mut walk = Walk {
        init,
        actions: Vec::new(),
        states: 1,
        cut_at_depth: false,
        violated: vec![None; properties.len()],
        reached: vec![false; properties.len()],
    };
    let judge = |walk: &mut Walk<M>, state: &M::State, at: usize| {
        for (k, p) in properties.iter().enumerate() {
            let open = match p.expectation {
                Expectation::Always => walk.violated[k].is_none(),
                _ => !walk.reached[k],
            };
            if open && discovered(model, p, state) {
                match p.expectation {
                    Expectation::Always => walk.violated[k] = Some(at),
                    _ => walk.reached[k] = true,
                }
            }
        }
    };
    judge(&mut walk, &state, 0);
    let mut enabled = Vec::new();
    let mut kind_weight = vec![0u32; model.action_kinds().len()];
    for step in 1..=depth {
        enabled.clear();
        model.actions(&state, &mut enabled);
        if enabled.is_empty() {
            break;
        }
        let pick = choose(model, &enabled, weights, &mut kind_weight, rng);
        let action = enabled.swap_remove(pick);
        state = model
            .next_state(&state, action.clone())
            .expect("an enabled action has a next state");
        walk.actions.push(action);
        walk.states += 1;
        judge(&mut walk, &state, step);
    }
    if walk.actions.len() == depth {
        enabled.clear();
        model.actions(&state, &mut enabled);
        walk.cut_at_depth = !enabled.is_empty();
    }
    walk
}

/// The index of the next action: uniform without weights; with weights, a
/// kind by its weight among the kinds enabled, then uniform within it (when
/// every enabled kind weighs 0, uniform, so that no walk stops early).
fn choose<M: Simulated>(
    model: &M,
    enabled: &[M::Action],
    weights: Option<&[u32]>,
    kind_weight: &mut [u32],
    rng: &mut ChaCha8Rng,
) -> usize {
    let Some(weights) = weights else {
        return rng.random_range(0..enabled.len());
    };
    kind_weight.fill(0);
    for a in enabled {
        let k = model.action_kind(a);
        kind_weight[k] = weights[k];
    }
    let total: u32 = kind_weight.iter().sum();
    if total == 0 {
        return rng.random_range(0..enabled.len());
    }
    let mut ticket = rng.random_range(0..total);
    let kind = kind_weight
        .iter()
        .position(|&w| {
            if ticket < w {
                true
            } else {
                ticket -= w;
                false
            }
        })
        .expect("the ticket falls in some kind");
    let of_kind = enabled
        .iter()
        .filter(|a| model.action_kind(a) == kind)
        .count();
    let nth = rng.random_range(0..of_kind);
    enabled
        .iter()
        .enumerate()
        .filter(|(_, a)| model.action_kind(a) == kind)
        .nth(nth)
        .map(|(i, _)| i)
        .expect("the kind is enabled")
}

// ---------------------------------------------------------------- reports

/// The JSON report of `simulate --json`: a function of the options alone
/// (no timings), so that equal options give equal bytes and `merge` of the
/// shards gives the single run's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// `null` when every run is covered; else the shards covered, of how many.
    pub shard: Option<ShardCover>,
    pub designs: Vec<DesignReport>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardCover {
    pub of: u64,
    pub covered: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WitnessReport {
    pub property: String,
    pub runs: u64,
    pub first_run: Option<u64>,
}

/// The first violation of a property among the runs done, before shrinking.
struct Found<M: Model> {
    runs: u64,
    first_run: u64,
    model: M,
    init: M::State,
    actions: Vec<M::Action>,
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

/// The runs of this shard, in order.
pub fn runs_of(settings: &Settings) -> impl Iterator<Item = u64> + '_ {
    let range = match settings.only_run {
        Some(r) => r..r + 1,
        None => 0..settings.runs,
    };
    range.filter(|&r| settings.shard.owns(r))
}

/// Simulates one model (one design) under `settings`.
pub fn simulate<M: Simulated>(
    base: &M,
    settings: &Settings,
    timing: &mut Timing,
) -> Result<DesignRun<M>, String> {
    let properties = base.properties();
    let started = Instant::now();
    let mut found: Vec<Option<Found<M>>> = properties.iter().map(|_| None).collect();
    let mut reached: Vec<(u64, Option<u64>)> = vec![(0, None); properties.len()];
    let (mut runs, mut states, mut cut_at_depth) = (0u64, 0u64, 0u64);
    for run in runs_of(settings) {
        let mut rng = run_rng(settings.seed, run);
        let (model, weights) = plan(base, settings.swarm.as_deref(), &mut rng)?;
        let walk = walk(
            &model,
            &properties,
            weights.as_deref(),
            settings.depth,
            &mut rng,
        );
        runs += 1;
        cut_at_depth += u64::from(walk.cut_at_depth);
        states += walk.states;
        for (k, at) in walk.violated.iter().enumerate() {
            let Some(at) = *at else { continue };
            match &mut found[k] {
                Some(f) => f.runs += 1,
                slot => {
                    *slot = Some(Found {
                        runs: 1,
                        first_run: run,
                        model: model.clone(),
                        init: walk.init.clone(),
                        actions: walk.actions[..at].to_vec(),
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
        let name = properties[k].name;
        let shrunk = if settings.shrink {
            shrink::shrink(&f.model, &f.init, &f.actions, name, settings.shrink_states)
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
            explanation: shrunk.model.explain(name, &last),
            trace: trace.map(|p| p.display().to_string()),
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
        },
        shrunk: shrunk_traces,
        write_errors,
    })
}

/// The state a path ends in.
pub fn last_state<M: Model>(model: &M, init: &M::State, actions: &[M::Action]) -> M::State
where
    M::State: Clone,
    M::Action: Clone,
{
    actions.iter().fold(init.clone(), |s, a| {
        model
            .next_state(&s, a.clone())
            .expect("every action of a path has a next state")
    })
}

/// A path as the text of an ITF trace whose `#meta` rebuilds the model
/// ([`model_meta`], the one bounds encoding every trace writer uses and
/// [`Simulated::from_meta`] reads), plus `extra` (property, seed, run...).
pub fn trace_text<M: Simulated>(
    model: &M,
    extra: Json,
    init: &M::State,
    actions: &[M::Action],
) -> Vec<u8> {
    let mut meta = model_meta(model);
    if let (Json::Object(meta), Json::Object(extra)) = (&mut meta, extra) {
        meta.extend(extra);
    }
    let document = itf::trace(model, meta, init, actions);
    (serde_json::to_string_pretty(&document).expect("JSON") + "\n").into_bytes()
}

/// Saves a path as an ITF trace ([`trace_text`]).
pub fn save_trace<M: Simulated>(
    path: &Path,
    model: &M,
    extra: Json,
    init: &M::State,
    actions: &[M::Action],
) -> Result<PathBuf, String> {
    itf::write_atomically(path, &trace_text(model, extra, init, actions))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path.to_path_buf())
}

/// Each violation of an exhaustive check as an ITF trace in `dir`, to be
/// written once the results are printed.
pub fn check_trace_files<M: Simulated>(
    dir: &Path,
    model: &M,
    outcome: &crate::check::Outcome<M>,
) -> Vec<(PathBuf, Vec<u8>)> {
    outcome
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Violated)
        .map(|r| {
            let trace = r.trace.as_ref().expect("a violation has a trace");
            let file = dir.join(format!("{}-{}-check.itf.json", model.variant(), r.name));
            let meta = json!({ "property": r.name, "command": "check" });
            (file, trace_text(model, meta, &trace.init, &trace.actions))
        })
        .collect()
}

/// Parses `NAME=LO..=HI` (or `NAME=N`) against the model's swarm ranges and
/// returns them all, overrides applied.
pub fn swarm_ranges<M: Simulated>(
    model: &M,
    overrides: &[String],
) -> Result<Vec<(String, RangeInclusive<u32>)>, String> {
    let mut ranges: Vec<(String, RangeInclusive<u32>)> = model
        .swarm_ranges()
        .into_iter()
        .map(|(n, r)| (n.to_string(), r))
        .collect();
    for text in overrides {
        let bad = || format!("--range: `{text}` is not NAME=LOW..=HIGH or NAME=N");
        let (name, range) = text.split_once('=').ok_or_else(bad)?;
        let (low, high) = match range.split_once("..=") {
            Some((l, h)) => (l, h),
            None => (range, range),
        };
        let low: u32 = low.trim().parse().map_err(|_| bad())?;
        let high: u32 = high.trim().parse().map_err(|_| bad())?;
        if low > high {
            return Err(format!(
                "--range {text}: the range is empty ({low} is above {high}); write LOW..=HIGH with LOW <= HIGH"
            ));
        }
        let entry = ranges
            .iter_mut()
            .find(|(n, _)| n == name.trim())
            .ok_or_else(|| {
                let known: Vec<&str> = model.swarm_ranges().iter().map(|(n, _)| *n).collect();
                format!(
                    "--range: unknown bound `{name}` (known: {})",
                    known.join(", ")
                )
            })?;
        entry.1 = low..=high;
    }
    // Both ends must make a valid model.
    for ends in [
        ranges
            .iter()
            .map(|(n, r)| (n.as_str(), *r.start()))
            .collect::<Vec<_>>(),
        ranges.iter().map(|(n, r)| (n.as_str(), *r.end())).collect(),
    ] {
        model
            .with_bounds(&ends)
            .map_err(|e| format!("--range: {e}"))?;
    }
    Ok(ranges)
}

/// Simulates each model and puts the designs' reports together.
pub fn simulate_all<M: Simulated>(
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
        shard: (settings.shard != Shard::WHOLE).then(|| ShardCover {
            of: settings.shard.count,
            covered: vec![settings.shard.index],
        }),
        designs: runs.iter().map(|r| r.report.clone()).collect(),
    };
    Ok((report, runs))
}

/// Combines shard reports into one: the same as the single run's once every
/// shard is in. The shards must share every option.
pub fn merge(reports: &[Report]) -> Result<Report, String> {
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
                "merge: report {} was made with other options (seed, runs, depth, bounds, swarm, shrink) than report 1",
                i + 1
            ));
        }
        let cover = r.shard.clone().unwrap_or(ShardCover {
            of: 1,
            covered: vec![1],
        });
        if cover.of != of {
            return Err(format!(
                "merge: report {} splits the runs into {} shards, report 1 into {of}",
                i + 1,
                cover.of
            ));
        }
        for s in cover.covered {
            if covered.contains(&s) {
                return Err(format!("merge: shard {s}/{of} is given twice"));
            }
            covered.push(s);
        }
        let designs: Vec<&str> = r.designs.iter().map(|d| d.design.as_str()).collect();
        let expected: Vec<&str> = first.designs.iter().map(|d| d.design.as_str()).collect();
        if designs != expected {
            return Err(format!("merge: report {} has other designs", i + 1));
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

// ---------------------------------------------------------------- text

/// `--seed S --run N ...`: the options that reproduce one run.
pub fn reproduce_command(settings: &Settings, design: &str, run: u64, model_flags: &str) -> String {
    let mut command = format!(
        "slotcheck simulate --design {design} --seed {} --run {run} --depth {}",
        settings.seed, settings.depth
    );
    if let Some(ranges) = &settings.swarm {
        command.push_str(" --swarm");
        for (name, range) in ranges {
            command.push_str(&format!(
                " --range {name}={}..={}",
                range.start(),
                range.end()
            ));
        }
    }
    if !model_flags.is_empty() {
        command.push(' ');
        command.push_str(model_flags);
    }
    command
}

/// The report as text, each violation told as its shrunk story.
pub fn report_text<M: Simulated>(
    report: &Report,
    runs: &[DesignRun<M>],
    settings: &Settings,
    model_flags: &str,
) -> String {
    let mut out = String::new();
    let what = match &report.swarm {
        Some(ranges) => format!(
            "swarm ({})",
            ranges
                .iter()
                .map(|(n, [l, h])| format!("{n} {l}..={h}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => report
            .bounds
            .iter()
            .map(|(n, v)| format!("{n} {v}"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let range = match report.only_run {
        Some(r) => format!("run {r}"),
        None => format!("runs 0..{}", report.runs),
    };
    out.push_str(&format!(
        "slotcheck simulate: {}, seed {}, {range}, depth {}, {what}\n",
        report.model, report.seed, report.depth
    ));
    if settings.shard != Shard::WHOLE {
        out.push_str(&format!(
            "shard {}/{}: the runs r with r mod {} = {}\n",
            settings.shard.index,
            settings.shard.count,
            settings.shard.count,
            settings.shard.index - 1
        ));
    }
    for run in runs {
        let d = &run.report;
        out.push_str(&format!(
            "\n{}: {}, {}{}\n",
            d.design,
            report::count(d.runs, "run"),
            report::count(d.states, "state"),
            if d.cut_at_depth > 0 {
                format!(", {} cut at --depth", report::count(d.cut_at_depth, "walk"))
            } else {
                String::new()
            }
        ));
        for v in &d.violations {
            out.push_str(&format!(
                "  {:<27}violated in {} (first: run {}, {}, shrunk to {})\n",
                v.property,
                report::count(v.runs, "run"),
                v.first_run,
                report::count(v.original_steps as u64, "step"),
                v.shrunk_steps
            ));
        }
        if d.violations.is_empty() {
            out.push_str("  no property violated\n");
        }
        let witnesses: Vec<String> = d
            .witnesses
            .iter()
            .map(|w| {
                if w.runs == 0 {
                    format!("{} NOT reached", w.property)
                } else {
                    format!("{} in {}", w.property, report::count(w.runs, "run"))
                }
            })
            .collect();
        out.push_str(&format!("  witnesses: {}\n", witnesses.join(", ")));
    }
    for run in runs {
        for (v, shrunk) in run.report.violations.iter().zip(&run.shrunk) {
            let steps = shrunk.model.tell(&shrunk.init, &shrunk.actions);
            out.push_str(&format!(
                "\n{} {}: seed {}, run {}; {}, shrunk to {}{}\n",
                run.report.design,
                v.property,
                v.seed,
                v.first_run,
                report::count(v.original_steps as u64, "step"),
                v.shrunk_steps,
                if v.shortest_by_search {
                    " (the shortest on these bounds)"
                } else {
                    ""
                }
            ));
            out.push_str(&format!("  bounds: {}\n", bounds_words(&shrunk.model)));
            out.push_str(&format!(
                "  reproduce: {}\n",
                reproduce_command(settings, &run.report.design, v.first_run, model_flags)
            ));
            if let Some(trace) = &v.trace {
                out.push_str(&format!("  replay: slotcheck replay {trace}\n"));
            }
            out.push_str(&report::story_text(&steps, &v.explanation));
        }
    }
    out
}

/// `1 000 runs in 0.52 s: 1 923 runs/s, ...` for standard error.
pub fn timing_line(report: &Report, timing: &Timing) -> String {
    let runs: u64 = report.designs.iter().map(|d| d.runs).sum();
    let states: u64 = report.designs.iter().map(|d| d.states).sum();
    let per = |n: u64| {
        if timing.walk_seconds > 0.0 {
            n as f64 / timing.walk_seconds
        } else {
            0.0
        }
    };
    format!(
        "simulate: {}, {} in {:.2} s ({:.0} runs/s, {:.0} states/s); shrinking {:.2} s",
        report::count(runs, "run"),
        report::count(states, "state"),
        timing.walk_seconds,
        per(runs),
        per(states),
        timing.shrink_seconds
    )
}

// ---------------------------------------------------------------- CLI

/// `simulate`'s own flags; the bounds are `check`'s.
#[derive(clap::Args, Clone, Debug)]
pub struct SimulateArgs {
    /// The design to simulate (repeatable); default: every design of the model.
    #[arg(long, value_name = "DESIGN")]
    pub design: Vec<String>,
    /// The seed every run's generator derives from (printed in every report).
    #[arg(long, value_name = "S", default_value_t = 0, value_parser = crate::report::whole(0u64, None))]
    pub seed: u64,
    /// Runs 0..N.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = crate::report::whole(1u64, None))]
    pub runs: u64,
    /// Only run N (reproduces it exactly, with the same other options).
    #[arg(long, value_name = "N", value_parser = crate::report::whole(0u64, None))]
    pub run: Option<u64>,
    /// Steps per walk at most (a walk also ends where nothing is enabled).
    #[arg(long, value_name = "STEPS", default_value_t = 500, value_parser = crate::report::whole(1usize, None))]
    pub depth: usize,
    /// Each run draws its own bounds and weights over action kinds.
    #[arg(long)]
    pub swarm: bool,
    /// A swarm range (repeatable): NAME=LOW..=HIGH or NAME=N, e.g. stalls=0.
    #[arg(long, value_name = "NAME=LOW..=HIGH", requires = "swarm")]
    pub range: Vec<String>,
    /// Take the runs r with r mod N = I-1 (1 <= I <= N).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Show the walks' counterexamples as found, unshrunk.
    #[arg(long)]
    pub no_shrink: bool,
    /// States the exhaustive stage of shrinking may generate.
    #[arg(long, value_name = "N", default_value_t = 50_000, value_parser = crate::report::whole(0usize, None))]
    pub shrink_states: usize,
    /// Where counterexamples are saved as ITF traces.
    #[arg(long, value_name = "DIR", default_value = "slotcheck-traces")]
    pub out: PathBuf,
    /// Do not save counterexamples.
    #[arg(long)]
    pub no_save: bool,
    // `--json` (the report as JSON: input for `slotcheck merge`) and `--json-out FILE`.
    #[command(flatten)]
    pub json: crate::report::JsonArgs,
    /// Measure runs per second and time to first violation of each claim.
    #[arg(long)]
    pub bench: bool,
}

/// `slotcheck simulate` of `models` (one per design, on the bounds and
/// options given; `--bench` is the caller's). `model_flags` are the model's
/// flags as given, for reproduction commands.
pub fn run_cli<M: Simulated>(
    models: &[M],
    model_flags: &str,
    args: &SimulateArgs,
) -> Result<u8, String> {
    let swarm = if args.swarm {
        Some(swarm_ranges(
            models.first().ok_or("no design to simulate")?,
            &args.range,
        )?)
    } else {
        None
    };
    let settings = Settings {
        seed: args.seed,
        runs: args.runs,
        only_run: args.run,
        depth: args.depth,
        swarm,
        shard: match &args.shard {
            Some(text) => Shard::parse(text)?,
            None => Shard::WHOLE,
        },
        shrink: !args.no_shrink,
        shrink_states: args.shrink_states,
        out: (!args.no_save).then(|| args.out.clone()),
    };
    if runs_of(&settings).next().is_none() {
        let which = match settings.only_run {
            Some(r) => format!("run {r}"),
            None => format!("runs 0..{}", settings.runs),
        };
        return Err(format!(
            "--shard {}/{}: no run of {which} belongs to it (run r belongs to shard r mod {} + 1)",
            settings.shard.index, settings.shard.count, settings.shard.count
        ));
    }
    let mut outputs = Vec::new();
    if let Some(dir) = &settings.out {
        outputs.push(itf::Output::dir("--out", dir));
    }
    if let Some(file) = &args.json.json_out {
        outputs.push(itf::Output::file("--json-out", file));
    }
    itf::check_outputs(&outputs, &[])?;
    let mut timing = Timing::default();
    let (report, runs) = simulate_all(models, &settings, &mut timing)?;
    let json = serde_json::to_string_pretty(&report).expect("JSON") + "\n";
    if args.json.json {
        print!("{json}");
    } else {
        print!("{}", report_text(&report, &runs, &settings, model_flags));
    }
    eprintln!("{}", timing_line(&report, &timing));
    let mut errors: Vec<String> = runs.iter().flat_map(|r| r.write_errors.clone()).collect();
    if let Some(file) = &args.json.json_out {
        if let Err(e) = itf::write_reports(&[(file.clone(), json.into_bytes())], |_| {}) {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\nerror: "));
    }
    let violated = report.designs.iter().any(|d| !d.violations.is_empty());
    Ok(if violated { 1 } else { 0 })
}

/// `slotcheck merge FILE...`: prints the merged JSON report.
pub fn merge_files(files: &[PathBuf]) -> Result<u8, String> {
    let mut reports = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let report: Report = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: not a `slotcheck simulate --json` report: {e}",
                file.display()
            )
        })?;
        reports.push(report);
    }
    let merged = merge(&reports)?;
    println!("{}", serde_json::to_string_pretty(&merged).expect("JSON"));
    let violated = merged.designs.iter().any(|d| !d.violations.is_empty());
    Ok(if violated { 1 } else { 0 })
}

// ---------------------------------------------------------------- bench

/// A claim of the contract, as a simulation finds it.
pub struct Claim {
    pub name: &'static str,
    pub design: &'static str,
    pub bounds: Bounds,
    pub property: &'static str,
}

/// The contract's claims, each on the smallest bounds the contract names.
pub const fn claims() -> [Claim; 6] {
    [
        Claim {
            name: "SP-OCT-003 wedge",
            design: "claim-first",
            bounds: Bounds {
                requests: 1,
                max_concurrent: 1,
                crashes: 1,
                stalls: 0,
                max_deliveries: 2,
            },
            property: NO_WEDGE,
        },
        Claim {
            name: "SP-OCT-003 count high",
            design: "claim-first",
            bounds: Bounds {
                requests: 1,
                max_concurrent: 1,
                crashes: 1,
                stalls: 0,
                max_deliveries: 2,
            },
            property: COUNT_NOT_HIGH,
        },
        Claim {
            name: "SP-OCT-005 count low",
            design: "claim-first",
            bounds: Bounds {
                requests: 2,
                max_concurrent: 1,
                crashes: 1,
                stalls: 0,
                max_deliveries: 2,
            },
            property: COUNT_NOT_LOW,
        },
        Claim {
            name: "SP-OCT-005 over-admits",
            design: "claim-first",
            bounds: Bounds {
                requests: 3,
                max_concurrent: 1,
                crashes: 1,
                stalls: 0,
                max_deliveries: 2,
            },
            property: BUILDS_WITHIN_LIMIT,
        },
        Claim {
            name: "fail-open two heads",
            design: "fail-open",
            bounds: Bounds {
                requests: 2,
                max_concurrent: 1,
                crashes: 0,
                stalls: 0,
                max_deliveries: 2,
            },
            property: BUILDS_WITHIN_LIMIT,
        },
        Claim {
            name: "fail-open residual",
            design: "fail-open",
            bounds: Bounds {
                requests: 1,
                max_concurrent: 1,
                crashes: 0,
                stalls: 1,
                max_deliveries: 2,
            },
            property: COUNT_NOT_HIGH,
        },
    ]
}

/// The first run (from `seed`, on the claim's bounds; with `swarm`, each
/// run draws its weights over action kinds) that violates the claim's
/// property within `max_runs`, with the walk up to the violation.
pub fn first_violating_run(
    claim: &Claim,
    seed: u64,
    swarm: bool,
    depth: usize,
    max_runs: u64,
) -> Option<(u64, Vec<Action>)> {
    let model = Stovepipe::new(design_named(claim.design)?, claim.bounds);
    let properties: Vec<Property<Stovepipe>> = model
        .properties()
        .into_iter()
        .filter(|p| p.name == claim.property)
        .collect();
    // The claim's bounds as one-value ranges: only the weights vary.
    let fixed: Vec<(String, RangeInclusive<u32>)> = model
        .bound_values()
        .into_iter()
        .map(|(n, v)| (n.to_string(), v..=v))
        .collect();
    (0..max_runs).find_map(|run| {
        let mut rng = run_rng(seed, run);
        let (model, weights) = plan(&model, swarm.then_some(&fixed[..]), &mut rng).ok()?;
        let w = walk(&model, &properties, weights.as_deref(), depth, &mut rng);
        let at = w.violated[0]?;
        Some((run, w.actions[..at].to_vec()))
    })
}

/// Runs per claim at most in the benchmark.
const BENCH_MAX_RUNS: u64 = 1_000_000;

/// `simulate --bench`: runs per second per design (plain on the default
/// bounds, and swarm), and the runs and time to the first violation of each
/// claim. Timings vary; the run counts do not.
pub fn bench(seed: u64) -> Result<String, String> {
    let mut out = format!("slotcheck simulate --bench (seed {seed})\n\n");
    out.push_str(&format!(
        "{:<14}{:<8}{:>8}{:>12}{:>12}{:>14}\n",
        "design", "mode", "runs", "states", "runs/s", "states/s"
    ));
    const RUNS: u64 = 2000;
    for design in DESIGNS {
        for swarm in [false, true] {
            let model = Stovepipe::new(design, crate::models::stovepipe::DEFAULT_BOUNDS);
            let settings = Settings {
                seed,
                runs: RUNS,
                only_run: None,
                depth: 500,
                swarm: swarm.then(|| swarm_ranges(&model, &[])).transpose()?,
                shard: Shard::WHOLE,
                shrink: false,
                shrink_states: 0,
                out: None,
            };
            let mut timing = Timing::default();
            let run = simulate(&model, &settings, &mut timing)?;
            let per = |n: u64| n as f64 / timing.walk_seconds.max(1e-9);
            out.push_str(&format!(
                "{:<14}{:<8}{:>8}{:>12}{:>12.0}{:>14.0}\n",
                design.name(),
                if swarm { "swarm" } else { "plain" },
                run.report.runs,
                run.report.states,
                per(run.report.runs),
                per(run.report.states)
            ));
        }
    }
    out.push_str(&format!(
        "\n{:<24}{:<13}{:<21}{:<7}{:>8}{:>10}{:>10}\n",
        "claim", "design", "property", "mode", "runs", "ms", "shrunk"
    ));
    for claim in claims() {
        for swarm in [false, true] {
            let started = Instant::now();
            let found = first_violating_run(&claim, seed, swarm, 500, BENCH_MAX_RUNS);
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let shrunk = match &found {
                Some((_, actions)) => {
                    let model =
                        Stovepipe::new(design_named(claim.design).expect("design"), claim.bounds);
                    let init = model.initial_state();
                    let s = shrink::shrink(&model, &init, actions, claim.property, 50_000);
                    format!("{} -> {}", actions.len(), s.actions.len())
                }
                None => "-".into(),
            };
            out.push_str(&format!(
                "{:<24}{:<13}{:<21}{:<7}{:>8}{:>10.1}{:>10}\n",
                claim.name,
                claim.design,
                claim.property,
                if swarm { "swarm" } else { "plain" },
                found.map_or(format!(">{BENCH_MAX_RUNS}"), |(r, _)| (r + 1).to_string()),
                ms,
                shrunk
            ));
        }
    }
    // The exhaustive check for comparison: time to the same verdict.
    out.push_str("\nexhaustive check of the same bounds, for comparison:\n");
    for claim in claims() {
        let model = Stovepipe::new(design_named(claim.design).expect("design"), claim.bounds);
        let started = Instant::now();
        let outcome = check(model, &[claim.property], &Limits::default());
        let verdict = outcome
            .result(claim.property)
            .map_or("?", |r| r.verdict.word());
        out.push_str(&format!(
            "  {:<24}{:<14}{:>10.1} ms\n",
            claim.name,
            verdict,
            started.elapsed().as_secs_f64() * 1000.0
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let w = walk(&model, &properties, Some(&weights), 500, &mut rng);
            faults += w.actions.iter().filter(|a| a.is_fault()).count();
        }
        assert_eq!(faults, 0);
        // Uniform walks on the same model do crash.
        let mut rng = run_rng(1, 0);
        let crashes: usize = (0..200)
            .map(|_| walk(&model, &properties, None, 500, &mut rng))
            .map(|w| w.actions.iter().filter(|a| a.is_fault()).count())
            .sum();
        assert!(crashes > 0);
    }

    #[test]
    fn a_run_depends_on_the_seed_and_its_index_alone() {
        let model = Stovepipe::new(DESIGNS[1], Bounds::default());
        let properties = model.properties();
        let actions =
            |seed, run| walk(&model, &properties, None, 500, &mut run_rng(seed, run)).actions;
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
            seed,
            runs: 20,
            only_run: None,
            depth: 100,
            swarm: None,
            shard: Shard::parse(shard).unwrap(),
            shrink: false,
            shrink_states: 0,
            out: None,
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
