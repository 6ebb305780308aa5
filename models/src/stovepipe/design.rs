//! A design is a value: one choice per part of the contract's admit table
//! and release rules, each an enum whose variants are the choices. The
//! source's three designs and the repairs of owner-keyed are named
//! constants, each owner-keyed's repair one or two fields changed; the
//! handlers ask the design at the step where a choice acts (`handlers.rs`),
//! one place per part. `compose.rs` builds a design from named parts
//! (`owner-keyed+atomic-admit+dlq-cancels`).

use super::{RequestState, SlotView, Slots, State};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Design {
    /// The name on the command line and in reports: `claim-first`.
    pub name: &'static str,
    /// One sentence for reports.
    pub summary: &'static str,
    /// What the design changes, as a diff of the contract's admit table
    /// (steps a to d, and the release rules): which step, and why. For
    /// `--help`, the README and the HTML report.
    pub change: &'static str,
    /// What it costs to build on the source's MySQL rows: schema, writes and
    /// transactions per admit, calls to other systems.
    pub cost: &'static str,
    /// The queue row's slot field.
    pub slots: SlotField,
    /// Steps b and c: how the admit writes the claim and `processing`.
    pub admit: Admit,
    /// What `process` does first with a head that is no longer the latest.
    pub stale_head: StaleHead,
    /// Step a when the gate is closed.
    pub gate: Gate,
    /// Step c's conflict path: what a lost processing write does.
    pub resume: Resume,
    /// What the DLQ reconciler does before it releases.
    pub dlq: Dlq,
}

/// The slot field the queue row keeps, and how it is claimed, released
/// and judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlotField {
    /// `in_flight_count`, anonymous, clamped at zero on release. It cannot
    /// tell whose slot it holds: a release by any request writes, a stale
    /// head is only superseded, a lost processing write unwinds, and the DLQ
    /// releases only a `processing` request. Cost: what runs today.
    Count,
    /// `in_flight_request_ids` (PR #966): the requests holding a slot. A
    /// claim is idempotent per request, a release removes by ID (nothing
    /// written when R is absent: decided at the read that saw the set), and
    /// the DLQ releases any nonterminal request. Cost: a schema change, a
    /// new column.
    Owners,
}

/// Steps b and c of the admit table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Admit {
    /// The contract's order: b, claim (CAS the slot field); a conflict
    /// restarts. c, CAS R → `processing`; a conflict takes the resume
    /// path ([`Resume`]). Cost: two single-row CASes per admit.
    ClaimFirst,
    /// fail-open, b and c swapped: b, CAS R → `processing` first (a conflict
    /// acks, the count untouched); c, count + 1, a conflict re-reads the
    /// queue row and retries without re-gating, since the admit is already
    /// durable. A crash between the two writes leaves the count low instead
    /// of high. Cost: the same two CASes in the other order.
    ProcessingFirst,
    /// A repair of owner-keyed (`fenced-claim`), at b: one transaction locks
    /// the queue row and R's row and claims only if both are at the versions
    /// read; a conflict restarts. R's row version fences the claim: a
    /// stalled delivery whose request was superseded or dead-lettered
    /// meanwhile can no longer claim a slot for it. c stays a CAS. Cost:
    /// every claim a two-row transaction (`SELECT ... FOR UPDATE` on Q and
    /// R, `UPDATE` Q, `COMMIT`), the queue row locked for it.
    FencedClaim,
    /// A repair of owner-keyed (`atomic-admit`): b and c are one
    /// transaction on the queue row and R's row, committed together or not
    /// at all (a conflict restarts); a: R already holding a slot claims
    /// again rather than resuming at c. No slot is then held by a request
    /// that is not `processing`, so no stale claim or processing write can
    /// land (`owner-keyed-stall`, `owner-keyed-stall-crash`), and no resume
    /// or unwind is left. Cost: every admit one two-row transaction (the
    /// queue row locked for the length of the admit), one round trip fewer
    /// than two CASes.
    OneTransaction,
}

/// How `process` gives back the slot of a request that is no longer the
/// latest head, when its read saw R hold one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StaleHead {
    /// Supersede R; it holds no slot to give back (a count cannot tell).
    Supersede,
    /// PR #966: release R's slot (CAS Q set − {R}; a conflict restarts),
    /// then supersede R.
    ReleaseThenSupersede,
    /// A repair (`supersede-first`): CAS R → `superseded` first (a conflict
    /// restarts), then release its slot (a conflict re-reads Q and
    /// retries). Releasing first left R's row unchanged, so a stalled first
    /// delivery's processing write could land after the slot went back
    /// (`owner-keyed-stall`); superseding first bumps R's version, so that
    /// write loses its CAS. Cost: none, the same two CASes in the other
    /// order.
    SupersedeThenRelease,
}

/// Step a when the slots taken are K or more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// Hold: park the message until a durable write.
    Hold,
    /// A repair (`reaping-gate`): first remove from the set every owner
    /// whose request row is terminal, in one statement guarded by the queue
    /// row's version (`UPDATE queue SET ids = ids − {terminal owners} WHERE
    /// version = v`); something removed → re-read and re-gate; nothing
    /// terminal → hold; Q changed since the read → restart. A slot leaked to
    /// a terminal request (a stalled claim for a request superseded
    /// meanwhile, `owner-keyed-stall-crash`) is given back as soon as a head
    /// is held behind it. Cost: nothing on the open-gate path; on a closed
    /// gate one statement reading the owners' rows (at most K), and a queue
    /// write when it finds a leak.
    ReapThenHold,
}

/// Step c's conflict path: a lost processing write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resume {
    /// claim-first: unwind the claim (a count cannot tell whether R's slot
    /// is this claim's), retried on conflict, then ack.
    Unwind,
    /// PR #966: re-read R: terminal → release R's slot, ack; `processing` →
    /// a duplicate admission keeps the slot, and acks.
    Ack,
    /// A repair (`resume-submits`): as [`Resume::Ack`], but R found
    /// `processing` submits its build (idempotent) before the ack. Acking
    /// trusted the delivery that won the write to submit; if it had stalled
    /// and then died before its submit, R stayed `processing` with its slot
    /// and no build (`owner-keyed-resume-no-submit`). Cost: none; a submit
    /// is idempotent by request ID.
    Submit,
}

/// What `dlq(R)` does for a nonterminal R before it releases R's slot and
/// writes `dead_lettered`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dlq {
    /// The contract's reconciler: release, then dead-letter; a running
    /// build is not cancelled.
    Release,
    /// A repair (`dlq-cancels`): first cancel R's build by request ID and
    /// wait until it has stopped, for any nonterminal R (an `accepted` one
    /// may be about to be written `processing` by a stalled claimer); the
    /// cancel records R as stopped, so a later submit of R starts nothing.
    /// The DLQ gave back the slot of a build that still ran
    /// (`dlq-running-build`). Cost: one synchronous build-system call per
    /// dead-lettered request, on the DLQ's path only; the build system must
    /// keep a cancelled ID as submitted.
    CancelFirst,
}

/// owner-keyed, PR #966; the repairs change some of its parts.
pub const OWNER_KEYED: Design = Design {
    name: "owner-keyed",
    summary: "PR #966: in_flight_request_ids, claimed and released by request ID",
    change: "the slot field becomes the set of owners, in_flight_request_ids. a: R already in the set goes to c (a redelivery resumes its own claim), else size >= K holds; b, CAS set + {R}; c, CAS R -> processing, a conflict re-reads R: terminal releases R, processing keeps the slot. A head that is no longer the latest releases its slot, then is superseded; a release removes by ID and writes nothing when R is absent; the DLQ releases any nonterminal request.",
    cost: "schema change: a new column in_flight_request_ids; two single-row CASes per admit",
    slots: SlotField::Owners,
    admit: Admit::ClaimFirst,
    stale_head: StaleHead::ReleaseThenSupersede,
    gate: Gate::Hold,
    resume: Resume::Ack,
    dlq: Dlq::Release,
};

/// claim-first, the original: the contract's admit table as it stands.
pub const CLAIM_FIRST: Design = Design {
    name: "claim-first",
    summary: "the original: CAS in_flight_count + 1, then CAS the request to processing",
    change: "the contract's admit table as it stands: a, count >= K holds; b, claim (CAS in_flight_count + 1), a conflict restarts; c, CAS R -> processing, a conflict unwinds the claim; d, submit the build. The DLQ releases only a processing request.",
    cost: "what runs today: two single-row CASes per admit",
    slots: SlotField::Count,
    stale_head: StaleHead::Supersede,
    resume: Resume::Unwind,
    ..OWNER_KEYED
};

/// fail-open, the alternative PR: `processing` first, then count + 1.
pub const FAIL_OPEN: Design = Design {
    name: "fail-open",
    summary: "the reordered writes: CAS the request to processing, then in_flight_count + 1",
    change: "steps b and c swap: b, CAS R -> processing first (a conflict acks, the count untouched); c, count + 1, a conflict re-reads the queue row and retries without re-gating, since the admit is already durable. So a crash between the two writes leaves the count low instead of high.",
    cost: "no schema change: the same two CASes in the other order",
    admit: Admit::ProcessingFirst,
    ..CLAIM_FIRST
};

pub const OWNER_KEYED_SUPERSEDE_FIRST: Design = Design {
    name: "owner-keyed-supersede-first",
    summary: "PR #966, but a stale head is superseded before its slot is released (no extra cost)",
    change: "owner-keyed, but a head that is no longer the latest is superseded first and its slot released after (owner-keyed releases first). Why: superseding bumps R's version, so a stalled first delivery's processing write loses its CAS instead of landing after the slot went back (owner-keyed-stall).",
    cost: "as owner-keyed: the same two CASes in the other order",
    stale_head: StaleHead::SupersedeThenRelease,
    ..OWNER_KEYED
};

pub const OWNER_KEYED_FENCED_CLAIM: Design = Design {
    name: "owner-keyed-fenced-claim",
    summary: "PR #966, but the claim is a transaction that also checks R's row (R's version fences it)",
    change: "owner-keyed, but step b's claim is one transaction on the queue row and R's row that commits only if R is still as read: R's version fences the claim. Why: a stalled delivery can then no longer claim a slot for a request superseded or dead-lettered meanwhile.",
    cost: "as owner-keyed, and every claim a two-row transaction (the queue row locked for it)",
    admit: Admit::FencedClaim,
    ..OWNER_KEYED
};

pub const OWNER_KEYED_REAPING_GATE: Design = Design {
    name: "owner-keyed-reaping-gate",
    summary: "PR #966, but a closed gate first releases owners whose request is terminal",
    change: "owner-keyed, but a closed gate (step a) first removes from the set every owner whose request is terminal, in one statement guarded by the queue row's version, then re-reads and re-gates. Why: a slot leaked to a terminal request is given back as soon as a head is held behind it (owner-keyed-stall-crash).",
    cost: "as owner-keyed, and on a closed gate one statement that reads the owners' rows",
    gate: Gate::ReapThenHold,
    ..OWNER_KEYED
};

pub const OWNER_KEYED_RESUME_SUBMITS: Design = Design {
    name: "owner-keyed-resume-submits",
    summary: "PR #966, but a lost processing write that finds R processing submits the build before acking",
    change: "owner-keyed, but step c's conflict path, re-reading R as processing, submits R's build (idempotent) before it acks. Why: the delivery whose processing write won may have stalled and died before its submit, leaving R processing with no build (owner-keyed-resume-no-submit).",
    cost: "as owner-keyed; a submit is idempotent, so nothing more",
    resume: Resume::Submit,
    ..OWNER_KEYED
};

pub const OWNER_KEYED_ATOMIC_ADMIT: Design = Design {
    name: "owner-keyed-atomic-admit",
    summary: "PR #966, but the claim and the processing write are one transaction on both rows",
    change: "owner-keyed, but steps b and c are one transaction on the queue row and R's row: claim and R -> processing commit together, or neither (a conflict restarts). No resume and no unwind are left. Why: no slot is ever held by a request that is not processing, so no stale claim or stale processing write can land.",
    cost: "as owner-keyed, and every admit one two-row transaction (the queue row locked for the length of the admit) instead of two CASes",
    admit: Admit::OneTransaction,
    ..OWNER_KEYED
};

pub const OWNER_KEYED_DLQ_CANCELS: Design = Design {
    name: "owner-keyed-dlq-cancels",
    summary: "PR #966, but the DLQ cancels the request's build (by ID) before releasing its slot",
    change: "owner-keyed, but the DLQ reconciler first cancels R's build by request ID and waits for it to stop, then releases R's slot and dead-letters R. Why: the DLQ gave back the slot of a build that still ran (dlq-running-build).",
    cost: "as owner-keyed, and one build-system cancel per dead-lettered request; the build system must keep a cancelled ID as submitted",
    dlq: Dlq::CancelFirst,
    ..OWNER_KEYED
};

/// Two of owner-keyed's parts changed: the recommendation for a worker
/// whose read is one snapshot (it breaks under `split-read`).
pub const OWNER_KEYED_ATOMIC_ADMIT_DLQ_CANCELS: Design = Design {
    name: "owner-keyed-atomic-admit-dlq-cancels",
    summary: "PR #966 with the admit as one transaction and a DLQ that cancels the build first",
    change: "owner-keyed-atomic-admit and owner-keyed-dlq-cancels together: steps b and c are one transaction on the queue row and R's row, and the DLQ cancels R's build before it releases R's slot.",
    cost: "as owner-keyed, and every admit one two-row transaction (the queue row locked for the admit); one build-system cancel per dead-lettered request",
    admit: Admit::OneTransaction,
    dlq: Dlq::CancelFirst,
    ..OWNER_KEYED
};

/// The recommendation under either reading: the README's former
/// recommendation with the stale head superseded first. A worker that reads
/// R's row, the queue row and the head in separate statements (`split-read`)
/// can see R `accepted` and then R in the set (a stalled delivery's admit
/// committed between its reads); PR #966's stale head then releases a slot
/// guarded only by the queue's version, while R's build runs. Superseding
/// first is guarded by R's version, which the admit bumped, so it loses and
/// the worker reads again.
pub const OWNER_KEYED_ATOMIC_ADMIT_SUPERSEDE_FIRST_DLQ_CANCELS: Design = Design {
    name: "owner-keyed-atomic-admit-supersede-first-dlq-cancels",
    summary: "owner-keyed-atomic-admit-dlq-cancels, but a stale head is superseded before its slot is released (no extra cost)",
    change: "owner-keyed-atomic-admit-dlq-cancels and owner-keyed-supersede-first together: the admit is one transaction on the queue row and R's row, the DLQ cancels R's build before it releases R's slot, and a head that is no longer the latest is superseded (CAS on R's row) before its slot is released. Why: with reads in separate statements a worker can read R accepted, then the queue with R's slot (a stalled admit committed between the two reads); releasing first is guarded only by the queue's version and wins while R's build runs, superseding first is guarded by R's version and loses.",
    cost: "as owner-keyed-atomic-admit-dlq-cancels: the stale head's two CASes in the other order cost nothing",
    admit: Admit::OneTransaction,
    stale_head: StaleHead::SupersedeThenRelease,
    dlq: Dlq::CancelFirst,
    ..OWNER_KEYED
};

/// The four single-row repairs together, and no transaction.
pub const OWNER_KEYED_CAS_ONLY_REPAIRS: Design = Design {
    name: "owner-keyed-cas-only-repairs",
    summary: "PR #966 with supersede-first, the reaping gate, resume-submits and the cancelling DLQ; no transaction",
    change: "the four single-row repairs of owner-keyed together, no transaction: supersede first, the reaping gate, resume submits, and the cancelling DLQ.",
    cost: "as owner-keyed, and on a closed gate one statement reading the owners' rows; one build-system cancel per dead-lettered request",
    stale_head: StaleHead::SupersedeThenRelease,
    gate: Gate::ReapThenHold,
    resume: Resume::Submit,
    dlq: Dlq::CancelFirst,
    ..OWNER_KEYED
};

/// Every named design, in the order reports show them: the source's three,
/// then the repairs of owner-keyed, one change each, then the combinations.
pub static DESIGNS: [Design; 12] = [
    CLAIM_FIRST,
    FAIL_OPEN,
    OWNER_KEYED,
    OWNER_KEYED_SUPERSEDE_FIRST,
    OWNER_KEYED_FENCED_CLAIM,
    OWNER_KEYED_REAPING_GATE,
    OWNER_KEYED_RESUME_SUBMITS,
    OWNER_KEYED_ATOMIC_ADMIT,
    OWNER_KEYED_DLQ_CANCELS,
    OWNER_KEYED_ATOMIC_ADMIT_DLQ_CANCELS,
    OWNER_KEYED_ATOMIC_ADMIT_SUPERSEDE_FIRST_DLQ_CANCELS,
    OWNER_KEYED_CAS_ONLY_REPAIRS,
];

/// The named design with this name.
pub fn design_named(name: &str) -> Option<Design> {
    DESIGNS.iter().copied().find(|d| d.name == name)
}

impl Design {
    /// Whether two designs behave alike: the same choice for every part,
    /// whatever their names.
    pub fn same_parts(&self, other: &Design) -> bool {
        Design {
            name: "",
            summary: "",
            change: "",
            cost: "",
            ..*self
        } == Design {
            name: "",
            summary: "",
            change: "",
            cost: "",
            ..*other
        }
    }

    /// Why the model cannot run this combination of parts, if it cannot: a
    /// choice that needs what another part does not give.
    pub fn conflict(&self) -> Option<String> {
        let owners_only = |what: &str| {
            Some(format!(
                "{what} needs the owner set (in_flight_request_ids): an anonymous in_flight_count cannot tell whose slot it holds"
            ))
        };
        if self.slots == SlotField::Count {
            if self.stale_head != StaleHead::Supersede {
                return owners_only("a stale head that gives its slot back");
            }
            if self.gate == Gate::ReapThenHold {
                return owners_only("the reaping gate");
            }
            if self.resume != Resume::Unwind {
                return owners_only("a lost processing write that re-reads R and resumes");
            }
        } else {
            if self.stale_head == StaleHead::Supersede {
                return Some("an owner set must give a stale head's slot back (release then supersede, or supersede then release)".into());
            }
            if self.resume == Resume::Unwind {
                return Some("an owner set re-reads R after a lost processing write (the resume path), it does not unwind blindly".into());
            }
            if self.admit == Admit::ProcessingFirst {
                return Some("fail-open's order (processing, then count + 1) is written for in_flight_count, not an owner set".into());
            }
        }
        if self.admit == Admit::OneTransaction && self.resume == Resume::Submit {
            return Some("resume-submits changes what a lost processing write does, and atomic-admit leaves none (its claim and processing write commit together)".into());
        }
        None
    }
}

impl SlotField {
    /// The field as the queue row holds it now.
    pub fn read(self, s: &State) -> Slots {
        match self {
            SlotField::Count => Slots::Count(s.count()),
            SlotField::Owners => Slots::Owners(
                s.requests()
                    .filter(|&(r, _)| s.owns_slot(r))
                    .fold(0, |set, (r, _)| set | 1 << r),
            ),
        }
    }

    /// Writes the field.
    pub fn write(self, s: &mut State, slots: Slots) {
        match slots {
            Slots::Count(n) => s.set_count(n),
            Slots::Owners(set) => {
                for r in 0..s.arrived() {
                    s.set_owns_slot(r, set & (1 << r) != 0);
                }
            }
        }
    }

    /// What a read of `slots` tells R's worker (see [`SlotView`]). An
    /// anonymous count cannot tell whose slot it holds, so to it every
    /// request may hold one (a release by any request writes).
    pub fn view(self, slots: Slots, r: u8, max_concurrent: u8) -> SlotView {
        let has_slot = match slots {
            Slots::Count(_) => true,
            Slots::Owners(set) => set & (1 << r) != 0,
        };
        SlotView {
            has_slot,
            full: slots.taken() >= max_concurrent,
        }
    }

    /// The field with R's slot claimed.
    pub fn claimed(self, slots: Slots, r: u8) -> Slots {
        match slots {
            Slots::Count(n) => Slots::Count(n.checked_add(1).expect("in_flight_count overflows")),
            Slots::Owners(set) => Slots::Owners(set | 1 << r),
        }
    }

    /// The field with R's slot released, or `None` when it holds none of R's
    /// (never asked then: a release is decided at the read that saw it). A
    /// count is clamped at zero and written even then (the CAS still bumps
    /// the version, as the source's update does).
    pub fn released(self, slots: Slots, r: u8) -> Option<Slots> {
        match slots {
            Slots::Count(n) => Some(Slots::Count(n.saturating_sub(1))),
            Slots::Owners(set) => (set & (1 << r) != 0).then(|| Slots::Owners(set & !(1 << r))),
        }
    }

    /// Whether the DLQ reconciler releases a nonterminal request in `state`:
    /// a count only a `processing` one, an owner set any.
    pub fn dlq_releases(self, state: RequestState) -> bool {
        match self {
            SlotField::Count => state == RequestState::Processing,
            SlotField::Owners => true,
        }
    }

    /// `count-not-low` in a quiescent state: no `processing` request lacks a
    /// slot.
    pub fn count_not_low(self, s: &State) -> bool {
        match self {
            SlotField::Count => s.count() as usize >= s.processing().count(),
            SlotField::Owners => s.processing().all(|r| s.owns_slot(r)),
        }
    }

    /// `count-not-high` in a quiescent state: no slot is held without a
    /// `processing` owner.
    pub fn count_not_high(self, s: &State) -> bool {
        match self {
            SlotField::Count => s.count() as usize <= s.processing().count(),
            SlotField::Owners => s
                .requests()
                .all(|(r, state)| !s.owns_slot(r) || state == RequestState::Processing),
        }
    }
}

impl Gate {
    /// Whether a hold now rests on rows the gate read beyond R's row, the
    /// queue row and the head, that have changed since (so its message is
    /// visible at once rather than parked). Only the reap reads more: the
    /// owners' rows, none terminal then; one that is terminal now (terminal
    /// states are final) changed since.
    pub(super) fn hold_outdated(self, s: &State) -> bool {
        self == Gate::ReapThenHold
            && s.requests()
                .any(|(o, state)| s.owns_slot(o) && state.is_terminal())
    }
}
