//! Mutants of the stovepipe designs: one step changed in one way, to show
//! that the properties notice (`slotcheck mutate`). A mutation is data on
//! the model ([`Stovepipe::mutation`]): a step, named by its handler and
//! program counter (a [`Site`]), and an [`Operator`]. The `Turn` primitives
//! (the reads, the CASes, the submit, the ack, the hold) ask at one hook,
//! [`decide`], each decision an operator may change, and the write a swap
//! makes ([`write_at`]); only this file matches on operators, and the
//! handlers and designs are the same code for every mutant.
//!
//! Which mutants a design has is found, not listed: the model is explored
//! once and each step's records show which primitive it performed
//! ([`sites`]), and each operator applies to the steps whose primitive it
//! changes ([`mutations`]).

use super::coverage::each_step_within;
use super::log::Taken;
// The sites as the records show them, defined with the records (`log.rs`)
// and shown here too: a mutant is named by its site and changes what a step
// does there.
pub use super::log::{Primitive, Site, SiteUse, Write};
use super::{Build, Handler, Pc, Req, RequestState, Stovepipe};
use std::collections::BTreeSet;

/// One change to one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// The CAS (or transaction) wins whatever the row's version.
    CasIgnoresVersion,
    /// The write is not made, but the step goes on as if it were.
    WriteSkipped,
    /// The release gives back two slots (a clamped count − 2).
    ReleaseTwice,
    /// The message is acked in a step of its own before the write, not
    /// after it: a crash between them loses the write.
    AckBeforeWrite,
    /// This step makes the next step's write, and the next this one's.
    SwappedWithNext { next: Pc, this: Write, other: Write },
    /// A submit starts the build again even if it was submitted.
    SubmitNotIdempotent,
    /// The build is never submitted.
    SubmitSkipped,
    /// The ack removes nothing: the message stays in flight.
    AckSkipped,
    /// A hold counts an attempt, as a crash does.
    HoldCountsAttempt,
    /// The gate closes at more than K taken, not at K (`>` for `>=`).
    GateOffByOne,
    /// The latest-head test is skipped: every request is the latest head.
    LatestHeadSkipped,
    /// The latest-head test is inverted.
    LatestHeadInverted,
    /// The DLQ releases R's slot whatever R's state.
    DlqReleasesAlways,
    /// The DLQ never releases.
    DlqReleasesNever,
    /// The reaping gate reaps only superseded owners: one dead-lettered
    /// (or succeeded) stays in the set. It breaks only progress: a request
    /// held behind such an owner is held again at every redelivery.
    ReapsSupersededOnly,
}

impl Operator {
    pub fn name(self) -> &'static str {
        match self {
            Operator::CasIgnoresVersion => "cas-ignores-version",
            Operator::WriteSkipped => "write-skipped",
            Operator::ReleaseTwice => "release-twice",
            Operator::AckBeforeWrite => "ack-before-write",
            Operator::SwappedWithNext { .. } => "swapped-with-next",
            Operator::SubmitNotIdempotent => "submit-not-idempotent",
            Operator::SubmitSkipped => "submit-skipped",
            Operator::AckSkipped => "ack-skipped",
            Operator::HoldCountsAttempt => "hold-counts-attempt",
            Operator::GateOffByOne => "gate-off-by-one",
            Operator::LatestHeadSkipped => "latest-head-skipped",
            Operator::LatestHeadInverted => "latest-head-inverted",
            Operator::DlqReleasesAlways => "dlq-releases-always",
            Operator::DlqReleasesNever => "dlq-releases-never",
            Operator::ReapsSupersededOnly => "reaps-superseded-only",
        }
    }
}

/// A mutant: one operator at one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mutation {
    pub site: Site,
    pub operator: Operator,
}

impl Mutation {
    /// `owner-keyed/claim/cas-ignores-version`: stable, and the same in every
    /// run.
    pub fn name(&self, design: &str) -> String {
        format!("{design}/{}/{}", self.site.name(), self.operator.name())
    }

    /// What the mutant changes, in one sentence.
    pub fn describe(&self) -> String {
        let at = format!("at `{}` ({})", self.site.name(), self.site.handler.name());
        match self.operator {
            Operator::CasIgnoresVersion => {
                format!("{at} the CAS wins even when its row changed since the read")
            }
            Operator::WriteSkipped => {
                format!("{at} the write is not made, and the step goes on as if it were")
            }
            Operator::ReleaseTwice => format!("{at} the release gives back two slots"),
            Operator::AckBeforeWrite => {
                format!("{at} the message is acked in a step before the write instead of after it")
            }
            Operator::SwappedWithNext { next, .. } => format!(
                "{at} the write and the next step's (`{}`) are made in the other order",
                Site::of(self.site.handler, next).name()
            ),
            Operator::SubmitNotIdempotent => {
                format!("{at} a submit starts the build again, even if it was submitted")
            }
            Operator::SubmitSkipped => format!("{at} the build is never submitted"),
            Operator::AckSkipped => {
                format!("{at} the ack removes nothing: the message stays in flight")
            }
            Operator::HoldCountsAttempt => {
                format!("{at} a hold counts an attempt, as a crash does")
            }
            Operator::GateOffByOne => {
                format!("{at} the gate closes at more than K slots taken (`>` for `>=`)")
            }
            Operator::LatestHeadSkipped => {
                format!("{at} the latest-head test is skipped: every request is the head")
            }
            Operator::LatestHeadInverted => format!("{at} the latest-head test is inverted"),
            Operator::DlqReleasesAlways => {
                format!("{at} the DLQ releases R's slot whatever R's state")
            }
            Operator::DlqReleasesNever => format!("{at} the DLQ never releases a slot"),
            Operator::ReapsSupersededOnly => format!(
                "{at} the gate reaps only superseded owners, not dead-lettered or succeeded ones"
            ),
        }
    }
}

/// A decision a step makes that a mutant may change: what a `Turn`
/// primitive asks [`decide`], with what it decides from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// The gate is closed: `taken` slots of K.
    GateClosed { taken: u8, k: u8 },
    /// R is the latest head of the `arrived` requests.
    LatestHead { request: Req, arrived: u8 },
    /// The DLQ releases R's slot: the design's rule for R's state, and
    /// whether the read saw R hold a slot.
    DlqReleases { rule: bool, has_slot: bool },
    /// A CAS or transaction wins: its rows are `fresh`, as read.
    CasWins { fresh: bool },
    /// A winning write is made.
    WriteMade,
    /// A release gives back a second slot.
    ReleaseTwice,
    /// The message is acked in a step of its own before the write.
    AckBeforeWrite,
    /// The submit is made at all.
    Submitted,
    /// The submit starts the build, which is now `build`.
    SubmitStarts { build: Build },
    /// The ack removes the message.
    AckRemoves,
    /// The hold counts an attempt (a `dead` message counts none).
    HoldCountsAttempt { dead: bool },
    /// The reap removes an owner whose request is in this (terminal) state.
    Reaps { state: RequestState },
}

/// The one hook where operators act: `decision` as the design makes it, or
/// as `operator` (the mutation's, at its own step) changes it.
#[inline]
pub(crate) fn decide(operator: Option<Operator>, decision: Decision) -> bool {
    use Decision as D;
    use Operator as O;
    match (decision, operator) {
        (D::GateClosed { taken, k }, Some(O::GateOffByOne)) => taken > k,
        (D::GateClosed { taken, k }, _) => taken >= k,
        (D::LatestHead { .. }, Some(O::LatestHeadSkipped)) => true,
        (D::LatestHead { request, arrived }, Some(O::LatestHeadInverted)) => request + 1 != arrived,
        (D::LatestHead { request, arrived }, _) => request + 1 == arrived,
        (D::DlqReleases { has_slot, .. }, Some(O::DlqReleasesAlways)) => has_slot,
        (D::DlqReleases { .. }, Some(O::DlqReleasesNever)) => false,
        (D::DlqReleases { rule, has_slot }, _) => rule && has_slot,
        (D::CasWins { .. }, Some(O::CasIgnoresVersion)) => true,
        (D::CasWins { fresh }, _) => fresh,
        (D::WriteMade, operator) => operator != Some(O::WriteSkipped),
        (D::ReleaseTwice, operator) => operator == Some(O::ReleaseTwice),
        (D::AckBeforeWrite, operator) => operator == Some(O::AckBeforeWrite),
        (D::Submitted, operator) => operator != Some(O::SubmitSkipped),
        (D::SubmitStarts { build }, Some(O::SubmitNotIdempotent)) => build != Build::Running,
        (D::SubmitStarts { build }, _) => build == Build::NotSubmitted,
        (D::AckRemoves, operator) => operator != Some(O::AckSkipped),
        (D::HoldCountsAttempt { dead }, operator) => {
            !dead && operator == Some(O::HoldCountsAttempt)
        }
        (D::Reaps { state }, Some(O::ReapsSupersededOnly)) => state == RequestState::Superseded,
        (D::Reaps { state }, _) => state.is_terminal(),
    }
}

/// The write the step at `site` makes when it asks for `asked`: a swapping
/// mutant makes, at its step, the next one's write, and at the next step
/// its own.
pub(crate) fn write_at(mutation: Option<Mutation>, site: Site, asked: Write) -> Write {
    let Some(Mutation {
        site: at,
        operator: Operator::SwappedWithNext { next, this, other },
    }) = mutation
    else {
        return asked;
    };
    if at == site {
        other
    } else if Site::of(at.handler, next) == site {
        this
    } else {
        asked
    }
}

/// Every step the model takes on its bounds, and what each does: the model
/// explored whole, each step's primitives read off its records.
pub fn sites(model: &Stovepipe) -> BTreeSet<SiteUse> {
    sites_within(model, &mut |_| true).expect("an unbounded listing finishes")
}

/// [`sites`] under a budget: `go_on` is asked, with the states visited so
/// far, every few hundred states; `None` when it said stop (the listing
/// explores every state, so it needs the run's budgets as a search does).
pub fn sites_within(
    model: &Stovepipe,
    go_on: &mut dyn FnMut(usize) -> bool,
) -> Option<BTreeSet<SiteUse>> {
    let mut uses = BTreeSet::new();
    each_step_within(model, go_on, &mut |records| {
        if let Some(taken) = Taken::of(records) {
            uses.extend(taken.sites());
        }
    })?;
    Some(uses)
}

/// Every mutant of the model's design: each operator at each step whose
/// primitive it changes, as found on the model's bounds.
pub fn mutations(model: &Stovepipe) -> Vec<Mutation> {
    mutations_within(model, &mut |_| true).expect("an unbounded listing finishes")
}

/// [`mutations`] under a budget (see [`sites_within`]); `None`: cut.
pub fn mutations_within(
    model: &Stovepipe,
    go_on: &mut dyn FnMut(usize) -> bool,
) -> Option<Vec<Mutation>> {
    let uses = sites_within(model, go_on)?;
    let mut found = BTreeSet::new();
    let mut add = |site: Site, operator: Operator| {
        found.insert(Mutation { site, operator });
    };
    for u in &uses {
        if u.site.pc == Pc::Reap {
            add(u.site, Operator::ReapsSupersededOnly);
        }
        match u.primitive {
            Primitive::Write(write) => {
                add(u.site, Operator::CasIgnoresVersion);
                add(u.site, Operator::WriteSkipped);
                add(u.site, Operator::AckBeforeWrite);
                if write == Write::ReleaseSlot {
                    add(u.site, Operator::ReleaseTwice);
                }
                // A write whose winning step is followed by another write.
                if let (Some(true), Some(next)) = (u.won, u.next) {
                    let then = uses.iter().find_map(|v| match v.primitive {
                        Primitive::Write(other) if v.site == Site::of(u.site.handler, next) => {
                            Some(other)
                        }
                        _ => None,
                    });
                    if let Some(other) = then {
                        add(
                            u.site,
                            Operator::SwappedWithNext {
                                next,
                                this: write,
                                other,
                            },
                        );
                    }
                }
            }
            Primitive::Submit => {
                add(u.site, Operator::SubmitNotIdempotent);
                add(u.site, Operator::SubmitSkipped);
            }
            Primitive::Ack => add(u.site, Operator::AckSkipped),
            Primitive::Hold => add(u.site, Operator::HoldCountsAttempt),
            Primitive::Read => match u.site.handler {
                Handler::Process => {
                    add(u.site, Operator::GateOffByOne);
                    add(u.site, Operator::LatestHeadSkipped);
                    add(u.site, Operator::LatestHeadInverted);
                }
                Handler::Dlq => {
                    add(u.site, Operator::DlqReleasesAlways);
                    add(u.site, Operator::DlqReleasesNever);
                }
                Handler::Signal => {}
            },
            Primitive::Other => {}
        }
    }
    Some(found.into_iter().collect())
}
