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

/// How a broker holds a message (the header's `hold`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HoldName {
    /// Until the queue's next durable write (the contract's reading).
    Parked,
    /// For a while, whatever was written (SQS's `ChangeMessageVisibility`).
    Delayed,
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
    /// Stovepipe: how the broker holds a message the gate turned away:
    /// `"parked"` (the default, the contract's reading: it comes back after
    /// the queue's next durable write) or `"delayed"` (SQS's
    /// `ChangeMessageVisibility`: it comes back after a delay, whatever was
    /// written; the model option `delayed-hold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<HoldName>,
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
    /// Link: the most a heartbeat may be late, in seconds of the source's
    /// time (a multiple of 5): validate assumes no later one. Absent: 600,
    /// the most the model holds (a heartbeat that never comes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_late_s: Option<u16>,
    /// Link: the version of the nats-server the stream ran on (`"2.9.10"`,
    /// as its INFO says). Before 2.10.14 a server may fail a redelivery
    /// when the pull request it picked has just expired, and then hand the
    /// last message it delivered new out again, counted 1 (nats-server PR
    /// #5305; the model's `--rewinds`): validate allows that there, as
    /// often as the log has fetches. Absent: a server without that fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nats_server: Option<String>,
    /// Link: the most a call's answer may take on the network, in
    /// milliseconds: a line's time may be off its step's by this more than
    /// the slack. Absent: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_delay_ms: Option<u64>,
    /// The queues (stovepipe) or streams (link) the log must have: each
    /// that logged no line is named, and the log is inconclusive (exit 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<String>,
    /// How many queues or streams the log must have (as `--expect-queues`):
    /// fewer is inconclusive (exit 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_queues: Option<u32>,
    /// Logs in each process's own order: two lines of different processes
    /// whose `ts_ms` differ by more than this many milliseconds are in the
    /// order of their times (the clocks' skew and the time from a step to
    /// its line). Absent: times do not order lines of different processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_slack_ms: Option<u64>,
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
    /// The process that wrote the line (a worker process, a builder): its
    /// lines are in the order it did its steps, and validate infers the
    /// order across processes. Absent: the file's process (one file, read
    /// whole, is one process: its lines are in the order the system did
    /// them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
    /// The line's number in its process's log, increasing: a process's
    /// lines are taken in this order whatever their order in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
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
    serde_path_to_error::deserialize(&value).map_err(|e| {
        let mut path = e.path().to_string();
        if path.is_empty() || path == "." {
            // Inside the `event`-tagged enum serde keeps no path: the field
            // is found again by the value serde refused.
            path = locate(&value, &e.inner().to_string()).unwrap_or(path);
        }
        field_message(&path, e.inner())
    })
}

/// The path (`request.state`) of the one leaf of `value` that holds the
/// value a serde error names (`unknown variant `ACCEPTED``, `invalid type:
/// string "3"`, `invalid type: null`), if there is exactly one.
fn locate(value: &serde_json::Value, error: &str) -> Option<String> {
    use serde_json::Value;
    let quoted = |text: &str, open: char, close: char| -> Option<String> {
        let start = text.find(open)? + 1;
        let end = start + text[start..].find(close)?;
        Some(text[start..end].to_string())
    };
    let needle: Value = if let Some(rest) = error.strip_prefix("unknown variant ") {
        Value::String(quoted(rest, '`', '`')?)
    } else if let Some(rest) = error.strip_prefix("invalid type: ") {
        if rest.starts_with("string ") {
            Value::String(quoted(rest, '"', '"')?)
        } else if rest.starts_with("null") {
            Value::Null
        } else if rest.starts_with("integer ") || rest.starts_with("boolean ") {
            serde_json::from_str(&quoted(rest, '`', '`')?).ok()?
        } else {
            return None;
        }
    } else {
        return None;
    };
    fn walk(value: &Value, needle: &Value, path: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    let here = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(v, needle, &here, found);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, needle, &format!("{path}[{i}]"), found);
                }
            }
            leaf if leaf == needle => found.push(path.to_string()),
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(value, &needle, "", &mut found);
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// `null` for a list is the empty list (a Go nil slice encodes as `null`).
pub(crate) fn null_is_empty<'de, D>(deserializer: D) -> Result<Vec<String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Ok(Option::<Vec<String>>::deserialize(deserializer)?.unwrap_or_default())
}

/// `null` for an optional list that is given is the empty list: the field
/// is there, and says no owners.
pub(crate) fn null_is_some_empty<'de, D>(deserializer: D) -> Result<Option<Vec<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    null_is_empty(deserializer).map(Some)
}

/// The steps a header's `unlogged` may name (stovepipe's).
pub const UNLOGGED: [&str; 2] = ["deliver", "finish_build"];

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
        let header: Header = typed(value)?;
        // A typo here would silently leave a step logged and give
        // departures with no hint: every name must be one validate knows.
        if let Some(unknown) = header
            .unlogged
            .iter()
            .find(|u| !UNLOGGED.contains(&u.as_str()))
        {
            return Err(format!(
                "field `unlogged`: no step `{unknown}` (the steps that may go unlogged: {})",
                UNLOGGED.join(", ")
            ));
        }
        return Ok(Some(Entry::Header(header)));
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

impl Entry {
    /// The line's process, sequence and time, whichever model's it is.
    fn origin(&mut self) -> Option<(&mut Option<String>, Option<u64>, Option<u64>)> {
        match self {
            Entry::Header(_) => None,
            Entry::Stovepipe(r) => Some((&mut r.process, r.seq, r.ts_ms)),
            Entry::Link(r) => Some((&mut r.process, r.seq, r.ts_ms)),
        }
    }
}

/// Several logs, one per process (or each of several processes' lines),
/// as one: each line's process is its own `process` or, when there are
/// several files, its file's; within a process lines are put in the order
/// of their `seq`; the files are merged by time (each file's times taken as
/// never going back). A line's number is its file's number plus the lines
/// of the files before it (`places` maps it back). Every file's header must
/// say the same.
pub fn merge(files: Vec<(String, Log)>) -> Result<(Log, Places), ParseError> {
    let several = files.len() > 1;
    let mut header: Option<(String, Header)> = None;
    let mut places = Places::default();
    let mut offset = 0;
    let mut queues: Vec<std::collections::VecDeque<(u64, usize, Entry)>> = Vec::new();
    for (file, log) in files {
        let lines = log.entries.iter().map(|(n, _)| *n).max().unwrap_or(0);
        let has_header = log
            .entries
            .iter()
            .any(|(_, e)| matches!(e, Entry::Header(_)));
        if has_header {
            match &header {
                Some((first, h)) if *h != log.header => {
                    let line = log.entries.first().map_or(1, |(n, _)| *n);
                    return Err(ParseError {
                        file,
                        line,
                        message: format!("the header differs from {first}'s"),
                    });
                }
                Some(_) => {}
                None => header = Some((file.clone(), log.header.clone())),
            }
        }
        let mut entries: Vec<(usize, Entry)> = log
            .entries
            .into_iter()
            .filter(|(_, e)| !matches!(e, Entry::Header(_)))
            .collect();
        // Each process's lines in the order of their `seq`, in the slots
        // its lines have in the file.
        let mut by_process: std::collections::HashMap<String, Vec<usize>> = Default::default();
        for (i, (_, entry)) in entries.iter_mut().enumerate() {
            let Some((process, _, _)) = entry.origin() else {
                continue;
            };
            if several && process.is_none() {
                *process = Some(file.clone());
            }
            let name = process.clone().unwrap_or_default();
            by_process.entry(name).or_default().push(i);
        }
        let mut names: Vec<&String> = by_process.keys().collect();
        names.sort();
        let mut moves: Vec<(usize, usize)> = Vec::new();
        for name in names {
            let slots = &by_process[name];
            let mut keyed = Vec::new();
            for &i in slots {
                match entries[i].1.origin().and_then(|(_, seq, _)| seq) {
                    Some(seq) => keyed.push((seq, i)),
                    None => break,
                }
            }
            let mut sorted = slots.clone();
            if keyed.len() == slots.len() {
                keyed.sort_unstable();
                if let Some(pair) = keyed.windows(2).find(|p| p[0].0 == p[1].0) {
                    return Err(ParseError {
                        file,
                        line: entries[pair[1].1].0,
                        message: format!("field `seq`: {} twice in process `{name}`", pair[1].0),
                    });
                }
                sorted = keyed.into_iter().map(|(_, i)| i).collect();
            }
            moves.extend(slots.iter().copied().zip(sorted));
        }
        if moves.iter().any(|(slot, from)| slot != from) {
            let mut old: Vec<Option<(usize, Entry)>> = entries.into_iter().map(Some).collect();
            let mut placed: Vec<Option<(usize, Entry)>> = (0..old.len()).map(|_| None).collect();
            for (slot, from) in moves {
                placed[slot] = old[from].take();
            }
            entries = placed.into_iter().flatten().collect();
        }
        places.files.push((file, offset));
        let mut latest = 0u64;
        let mut queue = std::collections::VecDeque::new();
        for (line, mut entry) in entries {
            if let Some((_, _, Some(ts))) = entry.origin() {
                latest = latest.max(ts);
            }
            queue.push_back((latest, offset + line, entry));
        }
        queues.push(queue);
        offset += lines;
    }
    let mut log = Log {
        header: header.map(|(_, h)| h).unwrap_or_default(),
        entries: Vec::new(),
    };
    if log.header != Header::default() {
        log.entries.push((0, Entry::Header(log.header.clone())));
    }
    // By time, file by file where times tie.
    while let Some(i) = (0..queues.len())
        .filter(|&i| !queues[i].is_empty())
        .min_by_key(|&i| (queues[i][0].0, i))
    {
        let (_, line, entry) = queues[i].pop_front().expect("not empty");
        log.entries.push((line, entry));
    }
    Ok((log, places))
}

/// Where the lines of merged files are: each file's name and the number its
/// lines are counted from.
#[derive(Clone, Debug, Default)]
pub struct Places {
    pub files: Vec<(String, usize)>,
}

impl Places {
    /// `file:line` of a merged line's number (the line alone for one file).
    pub fn place(&self, line: usize) -> String {
        match self.files.as_slice() {
            [] | [_] => format!("line {line}"),
            files => {
                let (file, offset) = files
                    .iter()
                    .rev()
                    .find(|(_, offset)| *offset < line)
                    .unwrap_or(&files[0]);
                format!("{file}:{}", line - offset)
            }
        }
    }
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
