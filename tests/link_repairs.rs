//! The repairs of after-1649 (issue 24, `docs/link-repairs.md`): on each
//! link finding's own bounds, which single change closes it and which does
//! not, that the recommended combination closes all but the two no builder
//! design closes, and that no repair closes a finding by making the
//! witnesses unreachable. The step counts are pinned by the scenario files.

use slotcheck::check::{check, Limits, Outcome, Verdict};
use slotcheck_models::link::{design_named, Bounds, Link, REPAIRS};

/// A finding: its scenario, its bounds and the property that shows it.
struct Finding {
    scenario: &'static str,
    bounds: Bounds,
    property: &'static str,
}

/// The findings' bounds: one or two asks, two builders, 60 s of horizon and
/// of longest build, max_deliver 3; the rest as each scenario file says.
fn bounds(asks: u8, skew: u16, crashes: u8, late_by: u16, faults: (u8, u8, u8)) -> Bounds {
    Bounds {
        asks,
        skew,
        horizon: 60,
        longest_build: 60,
        crashes,
        late_heartbeats: (late_by > 0) as u8,
        late_by: late_by.max(10),
        slow_answers: faults.0,
        lost_acks: faults.1,
        naks: faults.2,
        ..Bounds::default()
    }
}

fn findings() -> Vec<Finding> {
    let f = |scenario, bounds, property| Finding {
        scenario,
        bounds,
        property,
    };
    let slow = bounds(2, 0, 1, 0, (1, 0, 0));
    vec![
        f(
            "link-skew-40-loses-ask",
            bounds(1, 40, 1, 0, (0, 0, 0)),
            "no-lost-ask",
        ),
        f(
            "link-heartbeat-50s-late-double-run",
            bounds(1, 0, 1, 50, (0, 0, 0)),
            "no-double-run",
        ),
        f(
            "link-heartbeat-50s-late-loses-ask",
            bounds(1, 0, 1, 50, (0, 0, 0)),
            "no-lost-ask",
        ),
        f("link-slow-answer-double-run", slow, "no-double-run"),
        f("link-slow-answer-loses-ask", slow, "no-lost-ask"),
        f(
            "link-slow-answer-run-after-result",
            slow,
            "no-run-after-result",
        ),
        f(
            "link-lost-ack-rebuild",
            bounds(1, 0, 0, 0, (0, 1, 0)),
            "no-run-after-result",
        ),
        f(
            "link-naks-exhaust-deliveries",
            bounds(1, 0, 1, 0, (0, 0, 2)),
            "no-lost-ask",
        ),
    ]
}

/// Which findings (in the order of [`findings`]) after-1649 and each repair
/// close.
const CLOSES: [(&str, [bool; 8]); 9] = [
    (
        "after-1649",
        [false, false, false, false, false, false, false, false],
    ),
    (
        "after-1649-server-clock",
        [true, false, false, false, false, false, false, false],
    ),
    // The failed put turns the late answer's second run into a drop, but a
    // copy read after the finish deleted the key still runs again.
    (
        "after-1649-revision-start",
        [false, false, false, true, false, false, false, false],
    ),
    (
        "after-1649-hand-back",
        [false, false, false, true, true, true, false, false],
    ),
    (
        "after-1649-sync-ack",
        [false, false, false, false, false, false, true, false],
    ),
    (
        "after-1649-defer-duplicates",
        [true, false, true, false, true, false, false, false],
    ),
    (
        "after-1649-done-key",
        [false, false, false, false, false, true, true, false],
    ),
    // Every finding but the 50 s late heartbeat's double run and the naks
    // that exhaust max_deliver.
    (
        "after-1649-repaired",
        [true, false, true, true, true, true, true, false],
    ),
    // Not a repair, the source's other half: the check alone.
    (
        "check-only",
        [false, false, false, false, false, false, false, false],
    ),
];

const WITNESSES: [&str; 2] = ["some-redelivered", "some-dropped"];

fn run(design: &str, bounds: Bounds) -> Outcome<Link> {
    let model = Link::new(
        design_named(design).unwrap_or_else(|| panic!("{design} is a design")),
        bounds,
    );
    let outcome = check(model, &[], &Limits::default());
    assert_eq!(outcome.stats.cut, None, "an unlimited run is never cut");
    outcome
}

fn verdict(outcome: &Outcome<Link>, property: &str) -> Verdict {
    outcome.result(property).unwrap().verdict
}

#[test]
fn each_repair_closes_the_findings_it_is_meant_to_and_no_other() {
    let findings = findings();
    for (design, closes) in CLOSES {
        for (finding, closed) in findings.iter().zip(closes) {
            let got = verdict(&run(design, finding.bounds), finding.property);
            let want = if closed {
                Verdict::Holds
            } else {
                Verdict::Violated
            };
            assert_eq!(
                got, want,
                "{design} on {}: {}",
                finding.scenario, finding.property
            );
        }
    }
    let listed: Vec<&str> = CLOSES.iter().map(|(d, _)| *d).collect();
    for repair in &REPAIRS {
        assert!(listed.contains(&repair.name), "{} has its row", repair.name);
    }
}

/// A repair that closed a finding by never letting a redelivery or a drop
/// happen would lose a witness. Where after-1649 reaches one (a redelivery
/// on the default bounds, a drop of a live late builder's ask on the late
/// heartbeat's), every repair reaches it too. (On the skew finding's bounds
/// after-1649's only drop is the wrong one, which server-stamped freshness
/// removes: that is the finding closed, not a witness lost.)
#[test]
fn every_repair_reaches_every_witness_after_1649_reaches() {
    let default = Bounds {
        skew: 35,
        horizon: 75,
        longest_build: 75,
        late_heartbeats: 1,
        ..Bounds::default()
    };
    let late = bounds(1, 0, 1, 50, (0, 0, 0));
    for b in [default, late] {
        let original = run("after-1649", b);
        for repair in &REPAIRS {
            let outcome = run(repair.name, b);
            for witness in WITNESSES {
                if verdict(&original, witness) == Verdict::Reached {
                    assert_eq!(
                        verdict(&outcome, witness),
                        Verdict::Reached,
                        "{} {b:?} {witness}",
                        repair.name
                    );
                }
            }
        }
    }
}

/// The new faults are off by default: the contract's reading is unchanged.
#[test]
fn the_new_fault_budgets_are_zero_by_default() {
    let b = Bounds::default();
    assert_eq!((b.slow_answers, b.lost_acks, b.naks), (0, 0, 0));
}

/// after-1649's drop path (issue 25, `docs/link.md`, *after-1649's drop
/// path, within its promise*): on the bounds of
/// `link-after-1649-ack-wait-15-drops` (clocks equal, one heartbeat late by
/// 10 s, no crash), the check drops a live builder's duplicate, and nothing
/// runs twice, exactly when the ack wait lets a redelivery come while the
/// builder lives (at most a period plus the lateness, 20 s) and is shorter
/// than the freshness window; with the source's 60 s it never fires.
#[test]
fn after_1649_drops_a_live_builders_duplicate_only_with_an_ack_wait_below_the_window() {
    let design = design_named("after-1649").unwrap();
    for (ack_wait, drops) in [(15, true), (20, true), (25, false), (60, false)] {
        let bounds = Bounds {
            skew: 0,
            horizon: 75,
            longest_build: 75,
            crashes: 0,
            late_heartbeats: 1,
            ack_wait,
            ..Bounds::default()
        };
        let outcome = check(Link::new(design, bounds), &[], &Limits::default());
        let verdict = |p: &str| {
            outcome
                .results
                .iter()
                .find(|r| r.name == p)
                .unwrap()
                .verdict
        };
        let dropped = if drops {
            Verdict::Reached
        } else {
            Verdict::NotReached
        };
        assert_eq!(verdict("some-dropped"), dropped, "ack wait {ack_wait} s");
        assert_eq!(
            verdict("no-double-run"),
            Verdict::Holds,
            "ack wait {ack_wait} s"
        );
    }
}
