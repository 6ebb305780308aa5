//! Designs composed from named parts (issue 20, `docs/designs.md`): a
//! composition no named design uses is checked like any design, on the
//! command line and in a scenario file; one with a named design's parts is
//! that design; one the model cannot run is refused, naming the conflict.

use crate::common;

use crate::common::{code, slotcheck, stderr, stdout};
use slotcheck::check::{check, Limits, Verdict};
use slotcheck_models::stovepipe::{compose, Bounds, Stovepipe, DESIGNS, REPAIRS};

/// supersede-first and the cancelling DLQ, without the transaction: what a
/// reviewer asks of "only the single-row repairs that close the two
/// findings of a running build beside another".
const COMPOSED: &str = "owner-keyed+supersede-first+dlq-cancels";

/// Bounds of one finding (K = 1): requests, crashes, stalls, deliveries.
fn bounds((requests, crashes, stalls, max_deliveries): (u8, u8, u8, u8)) -> Bounds {
    Bounds {
        requests,
        max_concurrent: 1,
        crashes,
        stalls,
        max_deliveries,
    }
}

/// owner-keyed-stall's bounds, where supersede-first closes a second build.
const STALL: (u8, u8, u8, u8) = (2, 0, 1, 2);
/// dlq-running-build's bounds, where the cancelling DLQ closes it.
const DLQ: (u8, u8, u8, u8) = (2, 1, 0, 1);

fn verdict(design: &str, on: (u8, u8, u8, u8), property: &'static str) -> Verdict {
    let model = Stovepipe::new(compose(design).unwrap(), bounds(on));
    let outcome = check(model, &[property], &Limits::default());
    outcome.result(property).unwrap().verdict
}

#[test]
fn a_composition_no_named_design_uses_keeps_each_repair_closing_its_finding() {
    let design = compose(COMPOSED).unwrap();
    assert_eq!(design.name, COMPOSED);
    assert!(
        DESIGNS.iter().all(|d| !d.same_parts(&design)),
        "{COMPOSED} is meant to be a design no name gives"
    );
    // owner-keyed shows both findings; each repair closes its own, and
    // together they close both.
    for on in [STALL, DLQ] {
        assert_eq!(
            verdict("owner-keyed", on, "builds-within-limit"),
            Verdict::Violated
        );
        assert_eq!(verdict(COMPOSED, on, "builds-within-limit"), Verdict::Holds);
    }
    assert_eq!(
        verdict("owner-keyed+supersede-first", STALL, "builds-within-limit"),
        Verdict::Holds
    );
    assert_eq!(
        verdict("owner-keyed+dlq-cancels", DLQ, "builds-within-limit"),
        Verdict::Holds
    );
}

#[test]
fn a_composition_with_a_named_designs_parts_is_that_design() {
    for repair in &REPAIRS {
        let composed = compose(&format!("owner-keyed+{}", repair.name)).unwrap();
        assert_eq!(composed, repair.alone, "{}", repair.name);
    }
    for (text, name) in [
        (
            "owner-keyed+atomic-admit+dlq-cancels",
            "owner-keyed-atomic-admit-dlq-cancels",
        ),
        (
            "owner-keyed+dlq-cancels+atomic-admit",
            "owner-keyed-atomic-admit-dlq-cancels",
        ),
        (
            "owner-keyed-atomic-admit+dlq-cancels",
            "owner-keyed-atomic-admit-dlq-cancels",
        ),
        (
            "owner-keyed+supersede-first+reaping-gate+resume-submits+dlq-cancels",
            "owner-keyed-cas-only-repairs",
        ),
        (
            "owner-keyed-atomic-admit-dlq-cancels+supersede-first",
            "owner-keyed-atomic-admit-supersede-first-dlq-cancels",
        ),
        ("claim-first", "claim-first"),
    ] {
        assert_eq!(compose(text).unwrap().name, name, "{text}");
    }
}

#[test]
fn a_composition_the_model_cannot_run_is_refused_naming_the_conflict() {
    for (text, says) in [
        (
            "claim-first+reaping-gate",
            "the reaping gate needs the owner set",
        ),
        ("fail-open+supersede-first", "needs the owner set"),
        ("claim-first+resume-submits", "needs the owner set"),
        (
            "owner-keyed+atomic-admit+fenced-claim",
            "`atomic-admit` and `fenced-claim` both set the admit",
        ),
        (
            "owner-keyed-atomic-admit+fenced-claim",
            "`atomic-admit` and `fenced-claim` both set the admit",
        ),
        (
            "owner-keyed-dlq-cancels+dlq-cancels",
            "`dlq-cancels` changes nothing",
        ),
        (
            "owner-keyed+atomic-admit+resume-submits",
            "atomic-admit leaves none",
        ),
        ("fail-open+atomic-admit", "fail-open reorders"),
        ("owner-keyed+cancels", "unknown repair `cancels`"),
        ("owner-keyd+dlq-cancels", "unknown design `owner-keyd`"),
    ] {
        let err = compose(text).unwrap_err();
        assert!(err.contains(says), "{text}: {err}");
    }
}

#[test]
fn the_command_line_checks_a_composition_and_refuses_a_conflict() {
    let output = slotcheck(&[
        "check",
        "--design",
        COMPOSED,
        "--requests",
        "2",
        "--crashes",
        "1",
        "--stalls",
        "0",
        "--max-deliveries",
        "1",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let builds = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["property"] == "builds-within-limit")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(builds["verdict"], "holds", "{report}");

    let output = slotcheck(&["check", "--design", "claim-first+reaping-gate"]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("the reaping gate needs the owner set"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_scenario_file_expects_of_a_composition_and_names_the_line_of_a_conflict() {
    let dir = common::scratch("designs", "scenario");
    let shipped = std::fs::read_to_string(
        std::path::Path::new(common::ROOT).join("scenarios/dlq-running-build.toml"),
    )
    .unwrap();
    // The file's bounds, with one composition's expectations only.
    let head = &shipped[..shipped.find("[expect.").unwrap()];
    let head = head.replace("finding = \"builds-within-limit\"", "");
    let body = format!("[expect.\"{COMPOSED}\"]\nbuilds-within-limit = \"holds\"\n");
    let good = dir.join("composed.toml");
    std::fs::write(&good, format!("{head}{body}")).unwrap();
    let output = slotcheck(&["check", good.to_str().unwrap()]);
    assert_eq!(code(&output), 0, "{}{}", stdout(&output), stderr(&output));

    let bad_dir = common::scratch("designs", "scenario-conflict");
    let bad = bad_dir.join("broken.toml");
    let text = format!(
        "{head}[expect.\"owner-keyed+atomic-admit+fenced-claim\"]\nbuilds-within-limit = \"holds\"\n"
    );
    let line = text
        .lines()
        .position(|l| l.contains("fenced-claim"))
        .unwrap()
        + 1;
    std::fs::write(&bad, &text).unwrap();
    let output = slotcheck(&["check", bad.to_str().unwrap()]);
    let err = stderr(&output);
    assert_eq!(code(&output), 2, "{err}");
    assert!(err.contains(&format!("broken.toml:{line}:")), "{err}");
    assert!(err.contains("both set the admit"), "{err}");
}

#[test]
fn compare_findings_takes_a_list_of_compositions() {
    let output = slotcheck(&[
        "compare",
        "--findings",
        "--design",
        "owner-keyed+atomic-admit",
        "--design",
        COMPOSED,
        "--json",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let table: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let text = table.to_string();
    assert!(text.contains("owner-keyed-atomic-admit"), "{text}");
    assert!(text.contains(COMPOSED), "{text}");
    assert!(
        !text.contains("\"claim-first\""),
        "only the designs asked: {text}"
    );
}
