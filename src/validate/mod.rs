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
use crate::report::validation::{QueueVerdict, RowValue, ViolatedProperty};
use slotcheck_models::{Narrated, StoryStep, Trace};
use stateright::{Expectation, Model};
use std::collections::{HashMap, HashSet};

/// Silent steps the search may insert before one event.
pub const SILENT_PER_EVENT: usize = 4;
/// Candidates the search may keep after one event before it gives up.
pub const CANDIDATE_BUDGET: usize = 4096;
/// Candidates the silent steps before one event may reach.
pub const SILENT_BUDGET: usize = 200_000;

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
    /// The candidates grew past the budget at `line`.
    Inconclusive { line: usize, candidates: usize },
}

impl Verdict {
    pub fn exit_code(&self) -> u8 {
        match self {
            Verdict::Conforms { violated, .. } if violated.is_empty() => 0,
            Verdict::Conforms { .. } => 1,
            Verdict::Inconclusive { .. } => 3,
            Verdict::Departs { .. } => EXIT_DEPARTS,
        }
    }

    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Conforms { violated, .. } if violated.is_empty() => "conforms",
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

/// A step of the search: its candidate's parent and the actions (silent
/// ones, then the event's) that lead from it.
struct Node<A> {
    parent: usize,
    actions: Vec<A>,
}

type Action<T> = <<T as Trace>::Model as Model>::Action;
type Key<T> = (<T as Trace>::Cursor, u64);

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
    search(trace, false).0
}

/// Validates one queue's log and, when it conforms, tells one explanation
/// (the path of the first candidate left), for a test to write it again.
pub fn validate_and_explain<T: Trace>(trace: &T) -> (Verdict, Option<Vec<StoryStep>>)
where
    Action<T>: Clone + PartialEq,
    <T::Model as Model>::State: Clone,
{
    search(trace, true)
}

fn search<T: Trace>(trace: &T, explain: bool) -> (Verdict, Option<Vec<StoryStep>>)
where
    Action<T>: Clone + PartialEq,
    <T::Model as Model>::State: Clone,
{
    let model = trace.model();
    let properties = model.properties();
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
            ((start.clone(), bits), i)
        })
        .collect();
    let mut arena: Vec<Node<Action<T>>> = (0..roots)
        .map(|i| Node {
            parent: i,
            actions: Vec::new(),
        })
        .collect();
    let mut out = Vec::new();
    let mut steps = Vec::new();
    for k in 0..trace.len() {
        let bound = trace.silent_bound(k).unwrap_or(SILENT_PER_EVENT);
        let mut next: HashMap<Key<T>, usize> = HashMap::new();
        let mut seen: HashSet<Key<T>> = candidates.iter().map(|(key, _)| key.clone()).collect();
        let mut layer: Vec<(Key<T>, usize, Vec<Action<T>>)> = candidates
            .iter()
            .map(|(key, node)| (key.clone(), *node, Vec::new()))
            .collect();
        for depth in 0..=bound {
            for ((cursor, bits), node, path) in &layer {
                steps.clear();
                trace.explain(cursor, k, &mut steps);
                for (action, after) in steps.drain(..) {
                    let bits = bits | broken(&properties, model, trace.state(&after));
                    next.entry((after, bits)).or_insert_with(|| {
                        let mut actions = path.clone();
                        actions.extend(action);
                        arena.push(Node {
                            parent: *node,
                            actions,
                        });
                        arena.len() - 1
                    });
                }
            }
            if depth == bound || layer.is_empty() {
                break;
            }
            let mut deeper = Vec::new();
            for ((cursor, bits), node, path) in &layer {
                out.clear();
                trace.silent(cursor, k, &mut out);
                for (action, after) in out.drain(..) {
                    let bits = bits | broken(&properties, model, trace.state(&after));
                    let key = (after, bits);
                    if seen.insert(key.clone()) {
                        let mut path = path.clone();
                        path.push(action);
                        deeper.push((key, *node, path));
                    }
                }
            }
            if seen.len() > SILENT_BUDGET {
                let verdict = Verdict::Inconclusive {
                    line: trace.line(k),
                    candidates: seen.len(),
                };
                return (verdict, None);
            }
            layer = deeper;
        }
        if next.is_empty() {
            let ((cursor, _), _) = &candidates[0];
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
        if next.len() > CANDIDATE_BUDGET {
            let verdict = Verdict::Inconclusive {
                line: trace.line(k),
                candidates: next.len(),
            };
            return (verdict, None);
        }
        candidates = next.into_iter().collect();
        // The same order on every run, whatever the hash map's.
        candidates.sort_by_key(|(_, node)| *node);
    }
    let explanation = explain.then(|| tell(trace, &starts, &arena, candidates[0].1));
    // After the last event: the workers still running may have crashed
    // (the log cannot show it), which may end in a violation too.
    let mut ends: Vec<(u64, usize)> = candidates.iter().map(|((_, b), n)| (*b, *n)).collect();
    let mut seen: HashSet<Key<T>> = candidates.iter().map(|(key, _)| key.clone()).collect();
    let mut layer: Vec<(Key<T>, usize)> = candidates.clone();
    let bound = trace.silent_bound(trace.len()).unwrap_or(SILENT_PER_EVENT);
    for _ in 0..bound {
        let mut deeper = Vec::new();
        for ((cursor, bits), node) in &layer {
            out.clear();
            trace.silent(cursor, trace.len(), &mut out);
            for (action, after) in out.drain(..) {
                let bits = bits | broken(&properties, model, trace.state(&after));
                let key = (after, bits);
                if seen.len() < SILENT_BUDGET && seen.insert(key.clone()) {
                    arena.push(Node {
                        parent: *node,
                        actions: vec![action],
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
        .fold(u64::MAX, |all, ((_, bits), _)| all & bits);
    let possible = ends.iter().fold(0, |any, (bits, _)| any | bits);
    if possible == 0 {
        let verdict = Verdict::Conforms {
            violated: Vec::new(),
            story: Vec::new(),
            legend: trace.legend(),
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
    let story = tell(trace, &starts, &arena, *node);
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
        },
        explanation,
    )
}

/// The start `node`'s candidate comes from, and the actions from it.
fn path_to<A: Clone>(arena: &[Node<A>], node: usize) -> (usize, Vec<A>) {
    let (root, parts) = parts_to(arena, node);
    (root, parts.into_iter().flatten().collect())
}

/// The start `node`'s candidate comes from, and the actions of each node
/// on the way: each event's (its silent steps, then its own step if it
/// takes one), then each silent step after the last event.
fn parts_to<A: Clone>(arena: &[Node<A>], mut node: usize) -> (usize, Vec<Vec<A>>) {
    let mut parts = Vec::new();
    while arena[node].parent != node {
        parts.push(arena[node].actions.clone());
        node = arena[node].parent;
    }
    parts.reverse();
    (node, parts)
}

/// The story of the path to `node`, with the log's names for the actors
/// where the trace gives them.
fn tell<T: Trace>(
    trace: &T,
    starts: &[T::Cursor],
    arena: &[Node<Action<T>>],
    node: usize,
) -> Vec<StoryStep>
where
    Action<T>: Clone + PartialEq,
{
    let (root, parts) = parts_to(arena, node);
    let actions: Vec<Action<T>> = parts.iter().flatten().cloned().collect();
    let start = &starts[root];
    let mut story = trace.model().tell(trace.state(start), &actions);
    if T::NAMES_ACTORS {
        if let Some(before) = cursors_along(trace, start, &parts) {
            trace.name_actors(&mut story, &actions, &before);
        }
    }
    story
}

/// The cursor before each step of a path the search found (`parts`, as
/// [`parts_to`] gives them), found again: the search keeps none on its
/// path, and the same steps may be read from the log more than one way
/// (whichever is found first explains the log as well).
fn cursors_along<T: Trace>(
    trace: &T,
    start: &T::Cursor,
    parts: &[Vec<Action<T>>],
) -> Option<Vec<T::Cursor>>
where
    Action<T>: Clone + PartialEq,
{
    // Each cursor reached so far, with the cursors before each step to it.
    let mut frontier: Vec<(T::Cursor, Vec<T::Cursor>)> = vec![(start.clone(), Vec::new())];
    let mut silent = Vec::new();
    let mut explained = Vec::new();
    for (j, part) in parts.iter().enumerate() {
        let k = j.min(trace.len());
        // In the order found, the same on every run.
        let mut reached: Vec<(T::Cursor, Vec<T::Cursor>)> = Vec::new();
        let mut seen: HashSet<T::Cursor> = HashSet::new();
        // Within the part: a cursor, how many of its steps it has taken,
        // and the cursors before them.
        let mut layer: Vec<(T::Cursor, usize, Vec<T::Cursor>)> =
            frontier.into_iter().map(|(c, h)| (c, 0, h)).collect();
        while !layer.is_empty() {
            let mut deeper = Vec::new();
            for (cursor, taken, history) in layer {
                if j < trace.len() && taken + 1 >= part.len() {
                    explained.clear();
                    trace.explain(&cursor, k, &mut explained);
                    for (action, after) in explained.drain(..) {
                        let own = match (&action, part.get(taken)) {
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
                if j >= trace.len() && taken == part.len() && seen.insert(cursor.clone()) {
                    reached.push((cursor.clone(), history.clone()));
                }
                let Some(next) = part.get(taken) else {
                    continue;
                };
                silent.clear();
                trace.silent(&cursor, k, &mut silent);
                for (action, after) in silent.drain(..) {
                    if action == *next {
                        let mut h = history.clone();
                        h.push(cursor.clone());
                        deeper.push((after, taken + 1, h));
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
    let name = if queue.is_empty() {
        "the queue".to_string()
    } else {
        format!("queue {queue}")
    };
    match verdict {
        Verdict::Conforms { violated, .. } if violated.is_empty() => {
            format!("{name}: conforms\n")
        }
        Verdict::Conforms {
            violated,
            story,
            legend,
        } => {
            let mut out = format!("{name}: conforms, and the log violates a property: a real violation in a real run\n");
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
                "{name}: departs at line {line}: no model step logs what the log says there\n  the log says: {says}\n  the model was in ({candidates} candidate state(s); the first):\n"
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
        Verdict::Inconclusive { line, candidates } => format!(
            "{name}: inconclusive at line {line}: {candidates} candidate states explain the log so far, more than the budget of {CANDIDATE_BUDGET} (or {SILENT_BUDGET} reached by silent steps)\n"
        ),
    }
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
        } => {
            record.names = Some(legend.clone());
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
        Verdict::Inconclusive { line, candidates } => {
            record.line = Some(*line);
            record.candidates = Some(*candidates);
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
