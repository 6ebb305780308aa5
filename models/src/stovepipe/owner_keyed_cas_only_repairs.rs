//! owner-keyed-cas-only-repairs: PR #966 with the four single-row repairs
//! together, each a design of its own (see their files for the diff and the
//! why), and no transaction:
//!
//! - **supersede first** (`owner-keyed-supersede-first`): a stale head is
//!   superseded, then its slot released;
//! - **the reaping gate** (`owner-keyed-reaping-gate`): a closed gate first
//!   removes the owners whose request is terminal;
//! - **resume submits** (`owner-keyed-resume-submits`): a lost processing
//!   write that finds R `processing` submits the build before acking;
//! - **the DLQ cancels** (`owner-keyed-dlq-cancels`): `dlq` cancels R's
//!   build by request ID before it releases R's slot.
//!
//! Cost: no schema change, no transaction; on a closed gate one statement
//! reading the owners' rows (and a queue write when it finds a leak); one
//! build-system cancel per request the DLQ dead-letters.

use super::design::{Design, SlotField, StaleHead};
use super::handlers::Turn;
use super::owner_keyed::OwnerKeyed;
use super::owner_keyed_dlq_cancels::DlqCancels;
use super::owner_keyed_reaping_gate::{reap, reap_live_reads, reap_outdated, reaping_gate};
use super::owner_keyed_resume_submits::reread_after_lost_write;
use super::owner_keyed_supersede_first::SupersedeFirst;
use super::{Fresh, Pc, Req, RequestState, SlotView, Slots, State};

#[derive(Debug)]
pub struct OwnerKeyedCasOnlyRepairs;

impl Design for OwnerKeyedCasOnlyRepairs {
    fn name(&self) -> &'static str {
        "owner-keyed-cas-only-repairs"
    }

    fn summary(&self) -> &'static str {
        "PR #966 with supersede-first, the reaping gate, resume-submits and the cancelling DLQ; no transaction"
    }

    fn change(&self) -> &'static str {
        "the four single-row repairs of owner-keyed together, no transaction: supersede first, the reaping gate, resume submits, and the cancelling DLQ."
    }

    fn cost(&self) -> &'static str {
        "as owner-keyed, and on a closed gate one statement reading the owners' rows; one build-system cancel per dead-lettered request"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &CasOnlySlots
    }

    fn gate(&self, seen: SlotView) -> Pc {
        reaping_gate(seen)
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        match pc {
            Pc::Reap => reap(turn),
            Pc::RereadRequest => reread_after_lost_write(turn),
            other => OwnerKeyed.admit(turn, other),
        }
    }

    fn live_reads(&self, pc: Pc) -> Fresh {
        reap_live_reads(pc)
    }

    fn hold_outdated(&self, s: &State) -> bool {
        reap_outdated(s)
    }
}

/// Supersede-first's release rules with the cancelling DLQ.
#[derive(Debug)]
pub struct CasOnlySlots;

impl SlotField for CasOnlySlots {
    fn read(&self, s: &State) -> Slots {
        SupersedeFirst.read(s)
    }

    fn write(&self, s: &mut State, slots: Slots) {
        SupersedeFirst.write(s, slots)
    }

    fn view(&self, slots: Slots, r: Req, max_concurrent: u8) -> SlotView {
        SupersedeFirst.view(slots, r, max_concurrent)
    }

    fn claimed(&self, slots: Slots, r: Req) -> Slots {
        SupersedeFirst.claimed(slots, r)
    }

    fn released(&self, slots: Slots, r: Req) -> Option<Slots> {
        SupersedeFirst.released(slots, r)
    }

    fn stale_head(&self, seen: SlotView) -> StaleHead {
        SupersedeFirst.stale_head(seen)
    }

    fn dlq_releases(&self, state: RequestState) -> bool {
        DlqCancels.dlq_releases(state)
    }

    fn dlq_cancels_build(&self, state: RequestState) -> bool {
        DlqCancels.dlq_cancels_build(state)
    }

    fn count_not_low(&self, s: &State) -> bool {
        SupersedeFirst.count_not_low(s)
    }

    fn count_not_high(&self, s: &State) -> bool {
        SupersedeFirst.count_not_high(s)
    }
}
