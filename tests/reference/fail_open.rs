//! fail-open, the alternative PR: write `processing` first, then count + 1;
//! a lost count write re-reads the queue and retries without re-gating.

use super::design::{Design, InFlightCount, SlotField};
use super::handlers::Turn;
use super::{Pc, Req, RequestState, Slots, Snapshot};

#[derive(Debug)]
pub struct FailOpen;

impl Design for FailOpen {
    fn name(&self) -> &'static str {
        "fail-open"
    }

    fn summary(&self) -> &'static str {
        "the reordered writes: CAS the request to processing, then in_flight_count + 1"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &InFlightCount
    }

    /// a: count >= K holds.
    fn gate(&self, seen: &Snapshot, _r: Req, max_concurrent: u8) -> Pc {
        if InFlightCount::count(seen.queue.slots) >= max_concurrent {
            Pc::Hold
        } else {
            Pc::WriteProcessing
        }
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        match pc {
            // b: processing first; a conflict acks, the counter untouched.
            Pc::WriteProcessing => {
                if turn.cas_request(RequestState::Processing) {
                    Pc::CountUp
                } else {
                    Pc::Ack
                }
            }
            // c: count + 1; a conflict re-reads the queue and retries (no
            // re-gate, no coalescing: the admit is already durable).
            Pc::CountUp => {
                let count = InFlightCount::count(turn.seen().queue.slots);
                if turn.cas_queue(Slots::Count(count + 1)) {
                    Pc::SubmitBuild
                } else {
                    Pc::RereadQueueForCountUp
                }
            }
            Pc::RereadQueueForCountUp => {
                turn.reread_queue();
                Pc::CountUp
            }
            other => unreachable!("fail-open has no admit step {other:?}"),
        }
    }
}
