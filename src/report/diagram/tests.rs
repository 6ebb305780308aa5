use super::svg::{attribute, text_width, wrap};
use super::*;
use slotcheck_models::RowChange;

fn step(actor: &str, action: &str, changes: &[(&str, Option<&str>, Option<&str>)]) -> StoryStep {
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
    // "aa bb" is 33.8 px at 12 px, "aa bb cc" 50.8.
    assert_eq!(wrap("aa bb cc", 40.0, false), ["aa bb", "cc"]);
    assert_eq!(wrap("", 40.0, false), [""]);
    // A word wider than the line is cut; bold is wider.
    assert_eq!(wrap("mmmmmm", 40.0, false), ["mmm", "mmm"]);
    assert!(text_width("CRASH", 12.0, true) > text_width("CRASH", 12.0, false));
    assert_eq!(text_width("→", 12.0, false), 12.0);
}
