//! The broker: what happens to a message between its publish and its ack.
//! It is handed to a worker, expires back to visible with one more attempt
//! or, out of deliveries, is replaced by its dead letter; a hold parks it
//! until a durable write wakes it. The handlers (`handlers.rs`) and a
//! worker's turn (`turn.rs`) both act through these rules.

use super::log::{Log, Record};
use super::{Delivery, Fresh, MessageKind, Pc, Req, State, Stovepipe, Worker};

/// A message is published, visible, no attempt used.
pub(super) fn publish(state: &mut State, r: Req, kind: MessageKind) {
    state.set_message(r, kind, Some((Delivery::Visible, 0)));
}

/// The broker hands a visible message to a new worker.
pub(super) fn deliver(state: &mut State, r: Req, kind: MessageKind, log: &mut Log) {
    let Some(m) = state.message(r, kind) else {
        unreachable!("deliver is enabled only for a visible message")
    };
    state.set_message(r, kind, Some((Delivery::InFlight, m.attempts)));
    state.add_worker(Worker {
        message: kind,
        request: r,
        pc: Pc::Read,
        holds_message: true,
        fresh: Fresh::NONE,
    });
    log.record(|| Record::Deliver {
        request: r,
        kind,
        attempt: m.attempts + 1,
    });
}

/// The message a worker held is visible again with one more attempt, or, out
/// of deliveries, replaced by `dead(R)`. Dead messages are retried forever.
pub(super) fn expire(
    model: &Stovepipe,
    state: &mut State,
    r: Req,
    kind: MessageKind,
    log: &mut Log,
) {
    let max = model.bounds.max_deliveries;
    let Some(m) = state.message(r, kind) else {
        return;
    };
    if kind.is_dead() {
        state.set_message(r, kind, Some((Delivery::Visible, 0)));
        log.record(|| Record::Visible {
            request: r,
            kind,
            attempts: 0,
        });
        return;
    }
    let attempts = m.attempts + 1;
    if attempts < max {
        state.set_message(r, kind, Some((Delivery::Visible, attempts)));
        log.record(|| Record::Visible {
            request: r,
            kind,
            attempts,
        });
        return;
    }
    dead_letter(state, r, kind, attempts, log);
}

/// Out of deliveries after `attempts`: the message is replaced by `dead(R)`.
pub(super) fn dead_letter(
    state: &mut State,
    r: Req,
    kind: MessageKind,
    attempts: u8,
    log: &mut Log,
) {
    state.set_message(r, kind, None);
    publish(state, r, kind.dead());
    log.record(|| Record::DeadLetter {
        request: r,
        kind,
        attempts,
    });
}

/// A durable write (a row inserted or changed, a build submitted or finished)
/// wakes every parked message.
pub(super) fn durable_write(state: &mut State) {
    for r in 0..state.arrived() {
        for kind in MessageKind::ALL {
            if let Some(m) = state.message(r, kind) {
                if m.status == Delivery::Parked {
                    state.set_message(r, kind, Some((Delivery::Visible, m.attempts)));
                }
            }
        }
    }
}
