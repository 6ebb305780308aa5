//! Exhaustive checking: slotcheck's own breadth-first search ([`search`])
//! over a model's packed states, and what its results mean.
//!
//! - **Shortest counterexamples.** The search goes level by level and
//!   reports, per property, the first state of the least level that breaks
//!   it (or, for a witness, reaches it): a shortest path, and the same one
//!   whatever the thread count, since a level's states are numbered in the
//!   order one thread would find them.
//! - **Every state, every time.** A run explores every reachable state (or
//!   stops at a budget), so states, unique states, depth and verdicts are
//!   the same for any thread count.
//! - **Budgets that stop on time.** `--max-states`, `--timeout` and
//!   `--max-memory` are looked at between chunks of a few hundred states, by
//!   every thread; a run they cut says *inconclusive* for everything it had
//!   not decided, never *holds*.
//!
//! Stateright still provides the models' trait, the Explorer and the
//! simulator's walks; its own BFS keeps each queued state's whole path and a
//! full state per entry (about 150 bytes per state here) and neither stops
//! on time nor keeps the shortest discovery (see the README), hence this one.
//!
//! The room: `search.rs` the search, `table.rs` the fingerprints, `mod.rs`
//! what a result means (`Outcome`, `Verdict`, `Stats`), `memory.rs` and
//! `progress.rs` its budget and its progress line. It is the bottom of the
//! house: it runs any stateright model the models crate packs, and uses no
//! other room (reports read its results, not the other way).

pub mod budget;
mod fair;
mod kept;
pub mod memory;
pub mod progress;
mod search;
mod table;

pub use table::fingerprint;

use slotcheck_models::{Narrated, Packed, PropertyKind, StoryStep};
use stateright::{Expectation, Model};
use std::time::{Duration, Instant};

/// How far a run may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub threads: usize,
    /// States generated (the `states` figure) before the run is cut short.
    pub max_states: Option<usize>,
    /// Wall-clock time from the start of the run.
    pub timeout: Option<Duration>,
    /// An instant no run may go past: what a command's `--timeout` sets,
    /// once, so that every run of the command shares it.
    pub deadline: Option<Instant>,
    /// Resident memory of the process, in bytes.
    pub max_memory: Option<u64>,
    /// Stop after the level in which every property asked for was decided
    /// (the shrinker wants a shortest path, not the counts).
    pub stop_once_found: bool,
    /// Draw a progress line on stderr while exploring (the caller decides:
    /// see `progress::wanted`). It only reads the search's counters, so the
    /// results are the same either way.
    pub progress: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            threads: 1,
            max_states: None,
            timeout: None,
            deadline: None,
            max_memory: None,
            stop_once_found: false,
            progress: false,
        }
    }
}

/// Why a run stopped before it explored everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    MaxStates,
    Timeout,
    MaxMemory,
    /// A first SIGINT or SIGTERM: the run stops as at a reached deadline.
    Signal,
}

impl Cut {
    pub const ALL: [Cut; 4] = [Cut::MaxStates, Cut::Timeout, Cut::MaxMemory, Cut::Signal];

    pub fn describe(self) -> &'static str {
        match self {
            Cut::MaxStates => "the state budget (--max-states) ran out",
            Cut::Timeout => "the time budget (--timeout) ran out",
            Cut::MaxMemory => "the memory budget (--max-memory) ran out",
            Cut::Signal => "a signal (SIGINT or SIGTERM) stopped the run",
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
    /// A lasso's loop: the actions from this index on repeat for ever (the
    /// state before them is the state after them, as stored); none of them
    /// when it is the path's length (the run stays in its last state).
    /// `None` for a path that is no lasso.
    pub loop_from: Option<usize>,
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
    /// The deepest BFS level (the initial state is depth 1), the same for
    /// any thread count. `None` only where a figure comes from elsewhere.
    pub depth: Option<usize>,
    pub seconds: f64,
    pub cut: Option<Cut>,
    pub phases: Phases,
}

/// Where a check's time went, by the search's phases (docs/checking.md):
/// each level's expansion, the insertion of its new states, their
/// numbering, and, with progress properties, the kept graph's steps (on
/// one or two threads, inside the next level's expansion: what is left is
/// `graph`); then the progress check's walk of that graph.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    pub expand: Duration,
    pub insert: Duration,
    pub number: Duration,
    pub graph: Duration,
    pub progress: Duration,
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

/// Replays a path of action indices from the `root`-th initial state. The
/// search expanded stored forms ([`Packed::pack`]), which may forget what no
/// later step reads and rename interchangeable actors; each index names an
/// action of such a form. The path returned is one of the model's own
/// steps on whole states: at each step the action the model says does
/// what the search's did ([`Packed::action_of_whole`]), else the action
/// the search took if it reaches the same stored form, else the first one
/// that does (a renamed actor), so that a story names its actors
/// consistently.
fn replay<M: Model + Packed>(model: &M, root: usize, steps: &[usize]) -> Trace<M>
where
    M::State: Clone,
    M::Action: Clone,
{
    let k = model.packed_words();
    let stored = |s: &M::State| {
        let mut words = vec![0u64; k];
        model.pack(s, &mut words);
        words
    };
    let step = |s: &M::State, a: M::Action| {
        model
            .next_state(s, a)
            .expect("a path the search took replays")
    };
    let init = model.init_states().swap_remove(root);
    let mut state = init.clone();
    // The state the search expanded at each step.
    let mut form = model.unpack(&stored(&state));
    let mut actions = Vec::with_capacity(steps.len());
    let mut enabled = Vec::new();
    for &index in steps {
        enabled.clear();
        model.actions(&form, &mut enabled);
        let taken = enabled.swap_remove(index);
        let target = stored(&step(&form, taken.clone()));
        enabled.clear();
        model.actions(&state, &mut enabled);
        let action = model
            .action_of_whole(&state, &form, &taken)
            .or_else(|| {
                enabled
                    .get(index)
                    .filter(|a| stored(&step(&state, (*a).clone())) == target)
                    .cloned()
            })
            .or_else(|| {
                enabled
                    .iter()
                    .find(|a| stored(&step(&state, (*a).clone())) == target)
                    .cloned()
            })
            .expect("a whole state has the step its stored form took");
        state = step(&state, action.clone());
        actions.push(action);
        form = model.unpack(&target);
    }
    Trace {
        init,
        actions,
        last: state,
        loop_from: None,
    }
}

/// Checks `names` (all the model's properties when empty) exhaustively.
pub fn check<M>(model: M, names: &[&'static str], limits: &Limits) -> Outcome<M>
where
    M: Narrated + Packed + Sync,
    M::State: Clone,
    M::Action: Clone,
{
    let started = Instant::now();
    let properties: Vec<_> = model
        .properties()
        .into_iter()
        .filter(|p| names.is_empty() || names.contains(&p.name))
        .collect();
    assert!(
        properties
            .iter()
            .all(|p| p.expectation != Expectation::Eventually),
        "`eventually` misses violations on cycles: judge them as an `always` over final states"
    );
    let progress: Vec<_> = model
        .progress()
        .into_iter()
        .filter(|p| names.is_empty() || names.contains(&p.name))
        .collect();
    // Progress needs every state's steps: no stopping once found.
    let keep = !progress.is_empty();
    let limits = &Limits {
        stop_once_found: limits.stop_once_found && !keep,
        ..*limits
    };
    let mut searched = search::search(&model, &properties, &progress, limits, started);
    let fair_from = Instant::now();
    let fair = (keep && searched.cut.is_none())
        .then(|| fair::find(&model, &progress, &searched, limits, started));
    let mut phases = searched.phases;
    phases.progress = fair_from.elapsed();
    searched.kept = None;
    let results = properties
        .iter()
        .zip(&searched.found)
        .map(|(p, found)| {
            let kind = model.kind_of(p.name).unwrap_or(PropertyKind::Always);
            let trace = found.map(|d| {
                let (root, steps) = searched.path(searched.key_of(d.number));
                replay(&model, root, &steps)
            });
            let verdict = match (kind, &trace, searched.cut) {
                (PropertyKind::Always | PropertyKind::Progress, Some(_), _) => Verdict::Violated,
                (PropertyKind::Sometimes, Some(_), _) => Verdict::Reached,
                (_, None, Some(_)) => Verdict::Inconclusive,
                (PropertyKind::Always | PropertyKind::Progress, None, None) => Verdict::Holds,
                (PropertyKind::Sometimes, None, None) => Verdict::NotReached,
            };
            PropertyResult {
                name: p.name,
                kind,
                verdict,
                trace,
                found_after: found.map(|d| d.after.as_secs_f64()),
            }
        })
        .collect::<Vec<_>>();
    let fair_cut = fair.as_ref().and_then(|f| f.cut);
    let mut results = results;
    for (p, property) in progress.iter().enumerate() {
        let lasso = fair.as_ref().and_then(|f| f.found[p].as_ref());
        let trace = lasso.map(|l| {
            let (root, mut steps) = searched.path(searched.key_of(l.entry));
            let loop_from = steps.len();
            steps.extend_from_slice(&l.steps);
            Trace {
                loop_from: Some(loop_from),
                ..replay(&model, root, &steps)
            }
        });
        let verdict = match (&trace, searched.cut.or(fair_cut)) {
            (Some(_), _) => Verdict::Violated,
            (None, Some(_)) => Verdict::Inconclusive,
            (None, None) => Verdict::Holds,
        };
        results.push(PropertyResult {
            name: property.name,
            kind: PropertyKind::Progress,
            verdict,
            trace,
            found_after: lasso.map(|l| l.after.as_secs_f64()),
        });
    }
    Outcome {
        results,
        stats: Stats {
            states: searched.states,
            unique: searched.unique,
            depth: Some(searched.depth),
            seconds: started.elapsed().as_secs_f64(),
            cut: searched.cut.or(fair_cut),
            phases,
        },
    }
}

/// `f` of each item, in the items' order, on `threads` threads taking the
/// next item as each finishes one (whole searches of their own: the
/// mutants of `mutate`, the designs of `check --coverage`).
pub fn map_on_threads<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else {
                    break;
                };
                let r = f(item);
                done.lock().expect("no thread panicked")[i] = Some(r);
            });
        }
    });
    done.into_inner()
        .expect("no thread panicked")
        .into_iter()
        .map(|r| r.expect("every item done"))
        .collect()
}
