//! owner-keyed, PR #966: slots are the set of requests holding one. A claim
//! is idempotent per request, a redelivery that finds its own claim resumes,
//! and release removes by ID (nothing written when absent).

use super::design::{Design, SlotField};
use super::handlers::{Released, Turn};
use super::{Pc, Req, RequestState, Slots, Snapshot, State};

#[derive(Debug)]
pub struct OwnerKeyed;

fn owners(slots: Slots) -> u32 {
    match slots {
        Slots::Owners(set) => set,
        Slots::Count(_) => unreachable!("owner-keyed keeps a set of owners"),
    }
}

fn holds(slots: Slots, r: Req) -> bool {
    owners(slots) & (1 << r) != 0
}

impl Design for OwnerKeyed {
    fn name(&self) -> &'static str {
        "owner-keyed"
    }

    fn summary(&self) -> &'static str {
        "PR #966: in_flight_request_ids, claimed and released by request ID"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &InFlightRequestIds
    }

    /// a: R already in the set resumes at c; else size >= K holds.
    fn gate(&self, seen: &Snapshot, r: Req, max_concurrent: u8) -> Pc {
        if holds(seen.queue.slots, r) {
            Pc::WriteProcessing
        } else if seen.queue.slots.taken() >= max_concurrent {
            Pc::Hold
        } else {
            Pc::Claim
        }
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        let r = turn.request();
        match pc {
            // b: claim, set ∪ {R}; a conflict restarts.
            Pc::Claim => {
                let set = owners(turn.seen().queue.slots);
                if turn.cas_queue(Slots::Owners(set | 1 << r)) {
                    Pc::WriteProcessing
                } else {
                    Pc::Read
                }
            }
            // c: processing; a conflict re-reads R.
            Pc::WriteProcessing => {
                if turn.cas_request(RequestState::Processing) {
                    Pc::SubmitBuild
                } else {
                    Pc::RereadRequest
                }
            }
            // Terminal: give the slot back; processing: a duplicate admission
            // keeps it. (Accepted cannot follow a lost write: every write
            // moves R out of accepted.)
            Pc::RereadRequest => {
                turn.reread_request();
                match turn.seen().request.state {
                    state if state.is_terminal() && turn.has_slot_to_release() => Pc::Unwind,
                    state if state.is_terminal() => Pc::Ack,
                    RequestState::Processing => Pc::Ack,
                    _ => Pc::Read,
                }
            }
            Pc::Unwind => match turn.release() {
                Released::Lost => Pc::RereadQueueForUnwind,
                Released::Wrote => Pc::Ack,
            },
            // Re-read, then release only if R is still in the set.
            Pc::RereadQueueForUnwind => {
                turn.reread_queue();
                if turn.has_slot_to_release() {
                    Pc::Unwind
                } else {
                    Pc::Ack
                }
            }
            other => unreachable!("owner-keyed has no admit step {other:?}"),
        }
    }
}

/// `in_flight_request_ids`: the requests holding a slot.
#[derive(Debug)]
pub struct InFlightRequestIds;

impl SlotField for InFlightRequestIds {
    fn initial(&self) -> Slots {
        Slots::Owners(0)
    }

    fn release(&self, slots: Slots, r: Req) -> Option<Slots> {
        holds(slots, r).then(|| Slots::Owners(owners(slots) & !(1 << r)))
    }

    fn releases_before_supersede(&self, slots: Slots, r: Req) -> bool {
        holds(slots, r)
    }

    /// Any nonterminal request.
    fn dlq_releases(&self, _state: RequestState) -> bool {
        true
    }

    fn count_not_low(&self, s: &State) -> bool {
        s.processing().all(|r| holds(s.queue.slots, r))
    }

    fn count_not_high(&self, s: &State) -> bool {
        (0..s.arrived()).all(|r| {
            !holds(s.queue.slots, r) || s.requests[r as usize].state == RequestState::Processing
        })
    }
}
