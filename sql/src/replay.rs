//! A model path run on a real database, statement by statement: each model
//! step is the SQL step of the actor it names (the client's insert, the
//! broker's delivery or expiry, a worker's next statement, the build
//! system's finish), one connection per worker. After every step the
//! database's rows are compared with the model's rows (the story's rows,
//! with the versions it counts); the first difference is a conformance
//! failure, told as the story up to that step with both versions of the row.

use crate::backend::Backend;
use crate::engine::{Conn, Dialect};
use crate::handlers::{Ctx, ReadMode, Step, Variant, Worker};
use crate::parts::{parts_of, Parts};
use crate::store::{self, BuildSystem, Kind};
use serde_json::Value as Json;
use slotcheck_models::stovepipe::{Action, State, Stovepipe};
use slotcheck_models::Narrated;
use std::collections::BTreeMap;

/// One step as replayed: the model's telling, and the SQL's log lines.
pub struct ReplayedStep {
    pub actor: String,
    pub model: String,
    pub sql: Vec<Json>,
}

/// A replay that ran to its end with the rows equal at every step.
pub struct Replayed {
    pub steps: Vec<ReplayedStep>,
    /// The database's rows after the last step.
    pub rows: Vec<(String, String)>,
    /// The violations the final rows show by themselves (see [`row_violations`]).
    pub violations: Vec<&'static str>,
}

/// The first step whose rows differ.
pub struct Conformance {
    pub steps: Vec<ReplayedStep>,
    /// `(row, model's value, database's value)`, `None` where a row is absent.
    pub differences: Vec<(String, Option<String>, Option<String>)>,
}

/// Why a replay did not finish: a conformance failure, or the database
/// failed (an error that is not the design's).
pub enum Failure {
    Conformance(Conformance),
    Database(String),
}

/// The story as text: numbered steps, each the model's words and the SQL
/// log lines of that step.
pub fn story_text(steps: &[ReplayedStep]) -> String {
    let mut out = String::new();
    for (i, step) in steps.iter().enumerate() {
        out.push_str(&format!("{:>3}. {}: {}\n", i + 1, step.actor, step.model));
        for line in &step.sql {
            out.push_str(&format!("       sql: {line}\n"));
        }
    }
    out
}

impl Conformance {
    pub fn text(&self) -> String {
        let mut out = story_text(&self.steps);
        out.push_str(&format!(
            "conformance failure after step {}: the database's rows differ from the model's\n",
            self.steps.len()
        ));
        for (row, model, db) in &self.differences {
            out.push_str(&format!(
                "  {row}: model {}, database {}\n",
                model.as_deref().unwrap_or("(no row)"),
                db.as_deref().unwrap_or("(no row)")
            ));
        }
        out
    }
}

/// The words a story uses for each action (`step worker 3`), parsed: the
/// replay's and the steered live run's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Move {
    Arrive(i64),
    Deliver(Kind, i64),
    Step(usize),
    Crash(usize),
    Stall(usize),
    Finish(i64),
}

impl Move {
    /// A story's step in words, or `None` when it is no step.
    pub(crate) fn parse(words: &str) -> Option<Move> {
        let w: Vec<&str> = words.split_whitespace().collect();
        let num = |t: &str| t.trim_start_matches('R').parse::<i64>().ok();
        let worker = |t: &str| t.parse::<usize>().ok();
        Some(match w.as_slice() {
            ["arrive", r] => Move::Arrive(num(r)?),
            ["deliver", kind, r] => Move::Deliver(
                match *kind {
                    "process" => Kind::Process,
                    "signal" => Kind::Signal,
                    "dead-process" => Kind::DeadProcess,
                    "dead-signal" => Kind::DeadSignal,
                    _ => return None,
                },
                num(r)?,
            ),
            ["finish", "build", r] => Move::Finish(num(r)?),
            ["step", "worker", n] => Move::Step(worker(n)?),
            ["crash", "worker", n] => Move::Crash(worker(n)?),
            ["stall", "worker", n] => Move::Stall(worker(n)?),
            _ => return None,
        })
    }
}

fn parse_move(words: &str) -> Move {
    Move::parse(words).unwrap_or_else(|| panic!("a story's words: `{words}`"))
}

/// The model's rows before the path, with versions (the queue row starts
/// at version 1).
fn initial_rows(model: &Stovepipe, init: &State) -> BTreeMap<String, String> {
    model
        .rows(init)
        .into_iter()
        .map(|(row, value)| {
            if row == "queue" {
                (row, format!("{value} (v1)"))
            } else {
                (row, value)
            }
        })
        .collect()
}

/// The variant a model's options ask for: `split-read` reads in separate
/// statements.
pub fn variant_for(model: &Stovepipe) -> Variant {
    Variant {
        read: if model.options.split_read {
            ReadMode::Separate
        } else {
            ReadMode::Joined
        },
        ..Variant::default()
    }
}

/// Replays `actions` from `init` on a queue of its own in `backend`.
pub fn replay(
    backend: &Backend,
    model: &Stovepipe,
    init: &State,
    actions: &[Action],
) -> Result<Replayed, Failure> {
    let db = |e: crate::engine::DbError| Failure::Database(e.to_string());
    let parts: Parts = parts_of(&model.design).map_err(Failure::Database)?;
    let variant = variant_for(model);
    let dialect = Dialect::of(backend.engine);
    let queue = backend.new_queues(1).map_err(Failure::Database)?[0];
    let mut main = backend.connect(dialect).map_err(Failure::Database)?;
    let builds = BuildSystem::default();
    let words = model.words(init, actions);
    let told = model.tell(init, actions);
    let mut expected = initial_rows(model, init);
    let mut workers: BTreeMap<usize, (Worker, Option<Conn>)> = BTreeMap::new();
    let mut delivered = 0usize;
    let max = model.bounds.max_deliveries as i64;
    let k = model.bounds.max_concurrent as i64;
    let mut steps = Vec::new();
    for (words, story) in words.iter().zip(&told) {
        let mut sql = Vec::new();
        match parse_move(words) {
            Move::Arrive(num) => {
                store::arrive(&mut main, queue, num).map_err(db)?;
                sql.push(serde_json::json!({"event": "arrive", "request": format!("R{num}")}));
            }
            Move::Deliver(kind, num) => {
                delivered += 1;
                let token = delivered as i64;
                let attempts = store::deliver(&mut main, queue, num, kind, token, i64::MAX)
                    .map_err(db)?
                    .ok_or_else(|| {
                        Failure::Database(format!("{} was not visible", kind.render(num)))
                    })?;
                let worker = Worker::new(token, queue, num, kind, parts, variant, k);
                sql.push(serde_json::json!({"event": "deliver", "message": kind.event_name(), "request": format!("R{num}"), "worker": worker.name(), "attempt": if kind.is_dead() { 1 } else { attempts + 1 }}));
                let conn = backend.connect(dialect).map_err(Failure::Database)?;
                workers.insert(delivered, (worker, Some(conn)));
            }
            Move::Step(n) => {
                let (worker, conn) = workers.get_mut(&n).expect("a running worker");
                let conn = conn.as_mut().expect("a worker that has not crashed");
                let mut ctx = Ctx {
                    conn,
                    builds: &builds,
                    events: Vec::new(),
                };
                worker.step(&mut ctx).map_err(db)?;
                sql = ctx.events;
                if worker.step == Step::Done {
                    workers.remove(&n);
                }
            }
            Move::Crash(n) => {
                // The connection is dropped; the message stays in flight
                // until its deadline, which passes now.
                let (worker, conn) = workers.remove(&n).expect("a running worker");
                drop(conn);
                store::expire(&mut main, queue, worker.num, worker.kind, worker.token, max)
                    .map_err(db)?;
            }
            Move::Stall(n) => {
                let (worker, _) = workers.get(&n).expect("a running worker");
                store::expire(&mut main, queue, worker.num, worker.kind, worker.token, max)
                    .map_err(db)?;
            }
            Move::Finish(num) => {
                builds.finish(&mut main, queue, num).map_err(db)?;
                sql.push(
                    serde_json::json!({"event": "finish_build", "request": format!("R{num}")}),
                );
            }
        }
        for change in &story.changes {
            match &change.after {
                Some(value) => expected.insert(change.row.clone(), value.clone()),
                None => expected.remove(&change.row),
            };
        }
        steps.push(ReplayedStep {
            actor: story.actor.clone(),
            model: story.action.clone(),
            sql,
        });
        let actual: BTreeMap<String, String> = store::rows(&mut main, queue, parts.slot, max)
            .map_err(db)?
            .into_iter()
            .collect();
        if actual != expected {
            let mut names: Vec<&String> = expected.keys().chain(actual.keys()).collect();
            names.sort();
            names.dedup();
            let differences = names
                .into_iter()
                .filter(|n| expected.get(*n) != actual.get(*n))
                .map(|n| (n.clone(), expected.get(n).cloned(), actual.get(n).cloned()))
                .collect();
            return Err(Failure::Conformance(Conformance { steps, differences }));
        }
    }
    let rows = store::rows(&mut main, queue, parts.slot, max).map_err(db)?;
    let arrived = rows.iter().filter(|(r, _)| r.starts_with('R')).count() as u8;
    let violations = row_violations(
        &rows,
        k,
        arrived >= model.bounds.requests,
        &workers.values().map(|(w, _)| w).collect::<Vec<_>>(),
    );
    Ok(Replayed {
        steps,
        rows,
        violations,
    })
}

/// The properties the rows show violated by themselves: the contract's
/// invariants judged on the tables alone (and the workers still running).
pub fn row_violations(
    rows: &[(String, String)],
    k: i64,
    all_arrived: bool,
    running: &[&Worker],
) -> Vec<&'static str> {
    let value = |name: &str| rows.iter().find(|(r, _)| r == name).map(|(_, v)| v.clone());
    let requests: Vec<(String, String)> = rows
        .iter()
        .filter(|(r, _)| r.starts_with('R'))
        .map(|(r, v)| (r.clone(), v.split(' ').next().unwrap_or("").to_string()))
        .collect();
    let running_builds = rows
        .iter()
        .filter(|(r, v)| r.starts_with("build ") && v == "running")
        .count() as i64;
    let messages: Vec<&String> = rows
        .iter()
        .filter(|(r, _)| r.contains('('))
        .map(|(_, v)| v)
        .collect();
    let live = |v: &&String| v.starts_with("visible") || v.starts_with("in flight");
    let quiescent = running.is_empty() && !messages.iter().any(live);
    let processing: Vec<&String> = requests
        .iter()
        .filter(|(_, s)| s == "processing")
        .map(|(r, _)| r)
        .collect();
    let queue = value("queue").unwrap_or_default();
    let slot_value = queue
        .split(" (v")
        .next()
        .unwrap_or("")
        .split_once(' ')
        .map_or("", |(_, value)| value)
        .to_string();
    let (low, high) = if let Some(set) = slot_value.strip_prefix('{') {
        let owners: Vec<String> = set
            .trim_end_matches('}')
            .split(", ")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let low = processing.iter().any(|r| !owners.contains(r));
        let high = owners.iter().any(|o| !processing.contains(&o));
        (low, high)
    } else {
        let count: usize = slot_value.parse().unwrap_or(0);
        (count < processing.len(), count > processing.len())
    };
    let mut found = Vec::new();
    let stuck = requests
        .iter()
        .any(|(_, s)| !matches!(s.as_str(), "succeeded" | "superseded" | "dead_lettered"));
    if all_arrived
        && running.is_empty()
        && !messages.iter().any(live)
        && running_builds == 0
        && stuck
    {
        found.push("no-wedge");
    }
    if running_builds > k {
        found.push("builds-within-limit");
    }
    if quiescent && low {
        found.push("count-not-low");
    }
    if quiescent && high {
        found.push("count-not-high");
    }
    // A message in flight that no running worker of its request and kind
    // holds was left by a handler that ended without acking or holding it.
    let left = rows.iter().any(|(name, v)| {
        v.starts_with("in flight") && !running.iter().any(|w| w.kind.render(w.num) == *name)
    });
    if left {
        found.push("no-message-left-in-flight");
    }
    found
}
