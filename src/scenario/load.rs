//! Loading: reading a file by its model (through the registry), checking
//! every design, property and story against the model, and finding the
//! files under the paths given.

use super::*;
use super::{format::*, plan::*, source::*};
use crate::check::Verdict;
use crate::models::{self, ForModel, ModelBounds, ToolModel, MODELS};
use crate::report::line_column;
use serde_json::Value as Json;
use slotcheck_models::{Narrated, PropertyKind};
use std::path::{Path, PathBuf};

/// Reads and validates one scenario file.
pub fn load(file: &Path) -> Result<Scenario, InputError> {
    let text = crate::report::read_text(file).map_err(|(at, message)| InputError {
        file: file.to_path_buf(),
        at,
        field: None,
        message,
    })?;
    parse(file, &text)
}

/// Parses and validates a scenario's text; `file` names it in errors.
pub fn parse(file: &Path, text: &str) -> Result<Scenario, InputError> {
    let source = Source { file, text };
    let header: Header = toml::from_str(text).map_err(|e| source.toml(e))?;
    // Each model's scenarios are read with its own bounds (the registry
    // finds the model by name).
    let name = header.model.get_ref().as_str();
    models::for_model(name, ModelScenario(&source)).unwrap_or_else(|| {
        Err(source.at(
            &header.model,
            "model",
            format!("unknown model `{name}` (known: {})", MODELS.join(", ")),
        ))
    })
}

/// Reads a scenario of the model `run` is called with.
pub(super) struct ModelScenario<'a, 'b>(&'a Source<'b>);

impl ForModel for ModelScenario<'_, '_> {
    type Out = Result<Scenario, InputError>;

    fn run<M: ToolModel>(self) -> Self::Out {
        let source = self.0;
        let raw: ScenarioFile<models::bounds::ScenarioBounds> =
            toml::from_str(source.text).map_err(|e| source.toml(e))?;
        let mut base = models::bounds::scenario_bounds::<M>(&raw.bounds)
            .map(M::first_design)
            .map_err(|e| source.error(Some(e.span), Some(e.field), e.message))?;
        for option in &raw.options {
            base.set_option(option.get_ref())
                .map_err(|message| source.at(option, "options", message))?;
        }
        let known_designs = M::design_names();
        finish(
            source,
            raw,
            M::NAME,
            (base.bounds_json(), base.bounds_line()),
            &known_designs,
            |design| base.with_design(design),
        )
    }
}

/// The model-independent rest of loading: the ID, the expectations and the
/// stories, each checked against the model's designs and properties.
pub(super) fn finish<B, M>(
    source: &Source,
    raw: ScenarioFile<B>,
    model_name: &'static str,
    (bounds, bounds_line): (Json, String),
    known_designs: &[&str],
    model_for: impl Fn(&str) -> Result<M, String>,
) -> Result<Scenario, InputError>
where
    M: ToolModel,
{
    let id = raw.id.get_ref();
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(source.at(
            &raw.id,
            "id",
            format!("`{id}` is not an ID: use letters, digits, `-`, `_` and `.` (it names report files)"),
        ));
    }
    if raw.expect.is_empty() {
        let at = source.text.find("[expect").unwrap_or(0);
        return Err(source.error(
            Some(at..at),
            Some("expect".into()),
            "no expectations: add a table [expect.DESIGN] with `PROPERTY = \"VERDICT\"` lines",
        ));
    }
    let mut designs = Vec::new();
    for (design, properties) in &raw.expect {
        let field = format!("expect.{design}");
        let model = model_for(design).map_err(|e| source.key("expect", design, e))?;
        if properties.is_empty() {
            return Err(source.key(
                "expect",
                design,
                "no expectations for this design: add `PROPERTY = \"VERDICT\"` lines",
            ));
        }
        let mut expectations = Vec::new();
        for (property, expected) in properties {
            let (name, kind) = property_named(&model, property).ok_or_else(|| {
                source.key(
                    &field,
                    property,
                    format!(
                        "unknown property `{property}` (known: {})",
                        property_names(&model).join(", ")
                    ),
                )
            })?;
            let field = format!("{field}.{property}");
            let e = *expected.get_ref();
            let fits = match kind {
                PropertyKind::Always | PropertyKind::Progress => {
                    matches!(e.verdict, Verdict::Holds | Verdict::Violated)
                }
                PropertyKind::Sometimes => {
                    matches!(e.verdict, Verdict::Reached | Verdict::NotReached)
                }
            };
            if !fits {
                let words = match kind {
                    PropertyKind::Always => "an `always` property: expect `holds` or `violated`",
                    PropertyKind::Progress => "a progress property: expect `holds` or `violated`",
                    PropertyKind::Sometimes => {
                        "a witness (`sometimes`): expect `reached` or `not-reached`"
                    }
                };
                return Err(source.at(expected, field, format!("`{name}` is {words}")));
            }
            if e.steps.is_some() && !matches!(e.verdict, Verdict::Violated | Verdict::Reached) {
                return Err(source.at(
                    expected,
                    field,
                    format!(
                        "`steps` needs a path: only `violated` and `reached` have one, not `{}`",
                        e.verdict.word()
                    ),
                ));
            }
            expectations.push((name, e));
        }
        // In the model's order (always properties first), not the map's.
        let order = property_names(&model);
        expectations.sort_by_key(|(name, _)| order.iter().position(|n| n == name));
        designs.push(DesignPlan {
            design: design.clone(),
            model,
            expectations,
        });
    }
    // In the model's order (the reports' columns), not the file's map order.
    // Compositions come after the named designs.
    designs.sort_by_key(|d| {
        known_designs
            .iter()
            .position(|k| *k == d.design)
            .unwrap_or(usize::MAX)
    });
    let every_design: Vec<(String, M)> = known_designs
        .iter()
        .filter_map(|d| model_for(d).ok().map(|m| (d.to_string(), m)))
        .collect();
    let finding = match &raw.finding {
        None => None,
        Some(name) => {
            let model = &every_design[0].1;
            match property_named(model, name.get_ref()) {
                Some((property, PropertyKind::Always | PropertyKind::Progress)) => Some(property),
                Some((property, PropertyKind::Sometimes)) => {
                    return Err(source.at(
                        name,
                        "finding",
                        format!("`{property}` is a witness (`sometimes`): a finding is an `always` property a design breaks"),
                    ))
                }
                None => {
                    return Err(source.at(
                        name,
                        "finding",
                        format!(
                            "unknown property `{}` (known: {})",
                            name.get_ref(),
                            property_names(model).join(", ")
                        ),
                    ))
                }
            }
        }
    };
    let mut stories = Vec::new();
    for (i, story) in raw.story.iter().enumerate() {
        let field = format!("story[{i}]");
        let model = model_for(story.design.get_ref())
            .map_err(|e| source.at(&story.design, format!("{field}.design"), e))?;
        let violates = match property_named(&model, story.violates.get_ref()) {
            Some((name, PropertyKind::Always)) => name,
            Some((name, PropertyKind::Sometimes)) => {
                return Err(source.at(
                    &story.violates,
                    format!("{field}.violates"),
                    format!("`{name}` is a witness (`sometimes`): a story must end violating an `always` property"),
                ))
            }
            Some((name, PropertyKind::Progress)) => {
                return Err(source.at(
                    &story.violates,
                    format!("{field}.violates"),
                    format!("`{name}` is a progress property, violated by a loop rather than a last state: a story must end violating an `always` property"),
                ))
            }
            None => {
                return Err(source.at(
                    &story.violates,
                    format!("{field}.violates"),
                    format!(
                        "unknown property `{}` (known: {})",
                        story.violates.get_ref(),
                        property_names(&model).join(", ")
                    ),
                ))
            }
        };
        let steps: Vec<String> = story
            .steps
            .get_ref()
            .iter()
            .map(|s| s.get_ref().clone())
            .collect();
        if steps.is_empty() {
            return Err(source.at(
                &story.steps,
                format!("{field}.steps"),
                "a story needs at least one step",
            ));
        }
        let init = model.init_states().remove(0);
        let actions = model.parse(&init, &steps).map_err(|e| {
            source.at(
                &story.steps.get_ref()[e.index],
                format!("{field}.steps[{}]", e.index),
                format!(
                    "story step {} `{}`: {}",
                    e.index + 1,
                    steps[e.index],
                    e.message
                ),
            )
        })?;
        stories.push(StoryPlan {
            design: story.design.get_ref().clone(),
            model,
            violates,
            actions,
        });
    }
    Ok(Scenario {
        heading: Heading {
            file: source.file.to_path_buf(),
            id: id.clone(),
            id_at: line_column(source.text, raw.id.span().start),
            title: raw.title,
            source: raw.source,
            notes: raw.notes,
            model: model_name,
            bounds,
            bounds_line,
            bounds_flags: every_design[0].1.bounds_flags(),
            finding,
        },
        slow: raw.slow,
        plan: Box::new(ModelPlan {
            designs,
            stories,
            every_design,
        }),
    })
}

pub(super) fn property_named<M: Narrated>(
    model: &M,
    name: &str,
) -> Option<(&'static str, PropertyKind)> {
    let name = property_names(model).into_iter().find(|p| *p == name)?;
    Some((name, model.kind_of(name)?))
}

/// Every property's name: the `always` and `sometimes` ones, then progress.
pub(super) fn property_names<M: Narrated>(model: &M) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = model.properties().iter().map(|p| p.name).collect();
    names.extend(model.progress().iter().map(|p| p.name));
    names
}

pub(super) const NO_SUCH_FILE: &str = "no such file or directory";

/// The scenario files named by `paths` (directories: their `*.toml` files,
/// sorted), or every file under `scenarios/` when none is named.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let default = [PathBuf::from(SCENARIO_DIR)];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| InputError {
                file: path.clone(),
                at: None,
                field: None,
                message: format!("cannot read the directory: {e}"),
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            found.sort();
            files.extend(found);
        } else if path.exists() {
            files.push(path.clone());
        } else {
            return Err(InputError {
                file: path.clone(),
                at: None,
                field: None,
                message: NO_SUCH_FILE.into(),
            });
        }
    }
    Ok(files)
}

/// Loads every file, checking that IDs are unique and `--only` names one;
/// stops at the first invalid file.
pub fn load_all(files: &[PathBuf], selection: &Selection) -> Result<Vec<Scenario>, InputError> {
    let mut scenarios: Vec<Scenario> = Vec::new();
    for file in files {
        let scenario = load(file)?;
        if let Some(other) = scenarios
            .iter()
            .find(|s| s.heading.id == scenario.heading.id)
        {
            let (line, column) = other.heading.id_at;
            return Err(InputError {
                file: file.clone(),
                at: Some(scenario.heading.id_at),
                field: Some("id".into()),
                message: format!(
                    "`{}` is also the ID of {}:{line}:{column}; each scenario needs its own",
                    scenario.heading.id,
                    other.heading.file.display()
                ),
            });
        }
        scenarios.push(scenario);
    }
    for id in &selection.only {
        if !scenarios.iter().any(|s| &s.heading.id == id) {
            return Err(InputError {
                file: PathBuf::from("--only"),
                at: None,
                field: None,
                message: format!(
                    "no scenario has the ID `{id}` (known: {})",
                    scenarios
                        .iter()
                        .map(|s| s.heading.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
    }
    Ok(scenarios)
}
