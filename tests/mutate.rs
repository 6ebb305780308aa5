//! Mutation testing (`slotcheck mutate`): every design has its mutants, a
//! known mutant is killed by the property that should kill it, and the list
//! of equivalent mutants stays true.

use crate::common;

use crate::common::slotcheck;
use serde_json::Value;
use slotcheck::check::{check, Limits, Verdict};
use slotcheck::models::stovepipe::DEFAULT_BOUNDS;
use slotcheck::models::ToolModel;
use slotcheck::mutate::Equivalents;
use slotcheck_models::link::{self, Link};
use slotcheck_models::stovepipe::{design_named, Stovepipe, DESIGNS};

/// `slotcheck mutate` on claim-first's smallest bounds with a crash, the
/// list `list` and `extra` flags, as JSON.
fn mutate_claim_first(list: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "mutate",
        "--design",
        "claim-first",
        "--requests",
        "1",
        "--crashes",
        "1",
        "--stalls",
        "0",
        "--equivalent",
        list.to_str().unwrap(),
        "--json",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    slotcheck(&args)
}

/// Every stovepipe design's mutants on the default bounds, in the order of
/// `DESIGNS`. Finding them explores every state of every design, so the
/// tests share one search, the designs shared out among the cores.
fn stovepipe_mutants() -> &'static [Vec<(String, String, Stovepipe)>] {
    static MUTANTS: std::sync::OnceLock<Vec<Vec<(String, String, Stovepipe)>>> =
        std::sync::OnceLock::new();
    MUTANTS.get_or_init(|| {
        common::par_map(&DESIGNS, |design| {
            Stovepipe::new(*design, DEFAULT_BOUNDS).mutants()
        })
    })
}

#[test]
fn every_design_has_at_least_twelve_mutants_each_named_and_said() {
    for (design, mutants) in DESIGNS.iter().zip(stovepipe_mutants()) {
        assert!(mutants.len() >= 12, "{}: {}", design.name, mutants.len());
        for (name, change, _) in mutants {
            assert!(name.starts_with(&format!("{}/", design.name)), "{name}");
            assert_eq!(name.split('/').count(), 3, "design/step/operator: {name}");
            assert!(!change.is_empty());
        }
    }
    let after = Link::new(
        link::design_named("after-1649").unwrap(),
        link::Bounds::default(),
    );
    assert!(after.mutants().len() >= 12);
    assert!(link::mutation::Mutation::ALL.len() >= 12);
}

#[test]
fn a_gate_off_by_one_is_killed_by_builds_within_limit_where_the_design_holds() {
    let named = design_named("owner-keyed-atomic-admit-dlq-cancels").unwrap();
    let design = Stovepipe::new(named, DEFAULT_BOUNDS);
    let index = DESIGNS.iter().position(|d| d.name == named.name).unwrap();
    let name = "owner-keyed-atomic-admit-dlq-cancels/read/gate-off-by-one";
    let (_, change, mutant) = stovepipe_mutants()[index]
        .iter()
        .find(|(n, _, _)| n == name)
        .cloned()
        .expect("the gate is read");
    assert!(change.contains("`>` for `>=`"), "{change}");
    let property = "builds-within-limit";
    let verdict = |m: Stovepipe| check(m, &[property], &Limits::default()).results[0].verdict;
    assert_eq!(verdict(design), Verdict::Holds);
    assert_eq!(verdict(mutant), Verdict::Violated);
    // Its story, from the command line.
    let output = slotcheck(&[
        "check",
        "--design",
        "owner-keyed-atomic-admit-dlq-cancels",
        "--mutant",
        name,
        "--property",
        property,
    ]);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("builds-within-limit violated: 2 builds run at once"),
        "{text}"
    );
}

#[test]
fn mutate_reports_each_mutant_and_a_listed_equivalent_that_is_killed() {
    let dir = common::scratch("mutate", "equivalent");
    let list = dir.join("equivalent.toml");
    std::fs::write(
        &list,
        "[[mutant]]\nname = \"claim-first/submit-build/submit-skipped\"\nwhy = \"wrongly listed\"\n",
    )
    .unwrap();
    let output = mutate_claim_first(&list, &[]);
    assert_eq!(output.status.code(), Some(1), "the list is not true");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mutants = report[0]["mutants"].as_array().unwrap();
    let listed = mutants
        .iter()
        .find(|m| m["name"] == "claim-first/submit-build/submit-skipped")
        .unwrap();
    assert_eq!(listed["fate"], "listed-but-killed");
    assert!(listed["killed_by"]["property"].is_string());
    // Every mutant has a fate, and the score counts them.
    let killed = mutants.iter().filter(|m| m["fate"] == "killed").count();
    assert_eq!(report[0]["killed"], killed);
    assert!(killed > 0);
}

#[test]
fn the_list_of_equivalent_mutants_names_real_mutants_each_with_a_reason() {
    let list =
        Equivalents::load(&std::path::Path::new(common::ROOT).join("mutants/equivalent.toml"))
            .expect("the list reads");
    assert!(!list.reasons.is_empty());
    let mut known: Vec<String> = stovepipe_mutants()
        .iter()
        .flatten()
        .map(|(n, _, _)| n.clone())
        .collect();
    known.extend(
        link::DESIGNS
            .iter()
            .flat_map(|d| Link::new(d, link::Bounds::default()).mutants())
            .map(|(n, _, _)| n),
    );
    for (name, why) in list.reasons.iter().chain(&list.survivors) {
        assert!(known.contains(name), "`{name}` is no mutant");
        assert!(why.len() > 20, "`{name}`: say why");
    }
}

#[test]
fn a_known_survivor_does_not_fail_the_run_but_a_killed_one_does() {
    let dir = common::scratch("mutate", "survivors");
    let list = dir.join("equivalent.toml");
    let run_with = |entries: &str, extra: &[&str]| {
        std::fs::write(&list, entries).unwrap();
        mutate_claim_first(&list, extra)
    };
    let run = |entries: &str| run_with(entries, &["--allow-known-survivors"]);
    // Every survivor on these bounds listed: the run passes, and each still
    // counts as survived in the score.
    let first: Value = serde_json::from_slice(&run("").stdout).unwrap();
    let survivors: Vec<String> = first[0]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["fate"] == "survived")
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!survivors.is_empty(), "these small bounds leave survivors");
    let entries: String = survivors
        .iter()
        .map(|n| format!("[[survivor]]\nname = \"{n}\"\nwhy = \"too small bounds for it\"\n"))
        .collect();
    let output = run(&entries);
    assert_eq!(output.status.code(), Some(0), "only known survivors");
    // Without the flag a known survivor is still a survivor: exit 1.
    let strict = run_with(&entries, &[]);
    assert_eq!(strict.status.code(), Some(1), "a survivor, known or not");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report[0]["survived"], first[0]["survived"]);
    let known = report[0]["mutants"].as_array().unwrap().iter();
    assert_eq!(
        known.filter(|m| m["fate"] == "known-survivor").count(),
        survivors.len()
    );
    // A killed mutant listed as a known survivor: the list is not true.
    let output = run("[[survivor]]\nname = \"claim-first/submit-build/submit-skipped\"\nwhy = \"wrongly listed\"\n");
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let listed = report[0]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "claim-first/submit-build/submit-skipped")
        .unwrap()
        .clone();
    assert_eq!(listed["fate"], "listed-but-killed");
    assert_eq!(listed["listed_as"], "a known survivor");
}

/// `--verdicts-only` (docs/power.md, masking): a mutant is killed only by a
/// changed verdict. On claim-first, where most properties are violated
/// already, some mutants change nothing but a story's length: killed by
/// the default criterion, they survive this one, and every kill it reports
/// names two different verdicts.
#[test]
fn verdicts_only_kills_by_a_changed_verdict_and_not_by_a_length_alone() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "mutate",
            "--design",
            "claim-first",
            "--requests",
            "1",
            "--crashes",
            "1",
            "--stalls",
            "0",
            "--max-deliveries",
            "1",
            "--json",
            "-q",
        ];
        args.extend(extra);
        let output = slotcheck(&args);
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        report[0]["mutants"].as_array().unwrap().clone()
    };
    let by_length = run(&[]);
    let by_verdict = run(&["--verdicts-only"]);
    let word = |s: &str| s.split(' ').next().unwrap().to_string();
    let mut masked = 0;
    for (l, v) in by_length.iter().zip(&by_verdict) {
        assert_eq!(l["name"], v["name"]);
        if v["fate"] == "killed" {
            assert_eq!(l["fate"], "killed", "{}", v["name"]);
            let k = &v["killed_by"];
            assert_ne!(
                word(k["mutant"].as_str().unwrap()),
                word(k["design"].as_str().unwrap())
            );
        } else if l["fate"] == "killed" {
            masked += 1;
        }
    }
    assert!(masked > 0, "some mutant changes only a length here");
}

/// Masking seen through (docs/power.md): a mutant of claim-first that only
/// a story's length tells from the design on one narrow set of bounds, so
/// that `--verdicts-only` spares it there, is killed by a changed verdict
/// on a grid cell's bounds, where the design keeps the property.
#[test]
fn a_grid_cell_kills_by_a_verdict_a_mutant_that_only_a_length_tells_on_narrow_bounds() {
    let cell = "scenarios/grid-1-slot-stall-1-delivery-2-requests.toml";
    // Claim-first's mutants by verdict on narrow bounds, with one cell's.
    let run = [
        "mutate",
        "--design",
        "claim-first",
        "--requests",
        "1",
        "--crashes",
        "1",
        "--stalls",
        "0",
        "--verdicts-only",
        "--scenarios",
        cell,
        "-q",
    ];
    let output = slotcheck(&[&run[..], &["--json"]].concat());
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mutants = report[0]["mutants"].as_array().unwrap();
    let word = |s: &Value| s.as_str().unwrap().split(' ').next().unwrap().to_string();
    let narrow = "requests 1, max_concurrent 1, crashes 1, stalls 0, max_deliveries 2";
    let seen_through: Vec<&str> = mutants
        .iter()
        .filter(|m| m["on_given_bounds"]["change"] == "length-only" && m["fate"] == "killed")
        .map(|m| {
            // On the narrow bounds the verdicts agree and a length differs...
            let length = &m["on_given_bounds"]["length"];
            assert_eq!(length["bounds"], narrow);
            assert_eq!(word(&length["mutant"]), word(&length["design"]));
            assert_ne!(length["mutant"], length["design"]);
            // ...and the cell's bounds kill it by a verdict.
            let kill = &m["killed_by"];
            assert_ne!(kill["bounds"], narrow, "{}", m["name"]);
            assert_ne!(word(&kill["mutant"]), word(&kill["design"]));
            m["name"].as_str().unwrap()
        })
        .collect();
    assert!(
        seen_through.contains(&"claim-first/write-processing/write-skipped"),
        "{seen_through:?}"
    );
    // That mutant: no-wedge, which the design keeps in the cell.
    let skipped = mutants
        .iter()
        .find(|m| m["name"] == "claim-first/write-processing/write-skipped")
        .unwrap();
    assert_eq!(skipped["killed_by"]["property"], "no-wedge");
    assert_eq!(skipped["killed_by"]["design"], "holds");
    // The text names the cell it dies in.
    let text = slotcheck(&run);
    let text = String::from_utf8_lossy(&text.stdout);
    let (_, masked) = text
        .split_once("masked on the given bounds")
        .expect("the masked mutants listed");
    let row = masked
        .lines()
        .find(|l| l.contains("claim-first/write-processing/write-skipped"))
        .expect("the masked mutants list it");
    assert!(row.contains("a length (count-not-high)"), "{row}");
    assert!(
        row.contains("grid-1-slot-stall-1-delivery-2-requests"),
        "{row}"
    );
}
