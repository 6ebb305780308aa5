//! The handlers in the contract's order, `process`, `signal`, `dlq`, each
//! asking the design at the step where its choice acts (`design.rs`): the
//! stale head and the gate after `process`'s read, the admit's steps b and
//! c and the resume path, the reap, the DLQ's cancel. Then how a worker's
//! step is taken and what it keeps of its read, and the world around the
//! handlers: arrivals, builds, and the two faults (a message's own rules,
//! its delivery, expiry and dead letter, are the broker's: `broker.rs`).
//! Every read and every write is one step, a primitive of the worker's
//! `Turn` (`turn.rs`).

use super::broker::{durable_write, expire, publish};
use super::design::{Admit, Design, Dlq, Gate, Resume, SlotField, StaleHead};
use super::log::{CrashOutcome, Log, Record};
use super::turn::Turn;
use super::{
    Build, Fresh, Handler, MessageKind, Pc, Req, RequestState, SlotView, Slots, State, Stovepipe,
    MAX_REQUESTS,
};

/// `process(R)`: read, then by what was read: ack a terminal request, submit a
/// duplicate admission, supersede a head that is no longer the latest, or
/// admit the latest head by the design's table.
fn process(turn: &mut Turn, pc: Pc) -> Pc {
    let design = turn.model.design;
    match pc {
        Pc::Read | Pc::ReadQueue { .. } | Pc::ReadHead { .. } => {
            let seen = match turn.read(pc) {
                Ok(seen) => seen,
                Err(next_read) => return next_read,
            };
            match seen.request {
                state if state.is_terminal() => Pc::Ack,
                RequestState::Processing => Pc::SubmitBuild,
                _ if !seen.latest_head => stale_head(&design, seen.slots),
                _ => gate(&design, seen.slots),
            }
        }
        Pc::ReleaseBeforeSupersede => won_then(turn.release_slot(), Pc::Supersede),
        Pc::Supersede => won_then(turn.cas_request(RequestState::Superseded), Pc::Ack),
        // Then the unwind gives the slot back.
        Pc::SupersedeThenRelease => {
            won_then(turn.cas_request(RequestState::Superseded), Pc::Unwind)
        }
        Pc::SubmitBuild => {
            turn.submit_build();
            Pc::Ack
        }
        Pc::Reap => reap(turn),
        admit_step => admit(turn, admit_step),
    }
}

/// The design's stale head: what `process` does first with a head that is
/// no longer the latest, by whether its read saw R hold a slot.
fn stale_head(design: &Design, seen: SlotView) -> Pc {
    match design.stale_head {
        _ if !seen.has_slot => Pc::Supersede,
        StaleHead::Supersede => Pc::Supersede,
        StaleHead::ReleaseThenSupersede => Pc::ReleaseBeforeSupersede,
        StaleHead::SupersedeThenRelease => Pc::SupersedeThenRelease,
    }
}

/// Step a, after a read found R accepted and the latest head. An owner
/// already in the set resumes at c (a redelivery of its own claim), or
/// with one transaction claims again; a closed gate holds, or reaps first;
/// an open one goes to the design's first write.
fn gate(design: &Design, seen: SlotView) -> Pc {
    if design.slots == SlotField::Owners && seen.has_slot {
        return match design.admit {
            Admit::OneTransaction => Pc::Claim,
            _ => Pc::WriteProcessing,
        };
    }
    if seen.full {
        return match design.gate {
            Gate::Hold => Pc::Hold,
            Gate::ReapThenHold => Pc::Reap,
        };
    }
    match design.admit {
        Admit::ProcessingFirst => Pc::WriteProcessing,
        _ => Pc::Claim,
    }
}

/// Steps b and c and their conflict paths, by the design's admit; returns
/// the step after `pc`.
fn admit(turn: &mut Turn, pc: Pc) -> Pc {
    let design = turn.model.design;
    match (pc, design.admit) {
        // b: claim; a conflict restarts.
        (Pc::Claim, Admit::ClaimFirst) => won_then(turn.claim_slot(), Pc::WriteProcessing),
        // b: the fenced claim; a conflict on either row restarts.
        (Pc::Claim, Admit::FencedClaim) => {
            won_then(turn.claim_in_transaction(None), Pc::WriteProcessing)
        }
        // b and c as one transaction.
        (Pc::Claim, Admit::OneTransaction) => won_then(
            turn.claim_in_transaction(Some(RequestState::Processing)),
            Pc::SubmitBuild,
        ),
        // fail-open's b: processing first; a conflict acks, the count
        // untouched.
        (Pc::WriteProcessing, Admit::ProcessingFirst) => {
            if turn.cas_request(RequestState::Processing) {
                Pc::CountUp
            } else {
                Pc::Ack
            }
        }
        // c: processing; a conflict takes the resume path.
        (Pc::WriteProcessing, _) => {
            if turn.cas_request(RequestState::Processing) {
                Pc::SubmitBuild
            } else if design.resume == Resume::Unwind {
                Pc::Unwind
            } else {
                Pc::RereadRequest
            }
        }
        // The resume path. Terminal: give the slot back (R is in the set as
        // this worker last saw it: it claimed it or resumed on it);
        // processing: a duplicate admission keeps it. (Accepted cannot
        // follow a lost write: every write moves R out of accepted.)
        (Pc::RereadRequest, _) => match turn.reread_request() {
            state if state.is_terminal() => Pc::Unwind,
            RequestState::Processing if design.resume == Resume::Submit => Pc::SubmitBuild,
            RequestState::Processing => Pc::Ack,
            _ => Pc::Read,
        },
        // The unwind's release is retried on conflict, then acks.
        (Pc::Unwind, _) => {
            if turn.release_slot() {
                Pc::Ack
            } else {
                Pc::RereadQueueForUnwind
            }
        }
        // Re-read, then release only if R still holds a slot (a count
        // always may).
        (Pc::RereadQueueForUnwind, _) => {
            if turn.reread_queue().has_slot {
                Pc::Unwind
            } else {
                Pc::Ack
            }
        }
        // fail-open's c: count + 1; a conflict re-reads the queue and
        // retries (no re-gate, no coalescing: the admit is already durable).
        (Pc::CountUp, _) => {
            if turn.claim_slot() {
                Pc::SubmitBuild
            } else {
                Pc::RereadQueueForCountUp
            }
        }
        (Pc::RereadQueueForCountUp, _) => {
            turn.reread_queue();
            Pc::CountUp
        }
        (other, admit) => {
            unreachable!("{}: the admit {admit:?} has no step {other:?}", design.name)
        }
    }
}

/// The reaping gate's statement: remove every owner whose request is
/// terminal, guarded by the queue row's version.
fn reap(turn: &mut Turn) -> Pc {
    if !turn.queue_unchanged() {
        turn.reaped(0, 0, false);
        return Pc::Read;
    }
    let Slots::Owners(set) = turn.slots() else {
        unreachable!("the reaping gate needs an owner set")
    };
    let owners = |keep: &dyn Fn(RequestState) -> bool| {
        (0..MAX_REQUESTS)
            .filter(|&o| set & (1 << o) != 0 && keep(turn.state_of(o)))
            .fold(0u32, |acc, o| acc | 1 << o)
    };
    let terminal = owners(&|state| turn.reaps(state));
    let left = owners(&RequestState::is_terminal) & !terminal;
    turn.reaped(terminal, left, true);
    if terminal == 0 {
        return Pc::Hold;
    }
    turn.write_slots(Slots::Owners(set & !terminal));
    // Re-read and re-gate, with the slot free.
    Pc::Read
}

/// `signal(R)`, the buildsignal handler: release, then write `succeeded`.
fn signal(turn: &mut Turn, pc: Pc) -> Pc {
    match pc {
        Pc::Read | Pc::ReadQueue { .. } | Pc::ReadHead { .. } => {
            let seen = match turn.read(pc) {
                Ok(seen) => seen,
                Err(next_read) => return next_read,
            };
            if seen.request.is_terminal() {
                Pc::Ack
            } else if seen.slots.has_slot {
                Pc::Release
            } else {
                Pc::WriteOutcome
            }
        }
        Pc::Release => won_then(turn.release_slot(), Pc::WriteOutcome),
        Pc::WriteOutcome => won_then(turn.cas_request(RequestState::Succeeded), Pc::Ack),
        other => unreachable!("signal has no step {other:?}"),
    }
}

/// `dlq(R)`, the DLQ reconciler: release if the design releases a request in
/// this state, then write `dead_lettered`. A running build is not cancelled,
/// unless a repaired design cancels it first.
fn dlq(turn: &mut Turn, pc: Pc) -> Pc {
    let design = turn.model.design;
    match pc {
        Pc::Read | Pc::ReadQueue { .. } | Pc::ReadHead { .. } => {
            let seen = match turn.read(pc) {
                Ok(seen) => seen,
                Err(next_read) => return next_read,
            };
            let release = turn.dlq_releases(&seen);
            if seen.request.is_terminal() {
                Pc::Ack
            } else if design.dlq == Dlq::CancelFirst {
                Pc::CancelBuild { release }
            } else if release {
                Pc::Release
            } else {
                Pc::WriteOutcome
            }
        }
        Pc::CancelBuild { release } => {
            turn.cancel_build();
            if release {
                Pc::Release
            } else {
                Pc::WriteOutcome
            }
        }
        Pc::Release => won_then(turn.release_slot(), Pc::WriteOutcome),
        Pc::WriteOutcome => won_then(turn.cas_request(RequestState::DeadLettered), Pc::Ack),
        other => unreachable!("dlq has no step {other:?}"),
    }
}

/// The worker at index `i` takes its next step.
pub(super) fn step(model: &Stovepipe, state: &mut State, i: usize, log: &mut Log) {
    let worker = state.remove_worker(i);
    let (pc, handler) = (worker.pc, worker.handler());
    let mut turn = Turn {
        model,
        state,
        worker,
        log,
        refreshed: Fresh::NONE,
        again: false,
    };
    let next = match pc {
        Pc::Ack | Pc::Hold => {
            if pc == Pc::Ack {
                turn.ack();
            } else {
                turn.hold();
            }
            let from = pc;
            turn.log.record(|| Record::Next {
                handler,
                from,
                to: None,
            });
            return;
        }
        _ => match handler {
            Handler::Process => process(&mut turn, pc),
            Handler::Signal => signal(&mut turn, pc),
            Handler::Dlq => dlq(&mut turn, pc),
        },
    };
    // The reduction forgets what a step declares it will not use; this
    // checks, on every step taken, that the next step does not need what
    // this one had forgotten (unless this step read or wrote it afresh).
    let (used, needed) = (
        model.live_reads(handler, pc),
        model.live_reads(handler, next),
    );
    let kept = |f: fn(Fresh) -> bool| !f(needed) || f(used) || f(turn.refreshed);
    assert!(
        kept(|f| f.request) && kept(|f| f.queue) && kept(|f| f.head),
        "{}: {} goes from {pc:?} to {next:?}, which uses a read that {pc:?} forgot",
        model.design.name,
        handler.name()
    );
    let next = if turn.again { pc } else { next };
    turn.log.record(|| Record::Next {
        handler,
        from: pc,
        to: Some(next),
    });
    let mut worker = turn.worker;
    worker.pc = next;
    turn.state.add_worker(worker);
}

/// What a worker at `pc` of `handler` may still use of its last read: the
/// rows it may CAS before it reads them again, and for a hold everything it
/// read (a hold asks whether anything changed since). One table for every
/// design: a step that a design never takes is never asked.
pub(crate) fn live_reads(handler: Handler, pc: Pc) -> Fresh {
    #[cfg(test)]
    if pc == Pc::Claim && CLAIM_FORGETS_QUEUE.get() {
        return Fresh::NONE;
    }
    let none = Fresh::NONE;
    let request = Fresh {
        request: true,
        ..none
    };
    let queue = Fresh {
        queue: true,
        ..none
    };
    let request_and_queue = Fresh {
        queue: true,
        ..request
    };
    match pc {
        // A read overwrites all it reads; an ack and a submit use nothing.
        Pc::Read | Pc::Ack | Pc::SubmitBuild => none,
        Pc::ReadQueue { .. } => request,
        Pc::ReadHead { .. } => request_and_queue,
        // A hold, and the reap that may hold after it, ask whether anything
        // the read saw has changed.
        Pc::Hold | Pc::Reap => Fresh::ALL,
        _ => match handler {
            Handler::Process => match pc {
                // Release (CAS Q) and supersede (CAS R), in either order; the
                // claim (or transaction) and the processing write use the read.
                Pc::ReleaseBeforeSupersede
                | Pc::SupersedeThenRelease
                | Pc::Claim
                | Pc::WriteProcessing => request_and_queue,
                Pc::Supersede => request,
                // After a lost processing write the unwind releases on the
                // queue row as last seen; fail-open's count write uses the
                // queue row as first read, until a re-read.
                Pc::RereadRequest | Pc::Unwind | Pc::CountUp => queue,
                _ => none,
            },
            // Release (CAS Q), then the outcome write (CAS R).
            Handler::Signal | Handler::Dlq => match pc {
                Pc::Release | Pc::CancelBuild { release: true } => request_and_queue,
                Pc::WriteOutcome | Pc::CancelBuild { release: false } => request,
                other => unreachable!("{} has no step {other:?}", handler.name()),
            },
        },
    }
}

#[cfg(test)]
thread_local! {
    /// A wrong liveness table, for the test that the wrong entry is caught:
    /// the claim says it forgot the row it CASes.
    pub(crate) static CLAIM_FORGETS_QUEUE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The next request arrives: its row is inserted and `process` published.
pub(super) fn arrive(state: &mut State, log: &mut Log) {
    let r = state.add_request();
    state.for_each_worker(|w| w.fresh.head = false);
    publish(state, r, MessageKind::Process);
    durable_write(state);
    log.record(|| Record::Arrive(r));
}

/// A running build finishes and publishes `signal`.
pub(super) fn finish_build(state: &mut State, r: Req, log: &mut Log) {
    state.set_build(r, Build::Finished);
    publish(state, r, MessageKind::Signal);
    durable_write(state);
    log.record(|| Record::FinishBuild(r));
}

/// Fault: the worker dies between two steps.
pub(super) fn crash(model: &Stovepipe, state: &mut State, i: usize, log: &mut Log) {
    let worker = state.remove_worker(i);
    state.spend_crash();
    let (r, kind) = (worker.request, worker.message);
    let outcome = if worker.holds_message {
        CrashOutcome::Held
    } else if state.message(r, kind).is_some() {
        CrashOutcome::HandedOutAgain
    } else {
        CrashOutcome::Gone
    };
    log.record(|| Record::Crash {
        request: r,
        kind,
        outcome,
    });
    if worker.holds_message {
        expire(model, state, r, kind, log);
    }
}

/// Fault: the worker's message expires while it still runs; it goes on later
/// with what it read, and its ack will change nothing.
pub(super) fn stall(model: &Stovepipe, state: &mut State, i: usize, log: &mut Log) {
    let mut worker = state.remove_worker(i);
    worker.holds_message = false;
    let (r, kind) = (worker.request, worker.message);
    state.add_worker(worker);
    state.spend_stall();
    log.record(|| Record::Stall);
    expire(model, state, r, kind, log);
}

/// A write's outcome: on to `next` if it won, back to read if its CAS lost
/// (another worker wrote the row first).
fn won_then(won: bool, next: Pc) -> Pc {
    if won {
        next
    } else {
        Pc::Read
    }
}

/// The database refuses the worker's write (option `aborts`): the step
/// would log its write, refused; nothing changes but the worker, which
/// reads again from the start of its handler.
pub(super) fn abort(model: &Stovepipe, state: &mut State, i: usize, log: &mut Log) {
    let before = *state;
    log.refused(state.worker(i).pc, |dry| {
        let mut scratch = before;
        step(model, &mut scratch, i, dry);
    });
    let mut worker = state.remove_worker(i);
    worker.pc = Pc::Read;
    worker.fresh = Fresh::NONE;
    state.add_worker(worker);
}
