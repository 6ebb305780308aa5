//! The designs, read from the link model's own design values (the source's
//! four and every repair: `slotcheck_models::link::design`), and the
//! source's timings: fetch waits in real milliseconds, everything else in
//! source time divided by one scale (a model tick is 5 s of source time).

use slotcheck_models::link::{all_designs, compose, design_named, Design as ModelDesign, DESIGNS};
use std::time::Duration;

/// A design of the link model, as the real builders run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Design(&'static ModelDesign);

impl Design {
    pub const BEFORE_1649: Design = Design(&DESIGNS[0]);
    pub const AFTER_1649: Design = Design(&DESIGNS[1]);
    pub const CHECK_ONLY: Design = Design(&DESIGNS[2]);
    pub const MARGIN_ONLY: Design = Design(&DESIGNS[3]);

    /// Every design the model has, the source's first.
    pub fn all() -> impl Iterator<Item = Design> {
        all_designs().map(Design)
    }

    pub fn parse(name: &str) -> Option<Design> {
        // A composition (`after-1649+hand-back+sync-ack`) runs too: the
        // builders ask the design's parts, not its name.
        design_named(name)
            .or_else(|| compose(name).ok())
            .map(Design)
    }

    /// The names, for messages.
    pub fn names() -> String {
        Design::all()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The model's design, its parts.
    pub fn model(self) -> &'static ModelDesign {
        self.0
    }

    /// `runningElsewhere`/`duplicateOf` before a run.
    pub fn duplicate_check(self) -> bool {
        self.0.check.reads_key()
    }

    /// The source's `checkTakeWait`: 100 ms with the fix (the fetch
    /// margin), 30 ms before it (whose pull request, at `fetchExpiryOf`,
    /// ends 3 ms before the fetch: under `minFetchMargin`).
    pub fn take_wait(self) -> Duration {
        if self.0.fetch_wait.leaves_margin() {
            Duration::from_millis(100)
        } else {
            Duration::from_millis(30)
        }
    }
}

/// The source's `takeIdleWait`: a fetch's wait when every queue is empty.
pub const TAKE_IDLE_WAIT: Duration = Duration::from_secs(1);

/// The expiry nats.go gives the pull request of a fetch that waits this
/// long: the wait less a tenth of it, or less five seconds.
pub fn fetch_expiry_of(wait: Duration) -> Duration {
    wait - (wait / 10).min(Duration::from_secs(5))
}

/// Source time scaled down: `ms_per_tick` real ms for a model tick (5 s of
/// the source's time). Fetch waits and margins are not scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    pub ms_per_tick: u64,
    /// The consumer's ack wait in ticks: the source's minute (12) unless a
    /// story's bounds say otherwise (`--ack-wait`).
    pub ack_wait_ticks: u64,
}

impl Timing {
    /// The source's timers at `ms_per_tick` real ms a tick.
    pub const fn scaled(ms_per_tick: u64) -> Timing {
        Timing {
            ms_per_tick,
            ack_wait_ticks: 12,
        }
    }
    fn ticks(self, n: u64) -> Duration {
        Duration::from_millis(n * self.ms_per_tick)
    }
    pub fn tick(self) -> Duration {
        self.ticks(1)
    }
    /// A redelivery comes an ack wait (the source's minute) after the last
    /// heartbeat.
    pub fn ack_wait(self) -> Duration {
        self.ticks(self.ack_wait_ticks)
    }
    /// Heartbeats and in-progress every ten seconds.
    pub fn heartbeat(self) -> Duration {
        self.ticks(2)
    }
    /// `runningFreshFor`, 25 s.
    pub fn fresh_for(self) -> Duration {
        self.ticks(5)
    }
    /// The running bucket's TTL, two minutes.
    pub fn key_ttl(self) -> Duration {
        self.ticks(24)
    }
    /// A clock offset of `seconds` of source time, in real ms.
    pub fn skew_ms(self, seconds: i64) -> i64 {
        seconds * self.ms_per_tick as i64 / 5
    }
}

impl Default for Timing {
    /// 250 ms a tick: 5 s of source time in a quarter second, so the ack
    /// wait is 3 s and a story of a minute and a half takes five seconds.
    fn default() -> Self {
        Timing::scaled(250)
    }
}
