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
//! is an arrow from the actor to that lane.

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

/// One step: the actor's note, then an arrow to each other lane it changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// 1-based, as in the text story.
    pub number: usize,
    pub lane: usize,
    /// The note's lines: the step, then the rows of the actor's own lane.
    pub note: Vec<String>,
    /// To which lane, with what label (`R1: accepted (v1) (new)`).
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

fn change_line(row: &str, before: &Option<String>, after: &Option<String>) -> Option<String> {
    match (before, after) {
        (None, Some(after)) => Some(format!("{row}: {after} (new)")),
        (Some(_), Some(after)) => Some(format!("{row}: {after}")),
        (Some(_), None) => Some(format!("{row}: gone")),
        (None, None) => None,
    }
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
        let mut lanes: Vec<String> = Vec::new();
        let index = |lanes: &mut Vec<String>, name: &str| match lanes.iter().position(|l| l == name)
        {
            Some(i) => i,
            None => {
                lanes.push(name.to_string());
                lanes.len() - 1
            }
        };
        // The context of each lane's last note, to repeat it only on change.
        let mut contexts: Vec<(usize, String)> = Vec::new();
        let mut events = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let who = actor(&step.actor);
            let lane = index(&mut lanes, who.lane);
            let mark = if who.fault {
                Some(Mark::Fault(fault_word(&step.action)))
            } else if step.action.starts_with("hold") {
                Some(Mark::Hold)
            } else {
                None
            };
            let mut head = format!("{}.", i + 1);
            if let Some(mark) = &mark {
                head.push_str(&format!(" {}", mark.word()));
            }
            if let Some(when) = who.when {
                head.push_str(&format!(" {when}"));
            }
            if let Some(context) = who.context {
                let known = contexts.iter().any(|(l, c)| *l == lane && c == context);
                if !known {
                    contexts.retain(|(l, _)| *l != lane);
                    contexts.push((lane, context.to_string()));
                    head.push_str(&format!(" ({context})"));
                }
            }
            let plain = head.len() == format!("{}.", i + 1).len();
            let separator = if plain { " " } else { ": " };
            let mut note = vec![format!("{head}{separator}{}", step.action)];
            let mut arrows = Vec::new();
            for change in &step.changes {
                let Some(line) = change_line(&change.row, &change.before, &change.after) else {
                    continue;
                };
                let target = index(&mut lanes, &lane_of(&change.row));
                if target == lane {
                    note.push(line);
                } else {
                    arrows.push((target, line));
                }
            }
            events.push(Event {
                number: i + 1,
                lane,
                note,
                arrows,
                mark,
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
const COLUMN: f64 = 190.0;
const NOTE_WIDTH: f64 = 360.0;
const LINE: f64 = 15.0;
const CHAR: f64 = 6.2;
const HEAD: f64 = 34.0;
const FONT: &str = "font-family=\"sans-serif\" font-size=\"12\"";

fn lines_fitting(width: f64) -> usize {
    ((width - 12.0) / CHAR).max(16.0) as usize
}

/// The diagram as SVG elements at the origin, and its width and height.
fn svg_body(d: &Diagram) -> (String, f64, f64) {
    let margin = NOTE_WIDTH / 2.0 - COLUMN / 2.0 + 10.0;
    let width = margin * 2.0 + COLUMN * d.lanes.len().max(1) as f64;
    let x = |lane: usize| margin + COLUMN * lane as f64 + COLUMN / 2.0;
    let mut body = String::new();
    let mut y = 10.0;
    body.push_str(&format!(
        "<text x=\"10\" y=\"{:.0}\" font-family=\"sans-serif\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        y + 14.0,
        xml_escape(&d.title)
    ));
    y += 28.0;
    let top = y;
    for (i, lane) in d.lanes.iter().enumerate() {
        let label = wrap(lane, lines_fitting(COLUMN - 20.0));
        body.push_str(&format!(
            "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{HEAD}\" rx=\"4\" fill=\"#e8eefc\" stroke=\"#4a5d8f\"/>\n",
            x(i) - (COLUMN - 20.0) / 2.0,
            COLUMN - 20.0
        ));
        body.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} text-anchor=\"middle\" font-weight=\"bold\">{}</text>\n",
            x(i),
            y + HEAD / 2.0 + 4.0,
            xml_escape(&label[0])
        ));
    }
    y += HEAD + 10.0;
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
            let span = (to_x - from_x).abs().max(COLUMN);
            let label_lines = wrap(label, lines_fitting(span));
            let mid = (from_x + to_x) / 2.0;
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
    for i in 0..d.lanes.len() {
        body.push_str(&format!(
            "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"#8a94b0\" stroke-dasharray=\"4 3\"/>\n",
            x(i),
            top + HEAD,
            y
        ));
    }
    body.push_str(&items);
    (body, width, y + 10.0)
}

/// One SVG document with the diagrams one under the other.
pub fn svg_document(diagrams: &[Diagram]) -> String {
    let mut width: f64 = 200.0;
    let mut height = 0.0;
    let mut parts = String::new();
    for d in diagrams {
        let (body, w, h) = svg_body(d);
        parts.push_str(&format!(
            "<g transform=\"translate(0 {height:.1})\">\n{body}</g>\n"
        ));
        width = width.max(w);
        height += h;
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\">\n\
<defs><marker id=\"arrowhead\" markerWidth=\"10\" markerHeight=\"8\" refX=\"9\" refY=\"4\" orient=\"auto\"><polygon points=\"0 0, 10 4, 0 8\" fill=\"#333\"/></marker></defs>\n\
<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{parts}</svg>\n"
    )
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

    fn lane_of(row: &str) -> String {
        if row.contains('(') {
            "broker".into()
        } else {
            row.into()
        }
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
                "deliver process(R1)",
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
        assert_eq!(d.lanes, ["client", "R1", "broker", "worker 1", "b1"]);
        // The broker's own row is in its note, not an arrow.
        assert_eq!(d.events[1].arrows, []);
        assert_eq!(d.events[1].note[1], "process(R1): in flight");
        assert_eq!(d.events[0].arrows[0], (1, "R1: accepted (v1) (new)".into()));
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
        assert!(mermaid.contains("    L0->>L1: R1: accepted (v1) (new)\n"));
        assert!(mermaid.contains("    rect rgb(255, 221, 221)\n        Note over L3: 4. CRASH"));
        assert!(mermaid.ends_with("Note over L0,L4: => p violated\n"));

        let svg = d.svg();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains(">worker 1</text>"));
        assert!(svg.contains("fill=\"#ffdddd\""), "the crash has its band");
        assert_eq!(svg.matches("<line").count(), 5 + 2, "5 lifelines, 2 arrows");
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
