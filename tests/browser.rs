//! The HTML report, the SVG diagrams and the Explorer in a real browser:
//! Debian's Chromium, headless, with its background networking off (this
//! machine's network is closed) and a fresh profile per run.
//!
//! `.ci/run` installs Chromium, so in CI (`CI` set) a missing browser is a
//! failure. Elsewhere, without it, build.rs marks these tests ignored
//! (`cfg(chromium_missing)`, one cargo warning) so that the runner shows
//! them as ignored, never as passed.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";

fn slotcheck() -> Command {
    common::command()
}

fn scratch(name: &str) -> common::Scratch {
    common::scratch("browser", name)
}

/// The browser, or `None` after saying why the test is skipped; in CI its
/// absence fails the test.
fn chromium(test: &str) -> Option<&'static Path> {
    let path = Path::new(CHROMIUM);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{test}: no chromium at {CHROMIUM}, and CI is set: .ci/run installs it (apt-get install chromium)");
    }
    println!("SKIPPED {test}: no chromium at {CHROMIUM} (apt-get install chromium)");
    eprintln!("SKIPPED {test}: no chromium at {CHROMIUM} (apt-get install chromium)");
    None
}

/// Waits for `child` at most `limit`, then kills it.
fn wait_output(mut child: Child, limit: Duration) -> String {
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// The DOM of `url` after the page's scripts ran (virtual time lets the
/// Explorer's requests finish before the dump).
fn dump_dom(browser: &Path, url: &str, profile: &Path) -> String {
    dump_dom_at(browser, url, profile, (1280, 800))
}

/// The same in a window of this size (width, height in CSS pixels).
fn dump_dom_at(browser: &Path, url: &str, profile: &Path, window: (u32, u32)) -> String {
    let child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=5000",
            "--hide-scrollbars",
        ])
        .arg(format!("--window-size={},{}", window.0, window.1))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    wait_output(child, Duration::from_secs(90))
}

#[test]
#[cfg_attr(
    chromium_missing,
    ignore = "no chromium at /usr/bin/chromium (apt-get install chromium)"
)]
fn the_html_report_shows_the_verdict_table_and_the_diagrams_in_chromium() {
    let dir = scratch("report");
    let report = dir.join("report.html");
    let status = slotcheck()
        .args([
            "compare",
            "--requests",
            "1",
            "--stalls",
            "0",
            "--quiet",
            "--html",
        ])
        .arg(&report)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("<table class=\"verdicts\">"));
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(
        leftovers.len(),
        1,
        "the report is written whole, nothing else"
    );

    let Some(browser) =
        chromium("the_html_report_shows_the_verdict_table_and_the_diagrams_in_chromium")
    else {
        return;
    };
    let dom = dump_dom(
        browser,
        &format!("file://{}", report.display()),
        &dir.join("profile"),
    );
    assert!(dom.contains("<table class=\"verdicts\">"), "{dom}");
    assert!(dom.contains("<th>claim-first</th><th>fail-open</th><th>owner-keyed</th>"));
    assert!(dom.contains("violated (8 steps)"));
    assert!(dom.contains("<div class=\"diagram\"><div class=\"lane-heads\"><svg"));
    assert!(
        dom.contains(">worker 1</text>"),
        "a diagram's lane is drawn"
    );
}

#[test]
#[cfg_attr(
    chromium_missing,
    ignore = "no chromium at /usr/bin/chromium (apt-get install chromium)"
)]
fn the_scenario_report_shows_a_verdict_cell_and_a_diagram_in_chromium() {
    let dir = scratch("scenario-report");
    let report = dir.join("report.html");
    let scenario =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/link-before-1649-double-run.toml");
    let status = slotcheck()
        .arg("check")
        .arg(&scenario)
        .arg("--html")
        .arg(&report)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "the scenario runs as expected");
    let Some(browser) =
        chromium("the_scenario_report_shows_a_verdict_cell_and_a_diagram_in_chromium")
    else {
        return;
    };
    // Every check went as expected: the scenario is folded, and the double
    // run's cell links to its folded story; following the link opens it.
    let page = std::fs::read_to_string(&report).unwrap();
    // The cell is in the folded scenario's tables, packed with the stories.
    let html = slotcheck::report::html::lazy::unpack(&page).join("");
    let cell = html
        .find(">violated (25 steps)</a></td>")
        .expect("the double run's verdict cell");
    let link = &html[html[..cell].rfind("<a href=\"#").unwrap() + 10..cell - 1];
    let dom = dump_dom(
        browser,
        &format!("file://{}#{link}", report.display()),
        &dir.join("profile"),
    );
    assert!(
        dom.contains("<details class=\"scenario\" id=\"s-link-before-1649-double-run\">"),
        "{dom}"
    );
    // The scenario's own tables stay folded (the story was opened, not the
    // scenario); its cells are drawn in a_scenarios_expected_violation_....
    assert!(dom.contains("<div class=\"diagram\"><div class=\"lane-heads\"><svg"));
    assert!(
        dom.contains(">b2</text>"),
        "a diagram's builder lane is drawn"
    );
}

#[test]
#[cfg_attr(
    chromium_missing,
    ignore = "no chromium at /usr/bin/chromium (apt-get install chromium)"
)]
fn the_svg_diagram_is_a_document_chromium_renders_without_errors() {
    let dir = scratch("svg");
    let output = slotcheck()
        .args([
            "check",
            "--design",
            "claim-first",
            "--requests",
            "1",
            "--stalls",
            "0",
        ])
        .args(["--format", "svg", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "claim-first has violations");
    let svg = dir.join("diagram.svg");
    std::fs::write(&svg, &output.stdout).unwrap();
    let Some(browser) = chromium("the_svg_diagram_is_a_document_chromium_renders_without_errors")
    else {
        return;
    };
    let dom = dump_dom(
        browser,
        &format!("file://{}", svg.display()),
        &dir.join("profile"),
    );
    // Chromium shows an XML error page instead of a malformed document.
    assert!(
        !dom.contains("This page contains the following errors"),
        "{dom}"
    );
    assert!(dom.contains("<svg"));
    assert!(dom.contains("no-wedge: claim-first, 8 steps"));
}

/// What `script` measures in the page `html` laid out in a window 1400 px
/// wide: the test loads a copy with the script appended, which waits for
/// the page's own script to draw the open stories' diagrams, then writes
/// its findings into `<pre id="measured">`.
fn measure_at_1400(browser: &Path, dir: &Path, html: &str, script: &str) -> String {
    let copy = dir.join("measured.html");
    let page = html.replace(
        "</body>",
        &format!(
            "<pre id=\"measured\"></pre><script>
             const drawn = () => [...document.querySelectorAll('details[open] > .lazy')].every(s => s.children.length > 0);
             const measure = () => {{ if (!drawn()) return setTimeout(measure, 20); {script} }};
             measure();</script></body>"
        ),
    );
    std::fs::write(&copy, page).unwrap();
    let dom = dump_dom_at(
        browser,
        &format!("file://{}", copy.display()),
        &dir.join("profile"),
        (1400, 900),
    );
    let start = dom.find("<pre id=\"measured\">").expect("the script ran") + 19;
    let end = start + dom[start..].find("</pre>").unwrap();
    dom[start..end].to_string()
}

/// A number the script wrote as `name=value`.
fn measured(text: &str, name: &str) -> f64 {
    let at = text
        .find(&format!("{name}="))
        .unwrap_or_else(|| panic!("{name} in {text}"));
    text[at + name.len() + 1..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
#[cfg_attr(
    chromium_missing,
    ignore = "no chromium at /usr/bin/chromium (apt-get install chromium)"
)]
fn a_wide_diagram_reads_at_1400_px_with_its_lane_headers_in_view() {
    let dir = scratch("wide");
    let report = dir.join("report.html");
    // Two requests: a counterexample with a lane per worker, wider than
    // the window.
    let status = slotcheck()
        .args(["check", "--design", "claim-first", "--requests", "2"])
        .args([
            "--stalls",
            "0",
            "--property",
            "count-not-low",
            "--quiet",
            "--html",
        ])
        .arg(&report)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1), "claim-first violates count-not-low");
    let Some(browser) = chromium("a_wide_diagram_reads_at_1400_px_with_its_lane_headers_in_view")
    else {
        return;
    };
    let html = std::fs::read_to_string(&report).unwrap();
    let text = measure_at_1400(
        browser,
        &dir,
        &html,
        "const box = document.querySelector('.diagram');
         const heads = box.querySelector('.lane-heads');
         const before = heads.getBoundingClientRect().top - box.getBoundingClientRect().top;
         box.scrollTop = 600;
         box.scrollLeft = 300;
         const after = heads.getBoundingClientRect().top - box.getBoundingClientRect().top;
         document.getElementById('measured').textContent =
           'page=' + document.documentElement.scrollWidth + ' window=' + window.innerWidth +
           ' diagram=' + box.scrollWidth + ' box=' + box.clientWidth +
           ' scrolled=' + box.scrollTop + ' before=' + before + ' after=' + after;",
    );
    assert!(
        measured(&text, "page") <= measured(&text, "window"),
        "the page does not scroll sideways: {text}"
    );
    assert!(
        measured(&text, "diagram") > measured(&text, "box"),
        "this diagram is wider than the window and scrolls in its box: {text}"
    );
    assert!(measured(&text, "scrolled") > 0.0, "{text}");
    assert!(
        measured(&text, "after").abs() <= 2.0 && measured(&text, "before").abs() <= 2.0,
        "the lane headers stay at the top of the box while it scrolls: {text}"
    );
}

#[test]
#[cfg_attr(
    chromium_missing,
    ignore = "no chromium at /usr/bin/chromium (apt-get install chromium)"
)]
fn a_scenarios_expected_violation_is_not_painted_as_a_failure_in_chromium() {
    let dir = scratch("expected");
    let report = dir.join("report.html");
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/SP-OCT-003.toml");
    let status = slotcheck()
        .arg("check")
        .arg(&scenario)
        .arg("--html")
        .arg(&report)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "the scenario runs as expected");
    let Some(browser) =
        chromium("a_scenarios_expected_violation_is_not_painted_as_a_failure_in_chromium")
    else {
        return;
    };
    // Opened as a reader opens the folded scenario: its tables are drawn
    // from the packed entries (measure_at_1400 waits for them).
    let html = std::fs::read_to_string(&report).unwrap().replace(
        "<details class=\"scenario\"",
        "<details open class=\"scenario\"",
    );
    // SP-OCT-003 pins claim-first's wedge: its cell is the finding
    // reproduced, coloured as the cells that hold.
    let text = measure_at_1400(
        browser,
        &dir,
        &html,
        "const cells = [...document.querySelectorAll('table.verdicts td')];
         const colour = (word) => getComputedStyle(cells.find(c => c.textContent.startsWith(word))).backgroundColor.replace(/ /g, '');
         document.getElementById('measured').textContent =
           'violated=' + colour('violated') + ' holds=' + colour('holds') +
           ' regressions=' + document.querySelectorAll('td.regression').length;",
    );
    let colour = |name: &str| {
        let at = text.find(&format!("{name}=")).unwrap() + name.len() + 1;
        text[at..].split_whitespace().next().unwrap().to_string()
    };
    assert_eq!(colour("violated"), colour("holds"), "{text}");
    assert_eq!(colour("holds"), "rgb(227,246,227)", "{text}");
    assert_eq!(measured(&text, "regressions"), 0.0, "{text}");
}

/// `slotcheck explore` on a free port, stopped when dropped.
struct Explorer {
    child: Child,
    address: String,
}

impl Explorer {
    fn start() -> Explorer {
        let mut child = slotcheck()
            .args([
                "explore",
                "--design",
                "claim-first",
                "--requests",
                "1",
                "--stalls",
                "0",
            ])
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let address = loop {
            let line = lines.next().expect("explore prints its address").unwrap();
            if let Some(rest) = line.strip_prefix("serving the Explorer at http://") {
                break rest.trim_end_matches('/').to_string();
            }
        };
        Explorer { child, address }
    }

    /// A plain HTTP/1.0 GET: the status line and body.
    fn get(&self, path: &str) -> String {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.0\r\nHost: {}\r\n\r\n",
            self.address
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    }
}

impl Drop for Explorer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[cfg_attr(
    chromium_missing,
    ignore = "no chromium at /usr/bin/chromium (apt-get install chromium)"
)]
fn the_explorer_answers_on_loopback_with_readable_states() {
    let explorer = Explorer::start();
    assert!(explorer.address.starts_with("127.0.0.1:"));
    let status = explorer.get("/.status");
    assert!(
        status.starts_with("HTTP/1.0 200") || status.starts_with("HTTP/1.1 200"),
        "{status}"
    );
    assert!(status.contains("\"model\":\"slotcheck::explore::Readable<"));
    let states = explorer.get("/.states/0");
    assert!(
        states.contains("\"action\":\"client: R1 arrives"),
        "{states}"
    );
    assert!(states.contains("queue: in_flight_count 0\\nR1: accepted"));
    assert!(states.contains("\"svg\":\"<svg"));
}

#[test]
#[cfg_attr(
    chromium_missing,
    ignore = "no chromium at /usr/bin/chromium (apt-get install chromium)"
)]
fn chromium_loads_the_explorer() {
    let Some(browser) = chromium("chromium_loads_the_explorer") else {
        return;
    };
    let dir = scratch("explorer");
    let explorer = Explorer::start();
    let url = format!("http://{}/#/steps/0/0", explorer.address);
    let dom = dump_dom(browser, &url, &dir.join("profile"));
    drop(explorer);
    assert!(dom.contains("Stateright Explorer"), "{dom}");
    assert!(
        dom.contains("Readable&lt;Stovepipe&gt;"),
        "the status was fetched"
    );
    assert!(dom.contains("client: R1 arrives"), "the path was fetched");
}

#[test]
#[cfg_attr(
    chromium_missing,
    ignore = "no chromium at /usr/bin/chromium (apt-get install chromium)"
)]
fn a_folded_story_of_the_scenario_report_is_drawn_when_opened_in_chromium() {
    let dir = scratch("scenario-report");
    let report = dir.join("report.html");
    let status = slotcheck()
        .args(["check", "scenarios/SP-OCT-003.toml", "--html"])
        .arg(&report)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let html = std::fs::read_to_string(&report).unwrap();
    // Folded and not drawn in the file: each diagram is packed.
    assert!(html.contains("<details class=\"finding\" id=\"t-1\"><summary>"));
    assert!(!html.contains("<svg"), "no diagram inlined");

    let Some(browser) =
        chromium("a_folded_story_of_the_scenario_report_is_drawn_when_opened_in_chromium")
    else {
        return;
    };
    // The address opens the story it points to, as a link from a verdict does.
    let dom = dump_dom(
        browser,
        &format!("file://{}#t-1", report.display()),
        &dir.join("profile"),
    );
    let story = |id: &str| -> String {
        let start = dom
            .find(&format!("<details class=\"finding\" id=\"{id}\""))
            .unwrap_or_else(|| panic!("{id} in {dom}"));
        let rest = &dom[start..];
        rest[..rest.find("</details>").unwrap()].to_string()
    };
    let opened = story("t-1");
    assert!(opened.contains(" open=\"\""), "{opened}");
    assert!(
        opened.contains("<div class=\"diagram\"><div class=\"lane-heads\"><svg"),
        "the opened story's diagram is drawn: {opened}"
    );
    assert!(opened.contains(">worker 1</text>"), "its lanes: {opened}");
    assert!(
        opened.contains("<pre class=\"story\">"),
        "its story: {opened}"
    );
    let folded = story("t-2");
    assert!(
        !folded.contains("<svg"),
        "a story not opened is not drawn: {folded}"
    );
}

/// A long note on the diagram's last lane (issue 32, item 22): the
/// Explorer's path diagram, on the Explorer's own stylesheet in Chromium,
/// keeps every note's text inside its box and every text inside the
/// diagram. Before, notes were wrapped at 6.2 px a character while
/// `sans-serif` here (DejaVu Sans) draws about 7, bold more: on this path
/// the last step's bold line ran 16 px past its box, and "ran out of
/// deliveries" was cut off at the diagram's right edge.
#[test]
#[cfg_attr(
    chromium_missing,
    ignore = "no chromium at /usr/bin/chromium (apt-get install chromium)"
)]
fn the_explorers_diagram_keeps_a_long_note_inside_its_box_and_its_edge() {
    let Some(browser) =
        chromium("the_explorers_diagram_keeps_a_long_note_inside_its_box_and_its_edge")
    else {
        return;
    };
    let dir = scratch("explorer-notes");
    let explorer = Explorer::start();
    let body = |path: &str| {
        let response = explorer.get(path);
        let at = response.find("\r\n\r\n").expect("a body") + 4;
        response[at..].to_string()
    };
    // Two crashes, the second on worker 2, the last lane: its note's first
    // line is bold and long.
    let story = [
        "client: R1 arrives",
        "broker: deliver process(R1) to worker 1",
        "worker 1 (process R1, delivery 1): read",
        "worker 1 (process R1, delivery 1): CAS",
        "fault on worker 1",
        "broker: deliver process(R1) to worker 2",
        "worker 2 (process R1, delivery 2): read",
        "fault on worker 2",
    ];
    let mut path = "/.states/0".to_string();
    let mut svg = String::new();
    for (i, step) in story.iter().enumerate() {
        let steps: serde_json::Value = serde_json::from_str(&body(&path)).unwrap();
        let (k, chosen) = steps
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .find(|(_, s)| s["action"].as_str().unwrap().starts_with(step))
            .unwrap_or_else(|| panic!("step {}: `{step}` in {steps}", i + 1));
        svg = chosen["svg"].as_str().unwrap().to_string();
        path.push_str(&format!("/{k}"));
    }
    assert!(svg.contains("ran out of"), "the last note: {svg}");
    let css = body("/app.css");
    drop(explorer);
    // The Explorer's box around the diagram, as its index.htm has it.
    let page = format!(
        "<html><head><style>{css}</style></head><body>
         <div class=\"color-dark font-code hscroll margin-bottom-small padding-small rounded\">{svg}</div>
         <pre id=\"measured\"></pre><script>
         const svg = document.querySelector('svg');
         const width = svg.viewBox.baseVal.width;
         const notes = [...svg.querySelectorAll('rect')].filter(r => r.getAttribute('fill') === '#fffbe0');
         const at = (e, name) => parseFloat(e.getAttribute(name));
         let edge = -1e9, note = -1e9, texts = 0, inNotes = 0;
         for (const t of svg.querySelectorAll('text')) {{
           const box = t.getBBox();
           const right = box.x + box.width;
           texts += 1;
           edge = Math.max(edge, right - width);
           const x = at(t, 'x'), y = at(t, 'y');
           const around = notes.find(r => at(r, 'x') < x && x < at(r, 'x') + at(r, 'width')
             && at(r, 'y') < y && y < at(r, 'y') + at(r, 'height'));
           if (around) {{ inNotes += 1; note = Math.max(note, right - at(around, 'x') - at(around, 'width')); }}
         }}
         document.getElementById('measured').textContent =
           'texts=' + texts + ' notes=' + inNotes + ' edge=' + edge + ' note=' + note;
         </script></body></html>"
    );
    let file = dir.join("diagram.html");
    std::fs::write(&file, page).unwrap();
    let dom = dump_dom(
        browser,
        &format!("file://{}", file.display()),
        &dir.join("profile"),
    );
    let start = dom.find("<pre id=\"measured\">").expect("the script ran") + 19;
    let text = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    assert!(
        measured(text, "notes") >= 8.0,
        "every step's note measured: {text}"
    );
    assert!(
        measured(text, "note") <= 0.0,
        "a note's text stays inside its box: {text}"
    );
    assert!(
        measured(text, "edge") <= 0.0,
        "no text runs past the diagram's right edge: {text}"
    );
}
