//! A scenario run's page, from its typed results.

use super::{Page, ResultRow, Section, StatsRow};
use crate::check::Verdict;
use crate::report::results::{ScenarioRun, Status};

/// The run as one HTML page: a verdict table per scenario (expected against
/// got, regressions outlined), the statistics of each design's run, and each
/// violation's and story's explanation, diagram and story. `from` names what
/// was run (the paths).
pub fn page(run: &ScenarioRun, from: &str) -> Page {
    let mut page = Page {
        title: "slotcheck check: scenarios".into(),
        subtitle: format!("{from}: {}", run.summary_line()),
        ..Page::default()
    };
    for s in &run.scenarios {
        page.sections.push(Section {
            id: s.id.clone(),
            title: s.title.clone(),
            bounds: format!("{}: {}; source: {}", s.model, s.bounds_line, s.source),
            notes: s.notes.clone(),
            skipped: s.skipped.clone(),
        });
        for r in &s.results {
            let expected = match r.expected_steps {
                Some(n) => format!(
                    "{} ({})",
                    r.expected.word(),
                    crate::report::count(n as u64, "step")
                ),
                None => r.expected.word().to_string(),
            };
            page.rows.push(ResultRow {
                scenario: Some(s.id.clone()),
                design: r.design.clone(),
                property: r.property.clone(),
                witness: r.witness,
                expected: Some(expected),
                regression: Some(r.status == Status::Regression),
                story_change: r.status == Status::StoryChange,
                got: r.verdict.word().to_string(),
                good: r.verdict.is_good(),
                steps: r.steps.filter(|_| r.verdict != Verdict::Holds),
                explanation: r.explanation.clone(),
                story: r.story.clone(),
                svg: r.svg.clone(),
            });
        }
        for figures in &s.runs {
            let stats = &figures.stats;
            page.stats.push(StatsRow {
                label: format!("{} · {}", s.id, figures.design),
                states: stats.states,
                unique: stats.unique,
                depth: stats.depth,
                seconds: stats.seconds,
                cut: stats.cut.map(|c| c.describe().to_string()),
            });
        }
    }
    page
}
