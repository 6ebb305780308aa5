//! A report's stories: shown open (a regression, a violation outside a
//! scenario run), or folded and shared by the checks that tell them, with
//! every diagram and folded story packed once (`lazy.rs`).

use super::{lazy, verdict_text, Links, ResultRow};
use maud::{html, Markup};
use std::collections::HashMap;

pub(super) fn story_text(row: &ResultRow) -> Markup {
    html! { @if let Some(story) = &row.story { pre class="story" { (story) } } }
}

pub(super) fn explanation(row: &ResultRow) -> Markup {
    html! { @if let Some(e) = &row.explanation { p class="explanation" { (e) } } }
}

/// A story shown open (a regression; a violation outside a scenario run):
/// its explanation and story on the page, its diagram drawn on opening.
pub(super) fn open_finding(row: &ResultRow, stories: &mut lazy::Stories) -> Markup {
    let heading = format!("{}: {} — {}", row.property, row.column(), verdict_text(row));
    let diagram = row.svg.as_deref().map(|svg| stories.add_diagram(svg));
    html! {
        details class="finding" id=(row.anchor()) open {
            summary { h3 { (heading) } }
            (explanation(row))
            @if let Some(entry) = diagram { div class="lazy" data-entry=(entry) {} }
            (story_text(row))
        }
        "\n"
    }
}

/// A story folded: the checks it tells (one path often answers the same
/// property in several scenarios and designs), its explanation, diagram and
/// story all drawn on opening.
pub(super) fn folded_story(
    anchor: &str,
    rows: &[&ResultRow],
    stories: &mut lazy::Stories,
) -> Markup {
    let first = rows[0];
    let columns: Vec<String> = rows.iter().map(|r| r.column()).collect();
    let heading = format!(
        "{} — {}: {}",
        first.property,
        verdict_text(first),
        columns.join(", ")
    );
    let mut pieces = Vec::new();
    if first.explanation.is_some() {
        pieces.push(stories.add(explanation(first).into_string()).to_string());
    }
    if let Some(svg) = &first.svg {
        pieces.push(stories.add_diagram(svg));
    }
    if first.story.is_some() {
        pieces.push(stories.add(story_text(first).into_string()).to_string());
    }
    html! {
        details class="finding" id=(anchor) {
            summary { h3 { (heading) } }
            div class="lazy" data-entry=(pieces.join(" ")) {}
        }
        "\n"
    }
}

/// Folded rows grouped by what they tell: the same explanation, story and
/// diagram are one folded story, under anchor `t-N`.
pub(super) fn group_told<'a>(
    rows: &[&'a ResultRow],
    links: &mut Links,
    next: &mut usize,
) -> Vec<(String, Vec<&'a ResultRow>)> {
    let mut groups: Vec<(String, Vec<&'a ResultRow>)> = Vec::new();
    let mut by_content: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for &row in rows {
        let key = (
            row.explanation.as_deref().unwrap_or(""),
            row.story.as_deref().unwrap_or(""),
            row.svg.as_deref().unwrap_or(""),
        );
        let i = *by_content.entry(key).or_insert_with(|| {
            *next += 1;
            groups.push((format!("t-{next}"), Vec::new()));
            groups.len() - 1
        });
        groups[i].1.push(row);
        links.insert(row.anchor(), groups[i].0.clone());
    }
    groups
}
