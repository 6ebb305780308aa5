//! What differs between designs, behind one trait: the slot field, the admit
//! steps of the contract's table (a to c), and the release rules. A fourth
//! design is a new file implementing [`Design`] and a line in [`DESIGNS`].

use super::handlers::Turn;
use super::{Pc, Req, RequestState, Slots, Snapshot, State};

pub trait Design: Sync + std::fmt::Debug {
    /// The name on the command line and in reports: `claim-first`.
    fn name(&self) -> &'static str;

    /// One sentence for `--help` and reports.
    fn summary(&self) -> &'static str;

    /// The queue's slot field and its release rules.
    fn slots(&self) -> &'static dyn SlotField;

    /// Step a, after a read found R accepted and the latest head: the next
    /// step (`Pc::Hold` when the gate is closed).
    fn gate(&self, seen: &Snapshot, r: Req, max_concurrent: u8) -> Pc;

    /// Steps b and c and their conflict paths; returns the step after `pc`.
    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc;
}

/// The slot field a design keeps on the queue row, and how it is released and
/// judged: an anonymous count, or the set of owners.
pub trait SlotField: Sync + std::fmt::Debug {
    /// The field before anything happened.
    fn initial(&self) -> Slots;

    /// R's slot released from `slots`, or `None` when there is nothing to
    /// write.
    fn release(&self, slots: Slots, r: Req) -> Option<Slots>;

    /// Whether `process` releases R's slot before superseding R.
    fn releases_before_supersede(&self, slots: Slots, r: Req) -> bool;

    /// Whether the DLQ reconciler releases a nonterminal request in `state`.
    fn dlq_releases(&self, state: RequestState) -> bool;

    /// `count-not-low` in a quiescent state: no `processing` request lacks a
    /// slot.
    fn count_not_low(&self, s: &State) -> bool;

    /// `count-not-high` in a quiescent state: no slot is held without a
    /// `processing` owner.
    fn count_not_high(&self, s: &State) -> bool;
}

/// Every design, in the order reports show them.
pub static DESIGNS: [&dyn Design; 3] = [
    &super::claim_first::ClaimFirst,
    &super::fail_open::FailOpen,
    &super::owner_keyed::OwnerKeyed,
];

/// The design with this name.
pub fn design_named(name: &str) -> Option<&'static dyn Design> {
    DESIGNS.iter().copied().find(|d| d.name() == name)
}

/// `in_flight_count`, the anonymous count the two counter designs keep.
#[derive(Debug)]
pub struct InFlightCount;

impl InFlightCount {
    pub fn count(slots: Slots) -> u8 {
        match slots {
            Slots::Count(n) => n,
            Slots::Owners(_) => unreachable!("a counter design keeps a count"),
        }
    }
}

impl SlotField for InFlightCount {
    fn initial(&self) -> Slots {
        Slots::Count(0)
    }

    /// A clamped `count - 1`, written even at zero (the CAS still bumps the
    /// version, as the source's update does).
    fn release(&self, slots: Slots, _r: Req) -> Option<Slots> {
        Some(Slots::Count(Self::count(slots).saturating_sub(1)))
    }

    /// An anonymous count cannot tell whose slot it would give back.
    fn releases_before_supersede(&self, _slots: Slots, _r: Req) -> bool {
        false
    }

    /// The DLQ releases only a `processing` request.
    fn dlq_releases(&self, state: RequestState) -> bool {
        state == RequestState::Processing
    }

    fn count_not_low(&self, s: &State) -> bool {
        Self::count(s.queue.slots) as usize >= s.processing().count()
    }

    fn count_not_high(&self, s: &State) -> bool {
        Self::count(s.queue.slots) as usize <= s.processing().count()
    }
}
