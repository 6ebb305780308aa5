//! owner-keyed-dlq-cancels: PR #966 with one change, in the DLQ reconciler
//! (the admit table a–d is owner-keyed's, unchanged):
//!
//! | dlq(R), R nonterminal | owner-keyed (PR #966) | this repair |
//! |---|---|---|
//! | first | release R (if present) | **cancel R's build by request ID and wait until it has stopped** |
//! | then | CAS R → `dead_lettered`; the build is not cancelled | release R (if present), CAS R → `dead_lettered` |
//!
//! Why: the DLQ gave back the slot of a build that still ran, and the next
//! head was admitted beside it (`dlq-running-build`). Waiting for a running
//! build to stop is not enough under a stall: a build not yet submitted can
//! still be submitted by a stalled `process` worker after the slot went
//! back, even for a request the DLQ read as `accepted` (its claim made, its
//! processing write still to land). So the cancel is by request ID, for any
//! nonterminal request, and must make a later submit of R start nothing
//! (submitting is already idempotent by request ID: the cancel records R as
//! stopped). Modelled as one step that leaves the build `finished` and
//! publishes no `signal`.
//!
//! Cost: no schema change, no extra row write: one call to the build system
//! (cancel by request ID, synchronous) per request the DLQ dead-letters, on
//! the DLQ's path only. The build system must keep a cancelled
//! ID as submitted.

use super::design::{Design, SlotField, StaleHead};
use super::handlers::Turn;
use super::owner_keyed::OwnerKeyed;
use super::{Fresh, InFlightRequestIds, Pc, Req, RequestState, SlotView, Slots, State};

#[derive(Debug)]
pub struct OwnerKeyedDlqCancels;

impl Design for OwnerKeyedDlqCancels {
    fn name(&self) -> &'static str {
        "owner-keyed-dlq-cancels"
    }

    fn summary(&self) -> &'static str {
        "PR #966, but the DLQ cancels the request's build (by ID) before releasing its slot"
    }

    fn change(&self) -> &'static str {
        "owner-keyed, but the DLQ reconciler first cancels R's build by request ID and waits for it to stop, then releases R's slot and dead-letters R. Why: the DLQ gave back the slot of a build that still ran (dlq-running-build)."
    }

    fn cost(&self) -> &'static str {
        "as owner-keyed, and one build-system cancel per dead-lettered request; the build system must keep a cancelled ID as submitted"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &DlqCancels
    }

    fn gate(&self, seen: SlotView) -> Pc {
        OwnerKeyed.gate(seen)
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        OwnerKeyed.admit(turn, pc)
    }

    fn live_reads(&self, pc: Pc) -> Fresh {
        OwnerKeyed.live_reads(pc)
    }
}

/// `in_flight_request_ids`, with a DLQ that stops the build first.
#[derive(Debug)]
pub struct DlqCancels;

impl SlotField for DlqCancels {
    fn read(&self, s: &State) -> Slots {
        InFlightRequestIds.read(s)
    }

    fn write(&self, s: &mut State, slots: Slots) {
        InFlightRequestIds.write(s, slots)
    }

    fn view(&self, slots: Slots, r: Req, max_concurrent: u8) -> SlotView {
        InFlightRequestIds.view(slots, r, max_concurrent)
    }

    fn claimed(&self, slots: Slots, r: Req) -> Slots {
        InFlightRequestIds.claimed(slots, r)
    }

    fn released(&self, slots: Slots, r: Req) -> Option<Slots> {
        InFlightRequestIds.released(slots, r)
    }

    fn stale_head(&self, seen: SlotView) -> StaleHead {
        InFlightRequestIds.stale_head(seen)
    }

    fn dlq_releases(&self, state: RequestState) -> bool {
        InFlightRequestIds.dlq_releases(state)
    }

    /// Every nonterminal request: an `accepted` one may be about to be
    /// written `processing` by a stalled claimer.
    fn dlq_cancels_build(&self, _state: RequestState) -> bool {
        true
    }

    fn count_not_low(&self, s: &State) -> bool {
        InFlightRequestIds.count_not_low(s)
    }

    fn count_not_high(&self, s: &State) -> bool {
        InFlightRequestIds.count_not_high(s)
    }
}
