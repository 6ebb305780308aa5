use super::*;

fn row(design: &str, property: &str, got: &str, good: bool) -> ResultRow {
    ResultRow {
        design: design.into(),
        property: property.into(),
        got: got.into(),
        good,
        ..ResultRow::default()
    }
}

#[test]
fn the_page_has_the_grid_the_findings_and_no_network() {
    let mut violated = row("claim-first", "no-wedge", "violated", false);
    violated.steps = Some(8);
    violated.story = Some("   1. client: R1 arrives <now>\n".into());
    violated.svg = Some("<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>".into());
    violated.explanation = Some("no-wedge violated".into());
    let mut witness = row("claim-first", "some-held", "reached", true);
    witness.witness = true;
    let page = Page {
        title: "slotcheck check".into(),
        subtitle: "requests 1".into(),
        rows: vec![
            violated,
            row("owner-keyed", "no-wedge", "holds", true),
            witness,
        ],
        stats: vec![StatsRow {
            label: "claim-first".into(),
            states: 157,
            unique: 95,
            depth: Some(17),
            seconds: 0.01,
            cut: None,
        }],
        ..Page::default()
    };
    let html = render(&page);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<th>claim-first</th><th>owner-keyed</th>"));
    assert!(html.contains(
        "<td class=\"bad\"><a href=\"#r-claim-first-no-wedge\">violated (8 steps)</a></td>"
    ));
    assert!(html.contains("<td class=\"good\">holds</td>"));
    assert!(html.contains("<table class=\"witnesses\">"));
    assert!(html.contains("<details class=\"finding\" id=\"r-claim-first-no-wedge\" open>"));
    // The diagram is packed, drawn when its story is opened.
    assert!(!html.contains("<div class=\"diagram\">"));
    let entries = lazy::unpack(&html);
    assert_eq!(
        entries,
        ["<div class=\"diagram\"><svg xmlns=\"http://www.w3.org/2000/svg\"></svg></div>"]
    );
    assert!(html.contains("<div class=\"lazy\" data-entry=\"0\"></div>"));
    assert!(
        html.contains("R1 arrives &lt;now&gt;"),
        "the story is escaped"
    );
    assert!(html.contains("<td class=\"num\">157</td>"));
    // One inline script, nothing fetched: the only address is the SVG
    // namespace's name.
    assert!(!html.contains("<script src"));
    let addresses = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!addresses.contains("http:") && !addresses.contains("https:"));
}

#[test]
fn a_verdict_other_than_expected_is_a_regression() {
    let mut r = row("claim-first", "no-wedge", "violated", false);
    r.scenario = Some("SP-OCT-003".into());
    r.expected = Some("holds".into());
    assert!(r.is_regression());
    let html = render(&Page {
        rows: vec![r],
        ..Page::default()
    });
    assert!(html.contains("<th>SP-OCT-003 · claim-first</th>"));
    assert!(html.contains("class=\"bad regression\""));
    assert!(html.contains("violated (expected holds)"));
    assert!(html.contains("1 differ from what is expected"));
}

#[test]
fn a_verdict_the_scenario_expects_is_not_painted_as_a_failure() {
    let mut pinned = row("claim-first", "no-wedge", "violated", false);
    pinned.scenario = Some("SP-OCT-003".into());
    pinned.expected = Some("violated".into());
    pinned.steps = Some(8);
    let mut unreached = row("claim-first", "some-superseded", "not-reached", false);
    unreached.scenario = Some("SP-OCT-003".into());
    unreached.expected = Some("not-reached".into());
    unreached.witness = true;
    let mut broken = row("owner-keyed", "no-wedge", "violated", false);
    broken.scenario = Some("SP-OCT-003".into());
    broken.expected = Some("holds".into());
    let html = render(&Page {
        rows: vec![pinned, unreached, broken],
        sections: vec![Section {
            id: "SP-OCT-003".into(),
            ..Section::default()
        }],
        ..Page::default()
    });
    assert!(
        html.contains("<td class=\"expected\">violated (8 steps)</td>"),
        "the finding reproduced: {html}"
    );
    assert!(html.contains("<td class=\"expected\">NOT reached</td>"));
    assert!(html.contains(
        "<td class=\"bad regression\">violated (expected holds) <span class=\"tag\">REGRESSION</span></td>"
    ));
    assert!(html.contains("<span class=\"expected\">as the scenario expects"));
    // Outside a scenario the same verdict is what a sound design would not give.
    let plain = render(&Page {
        rows: vec![row("claim-first", "no-wedge", "violated", false)],
        ..Page::default()
    });
    assert!(plain.contains("<td class=\"bad\">violated</td>"));
}

#[test]
fn a_diagram_scrolls_in_its_own_box_under_its_lane_headers() {
    use slotcheck_models::{RowChange, StoryStep};
    let steps = [StoryStep {
        actor: "client".into(),
        action: "R1 arrives".into(),
        changes: vec![RowChange {
            row: "R1".into(),
            before: None,
            after: Some("accepted (v1)".into()),
        }],
    }];
    let svg = Diagram::from_story("no-wedge", &steps, None, str::to_string).svg();
    let mut r = row("claim-first", "no-wedge", "violated", false);
    r.story = Some("1. client: R1 arrives".into());
    r.svg = Some(svg);
    let html = render(&Page {
        rows: vec![r],
        ..Page::default()
    });
    let entries = lazy::unpack(&html);
    assert!(entries[0].starts_with("<div class=\"diagram\"><div class=\"lane-heads\"><svg"));
    assert!(html.contains(".diagram .lane-heads { position: sticky; top: 0;"));
    assert!(html.contains(".diagram { overflow: auto; max-height: 85vh;"));
    let body_rule = html.lines().find(|l| l.starts_with("body {")).unwrap();
    assert!(
        !body_rule.contains("max-width"),
        "the page is as wide as the window: {body_rule}"
    );
}

#[test]
fn the_what_to_merge_table_has_a_row_per_design_and_links_each_violation_to_its_story() {
    let mut violated = row("claim-first", "no-wedge", "violated", false);
    violated.scenario = Some("SP-OCT-003".into());
    violated.steps = Some(8);
    violated.story = Some("   1. client: R1 arrives\n".into());
    let mut holds = row("owner-keyed", "no-wedge", "holds", true);
    holds.scenario = Some("SP-OCT-003".into());
    let design = |name: &str, cost: &str| MatrixDesign {
        name: name.into(),
        change: format!("{name} changes step b"),
        cost: cost.into(),
    };
    let page = Page {
        title: "slotcheck: what to merge".into(),
        rows: vec![violated.clone(), holds],
        matrix: Some(Matrix {
            findings: vec![MatrixFinding {
                id: "SP-OCT-003".into(),
                title: "a crash wedges".into(),
                property: "no-wedge".into(),
                bounds: "requests 1".into(),
            }],
            designs: vec![
                design("claim-first", "today"),
                design("owner-keyed", "a column"),
            ],
        }),
        ..Page::default()
    };
    let html = render(&page);
    let table = &html[html.find("<table class=\"matrix\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(table.contains(
        "<th><a href=\"#d-claim-first\">claim-first</a></th><td class=\"bad\"><a href=\"#"
    ));
    assert!(table.contains(&format!(
        "href=\"#{}\">violated (8 steps)</a>",
        violated.anchor()
    )));
    assert!(table.contains("<td class=\"good\">holds</td><td>a column</td>"));
    assert!(
        html.contains(&format!("id=\"{}\"", violated.anchor())),
        "the story is on the page"
    );
    assert!(html.contains("owner-keyed changes step b"));
}

#[test]
fn regressions_come_first_and_passing_scenarios_are_folded() {
    let scenario_row = |id: &str, expected: &str, got: &str| {
        let mut r = row("claim-first", "no-wedge", got, got == "holds");
        r.scenario = Some(id.into());
        r.expected = Some(expected.into());
        r.story = (got == "violated").then(|| format!("story of {id}\n"));
        r.svg = r.story.as_ref().map(|_| "<svg></svg>".to_string());
        r
    };
    let section = |id: &str| Section {
        id: id.into(),
        title: format!("{id} title"),
        ..Section::default()
    };
    let html = render(&Page {
        rows: vec![
            scenario_row("PASSING", "violated", "violated"),
            scenario_row("BROKEN", "holds", "violated"),
        ],
        sections: vec![section("PASSING"), section("BROKEN")],
        ..Page::default()
    });
    let at = |needle: &str| {
        html.find(needle)
            .unwrap_or_else(|| panic!("{needle} in {html}"))
    };
    // The regression's story, open, before every table.
    assert!(at("<h2>Regressions</h2>") < at("<table"));
    assert!(
        html.contains("<details class=\"finding\" id=\"r-BROKEN---claim-first-no-wedge\" open>")
    );
    assert!(html.contains("<pre class=\"story\">story of BROKEN\n</pre>"));
    // The scenario with the regression first and open; the passing one folded.
    assert!(at("<details class=\"scenario\" id=\"s-BROKEN\" open>") < at("id=\"s-PASSING\""));
    assert!(html.contains("<details class=\"scenario\" id=\"s-PASSING\"><summary>"));
    assert!(html.contains("1 check as expected"));
    // The pinned violation's story is folded and packed, not lost; its
    // cell links to it.
    assert!(html.contains("<details class=\"finding\" id=\"t-1\"><summary><h3>no-wedge — violated: PASSING · claim-first</h3>"));
    // The cell is in the folded scenario's packed tables.
    let drawn = format!("{html}{}", lazy::unpack(&html).join(""));
    assert!(drawn.contains("<a href=\"#t-1\">violated</a>"));
    assert!(!html.contains("story of PASSING"));
    assert!(lazy::unpack(&html)
        .iter()
        .any(|e| e.contains("<pre class=\"story\">story of PASSING\n</pre>")));
}

#[test]
fn text_is_escaped_by_construction() {
    let mut r = row("<b>design</b>", "no-wedge", "violated", false);
    r.story = Some("a <script> & more\n".into());
    let html = render(&Page {
        title: "a \"title\" <i>".into(),
        rows: vec![r],
        ..Page::default()
    });
    assert!(!html.contains("<b>design</b>"));
    assert!(html.contains("&lt;b&gt;design&lt;/b&gt;"));
    assert!(html.contains("a &lt;script&gt; &amp; more"));
    assert!(html.contains("<title>a &quot;title&quot; &lt;i&gt;</title>"));
}

#[test]
fn checks_that_tell_the_same_story_share_one_folded_story() {
    let told = |scenario: &str, design: &str| {
        let mut r = row(design, "some-held", "reached", true);
        r.scenario = Some(scenario.into());
        r.expected = Some("reached".into());
        r.witness = true;
        r.story = Some("   1. client: R1 arrives\n".into());
        r.svg = Some("<svg></svg>".into());
        r
    };
    let html = render(&Page {
        rows: vec![told("A", "claim-first"), told("B", "owner-keyed")],
        sections: vec![
            Section {
                id: "A".into(),
                ..Section::default()
            },
            Section {
                id: "B".into(),
                ..Section::default()
            },
        ],
        ..Page::default()
    });
    assert_eq!(
        html.matches("<details class=\"finding\"").count(),
        1,
        "{html}"
    );
    assert!(html.contains("some-held — reached: A · claim-first, B · owner-keyed"));
    // Both folded scenarios' packed tables link to it.
    let drawn = lazy::unpack(&html).join("");
    assert_eq!(drawn.matches("<a href=\"#t-1\">reached</a>").count(), 2);
}
