//! A link event log read against the link model: each model step logs a
//! few lines, read off the records it leaves (see [`observe`]), a logged line is the next line of one
//! builder's step, and time is the log's `ts_ms` mapped onto the model's
//! ticks with a slack (docs/validate.md, *Link*). The cursor carries what
//! the state does not keep: when each key was last put (for its TTL and its
//! age), the lines each builder's last step has yet to log, and the late
//! answers that reached a builder and that it has not yet logged.

mod matching;
mod observe;
mod order;
mod simulated;

pub use simulated::{simulated_log, streams, Line};

use super::log::Record as Step;
use observe::observe;
pub use observe::Observation;

use super::{
    ask_name, builder_name, Action, Ask, Bid, Bounds, Design, Link, Log, Options, State,
    BUFFER_ROOM, MAX_ASKS, MAX_BUILDERS, TICK_SECONDS,
};
use crate::events::link::{Decision, Event};
use crate::events::{Header, Record};
use crate::Inline;
use stateright::Model;
use std::collections::HashMap;

/// How far (in percent of a tick) a line's model time may be from its
/// `ts_ms`, either way: a real step lands anywhere in a tick, and its timers
/// start there, while the model's start at a tick.
pub const SLACK_PERCENT: u64 = 40;
/// How far, in ticks, a logged key age may be from the model's: a put and a
/// get each off by up to a tick and the slack.
pub const AGE_SLACK_TICKS: i64 = 2;
/// Silent steps other than ticks before one line.
const SILENT_PER_LINE: usize = 4;
/// Lines one step may log.
const STEP_LINES: usize = 8;

/// A candidate: a model state and what matching needs beyond it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cursor {
    state: State,
    /// The tick of each ask's last put, while its key exists.
    put_at: [Option<u8>; MAX_ASKS as usize],
    /// Each builder's lines still to come from its last step.
    pending: [Inline<Observation, STEP_LINES>; MAX_BUILDERS as usize],
    /// Late answers in each builder's subscription, not yet logged (it
    /// logs them when it next fetches or reads), each with the delivery
    /// count it carries and its place in the consumer's delivery sequence.
    landed: [Inline<(Ask, u8, u16), BUFFER_ROOM>; MAX_BUILDERS as usize],
    /// The delivery count and the consumer's sequence of the answer on the
    /// way to each builder: the server counted it when it answered, and may
    /// deliver the message again before the builder logs it.
    answering: [(u8, u16); MAX_BUILDERS as usize],
    /// The message each builder's last line logged it got (a fetch's, a
    /// late answer's), with its delivery count and sequence: the `server`
    /// line after it says those, not the message's count now.
    late: [Option<(Ask, u8, u16)>; MAX_BUILDERS as usize],
    /// The consumer's deliveries less the counts the state keeps: a
    /// delivery made as new counts nothing, a failed redelivery counts
    /// without a delivery (`--rewinds`).
    uncounted: i16,
}

/// Why a stream's log cannot be read against the model: a bad log (exit
/// 2), or a run beyond what the model holds (inconclusive, exit 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceError {
    Bad { line: usize, message: String },
    Beyond { line: usize, message: String },
}

/// One stream's log, ready to be validated against one design.
pub struct LinkTrace {
    model: Link,
    events: Vec<(usize, Record<Event>)>,
    /// The log's ask IDs in the order of their `publish` lines: A1, A2, ...
    asks: Vec<String>,
    ask_index: HashMap<String, Ask>,
    /// The log's builder ids in the order they first act: b1, b2, ...
    builders: Vec<String>,
    builder_index: HashMap<String, Bid>,
    ms_per_tick: u64,
    /// Each line's ticks: the earliest and the latest model time it may be at.
    windows: Vec<(u8, u8)>,
    /// Each builder's lines, by index, in order.
    lines_of: Vec<Vec<usize>>,
    /// Whether each builder's clock offset can change what it decides (it
    /// reads another builder's key, and the design judges freshness by its
    /// clock): only those are tried at each offset within the skew.
    clocked: Vec<bool>,
    /// Which process wrote each line ([`order`]).
    processes: order::Processes,
    /// The header's `order_slack_ms`.
    order_slack_ms: Option<u64>,
}

impl LinkTrace {
    /// The model for one stream's lines: asks from the `publish` lines,
    /// builders from the actors, `max_deliver` and the time scale from the
    /// header, fault budgets from the lines that can show each fault, and
    /// each builder's clock offset open within the header's `skew_s`.
    pub fn new(
        design: &'static Design,
        options: Options,
        header: &Header,
        events: Vec<(usize, Record<Event>)>,
    ) -> Result<LinkTrace, TraceError> {
        let first = events.first().map_or(1, |(line, _)| *line);
        // Lines of several processes: read in the order of their times,
        // the publishes first; the search infers the rest.
        let several = order::several(&events);
        let events = if several {
            order::by_time(events)
        } else {
            events
        };
        let bad = |line: usize, message: String| TraceError::Bad { line, message };
        let max_deliver = header.max_deliver.ok_or_else(|| {
            bad(first, "field `max_deliver` is missing from the header line (the stream's configuration; validate reads no flags for it)".into())
        })?;
        let timed = events.iter().any(|(_, r)| r.ts_ms.is_some());
        let ms_per_tick = match header.ms_per_tick {
            Some(0) => return Err(bad(first, "header: field `ms_per_tick` must be at least 1".into())),
            Some(ms) => ms,
            None if timed => return Err(bad(first, "field `ms_per_tick` is missing from the header line (it maps `ts_ms` to the model's 5 s ticks)".into())),
            None => 5000,
        };
        let mut asks = Vec::new();
        let mut ask_index = HashMap::new();
        let mut builders: Vec<String> = Vec::new();
        let mut builder_index = HashMap::new();
        let mut lines_of: Vec<Vec<usize>> = Vec::new();
        let (mut fetches, mut empty, mut beats, mut finishes, mut naks) = (0usize, 0, 0, 0, 0);
        let mut starts = 0usize;
        // The builders whose clock can change a decision: those that read
        // another builder's key.
        let mut judged: Vec<String> = Vec::new();
        for (k, (line, record)) in events.iter().enumerate() {
            let ask = match &record.event {
                Event::Publish { ask } => {
                    if !builders.is_empty() {
                        return Err(TraceError::Beyond { line: *line, message: "an ask published after a builder acted: the link model publishes every ask at its start".into() });
                    }
                    if ask_index.contains_key(ask) {
                        return Err(bad(*line, format!("field `ask`: {ask} is published twice")));
                    }
                    if asks.len() == MAX_ASKS as usize {
                        return Err(TraceError::Beyond {
                            line: *line,
                            message: format!(
                                "more than {MAX_ASKS} asks on one stream, the most the model holds"
                            ),
                        });
                    }
                    ask_index.insert(ask.clone(), asks.len() as Ask);
                    asks.push(ask.clone());
                    continue;
                }
                Event::Server { ask, .. } => ask.clone(),
                Event::Fetch { got } => got.clone(),
                Event::LateAnswer { ask }
                | Event::Take { ask }
                | Event::KvGet { ask, .. }
                | Event::Put { ask }
                | Event::Heartbeat { ask }
                | Event::Ack { ask }
                | Event::Nak { ask }
                | Event::BuildStart { ask }
                | Event::BuildFinish { ask }
                | Event::KvDelete { ask } => Some(ask.clone()),
            };
            if let Some(ask) = ask.filter(|a| !ask_index.contains_key(a)) {
                return Err(bad(
                    *line,
                    format!("field `ask`: {ask} was never published"),
                ));
            }
            match &record.event {
                Event::Server { .. } => continue,
                Event::Fetch { got } => {
                    fetches += 1;
                    empty += usize::from(got.is_none());
                }
                Event::Heartbeat { .. } => beats += 1,
                Event::BuildStart { .. } => starts += 1,
                Event::KvGet {
                    found: true,
                    builder,
                    ..
                } if builder.as_ref() != Some(&record.actor) => judged.push(record.actor.clone()),
                Event::BuildFinish { .. } => finishes += 1,
                Event::Nak { .. } => naks += 1,
                _ => {}
            }
            let b = *builder_index
                .entry(record.actor.clone())
                .or_insert_with(|| {
                    builders.push(record.actor.clone());
                    lines_of.push(Vec::new());
                    builders.len() as Bid - 1
                });
            if builders.len() > MAX_BUILDERS as usize {
                return Err(TraceError::Beyond {
                    line: *line,
                    message: format!(
                        "more than {MAX_BUILDERS} builders on one stream, the most the model holds"
                    ),
                });
            }
            lines_of[b as usize].push(k);
        }
        if asks.is_empty() {
            return Err(bad(
                first,
                "no `publish` line: the model needs the asks".into(),
            ));
        }
        let delay = header.network_delay_ms.unwrap_or(0);
        let windows = if several {
            Self::windows_of_processes(&events, ms_per_tick, delay)?
        } else {
            Self::windows(&events, ms_per_tick, delay)?
        };
        // The horizon from the last timed line: an untimed line may be at
        // any tick and says nothing of how long the log runs (a log of no
        // timed line gets the most the model holds).
        let last = windows
            .iter()
            .zip(&events)
            .filter(|(_, (_, record))| record.ts_ms.is_some())
            .map(|(w, _)| w.1)
            .max()
            // 239: the last tick of `windows`' horizon of 240.
            .unwrap_or(239)
            .min(239);
        let cap = |n: usize| n.min(u8::MAX as usize) as u8;
        let rewinds = match &header.nats_server {
            None => false,
            Some(version) => fails_redeliveries(version).ok_or_else(|| {
                bad(
                    first,
                    format!("header: field `nats_server`: `{version}` is not a version (2.9.10)"),
                )
            })?,
        };
        let timings = Bounds::default();
        let margin = Link {
            options,
            ..Link::new(design, Bounds::default())
        }
        .has_margin();
        let bounds = Bounds {
            asks: asks.len() as u8,
            builders: builders.len().max(1) as u8,
            skew: header.skew_s.unwrap_or(0),
            horizon: (last as u16 + 1) * TICK_SECONDS,
            longest_build: 1200,
            crashes: cap(fetches),
            // A heartbeat may be late and the build end before it; by no
            // more than the header says (else by as much as the model holds).
            late_heartbeats: if header.heartbeat_late_s == Some(0) {
                0
            } else {
                cap(beats + starts)
            },
            late_by: header.heartbeat_late_s.filter(|&s| s > 0).unwrap_or(600),
            max_deliver,
            slow_answers: if margin { cap(empty) } else { 0 },
            lost_acks: if design.finish_ack.sync() {
                0
            } else {
                cap(finishes)
            },
            naks: cap(naks),
            rewinds: if rewinds { cap(fetches) } else { 0 },
            ack_wait: header.ack_wait_s.unwrap_or(timings.ack_wait),
            heartbeat_every: header.heartbeat_every_s.unwrap_or(timings.heartbeat_every),
            fresh_for: header.fresh_for_s.unwrap_or(timings.fresh_for),
        };
        bounds
            .validate()
            .map_err(|message| bad(first, format!("header: {message}")))?;
        let mut model = Link::new(design, bounds);
        model.options = options;
        let clocked = builders
            .iter()
            .map(|b| design.check.on_builder_clock() && judged.contains(b))
            .collect();
        let builder_of = |k: usize| match &events[k].1.event {
            Event::Publish { .. } | Event::Server { .. } => None,
            _ => builder_index.get(&events[k].1.actor).copied(),
        };
        let processes = order::Processes::of(&events, builders.len(), builder_of, |ask| {
            ask_index.get(ask).copied()
        });
        Ok(LinkTrace {
            processes,
            order_slack_ms: header.order_slack_ms,
            clocked,
            model,
            events,
            asks,
            ask_index,
            builders,
            builder_index,
            ms_per_tick,
            windows,
            lines_of,
        })
    }

    /// Each line's window of ticks: its `ts_ms` (never earlier than the
    /// line before's) from the first line's, in ticks, give or take the
    /// slack. A line without a time may be at any tick.
    fn windows(
        events: &[(usize, Record<Event>)],
        ms_per_tick: u64,
        network_delay_ms: u64,
    ) -> Result<Vec<(u8, u8)>, TraceError> {
        let origin = events.iter().find_map(|(_, r)| r.ts_ms).unwrap_or(0);
        let slack = ms_per_tick * SLACK_PERCENT / 100 + network_delay_ms;
        let mut latest = 0u64;
        let mut windows = Vec::with_capacity(events.len());
        let horizon = 240u64;
        for (line, record) in events {
            let Some(ts) = record.ts_ms else {
                windows.push((0, horizon as u8));
                continue;
            };
            latest = latest.max(ts.saturating_sub(origin));
            let hi = (latest + slack) / ms_per_tick;
            if hi >= horizon {
                return Err(Self::past_horizon(*line, horizon));
            }
            let lo = latest.saturating_sub(slack) / ms_per_tick;
            windows.push((lo as u8, hi as u8));
        }
        Ok(windows)
    }

    /// Each line's window of ticks in a log of several processes (in the
    /// order of [`order::by_time`]): as [`LinkTrace::windows`], from the
    /// earliest time of the log, each line's time never earlier than its
    /// process's line before's; a `publish` at the start, where the model
    /// publishes.
    fn windows_of_processes(
        events: &[(usize, Record<Event>)],
        ms_per_tick: u64,
        network_delay_ms: u64,
    ) -> Result<Vec<(u8, u8)>, TraceError> {
        let origin = events
            .iter()
            .filter_map(|(_, r)| r.ts_ms)
            .min()
            .unwrap_or(0);
        let slack = ms_per_tick * SLACK_PERCENT / 100 + network_delay_ms;
        let mut latest: HashMap<&Option<String>, u64> = HashMap::new();
        let mut windows = Vec::with_capacity(events.len());
        let horizon = 240u64;
        for (line, record) in events {
            let ts = match (&record.event, record.ts_ms) {
                (Event::Publish { .. }, _) => {
                    windows.push((0, 0));
                    continue;
                }
                (_, None) => {
                    windows.push((0, horizon as u8));
                    continue;
                }
                (_, Some(ts)) => ts - origin,
            };
            let at = latest.entry(&record.process).or_default();
            *at = (*at).max(ts);
            let hi = (*at + slack) / ms_per_tick;
            if hi >= horizon {
                return Err(Self::past_horizon(*line, horizon));
            }
            let lo = at.saturating_sub(slack) / ms_per_tick;
            windows.push((lo as u8, hi as u8));
        }
        Ok(windows)
    }

    fn past_horizon(line: usize, horizon: u64) -> TraceError {
        TraceError::Beyond {
            line,
            message: format!(
                "the log runs past {} ticks ({} s of the source's time), the model's horizon",
                horizon,
                horizon * TICK_SECONDS as u64
            ),
        }
    }

    fn builder_of_line(&self, k: usize) -> Option<Bid> {
        let record = &self.events[k].1;
        match record.event {
            Event::Publish { .. } | Event::Server { .. } => None,
            _ => self.builder_index.get(&record.actor).copied(),
        }
    }

    /// Takes `action`: the cursor after it and the lines it logs.
    fn take(&self, c: &Cursor, action: Action) -> (Cursor, Vec<Observation>) {
        let mut log = Log::recording();
        let next = self.model.apply(&c.state, action, &mut log);
        let records = log.records();
        let lines = observe(&records, c.state.now, &c.put_at);
        let mut n = c.clone();
        // The count the delivery this step made carries: a message handed
        // out again as new says 1, whatever the server keeps.
        let mut count = None;
        for record in &records {
            match *record {
                Step::Fetch { delivery, .. }
                | Step::FetchGivesUp { delivery, .. }
                | Step::Answer { delivery, .. } => count = Some(delivery),
                Step::AsNew { .. } => n.uncounted += 1,
                Step::Rewind { .. } => n.uncounted -= 1,
                _ => {}
            }
        }
        let seq = (delivered(&next) as i16 + n.uncounted) as u16;
        for (a, key) in next.keys.iter().enumerate() {
            match key {
                None => n.put_at[a] = None,
                Some(k) if k.age == 0 && action != Action::Tick => n.put_at[a] = Some(next.now),
                Some(_) => {}
            }
        }
        match action {
            Action::Crash(b) => n.landed[b as usize].clear(),
            Action::FetchLate(b) | Action::SlowAnswer(b) | Action::Answer(b) => {
                if let Some(a) = next.builders[b as usize].on_the_way {
                    let count = count.unwrap_or(next.messages[a as usize].deliveries);
                    n.answering[b as usize] = (count, seq);
                }
            }
            // The `server` line after a fetch says the delivery it got.
            Action::Fetch(b) => {
                if let Some(&a) = next.builders[b as usize].buffer.last() {
                    let count = count.unwrap_or(next.messages[a as usize].deliveries);
                    n.late[b as usize] = Some((a, count, seq));
                }
            }
            Action::FetchEarlier(b) => {
                if let Some(&a) = next.builders[b as usize].buffer.last() {
                    let (count, seq) = c.answering[b as usize];
                    n.late[b as usize] = Some((a, count, seq));
                }
            }
            _ => {}
        }
        n.state = next;
        (n, lines)
    }

    /// Whether a line of builder `b` says what an observation does. A key's
    /// age is compared within the slack, and within the skew too for a
    /// builder whose offset is not tried (its age of its own key is on its
    /// own clock, but decides nothing).
    fn agrees(&self, b: Bid, o: &Observation, event: &Event) -> bool {
        let slack = AGE_SLACK_TICKS
            + if self.clocked[b as usize] {
                0
            } else {
                self.model.bounds.skew_ticks() as i64
            };
        let is = |a: &Ask, name: &String| self.asks.get(*a as usize) == Some(name);
        match (o, event) {
            (Observation::FetchEmpty, Event::Fetch { got: None }) => true,
            (Observation::Fetch(a), Event::Fetch { got: Some(n) })
            | (Observation::Take(a), Event::Take { ask: n })
            | (Observation::Put(a), Event::Put { ask: n })
            | (Observation::BuildStart(a), Event::BuildStart { ask: n })
            | (Observation::Heartbeat(a), Event::Heartbeat { ask: n })
            | (Observation::BuildFinish(a), Event::BuildFinish { ask: n })
            | (Observation::Ack(a), Event::Ack { ask: n })
            | (Observation::Nak(a), Event::Nak { ask: n })
            | (Observation::KvDelete(a), Event::KvDelete { ask: n }) => is(a, n),
            (
                Observation::KvGet { ask, found, drop },
                Event::KvGet {
                    ask: n,
                    found: f,
                    builder,
                    age_ms,
                    decision,
                },
            ) => {
                let decided = if *drop { Decision::Drop } else { Decision::Run };
                let key = match found {
                    None => !f,
                    Some((kb, age)) => {
                        let near = |ms: &u64| {
                            (*ms as i64 - *age as i64 * self.ms_per_tick as i64).abs()
                                <= slack * self.ms_per_tick as i64
                        };
                        *f && builder
                            .as_ref()
                            .is_none_or(|name| self.builders.get(*kb as usize) == Some(name))
                            && age_ms.as_ref().is_none_or(near)
                    }
                };
                is(ask, n) && *decision == decided && key
            }
            _ => false,
        }
    }

    /// An observation as the line a builder would log.
    fn event_of(&self, o: &Observation) -> Event {
        let name = |a: &Ask| {
            self.asks
                .get(*a as usize)
                .cloned()
                .unwrap_or_else(|| ask_name(*a))
        };
        match o {
            Observation::FetchEmpty => Event::Fetch { got: None },
            Observation::Fetch(a) => Event::Fetch { got: Some(name(a)) },
            Observation::Take(a) => Event::Take { ask: name(a) },
            Observation::KvGet { ask, found, drop } => Event::KvGet {
                ask: name(ask),
                found: found.is_some(),
                builder: found.map(|(b, _)| self.builder_name(b)),
                age_ms: found.map(|(_, age)| (age.max(0) as u64) * self.ms_per_tick),
                decision: if *drop { Decision::Drop } else { Decision::Run },
            },
            Observation::Put(a) => Event::Put { ask: name(a) },
            Observation::BuildStart(a) => Event::BuildStart { ask: name(a) },
            Observation::Heartbeat(a) => Event::Heartbeat { ask: name(a) },
            Observation::BuildFinish(a) => Event::BuildFinish { ask: name(a) },
            Observation::Ack(a) => Event::Ack { ask: name(a) },
            Observation::Nak(a) => Event::Nak { ask: name(a) },
            Observation::KvDelete(a) => Event::KvDelete { ask: name(a) },
        }
    }

    fn builder_name(&self, b: Bid) -> String {
        self.builders
            .get(b as usize)
            .cloned()
            .unwrap_or_else(|| builder_name(b))
    }

    fn render(&self, actor: &str, event: Event) -> String {
        let record = Record {
            model: None,
            queue: String::new(),
            ts_ms: None,
            process: None,
            seq: None,
            actor: actor.to_string(),
            event,
        };
        serde_json::to_string(&record).expect("an event is JSON")
    }

    /// The index of `b`'s first line from index `k` on.
    fn next_line_of(&self, b: Bid, k: usize) -> Option<usize> {
        let lines = &self.lines_of[b as usize];
        lines.get(lines.partition_point(|&i| i < k)).copied()
    }

    /// Whether a builder whose next line is `next` may have crashed before
    /// it: only when it is a fetch or there is none (a builder restarts
    /// idle, and an idle builder's first line is a fetch).
    fn may_have_crashed(&self, next: Option<usize>) -> bool {
        next.is_none_or(|i| matches!(self.events[i].1.event, Event::Fetch { .. }))
    }

    /// The steps of `b` the model allows in `c`, with what they log.
    fn steps_of(&self, c: &Cursor, b: Bid) -> Vec<(Action, Cursor, Vec<Observation>)> {
        let mut enabled = Vec::new();
        self.model.actions(&c.state, &mut enabled);
        enabled
            .into_iter()
            .filter(|&a| a.builder() == Some(b))
            .filter(|a| !matches!(a, Action::Crash(_) | Action::Delay(_)))
            .map(|a| {
                let (n, lines) = self.take(c, a);
                (a, n, lines)
            })
            .filter(|(_, _, lines)| !lines.is_empty())
            .collect()
    }
}

/// Whether a nats-server of `version` may fail a redelivery and wind its
/// cursor back (before 2.10.14, nats-server PR #5305); `None`: not a
/// version. Anything after the three numbers (`-RC.1`, `+b3`) is ignored.
pub fn fails_redeliveries(version: &str) -> Option<bool> {
    let version = version.trim().trim_start_matches('v');
    let core = version.split(['-', '+', ' ']).next()?;
    let numbers: Vec<u32> = core
        .split('.')
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    let [major, minor, patch] = numbers[..] else {
        return None;
    };
    Some((major, minor, patch) < (2, 10, 14))
}

/// Every delivery the consumer has made: its delivery sequence so far.
fn delivered(s: &State) -> u16 {
    s.messages.iter().map(|m| m.deliveries as u16).sum()
}

/// A step that reads the builder's subscription first (a fetch or a read),
/// which logs every late answer there before it.
fn drains(action: Action) -> bool {
    matches!(
        action,
        Action::Fetch(_)
            | Action::FetchLate(_)
            | Action::FetchEarlier(_)
            | Action::SlowAnswer(_)
            | Action::Take(_)
            | Action::Read(_)
            | Action::Nak(_)
            // Only a fetch's rewind logs a line (its fetch, empty).
            | Action::Rewind(_)
    )
}
