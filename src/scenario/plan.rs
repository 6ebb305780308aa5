//! A loaded scenario's checks for one model, behind the `Plan` trait so
//! that the runner needs no generics: each design's expectations, the
//! stories (replayed), and the finding's row of the what-to-merge table.

use super::format::*;
use super::*;
use crate::check::{check, Limits, Verdict};
use crate::models::ToolModel;
use crate::report;
use crate::report::diagram::Diagram;
use crate::report::html::{self, StatsRow};
use crate::report::itf;
use crate::simulate::model_meta;
use serde_json::{json, Value as Json};
use slotcheck_models::PropertyKind;
use stateright::{Expectation, Model};
use std::time::Instant;

/// One design's model and what is expected of its properties.
pub(super) struct DesignPlan<M> {
    pub(super) design: String,
    pub(super) model: M,
    pub(super) expectations: Vec<(&'static str, Expected)>,
}

/// A scripted story, already replayed once at load time.
pub(super) struct StoryPlan<M: Model> {
    pub(super) design: String,
    pub(super) model: M,
    pub(super) violates: &'static str,
    pub(super) actions: Vec<M::Action>,
}

pub(super) struct ModelPlan<M: Model> {
    pub(super) designs: Vec<DesignPlan<M>>,
    pub(super) stories: Vec<StoryPlan<M>>,
    /// Every design of the model on the scenario's bounds, in the model's
    /// order, for its finding's row of the what-to-merge table.
    pub(super) every_design: Vec<(String, M)>,
}

/// The ITF `#meta` of a scenario's trace: the model, design and bounds as
/// every trace writer records them (`simulate::model_meta`, which
/// `slotcheck replay` reads back), plus the scenario and the property.
pub(super) fn trace_meta<M: ToolModel>(scenario: &Scenario, model: &M, property: &str) -> Json {
    let mut meta = model_meta(model);
    meta["scenario"] = json!(scenario.heading.id);
    meta["property"] = json!(property);
    meta["command"] = json!("check");
    meta
}

impl<M: ToolModel> Plan for ModelPlan<M> {
    fn hunt(
        &self,
        property: &'static str,
        settings: &crate::simulate::Settings,
        max_runs: u64,
    ) -> Result<Vec<(String, Option<u64>)>, String> {
        let mut found = Vec::new();
        // A random walk is finite: it cannot show a progress violation (a
        // fair loop), so the simulator hunts only safety findings.
        let model = &self.every_design[0].1;
        if !model.properties().iter().any(|p| p.name == property) {
            return Ok(found);
        }
        for d in &self.designs {
            let violated = d
                .expectations
                .iter()
                .any(|(name, e)| *name == property && e.verdict == Verdict::Violated);
            if violated {
                let first =
                    crate::simulate::first_violation(&d.model, property, settings, max_runs)?;
                found.push((d.design.clone(), first.map(|(run, _)| run)));
            }
        }
        Ok(found)
    }

    fn expects(&self, property: &str) -> bool {
        self.designs
            .iter()
            .any(|d| d.expectations.iter().any(|(name, _)| *name == property))
            || self.stories.iter().any(|s| s.violates == property)
    }

    fn has_design(&self, design: &str) -> bool {
        self.designs.iter().any(|d| d.design == design)
            || self.stories.iter().any(|s| s.design == design)
    }

    fn selected(&self, selection: &Selection) -> usize {
        let checks: usize = self
            .designs
            .iter()
            .filter(|d| selection.design(&d.design))
            .map(|d| {
                d.expectations
                    .iter()
                    .filter(|(name, _)| selection.property(name))
                    .count()
            })
            .sum();
        let stories = self
            .stories
            .iter()
            .filter(|s| selection.design(&s.design) && selection.property(s.violates))
            .count();
        checks + stories
    }

    fn meta(&self) -> Json {
        model_meta(&self.every_design[0].1)
    }

    fn bless(&self, limits: &Limits, chosen: &dyn Fn(&str) -> bool) -> Vec<super::bless::Blessed> {
        let named = self.designs.iter().map(|d| (d.design.clone(), &d.model));
        let others = self
            .every_design
            .iter()
            .filter(|(name, _)| !self.designs.iter().any(|d| &d.design == name))
            .map(|(name, model)| (name.clone(), model));
        named
            .chain(others)
            .filter(|(design, _)| chosen(design))
            .map(|(design, model)| {
                let mut names: Vec<&'static str> =
                    model.properties().iter().map(|p| p.name).collect();
                names.extend(model.progress().iter().map(|p| p.name));
                let outcome = check(model.clone(), &names, limits);
                let cut = outcome
                    .stats
                    .cut
                    .map_or("the run was cut short", |c| c.describe());
                let results = names
                    .iter()
                    .map(|name| {
                        let result = outcome
                            .result(name)
                            .expect("every checked property has a result");
                        let got = super::bless::expectation(result.verdict, report::steps(result))
                            .map_err(|()| cut);
                        (*name, got)
                    })
                    .collect();
                super::bless::Blessed { design, results }
            })
            .collect()
    }

    fn coverage(
        &self,
        limits: &Limits,
        chosen: &dyn Fn(&str) -> bool,
    ) -> Vec<super::coverage::Reached> {
        // One design per thread at a time (each walk is sequential); the
        // result is sets, the same whatever the thread count.
        let designs: Vec<&(String, M)> = self
            .every_design
            .iter()
            .filter(|(d, _)| chosen(d))
            .collect();
        crate::check::map_on_threads(&designs, limits.threads, |(design, model)| {
            let mut reached = Default::default();
            let finished = crate::check::budget::within(limits, |go_on| {
                model.reach_within(go_on, &mut reached)
            });
            super::coverage::Reached {
                design: design.clone(),
                paths: model.paths(),
                reached,
                cut: finished.err().map(|cut| cut.describe()),
            }
        })
    }

    fn check_finding(
        &self,
        scenario: &Scenario,
        property: &'static str,
        limits: &Limits,
        designs: &[String],
        options: &[&str],
    ) -> Result<Vec<(html::ResultRow, StatsRow)>, String> {
        let mut chosen: Vec<(String, M)> = if designs.is_empty() {
            self.every_design.clone()
        } else {
            let base = &self.every_design[0].1;
            designs
                .iter()
                .map(|d| base.with_design(d).map(|m| (m.variant().to_string(), m)))
                .collect::<Result<_, _>>()?
        };
        // A reading's options on top of the scenario's own.
        for (_, model) in &mut chosen {
            for option in options {
                model.set_option(option)?;
            }
        }
        Ok(chosen
            .iter()
            .map(|(design, model)| {
                let outcome = check(model.clone(), &[property], limits);
                let (mut rows, mut stats) = html::outcome_rows(model, design, &outcome);
                let mut row = rows.remove(0);
                row.scenario = Some(scenario.heading.id.clone());
                stats.label = format!("{} · {design}", scenario.heading.id);
                (row, stats)
            })
            .collect())
    }

    fn run(
        &self,
        scenario: &Scenario,
        selection: &Selection,
        limits: &Limits,
    ) -> (Vec<Finding>, Vec<RunStats>) {
        let mut findings = Vec::new();
        let mut runs = Vec::new();
        for plan in self.designs.iter().filter(|d| selection.design(&d.design)) {
            let names: Vec<&'static str> = plan
                .expectations
                .iter()
                .map(|(name, _)| *name)
                .filter(|name| selection.property(name))
                .collect();
            if names.is_empty() {
                continue;
            }
            let outcome = check(plan.model.clone(), &names, limits);
            runs.push(RunStats {
                design: plan.design.clone(),
                stats: outcome.stats,
            });
            let cut = outcome.stats.cut.map(|c| c.describe());
            for (name, expected) in plan.expectations.iter().filter(|(n, _)| names.contains(n)) {
                let result = outcome
                    .result(name)
                    .expect("every checked property has a result");
                let steps = report::steps(result);
                // A violation's or a reached witness's path, told; the
                // diagram is cheap next to the check that found the path.
                let told = result.trace.as_ref().map(|t| {
                    let (told, ending) = report::told(&plan.model, name, t);
                    // No design in the title: designs that take the same
                    // path share one story and diagram in the HTML report.
                    let title = format!("{name}: {}", report::count(t.steps() as u64, "step"));
                    (
                        report::story_text(&told, &ending),
                        Diagram::of(&plan.model, &title, &told, Some(&ending)).svg(),
                        ending,
                    )
                });
                // Only counterexamples are saved as traces (`--out`).
                let trace = match (&result.trace, result.verdict) {
                    (Some(t), Verdict::Violated) => Some(itf::lasso(
                        &plan.model,
                        trace_meta(scenario, &plan.model, name),
                        t,
                    )),
                    _ => None,
                };
                let (story, svg, explanation) = match told {
                    Some((story, svg, ending)) => (Some(story), Some(svg), Some(ending)),
                    None => (None, None, None),
                };
                findings.push(Finding {
                    design: plan.design.clone(),
                    subject: name.to_string(),
                    expected: *expected,
                    verdict: result.verdict,
                    steps,
                    status: judge(*expected, result.verdict, steps),
                    witness: result.kind == PropertyKind::Sometimes,
                    story,
                    explanation,
                    svg,
                    trace,
                    // One run decides all of a design's properties; share its time.
                    seconds: outcome.stats.seconds / names.len() as f64,
                    cut,
                });
            }
        }
        for story in self
            .stories
            .iter()
            .filter(|s| selection.design(&s.design) && selection.property(s.violates))
        {
            findings.push(replay(scenario, story));
        }
        (findings, runs)
    }
}

/// Replays a story and judges its last state: it must violate its property.
pub(super) fn replay<M: ToolModel>(scenario: &Scenario, story: &StoryPlan<M>) -> Finding {
    let started = Instant::now();
    let init = story.model.init_states().remove(0);
    let mut last = init.clone();
    for action in &story.actions {
        last = story
            .model
            .next_state(&last, action.clone())
            .expect("a replayed story's steps were enabled at load time");
    }
    let violated = property_violated(&story.model, story.violates, &last);
    let expected = Expected {
        verdict: Verdict::Violated,
        steps: None,
    };
    let verdict = if violated {
        Verdict::Violated
    } else {
        Verdict::Holds
    };
    let ending = if violated {
        story.model.explain(story.violates, &last)
    } else {
        format!("{} holds in the story's last state", story.violates)
    };
    let told = story.model.tell(&init, &story.actions);
    let title = format!(
        "story ({}): {}",
        story.violates,
        report::count(story.actions.len() as u64, "step")
    );
    Finding {
        design: story.design.clone(),
        subject: format!("story ({})", story.violates),
        expected,
        verdict,
        steps: Some(story.actions.len()),
        status: judge(expected, verdict, None),
        witness: false,
        story: Some(report::story_text(&told, &ending)),
        svg: Some(Diagram::of(&story.model, &title, &told, Some(&ending)).svg()),
        explanation: Some(ending),
        trace: Some(itf::trace(
            &story.model,
            trace_meta(scenario, &story.model, story.violates),
            &init,
            &story.actions,
        )),
        seconds: started.elapsed().as_secs_f64(),
        cut: None,
    }
}

/// Whether an `always` property fails in `state`.
pub(super) fn property_violated<M: Model>(model: &M, name: &str, state: &M::State) -> bool {
    model
        .properties()
        .into_iter()
        .find(|p| p.name == name)
        .is_some_and(|p| p.expectation == Expectation::Always && !(p.condition)(model, state))
}
