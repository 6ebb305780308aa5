//! `check --coverage` (issue 33 item 7): the handler paths a scenario set
//! never reaches, judged against a list of known ones that must stay true.

use crate::common::{self, code, stderr, stdout};
use std::path::Path;
use std::process::Output;

/// `check --coverage` of owner-keyed on SP-OCT-005 (two requests, no
/// DLQ), run in `dir`, whose `coverage/unreached.toml` is the known list.
fn coverage(dir: &Path, extra: &[&str]) -> Output {
    let scenario = Path::new(common::ROOT).join("scenarios/SP-OCT-005.toml");
    common::command()
        .current_dir(dir)
        .args(["check", "--coverage", "--design", "owner-keyed"])
        .arg(scenario)
        .args(extra)
        .output()
        .unwrap()
}

fn write_known(dir: &Path, entries: &[(&str, &str)]) {
    let mut text = String::new();
    for (design, path) in entries {
        text += &format!(
            "[[unreached]]\nmodel = \"stovepipe\"\ndesign = \"{design}\"\npath = \"{path}\"\nwhy = \"a test's reason\"\n\n"
        );
    }
    std::fs::create_dir_all(dir.join("coverage")).unwrap();
    std::fs::write(dir.join("coverage/unreached.toml"), text).unwrap();
}

#[test]
fn an_unreached_path_fails_until_it_is_listed_and_a_listed_path_reached_fails_again() {
    let dir = common::scratch("coverage", "known");
    // No list: every unreached path is new (this scenario has no DLQ at
    // all, so the dlq handler's paths are among them).
    let first = coverage(&dir, &["--json"]);
    assert_eq!(code(&first), 1, "{}{}", stdout(&first), stderr(&first));
    let report: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let design = &report["designs"][0];
    assert_eq!(design["design"], "owner-keyed");
    let unreached: Vec<String> = design["unreached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["path"].as_str().unwrap().to_string())
        .collect();
    assert!(unreached.contains(&"dlq: ack".to_string()), "{unreached:?}");
    assert!(!unreached.contains(&"process: read -> claim".to_string()));
    assert_eq!(
        design["reached"].as_u64().unwrap() + unreached.len() as u64,
        design["paths"].as_u64().unwrap()
    );
    assert_eq!(report["new_unreached"], unreached.len());

    // Listed (one by `*`): the run passes and the text gives the reasons.
    let entries: Vec<(&str, &str)> = unreached
        .iter()
        .map(|p| {
            let design = if p.starts_with("dlq") {
                "*"
            } else {
                "owner-keyed"
            };
            (design, p.as_str())
        })
        .collect();
    write_known(&dir, &entries);
    let listed = coverage(&dir, &[]);
    assert_eq!(code(&listed), 0, "{}{}", stdout(&listed), stderr(&listed));
    let text = stdout(&listed);
    assert!(
        text.contains("    never (known): dlq: ack\n")
            && text.contains("  why the known paths are never reached:\n")
            && text.contains("    dlq: ack: a test's reason\n"),
        "{text}"
    );
    assert!(!text.contains("NEW"), "{text}");
    assert!(
        text.contains(&format!(
            "summary: {n} of {all} paths (design by design) never reached on 1 scenario, 0 of them new",
            n = unreached.len(),
            all = design["paths"]
        )),
        "{text}"
    );

    // A listed path the run reaches: the list is out of date.
    let mut stale = entries.clone();
    stale.push(("owner-keyed", "process: read -> claim"));
    write_known(&dir, &stale);
    let out_of_date = coverage(&dir, &[]);
    assert_eq!(code(&out_of_date), 1, "{}", stdout(&out_of_date));
    assert!(
        stdout(&out_of_date).contains(
            "stale: stovepipe owner-keyed `process: read -> claim` is listed as unreached but owner-keyed reaches it"
        ),
        "{}",
        stdout(&out_of_date)
    );
}

#[test]
fn a_cut_exploration_is_inconclusive_and_a_bad_list_names_its_line() {
    let dir = common::scratch("coverage", "cut");
    write_known(&dir, &[]);
    let cut = coverage(&dir, &["--max-states", "300"]);
    assert_eq!(code(&cut), 3, "{}{}", stdout(&cut), stderr(&cut));
    let text = stdout(&cut);
    assert!(
        text.contains("    cut: SP-OCT-005: the state budget"),
        "{text}"
    );
    assert!(text.contains("    not reached before the cut: "), "{text}");
    assert!(text.contains("0 of them new"), "{text}");
    assert!(
        text.ends_with("; 1 design cut short, not judged (inconclusive)\n"),
        "{text}"
    );

    std::fs::write(
        dir.join("coverage/unreached.toml"),
        "[[unreached]]\nmodel = \"stovepipe\"\ndesign = \"*\"\npath = \"dlq: ack\"\nbecause = \"no\"\n",
    )
    .unwrap();
    let bad = coverage(&dir, &[]);
    assert_eq!(code(&bad), 2);
    assert!(
        stderr(&bad).starts_with("error: coverage/unreached.toml:"),
        "{}",
        stderr(&bad)
    );
    assert!(stderr(&bad).contains("because"), "{}", stderr(&bad));

    // --coverage checks no property and writes no report.
    let refused = coverage(&dir, &["--json-out", "x.json", "--property", "no-wedge"]);
    assert_eq!(code(&refused), 2);
    assert!(
        stderr(&refused).contains("--json-out, --property with --coverage"),
        "{}",
        stderr(&refused)
    );
    assert!(!dir.join("x.json").exists());

    // An entry for a design the run did not walk (`--design owner-keyed`)
    // is not judged: it is neither reached nor missing.
    write_known(&dir, &[("claim-first", "dlq: ack")]);
    let other = coverage(&dir, &[]);
    assert!(!stdout(&other).contains("stale"), "{}", stdout(&other));

    // A selection that leaves out every file walks nothing: refused, not
    // reported as full coverage.
    write_known(&dir, &[]);
    let slow = Path::new(common::ROOT).join("scenarios/nightly-n3-k2.toml");
    let none = common::command()
        .current_dir(&dir)
        .args(["check", "--coverage", "--skip-slow"])
        .arg(slow)
        .output()
        .unwrap();
    assert_eq!(code(&none), 2, "{}", stdout(&none));
    assert!(
        stderr(&none).contains("--skip-slow leaves out every selected scenario"),
        "{}",
        stderr(&none)
    );
}
