//! A real row's version is whatever it is: the first line that shows a row
//! fixes the version it had then, and only differences count after it. The
//! log's versions are moved onto the model's numbering (the queue row at 1,
//! a request row inserted at 1, each write that wins adds one) once, before
//! matching, and the model's back onto the log's when a report shows them.

use crate::events::stovepipe::{Event, RowName};
use std::collections::HashMap;

/// A row, by the log's names: the queue row, or a request's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Row {
    Queue,
    Request(String),
}

/// Each version an event shows, with its row, in the event's own order.
pub(super) fn each_version(event: &mut Event, mut f: impl FnMut(Row, &mut u64)) {
    let row_of = |row: RowName, request: &Option<String>| match row {
        RowName::Queue => Row::Queue,
        RowName::Request => Row::Request(request.clone().unwrap_or_default()),
    };
    match event {
        Event::Read {
            request, queue_row, ..
        } => {
            f(Row::Request(request.id.clone()), &mut request.version);
            f(Row::Queue, &mut queue_row.version);
        }
        Event::ReadRequest { request } | Event::RereadRequest { request } => {
            f(Row::Request(request.id.clone()), &mut request.version)
        }
        Event::ReadQueue { queue_row } | Event::RereadQueue { queue_row } => {
            f(Row::Queue, &mut queue_row.version)
        }
        Event::Cas {
            row,
            request,
            expected_version,
            ..
        } => f(row_of(*row, request), expected_version),
        Event::Transaction { writes, .. } => {
            for w in writes {
                f(row_of(w.row, &w.request), &mut w.expected_version)
            }
        }
        Event::Reap {
            expected_version, ..
        } => f(Row::Queue, expected_version),
        _ => {}
    }
}

/// The rows an event's write that won moved on by one.
pub(super) fn written(event: &Event) -> Vec<Row> {
    match event {
        Event::Cas {
            row,
            request,
            won: true,
            ..
        } => vec![match row {
            RowName::Queue => Row::Queue,
            RowName::Request => Row::Request(request.clone().unwrap_or_default()),
        }],
        Event::Transaction {
            writes, won: true, ..
        } => writes
            .iter()
            .map(|w| match w.row {
                RowName::Queue => Row::Queue,
                RowName::Request => Row::Request(w.request.clone().unwrap_or_default()),
            })
            .collect(),
        Event::Reap {
            won: true, removed, ..
        } if !removed.is_empty() => vec![Row::Queue],
        _ => Vec::new(),
    }
}

/// How far each row's versions in the log are from the model's.
#[derive(Clone, Debug, Default)]
pub(super) struct Bases {
    by_row: HashMap<Row, i64>,
}

/// A version that no model version is: the log's was below its row's first.
const NONE: u64 = u64::MAX;

impl Bases {
    /// From the events in order: each row's first version shown, less the
    /// model's there (1, plus the writes that won on it before). In a log
    /// of several processes, whose order is not yet known, the lowest
    /// version shown is the first.
    pub fn of<'a>(events: impl IntoIterator<Item = &'a Event>, several: bool) -> Bases {
        let mut by_row: HashMap<Row, i64> = HashMap::new();
        let mut wins: HashMap<Row, i64> = HashMap::new();
        for event in events {
            let mut event = event.clone();
            each_version(&mut event, |row, v| {
                let before = if several {
                    0
                } else {
                    wins.get(&row).copied().unwrap_or(0)
                };
                let base = *v as i64 - (1 + before);
                let at = by_row.entry(row).or_insert(base);
                if several {
                    *at = (*at).min(base);
                }
            });
            for row in written(&event) {
                *wins.entry(row).or_default() += 1;
            }
        }
        Bases { by_row }
    }

    /// The event with the model's versions.
    pub fn to_model(&self, event: &Event) -> Event {
        let mut event = event.clone();
        each_version(&mut event, |row, v| {
            let base = self.by_row.get(&row).copied().unwrap_or(0);
            *v = u64::try_from(*v as i64 - base)
                .ok()
                .filter(|&m| m <= u16::MAX as u64)
                .unwrap_or(NONE);
        });
        event
    }

    /// The event with the log's versions.
    pub fn to_log(&self, event: &Event) -> Event {
        let mut event = event.clone();
        each_version(&mut event, |row, v| {
            let base = self.by_row.get(&row).copied().unwrap_or(0);
            *v = (*v as i64 + base).max(0) as u64;
        });
        event
    }
}
