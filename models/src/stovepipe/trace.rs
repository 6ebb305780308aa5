//! A queue's event log read against the stovepipe model: each model step
//! leaves records of what it did (`log.rs`), what the system would log for
//! it is read off them (`trace/observe.rs`), and a logged event is a step
//! whose observation is the same event. The cursor carries what the
//! checked state does not keep: row versions, what each worker read, and
//! which of the log's workers each model worker is.

use super::log::{Ledger, Log, Seen, Versions};
use super::story::{acting_index, carry_labels};
use super::{Action, Bounds, Build, Design, Req, State, Stovepipe, MAX_FAULTS, MAX_REQUESTS};
use crate::events::stovepipe::{Event, MessageName};
use crate::events::{Header, Record};
use crate::{OrderValue, StoryStep};
use std::collections::HashMap;

mod observe;
mod order;
mod versions;

pub use super::log::step_name;
use observe::{kinds, message_name, observe, Observation};
use versions::Bases;

/// A model worker as the validator knows it: the log's worker id (once a
/// logged delivery or its first event names it) and what it last read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Tag {
    id: Option<u32>,
    seen: Seen,
}

/// A candidate: a model state and what matching needs beyond it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cursor {
    state: State,
    versions: Versions,
    tags: Vec<Tag>,
}

/// The steps a system may leave out of its log (its header's `unlogged`).
#[derive(Clone, Copy, Debug, Default)]
struct Unlogged {
    deliver: bool,
    finish_build: bool,
}

/// One queue's log, ready to be validated against one design.
pub struct QueueTrace {
    model: Stovepipe,
    /// The log's events, with their lines.
    events: Vec<(usize, Record<Event>)>,
    /// The events with the model's versions, as they are matched.
    matched: Vec<Event>,
    /// How far the log's versions are from the model's, row by row.
    bases: Bases,
    /// The request IDs, in the order they arrive: R1, R2, ...
    names: Vec<String>,
    requests: HashMap<String, Req>,
    /// Each worker id of the log, as a number.
    ids: HashMap<String, u32>,
    id_names: Vec<String>,
    /// The last event each worker id takes (as the actor); `None`: it
    /// takes none (its delivery is all the log has of it).
    last_event: Vec<Option<usize>>,
    /// The last logged delivery of each request's message kinds (process,
    /// signal, dead).
    last_delivery: HashMap<(Req, MessageName), usize>,
    unlogged: Unlogged,
    /// The header's `order_slack_ms`.
    order_slack_ms: Option<u64>,
}

/// Why a queue's log cannot be read against the model: a bad log (exit 2),
/// or a run beyond what the model holds (inconclusive, exit 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceError {
    Bad { line: usize, message: String },
    Beyond { line: usize, message: String },
}

/// `worker 2`, as a story names a worker, in `text`.
fn told_worker(text: &str) -> Option<String> {
    let at = text.find(WORKER)? + WORKER.len();
    let digits = text[at..].chars().take_while(char::is_ascii_digit).count();
    (digits > 0).then(|| text[at - WORKER.len()..at + digits].to_string())
}

const WORKER: &str = "worker ";

/// `text` with each worker the story numbers (`worker 2`) named as in
/// `names` (story's, log's), in one pass: a log's name is never renamed.
fn rename_workers(text: &str, names: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(WORKER) {
        let end = at + WORKER.len();
        let digits = rest[end..].chars().take_while(char::is_ascii_digit).count();
        let told = &rest[at..end + digits];
        out.push_str(&rest[..at]);
        match names.iter().find(|(t, _)| digits > 0 && t == told) {
            Some((_, name)) => out.push_str(name),
            None => out.push_str(told),
        }
        rest = &rest[end + digits..];
    }
    out.push_str(rest);
    out
}

/// Whether the line is a write the database refused.
fn refused(event: &Event) -> bool {
    matches!(
        event,
        Event::Cas { aborted: true, .. }
            | Event::Transaction { aborted: true, .. }
            | Event::Reap { aborted: true, .. }
    )
}

/// The worker an event is by, if a worker's step logs it.
fn is_worker_event(event: &Event) -> bool {
    !matches!(
        event,
        Event::Arrive { .. } | Event::Deliver { .. } | Event::FinishBuild { .. }
    )
}

impl QueueTrace {
    /// The model for one queue's events: `requests` is the number of
    /// arrivals, K and the deliveries come from the header, and the fault
    /// budgets are as many as the log has deliveries (a crash or a stall is
    /// inferred only where a delivery needs it), at most the model's limit.
    pub fn new(
        design: Design,
        header: &Header,
        split_read: bool,
        events: Vec<(usize, Record<Event>)>,
    ) -> Result<QueueTrace, TraceError> {
        let first = events.first().map_or(1, |(line, _)| *line);
        let missing = |field: &str| {
            TraceError::Bad {
            line: first,
            message: format!(
                "field `{field}` is missing from the header line (the system's configuration; validate reads no flags for it)"
            ),
        }
        };
        let max_concurrent = header
            .max_concurrent
            .ok_or_else(|| missing("max_concurrent"))?;
        let max_deliveries = header
            .max_deliveries
            .ok_or_else(|| missing("max_deliveries"))?;
        let mut names = Vec::new();
        let mut requests = HashMap::new();
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut id_names = Vec::new();
        let mut last_event = Vec::new();
        let mut last_delivery = HashMap::new();
        let mut deliveries = 0usize;
        let intern = |name: &str,
                      ids: &mut HashMap<String, u32>,
                      id_names: &mut Vec<String>,
                      last_event: &mut Vec<Option<usize>>|
         -> u32 {
            *ids.entry(name.to_string()).or_insert_with(|| {
                id_names.push(name.to_string());
                last_event.push(None);
                id_names.len() as u32 - 1
            })
        };
        for (k, (line, record)) in events.iter().enumerate() {
            match &record.event {
                Event::Arrive { request } => {
                    if requests.contains_key(request) {
                        return Err(TraceError::Bad {
                            line: *line,
                            message: format!("field `request`: {request} arrives twice"),
                        });
                    }
                    if names.len() == MAX_REQUESTS as usize {
                        return Err(TraceError::Beyond {
                            line: *line,
                            message: format!(
                                "more than {MAX_REQUESTS} requests on one queue, the most the model holds"
                            ),
                        });
                    }
                    requests.insert(request.clone(), names.len() as Req);
                    names.push(request.clone());
                }
                Event::Deliver { worker, .. } => {
                    deliveries += 1;
                    intern(worker, &mut ids, &mut id_names, &mut last_event);
                }
                event if is_worker_event(event) => {
                    let id = intern(&record.actor, &mut ids, &mut id_names, &mut last_event);
                    last_event[id as usize] = Some(k);
                }
                _ => {}
            }
        }
        // After every arrival: in a log of several processes a delivery
        // may be written before its request's arrival.
        for (k, (_, record)) in events.iter().enumerate() {
            if let Event::Deliver {
                request, message, ..
            } = &record.event
            {
                if let Some(&r) = requests.get(request) {
                    last_delivery.insert((r, *message), k);
                }
            }
        }
        let faults = deliveries.min(MAX_FAULTS as usize) as u8;
        let bounds = Bounds {
            requests: (names.len() as u8).max(1),
            max_concurrent,
            crashes: faults,
            stalls: faults,
            max_deliveries,
        };
        bounds.validate().map_err(|message| TraceError::Bad {
            line: first,
            message: format!("header: {message}"),
        })?;
        let mut model = Stovepipe::new(design, bounds);
        model.options.split_read = split_read;
        model.options.delayed_hold = header.hold == Some(crate::events::HoldName::Delayed);
        let unlogged = Unlogged {
            deliver: header.unlogged.iter().any(|u| u == "deliver"),
            finish_build: header.unlogged.iter().any(|u| u == "finish_build"),
        };
        let several = events.iter().any(|(_, r)| r.process != events[0].1.process);
        let bases = Bases::of(events.iter().map(|(_, r)| &r.event), several);
        let matched = events
            .iter()
            .map(|(_, r)| bases.to_model(&r.event))
            .collect();
        Ok(QueueTrace {
            model,
            events,
            matched,
            bases,
            names,
            requests,
            ids,
            id_names,
            last_event,
            last_delivery,
            unlogged,
            order_slack_ms: header.order_slack_ms,
        })
    }

    fn name(&self, r: Req) -> String {
        self.names
            .get(r as usize)
            .cloned()
            .unwrap_or_else(|| super::request_name(r))
    }

    /// Takes `action`, binding the worker it creates or moves to `bind`:
    /// the cursor after it and what it would log.
    fn take(&self, c: &Cursor, action: Action, bind: Option<u32>) -> (Cursor, Vec<Observation>) {
        let acting = acting_index(action);
        let mut ledger = Ledger {
            versions: c.versions,
            seen: acting.map_or(Seen::default(), |i| c.tags[i].seen),
            next_worker: 0,
        };
        let mut log = Log::recording();
        let next = self.model.apply(&c.state, action, &mut log);
        let observed = observe(&log.records(), &mut ledger, self.model.design.slots);
        let moved = match action {
            Action::Deliver { .. } => Some(Tag {
                id: bind,
                seen: Seen::default(),
            }),
            _ => acting.map(|i| Tag {
                id: c.tags[i].id.or(bind),
                seen: ledger.seen,
            }),
        };
        let tags = carry_labels(
            &self.model,
            &c.state,
            action,
            &next,
            &c.versions,
            &ledger,
            &c.tags,
            moved,
        );
        let cursor = Cursor {
            state: next,
            versions: ledger.versions,
            tags,
        };
        (cursor, observed)
    }

    fn worker_id(&self, record: &Record<Event>) -> Option<u32> {
        match &record.event {
            Event::Deliver { worker, .. } => self.ids.get(worker).copied(),
            _ => self.ids.get(&record.actor).copied(),
        }
    }

    /// A model's event in the log's words (its versions the log's).
    fn render(&self, actor: &str, event: Event) -> String {
        let record = Record {
            model: None,
            queue: String::new(),
            ts_ms: None,
            process: None,
            seq: None,
            actor: actor.to_string(),
            event: self.bases.to_log(&event),
        };
        serde_json::to_string(&record).expect("an event is JSON")
    }
}

impl crate::Trace for QueueTrace {
    type Model = Stovepipe;
    type Cursor = Cursor;

    fn model(&self) -> &Stovepipe {
        &self.model
    }

    fn len(&self) -> usize {
        self.events.len()
    }

    fn line(&self, k: usize) -> usize {
        self.events[k].0
    }

    fn says(&self, k: usize) -> String {
        let record = &self.events[k].1;
        let record = Record {
            model: None,
            queue: String::new(),
            ts_ms: None,
            process: None,
            seq: None,
            actor: record.actor.clone(),
            event: record.event.clone(),
        };
        serde_json::to_string(&record).expect("an event is JSON")
    }

    fn start(&self) -> Cursor {
        Cursor {
            state: self.model.initial_state(),
            versions: Versions::default(),
            tags: Vec::new(),
        }
    }

    fn state<'a>(&self, cursor: &'a Cursor) -> &'a State {
        &cursor.state
    }

    fn explain(&self, c: &Cursor, k: usize, out: &mut Vec<(Option<Action>, Cursor)>) {
        let record = &self.events[k].1;
        let s = &c.state;
        let id = self.worker_id(record);
        let mut candidates: Vec<(Action, Option<u32>)> = Vec::new();
        match &record.event {
            Event::Arrive { .. } => {
                if s.arrived() < self.model.bounds.requests {
                    candidates.push((Action::Arrive, None));
                }
            }
            Event::Deliver {
                request, message, ..
            } => {
                let bound = c.tags.iter().any(|t| t.id.is_some() && t.id == id);
                if let (Some(&r), false) = (self.requests.get(request), bound) {
                    for &kind in kinds(*message) {
                        let visible = r < s.arrived()
                            && s.message(r, kind)
                                .is_some_and(|m| self.model.deliverable(&m));
                        if visible {
                            candidates.push((Action::Deliver { request: r, kind }, id));
                        }
                    }
                }
            }
            Event::FinishBuild { request } => {
                if let Some(&r) = self.requests.get(request) {
                    if r < s.arrived() && s.build(r) == Build::Running {
                        candidates.push((Action::FinishBuild(r), None));
                    }
                }
            }
            _ => {
                let mine: Vec<usize> = (0..c.tags.len())
                    .filter(|&i| id.is_some() && c.tags[i].id == id)
                    .collect();
                if mine.is_empty() {
                    // A worker whose delivery was not logged: its first event
                    // names it.
                    for i in (0..c.tags.len()).filter(|&i| c.tags[i].id.is_none()) {
                        candidates.push((Action::Step(i), id));
                    }
                } else if refused(&record.event) {
                    // A write the database refused: the worker reads again.
                    candidates.extend(mine.into_iter().map(|i| (Action::Abort(i), None)));
                } else {
                    candidates.extend(mine.into_iter().map(|i| (Action::Step(i), None)));
                }
            }
        }
        let worker = match &record.event {
            Event::Deliver { worker, .. } => worker.as_str(),
            _ => "",
        };
        for (action, bind) in candidates {
            let (next, observed) = self.take(c, action, bind);
            if let [one] = observed.as_slice() {
                if Self::agrees(&self.event_of(one, worker), &self.matched[k]) {
                    out.push((Some(action), next));
                }
            }
        }
    }

    fn silent(&self, c: &Cursor, k: usize, out: &mut Vec<(Action, Cursor)>) {
        self.silent_pending(c, k, &|j| j >= k, out)
    }

    /// A crash is of a worker whose lines are all taken; a stall of one
    /// whose message is delivered again in a line still to come.
    fn silent_pending(
        &self,
        c: &Cursor,
        _k: usize,
        pending: &dyn Fn(usize) -> bool,
        out: &mut Vec<(Action, Cursor)>,
    ) {
        let s = &c.state;
        let logs_from = |id: Option<u32>| {
            id.and_then(|id| self.last_event[id as usize])
                .is_some_and(pending)
        };
        for (i, tag) in c.tags.iter().enumerate() {
            let worker = s.worker(i);
            // A crash: the worker never logs again.
            if s.crashes_left() > 0 && !logs_from(tag.id) {
                out.push((Action::Crash(i), self.take(c, Action::Crash(i), None).0));
            }
            // A stall: the worker logs again, and its message is delivered
            // again (when deliveries are logged) while it still runs.
            // (Out of deliveries, it is its dead message that is.)
            let later = |name| {
                self.last_delivery
                    .get(&(worker.request, name))
                    .is_some_and(|&at| pending(at))
            };
            let redelivered = self.unlogged.deliver
                || later(message_name(worker.message))
                || later(MessageName::Dead);
            let stall = tag.id.is_none() || (logs_from(tag.id) && redelivered);
            if s.stalls_left() > 0 && worker.holds_message && stall {
                out.push((Action::Stall(i), self.take(c, Action::Stall(i), None).0));
            }
        }
        if self.unlogged.deliver {
            for m in s.messages().filter(|m| self.model.deliverable(m)) {
                let action = Action::Deliver {
                    request: m.request,
                    kind: m.kind,
                };
                out.push((action, self.take(c, action, None).0));
            }
        }
        if self.unlogged.finish_build {
            for r in s.running_builds() {
                let action = Action::FinishBuild(r);
                out.push((action, self.take(c, action, None).0));
            }
        }
    }

    fn process(&self, k: usize) -> Option<&str> {
        self.events[k].1.process.as_deref()
    }

    fn time(&self, k: usize) -> Option<u64> {
        self.events[k].1.ts_ms
    }

    fn order_slack_ms(&self) -> Option<u64> {
        self.order_slack_ms
    }

    fn order(&self, k: usize, out: &mut Vec<OrderValue>) {
        let record = &self.events[k].1;
        self.order_values(&record.actor, &record.event, out);
    }

    const NAMES_ACTORS: bool = true;

    /// A story's workers by the log's ids: the teller numbers them in the
    /// order of their deliveries (`worker 2`); the cursor before each
    /// worker's step knows which of the log's it is.
    fn name_actors(&self, story: &mut [StoryStep], actions: &[Action], before: &[Cursor]) {
        let mut names: Vec<(String, String)> = Vec::new();
        for ((step, &action), cursor) in story.iter().zip(actions).zip(before) {
            let id = acting_index(action).and_then(|i| cursor.tags.get(i)?.id);
            let (Some(id), Some(told)) = (id, told_worker(&step.actor)) else {
                continue;
            };
            if !names.iter().any(|(t, _)| *t == told) {
                names.push((told, self.id_names[id as usize].clone()));
            }
        }
        for step in story.iter_mut() {
            step.actor = rename_workers(&step.actor, &names);
            step.action = rename_workers(&step.action, &names);
        }
    }

    fn legend(&self) -> String {
        let names: Vec<String> = self
            .names
            .iter()
            .enumerate()
            .map(|(r, name)| format!("{} = {name}", super::request_name(r as Req)))
            .collect();
        names.join(", ")
    }

    fn allowed(&self, c: &Cursor, _k: usize) -> Vec<String> {
        let s = &c.state;
        let mut allowed = Vec::new();
        if s.arrived() < self.model.bounds.requests {
            let (_, observed) = self.take(c, Action::Arrive, None);
            allowed.extend(
                observed
                    .iter()
                    .map(|o| self.render("client", self.event_of(o, ""))),
            );
        }
        for m in s.messages().filter(|m| self.model.deliverable(m)) {
            let action = Action::Deliver {
                request: m.request,
                kind: m.kind,
            };
            let (_, observed) = self.take(c, action, None);
            let words = if self.unlogged.deliver {
                " (silent)"
            } else {
                ""
            };
            allowed.extend(observed.iter().map(|o| {
                format!(
                    "{}{words}",
                    self.render("broker", self.event_of(o, "a new worker"))
                )
            }));
        }
        for (i, tag) in c.tags.iter().enumerate() {
            let actor = tag.id.map_or("an unnamed worker".to_string(), |id| {
                self.id_names[id as usize].clone()
            });
            let (_, observed) = self.take(c, Action::Step(i), None);
            allowed.extend(
                observed
                    .iter()
                    .map(|o| self.render(&actor, self.event_of(o, ""))),
            );
        }
        for r in s.running_builds() {
            let words = if self.unlogged.finish_build {
                " (silent)"
            } else {
                ""
            };
            allowed.push(format!(
                "{}{words}",
                self.render(
                    "build-system",
                    Event::FinishBuild {
                        request: self.name(r)
                    }
                )
            ));
        }
        if s.crashes_left() > 0 && !c.tags.is_empty() {
            allowed.push("a worker crashes (silent)".into());
        }
        if s.stalls_left() > 0 && s.workers().any(|w| w.holds_message) {
            allowed.push("a worker stalls past the visibility timeout (silent)".into());
        }
        allowed
    }
}

/// One queue's part of a log: its name, whether it reads rows in split
/// statements, and its events with their lines.
pub type QueueLog = (String, bool, Vec<(usize, Record<Event>)>);

/// Splits a log's stovepipe events by queue, in the order each queue first
/// appears; whether the log reads rows in split statements (`read_request`
/// and its kin) is read from the events.
pub fn queues(records: Vec<(usize, Record<Event>)>) -> Vec<QueueLog> {
    crate::events::by_queue(records)
        .into_iter()
        .map(|(q, events)| {
            let split = events.iter().any(|(_, r)| {
                matches!(
                    r.event,
                    Event::ReadRequest { .. } | Event::ReadQueue { .. } | Event::ReadHead { .. }
                )
            });
            (q, split, events)
        })
        .collect()
}

/// A random run of the model on `bounds`, as the log a system would write
/// of it, on queue `queue` (requests `{queue}-r1`..., workers
/// `{queue}-w1`...): for measuring `validate`'s speed (`slotcheck bench`).
/// The tests do not use it: they write logs from stories, independently.
pub fn simulated_log(
    design: Design,
    bounds: Bounds,
    seed: u64,
    queue: &str,
    most: usize,
) -> Vec<Record<Event>> {
    let header = Header {
        max_concurrent: Some(bounds.max_concurrent),
        max_deliveries: Some(bounds.max_deliveries),
        ..Header::default()
    };
    let mut trace = QueueTrace::new(design, &header, false, Vec::new()).expect("bounds in range");
    trace.model = Stovepipe::new(design, bounds);
    trace.names = (0..bounds.requests)
        .map(|r| format!("{queue}-r{}", r + 1))
        .collect();
    // xorshift64*: no dependency for a bench's dice.
    let mut dice = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut roll = |n: usize| {
        dice ^= dice >> 12;
        dice ^= dice << 25;
        dice ^= dice >> 27;
        (dice.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    };
    let mut cursor = crate::Trace::start(&trace);
    let mut records = Vec::new();
    let mut enabled = Vec::new();
    let mut delivered = 0u32;
    for _ in 0..most {
        enabled.clear();
        trace.model.every_action(&cursor.state, &mut enabled);
        if enabled.is_empty() {
            break;
        }
        let action = enabled[roll(enabled.len())];
        let bind = matches!(action, Action::Deliver { .. }).then(|| {
            delivered += 1;
            delivered
        });
        let actor = match action {
            Action::Arrive => "client".to_string(),
            Action::Deliver { .. } => "broker".to_string(),
            Action::FinishBuild(_) => "build-system".to_string(),
            Action::Step(i) | Action::Crash(i) | Action::Stall(i) | Action::Abort(i) => {
                format!("{queue}-w{}", cursor.tags[i].id.unwrap_or(0))
            }
        };
        let (next, observed) = trace.take(&cursor, action, bind);
        let worker = format!("{queue}-w{}", bind.unwrap_or(0));
        for o in &observed {
            records.push(Record {
                model: None,
                queue: queue.to_string(),
                ts_ms: None,
                process: None,
                seq: None,
                actor: actor.clone(),
                event: trace.event_of(o, &worker),
            });
        }
        cursor = next;
    }
    records
}
