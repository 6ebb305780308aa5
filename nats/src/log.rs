//! The event log of a run on the real server, in `slotcheck validate`'s
//! format (`slotcheck_models::events`): one line per step, as the builder
//! saw it, with `ts_ms` counted from the start of the run.

use slotcheck_models::events::link::Event;
use slotcheck_models::events::{Header, ModelName, Record};
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Clone)]
pub struct Log {
    origin: Instant,
    queue: String,
    lines: Arc<Mutex<Vec<String>>>,
    records: Arc<Mutex<Vec<Record<Event>>>>,
}

impl Log {
    /// A log whose first line is `header`; `queue` is the stream's name.
    pub fn new(header: &Header, queue: &str) -> Log {
        let first = serde_json::to_value(header).expect("a header is JSON");
        let mut first = first.as_object().cloned().unwrap_or_default();
        first.insert("event".into(), "header".into());
        Log {
            origin: Instant::now(),
            queue: queue.to_string(),
            lines: Arc::new(Mutex::new(vec![
                serde_json::Value::Object(first).to_string()
            ])),
            records: Arc::default(),
        }
    }

    pub fn ms(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }

    /// Records what `actor` saw.
    pub fn say(&self, actor: &str, event: Event) {
        let record = Record {
            model: Some(ModelName::Link),
            queue: self.queue.clone(),
            ts_ms: Some(self.ms()),
            process: None,
            seq: None,
            actor: actor.to_string(),
            event,
        };
        let line = serde_json::to_string(&record).expect("a record is JSON");
        // Both under one lock order, so the lines keep the order of the steps.
        let mut lines = self.lines.lock().expect("log lines");
        lines.push(line);
        self.records.lock().expect("log records").push(record);
    }

    pub fn records(&self) -> Vec<Record<Event>> {
        self.records.lock().expect("log records").clone()
    }

    /// The NDJSON text.
    pub fn text(&self) -> String {
        let mut text = self.lines.lock().expect("log lines").join("\n");
        text.push('\n');
        text
    }
}
