//! owner-keyed-resume-submits: PR #966 with one change, in step c's conflict
//! path (a, b, d and the release rules are owner-keyed's, unchanged):
//!
//! | step | owner-keyed (PR #966) | this repair |
//! |---|---|---|
//! | c | CAS R → `processing`; conflict → re-read R: terminal → release R, ack; `processing` → keep the slot, **ack** | CAS R → `processing`; conflict → re-read R: terminal → release R, ack; `processing` → keep the slot, **submit R's build (idempotent), ack** |
//!
//! Why: a lost processing write that finds R `processing` is a duplicate
//! admission, and the contract's duplicate admission submits the build.
//! Acking without it trusts the delivery that won the write to submit; if
//! that delivery had stalled (so this one ran beside it) and then dies
//! before its submit, nobody holds R's message any more: R stays
//! `processing` with its slot and no build, and the next head holds for ever
//! (a model finding, under one stall and one crash).
//!
//! Cost: none; a submit is idempotent by request ID.

use super::design::{Design, SlotField};
use super::handlers::Turn;
use super::owner_keyed::OwnerKeyed;
use super::{Fresh, InFlightRequestIds, Pc, RequestState, SlotView};

#[derive(Debug)]
pub struct OwnerKeyedResumeSubmits;

/// Step c's re-read after a lost processing write, submitting when R is
/// `processing`. Shared by the combined repairs.
pub fn reread_after_lost_write(turn: &mut Turn) -> Pc {
    match turn.reread_request() {
        state if state.is_terminal() => Pc::Unwind,
        RequestState::Processing => Pc::SubmitBuild,
        // Accepted cannot follow a lost write: every write moves R out of it.
        _ => Pc::Read,
    }
}

impl Design for OwnerKeyedResumeSubmits {
    fn name(&self) -> &'static str {
        "owner-keyed-resume-submits"
    }

    fn summary(&self) -> &'static str {
        "PR #966, but a lost processing write that finds R processing submits the build before acking"
    }

    fn change(&self) -> &'static str {
        "owner-keyed, but step c's conflict path, re-reading R as processing, submits R's build (idempotent) before it acks. Why: the delivery whose processing write won may have stalled and died before its submit, leaving R processing with no build (owner-keyed-resume-no-submit)."
    }

    fn cost(&self) -> &'static str {
        "as owner-keyed; a submit is idempotent, so nothing more"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &InFlightRequestIds
    }

    fn gate(&self, seen: SlotView) -> Pc {
        OwnerKeyed.gate(seen)
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        match pc {
            Pc::RereadRequest => reread_after_lost_write(turn),
            other => OwnerKeyed.admit(turn, other),
        }
    }

    fn live_reads(&self, pc: Pc) -> Fresh {
        OwnerKeyed.live_reads(pc)
    }
}
