//! The event log: what a real system did, one NDJSON line per step as the
//! system saw it, for `slotcheck validate` to check against a model. These
//! types are the format; `docs/validate.md` explains it and
//! `docs/validate.schema.json` is generated from them.
//!
//! A line is a JSON object. The first may be a [`Header`] (`"event":
//! "header"`): the model, the system's configuration (K, deliveries) and,
//! for link, the time scale. Every other line is a [`Record`]: who acted,
//! on which queue, and the event, tagged by `"event"`, whose fields are the
//! model's ([`stovepipe::Event`], [`link::Event`]). Unknown fields are
//! allowed (a real log carries more); a missing required field is an error
//! naming the file, the line and the field.

pub mod link;
pub mod stovepipe;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The model a log is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModelName {
    /// The SQL-backed admission queue (docs/stovepipe.md).
    Stovepipe,
    /// Builders pulling checks from a JetStream work queue (docs/link.md).
    Link,
}

impl ModelName {
    pub fn name(self) -> &'static str {
        match self {
            ModelName::Stovepipe => "stovepipe",
            ModelName::Link => "link",
        }
    }
}

/// The first line of a log (optional, but it is where the system says how
/// it is configured): `{"event":"header","model":"stovepipe",
/// "max_concurrent":1,"max_deliveries":2}`. It applies to every queue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Header {
    /// The model: given here once, a line need not repeat it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelName>,
    /// The design the system claims to implement, for the record (validate's
    /// `--design` decides what is checked; without it every design is tried).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design: Option<String>,
    /// Stovepipe: K, the queue's limit of builds in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<u8>,
    /// Stovepipe: the broker's deliveries of a message before it is
    /// dead-lettered (SQS `maxReceiveCount`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_deliveries: Option<u8>,
    /// Steps the system does not log, which validate then inserts as silent
    /// steps where the model needs them: `"deliver"` (stovepipe: the
    /// broker's hand-outs), `"finish_build"` (stovepipe: builds ending).
    /// Crashes, stalls and expiries are never logged and always inferred.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unlogged: Vec<String>,
    /// Link: real milliseconds per model tick (a tick is 5 s of the source's
    /// time; a test system that runs its timers faster says so here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms_per_tick: Option<u64>,
    /// Link: the stream's `max_deliver`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_deliver: Option<u8>,
    /// Link: the most any builder's clock may be off the log's, in seconds
    /// of the source's time (a multiple of 5); validate tries every offset
    /// in whole ticks within it, for each builder. Absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skew_s: Option<u16>,
    /// Link: the consumer's ack wait, the heartbeat (and in-progress)
    /// period and how long a running key counts as fresh, in seconds of the
    /// source's time (multiples of 5), when the system's differ from the
    /// source's 60, 10 and 25 s. Absent: the source's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_wait_s: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_every_s: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh_for_s: Option<u16>,
}

/// One line of a log: the fields every event has, and the event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Record<E> {
    /// The model; may be left out when the header names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelName>,
    /// Which queue (stovepipe) or stream (link): a log may interleave many,
    /// and each is validated on its own. Absent: one queue, `""`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub queue: String,
    /// Wall-clock time in milliseconds, if the system has it (link maps it
    /// to ticks; stovepipe keeps it for the record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts_ms: Option<u64>,
    /// Who acted: `client`, `broker`, `build-system`, a worker id such as
    /// `worker-7` (stovepipe: one id per delivery, as the system numbers its
    /// handler invocations), a builder id such as `b1` (link), `server`.
    pub actor: String,
    /// The step, tagged by `"event"`.
    #[serde(flatten)]
    pub event: E,
}

/// A line of a log, parsed.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    Header(Header),
    Stovepipe(Record<stovepipe::Event>),
    Link(Record<link::Event>),
}

/// A parsed log: its lines with their numbers (from 1), headers included.
#[derive(Clone, Debug, Default)]
pub struct Log {
    pub header: Header,
    pub entries: Vec<(usize, Entry)>,
}

impl Log {
    /// The stovepipe events with their line numbers; the header stays,
    /// other lines are left out.
    pub fn stovepipe_lines(&mut self) -> Vec<(usize, Record<stovepipe::Event>)> {
        std::mem::take(&mut self.entries)
            .into_iter()
            .filter_map(|(line, e)| match e {
                Entry::Stovepipe(r) => Some((line, r)),
                _ => None,
            })
            .collect()
    }

    /// The link events with their line numbers, as `stovepipe_lines`.
    pub fn link_lines(&mut self) -> Vec<(usize, Record<link::Event>)> {
        std::mem::take(&mut self.entries)
            .into_iter()
            .filter_map(|(line, e)| match e {
                Entry::Link(r) => Some((line, r)),
                _ => None,
            })
            .collect()
    }
}

/// A line that is not an event: `file:line: message`, the message naming
/// the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// serde's words for a bad field, as `field `x`: ...`, with the path to it.
fn field_message(path: &str, error: &serde_json::Error) -> String {
    let text = error.to_string();
    let text = match text.find(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    };
    if let Some(rest) = text.strip_prefix("missing field `") {
        let name = rest.trim_end_matches('`');
        let full = if path.is_empty() || path == "." {
            name.to_string()
        } else {
            format!("{path}.{name}")
        };
        return format!("field `{full}` is missing");
    }
    if let Some(rest) = text.strip_prefix("unknown variant ") {
        let field = if path.is_empty() || path == "." {
            "event"
        } else {
            path
        };
        return format!("field `{field}`: unknown value {rest}");
    }
    if path.is_empty() || path == "." {
        text
    } else {
        format!("field `{path}`: {text}")
    }
}

fn typed<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value)
        .map_err(|e| field_message(&e.path().to_string(), e.inner()))
}

/// Reads one line (number `line`, from 1) of a log whose header says
/// `header`; `Ok(None)` for a blank line.
pub fn parse_line(header: &Header, text: &str) -> Result<Option<Entry>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let Some(object) = value.as_object() else {
        return Err("not a JSON object".into());
    };
    let event = match object.get("event") {
        None => return Err("field `event` is missing".into()),
        Some(serde_json::Value::String(s)) => s.as_str(),
        Some(_) => return Err("field `event`: not a string".into()),
    };
    if event == "header" {
        return typed(value).map(|h| Some(Entry::Header(h)));
    }
    let model = match object.get("model") {
        Some(m) => Some(typed::<ModelName>(m.clone()).map_err(|e| format!("field `model`: {e}"))?),
        None => header.model,
    };
    match model {
        Some(ModelName::Stovepipe) => typed(value).map(|r| Some(Entry::Stovepipe(r))),
        Some(ModelName::Link) => typed(value).map(|r| Some(Entry::Link(r))),
        None => {
            Err("field `model` is missing (give it on the line or once in a header line)".into())
        }
    }
}

/// Reads a whole log; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Log, ParseError> {
    let mut log = Log::default();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let entry = parse_line(&log.header, line).map_err(|message| ParseError {
            file: file.to_string(),
            line: number,
            message,
        })?;
        match entry {
            None => {}
            Some(Entry::Header(h)) => {
                if !log.entries.is_empty() {
                    return Err(ParseError {
                        file: file.to_string(),
                        line: number,
                        message: "a header must come before every event".into(),
                    });
                }
                log.header = h.clone();
                log.entries.push((number, Entry::Header(h)));
            }
            Some(entry) => log.entries.push((number, entry)),
        }
    }
    Ok(log)
}

/// Writes a log, one JSON object per line.
pub struct Writer<W: std::io::Write> {
    out: W,
}

impl<W: std::io::Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Writer { out }
    }

    pub fn header(&mut self, header: &Header) -> std::io::Result<()> {
        let mut value = serde_json::to_value(header)?;
        let object = value.as_object_mut().expect("a header is an object");
        let mut line = serde_json::Map::new();
        line.insert("event".into(), "header".into());
        line.append(object);
        self.line(&serde_json::Value::Object(line))
    }

    pub fn record<E: Serialize>(&mut self, record: &Record<E>) -> std::io::Result<()> {
        self.line(record)
    }

    fn line<T: Serialize + ?Sized>(&mut self, value: &T) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, value)?;
        self.out.write_all(b"\n")
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The log as text, header first (if any).
/// A line of a log: its number and its record.
pub type Line<E> = (usize, Record<E>);

/// A log's lines split by the `queue` field (a stovepipe queue, a link
/// stream), each with its line number, in the order each first appears:
/// every queue is validated on its own.
pub fn by_queue<E>(records: Vec<Line<E>>) -> Vec<(String, Vec<Line<E>>)> {
    let mut order: Vec<String> = Vec::new();
    let mut by_queue: std::collections::HashMap<String, Vec<Line<E>>> =
        std::collections::HashMap::new();
    for (line, record) in records {
        if !by_queue.contains_key(&record.queue) {
            order.push(record.queue.clone());
        }
        by_queue
            .entry(record.queue.clone())
            .or_default()
            .push((line, record));
    }
    order
        .into_iter()
        .map(|q| {
            let lines = by_queue.remove(&q).unwrap_or_default();
            (q, lines)
        })
        .collect()
}

pub fn to_ndjson<E: Serialize>(header: Option<&Header>, records: &[Record<E>]) -> String {
    let mut writer = Writer::new(Vec::new());
    if let Some(h) = header {
        writer.header(h).expect("writing to memory");
    }
    for r in records {
        writer.record(r).expect("writing to memory");
    }
    String::from_utf8(writer.into_inner()).expect("JSON is UTF-8")
}

/// The JSON Schema of one line of a log, of either model.
pub fn schema() -> serde_json::Value {
    #[derive(JsonSchema)]
    #[serde(untagged)]
    #[allow(dead_code)]
    /// One line of a slotcheck event log (NDJSON): a header, or an event of
    /// the stovepipe or the link model.
    enum Line {
        Header(HeaderLine),
        Stovepipe(Record<stovepipe::Event>),
        Link(Record<link::Event>),
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    /// The header line.
    struct HeaderLine {
        /// Always `header`.
        event: HeaderTag,
        #[serde(flatten)]
        header: Header,
    }
    #[derive(JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum HeaderTag {
        Header,
    }
    serde_json::to_value(schemars::schema_for!(Line)).expect("a schema is JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"event":"header","model":"stovepipe","max_concurrent":1,"max_deliveries":2}
{"actor":"client","event":"arrive","request":"R1","trace_id":"extra fields are allowed"}

{"actor":"broker","event":"deliver","message":"process","request":"R1","worker":"w1"}
{"actor":"w1","event":"read","request":{"id":"R1","state":"accepted","version":1},"queue_row":{"version":1,"in_flight_request_ids":[]},"head":"R1"}
"#;

    #[test]
    fn a_log_reads_and_writes_back_the_same() {
        let log = parse("run.ndjson", LOG).unwrap();
        assert_eq!(log.header.max_concurrent, Some(1));
        let numbers: Vec<usize> = log.entries.iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers, [1, 2, 4, 5]);
        let records: Vec<Record<stovepipe::Event>> = log
            .entries
            .iter()
            .filter_map(|(_, e)| match e {
                Entry::Stovepipe(r) => Some(r.clone()),
                _ => None,
            })
            .collect();
        let text = to_ndjson(Some(&log.header), &records);
        let again = parse("again", &text).unwrap();
        assert_eq!(again.entries.len(), 4);
        let events = |l: &Log| l.entries.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>();
        assert_eq!(events(&again), events(&log));
    }

    #[test]
    fn a_missing_field_names_file_line_and_field() {
        let bad = LOG.replace(r#","head":"R1""#, "");
        let error = parse("run.ndjson", &bad).unwrap_err();
        assert_eq!(error.line, 5);
        assert_eq!(error.to_string(), "run.ndjson:5: field `head` is missing");
        let nested = LOG.replace(r#""state":"accepted","#, "");
        let error = parse("run.ndjson", &nested).unwrap_err();
        assert!(
            error.to_string().starts_with("run.ndjson:5: field `"),
            "{error}"
        );
        assert!(error.message.contains("state"), "{error}");
    }

    #[test]
    fn bad_json_and_unknown_events_are_errors_naming_the_line() {
        let error = parse("x", "{\"event\":\"header\",\"model\":\"link\"}\n{nope").unwrap_err();
        assert_eq!(
            (error.line, error.message.starts_with("not JSON")),
            (2, true)
        );
        let error = parse("x", LOG.replace("\"deliver\"", "\"deliverr\"").as_str()).unwrap_err();
        assert_eq!(error.line, 4);
        assert!(
            error
                .message
                .starts_with("field `event`: unknown value `deliverr`"),
            "{error}"
        );
        let error = parse(
            "x",
            "{\"actor\":\"client\",\"event\":\"arrive\",\"request\":\"R1\"}",
        )
        .unwrap_err();
        assert!(error.message.contains("`model`"), "{error}");
    }
}

#[cfg(test)]
mod schema_tests {
    #[test]
    fn the_schema_names_every_event() {
        let text = super::schema().to_string();
        for tag in [
            "header",
            "arrive",
            "read",
            "cas",
            "reap",
            "kv_get",
            "late_answer",
        ] {
            assert!(text.contains(&format!("\"{tag}\"")), "{tag} missing");
        }
    }
}
