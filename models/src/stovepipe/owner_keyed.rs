//! owner-keyed, PR #966: slots are the set of requests holding one. A claim
//! is idempotent per request, a redelivery that finds its own claim resumes,
//! and release removes by ID (nothing written when absent: decided at the
//! read that saw the set).

use super::design::{Design, SlotField, StaleHead, QUEUE, REQUEST_AND_QUEUE};
use super::handlers::Turn;
use super::{Fresh, Pc, Req, RequestState, SlotView, Slots, State};

#[derive(Debug)]
pub struct OwnerKeyed;

pub(crate) fn owners(slots: Slots) -> u32 {
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

    fn change(&self) -> &'static str {
        "the slot field becomes the set of owners, in_flight_request_ids. a: R already in the set goes to c (a redelivery resumes its own claim), else size >= K holds; b, CAS set + {R}; c, CAS R -> processing, a conflict re-reads R: terminal releases R, processing keeps the slot. A head that is no longer the latest releases its slot, then is superseded; a release removes by ID and writes nothing when R is absent; the DLQ releases any nonterminal request."
    }

    fn cost(&self) -> &'static str {
        "schema change: a new column in_flight_request_ids; two single-row CASes per admit"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &InFlightRequestIds
    }

    /// a: R already in the set resumes at c; else size >= K holds.
    fn gate(&self, seen: SlotView) -> Pc {
        if seen.has_slot {
            Pc::WriteProcessing
        } else if seen.full {
            Pc::Hold
        } else {
            Pc::Claim
        }
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        match pc {
            // b: claim, set ∪ {R}; a conflict restarts.
            Pc::Claim => {
                if turn.claim_slot() {
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
            // Terminal: give the slot back (R is in the set as this worker
            // last saw it: it claimed it or resumed on it); processing: a
            // duplicate admission keeps it. (Accepted cannot follow a lost
            // write: every write moves R out of accepted.)
            Pc::RereadRequest => match turn.reread_request() {
                state if state.is_terminal() => Pc::Unwind,
                RequestState::Processing => Pc::Ack,
                _ => Pc::Read,
            },
            Pc::Unwind => {
                if turn.release_slot() {
                    Pc::Ack
                } else {
                    Pc::RereadQueueForUnwind
                }
            }
            // Re-read, then release only if R is still in the set.
            Pc::RereadQueueForUnwind => {
                if turn.reread_queue().has_slot {
                    Pc::Unwind
                } else {
                    Pc::Ack
                }
            }
            other => unreachable!("owner-keyed has no admit step {other:?}"),
        }
    }

    /// The claim and the processing write use the read; after a lost
    /// processing write the unwind releases on the queue row as last seen.
    fn live_reads(&self, pc: Pc) -> Fresh {
        match pc {
            Pc::Claim | Pc::WriteProcessing => REQUEST_AND_QUEUE,
            Pc::RereadRequest | Pc::Unwind => QUEUE,
            _ => Fresh::NONE,
        }
    }
}

/// `in_flight_request_ids`: the requests holding a slot.
#[derive(Debug)]
pub struct InFlightRequestIds;

impl SlotField for InFlightRequestIds {
    fn read(&self, s: &State) -> Slots {
        Slots::Owners(
            s.requests()
                .filter(|&(r, _)| s.owns_slot(r))
                .fold(0, |set, (r, _)| set | 1 << r),
        )
    }

    fn write(&self, s: &mut State, slots: Slots) {
        for r in 0..s.arrived() {
            s.set_owns_slot(r, holds(slots, r));
        }
    }

    fn view(&self, slots: Slots, r: Req, max_concurrent: u8) -> SlotView {
        SlotView {
            has_slot: holds(slots, r),
            full: slots.taken() >= max_concurrent,
        }
    }

    fn claimed(&self, slots: Slots, r: Req) -> Slots {
        Slots::Owners(owners(slots) | 1 << r)
    }

    fn released(&self, slots: Slots, r: Req) -> Option<Slots> {
        holds(slots, r).then(|| Slots::Owners(owners(slots) & !(1 << r)))
    }

    /// Give the slot back first, then supersede (PR #966).
    fn stale_head(&self, seen: SlotView) -> StaleHead {
        if seen.has_slot {
            StaleHead::ReleaseThenSupersede
        } else {
            StaleHead::Supersede
        }
    }

    /// Any nonterminal request.
    fn dlq_releases(&self, _state: RequestState) -> bool {
        true
    }

    fn count_not_low(&self, s: &State) -> bool {
        s.processing().all(|r| s.owns_slot(r))
    }

    fn count_not_high(&self, s: &State) -> bool {
        s.requests()
            .all(|(r, state)| !s.owns_slot(r) || state == RequestState::Processing)
    }
}
