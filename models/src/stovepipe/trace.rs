//! A queue's event log read against the stovepipe model: each model step
//! says, through its [`Log`], what the system would log for it (an
//! [`Observation`], from the handlers themselves), and a logged event is a
//! step whose observation is the same event. The cursor carries what the
//! checked state does not keep: row versions, what each worker read, and
//! which of the log's workers each model worker is.

use super::log::{Ledger, Log, Seen, Versions};
use super::story::{acting_index, carry_labels};
use super::{
    Action, Bounds, Build, Delivery, Design, MessageKind, Pc, Req, RequestState, Slots, State,
    Stovepipe, MAX_FAULTS, MAX_REQUESTS,
};
use crate::events::stovepipe::{
    Event, MessageName, QueueRow, RequestRow, RowName, RowState, RowWrite, Values,
};
use crate::events::{Header, Record};
use std::collections::HashMap;

/// What a step would log, in the model's terms (requests by index, rows
/// with the model's versions).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Observation {
    Arrive(Req),
    Deliver {
        request: Req,
        kind: MessageKind,
        attempt: u8,
    },
    /// The parts a read took: all three, or with split reads one.
    Read {
        request: Option<(Req, RequestState, u16)>,
        queue: Option<(Slots, u16)>,
        head: Option<Req>,
        split: bool,
    },
    RereadQueue(Slots, u16),
    RereadRequest(Req, RequestState, u16),
    CasQueue {
        expected: u16,
        set: Slots,
        won: bool,
        step: Pc,
    },
    CasRequest {
        request: Req,
        expected: u16,
        set: RequestState,
        won: bool,
        step: Pc,
    },
    Transaction {
        request: Req,
        queue_expected: u16,
        /// With a request write: the version R's row had to be at.
        request_expected: Option<u16>,
        slots: Slots,
        state: Option<RequestState>,
        won: bool,
        step: Pc,
    },
    Reap {
        expected: u16,
        removed: u32,
        won: bool,
    },
    Submit {
        request: Req,
        started: bool,
    },
    CancelBuild {
        request: Req,
        stopped: bool,
    },
    Ack {
        request: Req,
        kind: MessageKind,
    },
    Hold {
        request: Req,
        kind: MessageKind,
    },
    FinishBuild(Req),
}

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
    /// The request IDs, in the order they arrive: R1, R2, ...
    names: Vec<String>,
    requests: HashMap<String, Req>,
    /// Each worker id of the log, as a number.
    ids: HashMap<String, u32>,
    id_names: Vec<String>,
    /// The last event each worker id takes (as the actor).
    last_event: Vec<usize>,
    /// The last logged delivery of each request's message kinds (process,
    /// signal, dead).
    last_delivery: HashMap<(Req, MessageName), usize>,
    unlogged: Unlogged,
}

/// Why a queue's log cannot be read against the model: a bad log (exit 2),
/// or a run beyond what the model holds (inconclusive, exit 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceError {
    Bad { line: usize, message: String },
    Beyond { line: usize, message: String },
}

fn message_name(kind: MessageKind) -> MessageName {
    match kind {
        MessageKind::Process => MessageName::Process,
        MessageKind::Signal => MessageName::Signal,
        MessageKind::DeadProcess | MessageKind::DeadSignal => MessageName::Dead,
    }
}

fn kinds(name: MessageName) -> &'static [MessageKind] {
    match name {
        MessageName::Process => &[MessageKind::Process],
        MessageName::Signal => &[MessageKind::Signal],
        MessageName::Dead => &[MessageKind::DeadProcess, MessageKind::DeadSignal],
    }
}

fn row_state(state: RequestState) -> RowState {
    match state {
        RequestState::Accepted => RowState::Accepted,
        RequestState::Processing => RowState::Processing,
        RequestState::Succeeded => RowState::Succeeded,
        RequestState::Superseded => RowState::Superseded,
        RequestState::DeadLettered => RowState::DeadLettered,
    }
}

/// A step's name as a log gives it: `write_processing` for `WriteProcessing`.
pub fn step_name(pc: Pc) -> String {
    let mut name = String::new();
    for (i, c) in pc.name().chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_lowercase());
    }
    name
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
        design: &'static dyn Design,
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
                      last_event: &mut Vec<usize>|
         -> u32 {
            *ids.entry(name.to_string()).or_insert_with(|| {
                id_names.push(name.to_string());
                last_event.push(0);
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
                Event::Deliver {
                    worker,
                    request,
                    message,
                    ..
                } => {
                    deliveries += 1;
                    intern(worker, &mut ids, &mut id_names, &mut last_event);
                    if let Some(&r) = requests.get(request) {
                        last_delivery.insert((r, *message), k);
                    }
                }
                event if is_worker_event(event) => {
                    let id = intern(&record.actor, &mut ids, &mut id_names, &mut last_event);
                    last_event[id as usize] = k;
                }
                _ => {}
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
        let unlogged = Unlogged {
            deliver: header.unlogged.iter().any(|u| u == "deliver"),
            finish_build: header.unlogged.iter().any(|u| u == "finish_build"),
        };
        Ok(QueueTrace {
            model,
            events,
            names,
            requests,
            ids,
            id_names,
            last_event,
            last_delivery,
            unlogged,
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
        let ledger = Ledger {
            versions: c.versions,
            seen: acting.map_or(Seen::default(), |i| c.tags[i].seen),
            next_worker: 0,
        };
        let mut log = Log::observing(ledger);
        let next = self.model.apply(&c.state, action, &mut log);
        let (observed, ledger) = log.finish_observing();
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

    fn queue_row(&self, slots: Slots, version: u16) -> QueueRow {
        let (count, ids) = self.columns(slots);
        QueueRow {
            version: version as u64,
            in_flight_count: count,
            in_flight_request_ids: ids,
        }
    }

    fn columns(&self, slots: Slots) -> (Option<u64>, Option<Vec<String>>) {
        match slots {
            Slots::Count(n) => (Some(n as u64), None),
            Slots::Owners(set) => (None, Some(self.owners(set))),
        }
    }

    fn owners(&self, set: u32) -> Vec<String> {
        let mut names: Vec<String> = (0..MAX_REQUESTS)
            .filter(|r| set & (1 << r) != 0)
            .map(|r| self.name(r))
            .collect();
        names.sort();
        names
    }

    fn request_row(&self, r: Req, state: RequestState, version: u16) -> RequestRow {
        RequestRow {
            id: self.name(r),
            state: row_state(state),
            version: version as u64,
        }
    }

    fn slot_values(&self, slots: Slots) -> Values {
        let (count, ids) = self.columns(slots);
        Values {
            in_flight_count: count,
            in_flight_request_ids: ids,
            ..Values::default()
        }
    }

    /// An observation as the log's event, with the log's names. A delivery
    /// names no worker: the log's is taken.
    fn event_of(&self, o: &Observation, worker: &str) -> Event {
        match *o {
            Observation::Arrive(r) => Event::Arrive {
                request: self.name(r),
            },
            Observation::Deliver {
                request,
                kind,
                attempt,
            } => Event::Deliver {
                message: message_name(kind),
                request: self.name(request),
                worker: worker.to_string(),
                attempt: Some(attempt),
            },
            Observation::Read {
                request,
                queue,
                head,
                split,
            } => match (request, queue, head, split) {
                (Some((r, s, v)), Some((q, qv)), Some(h), false) => Event::Read {
                    request: self.request_row(r, s, v),
                    queue_row: self.queue_row(q, qv),
                    head: self.name(h),
                },
                (Some((r, s, v)), None, None, true) => Event::ReadRequest {
                    request: self.request_row(r, s, v),
                },
                (None, Some((q, qv)), None, true) => Event::ReadQueue {
                    queue_row: self.queue_row(q, qv),
                },
                (None, None, Some(h), true) => Event::ReadHead { head: self.name(h) },
                other => unreachable!("a read of {other:?}"),
            },
            Observation::RereadQueue(q, v) => Event::RereadQueue {
                queue_row: self.queue_row(q, v),
            },
            Observation::RereadRequest(r, s, v) => Event::RereadRequest {
                request: self.request_row(r, s, v),
            },
            Observation::CasQueue {
                expected,
                set,
                won,
                step,
            } => Event::Cas {
                row: RowName::Queue,
                request: None,
                expected_version: expected as u64,
                set: self.slot_values(set),
                won,
                step: Some(step_name(step)),
            },
            Observation::CasRequest {
                request,
                expected,
                set,
                won,
                step,
            } => Event::Cas {
                row: RowName::Request,
                request: Some(self.name(request)),
                expected_version: expected as u64,
                set: Values {
                    state: Some(row_state(set)),
                    ..Values::default()
                },
                won,
                step: Some(step_name(step)),
            },
            Observation::Transaction {
                request,
                queue_expected,
                request_expected,
                slots,
                state,
                won,
                step,
            } => {
                let mut writes = vec![RowWrite {
                    row: RowName::Queue,
                    request: None,
                    expected_version: queue_expected as u64,
                    set: self.slot_values(slots),
                }];
                if let (Some(to), Some(version)) = (state, request_expected) {
                    writes.push(RowWrite {
                        row: RowName::Request,
                        request: Some(self.name(request)),
                        expected_version: version as u64,
                        set: Values {
                            state: Some(row_state(to)),
                            ..Values::default()
                        },
                    });
                }
                Event::Transaction {
                    writes,
                    won,
                    step: Some(step_name(step)),
                }
            }
            Observation::Reap {
                expected,
                removed,
                won,
            } => Event::Reap {
                expected_version: expected as u64,
                removed: self.owners(removed),
                won,
            },
            Observation::Submit { request, started } => Event::Submit {
                request: self.name(request),
                started,
            },
            Observation::CancelBuild { request, stopped } => Event::CancelBuild {
                request: self.name(request),
                stopped: Some(stopped),
            },
            Observation::Ack { request, kind } => Event::Ack {
                message: message_name(kind),
                request: self.name(request),
            },
            Observation::Hold { request, kind } => Event::Hold {
                message: message_name(kind),
                request: self.name(request),
            },
            Observation::FinishBuild(r) => Event::FinishBuild {
                request: self.name(r),
            },
        }
    }

    /// Whether the model's event is the logged one: lists in any order, and
    /// what the log leaves out (a step's name, an attempt, a lost reap's
    /// owners) not compared.
    fn agrees(model: &Event, log: &Event) -> bool {
        let mut model = normal(model);
        let log = normal(log);
        match (&mut model, &log) {
            (Event::Deliver { attempt, .. }, Event::Deliver { attempt: None, .. }) => {
                *attempt = None
            }
            (Event::Cas { step, .. }, Event::Cas { step: None, .. })
            | (Event::Transaction { step, .. }, Event::Transaction { step: None, .. }) => {
                *step = None
            }
            (Event::CancelBuild { stopped, .. }, Event::CancelBuild { stopped: None, .. }) => {
                *stopped = None
            }
            (
                Event::Reap {
                    removed,
                    won: false,
                    ..
                },
                Event::Reap { won: false, .. },
            ) => {
                if let Event::Reap {
                    removed: logged, ..
                } = &log
                {
                    *removed = logged.clone();
                }
            }
            _ => {}
        }
        model == log
    }

    fn worker_id(&self, record: &Record<Event>) -> Option<u32> {
        match &record.event {
            Event::Deliver { worker, .. } => self.ids.get(worker).copied(),
            _ => self.ids.get(&record.actor).copied(),
        }
    }

    fn render(&self, actor: &str, event: Event) -> String {
        let record = Record {
            model: None,
            queue: String::new(),
            ts_ms: None,
            actor: actor.to_string(),
            event,
        };
        serde_json::to_string(&record).expect("an event is JSON")
    }
}

/// Lists sorted, so that their order does not count.
fn normal(event: &Event) -> Event {
    let mut event = event.clone();
    let sort_row = |q: &mut QueueRow| {
        if let Some(ids) = &mut q.in_flight_request_ids {
            ids.sort()
        }
    };
    let sort_values = |v: &mut Values| {
        if let Some(ids) = &mut v.in_flight_request_ids {
            ids.sort()
        }
    };
    match &mut event {
        Event::Read { queue_row, .. }
        | Event::ReadQueue { queue_row }
        | Event::RereadQueue { queue_row } => sort_row(queue_row),
        Event::Cas { set, .. } => sort_values(set),
        Event::Transaction { writes, .. } => {
            writes.iter_mut().for_each(|w| sort_values(&mut w.set));
            writes.sort_by_key(|w| w.row == RowName::Request);
        }
        Event::Reap { removed, .. } => removed.sort(),
        _ => {}
    }
    event
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
        self.render(&record.actor, record.event.clone())
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

    fn explain(&self, c: &Cursor, k: usize, out: &mut Vec<(Action, Cursor)>) {
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
                                .is_some_and(|m| m.status == Delivery::Visible);
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
                if Self::agrees(&self.event_of(one, worker), &record.event) {
                    out.push((action, next));
                }
            }
        }
    }

    fn silent(&self, c: &Cursor, k: usize, out: &mut Vec<(Action, Cursor)>) {
        let s = &c.state;
        let logs_from = |id: Option<u32>| id.is_some_and(|id| self.last_event[id as usize] >= k);
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
                    .is_some_and(|&at| at >= k)
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
            for m in s.messages().filter(|m| m.status == Delivery::Visible) {
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
        for m in s.messages().filter(|m| m.status == Delivery::Visible) {
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

/// Splits a log's stovepipe events by queue, in the order each queue first
/// appears; whether the log reads rows in split statements (`read_request`
/// and its kin) is read from the events.
pub fn queues(
    records: Vec<(usize, Record<Event>)>,
) -> Vec<(String, bool, Vec<(usize, Record<Event>)>)> {
    let mut order: Vec<String> = Vec::new();
    let mut by_queue: HashMap<String, Vec<(usize, Record<Event>)>> = HashMap::new();
    for (line, record) in records {
        if !by_queue.contains_key(&record.queue) {
            order.push(record.queue.clone());
        }
        by_queue
            .entry(record.queue.clone())
            .or_default()
            .push((line, record));
    }
    order
        .into_iter()
        .map(|q| {
            let events = by_queue.remove(&q).unwrap_or_default();
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
