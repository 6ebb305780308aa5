//! Mutants of the link designs: one step of a builder changed in one way
//! (`slotcheck mutate --model link`). A mutation is data on the model
//! ([`Link::mutation`]); each step of `steps.rs` asks it, in one place, how
//! it does the one thing a mutant may change. `take` names the contract's
//! steps 2 and 3 (read and decide, start or drop), whether the model takes them
//! as one step (`atomic-start`, designs without the check) or as a read and
//! the step that acts on it.

use super::{Design, Link};

/// One change to one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mutation {
    /// take: the freshness test is inverted (a stale key drops the ask).
    FreshInverted,
    /// take: a key one tick older still counts as fresh (`<=` for `<`).
    FreshOneTickLate,
    /// take: a key one tick younger is already stale.
    FreshOneTickEarly,
    /// take: freshness is judged on the server's clock, not the builder's.
    FreshOnServerClock,
    /// take: the test that the key names another builder is skipped.
    DropsItsOwnAsk,
    /// take: a duplicate is dropped without an ack.
    DropWithoutAck,
    /// take: a run starts without putting the running key.
    KeyNotPutAtStart,
    /// take: the ask is acked when its run starts, before the result.
    AckBeforeResult,
    /// heartbeat: neither the key is put nor in-progress sent.
    HeartbeatSkipped,
    /// heartbeat: the key is put, no in-progress is sent.
    HeartbeatWithoutInProgress,
    /// heartbeat: in-progress is sent, the key is not put.
    HeartbeatWithoutKey,
    /// finish: the result is announced and the ask never acked.
    FinishWithoutAck,
    /// finish: the running key is not deleted.
    KeyNotDeleted,
    /// deliver: a redelivery is not counted, so `max_deliver` never stops it.
    DeliveriesNotCounted,
    /// The repairs' switches, each undone at its one site:
    /// take: freshness on the builder's own clock despite the probe.
    ServerClockOnOwnClock,
    /// take: the start's put is blind again (no revision check).
    RevisionUnchecked,
    /// land: an answer landing on a busy builder stays in its buffer.
    KeptWhileBusy,
    /// finish: the synchronous ack is not retried, so it can be lost.
    SyncAckNotRetried,
    /// take: a deferred duplicate is acked after all.
    DuplicateAcked,
    /// finish: the running key is deleted, not left done.
    DoneKeyDeleted,
}

impl Mutation {
    /// Every mutation, in a fixed order.
    pub const ALL: [Mutation; 20] = [
        Mutation::FreshInverted,
        Mutation::FreshOneTickLate,
        Mutation::FreshOneTickEarly,
        Mutation::FreshOnServerClock,
        Mutation::DropsItsOwnAsk,
        Mutation::DropWithoutAck,
        Mutation::KeyNotPutAtStart,
        Mutation::AckBeforeResult,
        Mutation::HeartbeatSkipped,
        Mutation::HeartbeatWithoutInProgress,
        Mutation::HeartbeatWithoutKey,
        Mutation::FinishWithoutAck,
        Mutation::KeyNotDeleted,
        Mutation::DeliveriesNotCounted,
        Mutation::ServerClockOnOwnClock,
        Mutation::RevisionUnchecked,
        Mutation::KeptWhileBusy,
        Mutation::SyncAckNotRetried,
        Mutation::DuplicateAcked,
        Mutation::DoneKeyDeleted,
    ];

    /// The step it changes and its own name: `take/fresh-inverted`.
    pub fn site_and_name(self) -> (&'static str, &'static str) {
        match self {
            Mutation::FreshInverted => ("take", "fresh-inverted"),
            Mutation::FreshOneTickLate => ("take", "fresh-one-tick-late"),
            Mutation::FreshOneTickEarly => ("take", "fresh-one-tick-early"),
            Mutation::FreshOnServerClock => ("take", "fresh-on-server-clock"),
            Mutation::DropsItsOwnAsk => ("take", "drops-its-own-ask"),
            Mutation::DropWithoutAck => ("take", "drop-without-ack"),
            Mutation::KeyNotPutAtStart => ("take", "key-not-put"),
            Mutation::AckBeforeResult => ("take", "ack-before-result"),
            Mutation::HeartbeatSkipped => ("heartbeat", "skipped"),
            Mutation::HeartbeatWithoutInProgress => ("heartbeat", "no-in-progress"),
            Mutation::HeartbeatWithoutKey => ("heartbeat", "no-key"),
            Mutation::FinishWithoutAck => ("finish", "no-ack"),
            Mutation::KeyNotDeleted => ("finish", "key-not-deleted"),
            Mutation::DeliveriesNotCounted => ("deliver", "not-counted"),
            Mutation::ServerClockOnOwnClock => ("take", "server-clock-on-own-clock"),
            Mutation::RevisionUnchecked => ("take", "revision-unchecked"),
            Mutation::KeptWhileBusy => ("land", "kept-while-busy"),
            Mutation::SyncAckNotRetried => ("finish", "sync-ack-not-retried"),
            Mutation::DuplicateAcked => ("take", "deferred-duplicate-acked"),
            Mutation::DoneKeyDeleted => ("finish", "done-key-deleted"),
        }
    }

    /// `after-1649/take/fresh-inverted`.
    pub fn name(self, design: &str) -> String {
        let (site, name) = self.site_and_name();
        format!("{design}/{site}/{name}")
    }

    /// What the mutant changes, in one sentence.
    pub fn describe(self) -> &'static str {
        match self {
            Mutation::FreshInverted => "the running key's freshness test is inverted",
            Mutation::FreshOneTickLate => "a key 5 s older than the limit still counts as fresh",
            Mutation::FreshOneTickEarly => "a key 5 s younger than the limit is already stale",
            Mutation::FreshOnServerClock => {
                "the key's age is judged on the server's clock, not the builder's"
            }
            Mutation::DropsItsOwnAsk => {
                "a key naming the builder itself drops the ask like another builder's"
            }
            Mutation::DropWithoutAck => "a duplicate is dropped without acking it",
            Mutation::KeyNotPutAtStart => {
                "a run starts without putting its running key (the first heartbeat puts it)"
            }
            Mutation::AckBeforeResult => "the ask is acked when its run starts, before its result",
            Mutation::HeartbeatSkipped => "a heartbeat neither puts the key nor sends in-progress",
            Mutation::HeartbeatWithoutInProgress => {
                "a heartbeat puts the key but sends no in-progress"
            }
            Mutation::HeartbeatWithoutKey => {
                "a heartbeat sends in-progress but does not put the key"
            }
            Mutation::FinishWithoutAck => "a finished run announces its result but never acks",
            Mutation::KeyNotDeleted => "a finished run leaves its running key",
            Mutation::DeliveriesNotCounted => {
                "a delivery is not counted, so max_deliver never stops a message"
            }
            Mutation::ServerClockOnOwnClock => {
                "the key's freshness is judged on the builder's own clock, the probe's server time unused"
            }
            Mutation::RevisionUnchecked => {
                "the start's put is unconditional again: no revision check"
            }
            Mutation::KeptWhileBusy => {
                "an answer that lands on a busy builder stays in its buffer, not handed back"
            }
            Mutation::SyncAckNotRetried => {
                "the finish's synchronous ack is sent once and not retried, so it can be lost"
            }
            Mutation::DuplicateAcked => "a duplicate is acked, not left to its ack wait",
            Mutation::DoneKeyDeleted => {
                "a finished run deletes its running key instead of leaving it done"
            }
        }
    }

    /// Whether the mutation changes a step the design takes: the running key
    /// is read only by a design with the duplicate check.
    pub fn applies_to(self, design: &Design) -> bool {
        match self {
            Mutation::FreshInverted
            | Mutation::FreshOneTickLate
            | Mutation::FreshOneTickEarly
            | Mutation::FreshOnServerClock
            | Mutation::DropsItsOwnAsk
            | Mutation::DropWithoutAck
            | Mutation::KeyNotPutAtStart
            | Mutation::HeartbeatWithoutKey
            | Mutation::KeyNotDeleted => design.check.reads_key(),
            Mutation::ServerClockOnOwnClock => design.check.on_server_times(),
            Mutation::RevisionUnchecked => design.start.revision_checked(),
            Mutation::KeptWhileBusy => design.busy_buffer.hands_back(),
            Mutation::SyncAckNotRetried => design.finish_ack.sync(),
            Mutation::DuplicateAcked => design.duplicate.deferred(),
            Mutation::DoneKeyDeleted => design.finish_key.marks_done(),
            _ => true,
        }
    }
}

/// Every mutant of a design.
pub fn mutations(design: &Design) -> Vec<Mutation> {
    Mutation::ALL
        .into_iter()
        .filter(|m| m.applies_to(design))
        .collect()
}

/// What a step does that a mutant may undo, each asked of [`Link::does`] at
/// the one place the step does it: the one hook the steps' mutants go
/// through (the freshness test and the repairs' switches have theirs below).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    /// deliver: a delivery counts against max_deliver.
    CountDelivery,
    /// read: a key is another's only when it names another builder.
    CheckKeyOwner,
    /// drop: a dropped duplicate is acked.
    AckDrop,
    /// start: the running key is put.
    PutKeyAtStart,
    /// start: the ask waits for its result to be acked (no early ack).
    AckAfterResult,
    /// heartbeat: the running key is put.
    HeartbeatKey,
    /// heartbeat: in-progress is sent.
    HeartbeatInProgress,
    /// finish: the ask is acked.
    AckFinish,
    /// finish: the running key is deleted.
    DeleteKeyAtFinish,
}

impl Mutation {
    /// The acts the mutant undoes.
    fn undoes(self, act: Act) -> bool {
        use Act::*;
        use Mutation::*;
        matches!(
            (self, act),
            (DeliveriesNotCounted, CountDelivery)
                | (DropsItsOwnAsk, CheckKeyOwner)
                | (DropWithoutAck, AckDrop)
                | (KeyNotPutAtStart, PutKeyAtStart)
                | (AckBeforeResult, AckAfterResult)
                | (HeartbeatSkipped, HeartbeatKey | HeartbeatInProgress)
                | (HeartbeatWithoutInProgress, HeartbeatInProgress)
                | (HeartbeatWithoutKey, HeartbeatKey)
                | (FinishWithoutAck, AckFinish)
                | (KeyNotDeleted, DeleteKeyAtFinish)
        )
    }
}

impl Link {
    /// Whether this model's step does `act`: every design does, a mutant
    /// may not.
    pub(crate) fn does(&self, act: Act) -> bool {
        !self.mutation.is_some_and(|m| m.undoes(act))
    }

    fn mutated(&self, m: Mutation) -> bool {
        self.mutation == Some(m)
    }

    /// The design's repaired parts as this model's steps take them: each
    /// the repair's choice unless the mutant undoes it.
    pub(crate) fn server_clock(&self) -> bool {
        self.design.check.on_server_times() && !self.mutated(Mutation::ServerClockOnOwnClock)
    }
    pub(crate) fn revision_start(&self) -> bool {
        self.design.start.revision_checked() && !self.mutated(Mutation::RevisionUnchecked)
    }
    pub(crate) fn hand_back(&self) -> bool {
        self.design.busy_buffer.hands_back() && !self.mutated(Mutation::KeptWhileBusy)
    }
    pub(crate) fn sync_ack(&self) -> bool {
        self.design.finish_ack.sync() && !self.mutated(Mutation::SyncAckNotRetried)
    }
    pub(crate) fn defer_duplicates(&self) -> bool {
        self.design.duplicate.deferred() && !self.mutated(Mutation::DuplicateAcked)
    }
    pub(crate) fn done_key(&self) -> bool {
        self.design.finish_key.marks_done() && !self.mutated(Mutation::DoneKeyDeleted)
    }

    /// Whether a key `age_here` old by the reader's clock (`age` by the
    /// server's) is fresh: less than the `fresh_for` bound.
    pub(crate) fn is_fresh(&self, age: i16, age_here: i16) -> bool {
        let limit = self.bounds.fresh_for_ticks() as i16;
        match self.mutation {
            Some(Mutation::FreshInverted) => age_here >= limit,
            Some(Mutation::FreshOneTickLate) => age_here <= limit,
            Some(Mutation::FreshOneTickEarly) => age_here < limit - 1,
            Some(Mutation::FreshOnServerClock) => age < limit,
            _ => age_here < limit,
        }
    }

    /// The age by the reader's clock at which [`Link::is_fresh`] changes its
    /// answer (every mutant's test is one comparison with one threshold): the
    /// stored state keeps of a clock only where it falls against this.
    pub(crate) fn fresh_threshold(&self) -> i16 {
        let limit = self.bounds.fresh_for_ticks() as i16;
        match self.mutation {
            Some(Mutation::FreshOneTickLate) => limit + 1,
            Some(Mutation::FreshOneTickEarly) => limit - 1,
            _ => limit,
        }
    }
}
