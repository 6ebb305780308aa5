//! `validate`: is a real system's event log a behaviour of the model? The
//! search keeps the SET of candidates (model states, with what matching
//! needs beyond them) consistent with the log so far; each logged event
//! must be one model step whose logged outcome is the event, after at most
//! [`SILENT_PER_EVENT`] silent steps (faults, and steps the system does not
//! log). A model says, through [`Trace`], which steps an event can be; this
//! room knows no model, and uses `report` only to tell a story and for
//! the typed record its JSON is.

use crate::report::comparison::steps_of;
use crate::report::story_text;
use crate::report::validation::{AssumedStep, QueueVerdict, RowValue, ViolatedProperty};
use slotcheck_models::{Narrated, OrderValue, StoryStep, Trace};
use stateright::{Expectation, Model};
use std::collections::{HashMap, HashSet};

/// Silent steps the search may insert before one event.
pub const SILENT_PER_EVENT: usize = 4;
/// Candidates the search may keep after one event before it gives up, by
/// default (`--max-candidates`).
pub const CANDIDATE_BUDGET: usize = 65_536;
/// Candidates the silent steps before one event may reach, at least (and
/// eight times the candidate budget when that is more).
pub const SILENT_BUDGET: usize = 200_000;

/// What a team sets for a search.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Candidates the search may keep after one event (`--max-candidates`).
    pub max_candidates: usize,
    /// Exit 1 only for a violation every explanation breaks (`--strict`).
    pub strict: bool,
    /// The command's process budgets (`--timeout`, `--max-memory`, a
    /// signal), asked between the search's layers: one queue's search
    /// stops within them too, inconclusive at the line it was at.
    pub budget: crate::check::Limits,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_candidates: CANDIDATE_BUDGET,
            strict: false,
            budget: crate::check::Limits::default(),
        }
    }
}

impl Options {
    /// Candidates the silent steps before one event may reach.
    pub fn silent_budget(&self) -> usize {
        SILENT_BUDGET.max(self.max_candidates.saturating_mul(8))
    }
}

/// A step the log cannot show that an explanation of it takes (a crash, a
/// stall, a late heartbeat, an unlogged delivery): validate assumed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assumed {
    /// The line it comes before (none: after the last).
    pub before: Option<usize>,
    /// The step, as a story tells it (`worker-3 (process R1, delivery 1): crashes`).
    pub step: String,
}

/// Exit codes: 0 conforms, 1 conforms with a property violated along the
/// way, 2 a bad log, 3 inconclusive, 4 departs.
pub const EXIT_DEPARTS: u8 = 4;

/// A property the log can be read as breaking.
#[derive(Clone, Debug)]
pub struct Violation {
    pub property: String,
    /// Why, in the model's words, at the first state that breaks it.
    pub why: String,
    /// Every explanation of the log breaks it (else some does: the log
    /// cannot tell, e.g. whether a worker crashed after its last event).
    pub certain: bool,
}

/// How one queue's log ends.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Every event is a model step. `violated`: the `always` properties
    /// that an explanation of the log breaks along the way (or, after the
    /// last event, by crashes of the workers still running, which a log
    /// cannot show), and the story of the explanation that breaks most.
    Conforms {
        violated: Vec<Violation>,
        story: Vec<StoryStep>,
        /// The model's names for the log's (`R1 = pr-101`).
        legend: String,
        /// The silent steps of the explanation told (the one that breaks
        /// most, else the first found).
        assumed: Vec<Assumed>,
        /// Exit 1 only when some violation is certain.
        strict: bool,
    },
    /// No candidate can take the event on `line`.
    Departs {
        line: usize,
        /// The rows of the first candidate.
        state: Vec<(String, String)>,
        candidates: usize,
        /// What the model could log there instead.
        allowed: Vec<String>,
        says: String,
    },
    /// The candidates grew past the budget at `line` (or the log is beyond
    /// the model, or has nothing to judge: `why`).
    Inconclusive {
        line: usize,
        candidates: usize,
        why: String,
    },
}

impl Verdict {
    pub fn exit_code(&self) -> u8 {
        match self {
            Verdict::Conforms { violated, .. } if violated.is_empty() => 0,
            Verdict::Conforms {
                violated,
                strict: true,
                ..
            } if !violated.iter().any(|v| v.certain) => 0,
            Verdict::Conforms { .. } => 1,
            Verdict::Inconclusive { .. } => 3,
            Verdict::Departs { .. } => EXIT_DEPARTS,
        }
    }

    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Conforms { violated, .. } if violated.is_empty() => "conforms",
            Verdict::Conforms { .. } if self.exit_code() == 0 => {
                "conforms, with a violation possible"
            }
            Verdict::Conforms { .. } => "conforms, with a violation",
            Verdict::Inconclusive { .. } => "inconclusive",
            Verdict::Departs { .. } => "departs",
        }
    }

    /// The properties the log's explanation breaks: none unless it conforms.
    pub fn violated_properties(&self) -> Vec<&str> {
        match self {
            Verdict::Conforms { violated, .. } => {
                violated.iter().map(|v| v.property.as_str()).collect()
            }
            _ => Vec::new(),
        }
    }
}

/// A step of the search: its candidate's parent, the actions that lead
/// from it (its silent steps, then the event's own step if it takes one),
/// how many of them are silent, and the event it took (`None`: a start, or
/// a silent step after the last event).
struct Node<A> {
    parent: usize,
    actions: Vec<A>,
    silent: usize,
    event: Option<usize>,
}

/// A node's part of a path, as [`parts_to`] gives it.
struct Part<A> {
    actions: Vec<A>,
    silent: usize,
    event: Option<usize>,
}

type Action<T> = <<T as Trace>::Model as Model>::Action;
/// A candidate: its cursor, the properties broken on its way, and which
/// events it has taken ([`Order`]).
type Key<T> = (<T as Trace>::Cursor, u64, Taken);

/// Which events a candidate has taken: nothing in a log of one process
/// (the round says it: the events are taken in order); else how many of
/// each process's lines.
type Taken = Box<[u32]>;

/// The order of a log's lines. One process: its lines are the events in
/// order. Several (lines that name their `process`): each process's lines
/// stay in order, and a line may be taken once every line of another
/// process that the system's own values (or the times, beyond the slack)
/// put before it is: the search tries each order that is left.
struct Order {
    single: bool,
    /// Each process's events, in order.
    lines: Vec<Vec<usize>>,
    /// Each event's process and its place among that process's lines.
    process: Vec<u32>,
    position: Vec<u32>,
    /// Each event's needs: (process, how many of its lines) to be taken
    /// before it.
    needs: Vec<Vec<(u32, u32)>>,
}

impl Order {
    fn of<T: Trace>(trace: &T) -> Order {
        let n = trace.len();
        let mut names: HashMap<Option<&str>, u32> = HashMap::new();
        let mut lines: Vec<Vec<usize>> = Vec::new();
        let mut process = Vec::with_capacity(n);
        let mut position = Vec::with_capacity(n);
        for k in 0..n {
            let next = names.len() as u32;
            let p = *names.entry(trace.process(k)).or_insert(next);
            if p as usize == lines.len() {
                lines.push(Vec::new());
            }
            position.push(lines[p as usize].len() as u32);
            lines[p as usize].push(k);
            process.push(p);
        }
        if lines.len() <= 1 {
            return Order {
                single: true,
                lines,
                process,
                position,
                needs: Vec::new(),
            };
        }
        let mut values: Vec<Vec<OrderValue>> = vec![Vec::new(); n];
        for (k, v) in values.iter_mut().enumerate() {
            trace.order(k, v);
        }
        let times: Vec<Option<u64>> = (0..n).map(|k| trace.time(k)).collect();
        let slack = trace.order_slack_ms();
        let precedes = |j: usize, k: usize| {
            let by_time = match (slack, times[j], times[k]) {
                (Some(s), Some(a), Some(b)) => a.saturating_add(s) < b,
                _ => false,
            };
            by_time
                || values[j]
                    .iter()
                    .any(|a| values[k].iter().any(|b| a.key == b.key && a.hi < b.lo))
        };
        let mut needs = vec![Vec::new(); n];
        for (k, need) in needs.iter_mut().enumerate() {
            for (p, of) in lines.iter().enumerate() {
                if p as u32 == process[k] {
                    continue;
                }
                if let Some(j) = of.iter().rev().find(|&&j| precedes(j, k)) {
                    need.push((p as u32, position[*j] + 1));
                }
            }
        }
        Order {
            single: false,
            lines,
            process,
            position,
            needs,
        }
    }

    fn start(&self) -> Taken {
        if self.single {
            Box::default()
        } else {
            vec![0; self.lines.len()].into_boxed_slice()
        }
    }

    /// The events that may be taken next, in the order of the log.
    fn ready(&self, taken: &Taken, round: usize, out: &mut Vec<usize>) {
        out.clear();
        if self.single {
            out.push(round);
            return;
        }
        for (p, of) in self.lines.iter().enumerate() {
            let Some(&k) = of.get(taken[p] as usize) else {
                continue;
            };
            if self.needs[k].iter().all(|&(q, c)| taken[q as usize] >= c) {
                out.push(k);
            }
        }
        out.sort_unstable();
    }

    /// Whether event `j` is still to come.
    fn pending(&self, taken: &Taken, round: usize, j: usize) -> bool {
        if self.single {
            j >= round
        } else {
            taken[self.process[j] as usize] <= self.position[j]
        }
    }

    /// The first event still to come, in the order of the log (the number
    /// of events when none is).
    fn first_pending(&self, taken: &Taken, round: usize) -> usize {
        if self.single {
            return round;
        }
        self.lines
            .iter()
            .enumerate()
            .filter_map(|(p, of)| of.get(taken[p] as usize).copied())
            .min()
            .unwrap_or(self.process.len())
    }

    fn take(&self, taken: &Taken, k: usize) -> Taken {
        let mut after = taken.clone();
        if !self.single {
            after[self.process[k] as usize] += 1;
        }
        after
    }
}

/// The `always` properties a state breaks, as bits.
fn broken<M: Model>(properties: &[stateright::Property<M>], model: &M, state: &M::State) -> u64 {
    properties
        .iter()
        .enumerate()
        .filter(|(_, p)| p.expectation == Expectation::Always && !(p.condition)(model, state))
        .fold(0, |bits, (i, _)| bits | 1 << i)
}

/// Validates one queue's log.
pub fn validate<T: Trace>(trace: &T) -> Verdict
where
    Action<T>: Clone + PartialEq,
    <T::Model as Model>::State: Clone,
{
    search(trace, &Options::default(), false).0
}

/// Validates one queue's log with a team's options.
pub fn validate_with<T: Trace>(trace: &T, options: &Options) -> Verdict
where
    Action<T>: Clone + PartialEq,
    <T::Model as Model>::State: Clone,
{
    search(trace, options, false).0
}

/// Validates one queue's log and, when it conforms, tells one explanation
/// (the path of the first candidate left), for a test to write it again.
pub fn validate_and_explain<T: Trace>(trace: &T) -> (Verdict, Option<Vec<StoryStep>>)
where
    Action<T>: Clone + PartialEq,
    <T::Model as Model>::State: Clone,
{
    search(trace, &Options::default(), true)
}

/// What the candidates differ in most (the rows with the most values
/// among them, and how many orders of the processes' lines are open): why
/// they grew past the budget.
fn spread<'a, T: Trace + 'a>(trace: &T, candidates: impl Iterator<Item = &'a Key<T>>) -> String {
    let mut rows: Vec<(String, HashSet<String>)> = Vec::new();
    let mut orders: HashSet<&Taken> = HashSet::new();
    for (cursor, _, taken) in candidates.take(4096) {
        orders.insert(taken);
        for (row, value) in trace.model().rows(trace.state(cursor)) {
            match rows.iter_mut().find(|(r, _)| *r == row) {
                Some((_, values)) => {
                    values.insert(value);
                }
                None => rows.push((row, HashSet::from([value]))),
            }
        }
    }
    rows.retain(|(_, values)| values.len() > 1);
    // The most values first; rows with as many in the model's order.
    rows.sort_by_key(|(_, values)| std::cmp::Reverse(values.len()));
    let mut parts: Vec<String> = rows
        .iter()
        .take(4)
        .map(|(row, values)| format!("{row} ({} values)", values.len()))
        .collect();
    if orders.len() > 1 {
        parts.push(format!(
            "the order of the processes' lines ({} orders open)",
            orders.len()
        ));
    }
    if parts.is_empty() {
        "the candidates differ only in what matching keeps beyond the state (which of the log's workers each model worker is, what each read)".into()
    } else {
        format!("the candidates differ most in {}", parts.join(", "))
    }
}

fn search<T: Trace>(
    trace: &T,
    options: &Options,
    explain: bool,
) -> (Verdict, Option<Vec<StoryStep>>)
where
    Action<T>: Clone + PartialEq,
    <T::Model as Model>::State: Clone,
{
    let model = trace.model();
    let properties = model.properties();
    let order = Order::of(trace);
    // One root per start (a model may leave its initial state open, e.g.
    // each clock's offset): node i < roots is start i.
    let starts = trace.starts();
    let inits: Vec<_> = starts.iter().map(|c| trace.state(c).clone()).collect();
    let roots = starts.len();
    let mut candidates: Vec<(Key<T>, usize)> = starts
        .iter()
        .enumerate()
        .map(|(i, start)| {
            let bits = broken(&properties, model, trace.state(start));
            ((start.clone(), bits, order.start()), i)
        })
        .collect();
    let mut arena: Vec<Node<Action<T>>> = (0..roots)
        .map(|i| Node {
            parent: i,
            actions: Vec::new(),
            silent: 0,
            event: None,
        })
        .collect();
    let mut out = Vec::new();
    let mut steps = Vec::new();
    let mut ready = Vec::new();
    let silent_budget = options.silent_budget();
    let mut watch = crate::check::budget::Watch::new(&options.budget, std::time::Instant::now());
    for round in 0..trace.len() {
        let mut next: HashMap<Key<T>, usize> = HashMap::new();
        let mut seen: HashSet<Key<T>> = candidates.iter().map(|(key, _)| key.clone()).collect();
        let mut layer: Vec<(Key<T>, usize, Vec<Action<T>>)> = candidates
            .iter()
            .map(|(key, node)| (key.clone(), *node, Vec::new()))
            .collect();
        let mut depth = 0;
        loop {
            for ((cursor, bits, taken), node, path) in &layer {
                order.ready(taken, round, &mut ready);
                for &k in &ready {
                    steps.clear();
                    trace.explain(cursor, k, &mut steps);
                    for (action, after) in steps.drain(..) {
                        let bits = bits | broken(&properties, model, trace.state(&after));
                        next.entry((after, bits, order.take(taken, k)))
                            .or_insert_with(|| {
                                let mut actions = path.clone();
                                actions.extend(action);
                                arena.push(Node {
                                    parent: *node,
                                    actions,
                                    silent: path.len(),
                                    event: Some(k),
                                });
                                arena.len() - 1
                            });
                    }
                }
            }
            let mut deeper = Vec::new();
            for ((cursor, bits, taken), node, path) in &layer {
                let first = order.first_pending(taken, round);
                let bound = trace.silent_bound(first).unwrap_or(SILENT_PER_EVENT);
                if depth >= bound {
                    continue;
                }
                out.clear();
                trace.silent_pending(cursor, first, &|j| order.pending(taken, round, j), &mut out);
                for (action, after) in out.drain(..) {
                    let bits = bits | broken(&properties, model, trace.state(&after));
                    let key = (after, bits, taken.clone());
                    if seen.insert(key.clone()) {
                        let mut path = path.clone();
                        path.push(action);
                        deeper.push((key, *node, path));
                    }
                }
            }
            if seen.len() > silent_budget {
                let (_, _, taken) = &candidates[0].0;
                let verdict = Verdict::Inconclusive {
                    line: trace.line(order.first_pending(taken, round)),
                    candidates: seen.len(),
                    why: format!(
                        "{} states reached by silent steps before one line, more than the budget of {silent_budget}; {}",
                        seen.len(),
                        spread(trace, seen.iter())
                    ),
                };
                return (verdict, None);
            }
            if let Some(cut) = watch.over(0) {
                let (_, _, taken) = &candidates[0].0;
                let verdict = Verdict::Inconclusive {
                    line: trace.line(order.first_pending(taken, round)),
                    candidates: seen.len(),
                    why: cut.describe().to_string(),
                };
                return (verdict, None);
            }
            if deeper.is_empty() {
                break;
            }
            layer = deeper;
            depth += 1;
        }
        if next.is_empty() {
            let ((cursor, _, taken), _) = &candidates[0];
            order.ready(taken, round, &mut ready);
            let k = ready
                .first()
                .copied()
                .unwrap_or_else(|| order.first_pending(taken, round));
            let mut state = model.rows(trace.state(cursor));
            let legend = trace.legend();
            if !legend.is_empty() {
                state.push(("(names)".into(), legend));
            }
            let verdict = Verdict::Departs {
                line: trace.line(k),
                state,
                candidates: candidates.len(),
                allowed: trace.allowed(cursor, k),
                says: trace.says(k),
            };
            return (verdict, None);
        }
        if next.len() > options.max_candidates {
            let (_, _, taken) = &candidates[0].0;
            let verdict = Verdict::Inconclusive {
                line: trace.line(order.first_pending(taken, round)),
                candidates: next.len(),
                why: format!(
                    "{} candidate states explain the log so far, more than the budget of {} (--max-candidates); {}",
                    next.len(),
                    options.max_candidates,
                    spread(trace, next.keys())
                ),
            };
            return (verdict, None);
        }
        candidates = next.into_iter().collect();
        // The same order on every run, whatever the hash map's.
        candidates.sort_by_key(|(_, node)| *node);
    }
    let explanation = explain.then(|| tell(trace, &order, &starts, &arena, candidates[0].1).0);
    // After the last event: the workers still running may have crashed
    // (the log cannot show it), which may end in a violation too.
    let mut ends: Vec<(u64, usize)> = candidates.iter().map(|((_, b, _), n)| (*b, *n)).collect();
    let mut seen: HashSet<Key<T>> = candidates.iter().map(|(key, _)| key.clone()).collect();
    let mut layer: Vec<(Key<T>, usize)> = candidates.clone();
    let bound = trace.silent_bound(trace.len()).unwrap_or(SILENT_PER_EVENT);
    for _ in 0..bound {
        let mut deeper = Vec::new();
        for ((cursor, bits, taken), node) in &layer {
            out.clear();
            trace.silent_pending(cursor, trace.len(), &|_| false, &mut out);
            for (action, after) in out.drain(..) {
                let bits = bits | broken(&properties, model, trace.state(&after));
                let key = (after, bits, taken.clone());
                if seen.len() < silent_budget && seen.insert(key.clone()) {
                    arena.push(Node {
                        parent: *node,
                        actions: vec![action],
                        silent: 1,
                        event: None,
                    });
                    ends.push((bits, arena.len() - 1));
                    deeper.push((key, arena.len() - 1));
                }
            }
        }
        layer = deeper;
    }
    let certain = candidates
        .iter()
        .fold(u64::MAX, |all, ((_, bits, _), _)| all & bits);
    let possible = ends.iter().fold(0, |any, (bits, _)| any | bits);
    if possible == 0 {
        let node = candidates[0].1;
        let assumed = if has_silent(trace, &arena, node) {
            tell(trace, &order, &starts, &arena, node).1
        } else {
            Vec::new()
        };
        let verdict = Verdict::Conforms {
            violated: Vec::new(),
            story: Vec::new(),
            legend: trace.legend(),
            assumed,
            strict: options.strict,
        };
        return (verdict, explanation);
    }
    // The story of the explanation that breaks the most.
    let (_, node) = ends
        .iter()
        .max_by_key(|(bits, node)| (bits.count_ones(), std::cmp::Reverse(*node)))
        .expect("a log that conforms has a candidate");
    let (root, actions) = path_to(&arena, *node);
    let init = &inits[root];
    let (story, assumed) = tell(trace, &order, &starts, &arena, *node);
    let violated = properties
        .iter()
        .enumerate()
        .filter(|(i, _)| possible & (1 << i) != 0)
        .map(|(i, p)| {
            let path = match first_breaking(model, init, &actions, p) {
                Some(_) => (root, actions.clone()),
                None => {
                    let (_, other) = ends
                        .iter()
                        .find(|(bits, _)| bits & (1 << i) != 0)
                        .expect("a property some explanation breaks");
                    path_to(&arena, *other)
                }
            };
            let why = first_breaking(model, &inits[path.0], &path.1, p)
                .map_or_else(String::new, |state| model.explain(p.name, &state));
            Violation {
                property: p.name.to_string(),
                why,
                certain: certain & (1 << i) != 0,
            }
        })
        .collect();
    let legend = trace.legend();
    (
        Verdict::Conforms {
            violated,
            story,
            legend,
            assumed,
            strict: options.strict,
        },
        explanation,
    )
}

/// Whether the path to `node` takes a silent step a report lists.
fn has_silent<T: Trace>(trace: &T, arena: &[Node<Action<T>>], mut node: usize) -> bool {
    while arena[node].parent != node {
        let n = &arena[node];
        if n.actions[..n.silent].iter().any(|a| trace.assumes(a)) {
            return true;
        }
        node = arena[node].parent;
    }
    false
}

/// The start `node`'s candidate comes from, and the actions from it.
fn path_to<A: Clone>(arena: &[Node<A>], node: usize) -> (usize, Vec<A>) {
    let (root, parts) = parts_to(arena, node);
    (root, parts.into_iter().flat_map(|p| p.actions).collect())
}

/// The start `node`'s candidate comes from, and each node's part on the
/// way: each event's (its silent steps, then its own step if it takes
/// one), then each silent step after the last event.
fn parts_to<A: Clone>(arena: &[Node<A>], mut node: usize) -> (usize, Vec<Part<A>>) {
    let mut parts = Vec::new();
    while arena[node].parent != node {
        let n = &arena[node];
        parts.push(Part {
            actions: n.actions.clone(),
            silent: n.silent,
            event: n.event,
        });
        node = n.parent;
    }
    parts.reverse();
    (node, parts)
}

/// The story of the path to `node`, with the log's names for the actors
/// where the trace gives them, and the silent steps it assumes.
fn tell<T: Trace>(
    trace: &T,
    order: &Order,
    starts: &[T::Cursor],
    arena: &[Node<Action<T>>],
    node: usize,
) -> (Vec<StoryStep>, Vec<Assumed>)
where
    Action<T>: Clone + PartialEq,
{
    let (root, parts) = parts_to(arena, node);
    let actions: Vec<Action<T>> = parts.iter().flat_map(|p| p.actions.clone()).collect();
    let start = &starts[root];
    let mut story = trace.model().tell(trace.state(start), &actions);
    if T::NAMES_ACTORS {
        if let Some(before) = cursors_along(trace, order, start, &parts) {
            trace.name_actors(&mut story, &actions, &before);
        }
    }
    let mut assumed = Vec::new();
    if story.len() == actions.len() {
        let mut i = 0;
        for part in &parts {
            for action in &part.actions[..part.silent] {
                let step = &story[i];
                if trace.assumes(action) {
                    assumed.push(Assumed {
                        before: part.event.map(|k| trace.line(k)),
                        step: format!("{}: {}", step.actor, step.action),
                    });
                }
                i += 1;
            }
            i += part.actions.len() - part.silent;
        }
    }
    (story, assumed)
}

/// The cursor before each step of a path the search found (`parts`, as
/// [`parts_to`] gives them), found again: the search keeps none on its
/// path, and the same steps may be read from the log more than one way
/// (whichever is found first explains the log as well).
fn cursors_along<T: Trace>(
    trace: &T,
    order: &Order,
    start: &T::Cursor,
    parts: &[Part<Action<T>>],
) -> Option<Vec<T::Cursor>>
where
    Action<T>: Clone + PartialEq,
{
    // Each cursor reached so far, with the cursors before each step to it.
    let mut frontier: Vec<(T::Cursor, Vec<T::Cursor>)> = vec![(start.clone(), Vec::new())];
    let mut silent = Vec::new();
    let mut explained = Vec::new();
    let mut taken = order.start();
    let mut round = 0;
    for part in parts {
        let first = match part.event {
            Some(_) => order.first_pending(&taken, round),
            None => trace.len(),
        };
        let is_pending = |j: usize| part.event.is_some() && order.pending(&taken, round, j);
        // In the order found, the same on every run.
        let mut reached: Vec<(T::Cursor, Vec<T::Cursor>)> = Vec::new();
        let mut seen: HashSet<T::Cursor> = HashSet::new();
        // Within the part: a cursor, how many of its steps it has taken,
        // and the cursors before them.
        let mut layer: Vec<(T::Cursor, usize, Vec<T::Cursor>)> =
            frontier.into_iter().map(|(c, h)| (c, 0, h)).collect();
        while !layer.is_empty() {
            let mut deeper = Vec::new();
            for (cursor, done, history) in layer {
                if done == part.silent {
                    match part.event {
                        Some(k) => {
                            explained.clear();
                            trace.explain(&cursor, k, &mut explained);
                            for (action, after) in explained.drain(..) {
                                let own = match (&action, part.actions.get(part.silent)) {
                                    (None, None) => Some(false),
                                    (Some(a), Some(b)) if a == b => Some(true),
                                    _ => None,
                                };
                                if let Some(own) = own {
                                    let mut h = history.clone();
                                    if own {
                                        h.push(cursor.clone());
                                    }
                                    if seen.insert(after.clone()) {
                                        reached.push((after, h));
                                    }
                                }
                            }
                        }
                        None => {
                            if seen.insert(cursor.clone()) {
                                reached.push((cursor.clone(), history.clone()));
                            }
                        }
                    }
                }
                let Some(next) = part.actions.get(done).filter(|_| done < part.silent) else {
                    continue;
                };
                silent.clear();
                trace.silent_pending(&cursor, first, &is_pending, &mut silent);
                for (action, after) in silent.drain(..) {
                    if action == *next {
                        let mut h = history.clone();
                        h.push(cursor.clone());
                        deeper.push((after, done + 1, h));
                    }
                }
            }
            if deeper.len() > CANDIDATE_BUDGET {
                return None;
            }
            layer = deeper;
        }
        if reached.is_empty() || reached.len() > CANDIDATE_BUDGET {
            return None;
        }
        if let Some(k) = part.event {
            taken = order.take(&taken, k);
            round += 1;
        }
        frontier = reached;
    }
    frontier.into_iter().map(|(_, h)| h).next()
}

/// The first state along the path that breaks `property`.
fn first_breaking<M: Model>(
    model: &M,
    init: &M::State,
    actions: &[M::Action],
    property: &stateright::Property<M>,
) -> Option<M::State>
where
    M::State: Clone,
    M::Action: Clone,
{
    let mut state = init.clone();
    if !(property.condition)(model, &state) {
        return Some(state);
    }
    for action in actions {
        state = model.next_state(&state, action.clone())?;
        if !(property.condition)(model, &state) {
            return Some(state);
        }
    }
    None
}

/// A queue's verdict in words.
pub fn text(queue: &str, verdict: &Verdict) -> String {
    text_at(queue, verdict, &|line| format!("line {line}"))
}

/// A queue's verdict in words, each line named by `place` (`line 5`, or
/// `a.ndjson:5` for merged files).
pub fn text_at(queue: &str, verdict: &Verdict, place: &dyn Fn(usize) -> String) -> String {
    let name = if queue.is_empty() {
        "the queue".to_string()
    } else {
        format!("queue {queue}")
    };
    match verdict {
        Verdict::Conforms {
            violated, assumed, ..
        } if violated.is_empty() => format!("{name}: conforms\n{}", assumed_text(assumed, place)),
        Verdict::Conforms {
            violated,
            story,
            legend,
            assumed,
            ..
        } => {
            let mut out = if verdict.exit_code() == 0 {
                format!("{name}: conforms; some explanation of the log violates a property, none for certain (--strict)\n")
            } else {
                format!("{name}: conforms, and the log violates a property: a real violation in a real run\n")
            };
            if !legend.is_empty() {
                out.push_str(&format!("  the model's names for the log's: {legend}\n"));
            }
            for v in violated {
                let how = if v.certain {
                    "every explanation of the log breaks it"
                } else {
                    "some explanation of the log breaks it (the log cannot tell, e.g. whether a worker crashed after its last event)"
                };
                out.push_str(&format!("  {}: {how}\n", v.property));
            }
            let ending = violated
                .iter()
                .map(|v| v.why.as_str())
                .collect::<Vec<_>>()
                .join("; ");
            out.push_str(&story_text(story, &ending));
            out.push_str(&assumed_text(assumed, place));
            out
        }
        Verdict::Departs {
            line,
            state,
            candidates,
            allowed,
            says,
        } => {
            let mut out = format!(
                "{name}: departs at {}: no model step logs what the log says there\n  the log says: {says}\n  the model was in ({candidates} candidate state(s); the first):\n",
                place(*line)
            );
            for (row, value) in state {
                out.push_str(&format!("    {row}: {value}\n"));
            }
            out.push_str("  the model allowed there:\n");
            for a in allowed {
                out.push_str(&format!("    {a}\n"));
            }
            out
        }
        Verdict::Inconclusive { line: 0, why, .. } => format!("{name}: inconclusive: {why}\n"),
        Verdict::Inconclusive { line, why, .. } => {
            format!("{name}: inconclusive at {}: {why}\n", place(*line))
        }
    }
}

/// The silent steps an explanation assumed, one a line.
fn assumed_text(assumed: &[Assumed], place: &dyn Fn(usize) -> String) -> String {
    if assumed.is_empty() {
        return String::new();
    }
    let mut out = String::from("  silent steps assumed (the log cannot show them):\n");
    for a in assumed {
        match a.before {
            Some(line) => out.push_str(&format!("    before {}: {}\n", place(line), a.step)),
            None => out.push_str(&format!("    after the last line: {}\n", a.step)),
        }
    }
    out
}

/// A queue's verdict as its typed record (`validate --json`).
pub fn record(queue: &str, verdict: &Verdict) -> QueueVerdict {
    let mut record = QueueVerdict {
        exit_code: verdict.exit_code(),
        queue: queue.to_string(),
        verdict: verdict.word().to_string(),
        ..QueueVerdict::default()
    };
    match verdict {
        Verdict::Conforms {
            violated,
            story,
            legend,
            assumed,
            ..
        } => {
            record.names = Some(legend.clone());
            record.assumed = Some(
                assumed
                    .iter()
                    .map(|a| AssumedStep {
                        before_line: a.before,
                        step: a.step.clone(),
                    })
                    .collect(),
            );
            record.violated = Some(
                violated
                    .iter()
                    .map(|v| ViolatedProperty {
                        certain: v.certain,
                        property: v.property.clone(),
                        why: v.why.clone(),
                    })
                    .collect(),
            );
            if !violated.is_empty() {
                record.story = Some(steps_of(story));
            }
        }
        Verdict::Departs {
            line,
            state,
            candidates,
            allowed,
            says,
        } => {
            record.line = Some(*line);
            record.says = Some(says.clone());
            record.candidates = Some(*candidates);
            record.state = Some(
                state
                    .iter()
                    .map(|(row, value)| RowValue {
                        row: row.clone(),
                        value: value.clone(),
                    })
                    .collect(),
            );
            record.allowed = Some(allowed.clone());
        }
        Verdict::Inconclusive {
            line,
            candidates,
            why,
        } => {
            record.line = (*line > 0).then_some(*line);
            record.candidates = Some(*candidates);
            record.why = Some(why.clone());
        }
    }
    record
}

/// The worst of several queues' exit codes: departs, then inconclusive,
/// then a violation.
pub fn worst(codes: impl IntoIterator<Item = u8>) -> u8 {
    let rank = |c: u8| match c {
        0 => 0,
        1 => 1,
        3 => 2,
        _ => 3,
    };
    codes.into_iter().max_by_key(|&c| rank(c)).unwrap_or(0)
}
