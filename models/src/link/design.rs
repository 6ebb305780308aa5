//! The designs: the source's four differ in two switches only (whether a
//! builder checks the bucket of checks running before it runs an ask, and
//! whether a fetch's server-side request ends clearly before the fetch
//! does); the repairs built here are after-1649 with further switches, each
//! a change a builder could make on JetStream as it is. Everything else is
//! the same code, so a verdict that differs between designs is one of the
//! switches.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Design {
    /// The name on the command line and in reports: `after-1649`.
    pub name: &'static str,
    /// One sentence for reports.
    pub summary: &'static str,
    /// What it costs in JetStream terms: the source's designs in full, the
    /// repairs against after-1649.
    pub cost: &'static str,
    /// Drop an ask whose running key names another builder, fresh by this
    /// builder's clock (step 3 of the contract).
    pub duplicate_check: bool,
    /// The fetch margin: without it a fetch's answer can land after the fetch
    /// gave up, in the buffer of a builder that has moved on. The source's
    /// switch is its fetch wait (`fetch_wait_ms`); whether that leaves the
    /// margin depends on the client's expiry rule too ([`Link::has_margin`]).
    ///
    /// [`Link::has_margin`]: super::Link::has_margin
    pub fetch_margin: bool,
    /// `checkTakeWait`, a fetch's wait on one check queue: 30 ms before the
    /// fix, 100 ms after.
    pub fetch_wait_ms: u16,
    /// Freshness judged on two times the server stamps (the key's last put
    /// against a put of the reader's own, read back), so no builder's clock
    /// enters it.
    pub server_clock: bool,
    /// The start's put is a revision-checked update (a KV create where there
    /// was no key): it fails if any builder wrote the key since the read,
    /// and the builder then drops the ask as a duplicate.
    pub revision_start: bool,
    /// A builder never holds an ask it is not running: whatever lands in its
    /// buffer while it is busy is handed back at once with a nak.
    pub hand_back: bool,
    /// The finish's ack is synchronous (`AckSync`, retried until the server
    /// confirms it), so it is never lost.
    pub sync_ack: bool,
    /// A duplicate is not acked but left to its ack wait, so it comes back
    /// if the builder running it dies.
    pub defer_duplicates: bool,
    /// The finish puts the running key marked done instead of deleting it,
    /// so a copy handed out again before its TTL ends is acked and not run.
    pub done_key: bool,
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

/// after-1649's switches; the repairs change some.
const AFTER_1649: Design = Design {
    name: "after-1649",
    summary: "the duplicate check against the running bucket, and the fetch margin",
    cost: "the source's fix: a KV get of the running key per ask read, fetch waits that leave a 10 ms margin (100 ms per check queue)",
    duplicate_check: true,
    fetch_margin: true,
    fetch_wait_ms: 100,
    server_clock: false,
    revision_start: false,
    hand_back: false,
    sync_ack: false,
    defer_duplicates: false,
    done_key: false,
};

/// The source's designs, in the order reports show them.
pub static DESIGNS: [Design; 4] = [
    Design {
        name: "before-1649",
        summary:
            "no duplicate check, no fetch margin (late answers land in busy builders' buffers)",
        cost: "what ran before the fix: per ask a fetch, a KV put at the start and per heartbeat with an in-progress, an ack and a KV delete",
        duplicate_check: false,
        fetch_margin: false,
        fetch_wait_ms: 30,
        ..AFTER_1649
    },
    AFTER_1649,
    Design {
        name: "check-only",
        summary: "the duplicate check without the fetch margin",
        cost: "a KV get of the running key per ask read; the old 30 ms fetch waits",
        fetch_margin: false,
        fetch_wait_ms: 30,
        ..AFTER_1649
    },
    Design {
        name: "margin-only",
        summary: "the fetch margin without the duplicate check",
        cost: "fetch waits that leave a 10 ms margin (100 ms per check queue); no KV get",
        duplicate_check: false,
        ..AFTER_1649
    },
];

/// The repairs of after-1649 built here, each one change and then the
/// change that holds most findings (docs/link-repairs.md).
pub static REPAIRS: [Design; 7] = [
    Design {
        name: "after-1649-server-clock",
        summary: "after-1649, its freshness judged on server-stamped times only",
        cost: "one KV put of the builder's own probe key per read, read back for its server time: a round trip more per ask taken",
        server_clock: true,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-revision-start",
        summary: "after-1649, its start a revision-checked KV update (a create where there was no key)",
        cost: "none: the put becomes kv.Update(key, revision read) or kv.Create, the same round trip",
        revision_start: true,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-hand-back",
        summary: "after-1649, and whatever lands in a busy builder's buffer is handed back at once with a nak",
        cost: "one Nak per answer that lands on a busy builder, each a delivery counted against max_deliver",
        hand_back: true,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-sync-ack",
        summary: "after-1649, its finish's ack synchronous (AckSync, retried until confirmed)",
        cost: "the finish waits for the server's confirmation of its ack: a round trip per ask",
        sync_ack: true,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-defer-duplicates",
        summary: "after-1649, a duplicate left to its ack wait instead of acked",
        cost: "none per ask; a duplicate comes back after each ack wait, a delivery counted against max_deliver, until its builder acks it",
        defer_duplicates: true,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-done-key",
        summary: "after-1649, its finish leaving the running key marked done (to the end of its TTL) instead of deleting it",
        cost: "none: the finish's KV delete becomes a KV put; the key lives its two minutes",
        done_key: true,
        ..AFTER_1649
    },
    Design {
        name: "after-1649-repaired",
        summary: "after-1649 with the four repairs that close findings no other closes: server-stamped freshness, hand-back, duplicates deferred, the done key",
        cost: "a probe put per read, a nak per answer landing on a busy builder, a delivery per deferred duplicate; the finish puts the key instead of deleting it",
        server_clock: true,
        hand_back: true,
        defer_duplicates: true,
        done_key: true,
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
