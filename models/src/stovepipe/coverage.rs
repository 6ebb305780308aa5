//! Coverage marks: every path a handler's step can take, named, and which
//! of them a design's runs reach. A path is a step of a handler and where
//! it went (with, for a write, whether it won), read off the records every
//! step leaves (`log.rs`'s `Taken`), so no handler carries marks of its own. Which
//! paths a design has is the table below, read from its parts in the order
//! of `handlers.rs`; a test explores every design and fails on a path the
//! table does not list (a new branch needs its line here).

use super::design::{Admit, Design, Dlq, Gate, Resume, SlotField, StaleHead};
pub use super::log::Path;
use super::log::{Log, Record, Taken};
use super::{Handler, Pc, Stovepipe};
use crate::walk;
use std::collections::BTreeSet;

/// Every step of every reachable state, each step's records handed to
/// `keep`: the model explored whole, under a budget (see
/// [`walk::each_step_within`]; `None` when `go_on` said stop).
pub(super) fn each_step_within(
    model: &Stovepipe,
    go_on: &mut dyn FnMut(usize) -> bool,
    keep: &mut dyn FnMut(&[Record]),
) -> Option<()> {
    walk::each_step_within(model, go_on, &mut |state, action| {
        let mut log = Log::recording();
        let next = model.apply(state, action, &mut log);
        keep(&log.records());
        next
    })
}

/// Adds to `reached` the paths the model's steps take on its bounds, as it
/// explores; `None`: cut by `go_on` (`reached` then holds those taken so
/// far).
pub fn reach_within(
    model: &Stovepipe,
    go_on: &mut dyn FnMut(usize) -> bool,
    reached: &mut BTreeSet<Path>,
) -> Option<()> {
    each_step_within(model, go_on, &mut |records| {
        reached.extend(Taken::of(records).and_then(|taken| taken.path()))
    })
}

/// Every path the design's handlers can take, in the order of
/// `handlers.rs`: what a step's code allows, whatever the bounds.
pub fn paths(design: &Design) -> Vec<Path> {
    let d = design;
    let mut paths = Vec::new();
    let mut add = |when: bool, handler, from, to: Option<Pc>, won: Option<bool>| {
        if when {
            paths.push(Path {
                handler,
                from,
                to,
                won,
            });
        }
    };
    let counted = d.admit == Admit::ProcessingFirst;
    // The admits whose processing write is a CAS of its own (step c).
    let cas_c = matches!(d.admit, Admit::ClaimFirst | Admit::FencedClaim);
    let owners = d.slots == SlotField::Owners;
    let release_first = d.stale_head == StaleHead::ReleaseThenSupersede;
    let supersede_first = d.stale_head == StaleHead::SupersedeThenRelease;
    let reaps = d.gate == Gate::ReapThenHold;
    let reread = cas_c && d.resume != Resume::Unwind;
    let unwinds = cas_c || supersede_first;
    let cancels = d.dlq == Dlq::CancelFirst;
    let all = true;
    let (yes, no) = (Some(true), Some(false));
    use Handler::{Dlq as D, Process as P, Signal as S};

    // process: the read, and what it found.
    add(all, P, Pc::Read, Some(Pc::Ack), None);
    add(all, P, Pc::Read, Some(Pc::SubmitBuild), None);
    add(all, P, Pc::Read, Some(Pc::Supersede), None);
    add(
        release_first,
        P,
        Pc::Read,
        Some(Pc::ReleaseBeforeSupersede),
        None,
    );
    add(
        supersede_first,
        P,
        Pc::Read,
        Some(Pc::SupersedeThenRelease),
        None,
    );
    add(!counted, P, Pc::Read, Some(Pc::Claim), None);
    let resumes_at_c = owners && d.admit != Admit::OneTransaction;
    add(
        counted || resumes_at_c,
        P,
        Pc::Read,
        Some(Pc::WriteProcessing),
        None,
    );
    add(d.gate == Gate::Hold, P, Pc::Read, Some(Pc::Hold), None);
    add(reaps, P, Pc::Read, Some(Pc::Reap), None);
    // The stale head.
    add(
        release_first,
        P,
        Pc::ReleaseBeforeSupersede,
        Some(Pc::Supersede),
        yes,
    );
    add(
        release_first,
        P,
        Pc::ReleaseBeforeSupersede,
        Some(Pc::Read),
        no,
    );
    add(all, P, Pc::Supersede, Some(Pc::Ack), yes);
    add(all, P, Pc::Supersede, Some(Pc::Read), no);
    add(
        supersede_first,
        P,
        Pc::SupersedeThenRelease,
        Some(Pc::Unwind),
        yes,
    );
    add(
        supersede_first,
        P,
        Pc::SupersedeThenRelease,
        Some(Pc::Read),
        no,
    );
    add(all, P, Pc::SubmitBuild, Some(Pc::Ack), None);
    // The reap: the queue row changed since the read, nothing terminal,
    // owners reaped.
    add(reaps, P, Pc::Reap, Some(Pc::Read), no);
    add(reaps, P, Pc::Reap, Some(Pc::Hold), yes);
    add(reaps, P, Pc::Reap, Some(Pc::Read), yes);
    // The admit's steps b and c.
    let after_claim = if d.admit == Admit::OneTransaction {
        Pc::SubmitBuild
    } else {
        Pc::WriteProcessing
    };
    add(!counted, P, Pc::Claim, Some(after_claim), yes);
    add(!counted, P, Pc::Claim, Some(Pc::Read), no);
    add(counted, P, Pc::WriteProcessing, Some(Pc::CountUp), yes);
    add(counted, P, Pc::WriteProcessing, Some(Pc::Ack), no);
    add(cas_c, P, Pc::WriteProcessing, Some(Pc::SubmitBuild), yes);
    let lost_c = if d.resume == Resume::Unwind {
        Pc::Unwind
    } else {
        Pc::RereadRequest
    };
    add(cas_c, P, Pc::WriteProcessing, Some(lost_c), no);
    // The resume path.
    add(reread, P, Pc::RereadRequest, Some(Pc::Unwind), None);
    let processing = if d.resume == Resume::Submit {
        Pc::SubmitBuild
    } else {
        Pc::Ack
    };
    add(reread, P, Pc::RereadRequest, Some(processing), None);
    add(reread, P, Pc::RereadRequest, Some(Pc::Read), None);
    add(unwinds, P, Pc::Unwind, Some(Pc::Ack), yes);
    add(unwinds, P, Pc::Unwind, Some(Pc::RereadQueueForUnwind), no);
    add(unwinds, P, Pc::RereadQueueForUnwind, Some(Pc::Unwind), None);
    // An anonymous count cannot tell whose slot it is: to every request
    // it may hold one (`Design::view`), so only an owner set lets a read
    // find none.
    add(
        unwinds && owners,
        P,
        Pc::RereadQueueForUnwind,
        Some(Pc::Ack),
        None,
    );
    add(counted, P, Pc::CountUp, Some(Pc::SubmitBuild), yes);
    add(counted, P, Pc::CountUp, Some(Pc::RereadQueueForCountUp), no);
    add(
        counted,
        P,
        Pc::RereadQueueForCountUp,
        Some(Pc::CountUp),
        None,
    );
    add(d.gate == Gate::Hold || reaps, P, Pc::Hold, None, None);
    add(all, P, Pc::Ack, None, None);

    // signal: release, then write `succeeded`.
    add(all, S, Pc::Read, Some(Pc::Ack), None);
    add(all, S, Pc::Read, Some(Pc::Release), None);
    add(owners, S, Pc::Read, Some(Pc::WriteOutcome), None);
    add(all, S, Pc::Release, Some(Pc::WriteOutcome), yes);
    add(all, S, Pc::Release, Some(Pc::Read), no);
    add(all, S, Pc::WriteOutcome, Some(Pc::Ack), yes);
    add(all, S, Pc::WriteOutcome, Some(Pc::Read), no);
    add(all, S, Pc::Ack, None, None);

    // dlq: (cancel,) release, then write `dead_lettered`.
    add(all, D, Pc::Read, Some(Pc::Ack), None);
    for release in [true, false] {
        let cancel = Pc::CancelBuild { release };
        add(cancels, D, Pc::Read, Some(cancel), None);
    }
    add(!cancels, D, Pc::Read, Some(Pc::Release), None);
    add(!cancels, D, Pc::Read, Some(Pc::WriteOutcome), None);
    add(
        cancels,
        D,
        Pc::CancelBuild { release: true },
        Some(Pc::Release),
        None,
    );
    let cancel_only = Pc::CancelBuild { release: false };
    add(cancels, D, cancel_only, Some(Pc::WriteOutcome), None);
    add(all, D, Pc::Release, Some(Pc::WriteOutcome), yes);
    add(all, D, Pc::Release, Some(Pc::Read), no);
    add(all, D, Pc::WriteOutcome, Some(Pc::Ack), yes);
    add(all, D, Pc::WriteOutcome, Some(Pc::Read), no);
    add(all, D, Pc::Ack, None, None);
    paths
}

impl Path {
    /// `process: claim (won) -> write-processing`, `dlq: ack`: the step and
    /// where it went, by the names of mutants' steps.
    pub fn name(&self) -> String {
        let step = |pc: Pc| {
            let mut kebab = String::new();
            for (i, c) in pc.name().chars().enumerate() {
                if c.is_uppercase() && i > 0 {
                    kebab.push('-');
                }
                kebab.push(c.to_ascii_lowercase());
            }
            match pc {
                Pc::CancelBuild { release: false } => format!("{kebab} (no slot)"),
                _ => kebab,
            }
        };
        let won = match self.won {
            Some(true) => " (won)",
            Some(false) => " (lost)",
            None => "",
        };
        let from = match (self.from, self.won) {
            // The reap's statement: guarded by the queue row's version.
            (Pc::Reap, Some(false)) => "reap (row changed)".to_string(),
            (Pc::Reap, Some(true)) => "reap".to_string(),
            _ => format!("{}{won}", step(self.from)),
        };
        match self.to {
            Some(to) => format!("{}: {from} -> {}", self.handler.name(), step(to)),
            None => format!("{}: {from}", self.handler.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stovepipe::{Bounds, DESIGNS};

    /// Every path a design's steps take, on bounds with every fault and
    /// one slot, is one the table lists: a branch the table does not know
    /// fails here, naming its path. Split reads (whose steps record as the
    /// read) on two designs only: on all of them the test took half a
    /// minute.
    #[test]
    fn every_path_a_step_takes_is_in_its_designs_table() {
        let bounds = Bounds {
            requests: 2,
            max_concurrent: 1,
            crashes: 1,
            stalls: 1,
            max_deliveries: 2,
        };
        for design in &DESIGNS {
            let table: BTreeSet<Path> = paths(design).into_iter().collect();
            let split_too = [
                "owner-keyed",
                "owner-keyed-atomic-admit-supersede-first-dlq-cancels",
            ]
            .contains(&design.name);
            for split in [false, true].into_iter().filter(|&s| !s || split_too) {
                let mut model = Stovepipe::new(*design, bounds);
                model.options.split_read = split;
                let mut reached = BTreeSet::new();
                reach_within(&model, &mut |_| true, &mut reached).unwrap();
                let unknown: Vec<String> = reached.difference(&table).map(Path::name).collect();
                assert!(
                    unknown.is_empty(),
                    "{} (split reads {split}) takes paths its table does not list: {unknown:?}",
                    design.name
                );
                assert!(reached.len() > table.len() / 2, "{}", design.name);
            }
        }
    }

    /// The names are the report's keys: no two paths of a design share one.
    #[test]
    fn each_path_of_a_design_has_its_own_name() {
        for design in &DESIGNS {
            let names: BTreeSet<String> = paths(design).iter().map(Path::name).collect();
            assert_eq!(names.len(), paths(design).len(), "{}", design.name);
        }
    }
}
