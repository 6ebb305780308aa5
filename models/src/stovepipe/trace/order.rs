//! What orders a stovepipe log's lines across processes: the rows'
//! versions, as the database ordered its writes (a write that won at v+1
//! after every read of v, before every read of v+1), the arrivals (a
//! request's `arrive` before every line naming it; a read's head between
//! its arrival and the next), and a delivery before its worker's lines.
//! (A build's submit and finish are not: a request may be built twice.)

use super::QueueTrace;
use crate::events::stovepipe::{Event, RowName};
use crate::OrderValue;

/// The keys: the arrivals, the queue row, each request's row, each log
/// worker.
const ARRIVALS: u64 = 0;
const QUEUE_ROW: u64 = 1;
const fn request_row(r: u8) -> u64 {
    0x100 + r as u64
}
const fn worker(id: u32) -> u64 {
    0x1_0000_0000 + id as u64
}

/// On a row, a write that won at version `v` is at 2v, a read of `v` at
/// 2v + 1, a CAS that lost expecting `v` anywhere from the reads of v + 1.
fn read(v: u64) -> i64 {
    2 * v as i64 + 1
}
fn won(expected: u64) -> i64 {
    2 * (expected as i64 + 1)
}
fn lost(expected: u64) -> i64 {
    read(expected + 1)
}

impl QueueTrace {
    pub(super) fn order_values(&self, actor: &str, event: &Event, out: &mut Vec<OrderValue>) {
        let row = |name: &str| self.requests.get(name).map(|&r| request_row(r));
        let named = |name: &str, out: &mut Vec<OrderValue>| {
            if let Some(key) = row(name) {
                out.push(OrderValue::from(key, i64::MIN + 1));
            }
        };
        let write_key = |kind: RowName, request: &Option<String>| match kind {
            RowName::Queue => Some(QUEUE_ROW),
            RowName::Request => request.as_deref().and_then(row),
        };
        let head = |name: &str, out: &mut Vec<OrderValue>| {
            if let Some(&h) = self.requests.get(name) {
                out.push(OrderValue::at(ARRIVALS, 2 * h as i64 + 1));
            }
        };
        match event {
            Event::Arrive { request } => {
                if let Some(&r) = self.requests.get(request) {
                    out.push(OrderValue::at(ARRIVALS, 2 * r as i64));
                    out.push(OrderValue::at(request_row(r), i64::MIN));
                }
            }
            Event::Deliver {
                request,
                worker: id,
                ..
            } => {
                named(request, out);
                if let Some(&w) = self.ids.get(id) {
                    out.push(OrderValue::at(worker(w), 0));
                }
            }
            Event::FinishBuild { request } => named(request, out),
            _ => {
                if let Some(&w) = self.ids.get(actor) {
                    out.push(OrderValue::at(worker(w), 1));
                }
                match event {
                    Event::Read {
                        request,
                        queue_row,
                        head: h,
                    } => {
                        if let Some(key) = row(&request.id) {
                            out.push(OrderValue::at(key, read(request.version)));
                        }
                        out.push(OrderValue::at(QUEUE_ROW, read(queue_row.version)));
                        head(h, out);
                    }
                    Event::ReadRequest { request } | Event::RereadRequest { request } => {
                        if let Some(key) = row(&request.id) {
                            out.push(OrderValue::at(key, read(request.version)));
                        }
                    }
                    Event::ReadQueue { queue_row } | Event::RereadQueue { queue_row } => {
                        out.push(OrderValue::at(QUEUE_ROW, read(queue_row.version)))
                    }
                    Event::ReadHead { head: h } => head(h, out),
                    Event::Cas {
                        row: kind,
                        request,
                        expected_version,
                        won: w,
                        ..
                    } => {
                        if let Some(key) = write_key(*kind, request) {
                            out.push(if *w {
                                OrderValue::at(key, won(*expected_version))
                            } else {
                                OrderValue::from(key, lost(*expected_version))
                            });
                        }
                    }
                    Event::Transaction {
                        writes, won: true, ..
                    } => {
                        for write in writes {
                            if let Some(key) = write_key(write.row, &write.request) {
                                out.push(OrderValue::at(key, won(write.expected_version)));
                            }
                        }
                    }
                    Event::Reap {
                        expected_version,
                        removed,
                        won: w,
                        ..
                    } => out.push(match (w, removed.is_empty()) {
                        (true, false) => OrderValue::at(QUEUE_ROW, won(*expected_version)),
                        (true, true) => OrderValue::at(QUEUE_ROW, read(*expected_version)),
                        (false, _) => OrderValue::from(QUEUE_ROW, lost(*expected_version)),
                    }),
                    Event::Submit { request, .. }
                    | Event::CancelBuild { request, .. }
                    | Event::Ack { request, .. }
                    | Event::Hold { request, .. } => named(request, out),
                    _ => {}
                }
            }
        }
    }
}
