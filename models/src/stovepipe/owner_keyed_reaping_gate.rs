//! owner-keyed-reaping-gate: PR #966 with one change, at step a of the admit
//! table (b–d and the release rules are owner-keyed's, unchanged):
//!
//! | step | owner-keyed (PR #966) | this repair |
//! |---|---|---|
//! | a | R already in the set → go to c; else size ≥ K → hold | R already in the set → go to c; else size ≥ K → **reap**: one statement removes from the set every owner whose request row is terminal, if Q is still at the version read (`UPDATE queue SET ids = ids − {terminal owners} WHERE version = v`, reading the owners' rows); something removed → restart (re-read, re-gate); nothing terminal → hold; Q changed since the read → restart |
//!
//! Why: a `process` worker that stalled after its read can claim the slot
//! for a request that was superseded or dead-lettered meanwhile (its claim
//! CAS checks only the queue row) and then die; nobody holds that request's
//! message any more, so nothing releases the slot and the next head holds
//! for ever (`owner-keyed-stall-crash`). A terminal request never needs a
//! slot (`signal` and `dlq` release before their terminal write), so the
//! head that is held behind it gives it back. This is the reconciler, run
//! exactly when a leaked slot hurts; no sweeper.
//!
//! Cost: no schema change, nothing on the open-gate path. On a closed gate,
//! one statement on the queue row whose condition reads the owners' request
//! rows (at most K of them), and one queue write when it finds a leak.

use super::design::{Design, SlotField};
use super::handlers::Turn;
use super::owner_keyed::{owners, OwnerKeyed};
use super::{request_name, Fresh, InFlightRequestIds, Pc, SlotView, State, MAX_REQUESTS};

#[derive(Debug)]
pub struct OwnerKeyedReapingGate;

/// Step a with the reap: the gate of owner-keyed, but a closed gate reaps
/// before it holds. Shared by the combined repairs.
pub fn reaping_gate(seen: SlotView) -> Pc {
    match OwnerKeyed.gate(seen) {
        Pc::Hold => Pc::Reap,
        next => next,
    }
}

/// The reap: remove every owner whose request is terminal, in one statement
/// guarded by the queue row's version. Shared by the combined repairs.
pub fn reap(turn: &mut Turn) -> Pc {
    if !turn.queue_unchanged() {
        turn.observe_reap(0, false);
        turn.say(|| "reap: the queue row changed since the read, nothing written".to_string());
        return Pc::Read;
    }
    let set = owners(turn.slots());
    let terminal = (0..MAX_REQUESTS)
        .filter(|&o| set & (1 << o) != 0 && turn.state_of(o).is_terminal())
        .fold(0u32, |acc, o| acc | 1 << o);
    turn.observe_reap(terminal, true);
    if terminal == 0 {
        turn.say(|| "reap: no owner's request is terminal".to_string());
        return Pc::Hold;
    }
    turn.say(|| {
        let names: Vec<String> = (0..MAX_REQUESTS)
            .filter(|o| terminal & (1 << o) != 0)
            .map(request_name)
            .collect();
        format!("reap {}: terminal", names.join(", "))
    });
    turn.write_slots(super::Slots::Owners(set & !terminal));
    // Re-read and re-gate, with the slot free.
    Pc::Read
}

/// The reap uses the queue row as its guard, and may hold after it: a hold
/// asks whether anything the read saw has changed, so all of it is live.
pub fn reap_live_reads(pc: Pc) -> Fresh {
    match pc {
        Pc::Reap => Fresh::ALL,
        other => OwnerKeyed.live_reads(other),
    }
}

impl Design for OwnerKeyedReapingGate {
    fn name(&self) -> &'static str {
        "owner-keyed-reaping-gate"
    }

    fn summary(&self) -> &'static str {
        "PR #966, but a closed gate first releases owners whose request is terminal"
    }

    fn change(&self) -> &'static str {
        "owner-keyed, but a closed gate (step a) first removes from the set every owner whose request is terminal, in one statement guarded by the queue row's version, then re-reads and re-gates. Why: a slot leaked to a terminal request is given back as soon as a head is held behind it (owner-keyed-stall-crash)."
    }

    fn cost(&self) -> &'static str {
        "as owner-keyed, and on a closed gate one statement that reads the owners' rows"
    }

    fn slots(&self) -> &'static dyn SlotField {
        &InFlightRequestIds
    }

    fn gate(&self, seen: SlotView) -> Pc {
        reaping_gate(seen)
    }

    fn admit(&self, turn: &mut Turn, pc: Pc) -> Pc {
        match pc {
            Pc::Reap => reap(turn),
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

/// The reap read the owners' rows and found none terminal; one that is
/// terminal now (terminal states are final) changed since, so the hold that
/// follows makes its message visible at once instead of parking it. Shared by
/// the combined repairs.
pub fn reap_outdated(s: &State) -> bool {
    s.requests()
        .any(|(o, state)| s.owns_slot(o) && state.is_terminal())
}
