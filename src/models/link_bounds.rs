//! The link model's bounds as the tool takes them: the defaults and the
//! table of bounds, from which the flags, the scenario `[bounds]`, the JSON,
//! the words and the swarm ranges are made (`bounds.rs`).

use super::bounds::{Bound, Swarm};
use slotcheck_models::link::{Bounds, Options};
use slotcheck_models::NamedOptions;

/// The bounds `compare --model link` uses when given none: two asks (the
/// duplicate needs a second ask to keep the first builder busy), two builders,
/// a skew of 35 s (the source's limit), one crash, one late heartbeat, and a
/// horizon long enough for a redelivery and a second build (see the README).
pub const DEFAULT_BOUNDS: Bounds = Bounds {
    asks: 2,
    builders: 2,
    skew: 35,
    horizon: 75,
    longest_build: 75,
    crashes: 1,
    late_heartbeats: 1,
    late_by: 10,
    max_deliver: 3,
    slow_answers: 0,
    lost_acks: 0,
    naks: 0,
    ack_wait: 60,
    heartbeat_every: 10,
    fresh_for: 25,
};

/// The timings are told only where they are not the source's, all three
/// then, so that every output of the contract's reading stays as it was.
fn timings_told(b: &Bounds) -> bool {
    !b.timings_are_the_sources()
}

/// The link model's bounds (see `docs/link.md`, "Bounds"), in the order
/// every form lists them. Times are in seconds, multiples of 5 (one tick),
/// on the command line, in scenarios, JSON and words; their names (swarm
/// ranges, shrinking, a trace's `#meta`) count ticks, so that a swarm draw
/// and shrinking's `-1` always give a whole tick. A swarm run draws the
/// first nine, small enough that one walk stays well under a hundred steps
/// (at most 24 ticks, three asks, three builders); the fault budgets beyond
/// the contract are never drawn, the timings only where `--range` widens
/// them.
pub(super) const BOUNDS: &[Bound<Bounds>] = &[
    Bound {
        key: "asks",
        flag: "asks",
        json: "asks",
        name: "asks",
        words: "asks {}",
        value_name: "N",
        help: "how many asks are published",
        range: 0..=255,
        swarm: Swarm::Drawn(1, 3),
        unit: 1,
        told: None,
        get: |b| b.asks.into(),
        set: |b, v| b.asks = v as u8,
    },
    Bound {
        key: "builders",
        flag: "builders",
        json: "builders",
        name: "builders",
        words: "builders {}",
        value_name: "N",
        help: "how many builders take asks",
        range: 0..=255,
        swarm: Swarm::Drawn(2, 3),
        unit: 1,
        told: None,
        get: |b| b.builders.into(),
        set: |b, v| b.builders = v as u8,
    },
    Bound {
        key: "skew",
        flag: "skew",
        json: "skew_s",
        name: "skew_ticks",
        words: "skew {} s",
        value_name: "SECONDS",
        help: "each builder's clock is off the server's by up to this many seconds, either way",
        range: 0..=65535,
        // Up to 60 s, past the source's 35 s.
        swarm: Swarm::Drawn(0, 12),
        unit: 5,
        told: None,
        get: |b| b.skew.into(),
        set: |b, v| b.skew = v as u16,
    },
    Bound {
        key: "horizon",
        flag: "horizon",
        json: "horizon_s",
        name: "horizon_ticks",
        words: "horizon {} s",
        value_name: "SECONDS",
        help: "no time passes after this many seconds of server time",
        range: 0..=65535,
        // 30 s to 120 s: an ack wait (60 s) and a redelivery fit.
        swarm: Swarm::Drawn(6, 24),
        unit: 5,
        told: None,
        get: |b| b.horizon.into(),
        set: |b, v| b.horizon = v as u16,
    },
    Bound {
        key: "longest_build",
        flag: "longest-build",
        json: "longest_build_s",
        name: "longest_build_ticks",
        words: "longest build {} s",
        value_name: "SECONDS",
        help: "a build takes from 5 s up to this many seconds",
        range: 0..=65535,
        swarm: Swarm::Drawn(1, 18),
        unit: 5,
        told: None,
        get: |b| b.longest_build.into(),
        set: |b, v| b.longest_build = v as u16,
    },
    Bound {
        key: "crashes",
        flag: "crashes",
        json: "crashes",
        name: "crashes",
        words: "crashes {}",
        value_name: "N",
        help: "how many times a builder may crash (it restarts idle at once)",
        range: 0..=255,
        swarm: Swarm::Drawn(0, 2),
        unit: 1,
        told: None,
        get: |b| b.crashes.into(),
        set: |b, v| b.crashes = v as u8,
    },
    Bound {
        key: "late_heartbeats",
        flag: "late-heartbeats",
        json: "late_heartbeats",
        name: "late_heartbeats",
        words: "late heartbeats {}",
        value_name: "N",
        help: "how many heartbeats may be late",
        range: 0..=255,
        swarm: Swarm::Drawn(0, 2),
        unit: 1,
        told: None,
        get: |b| b.late_heartbeats.into(),
        set: |b, v| b.late_heartbeats = v as u8,
    },
    Bound {
        key: "late_by",
        flag: "late-by",
        json: "late_by_s",
        name: "late_by_ticks",
        words: "(by up to {} s)",
        value_name: "SECONDS",
        help: "how late a late heartbeat may be, in seconds",
        range: 0..=65535,
        // 5 s to 50 s: the README's late-heartbeat finding needs 50.
        swarm: Swarm::Drawn(1, 10),
        unit: 5,
        told: None,
        get: |b| b.late_by.into(),
        set: |b, v| b.late_by = v as u16,
    },
    Bound {
        key: "max_deliver",
        flag: "max-deliver",
        json: "max_deliver",
        name: "max_deliver",
        words: "max deliver {}",
        value_name: "N",
        help: "deliveries before the server stops handing a message out",
        range: 0..=255,
        // Above the crashes: fewer deliveries than crashes lose an ask in
        // every design, which would bury the rest (`--range` lowers it).
        swarm: Swarm::Drawn(3, 4),
        unit: 1,
        told: None,
        get: |b| b.max_deliver.into(),
        set: |b, v| b.max_deliver = v as u8,
    },
    Bound {
        key: "slow_answers",
        flag: "slow-answers",
        json: "slow_answers",
        name: "slow_answers",
        words: "slow answers {}",
        value_name: "N",
        help: "fetches whose answer the network delays past the fetch margin, so it lands after the fetch gave up",
        range: 0..=255,
        swarm: Swarm::Fixed,
        unit: 1,
        told: Some(|b| b.slow_answers > 0),
        get: |b| b.slow_answers.into(),
        set: |b, v| b.slow_answers = v as u8,
    },
    Bound {
        key: "lost_acks",
        flag: "lost-acks",
        json: "lost_acks",
        name: "lost_acks",
        words: "lost acks {}",
        value_name: "N",
        help: "finishes whose ack never reaches the server",
        range: 0..=255,
        swarm: Swarm::Fixed,
        unit: 1,
        told: Some(|b| b.lost_acks > 0),
        get: |b| b.lost_acks.into(),
        set: |b, v| b.lost_acks = v as u8,
    },
    Bound {
        key: "naks",
        flag: "naks",
        json: "naks",
        name: "naks",
        words: "naks {}",
        value_name: "N",
        help: "reads at which a builder naks the ask instead, the source's one nak path",
        range: 0..=255,
        swarm: Swarm::Fixed,
        unit: 1,
        told: Some(|b| b.naks > 0),
        get: |b| b.naks.into(),
        set: |b, v| b.naks = v as u8,
    },
    Bound {
        key: "ack_wait",
        flag: "ack-wait",
        json: "ack_wait_s",
        name: "ack_wait_ticks",
        words: "ack wait {} s",
        value_name: "SECONDS",
        help: "the consumer's ack wait, in seconds",
        range: 0..=65535,
        swarm: Swarm::Kept,
        unit: 5,
        told: Some(timings_told),
        get: |b| b.ack_wait.into(),
        set: |b, v| b.ack_wait = v as u16,
    },
    Bound {
        key: "heartbeat_every",
        flag: "heartbeat-every",
        json: "heartbeat_every_s",
        name: "heartbeat_ticks",
        words: "heartbeat every {} s",
        value_name: "SECONDS",
        help: "a running builder's heartbeat (key put and in-progress) period, in seconds",
        range: 0..=65535,
        swarm: Swarm::Kept,
        unit: 5,
        told: Some(timings_told),
        get: |b| b.heartbeat_every.into(),
        set: |b, v| b.heartbeat_every = v as u16,
    },
    Bound {
        key: "fresh_for",
        flag: "fresh-for",
        json: "fresh_for_s",
        name: "fresh_for_ticks",
        words: "fresh for {} s",
        value_name: "SECONDS",
        help: "a running key counts as fresh for this many seconds, `runningFreshFor`",
        range: 0..=65535,
        swarm: Swarm::Kept,
        unit: 5,
        told: Some(timings_told),
        get: |b| b.fresh_for.into(),
        set: |b, v| b.fresh_for = v as u16,
    },
];

pub fn options(names: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    for name in names {
        options.set(name).map_err(|e| format!("--option: {e}"))?;
    }
    Ok(options)
}
