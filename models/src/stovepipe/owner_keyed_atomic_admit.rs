//! owner-keyed-atomic-admit: PR #966 with steps b and c of the admit table
//! made one transaction (a's gate, d and the release rules are owner-keyed's):
//!
//! | step | owner-keyed (PR #966) | this repair |
//! |---|---|---|
//! | a | R already in the set → go to c; else size ≥ K → hold | size ≥ K and R not in the set → hold (R in the set while `accepted` no longer arises) |
//! | b | claim: CAS Q set ∪ {R}; conflict → restart | **one transaction**: lock the queue row and R's row; if both are at the versions read, write Q set ∪ {R} and R → `processing`; conflict → restart |
//! | c | CAS R → `processing`; conflict → re-read R: terminal → release, ack; `processing` → keep, ack | (part of b) |
//!
//! Why: a slot is never held by a request that is not `processing` (until a
//! `signal` or the DLQ gives it back), so no stale claimer's processing write
//! can land after the slot went back (`owner-keyed-stall`) and no claim can
//! be made for a request that is already terminal (`owner-keyed-stall-crash`).
//! The resume and unwind paths of PR #966 are no longer needed.
//!
//! Cost: no schema change; every admit is one two-row transaction
//! (`SELECT ... FOR UPDATE` on Q and R, two `UPDATE`s, `COMMIT`) that holds
//! the queue row's lock for the length of the admit; one round trip fewer
//! than two CASes.

use super::design::{Design, SlotField, REQUEST_AND_QUEUE};
use super::handlers::Turn;
use super::owner_keyed::OwnerKeyed;
use super::{Fresh, InFlightRequestIds, Pc, RequestState, SlotView};

#[derive(Debug)]
pub struct OwnerKeyedAtomicAdmit;

/// Step a: the owner-keyed gate, but never a resume: the transaction is the
/// whole admit.
pub fn atomic_gate(seen: SlotView) -> Pc {
    match OwnerKeyed.gate(seen) {
        Pc::Hold => Pc::Hold,
        _ => Pc::Claim,
    }
}

/// Steps b and c as one transaction.
pub fn atomic_admit(turn: &mut Turn, pc: Pc) -> Pc {
    match pc {
        Pc::Claim => {
            if turn.claim_in_transaction(Some(RequestState::Processing)) {
                Pc::SubmitBuild
            } else {
                Pc::Read
            }
        }
        other => unreachable!("the atomic admit has no step {other:?}"),
    }
}

/// The transaction uses both rows as read.
pub fn atomic_live_reads(pc: Pc) -> Fresh {
    match pc {
        Pc::Claim => REQUEST_AND_QUEUE,
        _ => Fresh::NONE,
    }
}

impl Design for OwnerKeyedAtomicAdmit {
    fn name(&self) -> &'static str {
        "owner-keyed-atomic-admit"
    }

    fn summary(&self) -> &'static str {
        "PR #966, but the claim and the processing write are one transaction on both rows"
    }

    fn change(&self) -> &'static str {
        "owner-keyed, but steps b and c are one transaction on the queue row and R's row: claim and R -> processing commit together, or neither (a conflict restarts). No resume and no unwind are left. Why: no slot is ever held by a request that is not processing, so no stale claim or stale processing write can land."
    }

    fn cost(&self) -> &'static str {
        "as owner-keyed, and every admit one two-row transaction (the queue row locked for the length of the admit) instead of two CASes"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &InFlightRequestIds
    }

    fn gate(&self, seen: SlotView) -> Pc {
        atomic_gate(seen)
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        atomic_admit(turn, pc)
    }

    fn live_reads(&self, pc: Pc) -> Fresh {
        atomic_live_reads(pc)
    }
}
