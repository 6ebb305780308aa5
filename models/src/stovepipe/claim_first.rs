//! claim-first, the original: claim the slot (count + 1), then write
//! `processing`; a lost processing write unwinds the claim.

use super::design::{counter, Design};
use super::handlers::{Released, Turn};
use super::{Pc, Req, RequestState, Slots, Snapshot, State};

#[derive(Debug)]
pub struct ClaimFirst;

impl Design for ClaimFirst {
    fn name(&self) -> &'static str {
        "claim-first"
    }

    fn summary(&self) -> &'static str {
        "the original: CAS in_flight_count + 1, then CAS the request to processing"
    }

    fn initial_slots(&self) -> Slots {
        Slots::Count(0)
    }

    /// a: count >= K holds.
    fn gate(&self, seen: &Snapshot, _r: Req, max_concurrent: u8) -> Pc {
        if counter::count(seen.queue.slots) >= max_concurrent {
            Pc::Hold
        } else {
            Pc::Claim
        }
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        match pc {
            // b: claim; a conflict restarts.
            Pc::Claim => {
                let count = counter::count(turn.seen().queue.slots);
                if turn.cas_queue(Slots::Count(count + 1)) {
                    Pc::WriteProcessing
                } else {
                    Pc::Read
                }
            }
            // c: processing; a conflict unwinds the claim.
            Pc::WriteProcessing => {
                if turn.cas_request(RequestState::Processing) {
                    Pc::SubmitBuild
                } else {
                    Pc::Unwind
                }
            }
            // The unwind's release is retried on conflict, then acks.
            Pc::Unwind => match turn.release() {
                Released::Lost => Pc::RereadQueueForUnwind,
                Released::Wrote | Released::Nothing => Pc::Ack,
            },
            Pc::RereadQueueForUnwind => {
                turn.reread_queue();
                Pc::Unwind
            }
            other => unreachable!("claim-first has no admit step {other:?}"),
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
