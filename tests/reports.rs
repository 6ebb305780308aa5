//! The typed report and its renderers: the JSON schema file is the types'
//! own, and real output matches it; a regression reaches every format.

use crate::common::{code, scratch, slotcheck, stdout, ROOT};
use serde_json::Value;
use slotcheck::commands::schemas::SCHEMA_FILES;
use std::path::Path;

/// An output's JSON checked against its schema file (`file` from the root).
pub fn assert_matches(file: &str, output: &Value) {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(Path::new(ROOT).join(file)).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(output)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the output does not match {file}: {errors:#?}"
    );
}

/// A run's JSON checked against docs/report.schema.json.
pub fn assert_matches_schema(report: &Value) {
    assert_matches("docs/report.schema.json", report);
}

#[test]
fn every_schema_file_is_generated_from_the_types() {
    let write = std::env::var_os("SLOTCHECK_WRITE_SCHEMA").is_some();
    let mut stale = Vec::new();
    for s in &SCHEMA_FILES {
        let path = Path::new(ROOT).join(s.file);
        let schema = serde_json::to_string_pretty(&(s.schema)()).unwrap() + "\n";
        if write {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &schema).unwrap();
        }
        if std::fs::read_to_string(&path).unwrap_or_default() != schema {
            stale.push(s.file);
        }
    }
    assert!(
        stale.is_empty(),
        "not the types' schema: {stale:?}: run SLOTCHECK_WRITE_SCHEMA=1 cargo test --release --test model reports::"
    );
}

/// Each command's real `--json` output, on small bounds, against its schema
/// file; every schema file is exercised (the scenario run's here and in
/// `a_regression_run_matches_the_schema_in_json_and_is_a_junit_failure`).
#[test]
fn every_json_output_matches_its_schema_file() {
    let dir = scratch("reports", "schemas");
    let small = ["--requests", "1", "--crashes", "1", "--stalls", "0"];
    let with_small = |args: &[&'static str]| -> Vec<String> {
        args.iter()
            .chain(small.iter())
            .map(|a| a.to_string())
            .collect()
    };
    let shard = |i: &str| {
        let file = dir.join(format!("shard-{i}.json"));
        let output = slotcheck(&[
            "simulate",
            "--runs",
            "40",
            "--seed",
            "3",
            "--depth",
            "60",
            "--shard",
            i,
            "--json-out",
            file.to_str().unwrap(),
        ]);
        assert!(matches!(code(&output), 0 | 1), "{output:?}");
        file.to_str().unwrap().to_string()
    };
    let shards = [shard("1/2"), shard("2/2")];
    let validate_log = |log: &str, extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "validate".to_string(),
            format!("{ROOT}/docs/examples/{log}"),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        args.push("--json".into());
        args
    };
    let runs: Vec<(&str, Vec<String>)> = vec![
        (
            "docs/schemas/bench.schema.json",
            vec!["bench".into(), "--quick".into(), "--json".into()],
        ),
        (
            "docs/report.schema.json",
            vec![
                "check".into(),
                format!("{ROOT}/scenarios/SP-OCT-003.toml"),
                "--json".into(),
            ],
        ),
        (
            "docs/schemas/check-design.schema.json",
            with_small(&["check", "--design", "claim-first", "--json"]),
        ),
        (
            "docs/schemas/compare.schema.json",
            with_small(&["compare", "--json"]),
        ),
        (
            "docs/schemas/compare-findings.schema.json",
            vec![
                "compare".into(),
                "--findings".into(),
                "--scenarios".into(),
                format!("{ROOT}/scenarios/SP-OCT-003.toml"),
                "--design".into(),
                "claim-first".into(),
                "--design".into(),
                "owner-keyed".into(),
                "--json".into(),
                "--quiet".into(),
            ],
        ),
        (
            "docs/schemas/mutate.schema.json",
            with_small(&[
                "mutate",
                "--design",
                "claim-first",
                "--max-deliveries",
                "1",
                "--json",
                "-q",
            ]),
        ),
        (
            "docs/schemas/simulate.schema.json",
            vec![
                "simulate".into(),
                "--swarm".into(),
                "--runs".into(),
                "40".into(),
                "--seed".into(),
                "11".into(),
                "--json".into(),
            ],
        ),
        (
            "docs/schemas/simulate.schema.json",
            [vec!["merge".to_string()], shards.to_vec()].concat(),
        ),
        (
            "docs/schemas/validate-report.schema.json",
            validate_log("stovepipe.ndjson", &[]),
        ),
        (
            "docs/schemas/validate-report.schema.json",
            validate_log("link.ndjson", &[]),
        ),
        (
            "docs/schemas/validate-report.schema.json",
            validate_log("stovepipe.ndjson", &["--design", "claim-first"]),
        ),
    ];
    let mut exercised = std::collections::BTreeSet::new();
    for (file, args) in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = slotcheck(&args);
        let json: Value = serde_json::from_str(&stdout(&output))
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {output:?}"));
        assert_matches(file, &json);
        exercised.insert(*file);
    }
    let every: std::collections::BTreeSet<&str> = SCHEMA_FILES.iter().map(|s| s.file).collect();
    assert_eq!(
        exercised, every,
        "each schema file is checked against real output"
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
}

/// The one text-table renderer (comfy-table underneath): columns line up
/// whatever the widths, and colour is laid on after the layout.
#[test]
fn a_text_table_lines_up_and_colour_adds_no_width() {
    use slotcheck::check::Verdict;
    use slotcheck::report::table::{Cell, Column, TextTable};
    use slotcheck::report::Style;
    let mut table = TextTable::new(vec![
        Column::left("design"),
        Column::right("states"),
        Column::left("verdict").at_least(9),
        Column::left("note"),
    ]);
    table.row(vec![
        "a-much-longer-design-name".into(),
        "7".into(),
        Cell::painted("holds", Verdict::Holds),
        "".into(),
    ]);
    table.row(vec![
        "b".into(),
        "12345".into(),
        Cell::painted("violated", Verdict::Violated),
        "cut short".into(),
    ]);
    let plain = table.render(Style::plain());
    assert_eq!(
        plain,
        "design                     states  verdict    note\n\
         a-much-longer-design-name       7  holds\n\
         b                           12345  violated   cut short\n"
    );
    let coloured = table.render(Style { color: true });
    let stripped = ["\x1b[32m", "\x1b[1;31m", "\x1b[1m", "\x1b[0m"]
        .iter()
        .fold(coloured.clone(), |text, code| text.replace(code, ""));
    assert_eq!(stripped, plain, "colour adds codes, never width");
    assert!(
        coloured.contains("\x1b[1;31mviolated\x1b[0m"),
        "{coloured:?}"
    );
}

/// A table printed a row at a time (the scenario run, the `live` tables):
/// each line on the columns' least widths, so the rows line up under the
/// heading without the table knowing its last row; a wider cell pushes only
/// its own row.
#[test]
fn a_table_printed_a_row_at_a_time_lines_up_under_its_heading() {
    use slotcheck::report::table::{Column, TextTable};
    use slotcheck::report::Style;
    let table = TextTable::new(vec![
        Column::left("design").at_least(8),
        Column::right("runs").at_least(5),
        Column::left("first violation"),
    ]);
    let printed = [
        table.heading(Style::plain()),
        table.line(vec!["a".into(), "7".into(), "none".into()], Style::plain()),
        table.line(
            vec!["b".into(), "12345".into(), "run 3".into()],
            Style::plain(),
        ),
        table.line(
            vec!["a-long-design".into(), "1".into(), "none".into()],
            Style::plain(),
        ),
    ]
    .concat();
    assert_eq!(
        printed,
        "design     runs  first violation\n\
         a             7  none\n\
         b         12345  run 3\n\
         a-long-design      1  none\n"
    );
}

/// `compare --findings` tells each link design by what it changes in the
/// contract's steps (its `change`), as stovepipe's tells its designs, not
/// by its one-line summary: the JSON and the HTML report read the same
/// field, a named design's or a composition's.
#[test]
fn link_findings_give_each_design_its_change() {
    use slotcheck_models::link::design_named;
    let output = slotcheck(&[
        "compare",
        "--model",
        "link",
        "--findings",
        "--scenarios",
        &format!("{ROOT}/scenarios/link-lost-ack-rebuild.toml"),
        "--design",
        "after-1649",
        "--design",
        "after-1649+sync-ack",
        "--json",
        "--quiet",
    ]);
    let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let designs = json["designs"].as_array().expect("designs");
    let named = design_named("after-1649").unwrap();
    assert_eq!(designs[0]["name"], "after-1649");
    assert_eq!(designs[0]["change"], named.change);
    // after-1649+sync-ack is the named repair after-1649-sync-ack.
    let repaired = design_named("after-1649-sync-ack").unwrap();
    assert_eq!(designs[1]["change"], repaired.change, "{}", designs[1]);
    assert_ne!(repaired.change, repaired.summary);
}
