//! Sequence diagrams of counterexamples: a story (the [`StoryStep`]s a model
//! tells) as lanes and events, written as Mermaid text or as a standalone SVG
//! drawn here (no external program, no font or script from a network).
//!
//! Lanes come from the story alone, so any [`Narrated`] model gets them: each
//! actor is a lane (`worker 1 (process R1, delivery 1)` is the lane
//! `worker 1`, `t=0s b1 (its clock t=35s)` the lane `b1`, `fault on worker 1
//! (...)` the lane `worker 1` with the step marked), and each changed row goes
//! to the lane [`Narrated::lane`] names (`process(R1)` to `broker`). A change
//! on the actor's own lane is written in the actor's note; a change elsewhere
//! is an arrow from the actor to that lane, labelled `before → after`. A
//! delivery is an arrow from the broker to the worker it starts, and a run of
//! plain time steps (`5 s pass`) is one note (`45 s pass`).
//!
//! The lanes stand in a fixed order, whatever the story happens to touch
//! first, so that two diagrams of one model read alike: see [`lane_rank`].

mod svg;
#[cfg(test)]
mod tests;

pub use svg::{split_heads, svg_document};

use crate::report::xml_escape;
use slotcheck_models::{Narrated, StoryStep};

/// Why a step stands out: a fault (crash, stall, delay...) or a hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mark {
    Fault(String),
    Hold,
}

impl Mark {
    pub fn word(&self) -> String {
        match self {
            Mark::Fault(word) => word.to_uppercase(),
            Mark::Hold => "HOLD".into(),
        }
    }
}

/// One step, or a run of plain time steps: the actor's note, then an arrow
/// to each other lane it changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// 1-based, as in the text story.
    pub number: usize,
    /// The last step this event stands for: `number` unless time steps were
    /// collapsed into it.
    pub last: usize,
    pub lane: usize,
    /// The note's lines: the step, then the rows of the actor's own lane.
    pub note: Vec<String>,
    /// To which lane, with what label (`R1: accepted (v1) → processing (v2)`).
    pub arrows: Vec<(usize, String)>,
    pub mark: Option<Mark>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagram {
    pub title: String,
    pub lanes: Vec<String>,
    pub events: Vec<Event>,
    /// The last line: why the property fails in the last state.
    pub ending: Option<String>,
}

/// An actor as a lane: its name without the time stamp, the `fault on`
/// prefix and the parenthesised context.
struct Actor<'a> {
    lane: &'a str,
    when: Option<&'a str>,
    context: Option<&'a str>,
    fault: bool,
}

fn actor(text: &str) -> Actor<'_> {
    let mut rest = text.trim();
    let mut when = None;
    if rest.starts_with("t=") {
        if let Some((stamp, after)) = rest.split_once(' ') {
            when = Some(stamp);
            rest = after;
        }
    }
    let fault = rest.starts_with("fault on ");
    if fault {
        rest = &rest["fault on ".len()..];
    }
    let mut context = None;
    if rest.ends_with(')') {
        if let Some(open) = rest.find(" (") {
            context = Some(&rest[open + 2..rest.len() - 1]);
            rest = &rest[..open];
        }
    }
    Actor {
        lane: rest,
        when,
        context,
        fault,
    }
}

/// Where a lane stands, left to right. Stovepipe: the client, the broker,
/// the queue row, the request rows, the workers by number, the builds. Link:
/// time, the consumer, the builders by number, the bucket, the results. So
/// the actors that start things are on the left, the rows they write in the
/// middle, and what comes out on the right. A lane no model names here comes
/// last, in the order the story meets it.
pub fn lane_rank(lane: &str) -> (u8, u32) {
    let numbered = |prefix: &str| -> Option<u32> { lane.strip_prefix(prefix)?.parse().ok() };
    match lane {
        "client" | "time" => (0, 0),
        "broker" | "consumer" => (1, 0),
        "queue" => (2, 0),
        "build system" | "builds" | "bucket" => (5, 0),
        "results" => (6, 0),
        _ => {
            if let Some(n) = numbered("R") {
                (3, n)
            } else if let Some(n) = numbered("worker ").or_else(|| numbered("b")) {
                (4, n)
            } else {
                (7, 0)
            }
        }
    }
}

/// The kind of fault a step is, from the first word of its text that names
/// one: `crashes while building` is a `crash`, `stall past the visibility
/// timeout` a `stall`, `its heartbeat is late` a `delay`.
fn fault_word(action: &str) -> String {
    const KINDS: [(&str, &str); 5] = [
        ("crash", "crash"),
        ("stall", "stall"),
        ("delay", "delay"),
        ("late", "delay"),
        ("drop", "drop"),
    ];
    for word in action.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if let Some((_, kind)) = KINDS.iter().find(|(stem, _)| word.starts_with(stem)) {
            return kind.to_string();
        }
    }
    "fault".into()
}

/// A changed row as a line: `before → after`, named unless the row is the
/// lane it is drawn on (the queue's lane needs no `queue:`).
fn change_line(
    row: &str,
    lane: &str,
    before: &Option<String>,
    after: &Option<String>,
) -> Option<String> {
    let value = match (before, after) {
        (None, Some(after)) => format!("{after} (new)"),
        (Some(before), Some(after)) => format!("{before} → {after}"),
        (Some(before), None) => format!("{before} → gone"),
        (None, None) => return None,
    };
    Some(if row == lane {
        value
    } else {
        format!("{row}: {value}")
    })
}

/// A broker's delivery: what it delivers and to which worker. The step reads
/// `deliver process(R1) to worker 1 (attempt 1)`, or, without the worker,
/// `deliver process(R1) (attempt 1)`: workers are numbered by delivery, so
/// the `n`th delivery starts worker `n`.
fn delivery(action: &str, deliveries_so_far: usize) -> Option<(String, String)> {
    let rest = action.strip_prefix("deliver ")?;
    let (what, attempt) = match rest.split_once(" (") {
        Some((what, attempt)) => (what, Some(attempt.trim_end_matches(')'))),
        None => (rest, None),
    };
    let (message, worker) = match what.split_once(" to ") {
        Some((message, worker)) => (message, worker.to_string()),
        None => (what, format!("worker {}", deliveries_so_far + 1)),
    };
    let label = match attempt {
        Some(attempt) => format!("{message}, {attempt}"),
        None => message.to_string(),
    };
    Some((worker, label))
}

/// `5 s pass`: a plain time step, and how many seconds it is.
fn time_passing(action: &str) -> Option<u32> {
    action.strip_suffix(" s pass")?.parse().ok()
}

/// A row a step changed, with the lane that holds it.
#[derive(Clone)]
struct Change {
    row: String,
    lane: String,
    before: Option<String>,
    after: Option<String>,
}

/// A step before lanes are numbered and lines are written.
struct Raw {
    number: usize,
    last: usize,
    lane: String,
    when: Option<String>,
    context: Option<String>,
    action: String,
    mark: Option<Mark>,
    changes: Vec<Change>,
    /// A delivery's arrow: to which worker's lane, with what label.
    delivers: Option<(String, String)>,
}

/// Consecutive plain time steps of one actor become one: `45 s pass`, each
/// row changed from its first `before` to its last `after`.
fn collapse_time(raws: Vec<Raw>) -> Vec<Raw> {
    let mut out: Vec<Raw> = Vec::new();
    for raw in raws {
        if let (Some(prev), Some(secs)) = (out.last_mut(), time_passing(&raw.action)) {
            let same_kind = prev.lane == raw.lane
                && prev.mark.is_none()
                && raw.mark.is_none()
                && prev.context == raw.context;
            if let (true, Some(prev_secs)) = (same_kind, time_passing(&prev.action)) {
                prev.action = format!("{} s pass", prev_secs + secs);
                prev.last = raw.last;
                for change in raw.changes {
                    match prev.changes.iter_mut().find(|c| c.row == change.row) {
                        Some(known) => known.after = change.after,
                        None => prev.changes.push(change),
                    }
                }
                prev.changes.retain(|c| c.before != c.after);
                continue;
            }
        }
        out.push(raw);
    }
    out
}

impl Diagram {
    /// The diagram of a story told by `model`; `ending` is the explanation
    /// of the last state, if any.
    pub fn of<M: Narrated>(
        model: &M,
        title: &str,
        steps: &[StoryStep],
        ending: Option<&str>,
    ) -> Diagram {
        Diagram::from_story(title, steps, ending, |row| model.lane(row))
    }

    /// The same, with the lane of each row given by `lane_of`.
    pub fn from_story(
        title: &str,
        steps: &[StoryStep],
        ending: Option<&str>,
        lane_of: impl Fn(&str) -> String,
    ) -> Diagram {
        let mut raws = Vec::new();
        let mut deliveries = 0;
        for (i, step) in steps.iter().enumerate() {
            let who = actor(&step.actor);
            let mark = if who.fault {
                Some(Mark::Fault(fault_word(&step.action)))
            } else if step.action.starts_with("hold") {
                Some(Mark::Hold)
            } else {
                None
            };
            let delivers = if who.lane == "broker" {
                delivery(&step.action, deliveries)
            } else {
                None
            };
            deliveries += usize::from(delivers.is_some());
            raws.push(Raw {
                number: i + 1,
                last: i + 1,
                lane: who.lane.to_string(),
                when: who.when.map(str::to_string),
                context: who.context.map(str::to_string),
                action: step.action.clone(),
                mark,
                changes: step
                    .changes
                    .iter()
                    .map(|c| Change {
                        row: c.row.clone(),
                        lane: lane_of(&c.row),
                        before: c.before.clone(),
                        after: c.after.clone(),
                    })
                    .collect(),
                delivers,
            });
        }
        let raws = collapse_time(raws);

        // Every lane the story touches, in the fixed order.
        let mut lanes: Vec<String> = Vec::new();
        for raw in &raws {
            let touched = std::iter::once(&raw.lane)
                .chain(raw.changes.iter().map(|c| &c.lane))
                .chain(raw.delivers.iter().map(|(worker, _)| worker));
            for lane in touched {
                if !lanes.contains(lane) {
                    lanes.push(lane.clone());
                }
            }
        }
        lanes.sort_by_key(|lane| lane_rank(lane));
        let index = |name: &str| lanes.iter().position(|l| l == name).expect("collected");

        // The context of each lane's last note, to repeat it only on change.
        let mut contexts: Vec<(usize, String)> = Vec::new();
        let mut events = Vec::new();
        for raw in raws {
            let lane = index(&raw.lane);
            let mut head = if raw.last > raw.number {
                format!("{}.–{}.", raw.number, raw.last)
            } else {
                format!("{}.", raw.number)
            };
            let plain = head.len();
            if let Some(mark) = &raw.mark {
                head.push_str(&format!(" {}", mark.word()));
            }
            if let Some(when) = &raw.when {
                head.push_str(&format!(" {when}"));
            }
            if let Some(context) = &raw.context {
                let known = contexts.iter().any(|(l, c)| *l == lane && c == context);
                if !known {
                    contexts.retain(|(l, _)| *l != lane);
                    contexts.push((lane, context.clone()));
                    head.push_str(&format!(" ({context})"));
                }
            }
            let separator = if head.len() == plain { " " } else { ": " };
            let mut note = vec![format!("{head}{separator}{}", raw.action)];
            let mut arrows = Vec::new();
            if let Some((worker, label)) = &raw.delivers {
                arrows.push((index(worker), label.clone()));
            }
            for change in &raw.changes {
                let Some(line) =
                    change_line(&change.row, &change.lane, &change.before, &change.after)
                else {
                    continue;
                };
                let target = index(&change.lane);
                if target == lane {
                    note.push(line);
                } else {
                    arrows.push((target, line));
                }
            }
            events.push(Event {
                number: raw.number,
                last: raw.last,
                lane,
                note,
                arrows,
                mark: raw.mark,
            });
        }
        Diagram {
            title: title.to_string(),
            lanes,
            events,
            ending: ending.map(str::to_string),
        }
    }

    /// A Mermaid `sequenceDiagram`; faults are in a red band, holds in an
    /// amber one.
    pub fn mermaid(&self) -> String {
        let mut out = String::from("sequenceDiagram\n");
        out.push_str(&format!("    %% {}\n", self.title.replace('\n', " ")));
        for (i, lane) in self.lanes.iter().enumerate() {
            out.push_str(&format!("    participant L{i} as {}\n", mermaid_text(lane)));
        }
        for event in &self.events {
            let indent = if event.mark.is_some() {
                "        "
            } else {
                "    "
            };
            match &event.mark {
                Some(Mark::Fault(_)) => out.push_str("    rect rgb(255, 221, 221)\n"),
                Some(Mark::Hold) => out.push_str("    rect rgb(255, 240, 200)\n"),
                None => {}
            }
            let note: Vec<String> = event.note.iter().map(|l| mermaid_text(l)).collect();
            out.push_str(&format!(
                "{indent}Note over L{}: {}\n",
                event.lane,
                note.join("<br/>")
            ));
            for (to, label) in &event.arrows {
                out.push_str(&format!(
                    "{indent}L{}->>L{to}: {}\n",
                    event.lane,
                    mermaid_text(label)
                ));
            }
            if event.mark.is_some() {
                out.push_str("    end\n");
            }
        }
        if let (Some(ending), Some(last)) = (&self.ending, self.events.last()) {
            let first = 0;
            let span = if self.lanes.len() > 1 {
                format!("L{first},L{}", self.lanes.len() - 1)
            } else {
                format!("L{}", last.lane)
            };
            out.push_str(&format!(
                "    Note over {span}: => {}\n",
                mermaid_text(ending)
            ));
        }
        out
    }

    /// A standalone SVG document of this diagram alone.
    pub fn svg(&self) -> String {
        svg_document(std::slice::from_ref(self))
    }
}

/// Text as Mermaid reads it in a label: `;` and `#` would end or escape the
/// statement, `<` and `>` would be taken for HTML.
fn mermaid_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
