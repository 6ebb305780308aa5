//! claim-first, the original: claim the slot (count + 1), then write
//! `processing`; a lost processing write unwinds the claim.

use super::design::{Design, InFlightCount, SlotField};
use super::handlers::{Released, Turn};
use super::{Pc, Req, RequestState, Slots, Snapshot};

#[derive(Debug)]
pub struct ClaimFirst;

impl Design for ClaimFirst {
    fn name(&self) -> &'static str {
        "claim-first"
    }

    fn summary(&self) -> &'static str {
        "the original: CAS in_flight_count + 1, then CAS the request to processing"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &InFlightCount
    }

    /// a: count >= K holds.
    fn gate(&self, seen: &Snapshot, _r: Req, max_concurrent: u8) -> Pc {
        if InFlightCount::count(seen.queue.slots) >= max_concurrent {
            Pc::Hold
        } else {
            Pc::Claim
        }
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        match pc {
            // b: claim; a conflict restarts.
            Pc::Claim => {
                let count = InFlightCount::count(turn.seen().queue.slots);
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
                Released::Wrote => Pc::Ack,
            },
            Pc::RereadQueueForUnwind => {
                turn.reread_queue();
                Pc::Unwind
            }
            other => unreachable!("claim-first has no admit step {other:?}"),
        }
    }
}
