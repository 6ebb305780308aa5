//! An independent writer of event logs: it reads a story as a reviewer
//! does (each step's actor, its words and the rows it changed, with their
//! versions) and writes what a system would have logged, knowing nothing of
//! the model's state, its observations or its validator. The request IDs
//! are renamed (`R1` becomes `pr-1`) and the workers named as a system
//! would (`worker-3`), so that nothing matches by accident of naming.

use slotcheck_models::events::stovepipe::{
    Event, MessageName, QueueRow, RequestRow, RowName, RowState, RowWrite, Values,
};
use slotcheck_models::events::Record;
use slotcheck_models::StoryStep;
use std::collections::HashMap;

/// What one worker last read, by its name.
#[derive(Default, Clone)]
struct Seen {
    request_version: u64,
    queue_version: u64,
}

pub fn id(name: &str) -> String {
    format!("pr-{}", name.trim_start_matches('R'))
}

fn state(word: &str) -> RowState {
    match word {
        "accepted" => RowState::Accepted,
        "processing" => RowState::Processing,
        "succeeded" => RowState::Succeeded,
        "superseded" => RowState::Superseded,
        "dead_lettered" => RowState::DeadLettered,
        other => panic!("not a row state: {other}"),
    }
}

/// `process(R1)` as its kind and request.
fn message(words: &str) -> (MessageName, String) {
    let (kind, rest) = words.split_once('(').expect("a message");
    let request = rest.split(')').next().unwrap();
    let kind = match kind {
        "process" => MessageName::Process,
        "signal" => MessageName::Signal,
        "dead" => MessageName::Dead,
        other => panic!("not a message: {other}"),
    };
    (kind, id(request))
}

/// The slot column and its value: `in_flight_count 1`, or
/// `in_flight_request_ids {R1, R2}`; a value alone takes the column given.
fn slot_value(words: &str, column: &str) -> Values {
    let words = words.trim();
    let (column, value) = match words.split_once(' ') {
        Some((c, v)) if c.starts_with("in_flight") => (c, v),
        _ => (column, words),
    };
    if column == "in_flight_count" {
        Values {
            in_flight_count: Some(value.parse().expect("a count")),
            ..Values::default()
        }
    } else {
        let inner = value.trim_start_matches('{').trim_end_matches('}');
        let ids = inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(id)
            .collect();
        Values {
            in_flight_request_ids: Some(ids),
            ..Values::default()
        }
    }
}

fn queue_row(words: &str, version: u64, column: &str) -> QueueRow {
    let v = slot_value(words, column);
    QueueRow {
        version,
        in_flight_count: v.in_flight_count,
        in_flight_request_ids: v.in_flight_request_ids,
    }
}

/// A story's worker as a system names it: the checker's `worker 3` is
/// `worker-3`; a log's name, as validate's story gives it, stays.
fn worker_id(told: &str) -> String {
    told.replace(' ', "-")
}

/// `v3` as 3.
fn version(word: &str) -> u64 {
    word.trim_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .unwrap_or_else(|_| panic!("not a version: {word}"))
}

/// The version after the step of a row the step changed (`... (v3)`).
fn version_after(step: &StoryStep, row: &str) -> Option<u64> {
    let change = step.changes.iter().find(|c| c.row == row)?;
    let after = change.after.as_deref()?;
    let at = after.rfind("(v")?;
    Some(version(&after[at..]))
}

/// The log a system would have written for this story.
pub fn write(story: &[StoryStep]) -> Vec<Record<Event>> {
    let mut seen: HashMap<String, Seen> = HashMap::new();
    let mut column = String::from("in_flight_count");
    let mut out = Vec::new();
    for step in story {
        let actor = step.actor.as_str();
        let record = |actor: &str, event: Event| Record {
            model: None,
            queue: String::new(),
            ts_ms: None,
            process: None,
            seq: None,
            actor: actor.to_string(),
            event,
        };
        if actor.starts_with("fault on") {
            continue;
        }
        let action = step.action.split(" (the second release").next().unwrap();
        let first = action.split("; ").next().unwrap();
        if actor == "client" {
            let name = first.split(' ').next().unwrap();
            out.push(record("client", Event::Arrive { request: id(name) }));
            continue;
        }
        if actor == "broker" {
            // deliver process(R1) to worker 3 (attempt 1)
            let words: Vec<&str> = first.split(' ').collect();
            let (kind, request) = message(words[1]);
            let (to, attempt) = first
                .split_once(" to ")
                .unwrap()
                .1
                .split_once(" (attempt ")
                .unwrap();
            out.push(record(
                "broker",
                Event::Deliver {
                    message: kind,
                    request,
                    worker: worker_id(to),
                    attempt: Some(version(attempt) as u8),
                },
            ));
            continue;
        }
        if actor == "build system" {
            let name = first.split(' ').nth(1).unwrap();
            out.push(record(
                "build-system",
                Event::FinishBuild { request: id(name) },
            ));
            continue;
        }
        // worker 3 (process R1, delivery 1)
        let (told, doing) = actor.split_once(" (").unwrap();
        let request_name = doing.split(' ').nth(1).unwrap().trim_end_matches(',');
        let worker = worker_id(told);
        let mine = seen.entry(worker.clone()).or_default();
        let event = if let Some(rest) = first.strip_prefix("read ") {
            read(rest, step, mine, &mut column)
        } else if let Some(rest) = first.strip_prefix("re-read queue ") {
            let (value, v) = rest.rsplit_once(' ').unwrap();
            column = value.split(' ').next().unwrap().to_string();
            mine.queue_version = version(v);
            Event::RereadQueue {
                queue_row: queue_row(value, version(v), &column),
            }
        } else if let Some(rest) = first.strip_prefix("re-read ") {
            let words: Vec<&str> = rest.split(' ').collect();
            mine.request_version = version(words[2]);
            Event::RereadRequest {
                request: RequestRow {
                    id: id(words[0]),
                    state: state(words[1]),
                    version: version(words[2]),
                },
            }
        } else if let Some(rest) = first.strip_prefix("CAS queue ") {
            let lost = rest.contains(" lost (");
            let (from_to, read_v) = match rest.split_once(" lost (") {
                Some((ft, why)) => (ft, Some(version(why.rsplit(' ').next().unwrap()))),
                None => (rest, None),
            };
            let to = from_to.split(" -> ").nth(1).unwrap();
            let expected = read_v.unwrap_or(mine.queue_version);
            if let Some(v) = version_after(step, "queue") {
                mine.queue_version = v;
            }
            Event::Cas {
                row: RowName::Queue,
                request: None,
                expected_version: expected,
                set: slot_value(to, &column),
                won: !lost,
                aborted: false,
                step: None,
            }
        } else if let Some(rest) = first.strip_prefix("CAS ") {
            let lost = rest.contains(" lost (");
            let words: Vec<&str> = rest.split(' ').collect();
            let read_v = rest
                .split_once(" lost (")
                .map(|(_, why)| version(why.rsplit(' ').next().unwrap()));
            let expected = read_v.unwrap_or(mine.request_version);
            if let Some(v) = version_after(step, words[0]) {
                mine.request_version = v;
            }
            Event::Cas {
                row: RowName::Request,
                request: Some(id(words[0])),
                expected_version: expected,
                set: Values {
                    state: Some(state(words[3])),
                    ..Values::default()
                },
                won: !lost,
                aborted: false,
                step: None,
            }
        } else if first.starts_with("transaction") {
            transaction(first, step, mine, &column, request_name)
        } else if let Some(rest) = first.strip_prefix("reap") {
            let expected = mine.queue_version;
            let (removed, won) = if rest.starts_with(": the queue row changed") {
                (Vec::new(), false)
            } else if rest.starts_with(": no owner") {
                (Vec::new(), true)
            } else {
                let names = rest.trim().trim_end_matches(": terminal");
                (names.split(", ").map(id).collect(), true)
            };
            if let Some(v) = version_after(step, "queue") {
                mine.queue_version = v;
            }
            Event::Reap {
                expected_version: expected,
                removed,
                won,
                aborted: false,
            }
        } else if let Some(rest) = first.strip_prefix("submit build ") {
            let (name, how) = rest.split_once(": ").unwrap();
            Event::Submit {
                request: id(name),
                started: how == "it starts",
            }
        } else if let Some(rest) = first.strip_prefix("cancel build ") {
            let (name, how) = rest.split_once(": ").unwrap();
            Event::CancelBuild {
                request: id(name),
                stopped: Some(how.starts_with("it stops")),
            }
        } else if let Some(rest) = first.strip_prefix("ack ") {
            let (kind, request) = message(rest.split(':').next().unwrap());
            Event::Ack {
                message: kind,
                request,
            }
        } else if let Some(rest) = first.strip_prefix("hold ") {
            let (kind, request) = message(rest.split(':').next().unwrap());
            Event::Hold {
                message: kind,
                request,
            }
        } else {
            panic!("a step the writer cannot read: {actor}: {}", step.action)
        };
        out.push(record(&worker, event));
    }
    out
}

/// `read R1 accepted v1, queue in_flight_count 0 v1, latest head R1`, or
/// one part of a split read.
fn read(rest: &str, step: &StoryStep, mine: &mut Seen, column: &mut String) -> Event {
    let parts: Vec<&str> = rest.split(", ").collect();
    let request_part = |words: &str| {
        let w: Vec<&str> = words.split(' ').collect();
        RequestRow {
            id: id(w[0]),
            state: state(w[1]),
            version: version(w[2]),
        }
    };
    let queue_part = |words: &str, column: &mut String| {
        let words = words.trim_start_matches("queue ");
        let (value, v) = words.rsplit_once(' ').unwrap();
        *column = value.split(' ').next().unwrap().to_string();
        queue_row(value, version(v), column)
    };
    let _ = (step, &parts);
    if rest.contains(", queue ") {
        let request = request_part(parts[0]);
        let queue_words = rest.split_once(", queue ").unwrap().1;
        let queue_words = queue_words
            .rsplit_once(", latest head ")
            .map_or(queue_words, |(q, _)| q);
        let queue_row = queue_part(queue_words, column);
        let head = rest.rsplit_once("latest head ").unwrap().1;
        mine.request_version = request.version;
        mine.queue_version = queue_row.version;
        return Event::Read {
            request,
            queue_row,
            head: id(head),
        };
    }
    if let Some(head) = rest.strip_prefix("latest head ") {
        return Event::ReadHead { head: id(head) };
    }
    if rest.starts_with("queue ") {
        let queue_row = queue_part(rest, column);
        mine.queue_version = queue_row.version;
        return Event::ReadQueue { queue_row };
    }
    let request = request_part(rest);
    mine.request_version = request.version;
    Event::ReadRequest { request }
}

/// `transaction on queue and R1: queue F -> T, R1 a -> b`, or `transaction
/// lost (queue F -> T, R1 a -> b): queue is X vN (read vM), R1 is s vN
/// (read vM)`.
fn transaction(
    words: &str,
    step: &StoryStep,
    mine: &mut Seen,
    column: &str,
    request_name: &str,
) -> Event {
    let lost = words.starts_with("transaction lost");
    let what = if lost {
        words
            .trim_start_matches("transaction lost (")
            .split("): ")
            .next()
            .unwrap()
    } else {
        words.split_once(": ").unwrap().1
    };
    let (queue_words, request_words) = match what.split_once(&format!(", {request_name} ")) {
        Some((q, r)) => (q, Some(r)),
        None => (what, None),
    };
    let to = queue_words.split(" -> ").nth(1).unwrap();
    let (queue_expected, request_expected) = if lost {
        let reads: Vec<u64> = words
            .match_indices("(read v")
            .map(|(at, _)| version(words[at + 6..].split(')').next().unwrap()))
            .collect();
        (
            reads[0],
            reads.get(1).copied().unwrap_or(mine.request_version),
        )
    } else {
        (mine.queue_version, mine.request_version)
    };
    let mut writes = vec![RowWrite {
        row: RowName::Queue,
        request: None,
        expected_version: queue_expected,
        set: slot_value(to, column),
    }];
    if let Some(r) = request_words {
        let new_state = r.split(" -> ").nth(1).unwrap();
        writes.push(RowWrite {
            row: RowName::Request,
            request: Some(id(request_name)),
            expected_version: request_expected,
            set: Values {
                state: Some(state(new_state)),
                ..Values::default()
            },
        });
    }
    if let Some(v) = version_after(step, "queue") {
        mine.queue_version = v;
    }
    if let Some(v) = version_after(step, request_name) {
        mine.request_version = v;
    }
    Event::Transaction {
        writes,
        won: !lost,
        aborted: false,
        step: None,
    }
}
