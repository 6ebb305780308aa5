//! The properties, judged from what the real run left: the builders' own
//! log of builds started and finished (and the crashes the runner caused),
//! the server's results bucket and whether each ask's message is still in
//! the stream.

use crate::bus::Evidence;
use slotcheck_models::events::link::Event;
use slotcheck_models::events::Record;
use std::collections::BTreeMap;

/// A builder's build of an ask, from its `build_start` to its
/// `build_finish` or its crash (still running: `end` None).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Build {
    pub builder: String,
    pub ask: String,
    pub start_ms: u64,
    pub end_ms: Option<u64>,
}

/// The builds in a log; `crashes` are (builder, ms) the runner caused.
pub fn builds(records: &[Record<Event>], crashes: &[(String, u64)]) -> Vec<Build> {
    let mut builds: Vec<Build> = Vec::new();
    let mut open: BTreeMap<String, usize> = BTreeMap::new();
    // (when, order, a log line or the builder that crashed)
    type Moment<'a> = (u64, usize, Option<&'a Record<Event>>, Option<&'a str>);
    let mut events: Vec<Moment> = records
        .iter()
        .enumerate()
        .map(|(i, r)| (r.ts_ms.unwrap_or(0), i, Some(r), None))
        .collect();
    let n = records.len();
    events.extend(
        crashes
            .iter()
            .enumerate()
            .map(|(i, (b, ms))| (*ms, n + i, None, Some(b.as_str()))),
    );
    events.sort_by_key(|e| (e.0, e.1));
    for (ms, _, record, crashed) in events {
        if let Some(b) = crashed {
            if let Some(i) = open.remove(b) {
                builds[i].end_ms = Some(ms);
            }
            continue;
        }
        let record = record.expect("a record or a crash");
        match &record.event {
            Event::BuildStart { ask } => {
                open.insert(record.actor.clone(), builds.len());
                builds.push(Build {
                    builder: record.actor.clone(),
                    ask: ask.clone(),
                    start_ms: ms,
                    end_ms: None,
                });
            }
            Event::BuildFinish { .. } => {
                if let Some(i) = open.remove(&record.actor) {
                    builds[i].end_ms = Some(ms);
                }
            }
            _ => {}
        }
    }
    builds
}

/// What broke, each with its evidence.
#[derive(Clone, Debug, Default)]
pub struct Violations {
    pub double_runs: Vec<String>,
    pub runs_after_result: Vec<String>,
    pub lost_asks: Vec<String>,
}

impl Violations {
    pub fn of_property(&self, property: &str) -> &[String] {
        match property {
            "no-double-run" => &self.double_runs,
            "no-run-after-result" => &self.runs_after_result,
            "no-lost-ask" | "asks-finish" => &self.lost_asks,
            _ => &[],
        }
    }
    pub fn any(&self) -> bool {
        !(self.double_runs.is_empty()
            && self.runs_after_result.is_empty()
            && self.lost_asks.is_empty())
    }
}

/// Judges a run. `held` lists the asks some builder still holds (buffered,
/// decided or building) at the end; `max_deliver` says when a message still
/// in the stream will never be handed out again; `deliveries` is the most
/// deliveries the server reported per ask.
pub fn judge(
    builds: &[Build],
    records: &[Record<Event>],
    evidence: &Evidence,
    held: &[String],
    deliveries: &BTreeMap<String, u64>,
    max_deliver: u64,
) -> Violations {
    let mut v = Violations::default();
    for (i, a) in builds.iter().enumerate() {
        for b in &builds[i + 1..] {
            let overlaps = a.ask == b.ask
                && a.builder != b.builder
                && a.end_ms.is_none_or(|end| b.start_ms < end);
            if overlaps {
                v.double_runs.push(format!(
                    "{} built by {} from {} ms and by {} from {} ms, at once",
                    a.ask, a.builder, a.start_ms, b.builder, b.start_ms
                ));
            }
        }
    }
    let mut finished: BTreeMap<&str, u64> = BTreeMap::new();
    for r in records {
        match &r.event {
            Event::BuildFinish { ask } => {
                finished.entry(ask).or_insert(r.ts_ms.unwrap_or(0));
            }
            Event::BuildStart { ask } => {
                if let Some(at) = finished.get(ask.as_str()) {
                    v.runs_after_result.push(format!(
                        "{ask} started by {} at {} ms, after its result at {at} ms",
                        r.actor,
                        r.ts_ms.unwrap_or(0)
                    ));
                }
            }
            _ => {}
        }
    }
    for a in &evidence.asks {
        let exhausted = deliveries.get(&a.ask).copied().unwrap_or(0) >= max_deliver;
        let can_come_back = a.in_stream && !exhausted;
        if a.result_by.is_none() && !held.contains(&a.ask) && !can_come_back {
            v.lost_asks.push(format!(
                "{}: no result in the bucket, no builder holds it, and its message is {}",
                a.ask,
                if a.in_stream {
                    "at its last delivery"
                } else {
                    "gone from the stream (acked)"
                }
            ));
        }
    }
    v
}

/// The most deliveries the server reported per ask (its ack subjects, as the
/// log's `server` lines say them).
pub fn deliveries_of(records: &[Record<Event>]) -> BTreeMap<String, u64> {
    let mut most = BTreeMap::new();
    for r in records {
        if let Event::Server {
            ask: Some(ask),
            num_delivered: Some(n),
            ..
        } = &r.event
        {
            let seen = most.entry(ask.clone()).or_insert(0);
            *seen = (*n).max(*seen);
        }
    }
    most
}
