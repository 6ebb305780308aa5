//! A design is a value: one choice per part of the builder's steps (the
//! contract's steps 1 to 5: fetch, read, decide, run, finish), each an enum
//! whose variants are the choices. The source's four designs differ in two
//! parts only (the duplicate check at step 3, and the fetch wait at step 1
//! with the margin it leaves); the repairs built here are after-1649 with
//! one part or more changed, each a change a builder could make on
//! JetStream as it is. The steps ask the design at the step where a choice
//! acts (`steps.rs`), so a verdict that differs between designs is one of
//! the parts.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Design {
    /// The name on the command line and in reports: `after-1649`.
    pub name: &'static str,
    /// One sentence for reports.
    pub summary: &'static str,
    /// What the design changes in the contract's steps (1 fetch, 2 read, 3
    /// decide, 4 run, 5 finish): which step, and why. For `--help`, the
    /// README and the findings report (`compare --findings`: HTML, JSON).
    pub change: &'static str,
    /// What it costs in JetStream terms: the source's designs in full, the
    /// repairs against after-1649.
    pub cost: &'static str,
    /// Step 3: whether a builder reads the running key before it runs an
    /// ask, and on whose clock the key's freshness is judged.
    pub check: DuplicateCheck,
    /// Step 1: a fetch's wait on one check queue, and so the margin it
    /// leaves.
    pub fetch_wait: FetchWait,
    /// Step 4: the start's put of the running key.
    pub start: StartPut,
    /// What a builder does with an ask that lands in its buffer while it is
    /// busy (steps 1 and 4).
    pub busy_buffer: BusyBuffer,
    /// Step 5: the finish's ack.
    pub finish_ack: FinishAck,
    /// Step 3: what happens to an ask dropped as a duplicate.
    pub duplicate: Duplicate,
    /// Step 5: what the finish does with the running key.
    pub finish_key: FinishKey,
}

/// Step 3, the duplicate check (`runningElsewhere`/`duplicateOf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DuplicateCheck {
    /// before-1649: every ask read is run. Cost: nothing; two builders may
    /// run one ask.
    None,
    /// The source's fix: read the running key; one naming another builder,
    /// this same ask, and fresh by this builder's clock (`seen` less than
    /// `runningFreshFor` before it) drops the ask. Cost: a KV get per ask
    /// read; a skewed clock misjudges freshness.
    BuilderClock,
    /// A repair (`server-clock`): freshness judged on two times the server
    /// stamps (the key's last put against a put of the reader's own probe
    /// key, read back), so no builder's clock enters it. Cost: a probe put
    /// per read, a round trip more per ask taken.
    ServerClock,
}

impl DuplicateCheck {
    /// Whether step 3 reads the running key at all.
    pub fn reads_key(self) -> bool {
        self != DuplicateCheck::None
    }

    /// Whether the key's freshness is judged on the server's times.
    pub fn on_server_times(self) -> bool {
        self == DuplicateCheck::ServerClock
    }

    /// Whether the key's freshness is judged on the reading builder's clock.
    pub fn on_builder_clock(self) -> bool {
        self == DuplicateCheck::BuilderClock
    }
}

/// Step 1, `checkTakeWait`: a fetch's wait on one check queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FetchWait {
    /// Before the fix: 30 ms, whose pull request (by nats.go's expiry from
    /// 1.37.0, a tenth less) ends 3 ms before the fetch gives up: under
    /// `minFetchMargin`, so an answer can land after the fetch gave up, in
    /// the buffer of a builder that has moved on. Cost: none.
    Ms30,
    /// The source's fix: 100 ms, which leaves exactly the 10 ms margin.
    /// Cost: a longer wait per empty check queue.
    Ms100,
}

impl FetchWait {
    /// The wait, in ms.
    pub fn ms(self) -> u16 {
        match self {
            FetchWait::Ms30 => 30,
            FetchWait::Ms100 => 100,
        }
    }

    /// Whether the wait leaves the fetch margin by the expiry rule the
    /// source's fix was measured against (nats.go from 1.37.0). The model's
    /// own answer also weighs the client's rule ([`Link::has_margin`]:
    /// under `expiry-less-10ms` the 30 ms wait leaves it too).
    ///
    /// [`Link::has_margin`]: super::Link::has_margin
    pub fn leaves_margin(self) -> bool {
        fetch_margin_us(self.ms(), false) >= MIN_FETCH_MARGIN_US
    }
}

/// Step 4, the start's put of the running key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StartPut {
    /// The contract's put, whatever the key holds now. Cost: one KV put.
    Blind,
    /// A repair (`revision-start`): a revision-checked update (a KV create
    /// where there was no key); it fails if any builder wrote the key since
    /// step 3's read, and the builder then drops the ask as a duplicate.
    /// Cost: none, the same round trip.
    RevisionChecked,
}

impl StartPut {
    /// Whether the put fails on a key written since the read.
    pub fn revision_checked(self) -> bool {
        self == StartPut::RevisionChecked
    }
}

/// An ask that lands in a busy builder's buffer (a late answer, or the
/// client's open pull request answered).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BusyBuffer {
    /// The contract's builder holds it until its build ends, unacked, while
    /// its ack wait runs. Cost: nothing.
    Held,
    /// A repair (`hand-back`): a builder never holds an ask it is not
    /// running: whatever lands while it is busy is handed back at once with
    /// a nak. Cost: a nak per answer landing on a busy builder, each a
    /// delivery counted against `max_deliver`.
    HandedBack,
}

impl BusyBuffer {
    /// Whether a busy builder naks what lands in its buffer.
    pub fn hands_back(self) -> bool {
        self == BusyBuffer::HandedBack
    }
}

/// Step 5, the finish's ack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FinishAck {
    /// The contract's ack, fire and forget: it can be lost
    /// (`--lost-acks`), and the ask comes back after its ack wait. Cost: no
    /// round trip.
    Async,
    /// A repair (`sync-ack`): `AckSync`, retried until the server confirms
    /// it, so it is never lost. Cost: a round trip per ask.
    Sync,
}

impl FinishAck {
    /// Whether the ack is confirmed, and so never lost.
    pub fn sync(self) -> bool {
        self == FinishAck::Sync
    }
}

/// Step 3: an ask dropped as a duplicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Duplicate {
    /// The contract: acked, so it never comes back. Cost: an ack.
    Acked,
    /// A repair (`defer-duplicates`): not acked but left to its ack wait,
    /// so it comes back if the builder running it dies. Cost: a delivery
    /// per ack wait, counted against `max_deliver`, until its builder acks
    /// it.
    LeftToAckWait,
}

impl Duplicate {
    /// Whether a duplicate is left unacked.
    pub fn deferred(self) -> bool {
        self == Duplicate::LeftToAckWait
    }
}

/// Step 5: the running key once the result is announced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FinishKey {
    /// The contract: deleted. Cost: a KV delete.
    Deleted,
    /// A repair (`done-key`): put marked done, living to the end of its
    /// TTL, so a copy handed out again before then is acked and not run.
    /// Cost: none, the delete becomes a put; the key lives its two minutes.
    MarkedDone,
}

impl FinishKey {
    /// Whether the finish keeps the key, marked done.
    pub fn marks_done(self) -> bool {
        self == FinishKey::MarkedDone
    }
}

/// `minFetchMargin`: the least time, in µs, between a fetch's server-side
/// expiry and the end of its wait, by the source's own test of the fix.
pub const MIN_FETCH_MARGIN_US: u32 = 10_000;

/// The pull request's expiry nats.go's `Subscription.Fetch` sends for a
/// fetch that waits `wait_ms`, in µs. From 1.37.0 (nats.go commit af10233f,
/// "Change Fetch client timeout to a higher value", #1689): the wait less a
/// tenth of it, at most 5 s less (`expiresDiff`), what the seed's
/// `fetchExpiryOf` restates. Up to 1.36.0, Debian's 1.22.1 among them
/// (`expiry_less_10ms`): the wait less 10 ms, or the whole wait under 20 ms.
pub fn fetch_expiry_us(wait_ms: u16, expiry_less_10ms: bool) -> u32 {
    let wait = wait_ms as u32 * 1000;
    if expiry_less_10ms {
        if wait >= 20_000 {
            wait - 10_000
        } else {
            wait
        }
    } else {
        wait - (wait / 10).min(5_000_000)
    }
}

/// The time between a fetch's pull request's expiry and the end of its
/// wait, in µs.
pub fn fetch_margin_us(wait_ms: u16, expiry_less_10ms: bool) -> u32 {
    wait_ms as u32 * 1000 - fetch_expiry_us(wait_ms, expiry_less_10ms)
}

/// after-1649, the source's fix; the repairs change some of its parts.
const AFTER_1649: Design = Design {
    name: "after-1649",
    summary: "the duplicate check against the running bucket, and the fetch margin",
    change: "the contract's steps as they stand: 1, fetch with a 100 ms wait, whose pull request expires 10 ms before the fetch gives up (minFetchMargin), so an answer lands after its fetch gave up only over a network slower than that; 3, read the running key and drop (ack) an ask it names for another builder, fresh by this builder's clock; 4, put the key; 5, ack, then delete the key. What lands in a busy builder's buffer is held.",
    cost: "the source's fix: a KV get of the running key per ask read, fetch waits that leave a 10 ms margin (100 ms per check queue)",
    check: DuplicateCheck::BuilderClock,
    fetch_wait: FetchWait::Ms100,
    start: StartPut::Blind,
    busy_buffer: BusyBuffer::Held,
    finish_ack: FinishAck::Async,
    duplicate: Duplicate::Acked,
    finish_key: FinishKey::Deleted,
};

/// The source's designs, in the order reports show them.
pub static DESIGNS: [Design; 4] = [
    Design {
        name: "before-1649",
        summary:
            "no duplicate check, no fetch margin (late answers land in busy builders' buffers)",
        change: "step 3 without the duplicate check: every ask read is run; step 1's fetch waits 30 ms, whose pull request expires 3 ms before the fetch gives up, under minFetchMargin, so an answer can land after the fetch gave up, in the buffer of a builder that has moved on (unless the client's expiry is the wait less 10 ms, expiry-less-10ms).",
        cost: "what ran before the fix: per ask a fetch, a KV put at the start and per heartbeat with an in-progress, an ack and a KV delete",
        check: DuplicateCheck::None,
        fetch_wait: FetchWait::Ms30,
        ..AFTER_1649
    },
    AFTER_1649,
    Design {
        name: "check-only",
        summary: "the duplicate check without the fetch margin",
        change: "after-1649, but step 1's fetch waits 30 ms, leaving no margin: an answer can land after the fetch gave up, and only step 3's check stands between it and a second run.",
        cost: "a KV get of the running key per ask read; the old 30 ms fetch waits",
        fetch_wait: FetchWait::Ms30,
        ..AFTER_1649
    },
    Design {
        name: "margin-only",
        summary: "the fetch margin without the duplicate check",
        change: "after-1649, but step 3 without the duplicate check: every ask read is run; step 1's 100 ms wait still leaves the margin.",
        cost: "fetch waits that leave a 10 ms margin (100 ms per check queue); no KV get",
        check: DuplicateCheck::None,
        ..AFTER_1649
    },
];

/// The repairs of after-1649 built here, each one change and then the
/// change that holds most findings (docs/link-repairs.md).
pub static REPAIRS: [Design; 7] = [
    Design {
        name: "after-1649-server-clock",
        summary: "after-1649, its freshness judged on server-stamped times only",
        change: "after-1649, but step 3 judges the key's freshness on two times the server stamps: the key's last put against a put of the reader's own probe key, read back. Why: a builder whose clock is skewed past runningFreshFor judges a dead builder's key fresh and drops an ask nobody runs (the loss past 35 s of skew).",
        cost: "one KV put of the builder's own probe key per read, read back for its server time: a round trip more per ask taken",
        check: DuplicateCheck::ServerClock,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-revision-start",
        summary: "after-1649, its start a revision-checked KV update (a create where there was no key)",
        change: "after-1649, but step 4's put is a revision-checked update of the key step 3 read (a create where there was none); it fails if any builder wrote the key since, and the builder drops the ask as a duplicate. Why: two builders that both read no fresh key, one between the other's get and put, both run the ask (the late answer's double run).",
        cost: "none: the put becomes kv.Update(key, revision read) or kv.Create, the same round trip",
        start: StartPut::RevisionChecked,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-hand-back",
        summary: "after-1649, and whatever lands in a busy builder's buffer is handed back at once with a nak",
        change: "after-1649, but a builder never holds an ask it is not running: whatever lands in its buffer while it is busy (a late answer, an open pull request answered) is handed back at once with a nak. Why: an ask held by a busy builder runs out its ack wait and is handed out again: run twice, lost or built again after its result (the late answer's findings).",
        cost: "one Nak per answer that lands on a busy builder, each a delivery counted against max_deliver",
        busy_buffer: BusyBuffer::HandedBack,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-sync-ack",
        summary: "after-1649, its finish's ack synchronous (AckSync, retried until confirmed)",
        change: "after-1649, but step 5's ack is synchronous (AckSync), retried until the server confirms it. Why: a lost ack hands the ask out again after its ack wait, and it is built again after its result (the lost ack's rebuild).",
        cost: "the finish waits for the server's confirmation of its ack: a round trip per ask",
        finish_ack: FinishAck::Sync,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-defer-duplicates",
        summary: "after-1649, a duplicate left to its ack wait instead of acked",
        change: "after-1649, but an ask step 3 drops as a duplicate is not acked but left to its ack wait. Why: an acked duplicate is gone for good if the key that named another builder stood for no run that ends (that builder died, or its key was misjudged fresh): the ask is lost.",
        cost: "none per ask; a duplicate comes back after each ack wait, a delivery counted against max_deliver, until its builder acks it",
        duplicate: Duplicate::LeftToAckWait,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-done-key",
        summary: "after-1649, its finish leaving the running key marked done (to the end of its TTL) instead of deleting it",
        change: "after-1649, but step 5 puts the running key marked done instead of deleting it, and step 3 acks, without running, an ask whose key is done. Why: a copy handed out again after the finish (a lost ack, a late answer) finds no key and is built again after its result.",
        cost: "none: the finish's KV delete becomes a KV put; the key lives its two minutes",
        finish_key: FinishKey::MarkedDone,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-repaired",
        summary: "after-1649 with the five repairs that close findings no other closes: server-stamped freshness, the revision-checked start, hand-back, duplicates deferred, the done key",
        change: "after-1649-server-clock, after-1649-revision-start, after-1649-hand-back, after-1649-defer-duplicates and after-1649-done-key together: step 3 judges freshness on server-stamped times and leaves a duplicate to its ack wait, step 4's put is revision-checked, a busy builder hands back what lands with a nak, and step 5 marks the key done instead of deleting it.",
        cost: "a probe put per read, a nak per answer landing on a busy builder, a delivery per deferred duplicate; the start's put revision-checked and the finish's a put instead of a delete, the same round trips",
        check: DuplicateCheck::ServerClock,
        start: StartPut::RevisionChecked,
        busy_buffer: BusyBuffer::HandedBack,
        duplicate: Duplicate::LeftToAckWait,
        finish_key: FinishKey::MarkedDone,
        ..AFTER_1649
    },
];

/// Every design: the source's, then the repairs.
pub fn all_designs() -> impl Iterator<Item = &'static Design> {
    DESIGNS.iter().chain(REPAIRS.iter())
}

/// The design with this name.
pub fn design_named(name: &str) -> Option<&'static Design> {
    all_designs().find(|d| d.name == name)
}
