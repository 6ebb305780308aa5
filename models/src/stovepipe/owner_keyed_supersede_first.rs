//! owner-keyed-supersede-first: PR #966 with one change, in `process`'s
//! branch for a head that is no longer the latest (the admit table a–d is
//! owner-keyed's, unchanged):
//!
//! | R accepted, not the latest head | owner-keyed (PR #966) | this repair |
//! |---|---|---|
//! | first | R holds a slot: release it (CAS Q set − {R}; conflict → restart) | CAS R → `superseded` (conflict → restart) |
//! | then | CAS R → `superseded` (conflict → restart), ack | R held a slot when read: release it (CAS Q set − {R}; conflict → re-read Q and retry), ack |
//!
//! Why: releasing first leaves R's row unchanged, so a stalled first
//! delivery that claimed the slot can still land its `accepted → processing`
//! write after the slot went back, and R runs without one
//! (`owner-keyed-stall`). Superseding first bumps R's version: the stale
//! processing write loses its CAS, re-reads R terminal and unwinds.
//!
//! Cost: none. The same two single-row CASes, in the other order; no schema
//! change, no transaction.

use super::design::{Design, SlotField, StaleHead};
use super::handlers::Turn;
use super::owner_keyed::OwnerKeyed;
use super::{Fresh, InFlightRequestIds, Pc, Req, RequestState, SlotView, Slots, State};

#[derive(Debug)]
pub struct OwnerKeyedSupersedeFirst;

impl Design for OwnerKeyedSupersedeFirst {
    fn name(&self) -> &'static str {
        "owner-keyed-supersede-first"
    }

    fn summary(&self) -> &'static str {
        "PR #966, but a stale head is superseded before its slot is released (no extra cost)"
    }

    fn change(&self) -> &'static str {
        "owner-keyed, but a head that is no longer the latest is superseded first and its slot released after (owner-keyed releases first). Why: superseding bumps R's version, so a stalled first delivery's processing write loses its CAS instead of landing after the slot went back (owner-keyed-stall)."
    }

    fn cost(&self) -> &'static str {
        "as owner-keyed: the same two CASes in the other order"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &SupersedeFirst
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

/// `in_flight_request_ids`, released after the supersede instead of before.
#[derive(Debug)]
pub struct SupersedeFirst;

impl SlotField for SupersedeFirst {
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

    /// The slot the read saw R hold, given back once R is superseded.
    fn stale_head(&self, seen: SlotView) -> StaleHead {
        if seen.has_slot {
            StaleHead::SupersedeThenRelease
        } else {
            StaleHead::Supersede
        }
    }

    fn dlq_releases(&self, state: RequestState) -> bool {
        InFlightRequestIds.dlq_releases(state)
    }

    fn count_not_low(&self, s: &State) -> bool {
        InFlightRequestIds.count_not_low(s)
    }

    fn count_not_high(&self, s: &State) -> bool {
        InFlightRequestIds.count_not_high(s)
    }
}
