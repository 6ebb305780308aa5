//! `check --format mermaid|svg`, `--html` and the diagrams' lanes for both
//! models, from the command line and the library.

use crate::common;

use slotcheck::explore;
use slotcheck::report::diagram::Diagram;
use slotcheck::report::itf;
use slotcheck_models::Narrated;
use stateright::Model;

fn slotcheck(args: &[&str]) -> (Option<i32>, String, String) {
    let output = common::command().args(args).output().unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

const SMALL: [&str; 8] = [
    "check",
    "--design",
    "claim-first",
    "--requests",
    "1",
    "--stalls",
    "0",
    "--quiet",
];

#[test]
fn mermaid_has_a_lane_per_component_and_marks_the_crash_and_the_hold() {
    let mut args = SMALL.to_vec();
    args.extend(["--property", "no-wedge", "--format", "mermaid"]);
    let (code, out, err) = slotcheck(&args);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.is_empty(), "no progress line off a terminal: {err}");
    assert!(out.starts_with("sequenceDiagram\n    %% no-wedge: claim-first, 8 steps\n"));
    // The lanes in their fixed order: client, broker, queue row, request
    // rows, workers by number (builds would come last).
    let lanes: Vec<&str> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("participant L"))
        .map(|l| l.split_once(" as ").unwrap().1)
        .collect();
    assert_eq!(
        lanes,
        ["client", "broker", "queue", "R1", "worker 1", "worker 2"]
    );
    // Each delivery is an arrow from the broker to the worker it starts.
    assert!(
        out.contains("    L1->>L4: process(R1), attempt 1\n"),
        "{out}"
    );
    assert!(
        out.contains("    L1->>L5: process(R1), attempt 2\n"),
        "{out}"
    );
    // The claim's CAS shows the queue row before and after.
    assert!(
        out.contains("    L4->>L2: in_flight_count 0 (v1) → in_flight_count 1 (v2)\n"),
        "{out}"
    );
    assert!(out.contains("rect rgb(255, 221, 221)\n        Note over L4: 5. CRASH: crash#59;"));
    assert!(out.contains("Note over L5: 8. HOLD: hold process(R1)"));
    assert_eq!(out.matches("sequenceDiagram").count(), 1);
}

#[test]
fn svg_and_json_do_not_mix_and_html_is_written_whole() {
    let mut args = SMALL.to_vec();
    args.extend(["--format", "svg", "--json"]);
    let (code, _, err) = slotcheck(&args);
    assert_eq!(code, Some(2));
    assert!(err.contains("--json"), "{err}");

    let dir = common::scratch("see", "html");
    let page = dir.join("out").join("check.html");
    let mut args = SMALL.to_vec();
    args.extend(["--html", page.to_str().unwrap()]);
    let (code, out, _) = slotcheck(&args);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("no-wedge: the shortest counterexample"),
        "text as before"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h1>slotcheck check: claim-first</h1>"));
    assert!(html.contains("<details class=\"finding\" id=\"r-claim-first-no-wedge\" open>"));
    assert!(html.contains("<details class=\"finding\" id=\"r-claim-first-count-not-high\" open>"));
    assert_eq!(
        std::fs::read_dir(page.parent().unwrap()).unwrap().count(),
        1
    );
}

#[test]
fn the_link_models_lanes_are_builders_the_consumer_and_the_bucket() {
    use slotcheck_models::link::{design_named, Bounds, Link};
    // One ask, so that once its builder crashed nothing is left to fetch
    // and time may pass.
    let bounds = Bounds {
        asks: 1,
        ..Bounds::default()
    };
    let model = Link::new(design_named("check-only").unwrap(), bounds);
    let init = model.init_states().remove(0);
    let mut script = vec!["fetch b1", "read b1", "start b1", "crash b1"];
    script.extend(["tick"; 6]);
    let script: Vec<String> = script.iter().map(|s| s.to_string()).collect();
    let actions = model.parse(&init, &script).unwrap();
    let steps = model.tell(&init, &actions);
    let d = Diagram::of(&model, "link", &steps, None);
    assert_eq!(d.lanes, ["time", "consumer", "b1", "bucket"]);
    assert!(
        d.events[3].note[0].starts_with("4. CRASH t=0s"),
        "{:?}",
        d.events[3]
    );
    // Six ticks with nothing else happening are one note.
    assert_eq!(d.events.len(), 5, "{:?}", d.events);
    assert_eq!(d.events[4].note[0], "5.–10. t=0s: 30 s pass");
    assert_eq!(d.events[4].note[1], "t=0s → t=30s");
}

#[test]
fn a_saved_trace_opens_in_the_explorer_where_it_ends() {
    use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe};
    let bounds = Bounds {
        requests: 1,
        ..Bounds::default()
    };
    let model = Stovepipe::new(design_named("claim-first").unwrap(), bounds);
    let init = model.initial_state();
    let script: Vec<String> = [
        "arrive R1",
        "deliver process R1",
        "step worker 1",
        "step worker 1",
        "crash worker 1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let actions = model.parse(&init, &script).unwrap();
    let dir = common::scratch("see", "from");
    let path = dir.join("t.itf.json");
    let doc = itf::trace(
        &model,
        serde_json::json!({ "design": "claim-first" }),
        &init,
        &actions,
    );
    itf::write_atomically(&path, doc.to_string().as_bytes()).unwrap();

    let (init, read) = explore::trace_actions(&model, &path).unwrap();
    assert_eq!((init, &read), (0, &actions));
    let fragment = explore::steps_fragment(&model, init, &read).unwrap();
    assert_eq!(fragment.split('/').count(), 3 + actions.len());
    let owner_keyed = Stovepipe::new(design_named("owner-keyed").unwrap(), bounds);
    let other = explore::trace_actions(&owner_keyed, &path).unwrap_err();
    assert!(
        other.contains("the trace is of design `claim-first`, not `owner-keyed`"),
        "{other}"
    );
}
