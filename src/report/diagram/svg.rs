//! The diagram drawn as SVG here: lanes, notes and arrows laid out in
//! fixed columns, text wrapped to fit, and several diagrams in one document.

use super::*;

/// The advance widths of DejaVu Sans, the `sans-serif` of Debian and many
/// a Linux, for ASCII 32 to 126, in thousandths of an em (measured in
/// Chromium, rounded up), regular and bold. Arial and Helvetica are
/// narrower for nearly every character, so text measured by these fits
/// there too. (An average of 6.2 px a character at 12 px, assumed before,
/// let a long note run past its box, and past the diagram's right edge,
/// where it was cut off.)
const REGULAR: [u16; 95] = [
    318, 401, 460, 838, 637, 951, 780, 275, 391, 391, 500, 838, 318, 361, 318, 337, 637, 637, 637,
    637, 637, 637, 637, 637, 637, 637, 337, 337, 838, 838, 838, 531, 1000, 710, 687, 699, 771, 632,
    576, 775, 752, 295, 295, 656, 558, 863, 749, 788, 604, 788, 695, 635, 596, 733, 685, 989, 686,
    611, 686, 391, 337, 391, 838, 500, 500, 613, 635, 550, 635, 616, 345, 635, 634, 278, 278, 580,
    278, 975, 634, 612, 635, 635, 396, 522, 393, 634, 592, 819, 592, 592, 525, 637, 337, 637, 838,
];
const BOLD: [u16; 95] = [
    349, 457, 522, 838, 696, 1002, 873, 307, 457, 457, 524, 838, 380, 416, 380, 366, 696, 696, 696,
    696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 581, 1000, 774, 763, 734, 831, 684,
    684, 821, 838, 373, 373, 775, 638, 996, 838, 851, 733, 851, 771, 680, 703, 813, 774, 1104, 772,
    725, 726, 457, 366, 457, 838, 500, 500, 675, 716, 593, 716, 679, 406, 716, 713, 343, 343, 666,
    343, 1043, 713, 688, 716, 716, 494, 596, 479, 713, 652, 924, 646, 652, 582, 713, 366, 713, 838,
];

/// How wide `text` is drawn at `size` px: any character past ASCII (an
/// arrow, an ellipsis) counted as a whole em, as wide as the widest.
pub(super) fn text_width(text: &str, size: f64, bold: bool) -> f64 {
    let table = if bold { &BOLD } else { &REGULAR };
    let thousandths: u32 = text
        .chars()
        .map(|c| match c as u32 {
            code @ 32..=126 => u32::from(table[(code - 32) as usize]),
            _ => 1000,
        })
        .sum();
    f64::from(thousandths) * size / 1000.0
}

/// Greedy word wrap to `width` px of 12 px text; a word wider than that is
/// cut where it must be.
pub(super) fn wrap(text: &str, width: f64, bold: bool) -> Vec<String> {
    let fits = |line: &str| text_width(line, 12.0, bold) <= width;
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let joined = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if fits(&joined) {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        for c in word.chars() {
            line.push(c);
            if !fits(&line) && line.chars().count() > 1 {
                line.pop();
                lines.push(std::mem::replace(&mut line, c.to_string()));
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

// The SVG's geometry, in pixels.
const COLUMN: f64 = 160.0;
const NOTE_WIDTH: f64 = 330.0;
const LINE: f64 = 15.0;
const HEAD: f64 = 34.0;
const FONT: &str = "font-family=\"sans-serif\" font-size=\"12\"";
/// Text starts this far inside its box, and stops as far from its end.
const PAD: f64 = 6.0;

/// The diagram as SVG elements at the origin, and its width and height.
///
/// The title and the lane headers are one group (`class="heads"`, its
/// height in `data-height`) and everything below them another
/// (`class="events"`), so that a page can keep the headers in view while
/// the events scroll under them ([`split_heads`]).
fn svg_body(d: &Diagram) -> (String, f64, f64) {
    let margin = NOTE_WIDTH / 2.0 - COLUMN / 2.0 + 10.0;
    // Wide enough for the title too.
    let width = (margin * 2.0 + COLUMN * d.lanes.len().max(1) as f64)
        .max(text_width(&d.title, 14.0, true) + 20.0);
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
        let label = wrap(lane, COLUMN - 20.0 - 2.0 * PAD, true);
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
        // A marked step's first line is bold.
        let note_lines: Vec<String> = event
            .note
            .iter()
            .enumerate()
            .flat_map(|(k, l)| wrap(l, NOTE_WIDTH - 2.0 * PAD, k == 0 && event.mark.is_some()))
            .collect();
        let note_height = note_lines.len() as f64 * LINE + 8.0;
        let mut arrows = String::new();
        let mut ay = y + note_height + 6.0;
        for (to, label) in &event.arrows {
            let (from_x, to_x) = (x(event.lane), x(*to));
            // A label may run wider than a short arrow: nothing else shares
            // its line. It stays inside the drawing.
            let span = (to_x - from_x).abs().max(NOTE_WIDTH);
            let label_lines = wrap(label, span - 2.0 * PAD, false);
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
                note_x + PAD,
                y + 15.0 + k as f64 * LINE,
                xml_escape(line)
            ));
        }
        items.push_str(&arrows);
        y = end + 8.0;
    }
    if let Some(ending) = &d.ending {
        let lines = wrap(ending, width - 20.0 - 2.0 * PAD, false);
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
pub(super) fn attribute(text: &str, name: &str) -> Option<f64> {
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
