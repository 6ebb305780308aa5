//! The link model's bounds as the tool takes them: the flags, the defaults,
//! the bounds as JSON and in words, and as a scenario file writes them.

use super::bounds::Whole;
use clap::Args;
use serde::Deserialize;
use serde_json::{json, Value};
use slotcheck_models::link::{Bounds, Options};
use slotcheck_models::NamedOptions;
use toml::Spanned;

use super::bounds::whole;
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

/// The link model's bounds (see `docs/link.md`, "Bounds"); each is
/// rejected under `--model stovepipe`. Times in seconds, multiples of 5.
#[derive(Args, Clone, Debug, Default)]
pub struct LinkArgs {
    /// Link: how many asks are published (default 2).
    #[arg(long, value_name = "N", value_parser = whole(0u8, Some(u8::MAX)))]
    pub asks: Option<u8>,
    /// Link: how many builders take asks (default 2).
    #[arg(long, value_name = "N", value_parser = whole(0u8, Some(u8::MAX)))]
    pub builders: Option<u8>,
    /// Link: each builder's clock is off the server's by up to this many seconds, either way (default 35).
    #[arg(long, value_name = "SECONDS", value_parser = whole(0u16, Some(u16::MAX)))]
    pub skew: Option<u16>,
    /// Link: no time passes after this many seconds of server time (default 75).
    #[arg(long, value_name = "SECONDS", value_parser = whole(0u16, Some(u16::MAX)))]
    pub horizon: Option<u16>,
    /// Link: a build takes from 5 s up to this many seconds (default 75).
    #[arg(long, value_name = "SECONDS", value_parser = whole(0u16, Some(u16::MAX)))]
    pub longest_build: Option<u16>,
    /// Link: how many heartbeats may be late (default 1).
    #[arg(long, value_name = "N", value_parser = whole(0u8, Some(u8::MAX)))]
    pub late_heartbeats: Option<u8>,
    /// Link: how late a late heartbeat may be, in seconds (default 10).
    #[arg(long, value_name = "SECONDS", value_parser = whole(0u16, Some(u16::MAX)))]
    pub late_by: Option<u16>,
    /// Link: deliveries before the server stops handing a message out (default 3).
    #[arg(long, value_name = "N", value_parser = whole(0u8, Some(u8::MAX)))]
    pub max_deliver: Option<u8>,
    /// Link: fetches whose answer the network delays past the fetch margin, so it lands after the fetch gave up (default 0).
    #[arg(long, value_name = "N", value_parser = whole(0u8, Some(u8::MAX)))]
    pub slow_answers: Option<u8>,
    /// Link: finishes whose ack never reaches the server (default 0).
    #[arg(long, value_name = "N", value_parser = whole(0u8, Some(u8::MAX)))]
    pub lost_acks: Option<u8>,
    /// Link: reads at which a builder naks the ask instead, the source's one nak path (default 0).
    #[arg(long, value_name = "N", value_parser = whole(0u8, Some(u8::MAX)))]
    pub naks: Option<u8>,
    /// Link: the consumer's ack wait, in seconds (default 60).
    #[arg(long, value_name = "SECONDS", value_parser = whole(0u16, Some(u16::MAX)))]
    pub ack_wait: Option<u16>,
    /// Link: a running builder's heartbeat (key put and in-progress) period, in seconds (default 10).
    #[arg(long, value_name = "SECONDS", value_parser = whole(0u16, Some(u16::MAX)))]
    pub heartbeat_every: Option<u16>,
    /// Link: a running key counts as fresh for this many seconds, `runningFreshFor` (default 25).
    #[arg(long, value_name = "SECONDS", value_parser = whole(0u16, Some(u16::MAX)))]
    pub fresh_for: Option<u16>,
}

impl LinkArgs {
    /// The flags given, for the error under the other model.
    pub fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        let mut note = |set: bool, flag| {
            if set {
                given.push(flag)
            }
        };
        note(self.asks.is_some(), "--asks");
        note(self.builders.is_some(), "--builders");
        note(self.skew.is_some(), "--skew");
        note(self.horizon.is_some(), "--horizon");
        note(self.longest_build.is_some(), "--longest-build");
        note(self.late_heartbeats.is_some(), "--late-heartbeats");
        note(self.late_by.is_some(), "--late-by");
        note(self.max_deliver.is_some(), "--max-deliver");
        note(self.slow_answers.is_some(), "--slow-answers");
        note(self.lost_acks.is_some(), "--lost-acks");
        note(self.naks.is_some(), "--naks");
        note(self.ack_wait.is_some(), "--ack-wait");
        note(self.heartbeat_every.is_some(), "--heartbeat-every");
        note(self.fresh_for.is_some(), "--fresh-for");
        given
    }

    /// The bounds, the defaults where a flag is not given; `crashes` is the
    /// flag both models share.
    pub fn bounds(&self, crashes: Option<u8>) -> Result<Bounds, String> {
        let d = DEFAULT_BOUNDS;
        let b = Bounds {
            asks: self.asks.unwrap_or(d.asks),
            builders: self.builders.unwrap_or(d.builders),
            skew: self.skew.unwrap_or(d.skew),
            horizon: self.horizon.unwrap_or(d.horizon),
            longest_build: self.longest_build.unwrap_or(d.longest_build),
            crashes: crashes.unwrap_or(d.crashes),
            late_heartbeats: self.late_heartbeats.unwrap_or(d.late_heartbeats),
            late_by: self.late_by.unwrap_or(d.late_by),
            max_deliver: self.max_deliver.unwrap_or(d.max_deliver),
            slow_answers: self.slow_answers.unwrap_or(d.slow_answers),
            lost_acks: self.lost_acks.unwrap_or(d.lost_acks),
            naks: self.naks.unwrap_or(d.naks),
            ack_wait: self.ack_wait.unwrap_or(d.ack_wait),
            heartbeat_every: self.heartbeat_every.unwrap_or(d.heartbeat_every),
            fresh_for: self.fresh_for.unwrap_or(d.fresh_for),
        };
        b.validate().map_err(|e| format!("--model link: {e}"))?;
        Ok(b)
    }
}

pub fn options(names: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    for name in names {
        options.set(name).map_err(|e| format!("--option: {e}"))?;
    }
    Ok(options)
}

/// The fault budgets the contract's reading leaves at zero, as JSON keys,
/// words and flags; each is told only where it is not zero, so that every
/// output of the contract's reading stays as it was.
pub(super) fn extra_faults(b: &Bounds) -> Vec<(&'static str, &'static str, &'static str, u8)> {
    [
        (
            "slow_answers",
            "slow answers",
            "--slow-answers",
            b.slow_answers,
        ),
        ("lost_acks", "lost acks", "--lost-acks", b.lost_acks),
        ("naks", "naks", "--naks", b.naks),
    ]
    .into_iter()
    .filter(|f| f.3 > 0)
    .collect()
}

/// The timing bounds as JSON keys, words and flags, each in seconds; told
/// only where they are not the source's, as the budgets above.
pub(super) fn timings(b: &Bounds) -> Vec<(&'static str, &'static str, &'static str, u16)> {
    if b.timings_are_the_sources() {
        return Vec::new();
    }
    vec![
        ("ack_wait_s", "ack wait", "--ack-wait", b.ack_wait),
        (
            "heartbeat_every_s",
            "heartbeat every",
            "--heartbeat-every",
            b.heartbeat_every,
        ),
        ("fresh_for_s", "fresh for", "--fresh-for", b.fresh_for),
    ]
}

pub fn bounds_json(bounds: &Bounds, options: &Options) -> Value {
    let mut value = bounds_json_of_contract(bounds, options);
    for (key, _, _, n) in extra_faults(bounds) {
        value[key] = json!(n);
    }
    for (key, _, _, s) in timings(bounds) {
        value[key] = json!(s);
    }
    value
}

fn bounds_json_of_contract(bounds: &Bounds, options: &Options) -> Value {
    json!({
        "model": "link",
        "asks": bounds.asks,
        "builders": bounds.builders,
        "skew_s": bounds.skew,
        "horizon_s": bounds.horizon,
        "longest_build_s": bounds.longest_build,
        "crashes": bounds.crashes,
        "late_heartbeats": bounds.late_heartbeats,
        "late_by_s": bounds.late_by,
        "max_deliver": bounds.max_deliver,
        "options": options.names(),
    })
}

/// `asks 2, builders 2, skew 35 s, ...` for headings.
pub fn bounds_line(b: &Bounds, options: &Options) -> String {
    let mut line = format!(
        "asks {}, builders {}, skew {} s, horizon {} s, longest build {} s, crashes {}, late heartbeats {} (by up to {} s), max deliver {}",
        b.asks, b.builders, b.skew, b.horizon, b.longest_build, b.crashes, b.late_heartbeats, b.late_by, b.max_deliver
    );
    for (_, words, _, n) in extra_faults(b) {
        line.push_str(&format!(", {words} {n}"));
    }
    for (_, words, _, s) in timings(b) {
        line.push_str(&format!(", {words} {s} s"));
    }
    for option in options.names() {
        line.push_str(&format!(", option {option}"));
    }
    line
}

/// The link model's bounds as a scenario writes them, in seconds where the
/// command line takes seconds; all required, as for stovepipe. Spanned so
/// that an error (out of its type, or one `link::Bounds::validate` gives)
/// points at the value.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioBounds {
    pub(super) asks: Spanned<Whole>,
    pub(super) builders: Spanned<Whole>,
    pub(super) skew: Spanned<Whole>,
    pub(super) horizon: Spanned<Whole>,
    pub(super) longest_build: Spanned<Whole>,
    pub(super) crashes: Spanned<Whole>,
    pub(super) late_heartbeats: Spanned<Whole>,
    pub(super) late_by: Spanned<Whole>,
    pub(super) max_deliver: Spanned<Whole>,
    /// The fault budgets beyond the contract, zero when left out.
    #[serde(default)]
    pub(super) slow_answers: Option<Spanned<Whole>>,
    #[serde(default)]
    pub(super) lost_acks: Option<Spanned<Whole>>,
    #[serde(default)]
    pub(super) naks: Option<Spanned<Whole>>,
    /// The timings in seconds, the source's when left out.
    #[serde(default)]
    pub(super) ack_wait: Option<Spanned<Whole>>,
    #[serde(default)]
    pub(super) heartbeat_every: Option<Spanned<Whole>>,
    #[serde(default)]
    pub(super) fresh_for: Option<Spanned<Whole>>,
}
