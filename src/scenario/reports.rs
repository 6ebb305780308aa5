//! A run's reports: JUnit XML, JSON, the counterexample files (`--out`)
//! and the HTML page.

use super::run::*;
use super::*;
use crate::check::Verdict;
use crate::report::html::{self};
use crate::report::xml_escape;
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

/// The run as JUnit XML: a testsuite per scenario, a testcase per design ×
/// property; a regression is a failure with the story as its text, an
/// inconclusive check an error, a skipped scenario one skipped testcase.
pub fn junit(report: &RunReport) -> String {
    let total = report.findings().count();
    let failures = report.count(Status::Regression);
    let errors = report.count(Status::Inconclusive);
    let skipped = report
        .scenarios
        .iter()
        .filter(|(s, _)| s.skipped.is_some())
        .count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"slotcheck\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{:.3}\">\n",
        total + skipped,
        report.seconds
    ));
    for (s, findings) in &report.scenarios {
        let count = |status| findings.iter().filter(|f| f.status == status).count();
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\" file=\"{}\">\n",
            xml_escape(&s.heading.id),
            findings.len().max(usize::from(s.skipped.is_some())),
            count(Status::Regression),
            count(Status::Inconclusive),
            usize::from(s.skipped.is_some()),
            s.seconds,
            xml_escape(&s.heading.file.display().to_string()),
        ));
        xml.push_str("    <properties>\n");
        for (name, value) in [
            ("title", s.heading.title.clone()),
            ("source", s.heading.source.clone()),
            ("model", s.heading.model.to_string()),
            ("bounds", s.heading.bounds.to_string()),
        ] {
            xml.push_str(&format!(
                "      <property name=\"{name}\" value=\"{}\"/>\n",
                xml_escape(&value)
            ));
        }
        xml.push_str("    </properties>\n");
        if let Some(why) = s.skipped {
            xml.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"(scenario)\"><skipped message=\"{}\"/></testcase>\n",
                xml_escape(&s.heading.id),
                xml_escape(why)
            ));
        }
        for f in findings {
            let open = format!(
                "    <testcase classname=\"{}.{}\" name=\"{}\" time=\"{:.3}\"",
                xml_escape(&s.heading.id),
                xml_escape(&f.design),
                xml_escape(&f.subject),
                f.seconds
            );
            match f.status {
                Status::Ok => xml.push_str(&format!("{open}/>\n")),
                Status::Regression => xml.push_str(&format!(
                    "{open}>\n      <failure type=\"regression\" message=\"{}\">{}</failure>\n    </testcase>\n",
                    xml_escape(&f.describe()),
                    xml_escape(f.story.as_deref().unwrap_or("(no counterexample: the property holds)"))
                )),
                Status::Inconclusive => xml.push_str(&format!(
                    "{open}>\n      <error type=\"inconclusive\" message=\"{}\"/>\n    </testcase>\n",
                    xml_escape(&f.describe())
                )),
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// The run as one JSON object.
pub fn json_report(report: &RunReport) -> Json {
    let scenarios: Vec<Json> = report
        .scenarios
        .iter()
        .map(|(s, findings)| {
            json!({
                "id": s.heading.id,
                "file": s.heading.file.display().to_string(),
                "title": s.heading.title,
                "source": s.heading.source,
                "notes": s.heading.notes,
                "model": s.heading.model,
                "bounds": s.heading.bounds,
                "skipped": s.skipped,
                "seconds": (s.seconds * 1000.0).round() / 1000.0,
                "results": findings.iter().map(|f| json!({
                    "design": f.design,
                    "property": f.subject,
                    "expected": f.expected.verdict.word(),
                    "expected_steps": f.expected.steps,
                    "verdict": f.verdict.word(),
                    "steps": f.steps,
                    "status": match f.status {
                        Status::Ok => "ok",
                        Status::Regression => "regression",
                        Status::Inconclusive => "inconclusive",
                    },
                    "line": f.describe(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "scenarios": scenarios,
        "summary": {
            "ok": report.count(Status::Ok),
            "regressions": report.count(Status::Regression),
            "inconclusive": report.count(Status::Inconclusive),
            "skipped": report.scenarios.iter().filter(|(s, _)| s.skipped.is_some()).count(),
            "seconds": (report.seconds * 1000.0).round() / 1000.0,
            "exit": report.exit_code(),
        },
    })
}

/// Every counterexample (and every story) as files under `dir`:
/// `ID/DESIGN.PROPERTY.txt` (the story) and `ID/DESIGN.PROPERTY.itf.json`.
pub fn counterexample_files(report: &RunReport, dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for (s, findings) in &report.scenarios {
        for f in findings {
            let (Some(story), Some(trace)) = (&f.story, &f.trace) else {
                continue;
            };
            let stem = format!(
                "{}.{}",
                f.design,
                f.subject.replace("story (", "story.").replace(')', "")
            );
            let base = dir.join(&s.heading.id);
            let heading = format!(
                "{} ({}): {} on {}, {}\n{}\n\n",
                s.heading.id,
                s.heading.title,
                f.subject,
                f.design,
                f.describe(),
                s.heading.bounds
            );
            files.push((
                base.join(format!("{stem}.txt")),
                format!("{heading}{story}").into_bytes(),
            ));
            files.push((
                base.join(format!("{stem}.itf.json")),
                serde_json::to_vec_pretty(trace).expect("JSON"),
            ));
        }
    }
    files
}

/// The run as one HTML page: a verdict table per scenario (expected against
/// got, regressions outlined), the statistics of each design's run, and each
/// violation's and story's explanation, diagram and story.
pub fn html_page(report: &RunReport, paths: &[PathBuf]) -> html::Page {
    let from = if paths.is_empty() {
        format!("{SCENARIO_DIR}/")
    } else {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut page = html::Page {
        title: "slotcheck check: scenarios".into(),
        subtitle: format!("{from}: {}", report.summary()),
        ..html::Page::default()
    };
    for (s, findings) in &report.scenarios {
        page.sections.push(html::Section {
            id: s.heading.id.clone(),
            title: s.heading.title.clone(),
            bounds: format!(
                "{}: {}; source: {}",
                s.heading.model, s.heading.bounds_line, s.heading.source
            ),
            notes: s.heading.notes.clone(),
            skipped: s.skipped.map(String::from),
        });
        for f in findings {
            page.rows.push(html::ResultRow {
                scenario: Some(s.heading.id.clone()),
                design: f.design.clone(),
                property: f.subject.clone(),
                witness: f.witness,
                expected: Some(f.expected.to_string()),
                regression: Some(f.status == Status::Regression),
                got: f.verdict.word().to_string(),
                good: f.verdict.is_good(),
                steps: f.steps.filter(|_| f.verdict != Verdict::Holds),
                explanation: f.explanation.clone(),
                story: f.story.clone(),
                svg: f.svg.clone(),
            });
        }
        for run in &s.runs {
            page.stats.push(html::StatsRow {
                label: format!("{} · {}", s.heading.id, run.design),
                states: run.stats.states,
                unique: run.stats.unique,
                depth: run.stats.depth,
                seconds: run.stats.seconds,
                cut: run.stats.cut.map(|c| c.describe().to_string()),
            });
        }
    }
    page
}
