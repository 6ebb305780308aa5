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
    rewinds: 0,
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
        words: "asks {}",
        help: "how many asks are published",
        swarm: Swarm::Drawn(1, 3),
        ..Bound::count("asks", "asks", |b| b.asks.into(), |b, v| b.asks = v as u8)
    },
    Bound {
        words: "builders {}",
        help: "how many builders take asks",
        swarm: Swarm::Drawn(2, 3),
        ..Bound::count("builders", "builders", |b| b.builders.into(), |b, v| b.builders = v as u8)
    },
    Bound {
        words: "skew {} s",
        help: "each builder's clock is off the server's by up to this many seconds, either way",
        // Up to 60 s, past the source's 35 s.
        swarm: Swarm::Drawn(0, 12),
        ..Bound::seconds(
            "skew",
            "skew",
            "skew_s",
            "skew_ticks",
            |b| b.skew.into(),
            |b, v| b.skew = v as u16,
        )
    },
    Bound {
        words: "horizon {} s",
        help: "no time passes after this many seconds of server time",
        // 30 s to 120 s: an ack wait (60 s) and a redelivery fit.
        swarm: Swarm::Drawn(6, 24),
        ..Bound::seconds(
            "horizon",
            "horizon",
            "horizon_s",
            "horizon_ticks",
            |b| b.horizon.into(),
            |b, v| b.horizon = v as u16,
        )
    },
    Bound {
        words: "longest build {} s",
        help: "a build takes from 5 s up to this many seconds",
        swarm: Swarm::Drawn(1, 18),
        ..Bound::seconds(
            "longest_build",
            "longest-build",
            "longest_build_s",
            "longest_build_ticks",
            |b| b.longest_build.into(),
            |b, v| b.longest_build = v as u16,
        )
    },
    Bound {
        words: "crashes {}",
        help: "how many times a builder may crash (it restarts idle at once)",
        swarm: Swarm::Drawn(0, 2),
        ..Bound::count("crashes", "crashes", |b| b.crashes.into(), |b, v| b.crashes = v as u8)
    },
    Bound {
        words: "late heartbeats {}",
        help: "how many heartbeats may be late",
        swarm: Swarm::Drawn(0, 2),
        ..Bound::count("late_heartbeats", "late-heartbeats", |b| b.late_heartbeats.into(), |b, v| b.late_heartbeats = v as u8)
    },
    Bound {
        words: "(by up to {} s)",
        help: "how late a late heartbeat may be, in seconds",
        // 5 s to 50 s: the README's late-heartbeat finding needs 50.
        swarm: Swarm::Drawn(1, 10),
        ..Bound::seconds(
            "late_by",
            "late-by",
            "late_by_s",
            "late_by_ticks",
            |b| b.late_by.into(),
            |b, v| b.late_by = v as u16,
        )
    },
    Bound {
        words: "max deliver {}",
        help: "deliveries before the server stops handing a message out",
        // Above the crashes: fewer deliveries than crashes lose an ask in
        // every design, which would bury the rest (`--range` lowers it).
        swarm: Swarm::Drawn(3, 4),
        ..Bound::count("max_deliver", "max-deliver", |b| b.max_deliver.into(), |b, v| b.max_deliver = v as u8)
    },
    Bound {
        words: "slow answers {}",
        help: "fetches whose answer the network delays past the fetch margin, so it lands after the fetch gave up",
        told: Some(|b| b.slow_answers > 0),
        ..Bound::count("slow_answers", "slow-answers", |b| b.slow_answers.into(), |b, v| b.slow_answers = v as u8)
    },
    Bound {
        words: "lost acks {}",
        help: "finishes whose ack never reaches the server",
        told: Some(|b| b.lost_acks > 0),
        ..Bound::count("lost_acks", "lost-acks", |b| b.lost_acks.into(), |b, v| b.lost_acks = v as u8)
    },
    Bound {
        words: "naks {}",
        help: "reads at which a builder naks the ask instead, the source's one nak path",
        told: Some(|b| b.naks > 0),
        ..Bound::count("naks", "naks", |b| b.naks.into(), |b, v| b.naks = v as u8)
    },
    Bound {
        words: "rewinds {}",
        help: "redeliveries nats-server before 2.10.14 fails to make (the pull request it took one for had just expired), each winding its cursor back so that the last message it handed out new goes out again, counted 1",
        told: Some(|b| b.rewinds > 0),
        ..Bound::count("rewinds", "rewinds", |b| b.rewinds.into(), |b, v| b.rewinds = v as u8)
    },
    Bound {
        words: "ack wait {} s",
        help: "the consumer's ack wait, in seconds",
        swarm: Swarm::Kept,
        told: Some(timings_told),
        ..Bound::seconds(
            "ack_wait",
            "ack-wait",
            "ack_wait_s",
            "ack_wait_ticks",
            |b| b.ack_wait.into(),
            |b, v| b.ack_wait = v as u16,
        )
    },
    Bound {
        words: "heartbeat every {} s",
        help: "a running builder's heartbeat (key put and in-progress) period, in seconds",
        swarm: Swarm::Kept,
        told: Some(timings_told),
        ..Bound::seconds(
            "heartbeat_every",
            "heartbeat-every",
            "heartbeat_every_s",
            "heartbeat_ticks",
            |b| b.heartbeat_every.into(),
            |b, v| b.heartbeat_every = v as u16,
        )
    },
    Bound {
        words: "fresh for {} s",
        help: "a running key counts as fresh for this many seconds, `runningFreshFor`",
        swarm: Swarm::Kept,
        told: Some(timings_told),
        ..Bound::seconds(
            "fresh_for",
            "fresh-for",
            "fresh_for_s",
            "fresh_for_ticks",
            |b| b.fresh_for.into(),
            |b, v| b.fresh_for = v as u16,
        )
    },
];

pub fn options(names: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    for name in names {
        options.set(name).map_err(|e| format!("--option: {e}"))?;
    }
    Ok(options)
}
