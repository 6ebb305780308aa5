//! A link log split by stream, and a simulated log for `slotcheck bench`.

use super::LinkTrace;
use crate::events::link::Event;
use crate::events::{Header, Record};
use crate::link::{Action, Bounds, Design, Link, Options};
use stateright::Model;

/// A line of a link log, with its number.
pub type Line = crate::events::Line<Event>;

/// A link log's lines split by stream (the `queue` field), in the order
/// each stream first appears.
pub fn streams(records: Vec<Line>) -> Vec<(String, Vec<Line>)> {
    crate::events::by_queue(records)
}

/// A random run of the model on `bounds`, as the log its builders would
/// write (asks `{stream}-a1`..., builders `{stream}-b1`..., `ms_per_tick`
/// 100, a late answer logged as it lands): for measuring `validate`'s
/// speed (`slotcheck bench`). The tests do not use it: they write logs from
/// stories, independently.
pub fn simulated_log(
    design: &'static Design,
    bounds: Bounds,
    seed: u64,
    stream: &str,
    most: usize,
) -> Vec<Record<Event>> {
    const MS: u64 = 100;
    let model = Link::new(design, bounds);
    let header = Header {
        ms_per_tick: Some(MS),
        max_deliver: Some(bounds.max_deliver),
        ..Header::default()
    };
    let publish = |a: u8| Record {
        model: None,
        queue: stream.to_string(),
        ts_ms: Some(0),
        process: None,
        seq: None,
        actor: "client".into(),
        event: Event::Publish {
            ask: format!("{stream}-a{}", a + 1),
        },
    };
    let mut records: Vec<Record<Event>> = (0..bounds.asks).map(publish).collect();
    let numbered = records.iter().cloned().enumerate().collect();
    let mut trace =
        LinkTrace::new(design, Options::default(), &header, numbered).expect("in bounds");
    trace.model = model;
    trace.builders = (0..bounds.builders)
        .map(|b| format!("{stream}-b{}", b + 1))
        .collect();
    // xorshift64*: no dependency for a bench's dice.
    let mut dice = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut roll = |n: usize| {
        dice ^= dice >> 12;
        dice ^= dice << 25;
        dice ^= dice >> 27;
        (dice.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    };
    let mut cursor = crate::Trace::start(&trace);
    let mut enabled = Vec::new();
    let mut in_tick = 0;
    for _ in 0..most {
        enabled.clear();
        model.actions(&cursor.state, &mut enabled);
        if enabled.is_empty() {
            break;
        }
        let action = enabled[roll(enabled.len())];
        let landed = match action {
            Action::Land(b) => cursor.state.builders[b as usize].on_the_way,
            _ => None,
        };
        let (next, mut lines) = trace.take(&cursor, action);
        if action == Action::Tick {
            in_tick = 0;
        }
        let ts = |in_tick: u64| next.state.now as u64 * MS + (in_tick * 2).min(30);
        if let (Some(a), true) = (landed, lines.is_empty()) {
            let b = action.builder().expect("a builder's step");
            records.push(Record {
                model: None,
                queue: stream.to_string(),
                ts_ms: Some(ts(in_tick)),
                process: None,
                seq: None,
                actor: trace.builder_name(b),
                event: Event::LateAnswer {
                    ask: trace.asks[a as usize].clone(),
                },
            });
            in_tick += 1;
        }
        if let Some(b) = action.builder() {
            for o in lines.drain(..) {
                records.push(Record {
                    model: None,
                    queue: stream.to_string(),
                    ts_ms: Some(ts(in_tick)),
                    process: None,
                    seq: None,
                    actor: trace.builder_name(b),
                    event: trace.event_of(&o),
                });
                in_tick += 1;
            }
        }
        cursor = next;
    }
    records
}
