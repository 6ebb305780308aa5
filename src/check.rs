//! Exhaustive checking on stateright's BFS, with the remedies that
//! `shared/docs/stateright-notes.md` calls for:
//!
//! - **Shortest counterexamples.** Stateright 0.31 overwrites a property's
//!   discovery with every later state that also violates it, so the path it
//!   keeps is not the shortest. The [`Harness`] reports only the *first*
//!   discovery of each property to the checker; with one thread BFS visits
//!   states level by level, so that first discovery is a shortest one. With
//!   more threads the level order is loose, so the traces are recomputed by a
//!   one-thread pass over the discovered properties alone: the trace is the
//!   same whatever the thread count.
//! - **Stopping.** A timeout does not stop a one-thread run and a stopped run
//!   looks done; the harness enforces `max_states` and `timeout` itself in
//!   `within_boundary` and records that it cut the run short, which makes
//!   every `holds` and `not reached` of that run *inconclusive*.
//! - **Determinism.** A checker stops as soon as every property has a
//!   discovery, which makes the counts depend on timing. The harness adds a
//!   property that is never discovered, so every run explores every state and
//!   the counts are the same for any thread count.

use crate::progress::{checker_line, Meter};
use slotcheck_models::{Narrated, PropertyKind, StoryStep};
use stateright::{Checker, Expectation, Model, Property};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How far a run may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub threads: usize,
    /// States generated (the `states` figure) before the run is cut short.
    pub max_states: Option<usize>,
    pub timeout: Option<Duration>,
    /// Draw a progress line on stderr while exploring (the caller decides:
    /// see `progress::wanted`). It only reads the checker's counters, so the
    /// results are the same either way.
    pub progress: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            threads: 1,
            max_states: None,
            timeout: None,
            progress: false,
        }
    }
}

/// Why a run stopped before it explored everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    MaxStates,
    Timeout,
}

impl Cut {
    pub fn describe(self) -> &'static str {
        match self {
            Cut::MaxStates => "the state budget (--max-states) ran out",
            Cut::Timeout => "the time budget (--timeout) ran out",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    Violated,
    Reached,
    NotReached,
    Inconclusive,
}

impl Verdict {
    /// The word used in JSON and scenario files.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Violated => "violated",
            Verdict::Reached => "reached",
            Verdict::NotReached => "not-reached",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// Whether this verdict is what a sound design wants.
    pub fn is_good(self) -> bool {
        matches!(self, Verdict::Holds | Verdict::Reached)
    }
}

/// A path from an initial state: what replays a discovery.
pub struct Trace<M: Model> {
    pub init: M::State,
    pub actions: Vec<M::Action>,
    pub last: M::State,
}

impl<M: Model> Trace<M> {
    pub fn steps(&self) -> usize {
        self.actions.len()
    }
}

pub struct PropertyResult<M: Model> {
    pub name: &'static str,
    pub kind: PropertyKind,
    pub verdict: Verdict,
    /// The shortest path to the violation or witness, when there is one.
    pub trace: Option<Trace<M>>,
    /// Seconds from the start of the run to the first discovery (a timing,
    /// for benchmarks: it varies from run to run).
    pub found_after: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// States generated, duplicates included.
    pub states: usize,
    pub unique: usize,
    /// The deepest BFS level (the initial state is depth 1). Exact with one
    /// thread only: with more, a state may first be reached by a longer path,
    /// so no depth is given rather than one that depends on the thread count.
    pub depth: Option<usize>,
    pub seconds: f64,
    pub cut: Option<Cut>,
}

impl Stats {
    pub fn states_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.states as f64 / self.seconds
        } else {
            0.0
        }
    }
}

pub struct Outcome<M: Model> {
    pub results: Vec<PropertyResult<M>>,
    pub stats: Stats,
}

impl<M: Narrated> Outcome<M> {
    pub fn result(&self, name: &str) -> Option<&PropertyResult<M>> {
        self.results.iter().find(|r| r.name == name)
    }

    /// 1 when an `always` property is violated or a witness not reached; 3
    /// when the run was cut short without such a finding; else 0.
    pub fn exit_code(&self) -> i32 {
        let bad = self
            .results
            .iter()
            .any(|r| matches!(r.verdict, Verdict::Violated | Verdict::NotReached));
        if bad {
            1
        } else if self
            .results
            .iter()
            .any(|r| r.verdict == Verdict::Inconclusive)
        {
            3
        } else {
            0
        }
    }

    /// The story of a property's trace.
    pub fn story(&self, model: &M, name: &str) -> Option<Vec<StoryStep>> {
        let trace = self.result(name)?.trace.as_ref()?;
        Some(model.tell(&trace.init, &trace.actions))
    }
}

/// A property's condition, as stateright takes it.
type Condition<M> = fn(&Harness<M>, &<M as Model>::State) -> bool;

/// The model as the checker sees it: the same states and actions, the
/// selected properties reporting only their first discovery, and the budget.
pub struct Harness<M: Model> {
    inner: M,
    properties: Vec<Property<M>>,
    first: Vec<OnceLock<M::State>>,
    /// When each property's first discovery was made.
    found_after: Vec<OnceLock<Duration>>,
    started: Instant,
    explore_everything: bool,
    generated: AtomicUsize,
    max_states: Option<usize>,
    deadline: Option<Instant>,
    cut: AtomicU8,
}

/// At most this many properties per model (one condition function each).
const MAX_PROPERTIES: usize = 16;

impl<M> Harness<M>
where
    M: Model,
    M::State: Clone + Eq,
{
    fn new(inner: M, names: &[&'static str], limits: &Limits, explore_everything: bool) -> Self {
        let properties: Vec<Property<M>> = inner
            .properties()
            .into_iter()
            .filter(|p| names.contains(&p.name))
            .collect();
        assert!(properties.len() <= MAX_PROPERTIES);
        let first = properties.iter().map(|_| OnceLock::new()).collect();
        let found_after = properties.iter().map(|_| OnceLock::new()).collect();
        Harness {
            inner,
            properties,
            first,
            found_after,
            started: Instant::now(),
            explore_everything,
            generated: AtomicUsize::new(0),
            max_states: limits.max_states,
            deadline: limits.timeout.map(|t| Instant::now() + t),
            cut: AtomicU8::new(0),
        }
    }

    fn cut(&self) -> Option<Cut> {
        match self.cut.load(Ordering::Relaxed) {
            1 => Some(Cut::MaxStates),
            2 => Some(Cut::Timeout),
            _ => None,
        }
    }

    /// Whether property `k` has a discovery in `state`, counting only the
    /// first state that has one; the condition stateright sees is the answer.
    fn judge(&self, k: usize, state: &M::State) -> bool {
        let property = &self.properties[k];
        let always = property.expectation == Expectation::Always;
        let discovery = (property.condition)(&self.inner, state) != always;
        if !discovery {
            return always;
        }
        let first = self.first[k].get_or_init(|| {
            let _ = self.found_after[k].set(self.started.elapsed());
            state.clone()
        }) == state;
        // An `always` reports a violation only in its first violating state;
        // a `sometimes` reports only its first witness.
        first != always
    }
}

fn judge<M, const K: usize>(harness: &Harness<M>, state: &M::State) -> bool
where
    M: Model,
    M::State: Clone + Eq,
{
    harness.judge(K, state)
}

fn conditions<M>() -> [Condition<M>; MAX_PROPERTIES]
where
    M: Model,
    M::State: Clone + Eq,
{
    [
        judge::<M, 0>,
        judge::<M, 1>,
        judge::<M, 2>,
        judge::<M, 3>,
        judge::<M, 4>,
        judge::<M, 5>,
        judge::<M, 6>,
        judge::<M, 7>,
        judge::<M, 8>,
        judge::<M, 9>,
        judge::<M, 10>,
        judge::<M, 11>,
        judge::<M, 12>,
        judge::<M, 13>,
        judge::<M, 14>,
        judge::<M, 15>,
    ]
}

/// The name of the property that keeps a run going to the last state.
const EXPLORE_EVERYTHING: &str = "(every state explored)";

impl<M> Model for Harness<M>
where
    M: Model,
    M::State: Clone + Eq,
{
    type State = M::State;
    type Action = M::Action;

    fn init_states(&self) -> Vec<Self::State> {
        self.inner.init_states()
    }

    fn actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>) {
        self.inner.actions(state, actions)
    }

    fn next_state(&self, state: &Self::State, action: Self::Action) -> Option<Self::State> {
        self.inner.next_state(state, action)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let conditions = conditions::<M>();
        let mut properties: Vec<Property<Self>> = self
            .properties
            .iter()
            .zip(conditions)
            .map(|(p, condition)| Property {
                expectation: p.expectation.clone(),
                name: p.name,
                condition,
            })
            .collect();
        if self.explore_everything {
            properties.push(Property::always(EXPLORE_EVERYTHING, |_, _| true));
        }
        properties
    }

    fn within_boundary(&self, _state: &Self::State) -> bool {
        if self.cut.load(Ordering::Relaxed) != 0 {
            return false;
        }
        let generated = self.generated.fetch_add(1, Ordering::Relaxed) + 1;
        if self.max_states.is_some_and(|max| generated > max) {
            self.cut.store(1, Ordering::Relaxed);
            return false;
        }
        if generated.is_multiple_of(1024) && self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.cut.store(2, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// How often a run with a progress line looks at the checker's counters:
/// often enough that a finished run is not kept waiting.
const POLL: Duration = Duration::from_millis(20);

/// The first discovery of each property, by name.
type Discoveries<M> = Vec<(&'static str, Trace<M>, Option<f64>)>;

/// Runs a BFS over `harness`, returning the checker's figures (with why it
/// was cut short, if it was) and the first discovery of each property.
fn explore<M>(harness: Harness<M>, threads: usize, progress: bool) -> (Stats, Discoveries<M>)
where
    M: Model + Send + Sync + 'static,
    M::State: Clone + Eq + Hash + Debug + Send + Sync + 'static,
    M::Action: Clone + PartialEq + Debug + Send + Sync + 'static,
{
    let started = Instant::now();
    let running = harness.checker().threads(threads.max(1)).spawn_bfs();
    let checker = if progress {
        // Asked for, and still only on a terminal: a test or a pipe that
        // asks gets the same polling but no escape codes.
        let mut meter = Meter::new(crate::progress::wanted(false));
        while !running.is_done() {
            meter.tick(|elapsed| {
                let depth = (threads <= 1).then(|| running.max_depth());
                checker_line(
                    running.state_count(),
                    running.unique_state_count(),
                    depth,
                    elapsed,
                )
            });
            std::thread::sleep(POLL);
        }
        meter.finish();
        running.join()
    } else {
        running.join()
    };
    let seconds = started.elapsed().as_secs_f64();
    let harness = checker.model();
    let cut = harness.cut();
    let found_after = |name: &str| {
        let k = harness.properties.iter().position(|p| p.name == name)?;
        harness.found_after[k].get().map(Duration::as_secs_f64)
    };
    let stats = Stats {
        states: checker.state_count(),
        unique: checker.unique_state_count(),
        depth: (threads <= 1).then(|| checker.max_depth()),
        seconds,
        cut,
    };
    let mut found: Discoveries<M> = checker
        .discoveries()
        .into_iter()
        .filter(|(name, _)| *name != EXPLORE_EVERYTHING)
        .map(|(name, path)| {
            let last = path.last_state().clone();
            let states = path.clone().into_states();
            let trace = Trace {
                init: states[0].clone(),
                actions: path.into_actions(),
                last,
            };
            (name, trace, found_after(name))
        })
        .collect();
    found.sort_by_key(|(name, _, _)| *name);
    (stats, found)
}

/// Checks `names` (all the model's properties when empty) exhaustively.
pub fn check<M>(model: M, names: &[&'static str], limits: &Limits) -> Outcome<M>
where
    M: Narrated + Clone + Send + Sync + 'static,
    M::State: Clone + Eq + Hash + Debug + Send + Sync + 'static,
    M::Action: Clone + PartialEq + Debug + Send + Sync + 'static,
{
    let started = Instant::now();
    let all: Vec<&'static str> = model.properties().iter().map(|p| p.name).collect();
    let names: Vec<&'static str> = if names.is_empty() {
        all.clone()
    } else {
        all.iter().copied().filter(|n| names.contains(n)).collect()
    };
    let harness = Harness::new(model.clone(), &names, limits, true);
    let (mut stats, mut found) = explore(harness, limits.threads, limits.progress);
    let cut = stats.cut;

    if limits.threads > 1 && !found.is_empty() {
        // Recompute the traces in strict BFS order, for the shortest ones and
        // the same ones as a one-thread run. The budget is the same; the pass
        // stops once every property it looks for is found again.
        let discovered: Vec<&'static str> = found.iter().map(|(name, _, _)| *name).collect();
        let retrace = Harness::new(model.clone(), &discovered, limits, false);
        let (_, traces) = explore(retrace, 1, limits.progress);
        for (name, trace, _) in traces {
            if let Some(entry) = found.iter_mut().find(|(n, _, _)| *n == name) {
                entry.1 = trace;
            }
        }
    }
    stats.seconds = started.elapsed().as_secs_f64();

    let results = model
        .properties()
        .into_iter()
        .filter(|p| names.contains(&p.name))
        .map(|p| {
            let kind = model.kind_of(p.name).unwrap_or(PropertyKind::Always);
            let (trace, found_after) = match found.iter().position(|(n, _, _)| *n == p.name) {
                Some(i) => {
                    let (_, trace, after) = found.remove(i);
                    (Some(trace), after)
                }
                None => (None, None),
            };
            let verdict = match (kind, &trace, cut) {
                (PropertyKind::Always, Some(_), _) => Verdict::Violated,
                (PropertyKind::Sometimes, Some(_), _) => Verdict::Reached,
                (_, None, Some(_)) => Verdict::Inconclusive,
                (PropertyKind::Always, None, None) => Verdict::Holds,
                (PropertyKind::Sometimes, None, None) => Verdict::NotReached,
            };
            PropertyResult {
                name: p.name,
                kind,
                verdict,
                trace,
                found_after,
            }
        })
        .collect();
    Outcome { results, stats }
}
