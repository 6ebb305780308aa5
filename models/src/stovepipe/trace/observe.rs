//! What a system logs for each step of the stovepipe model, read off the
//! records the step left (`log.rs`), the one account of what it did, with
//! the versions the validator's ledger counts; and how that compares with
//! a logged event, in the log's own words, with the log's names.

use super::QueueTrace;
use crate::events::stovepipe::{
    Event, MessageName, QueueRow, RequestRow, RowName, RowState, RowWrite, Values,
};
use crate::stovepipe::log::{step_name, Ledger, Record, SlotWrite};
use crate::stovepipe::{Build, MessageKind, Pc, Req, RequestState, SlotField, Slots, MAX_REQUESTS};

/// What a step would log, in the model's terms (requests by index, rows
/// with the model's versions).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Observation {
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
    /// A write the database refused (option `aborts`): as logged with
    /// `aborted: true` and `won: false`.
    Refused(Box<Observation>),
}

/// What a step that left `records` logs, in order, with the versions of
/// `ledger`, which is then as the step leaves it. A step no system logs
/// (an expiry, a crash, a stall) logs nothing.
pub(super) fn observe(
    records: &[Record],
    ledger: &mut Ledger,
    field: SlotField,
) -> Vec<Observation> {
    let mut lines = Vec::new();
    for record in records {
        observe_record(record, ledger, field, &mut lines);
        ledger.note(record, field);
    }
    lines
}

/// What one record logs, from `l`, the ledger before it.
fn observe_record(record: &Record, l: &Ledger, field: SlotField, lines: &mut Vec<Observation>) {
    let read = "a write follows a read";
    let line = match *record {
        Record::Arrive(r) => Observation::Arrive(r),
        Record::Deliver {
            request,
            kind,
            attempt,
        } => Observation::Deliver {
            request,
            kind,
            attempt,
        },
        Record::Read {
            request,
            queue,
            head,
            split,
        } => Observation::Read {
            request: request.map(|(r, row)| (r, row, l.versions.requests[r as usize])),
            queue: queue.map(|slots| (slots, l.versions.queue)),
            head,
            split,
        },
        Record::RereadQueue(slots) => Observation::RereadQueue(slots, l.versions.queue),
        Record::RereadRequest(r, row) => {
            Observation::RereadRequest(r, row, l.versions.requests[r as usize])
        }
        // The reap's write: its statement is what the system logs.
        Record::CasQueue {
            write: SlotWrite::Set(_),
            ..
        } => return,
        Record::CasQueue {
            write,
            outcome,
            step,
            ..
        } => {
            let (slots, version) = l.seen.queue.expect(read);
            Observation::CasQueue {
                expected: version,
                set: write.over(field, slots),
                won: outcome.won(),
                step,
            }
        }
        Record::CasRequest {
            request,
            set,
            outcome,
            step,
            ..
        } => Observation::CasRequest {
            request,
            expected: l.seen.request.expect(read).1,
            set,
            won: outcome.won(),
            step,
        },
        Record::Transaction {
            request,
            state,
            outcome,
            step,
            ..
        } => {
            let (slots, queue_version) = l.seen.queue.expect(read);
            let (_, row_version) = l.seen.request.expect(read);
            Observation::Transaction {
                request,
                queue_expected: queue_version,
                request_expected: state.map(|_| row_version),
                slots: SlotWrite::Claim(request).over(field, slots),
                state,
                won: outcome.won(),
                step,
            }
        }
        Record::Reap { removed, won, .. } => Observation::Reap {
            expected: l.seen.queue.expect("a reap follows a read").1,
            removed,
            won,
        },
        Record::Submit { request, outcome } => Observation::Submit {
            request,
            started: outcome.started(),
        },
        Record::CancelBuild { request, was } => Observation::CancelBuild {
            request,
            stopped: was == Build::Running,
        },
        Record::Ack { request, kind, .. } => Observation::Ack { request, kind },
        Record::Hold { request, kind, .. } => Observation::Hold { request, kind },
        Record::FinishBuild(r) => Observation::FinishBuild(r),
        // What the refused step would have logged, each marked refused;
        // the ledger is left as it is.
        Record::Refused { ref records, .. } => {
            let mut dry = *l;
            let refused = observe(records, &mut dry, field);
            lines.extend(
                refused
                    .into_iter()
                    .map(|o| Observation::Refused(Box::new(o))),
            );
            return;
        }
        Record::Visible { .. }
        | Record::DeadLetter { .. }
        | Record::Crash { .. }
        | Record::Stall
        | Record::Next { .. } => return,
    };
    lines.push(line);
}

pub(super) fn message_name(kind: MessageKind) -> MessageName {
    match kind {
        MessageKind::Process => MessageName::Process,
        MessageKind::Signal => MessageName::Signal,
        MessageKind::DeadProcess | MessageKind::DeadSignal => MessageName::Dead,
    }
}

pub(super) fn kinds(name: MessageName) -> &'static [MessageKind] {
    match name {
        MessageName::Process => &[MessageKind::Process],
        MessageName::Signal => &[MessageKind::Signal],
        MessageName::Dead => &[MessageKind::DeadProcess, MessageKind::DeadSignal],
    }
}

pub(super) fn row_state(state: RequestState) -> RowState {
    match state {
        RequestState::Accepted => RowState::Accepted,
        RequestState::Processing => RowState::Processing,
        RequestState::Succeeded => RowState::Succeeded,
        RequestState::Superseded => RowState::Superseded,
        RequestState::DeadLettered => RowState::DeadLettered,
    }
}

impl QueueTrace {
    pub(super) fn queue_row(&self, slots: Slots, version: u16) -> QueueRow {
        let (count, ids) = self.columns(slots);
        QueueRow {
            version: version as u64,
            in_flight_count: count,
            in_flight_request_ids: ids,
        }
    }

    pub(super) fn columns(&self, slots: Slots) -> (Option<u64>, Option<Vec<String>>) {
        match slots {
            Slots::Count(n) => (Some(n as u64), None),
            Slots::Owners(set) => (None, Some(self.owners(set))),
        }
    }

    pub(super) fn owners(&self, set: u32) -> Vec<String> {
        let mut names: Vec<String> = (0..MAX_REQUESTS)
            .filter(|r| set & (1 << r) != 0)
            .map(|r| self.name(r))
            .collect();
        names.sort();
        names
    }

    pub(super) fn request_row(&self, r: Req, state: RequestState, version: u16) -> RequestRow {
        RequestRow {
            id: self.name(r),
            state: row_state(state),
            version: version as u64,
        }
    }

    pub(super) fn slot_values(&self, slots: Slots) -> Values {
        let (count, ids) = self.columns(slots);
        Values {
            in_flight_count: count,
            in_flight_request_ids: ids,
            ..Values::default()
        }
    }

    /// An observation as the log's event, with the log's names. A delivery
    /// names no worker: the log's is taken.
    pub(super) fn event_of(&self, o: &Observation, worker: &str) -> Event {
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
                aborted: false,
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
                aborted: false,
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
                    aborted: false,
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
                aborted: false,
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
            Observation::Refused(ref inner) => {
                let mut event = self.event_of(inner, worker);
                match &mut event {
                    Event::Cas { won, aborted, .. }
                    | Event::Transaction { won, aborted, .. }
                    | Event::Reap { won, aborted, .. } => {
                        *won = false;
                        *aborted = true;
                    }
                    _ => {}
                }
                event
            }
        }
    }

    /// Whether the model's event is the logged one: lists in any order, and
    /// what the log leaves out (a step's name, an attempt, a lost reap's
    /// owners) not compared.
    pub(super) fn agrees(model: &Event, log: &Event) -> bool {
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
