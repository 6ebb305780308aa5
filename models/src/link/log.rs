//! What a step did, once: each primitive of `steps.rs` and `time.rs` leaves
//! one typed [`Record`], in the event log's terms. The story tells the
//! records (`story/say.rs`), validation reads what a builder logs off them
//! (`trace/observe.rs`) and coverage its marks (`coverage.rs`), so none of
//! them can say a step did other than what it did. Checking keeps none.

use super::{Ask, Bid, Builder, Key, MAX_ASKS, MAX_BUILDERS};
use crate::Inline;

/// What a primitive did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Record {
    /// A fetch answered at once: `ask`, at its `delivery`th delivery, into
    /// the buffer.
    Fetch {
        ask: Ask,
        delivery: u8,
    },
    /// A fetch gave up empty-handed and the server answered its pull request
    /// with `ask`, now on the way: `slow`, the network delayed the answer
    /// past the margin; else the fetch has no margin.
    FetchGivesUp {
        ask: Ask,
        delivery: u8,
        slow: bool,
    },
    /// The client's fetch returned the earlier request's answer, `ask`; its
    /// own request stays open.
    FetchEarlier {
        ask: Ask,
    },
    /// The server answered an open pull request with `ask`, on the way to a
    /// builder that builds `busy` or is idle.
    Answer {
        ask: Ask,
        delivery: u8,
        busy: Option<Ask>,
    },
    /// A late answer, `ask`, landed while the builder built `busy` (or was
    /// idle): into its buffer, or handed back (a [`Record::Nak`] follows).
    Land {
        ask: Ask,
        busy: Option<Ask>,
        handed_back: bool,
    },
    /// The builder read `ask` from its buffer and, with the duplicate check,
    /// its running key, and decided.
    Read {
        ask: Ask,
        check: Check,
        duplicate: bool,
    },
    /// It dropped `ask`, as a duplicate or after its revision-checked put
    /// failed (`failed_put`), and then acked it, or left it to its ack wait.
    Drop {
        ask: Ask,
        failed_put: bool,
        then: DropThen,
    },
    /// It put `ask`'s running key, over the key of builder `over` if the
    /// state kept one, and started the build.
    Start {
        ask: Ask,
        over: Option<Bid>,
    },
    /// Busy now, it hands `ask` back (a [`Record::Nak`] follows).
    HandBack {
        ask: Ask,
    },
    Ack {
        ask: Ask,
        outcome: AckOutcome,
    },
    Nak {
        ask: Ask,
        outcome: NakOutcome,
    },
    /// Fault: it read `ask` and naks it (a [`Record::Nak`] follows).
    NakFault {
        ask: Ask,
    },
    /// A heartbeat of `ask`: the key put or not, the in-progress sent (and
    /// what it did) or not.
    Heartbeat {
        ask: Ask,
        key: bool,
        progress: Option<Progress>,
    },
    /// The build of `ask` ended after `built` ticks; `again`, its result
    /// was announced before.
    Finish {
        ask: Ask,
        built: u8,
        again: bool,
    },
    /// Fault: the finish's ack of `ask` was lost.
    AckLost {
        ask: Ask,
    },
    /// The finish put `ask`'s key, marked done.
    KeyDone {
        ask: Ask,
    },
    /// The finish deleted `ask`'s key.
    KeyDeleted {
        ask: Ask,
    },
    /// A tick passed.
    Tick,
    /// The ack wait of `ask`, delivered to `holder`, ran out: it is
    /// available again, or never delivered again at its `last` delivery;
    /// `due`, the builders whose heartbeat of it was due at that instant.
    AckWaitRunsOut {
        ask: Ask,
        holder: Bid,
        last: bool,
        due: Inline<Bid, { MAX_BUILDERS as usize }>,
    },
    /// `ask`'s key reached the bucket's TTL and is gone.
    KeyExpires {
        ask: Ask,
    },
    /// `redelivery-queue`: `ask` goes first of the head of the queue,
    /// before `others`.
    QueueFirst {
        ask: Ask,
        others: Inline<Ask, { MAX_ASKS as usize }>,
    },
    /// Fault: the builder, as it was, crashed and restarted idle.
    Crash {
        lost: Builder,
    },
    /// Fault: a heartbeat is late by up to `late` ticks.
    Delay {
        late: u8,
    },
    /// Fault (`--rewinds`): the builder's pull request expired as the
    /// server took `ask`'s redelivery for it: `ask` counted at its
    /// `counted`th delivery and left to its ack wait; the server's cursor
    /// wound back to `back_to`, which goes out again as new. `fetching`:
    /// the request was the builder's fetch's (which gives up empty), not
    /// one left open.
    Rewind {
        ask: Ask,
        counted: u8,
        back_to: Option<Ask>,
        fetching: bool,
    },
    /// The server's cursor, wound back, hands `ask` out as never
    /// delivered: its delivery says 1; the server keeps `counted` for
    /// `max_deliver`.
    AsNew {
        ask: Ask,
        counted: u8,
    },
}

/// What a read found of the running key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// The design reads no key.
    Unchecked,
    NoKey,
    /// The key as the state keeps it; `own`, the reader's; `offset`, the
    /// reader's clock off the server's, and `clock`, the offset its
    /// freshness was judged by (0 on the server's clock); `fresh`, as
    /// judged (a done key is not).
    Key {
        key: Key,
        own: bool,
        offset: i8,
        clock: i8,
        fresh: bool,
    },
}

/// What a drop did after it decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DropThen {
    /// Left to its ack wait (`Duplicate::LeftToAckWait`).
    Deferred,
    /// Acked (a [`Record::Ack`] follows).
    Acked,
    /// Neither (a mutant that skips the ack).
    Nothing,
}

/// What the server did with an ack, by the message's status before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AckOutcome {
    Removes,
    /// Removed, though this builder holds it now.
    RemovesHeld(Bid),
    AlreadyGone,
    Exhausted,
    /// `stale-ack-ignored`: this builder holds it now.
    IgnoredHeld(Bid),
    IgnoredAvailable,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NakOutcome {
    /// Available again at once.
    Again,
    /// At its last delivery: never delivered again.
    Last,
    Nothing,
}

/// What a heartbeat's in-progress did, by the message's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Restarted the ack wait; `held`, of a message this builder holds now.
    Restarts {
        held: Option<Bid>,
    },
    /// `stale-ack-ignored`: this builder holds it now.
    Ignored(Bid),
    Available,
    Acked,
    Exhausted,
}

/// The records of a step, kept only when asked for.
pub(crate) type Log = crate::Recorder<Record>;

/// A branch of a step, by where it sits in `steps.rs` and `time.rs`: what
/// a step's records mark for coverage (`coverage.rs` names them and lists
/// them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Path {
    Fetch,
    FetchGivesUp,
    SlowAnswer,
    FetchEarlier,
    AnswerBusy,
    AnswerIdle,
    LandHandBack,
    LandBusy,
    LandIdle,
    ReadUnchecked,
    ReadNoKey,
    ReadDoneKey,
    ReadFreshKey,
    ReadOwnKey,
    ReadStaleKey,
    StartConflict,
    DropDeferred,
    DropAcked,
    StartOverKey,
    Start,
    StartHandsBack,
    AckRemoves,
    AckRemovesHeld,
    AckAlreadyGone,
    AckExhausted,
    AckIgnoredHeld,
    AckIgnoredAvailable,
    NakAgain,
    NakLast,
    NakNothing,
    NakFault,
    HeartbeatRestarts,
    HeartbeatRestartsHeld,
    HeartbeatIgnored,
    HeartbeatAvailable,
    HeartbeatAcked,
    HeartbeatExhausted,
    FinishResult,
    FinishAgain,
    FinishAckLost,
    FinishKeyDeleted,
    FinishKeyDone,
    TickRedelivers,
    TickLastDelivery,
    TickBesideHeartbeat,
    TickKeyExpires,
    QueueFirst,
    CrashBuild,
    CrashBuffer,
    CrashOnTheWay,
    CrashDecided,
    Delay,
    RewindBack,
    RewindAcked,
    AsNew,
}
