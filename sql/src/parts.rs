//! Each design as the parts its SQL is made of, in one place: the slot
//! field, how the admit is written (the contract's steps b and c), what a
//! stale head does, and the repairs each design adds. The SQL handlers
//! (`handlers.rs`) read only these parts, never the model's code, so that a
//! replay compares two independent tellings of the same design.

use slotcheck_models::stovepipe::{self as model, compose, Design, Dlq, Gate, Resume, SlotField};

/// The queue row's slot column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotColumn {
    /// `in_flight_count`, anonymous, clamped at zero on release.
    Count,
    /// `in_flight_request_ids`, the owners by request ID.
    Owners,
}

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

/// What `process` does with a head that is no longer the latest and that
/// its read saw holding a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StaleHead {
    /// Supersede only (a count cannot tell whose slot it is).
    Supersede,
    /// PR #966: release, then supersede.
    ReleaseThenSupersede,
    /// The repair: supersede, then release.
    SupersedeThenRelease,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    pub slot: SlotColumn,
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
            SlotColumn::Count => processing,
            SlotColumn::Owners => true,
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
    let slot = match design.slots {
        SlotField::Count => SlotColumn::Count,
        SlotField::Owners => SlotColumn::Owners,
    };
    let admit = match (slot, design.admit) {
        (SlotColumn::Count, model::Admit::ClaimFirst) => Admit::ClaimFirst,
        (SlotColumn::Count, model::Admit::ProcessingFirst) => Admit::FailOpen,
        (SlotColumn::Owners, model::Admit::ClaimFirst) => Admit::TwoCas,
        (SlotColumn::Owners, model::Admit::FencedClaim) => Admit::FencedClaim,
        (SlotColumn::Owners, model::Admit::OneTransaction) => Admit::OneTransaction,
        (_, admit) => {
            return Err(format!(
                "design `{}` has no SQL yet: its admit {admit:?} on {slot:?} is not written in sql/src/handlers.rs",
                design.name
            ))
        }
    };
    let stale_head = match design.stale_head {
        model::StaleHead::Supersede => StaleHead::Supersede,
        model::StaleHead::ReleaseThenSupersede => StaleHead::ReleaseThenSupersede,
        model::StaleHead::SupersedeThenRelease => StaleHead::SupersedeThenRelease,
    };
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

    const OWNER_KEYED: Parts = Parts {
        slot: SlotColumn::Owners,
        admit: Admit::TwoCas,
        stale_head: StaleHead::ReleaseThenSupersede,
        reaping_gate: false,
        resume_submits: false,
        dlq_cancels: false,
    };

    /// The parts each named design was written for, before designs were
    /// values (issue 20).
    fn written_for(name: &str) -> Option<Parts> {
        let parts = match name {
            "claim-first" => Parts {
                slot: SlotColumn::Count,
                admit: Admit::ClaimFirst,
                stale_head: StaleHead::Supersede,
                ..OWNER_KEYED
            },
            "fail-open" => Parts {
                slot: SlotColumn::Count,
                admit: Admit::FailOpen,
                stale_head: StaleHead::Supersede,
                ..OWNER_KEYED
            },
            "owner-keyed" => OWNER_KEYED,
            "owner-keyed-supersede-first" => Parts {
                stale_head: StaleHead::SupersedeThenRelease,
                ..OWNER_KEYED
            },
            "owner-keyed-fenced-claim" => Parts {
                admit: Admit::FencedClaim,
                ..OWNER_KEYED
            },
            "owner-keyed-reaping-gate" => Parts {
                reaping_gate: true,
                ..OWNER_KEYED
            },
            "owner-keyed-resume-submits" => Parts {
                resume_submits: true,
                ..OWNER_KEYED
            },
            "owner-keyed-atomic-admit" => Parts {
                admit: Admit::OneTransaction,
                ..OWNER_KEYED
            },
            "owner-keyed-dlq-cancels" => Parts {
                dlq_cancels: true,
                ..OWNER_KEYED
            },
            "owner-keyed-atomic-admit-dlq-cancels" => Parts {
                admit: Admit::OneTransaction,
                dlq_cancels: true,
                ..OWNER_KEYED
            },
            "owner-keyed-atomic-admit-supersede-first-dlq-cancels" => Parts {
                admit: Admit::OneTransaction,
                stale_head: StaleHead::SupersedeThenRelease,
                dlq_cancels: true,
                ..OWNER_KEYED
            },
            "owner-keyed-cas-only-repairs" => Parts {
                stale_head: StaleHead::SupersedeThenRelease,
                reaping_gate: true,
                resume_submits: true,
                dlq_cancels: true,
                ..OWNER_KEYED
            },
            _ => return None,
        };
        Some(parts)
    }

    #[test]
    fn each_named_design_reads_as_the_parts_its_sql_was_written_for() {
        for design in &slotcheck_models::stovepipe::DESIGNS {
            assert_eq!(
                parts_of(design).ok(),
                written_for(design.name),
                "{}",
                design.name
            );
        }
    }

    #[test]
    fn a_composition_reads_as_its_parts() {
        let parts = parts_named("owner-keyed+supersede-first+dlq-cancels").unwrap();
        assert_eq!(parts.stale_head, StaleHead::SupersedeThenRelease);
        assert!(parts.dlq_cancels && !parts.reaping_gate && !parts.resume_submits);
        assert_eq!(parts.admit, Admit::TwoCas);
    }
}
