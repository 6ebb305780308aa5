//! What differs between designs, behind one trait: the slot field, the admit
//! steps of the contract's table (a to c), and the release rules. A fourth
//! design is a new file implementing [`Design`] and a line in [`DESIGNS`].

use super::handlers::Turn;
use super::{Fresh, Pc, Req, RequestState, SlotView, Slots, State};

pub trait Design: Sync + std::fmt::Debug {
    /// The name on the command line and in reports: `claim-first`.
    fn name(&self) -> &'static str;

    /// One sentence for `--help` and reports.
    fn summary(&self) -> &'static str;

    /// What the design changes, as a diff of the contract's admit table
    /// (steps a to d, and the release rules): which step, and why. For
    /// `--help`, the README and the HTML report.
    fn change(&self) -> &'static str;

    /// What it costs to build on the source's MySQL rows: schema, writes and
    /// transactions per admit, calls to other systems.
    fn cost(&self) -> &'static str;

    /// The queue's slot field and its release rules.
    fn slots(&self) -> &'static dyn SlotField;

    /// Step a, after a read found R accepted and the latest head: the next
    /// step (`Pc::Hold` when the gate is closed).
    fn gate(&self, seen: SlotView) -> Pc;

    /// Steps b and c and their conflict paths; returns the step after `pc`.
    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc;

    /// What a worker at admit step `pc` may still use of its last read: the
    /// rows that step or a later one may CAS before reading them again. The
    /// model forgets the rest; a wrong answer is caught by the check in
    /// `handlers::step` as soon as a step needs what was forgotten.
    fn live_reads(&self, pc: Pc) -> Fresh;

    /// Whether a hold now rests on rows the gate read beyond R's row, the
    /// queue row and the head, that have changed since (so its message is
    /// visible at once rather than parked). The contract's gates read no
    /// other row.
    fn hold_outdated(&self, _s: &State) -> bool {
        false
    }
}

/// How `process` gives back the slot of a request that is no longer the
/// latest head, by what its read saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StaleHead {
    /// Supersede R; it holds no slot to give back (or the field cannot tell).
    Supersede,
    /// Release R's slot, then supersede R (PR #966).
    ReleaseThenSupersede,
    /// Supersede R, then release its slot (a repair).
    SupersedeThenRelease,
}

/// The slot field a design keeps on the queue row, and how it is claimed,
/// released and judged: an anonymous count, or the set of owners.
pub trait SlotField: Sync + std::fmt::Debug {
    /// The field as the queue row holds it now.
    fn read(&self, s: &State) -> Slots;

    /// Writes the field.
    fn write(&self, s: &mut State, slots: Slots);

    /// What a read of `slots` tells R's worker (see [`SlotView`]).
    fn view(&self, slots: Slots, r: Req, max_concurrent: u8) -> SlotView;

    /// The field with R's slot claimed.
    fn claimed(&self, slots: Slots, r: Req) -> Slots;

    /// The field with R's slot released, or `None` when it holds none of R's
    /// (never asked then: a release is decided at the read that saw it).
    fn released(&self, slots: Slots, r: Req) -> Option<Slots>;

    /// How `process` gives back the slot of a head that is no longer the
    /// latest.
    fn stale_head(&self, seen: SlotView) -> StaleHead;

    /// Whether the DLQ reconciler releases a nonterminal request in `state`.
    fn dlq_releases(&self, state: RequestState) -> bool;

    /// Whether the DLQ reconciler first cancels R's build, and waits for it
    /// to stop (a repair; the contract's reconciler does not cancel).
    fn dlq_cancels_build(&self, _state: RequestState) -> bool {
        false
    }

    /// `count-not-low` in a quiescent state: no `processing` request lacks a
    /// slot.
    fn count_not_low(&self, s: &State) -> bool;

    /// `count-not-high` in a quiescent state: no slot is held without a
    /// `processing` owner.
    fn count_not_high(&self, s: &State) -> bool;
}

/// Every design, in the order reports show them: the source's three, then
/// the repairs of owner-keyed, one change each, then two combinations.
pub static DESIGNS: [&dyn Design; 11] = [
    &super::claim_first::ClaimFirst,
    &super::fail_open::FailOpen,
    &super::owner_keyed::OwnerKeyed,
    &super::owner_keyed_supersede_first::OwnerKeyedSupersedeFirst,
    &super::owner_keyed_fenced_claim::OwnerKeyedFencedClaim,
    &super::owner_keyed_reaping_gate::OwnerKeyedReapingGate,
    &super::owner_keyed_resume_submits::OwnerKeyedResumeSubmits,
    &super::owner_keyed_atomic_admit::OwnerKeyedAtomicAdmit,
    &super::owner_keyed_dlq_cancels::OwnerKeyedDlqCancels,
    &super::owner_keyed_atomic_admit_dlq_cancels::OwnerKeyedAtomicAdmitDlqCancels,
    &super::owner_keyed_cas_only_repairs::OwnerKeyedCasOnlyRepairs,
];

/// The design with this name.
pub fn design_named(name: &str) -> Option<&'static dyn Design> {
    DESIGNS.iter().copied().find(|d| d.name() == name)
}

/// Rows of a read a step may still use, by name.
pub(crate) const REQUEST_AND_QUEUE: Fresh = Fresh {
    request: true,
    queue: true,
    head: false,
};
pub(crate) const QUEUE: Fresh = Fresh {
    request: false,
    queue: true,
    head: false,
};

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
    fn read(&self, s: &State) -> Slots {
        Slots::Count(s.count())
    }

    fn write(&self, s: &mut State, slots: Slots) {
        s.set_count(Self::count(slots));
    }

    /// An anonymous count cannot tell whose slot it holds, so a release by
    /// any request always writes.
    fn view(&self, slots: Slots, _r: Req, max_concurrent: u8) -> SlotView {
        SlotView {
            has_slot: true,
            full: Self::count(slots) >= max_concurrent,
        }
    }

    fn claimed(&self, slots: Slots, _r: Req) -> Slots {
        let count = Self::count(slots);
        Slots::Count(count.checked_add(1).expect("in_flight_count overflows"))
    }

    /// A clamped `count - 1`, written even at zero (the CAS still bumps the
    /// version, as the source's update does).
    fn released(&self, slots: Slots, _r: Req) -> Option<Slots> {
        Some(Slots::Count(Self::count(slots).saturating_sub(1)))
    }

    /// An anonymous count cannot tell whose slot it would give back.
    fn stale_head(&self, _seen: SlotView) -> StaleHead {
        StaleHead::Supersede
    }

    /// The DLQ releases only a `processing` request.
    fn dlq_releases(&self, state: RequestState) -> bool {
        state == RequestState::Processing
    }

    fn count_not_low(&self, s: &State) -> bool {
        s.count() as usize >= s.processing().count()
    }

    fn count_not_high(&self, s: &State) -> bool {
        s.count() as usize <= s.processing().count()
    }
}
