//! fail-open, the alternative PR: write `processing` first, then count + 1;
//! a lost count write re-reads the queue and retries without re-gating.

use super::design::{Design, InFlightCount, SlotField, QUEUE, REQUEST_AND_QUEUE};
use super::handlers::Turn;
use super::{Fresh, Pc, RequestState, SlotView};

#[derive(Debug)]
pub struct FailOpen;

impl Design for FailOpen {
    fn name(&self) -> &'static str {
        "fail-open"
    }

    fn summary(&self) -> &'static str {
        "the reordered writes: CAS the request to processing, then in_flight_count + 1"
    }

    fn change(&self) -> &'static str {
        "steps b and c swap: b, CAS R -> processing first (a conflict acks, the count untouched); c, count + 1, a conflict re-reads the queue row and retries without re-gating, since the admit is already durable. So a crash between the two writes leaves the count low instead of high."
    }

    fn cost(&self) -> &'static str {
        "no schema change: the same two CASes in the other order"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &InFlightCount
    }

    /// a: count >= K holds.
    fn gate(&self, seen: SlotView) -> Pc {
        if seen.full {
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
                if turn.claim_slot() {
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

    /// The count write uses the queue row as first read, until a re-read.
    fn live_reads(&self, pc: Pc) -> Fresh {
        match pc {
            Pc::WriteProcessing => REQUEST_AND_QUEUE,
            Pc::CountUp => QUEUE,
            _ => Fresh::NONE,
        }
    }
}
