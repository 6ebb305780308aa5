//! The typed report and its renderers: the JSON schema file is the types'
//! own, and real output matches it; a regression reaches every format.

mod common;

use common::{code, scratch, slotcheck, stdout, ROOT};
use serde_json::Value;
use std::path::Path;

/// A run's JSON checked against docs/report.schema.json.
pub fn assert_matches_schema(report: &Value) {
    let path = Path::new(ROOT).join("docs/report.schema.json");
    let schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the report does not match docs/report.schema.json: {errors:#?}"
    );
}

#[test]
fn the_schema_file_is_generated_from_the_types() {
    let path = Path::new(ROOT).join("docs/report.schema.json");
    let schema = serde_json::to_string_pretty(&slotcheck::report::results::scenario_run_schema())
        .unwrap()
        + "\n";
    if std::env::var_os("SLOTCHECK_WRITE_SCHEMA").is_some() {
        std::fs::write(&path, &schema).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == schema,
        "docs/report.schema.json is not the types' schema: run SLOTCHECK_WRITE_SCHEMA=1 cargo test --release --test reports schema"
    );
}

#[test]
fn a_regression_run_matches_the_schema_in_json_and_is_a_junit_failure() {
    let dir = scratch("reports", "regression");
    let text = std::fs::read_to_string(Path::new(ROOT).join("scenarios/SP-OCT-003.toml"))
        .unwrap()
        .replace(
            "no-wedge = { verdict = \"violated\", steps = 8 }",
            "no-wedge = \"holds\"",
        );
    assert!(text.contains("no-wedge = \"holds\""));
    let file = dir.join("SP-OCT-003.toml");
    std::fs::write(&file, text).unwrap();
    let junit = dir.join("junit.xml");
    let html = dir.join("report.html");
    let output = slotcheck(&[
        "check",
        file.to_str().unwrap(),
        "--json",
        "--junit",
        junit.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 1);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_matches_schema(&report);
    assert_eq!(report["summary"]["regressions"], 1);
    assert_eq!(report["summary"]["exit"], 1);
    let regression = report["scenarios"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["status"] == "regression")
        .unwrap();
    assert_eq!(regression["design"], "claim-first");
    assert_eq!(regression["property"], "no-wedge");
    assert_eq!(regression["expected"], "holds");
    assert_eq!(regression["verdict"], "violated");

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(
            "<failure message=\"REGRESSION: expected holds, got violated (8 steps)\" type=\"regression\">"
        ),
        "{xml}"
    );
    assert!(
        xml.contains("crash; process(R1) is visible again"),
        "the story is the failure's text"
    );

    // The page opens on the regression, its story in the page itself.
    let page = std::fs::read_to_string(&html).unwrap();
    let regressions = page
        .find("<h2>Regressions</h2>")
        .expect("a Regressions part");
    assert!(regressions < page.find("<table").unwrap());
    assert!(page.contains("<details class=\"scenario\" id=\"s-SP-OCT-003\" open>"));
    assert!(page[regressions..].contains("process(R1) is visible again"));
    std::fs::remove_dir_all(dir).unwrap();
}
