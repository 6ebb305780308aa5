//! A link log in each process's own order (a file per builder, the
//! client's publishes in one of their own): which lines are of which
//! process, and what orders lines across processes. The search
//! (`src/validate`) takes each process's lines in order and tries every
//! order across processes that is left; a line's window of ticks still
//! holds, so lines further apart in time than their windows stay in order.
//!
//! What orders lines of different processes, each only where every
//! explanation that takes each line at its step keeps it (a builder's
//! lines are in the order of its steps; a step of the model is at its
//! lines' times, within the slack):
//!
//! - every `publish` before every other line: the model publishes every
//!   ask at its start, and a `publish` takes no step;
//! - a builder's first `put` of an ask before every `kv_get` of another
//!   builder that found the ask's key naming it: the key was there.
//!
//! Not ordered, though the server orders them: the deliveries of an ask
//! (its `num_delivered`) and the consumer's sequence (`consumer_seq`). The
//! line that reports a delivery may be written long after it (a late
//! answer is logged at the builder's next read; nats.go's fetch returns
//! an earlier pull request's answer), after lines of a later delivery;
//! the model checks both against its own deliveries, which is where they
//! order steps. Nor the KV's other operations: the log carries no
//! revisions, and a key not found may be before a put or after a delete.

use super::Line;
use super::LinkTrace;
use crate::events::link::Event;
use crate::events::Record;
use crate::link::{Ask, Bid};
use crate::OrderValue;
use std::collections::HashMap;

/// The keys: the publishes, and each (ask, builder) key history.
const PUBLISHES: u64 = 0;
fn running_key(a: Ask, b: Bid) -> u64 {
    0x100 + ((a as u64) << 8) + b as u64
}

/// Which process wrote each line, when a log names several.
#[derive(Clone, Debug, Default)]
pub(super) struct Processes {
    /// The lines name more than one process (`process`, or the files of a
    /// merge): their order across processes is inferred.
    pub several: bool,
    /// Each process's lines, by index, in order.
    pub lines: Vec<Vec<usize>>,
    /// Each line's process.
    pub of: Vec<u32>,
    /// Whether each builder's lines are all in one process.
    pub alone: Vec<bool>,
    /// Whether each builder's process also holds another builder's lines:
    /// then that process logs its builders' steps in the order their calls
    /// returned, and a step may be taken before a line of the other
    /// builder written before its own (the look-ahead of one order).
    pub shared: Vec<bool>,
    /// The index of each builder's first `put` of each ask, for a builder
    /// whose lines are all in one process.
    pub first_put: HashMap<(Ask, Bid), usize>,
}

/// Whether the lines name more than one process.
pub(super) fn several<E>(events: &[(usize, Record<E>)]) -> bool {
    events.iter().any(|(_, r)| r.process != events[0].1.process)
}

/// A log of several processes in the order the search reads it: the
/// publishes first (the model publishes at its start), then every line by
/// its process's latest time so far (a process's clock never goes back),
/// each process's lines in their order. The line numbers go with them.
pub(super) fn by_time(events: Vec<Line>) -> Vec<Line> {
    let mut latest: HashMap<Option<String>, u64> = HashMap::new();
    let mut keyed: Vec<((bool, u64), Line)> = events
        .into_iter()
        .map(|(line, r)| {
            let at = latest.entry(r.process.clone()).or_default();
            *at = (*at).max(r.ts_ms.unwrap_or(0));
            ((!matches!(r.event, Event::Publish { .. }), *at), (line, r))
        })
        .collect();
    // A stable sort: lines of one key keep their order.
    keyed.sort_by_key(|(key, _)| *key);
    keyed.into_iter().map(|(_, e)| e).collect()
}

impl Processes {
    /// The processes of `events` (in the search's order), their builders
    /// numbered by `builder_of`.
    pub(super) fn of(
        events: &[(usize, Record<Event>)],
        builders: usize,
        builder_of: impl Fn(usize) -> Option<Bid>,
        ask_of: impl Fn(&str) -> Option<Ask>,
    ) -> Processes {
        let mut names: HashMap<Option<&str>, u32> = HashMap::new();
        let mut lines: Vec<Vec<usize>> = Vec::new();
        let mut of = Vec::with_capacity(events.len());
        for (k, (_, r)) in events.iter().enumerate() {
            let next = names.len() as u32;
            let p = *names.entry(r.process.as_deref()).or_insert(next);
            if p as usize == lines.len() {
                lines.push(Vec::new());
            }
            lines[p as usize].push(k);
            of.push(p);
        }
        // Each builder's processes, and each process's builders.
        let mut processes_of: Vec<Vec<u32>> = vec![Vec::new(); builders];
        let mut builders_in: Vec<Vec<Bid>> = vec![Vec::new(); lines.len()];
        for (k, &p) in of.iter().enumerate() {
            if let Some(b) = builder_of(k) {
                if !processes_of[b as usize].contains(&p) {
                    processes_of[b as usize].push(p);
                }
                if !builders_in[p as usize].contains(&b) {
                    builders_in[p as usize].push(b);
                }
            }
        }
        let alone: Vec<bool> = processes_of.iter().map(|ps| ps.len() <= 1).collect();
        let shared = processes_of
            .iter()
            .map(|ps| ps.iter().any(|&p| builders_in[p as usize].len() > 1))
            .collect();
        let mut first_put = HashMap::new();
        for (k, (_, r)) in events.iter().enumerate() {
            if let (Event::Put { ask }, Some(b)) = (&r.event, builder_of(k)) {
                if let (Some(a), true) = (ask_of(ask), alone[b as usize]) {
                    first_put.entry((a, b)).or_insert(k);
                }
            }
        }
        Processes {
            several: lines.len() > 1,
            lines,
            of,
            alone,
            shared,
            first_put,
        }
    }
}

impl LinkTrace {
    /// What orders line `k` against other processes' lines.
    pub(super) fn order_values(&self, k: usize, out: &mut Vec<OrderValue>) {
        let record = &self.events[k].1;
        if let Event::Publish { .. } = record.event {
            out.push(OrderValue::at(PUBLISHES, 0));
            return;
        }
        out.push(OrderValue::at(PUBLISHES, 1));
        // The key's history on (ask, builder), and that builder's first put.
        let first_put = |ask: &str, name: &str| {
            let a = *self.ask_index.get(ask)?;
            let b = *self.builder_index.get(name)?;
            let at = *self.processes.first_put.get(&(a, b))?;
            Some((running_key(a, b), at))
        };
        match &record.event {
            Event::Put { ask } => {
                if let Some((key, at)) = first_put(ask, &record.actor) {
                    if at == k {
                        out.push(OrderValue::at(key, 0));
                    }
                }
            }
            Event::KvGet {
                ask,
                found: true,
                builder: Some(name),
                ..
            } => {
                if let Some((key, _)) = first_put(ask, name) {
                    out.push(OrderValue::at(key, 1));
                }
            }
            _ => {}
        }
    }

    /// The index of builder `b`'s first line still to come (`pending`).
    pub(super) fn next_pending(&self, b: Bid, pending: &dyn Fn(usize) -> bool) -> Option<usize> {
        let lines = &self.lines_of[b as usize];
        if self.processes.alone[b as usize] {
            // One process: its lines taken are a prefix of them.
            lines.get(lines.partition_point(|&j| !pending(j))).copied()
        } else {
            lines.iter().copied().find(|&j| pending(j))
        }
    }

    /// Builder `b`'s next line, when another line of its process comes
    /// before it: the line a step of `b` taken now would log later.
    pub(super) fn ahead_of(&self, b: Bid, pending: &dyn Fn(usize) -> bool) -> Option<usize> {
        if !self.processes.shared[b as usize] {
            return None;
        }
        let j = self.next_pending(b, pending)?;
        let lines = &self.processes.lines[self.processes.of[j] as usize];
        let first = lines[lines.partition_point(|&i| !pending(i))];
        (first != j).then_some(j)
    }
}
