//! How what a step would log compares with a logged event: the model's
//! observations (`log.rs`'s `Observation`, recorded by the handlers through
//! their `Log`) in the log's own words, with the log's names.

use super::QueueTrace;
use crate::events::stovepipe::{
    Event, MessageName, QueueRow, RequestRow, RowName, RowState, RowWrite, Values,
};
use crate::stovepipe::log::Observation;
use crate::stovepipe::{MessageKind, Pc, Req, RequestState, Slots, MAX_REQUESTS};

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
