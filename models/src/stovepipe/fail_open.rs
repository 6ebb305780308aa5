//! fail-open, the alternative PR: write `processing` first, then count + 1;
//! a lost count write re-reads the queue and retries without re-gating.

use super::design::{counter, Design};
use super::handlers::Turn;
use super::{Pc, Req, RequestState, Slots, Snapshot, State};

#[derive(Debug)]
pub struct FailOpen;

impl Design for FailOpen {
    fn name(&self) -> &'static str {
        "fail-open"
    }

    fn summary(&self) -> &'static str {
        "the reordered writes: CAS the request to processing, then in_flight_count + 1"
    }

    fn initial_slots(&self) -> Slots {
        Slots::Count(0)
    }

    /// a: count >= K holds.
    fn gate(&self, seen: &Snapshot, _r: Req, max_concurrent: u8) -> Pc {
        if counter::count(seen.queue.slots) >= max_concurrent {
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
                let count = counter::count(turn.seen().queue.slots);
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

    fn release(&self, slots: Slots, r: Req) -> Option<Slots> {
        counter::release(slots, r)
    }

    fn releases_before_supersede(&self, _slots: Slots, _r: Req) -> bool {
        false
    }

    fn dlq_releases(&self, state: RequestState) -> bool {
        counter::dlq_releases(state)
    }

    fn count_not_low(&self, s: &State) -> bool {
        counter::count_not_low(s)
    }

    fn count_not_high(&self, s: &State) -> bool {
        counter::count_not_high(s)
    }
}
