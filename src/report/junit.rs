//! The JUnit renderer (quick-junit writes and escapes the XML): a testsuite
//! per scenario, a testcase per design × property; a regression is a
//! failure with the story as its text, an inconclusive check an error, a
//! skipped scenario one skipped testcase. A story change (the verdict as
//! pinned, another length) passes with its line as the testcase's output,
//! or fails as a `story-change` under `--strict-lengths`.

use super::results::{ScenarioRun, Status};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// The scenario run as a JUnit XML document.
pub fn scenario_run(run: &ScenarioRun) -> String {
    let mut report = Report::new("slotcheck");
    report.set_time(Duration::from_secs_f64(run.summary.seconds));
    for s in &run.scenarios {
        let mut suite = TestSuite::new(s.id.as_str());
        suite.set_time(Duration::from_secs_f64(s.seconds));
        suite.extra.insert("file".into(), s.file.as_str().into());
        for (name, value) in [
            ("title", s.title.clone()),
            ("source", s.source.clone()),
            ("model", s.model.clone()),
            ("bounds", s.bounds.to_string()),
        ] {
            suite.add_property((name, value.as_str()));
        }
        if let Some(why) = &s.skipped {
            let mut status = TestCaseStatus::skipped();
            status.set_message(why.as_str());
            let mut case = TestCase::new("(scenario)", status);
            case.set_classname(s.id.as_str());
            suite.add_test_case(case);
        }
        for r in &s.results {
            let mut output = None;
            let status = match r.status {
                Status::Ok => TestCaseStatus::success(),
                Status::Regression => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    status.set_type("regression").set_message(r.line.as_str());
                    status.set_description(
                        r.story
                            .as_deref()
                            .unwrap_or("(no counterexample: the property holds)"),
                    );
                    status
                }
                Status::StoryChange if run.summary.strict_lengths => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    status.set_type("story-change").set_message(r.line.as_str());
                    if let Some(story) = &r.story {
                        status.set_description(story.as_str());
                    }
                    status
                }
                Status::StoryChange => {
                    output = Some(r.line.as_str());
                    TestCaseStatus::success()
                }
                Status::Inconclusive => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                    status.set_type("inconclusive").set_message(r.line.as_str());
                    status
                }
            };
            let mut case = TestCase::new(r.property.as_str(), status);
            case.set_classname(format!("{}.{}", s.id, r.design));
            case.set_time(Duration::from_secs_f64(r.seconds));
            if let Some(line) = output {
                case.set_system_out(line);
            }
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report.to_string().expect("JUnit XML")
}
