//! The repairs of owner-keyed (issue 10, `docs/stovepipe.md`): on each finding's own
//! bounds, which single change closes it and which does not, and that the two
//! combinations hold every always property while reaching every witness that
//! owner-keyed reaches. The step counts are pinned by the scenario files.

use slotcheck::check::{check, Limits, Outcome, Verdict};
use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe};

/// A finding: its scenario, bounds (requests, crashes, stalls,
/// max_deliveries; K = 1) and the property that shows it.
struct Finding {
    scenario: &'static str,
    bounds: (u8, u8, u8, u8),
    property: &'static str,
}

const FINDINGS: [Finding; 5] = [
    Finding {
        scenario: "owner-keyed-stall",
        bounds: (2, 0, 1, 2),
        property: "builds-within-limit",
    },
    Finding {
        scenario: "owner-keyed-stall-crash",
        bounds: (2, 1, 1, 2),
        property: "count-not-high",
    },
    Finding {
        scenario: "dlq-running-build",
        bounds: (2, 1, 0, 1),
        property: "builds-within-limit",
    },
    Finding {
        scenario: "owner-keyed-resume-no-submit",
        bounds: (1, 1, 1, 2),
        property: "no-wedge",
    },
    Finding {
        scenario: "owner-keyed-stale-claim-dead-lettered",
        bounds: (1, 1, 1, 1),
        property: "count-not-high",
    },
];

/// Which finding owner-keyed and each repair closes, in the order of
/// `FINDINGS` (claim-first and fail-open are pinned by the scenario files). On the
/// stall-crash bounds the finding is judged by `count-not-high` (the slot the
/// stale claim leaks): its `no-wedge` also fails by the missing submit of
/// `owner-keyed-resume-no-submit` wherever that is not repaired.
const CLOSES: [(&str, [bool; 5]); 9] = [
    ("owner-keyed", [false, false, false, false, false]),
    (
        "owner-keyed-supersede-first",
        [true, false, false, false, false],
    ),
    // A fenced claim alone does not close the stall-crash leak: the
    // redelivery read the set before the claim, so it supersedes without
    // releasing.
    (
        "owner-keyed-fenced-claim",
        [false, false, false, false, false],
    ),
    (
        "owner-keyed-reaping-gate",
        [false, true, false, false, false],
    ),
    (
        "owner-keyed-resume-submits",
        [false, false, false, true, false],
    ),
    ("owner-keyed-atomic-admit", [true, true, false, true, true]),
    (
        "owner-keyed-dlq-cancels",
        [false, false, true, false, false],
    ),
    (
        "owner-keyed-atomic-admit-dlq-cancels",
        [true, true, true, true, true],
    ),
    // Everything but the stale claim of a request nobody will hold behind:
    // the reaping gate repairs a leak only when a head is held.
    (
        "owner-keyed-cas-only-repairs",
        [true, true, true, true, false],
    ),
];

const ALWAYS: [&str; 4] = [
    "no-wedge",
    "builds-within-limit",
    "count-not-low",
    "count-not-high",
];
const WITNESSES: [&str; 4] = [
    "all-succeed",
    "some-superseded",
    "some-dead-lettered",
    "some-held",
];

fn run(
    design: &str,
    (requests, crashes, stalls, max_deliveries): (u8, u8, u8, u8),
) -> Outcome<Stovepipe> {
    let model = Stovepipe::new(
        design_named(design).unwrap_or_else(|| panic!("{design} is listed")),
        Bounds {
            requests,
            max_concurrent: 1,
            crashes,
            stalls,
            max_deliveries,
        },
    );
    let outcome = check(model, &[], &Limits::default());
    assert_eq!(outcome.stats.cut, None, "an unlimited run is never cut");
    outcome
}

fn verdict(outcome: &Outcome<Stovepipe>, property: &str) -> Verdict {
    outcome.result(property).unwrap().verdict
}

#[test]
fn each_change_alone_closes_the_findings_it_is_meant_to_and_no_other() {
    for (i, finding) in FINDINGS.iter().enumerate() {
        for (design, closes) in CLOSES {
            let got = verdict(&run(design, finding.bounds), finding.property);
            let want = if closes[i] {
                Verdict::Holds
            } else {
                Verdict::Violated
            };
            assert_eq!(
                got, want,
                "{design} on {}'s bounds: {}",
                finding.scenario, finding.property
            );
        }
    }
}

/// A repair that avoided a finding by never letting it arise (never
/// dead-lettering, never holding) would lose a witness; none does.
#[test]
fn the_combinations_hold_everything_and_reach_every_witness_owner_keyed_reaches() {
    let default = (2, 1, 1, 2);
    let bounds = FINDINGS.iter().map(|f| f.bounds).chain([default]);
    for b in bounds {
        let original = run("owner-keyed", b);
        for design in [
            "owner-keyed-atomic-admit-dlq-cancels",
            "owner-keyed-atomic-admit-supersede-first-dlq-cancels",
            "owner-keyed-cas-only-repairs",
        ] {
            let outcome = run(design, b);
            if design != "owner-keyed-cas-only-repairs" || b != (1, 1, 1, 1) {
                for property in ALWAYS {
                    assert_eq!(
                        verdict(&outcome, property),
                        Verdict::Holds,
                        "{design} {b:?} {property}"
                    );
                }
            }
            for witness in WITNESSES {
                if verdict(&original, witness) == Verdict::Reached {
                    assert_eq!(
                        verdict(&outcome, witness),
                        Verdict::Reached,
                        "{design} {b:?} {witness}"
                    );
                }
            }
        }
    }
}

/// Each single change keeps the witnesses too: none closes a finding by
/// making something unreachable.
#[test]
fn no_single_change_loses_a_witness_on_the_default_bounds() {
    let original = run("owner-keyed", (2, 1, 1, 2));
    for (design, _) in &CLOSES[1..] {
        let outcome = run(design, (2, 1, 1, 2));
        for witness in WITNESSES {
            if verdict(&original, witness) == Verdict::Reached {
                assert_eq!(
                    verdict(&outcome, witness),
                    Verdict::Reached,
                    "{design} {witness}"
                );
            }
        }
    }
}

use crate::common;

/// The what-to-merge table: every design on every finding's own bounds; the
/// recommended design is the one that holds them all.
#[test]
fn the_what_to_merge_table_names_the_one_design_that_holds_every_finding() {
    let threads = common::cores();
    let output = common::slotcheck(&[
        "compare",
        "--findings",
        "--threads",
        &threads,
        "--json",
        "--quiet",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let table: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let designs = table["designs"].as_array().unwrap().len();
    let findings = table["findings"].as_array().unwrap().len();
    assert!(findings >= 10, "{findings} findings");
    // Both readings by default: a cell per design and finding under each.
    assert_eq!(table["reading"], "both");
    assert_eq!(
        table["cells"].as_array().unwrap().len(),
        2 * designs * findings
    );
    assert_eq!(
        table["holds_every_finding"],
        serde_json::json!(["owner-keyed-atomic-admit-supersede-first-dlq-cancels"])
    );
    // The former recommendation holds every finding in one snapshot, and
    // needs one: split reads break owner-keyed-stall.
    let design = |name: &str| {
        table["designs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name)
            .unwrap()
            .clone()
    };
    let former = design("owner-keyed-atomic-admit-dlq-cancels");
    assert_eq!(former["needs_one_snapshot_read"], true);
    assert!(former["read"].as_str().unwrap().starts_with(
        "needs a one-snapshot read: one joined `SELECT`, or a read transaction at REPEATABLE READ"
    ));
    let cell = |name: &str, finding: &str, reading: &str| {
        table["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["design"] == name && c["finding"] == finding && c["reading"] == reading)
            .unwrap()["verdict"]
            .clone()
    };
    assert_eq!(
        cell(
            "owner-keyed-atomic-admit-dlq-cancels",
            "owner-keyed-stall",
            "one-snapshot"
        ),
        "holds"
    );
    assert_eq!(
        cell(
            "owner-keyed-atomic-admit-dlq-cancels",
            "owner-keyed-stall",
            "split-read"
        ),
        "violated"
    );
    assert_eq!(
        design("owner-keyed-atomic-admit-supersede-first-dlq-cancels")["needs_one_snapshot_read"],
        false
    );
    // Each finding is broken by one of the source's designs at least: a
    // column no design breaks would show nothing.
    for f in table["findings"].as_array().unwrap() {
        let id = f["id"].as_str().unwrap();
        assert!(
            table["cells"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["finding"] == id
                    && c["verdict"] == "violated"
                    && ["claim-first", "fail-open", "owner-keyed"]
                        .contains(&c["design"].as_str().unwrap())),
            "{id}"
        );
    }
    // Each finding brings its own bounds.
    let output = common::slotcheck(&["compare", "--findings", "--requests", "2"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("leave out --requests"));
}

/// `--hold delayed`: every cell checked with held messages delayed, not
/// parked (the model option `delayed-hold`); the recommendation still
/// holds the findings there under both readings (the whole table is a
/// slow block of docs/stovepipe-results.md).
#[test]
fn the_findings_under_delayed_holds_keep_the_recommendation() {
    let output = common::slotcheck(&[
        "compare",
        "--findings",
        "--hold",
        "delayed",
        "--scenarios",
        "scenarios/owner-keyed-stall.toml",
        "--scenarios",
        "scenarios/SP-OCT-003.toml",
        "--design",
        "owner-keyed-atomic-admit-supersede-first-dlq-cancels",
        "--design",
        "claim-first",
        "--json",
        "--quiet",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let table: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(table["hold"], "delayed");
    assert_eq!(
        table["holds_every_finding"],
        serde_json::json!(["owner-keyed-atomic-admit-supersede-first-dlq-cancels"])
    );
    // claim-first's wedge: its held message may now come back at once, and
    // only holds again; the wedge stays.
    let wedge = table["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["design"] == "claim-first" && c["finding"] == "SP-OCT-003")
        .unwrap();
    assert_eq!(
        (&wedge["verdict"], &wedge["steps"]),
        (&"violated".into(), &8.into())
    );
    let output = common::slotcheck(&[
        "compare",
        "--model",
        "link",
        "--findings",
        "--hold",
        "delayed",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("has no holds"));
}

/// The search of issue 35: every composition of owner-keyed's repairs that
/// costs no more than the former recommendation (the reaping gate adds a
/// statement, so it is left out), under both readings (one snapshot and
/// `split-read`), on every finding's bounds above and the default ones.
/// The recommendation is the only one that holds every always property
/// under both; without superseding first, split reads break it.
#[test]
fn the_only_composition_no_costlier_that_holds_under_both_readings_is_the_recommendation() {
    use slotcheck_models::stovepipe::compose;
    let repairs = [
        "fenced-claim",
        "atomic-admit",
        "supersede-first",
        "resume-submits",
        "dlq-cancels",
    ];
    let default = (2, 1, 1, 2);
    let bounds: Vec<_> = FINDINGS.iter().map(|f| f.bounds).chain([default]).collect();
    let mut holding = Vec::new();
    for mask in 0..1u32 << repairs.len() {
        let mut name = "owner-keyed".to_string();
        for (i, r) in repairs.iter().enumerate() {
            if mask & 1 << i != 0 {
                name.push('+');
                name.push_str(r);
            }
        }
        let Ok(design) = compose(&name) else { continue };
        let holds = [false, true].iter().all(|&split| {
            bounds
                .iter()
                .all(|&(requests, crashes, stalls, max_deliveries)| {
                    let mut model = Stovepipe::new(
                        design,
                        Bounds {
                            requests,
                            max_concurrent: 1,
                            crashes,
                            stalls,
                            max_deliveries,
                        },
                    );
                    model.options.split_read = split;
                    let outcome = check(model, &ALWAYS, &Limits::default());
                    ALWAYS
                        .iter()
                        .all(|p| verdict(&outcome, p) == Verdict::Holds)
                })
        });
        if holds {
            holding.push(design.name);
        }
    }
    assert_eq!(
        holding,
        ["owner-keyed-atomic-admit-supersede-first-dlq-cancels"]
    );
}

/// Under split reads the recommendation reaches every witness owner-keyed
/// reaches, on every finding's bounds and the default ones.
#[test]
fn under_split_reads_the_recommendation_reaches_every_witness_owner_keyed_reaches() {
    let default = (2, 1, 1, 2);
    for (requests, crashes, stalls, max_deliveries) in
        FINDINGS.iter().map(|f| f.bounds).chain([default])
    {
        let split = |name: &str| {
            let mut model = Stovepipe::new(
                design_named(name).unwrap(),
                Bounds {
                    requests,
                    max_concurrent: 1,
                    crashes,
                    stalls,
                    max_deliveries,
                },
            );
            model.options.split_read = true;
            check(model, &[], &Limits::default())
        };
        let (original, recommended) = (
            split("owner-keyed"),
            split("owner-keyed-atomic-admit-supersede-first-dlq-cancels"),
        );
        for witness in WITNESSES {
            if verdict(&original, witness) == Verdict::Reached {
                assert_eq!(
                    verdict(&recommended, witness),
                    Verdict::Reached,
                    "{witness} on {:?}",
                    (requests, crashes, stalls, max_deliveries)
                );
            }
        }
    }
}
