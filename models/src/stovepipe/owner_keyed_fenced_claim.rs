//! owner-keyed-fenced-claim: PR #966 with one change, at step b of the admit
//! table (a, c, d and the release rules are owner-keyed's, unchanged):
//!
//! | step | owner-keyed (PR #966) | this repair |
//! |---|---|---|
//! | b | claim: CAS Q set ∪ {R}; conflict → restart | claim, **fenced by R's row**: one transaction locks the queue row and R's row and writes Q set ∪ {R} only if both are at the versions read; conflict → restart |
//!
//! Why: the claim is a delivery's, so it must be valid only while R is as
//! that delivery read it. R's row version is the fencing token: a stalled
//! delivery whose request was superseded or dead-lettered meanwhile can no
//! longer claim a slot for it (`owner-keyed-stall-crash`). A token written
//! beside the owner in the set (the attempt number) would not do: the claim
//! and the processing write are on different rows, so only a check of R's
//! row inside the claim fences it.
//!
//! Cost: no schema change; every claim becomes a two-row transaction
//! (`SELECT ... FOR UPDATE` on Q and R, `UPDATE` Q, `COMMIT`), which holds
//! the queue row's lock for that transaction. The processing write stays a
//! separate single-row CAS.

use super::design::{Design, SlotField};
use super::handlers::Turn;
use super::owner_keyed::OwnerKeyed;
use super::{Fresh, InFlightRequestIds, Pc, SlotView};

#[derive(Debug)]
pub struct OwnerKeyedFencedClaim;

impl Design for OwnerKeyedFencedClaim {
    fn name(&self) -> &'static str {
        "owner-keyed-fenced-claim"
    }

    fn summary(&self) -> &'static str {
        "PR #966, but the claim is a transaction that also checks R's row (R's version fences it)"
    }

    fn change(&self) -> &'static str {
        "owner-keyed, but step b's claim is one transaction on the queue row and R's row that commits only if R is still as read: R's version fences the claim. Why: a stalled delivery can then no longer claim a slot for a request superseded or dead-lettered meanwhile."
    }

    fn cost(&self) -> &'static str {
        "as owner-keyed, and every claim a two-row transaction (the queue row locked for it)"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &InFlightRequestIds
    }

    fn gate(&self, seen: SlotView) -> Pc {
        OwnerKeyed.gate(seen)
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        match pc {
            // b: the fenced claim; a conflict on either row restarts.
            Pc::Claim => {
                if turn.claim_in_transaction(None) {
                    Pc::WriteProcessing
                } else {
                    Pc::Read
                }
            }
            other => OwnerKeyed.admit(turn, other),
        }
    }

    fn live_reads(&self, pc: Pc) -> Fresh {
        OwnerKeyed.live_reads(pc)
    }
}
