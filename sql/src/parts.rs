//! Each design as the parts its SQL is made of, in one place: the slot
//! field, how the admit is written (the contract's steps b and c), what a
//! stale head does, and the repairs each design adds. The SQL handlers
//! (`handlers.rs`) read only these parts, never the model's code, so that a
//! replay compares two independent tellings of the same design.

use slotcheck_models::stovepipe::{self as model, compose, Design, Dlq, Gate, Resume};
/// The slot column and what a stale head does are the model's parts as
/// they are: one list of parts (the SQL's own telling is in its statements).
pub use slotcheck_models::stovepipe::{SlotField, StaleHead};

/// Steps b and c of the admit table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// claim-first: CAS the count + 1, then CAS R -> processing; a lost
    /// processing write unwinds the claim.
    ClaimFirst,
    /// fail-open: CAS R -> processing, then CAS the count + 1, retried on
    /// conflict without re-gating.
    FailOpen,
    /// owner-keyed: CAS the set + {R}, then CAS R -> processing; a lost
    /// processing write re-reads R (terminal: release; processing: keep).
    TwoCas,
    /// fenced claim: the claim is a transaction that also checks R's row;
    /// the processing write stays a CAS.
    FencedClaim,
    /// atomic admit: claim and processing write in one transaction.
    OneTransaction,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    pub slot: SlotField,
    pub admit: Admit,
    pub stale_head: StaleHead,
    /// A closed gate first removes owners whose request is terminal.
    pub reaping_gate: bool,
    /// A lost processing write that finds R processing submits the build.
    pub resume_submits: bool,
    /// The DLQ cancels R's build (by request ID) before it releases.
    pub dlq_cancels: bool,
}

impl Parts {
    /// Whether the DLQ releases R's slot, for a request read in `state`
    /// (nonterminal): an anonymous count only for `processing`, an owner
    /// set for any nonterminal request.
    pub fn dlq_releases_state(&self, processing: bool) -> bool {
        match self.slot {
            SlotField::Count => processing,
            SlotField::Owners => true,
        }
    }
}

/// The parts of the design named `name`: a named design or a composition
/// (`owner-keyed+atomic-admit`); `None` for no such design, or one whose SQL
/// is not written yet.
pub fn parts_named(name: &str) -> Option<Parts> {
    parts_of(&compose(name).ok()?).ok()
}

/// The parts of a design of the model, read from its choices. The SQL
/// handlers are written from these parts alone, never from the model's
/// code, so that a replay still compares two tellings of the design.
pub fn parts_of(design: &Design) -> Result<Parts, String> {
    let slot = design.slots;
    let admit = match (slot, design.admit) {
        (SlotField::Count, model::Admit::ClaimFirst) => Admit::ClaimFirst,
        (SlotField::Count, model::Admit::ProcessingFirst) => Admit::FailOpen,
        (SlotField::Owners, model::Admit::ClaimFirst) => Admit::TwoCas,
        (SlotField::Owners, model::Admit::FencedClaim) => Admit::FencedClaim,
        (SlotField::Owners, model::Admit::OneTransaction) => Admit::OneTransaction,
        (_, admit) => {
            return Err(format!(
                "design `{}` has no SQL yet: its admit {admit:?} on {slot:?} is not written in sql/src/handlers.rs",
                design.name
            ))
        }
    };
    let stale_head = design.stale_head;
    Ok(Parts {
        slot,
        admit,
        stale_head,
        reaping_gate: design.gate == Gate::ReapThenHold,
        resume_submits: design.resume == Resume::Submit,
        dlq_cancels: design.dlq == Dlq::CancelFirst,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every design of the model has its SQL: a design composed of parts
    /// the SQL already runs needs no edit here (the parts are read from
    /// the design, not listed again).
    #[test]
    fn every_design_of_the_model_has_its_sql() {
        for design in &slotcheck_models::stovepipe::DESIGNS {
            if let Err(e) = parts_of(design) {
                panic!("{e}");
            }
        }
    }

    /// The SQL admit is the model's admit on its slot column: what its
    /// statements are written for.
    #[test]
    fn each_admit_is_written_for_its_slot_column() {
        let admit = |name: &str| parts_named(name).unwrap().admit;
        assert_eq!(admit("claim-first"), Admit::ClaimFirst);
        assert_eq!(admit("fail-open"), Admit::FailOpen);
        assert_eq!(admit("owner-keyed"), Admit::TwoCas);
        assert_eq!(admit("owner-keyed+fenced-claim"), Admit::FencedClaim);
        assert_eq!(admit("owner-keyed+atomic-admit"), Admit::OneTransaction);
    }

    #[test]
    fn a_composition_reads_as_its_parts() {
        let parts = parts_named("owner-keyed+supersede-first+dlq-cancels").unwrap();
        assert_eq!(parts.stale_head, StaleHead::SupersedeThenRelease);
        assert!(parts.dlq_cancels && !parts.reaping_gate && !parts.resume_submits);
        assert_eq!(parts.admit, Admit::TwoCas);
    }
}
