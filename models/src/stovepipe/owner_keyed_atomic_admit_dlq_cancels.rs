//! owner-keyed-atomic-admit-dlq-cancels: PR #966 with two changes, each a
//! design of its own (see their files for the diff and the why):
//!
//! - **atomic admit** (`owner-keyed-atomic-admit`): steps b and c of the
//!   admit table are one transaction on the queue row and R's row;
//! - **the DLQ cancels** (`owner-keyed-dlq-cancels`): `dlq` cancels R's
//!   build by request ID, and waits for it to stop, before it releases R's
//!   slot.
//!
//! Cost: no schema change; one two-row transaction per admit (the queue
//! row's lock held for the length of the admit) instead of two CASes; one
//! build-system cancel per request the DLQ dead-letters.

use super::design::{Design, SlotField};
use super::handlers::Turn;
use super::owner_keyed_atomic_admit::{atomic_admit, atomic_gate, atomic_live_reads};
use super::owner_keyed_dlq_cancels::DlqCancels;
use super::{Fresh, Pc, SlotView};

#[derive(Debug)]
pub struct OwnerKeyedAtomicAdmitDlqCancels;

impl Design for OwnerKeyedAtomicAdmitDlqCancels {
    fn name(&self) -> &'static str {
        "owner-keyed-atomic-admit-dlq-cancels"
    }

    fn summary(&self) -> &'static str {
        "PR #966 with the admit as one transaction and a DLQ that cancels the build first"
    }

    fn change(&self) -> &'static str {
        "owner-keyed-atomic-admit and owner-keyed-dlq-cancels together: steps b and c are one transaction on the queue row and R's row, and the DLQ cancels R's build before it releases R's slot."
    }

    fn cost(&self) -> &'static str {
        "as owner-keyed, and every admit one two-row transaction (the queue row locked for the admit); one build-system cancel per dead-lettered request"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &DlqCancels
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
