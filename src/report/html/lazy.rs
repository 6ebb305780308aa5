//! Stories and diagrams drawn when they are opened. A scenario run tells
//! the same path many times (a design's story in each scenario that reaches
//! it), and its diagrams were most of a 20 MB page. Here each distinct
//! piece of HTML is kept once, the list gzipped into one base64 block at
//! the end of the page; a small inline script unpacks it the first time a
//! story is opened (the browser's own `DecompressionStream`) and fills each
//! opened story from it. A link to a folded story opens it. The entries are
//! packed sorted by their text, with the order to put them back: alike
//! pieces (a model's diagrams, its stories) then sit within gzip's 32 KB
//! window of each other, and the page packs far smaller.

use crate::report::diagram::split_heads;
use base64::Engine;
use flate2::{write::GzEncoder, Compression};
use maud::{html, Markup, PreEscaped};
use std::collections::HashMap;
use std::io::Write;

/// The distinct pieces of a page, in the order they were added.
#[derive(Default)]
pub struct Stories {
    entries: Vec<String>,
    index: HashMap<String, usize>,
}

impl Stories {
    /// The entry holding `html`: an earlier one if the same was added.
    pub fn add(&mut self, html: String) -> usize {
        if let Some(&i) = self.index.get(&html) {
            return i;
        }
        self.entries.push(html.clone());
        self.index.insert(html, self.entries.len() - 1);
        self.entries.len() - 1
    }

    /// A diagram's box as two entries, its lane headers and its events
    /// (`"4 9"`): paths of one model share their lane headers.
    pub fn add_diagram(&mut self, svg: &str) -> String {
        let boxed = diagram_box(svg).into_string();
        match boxed.find("</div>") {
            Some(end) if boxed.contains("<div class=\"lane-heads\">") => {
                let heads = self.add(boxed[..end + 6].to_string());
                let events = self.add(boxed[end + 6..].to_string());
                format!("{heads} {events}")
            }
            _ => self.add(boxed).to_string(),
        }
    }

    /// The packed entries and the script that unpacks them; nothing
    /// without entries. Packed as `[order, sorted]`: `sorted[i]` is entry
    /// `order[i]`.
    pub fn script(&self) -> Markup {
        if self.entries.is_empty() {
            return html! {};
        }
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by(|&a, &b| self.entries[a].cmp(&self.entries[b]));
        let sorted: Vec<&str> = order.iter().map(|&i| self.entries[i].as_str()).collect();
        let json = serde_json::to_vec(&(order, sorted)).expect("JSON");
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(&json).expect("in memory");
        let packed =
            base64::engine::general_purpose::STANDARD.encode(gz.finish().expect("in memory"));
        html! {
            script type="application/gzip+base64" id="stories" { (PreEscaped(packed)) }
            script { (PreEscaped(SCRIPT)) }
        }
    }
}

/// A diagram in its own scrolling box, its lane headers kept in view while
/// the events scroll under them. The SVG is ours (diagram.rs escapes its
/// text); the XML prolog, if any, is not allowed inside HTML.
fn diagram_box(svg: &str) -> Markup {
    let svg = svg.trim_start_matches(|c| c != '<');
    html! {
        div class="diagram" {
            @match split_heads(svg) {
                Some((heads, events)) => { div class="lane-heads" { (PreEscaped(heads)) } (PreEscaped(events)) },
                None => (PreEscaped(svg)),
            }
        }
    }
}

/// Fills each `.lazy` slot of an opened `<details>` from the packed entries
/// it names (`data-entry="3 17 40"`: explanation, diagram, story);
/// opens the folded story (and its scenario) a link or the address points to.
const SCRIPT: &str = r#"
(() => {
  let entries = null;
  const unpack = () => entries ??= (async () => {
    const text = document.getElementById('stories').textContent.trim();
    const bytes = Uint8Array.from(atob(text), c => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    const [order, sorted] = JSON.parse(await new Response(stream).text());
    const all = [];
    order.forEach((entry, i) => { all[entry] = sorted[i]; });
    return all;
  })();
  const fill = async details => {
    for (const slot of details.querySelectorAll(':scope > .lazy:not([data-filled])')) {
      slot.dataset.filled = '';
      const entries = await unpack();
      slot.innerHTML = slot.dataset.entry.split(' ').map(i => entries[Number(i)]).join('');
    }
  };
  for (const details of document.querySelectorAll('details')) {
    details.addEventListener('toggle', () => details.open && fill(details));
    if (details.open) fill(details);
  }
  const reveal = () => {
    const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    for (let e = target; e; e = e.parentElement) if (e.tagName === 'DETAILS') e.open = true;
    if (target) target.scrollIntoView();
  };
  addEventListener('hashchange', reveal);
  reveal();
})();
"#;

/// The entries packed in a page (for tests: what a browser would unpack).
pub fn unpack(page: &str) -> Vec<String> {
    let Some(start) = page.find("<script type=\"application/gzip+base64\" id=\"stories\">") else {
        return Vec::new();
    };
    let rest = &page[start..];
    let text = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .expect("base64");
    let mut json = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut json)
        .expect("gzip");
    let (order, sorted): (Vec<usize>, Vec<String>) =
        serde_json::from_slice(&json).expect("[order, sorted entries]");
    let mut entries = vec![String::new(); sorted.len()];
    for (entry, text) in order.into_iter().zip(sorted) {
        entries[entry] = text;
    }
    entries
}
