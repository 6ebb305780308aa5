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

/// Greedy word wrap at `width` characters (a longer word gets its own line).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

// The SVG's geometry, in pixels. Characters are assumed 6.2 px wide at 12 px
// sans-serif: a wrap width, not a measurement, so text may run a little short.
const COLUMN: f64 = 160.0;
const NOTE_WIDTH: f64 = 330.0;
const LINE: f64 = 15.0;
const CHAR: f64 = 6.2;
const HEAD: f64 = 34.0;
const FONT: &str = "font-family=\"sans-serif\" font-size=\"12\"";

fn lines_fitting(width: f64) -> usize {
    ((width - 12.0) / CHAR).max(16.0) as usize
}

/// The diagram as SVG elements at the origin, and its width and height.
///
/// The title and the lane headers are one group (`class="heads"`, its
/// height in `data-height`) and everything below them another
/// (`class="events"`), so that a page can keep the headers in view while
/// the events scroll under them ([`split_heads`]).
fn svg_body(d: &Diagram) -> (String, f64, f64) {
    let margin = NOTE_WIDTH / 2.0 - COLUMN / 2.0 + 10.0;
    let width = margin * 2.0 + COLUMN * d.lanes.len().max(1) as f64;
    let x = |lane: usize| margin + COLUMN * lane as f64 + COLUMN / 2.0;
    let mut heads = String::new();
    let mut y = 10.0;
    heads.push_str(&format!(
        "<text x=\"10\" y=\"{:.0}\" font-family=\"sans-serif\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        y + 14.0,
        xml_escape(&d.title)
    ));
    y += 28.0;
    for (i, lane) in d.lanes.iter().enumerate() {
        let label = wrap(lane, lines_fitting(COLUMN - 20.0));
        heads.push_str(&format!(
            "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{HEAD}\" rx=\"4\" fill=\"#e8eefc\" stroke=\"#4a5d8f\"/>\n",
            x(i) - (COLUMN - 20.0) / 2.0,
            COLUMN - 20.0
        ));
        heads.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} text-anchor=\"middle\" font-weight=\"bold\">{}</text>\n",
            x(i),
            y + HEAD / 2.0 + 4.0,
            xml_escape(&label[0])
        ));
    }
    y += HEAD + 6.0;
    let heads_height = y;
    y += 4.0;
    let mut items = String::new();
    for event in &d.events {
        let start = y;
        let note_lines: Vec<String> = event
            .note
            .iter()
            .flat_map(|l| wrap(l, lines_fitting(NOTE_WIDTH)))
            .collect();
        let note_height = note_lines.len() as f64 * LINE + 8.0;
        let mut arrows = String::new();
        let mut ay = y + note_height + 6.0;
        for (to, label) in &event.arrows {
            let (from_x, to_x) = (x(event.lane), x(*to));
            // A label may run wider than a short arrow: nothing else shares
            // its line. It stays inside the drawing.
            let span = (to_x - from_x).abs().max(NOTE_WIDTH);
            let label_lines = wrap(label, lines_fitting(span));
            let mid = ((from_x + to_x) / 2.0).clamp(span / 2.0, width - span / 2.0);
            for (k, line) in label_lines.iter().enumerate() {
                arrows.push_str(&format!(
                    "<text x=\"{mid:.1}\" y=\"{:.1}\" {FONT} text-anchor=\"middle\">{}</text>\n",
                    ay + 11.0 + k as f64 * LINE,
                    xml_escape(line)
                ));
            }
            ay += label_lines.len() as f64 * LINE + 4.0;
            let tip = if to_x > from_x {
                to_x - 2.0
            } else {
                to_x + 2.0
            };
            arrows.push_str(&format!(
                "<line x1=\"{from_x:.1}\" y1=\"{ay:.1}\" x2=\"{tip:.1}\" y2=\"{ay:.1}\" stroke=\"#333\" stroke-width=\"1.4\" marker-end=\"url(#arrowhead)\"/>\n"
            ));
            ay += 10.0;
        }
        let end = ay.max(y + note_height + 6.0);
        let band = match event.mark {
            Some(Mark::Fault(_)) => Some("#ffdddd"),
            Some(Mark::Hold) => Some("#fff0c8"),
            None => None,
        };
        if let Some(fill) = band {
            items.push_str(&format!(
                "<rect x=\"4\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\"/>\n",
                start - 3.0,
                width - 8.0,
                end - start + 3.0
            ));
        }
        let note_x = x(event.lane) - NOTE_WIDTH / 2.0;
        let stroke = if band.is_some() { "#b03030" } else { "#9a8f4a" };
        items.push_str(&format!(
            "<rect x=\"{note_x:.1}\" y=\"{y:.1}\" width=\"{NOTE_WIDTH}\" height=\"{note_height:.1}\" fill=\"#fffbe0\" stroke=\"{stroke}\"/>\n"
        ));
        for (k, line) in note_lines.iter().enumerate() {
            let weight = if k == 0 && event.mark.is_some() {
                " font-weight=\"bold\""
            } else {
                ""
            };
            items.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" {FONT}{weight}>{}</text>\n",
                note_x + 6.0,
                y + 15.0 + k as f64 * LINE,
                xml_escape(line)
            ));
        }
        items.push_str(&arrows);
        y = end + 8.0;
    }
    if let Some(ending) = &d.ending {
        let lines = wrap(ending, lines_fitting(width - 20.0));
        let height = lines.len() as f64 * LINE + 8.0;
        items.push_str(&format!(
            "<rect x=\"10\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{height:.1}\" fill=\"#fde8e8\" stroke=\"#b03030\"/>\n",
            width - 20.0
        ));
        for (k, line) in lines.iter().enumerate() {
            items.push_str(&format!(
                "<text x=\"16\" y=\"{:.1}\" {FONT}>{}</text>\n",
                y + 15.0 + k as f64 * LINE,
                xml_escape(line)
            ));
        }
        y += height + 8.0;
    }
    let mut events = String::new();
    for i in 0..d.lanes.len() {
        events.push_str(&format!(
            "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"#8a94b0\" stroke-dasharray=\"4 3\"/>\n",
            x(i),
            heads_height,
            y
        ));
    }
    events.push_str(&items);
    let body = format!(
        "<g class=\"heads\" data-height=\"{heads_height:.0}\">\n{heads}</g>\n<g class=\"events\">\n{events}</g>\n"
    );
    (body, width, y + 10.0)
}

const ARROWHEAD: &str = "<defs><marker id=\"arrowhead\" markerWidth=\"10\" markerHeight=\"8\" refX=\"9\" refY=\"4\" orient=\"auto\"><polygon points=\"0 0, 10 4, 0 8\" fill=\"#333\"/></marker></defs>";

/// One SVG document with the diagrams one under the other.
pub fn svg_document(diagrams: &[Diagram]) -> String {
    let mut width: f64 = 200.0;
    let mut height = 0.0;
    let mut parts = String::new();
    for d in diagrams {
        let (body, w, h) = svg_body(d);
        if diagrams.len() == 1 {
            parts.push_str(&body);
        } else {
            parts.push_str(&format!(
                "<g transform=\"translate(0 {height:.1})\">\n{body}</g>\n"
            ));
        }
        width = width.max(w);
        height += h;
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\">\n\
{ARROWHEAD}\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{parts}</svg>\n"
    )
}

/// A number attribute of the first tag in `text` that has it.
fn attribute(text: &str, name: &str) -> Option<f64> {
    let at = text.find(&format!(" {name}=\""))? + name.len() + 3;
    text[at..].split('"').next()?.parse().ok()
}

/// The contents of the one `<g class="CLASS" ...>` group of `svg`.
fn group<'a>(svg: &'a str, class: &str) -> Option<&'a str> {
    let open = format!("<g class=\"{class}\"");
    if svg.matches(&open).count() != 1 {
        return None;
    }
    let start = svg.find(&open)?;
    let inner = start + svg[start..].find('>')? + 1;
    let end = inner + svg[inner..].find("</g>")?;
    Some(&svg[inner..end])
}

/// A one-diagram document (as [`Diagram::svg`] writes it) cut in two
/// `<svg>` elements of the same width: the title and lane headers, and the
/// events below them. A page keeps the first in view (`position: sticky`)
/// while the second scrolls under it, so a long diagram still says which
/// lane is which. `None` for anything else (several diagrams, or an SVG
/// not drawn here): such a document is shown whole.
pub fn split_heads(svg: &str) -> Option<(String, String)> {
    let root = &svg[svg.find("<svg")?..];
    let width = attribute(root, "width")?;
    let height = attribute(root, "height")?;
    let heads_group = &root[root.find("<g class=\"heads\"")?..];
    let cut = attribute(heads_group, "data-height")?;
    let (heads, events) = (group(root, "heads")?, group(root, "events")?);
    let svg_open = |top: f64, h: f64| {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{width:.0}\" height=\"{h:.0}\" viewBox=\"0 {top:.0} {width:.0} {h:.0}\">\n"
        )
    };
    let top = format!(
        "{}<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{heads}</svg>",
        svg_open(0.0, cut)
    );
    let rest = format!(
        "{}{ARROWHEAD}\n<rect y=\"{cut:.0}\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{events}</svg>",
        svg_open(cut, height - cut)
    );
    Some((top, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotcheck_models::RowChange;

    fn step(
        actor: &str,
        action: &str,
        changes: &[(&str, Option<&str>, Option<&str>)],
    ) -> StoryStep {
        StoryStep {
            actor: actor.into(),
            action: action.into(),
            changes: changes
                .iter()
                .map(|(row, before, after)| RowChange {
                    row: row.to_string(),
                    before: before.map(str::to_string),
                    after: after.map(str::to_string),
                })
                .collect(),
        }
    }

    /// The stovepipe model's rule, and the link model's.
    fn lane_of(row: &str) -> String {
        if row.starts_with("build ") {
            "build system".into()
        } else if row.contains('(') {
            "broker".into()
        } else if row.ends_with(" message") {
            "consumer".into()
        } else if row.ends_with(" running key") {
            "bucket".into()
        } else if row.ends_with(" result") {
            "results".into()
        } else {
            row.split(' ').next().unwrap().into()
        }
    }

    fn tick(at: u32, changes: &[(&str, Option<&str>, Option<&str>)]) -> StoryStep {
        let (from, to) = (format!("t={at}s"), format!("t={}s", at + 5));
        let mut all = vec![("time", Some(from.as_str()), Some(to.as_str()))];
        all.extend_from_slice(changes);
        step(&format!("t={at}s time"), "5 s pass", &all)
    }

    #[test]
    fn lanes_come_from_actors_and_the_rows_they_change() {
        let steps = [
            step(
                "client",
                "R1 arrives; publish process(R1)",
                &[
                    ("R1", None, Some("accepted (v1)")),
                    ("process(R1)", None, Some("visible")),
                ],
            ),
            step(
                "broker",
                "deliver process(R1) (attempt 1)",
                &[("process(R1)", Some("visible"), Some("in flight"))],
            ),
            step("worker 1 (process R1, delivery 1)", "read R1", &[]),
            step(
                "fault on worker 1 (process R1, delivery 1)",
                "crashes while building",
                &[],
            ),
            step("t=5s b1 (its clock t=40s)", "hold the ask", &[]),
        ];
        let d = Diagram::from_story("p: 5 steps", &steps, Some("p violated"), lane_of);
        assert_eq!(d.lanes, ["client", "broker", "R1", "worker 1", "b1"]);
        // The broker's own row is in its note; the delivery is an arrow.
        assert_eq!(d.events[1].note[1], "process(R1): visible → in flight");
        assert_eq!(d.events[0].arrows[0], (2, "accepted (v1) (new)".into()));
        // The context is said once per lane; a fault is marked with its word.
        assert_eq!(d.events[2].note[0], "3. (process R1, delivery 1): read R1");
        assert_eq!(d.events[3].mark, Some(Mark::Fault("crash".into())));
        assert_eq!(d.events[3].note[0], "4. CRASH: crashes while building");
        assert_eq!(d.events[4].mark, Some(Mark::Hold));
        assert_eq!(
            d.events[4].note[0],
            "5. HOLD t=5s (its clock t=40s): hold the ask"
        );

        let mermaid = d.mermaid();
        assert!(mermaid.starts_with("sequenceDiagram\n"));
        assert!(mermaid.contains("    participant L3 as worker 1\n"));
        // `;` would end a Mermaid statement.
        assert!(mermaid.contains("Note over L0: 1. R1 arrives#59; publish process(R1)"));
        assert!(mermaid.contains("    L0->>L2: accepted (v1) (new)\n"));
        assert!(mermaid.contains("    L1->>L3: process(R1), attempt 1\n"));
        assert!(mermaid.contains("    rect rgb(255, 221, 221)\n        Note over L3: 4. CRASH"));
        assert!(mermaid.ends_with("Note over L0,L4: => p violated\n"));

        let svg = d.svg();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains(">worker 1</text>"));
        assert!(svg.contains("fill=\"#ffdddd\""), "the crash has its band");
        assert_eq!(svg.matches("<line").count(), 5 + 3, "5 lifelines, 3 arrows");
    }

    #[test]
    fn lanes_stand_in_a_fixed_order_whatever_the_story_meets_first() {
        // A stovepipe story that meets its lanes out of order: a build, a
        // later worker, a request row before the queue row...
        let steps = [
            step(
                "build system",
                "build R2 finishes; publish signal(R2)",
                &[
                    ("build R2", Some("running"), Some("finished")),
                    ("signal(R2)", None, Some("visible")),
                ],
            ),
            step(
                "worker 10 (signal R2, delivery 10)",
                "CAS R2 processing -> succeeded",
                &[("R2", Some("processing (v2)"), Some("succeeded (v3)"))],
            ),
            step(
                "worker 2 (process R1, delivery 2)",
                "CAS queue in_flight_count 1 -> 0",
                &[
                    (
                        "queue",
                        Some("in_flight_count 1 (v2)"),
                        Some("in_flight_count 0 (v3)"),
                    ),
                    ("R1", Some("accepted (v1)"), Some("superseded (v2)")),
                ],
            ),
            step(
                "client",
                "R3 arrives; publish process(R3)",
                &[("R3", None, Some("accepted (v1)"))],
            ),
        ];
        let d = Diagram::from_story("t", &steps, None, lane_of);
        assert_eq!(
            d.lanes,
            [
                "client",
                "broker",
                "queue",
                "R1",
                "R2",
                "R3",
                "worker 2",
                "worker 10",
                "build system"
            ],
            "workers by number, not by name or first appearance"
        );

        // The link model's: time, the consumer, builders by number, the
        // bucket, the results.
        let steps = [
            step(
                "t=0s b2",
                "build of A1 ends: announce the result; ack A1",
                &[
                    ("A1 result", None, Some("announced")),
                    ("A1 running key", Some("b2, seen t=0s"), None),
                    ("A1 message", Some("delivered to b2"), Some("acked (gone)")),
                ],
            ),
            step(
                "t=0s b1",
                "fetch; A2 delivered into its buffer",
                &[("b1 buffer", None, Some("[A2]"))],
            ),
            tick(0, &[]),
        ];
        let d = Diagram::from_story("t", &steps, None, lane_of);
        assert_eq!(
            d.lanes,
            ["time", "consumer", "b1", "b2", "bucket", "results"]
        );
        assert_eq!(lane_rank("b12"), (4, 12));
        assert!(lane_rank("something else") > lane_rank("results"));
    }

    #[test]
    fn a_delivery_is_an_arrow_from_the_broker_to_the_worker_it_starts() {
        let steps = [
            step(
                "broker",
                "deliver process(R1) (attempt 1)",
                &[(
                    "process(R1)",
                    Some("visible, 0/2 attempts"),
                    Some("in flight, 0/2 attempts"),
                )],
            ),
            step(
                "worker 1 (process R1, delivery 1)",
                "read R1 accepted v1",
                &[],
            ),
            // Without the worker's number: workers are numbered by delivery.
            step("broker", "deliver process(R1) (attempt 2)", &[]),
            // With it, as the story tells it once it names the worker.
            step("broker", "deliver signal(R2) to worker 5 (attempt 1)", &[]),
        ];
        let d = Diagram::from_story("t", &steps, None, lane_of);
        assert_eq!(d.lanes, ["broker", "worker 1", "worker 2", "worker 5"]);
        assert_eq!(
            d.events[0].arrows,
            [(1, "process(R1), attempt 1".to_string())]
        );
        assert_eq!(
            d.events[2].arrows,
            [(2, "process(R1), attempt 2".to_string())]
        );
        assert_eq!(
            d.events[3].arrows,
            [(3, "signal(R2), attempt 1".to_string())]
        );
        // The message's own change stays in the broker's note.
        assert_eq!(
            d.events[0].note[1],
            "process(R1): visible, 0/2 attempts → in flight, 0/2 attempts"
        );
        // A delivery that says no attempt still names its worker.
        assert_eq!(
            delivery("deliver dead(R1)", 3),
            Some(("worker 4".into(), "dead(R1)".into()))
        );
    }

    #[test]
    fn a_cas_arrow_shows_the_row_before_and_after() {
        let steps = [step(
            "worker 1 (process R1, delivery 1)",
            "CAS queue in_flight_count 0 -> 1",
            &[
                (
                    "queue",
                    Some("in_flight_count 0 (v1)"),
                    Some("in_flight_count 1 (v2)"),
                ),
                ("process(R1)", Some("in flight"), None),
            ],
        )];
        let d = Diagram::from_story("t", &steps, None, lane_of);
        assert_eq!(d.lanes, ["broker", "queue", "worker 1"]);
        assert_eq!(
            d.events[0].arrows,
            [
                (
                    1,
                    "in_flight_count 0 (v1) → in_flight_count 1 (v2)".to_string()
                ),
                (0, "process(R1): in flight → gone".to_string()),
            ],
            "the queue's lane needs no `queue:`; the broker's rows are named"
        );
        let svg = d.svg();
        assert!(svg.contains(">in_flight_count 0 (v1) → in_flight_count 1 (v2)</text>"));
        assert!(d
            .mermaid()
            .contains("L2->>L1: in_flight_count 0 (v1) → in_flight_count 1 (v2)\n"));
    }

    #[test]
    fn consecutive_plain_time_steps_are_one_note() {
        let mut steps = vec![step("t=0s b1", "read A1; run A1", &[])];
        for k in 0..6 {
            let heartbeat_due = [(
                "b1",
                Some("building A1"),
                Some("building A1, heartbeat due"),
            )];
            steps.push(tick(k * 5, if k == 1 { &heartbeat_due } else { &[] }));
        }
        // A tick that does more than pass time ends the run...
        steps.push(step(
            "t=30s time",
            "5 s pass; A1's ack deadline passes unacked by b1: available again",
            &[("time", Some("t=30s"), Some("t=35s"))],
        ));
        steps.push(tick(35, &[]));
        // ... and so does a step between two ticks.
        steps.push(step("t=40s fault on b1", "crashes while building A1", &[]));
        steps.push(tick(40, &[]));
        let d = Diagram::from_story("t", &steps, Some("lost"), lane_of);
        let heads: Vec<&str> = d.events.iter().map(|e| e.note[0].as_str()).collect();
        assert_eq!(
            heads,
            [
                "1. t=0s: read A1; run A1",
                "2.–7. t=0s: 30 s pass",
                "8. t=30s: 5 s pass; A1's ack deadline passes unacked by b1: available again",
                "9. t=35s: 5 s pass",
                "10. CRASH t=40s: crashes while building A1",
                "11. t=40s: 5 s pass",
            ]
        );
        let collapsed = &d.events[1];
        assert_eq!((collapsed.number, collapsed.last), (2, 7));
        assert_eq!(collapsed.note[1], "t=0s → t=30s");
        assert_eq!(
            collapsed.arrows,
            [(1, "building A1 → building A1, heartbeat due".to_string())],
            "a row the run changed, from its first value to its last"
        );
        assert!(d.svg().contains(">2.–7. t=0s: 30 s pass</text>"));
    }

    #[test]
    fn a_page_can_keep_the_lane_headers_in_view() {
        let steps = [
            step(
                "client",
                "R1 arrives",
                &[("R1", None, Some("accepted (v1)"))],
            ),
            step("broker", "deliver process(R1) (attempt 1)", &[]),
        ];
        let d = Diagram::from_story("no-wedge: 2 steps", &steps, Some("why"), lane_of);
        let svg = d.svg();
        let (heads, events) = split_heads(&svg).expect("one diagram splits");
        let width = attribute(&svg, "width").unwrap();
        for part in [&heads, &events] {
            assert!(part.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
            assert!(part.ends_with("</svg>"));
            assert_eq!(attribute(part, "width"), Some(width), "the two parts align");
        }
        assert!(heads.contains(">no-wedge: 2 steps</text>") && heads.contains(">worker 1</text>"));
        assert!(!heads.contains("<line"), "no event in the headers");
        assert!(events.contains("marker-end=\"url(#arrowhead)\"") && events.contains("<marker"));
        assert!(!events.contains(">worker 1</text>"));
        let cut = attribute(&heads, "height").unwrap();
        assert_eq!(
            cut + attribute(&events, "height").unwrap(),
            attribute(&svg, "height").unwrap()
        );
        assert!(events.contains(&format!("viewBox=\"0 {cut:.0} ")));

        // Several diagrams in one document, or an SVG drawn elsewhere, stay whole.
        assert_eq!(split_heads(&svg_document(&[d.clone(), d])), None);
        assert_eq!(
            split_heads("<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>"),
            None
        );
    }

    #[test]
    fn a_fault_is_named_by_what_it_does() {
        assert_eq!(fault_word("crashes while building A2"), "crash");
        assert_eq!(fault_word("stall past the visibility timeout"), "stall");
        assert_eq!(fault_word("its heartbeat is late, by up to 10 s"), "delay");
        assert_eq!(fault_word("something else"), "fault");
    }

    #[test]
    fn text_is_escaped_and_wrapped() {
        assert_eq!(xml_escape("a < b & \"c\""), "a &lt; b &amp; &quot;c&quot;");
        assert_eq!(mermaid_text("0 -> 1; #2"), "0 -#gt; 1#59; #35;2");
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("", 5), [""]);
    }
}
