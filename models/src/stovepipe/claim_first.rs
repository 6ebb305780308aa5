//! claim-first, the original: claim the slot (count + 1), then write
//! `processing`; a lost processing write unwinds the claim.

use super::design::{Design, InFlightCount, SlotField, QUEUE, REQUEST_AND_QUEUE};
use super::handlers::Turn;
use super::{Fresh, Pc, RequestState, SlotView};

#[derive(Debug)]
pub struct ClaimFirst;

impl Design for ClaimFirst {
    fn name(&self) -> &'static str {
        "claim-first"
    }

    fn summary(&self) -> &'static str {
        "the original: CAS in_flight_count + 1, then CAS the request to processing"
    }

    fn change(&self) -> &'static str {
        "the contract's admit table as it stands: a, count >= K holds; b, claim (CAS in_flight_count + 1), a conflict restarts; c, CAS R -> processing, a conflict unwinds the claim; d, submit the build. The DLQ releases only a processing request."
    }

    fn cost(&self) -> &'static str {
        "what runs today: two single-row CASes per admit"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &InFlightCount
    }

    /// a: count >= K holds.
    fn gate(&self, seen: SlotView) -> Pc {
        if seen.full {
            Pc::Hold
        } else {
            Pc::Claim
        }
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        match pc {
            // b: claim; a conflict restarts.
            Pc::Claim => {
                if turn.claim_slot() {
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
            Pc::Unwind => {
                if turn.release_slot() {
                    Pc::Ack
                } else {
                    Pc::RereadQueueForUnwind
                }
            }
            Pc::RereadQueueForUnwind => {
                turn.reread_queue();
                Pc::Unwind
            }
            other => unreachable!("claim-first has no admit step {other:?}"),
        }
    }

    /// The claim and the processing write use the read; the unwind releases
    /// on the queue row as the claim wrote it.
    fn live_reads(&self, pc: Pc) -> Fresh {
        match pc {
            Pc::Claim | Pc::WriteProcessing => REQUEST_AND_QUEUE,
            Pc::Unwind => QUEUE,
            _ => Fresh::NONE,
        }
    }
}
