//! The mutation report: text for people (each mutant's fate, then each
//! design's score), JSON, and an HTML page.

use super::*;
use crate::report::mutation::{
    DesignMutants, Fate as RecordFate, GivenBoundsRecord, GivenChange, MutantRecord,
};
use crate::report::table::{Cell, Column, TextTable};
use crate::report::{count, Style};
use std::collections::BTreeMap;

/// The report for people: each mutant's fate (with the bounds that killed
/// it, when they are not `given`), with `--verdicts-only` the masked
/// mutants, then each design's score. `cells` names the scenarios whose
/// bounds a set of bounds is (by its flags).
pub fn text(
    reports: &[DesignReport],
    given: &str,
    cells: &BTreeMap<String, String>,
    model_flag: &str,
    style: Style,
) -> String {
    let mut out = String::new();
    for r in reports {
        if let Some(why) = &r.unlisted {
            out.push_str(&style.bold(&format!("{}: ", r.design)));
            let line = format!("mutants not listed, inconclusive: {why}\n\n");
            out.push_str(&style.verdict(Verdict::Inconclusive, &line));
            continue;
        }
        out.push_str(&style.bold(&format!(
            "{}: {}\n",
            r.design,
            count(r.mutants.len() as u64, "mutant")
        )));
        let mut fates = headless_table(2);
        for m in &r.mutants {
            let (line, verdict) = match &m.fate {
                Fate::Killed(kill) => (
                    format!(
                        "killed by {}{}",
                        kill.words(),
                        if kill.bounds == given {
                            String::new()
                        } else {
                            format!(" (on {})", kill.bounds)
                        }
                    ),
                    Verdict::Holds,
                ),
                Fate::Survived(None) => (format!("SURVIVED: {}", m.change), Verdict::Violated),
                Fate::Survived(Some(kill)) => (
                    format!(
                        "SURVIVED here; killed on {} by {}",
                        kill.bounds,
                        kill.words()
                    ),
                    Verdict::Violated,
                ),
                Fate::Equivalent(why) => (format!("equivalent: {why}"), Verdict::Reached),
                Fate::Known(why) => (format!("survived (known): {why}"), Verdict::Inconclusive),
                Fate::ListedButKilled {
                    listed_as, kill, ..
                } => (
                    format!(
                        "LISTED AS {} BUT KILLED by {}",
                        listed_as.to_uppercase(),
                        kill.words()
                    ),
                    Verdict::Violated,
                ),
                Fate::Inconclusive(why) => (format!("inconclusive: {why}"), Verdict::Inconclusive),
            };
            fates.row(vec![m.name.as_str().into(), Cell::painted(line, verdict)]);
        }
        out.push_str(&fates.render(style));
        out.push('\n');
    }
    out.push_str(&masking(reports, given, cells, style));
    out.push_str(&style.bold("mutation score (killed / mutants not listed as equivalent)\n"));
    // The widths the score lines have always had (the book's scores are
    // a `big` block, most of an hour to re-run); a longer name widens them.
    let mut scores = headless_table(3);
    scores.columns[0].min_width = 36;
    scores.columns[1] = Column::right("").at_least("100.0%".len() + 1);
    for r in reports {
        scores.row(if r.unlisted.is_some() {
            vec![
                r.design.as_str().into(),
                "".into(),
                "inconclusive: mutants not listed".into(),
            ]
        } else {
            vec![
                r.design.as_str().into(),
                format!("{:.1}%", 100.0 * r.score()).into(),
                format!(
                    "{} killed, {} survived ({} known), {} equivalent",
                    r.killed(),
                    r.survived(),
                    r.known(),
                    r.equivalent()
                )
                .into(),
            ]
        });
    }
    out.push_str(&scores.render(style));
    out.push_str(&format!(
        "\nA mutant's story: slotcheck check{model_flag} --design DESIGN --mutant NAME --property PROPERTY [its bounds]\n"
    ));
    out
}

/// With `--verdicts-only`: the mutants no verdict tells from their design
/// on the given bounds (a length alone does, or nothing), each with the
/// verdict and the scenario bounds that kill it, if any; then per design
/// how many of each kind a verdict kills. Empty without the flag.
fn masking(
    reports: &[DesignReport],
    given: &str,
    cells: &BTreeMap<String, String>,
    style: Style,
) -> String {
    let judged = |m: &&MutantReport| {
        !matches!(m.fate, Fate::Equivalent(_))
            && matches!(
                m.on_given_bounds,
                Some(OnGivenBounds::LengthOnly(_) | OnGivenBounds::Nothing)
            )
    };
    if !reports.iter().flat_map(|r| &r.mutants).any(|m| judged(&m)) {
        return String::new();
    }
    let mut out = style.bold(&format!(
        "masked on the given bounds ({given}): no verdict differs there\n"
    ));
    let mut mutants = TextTable::new(vec![
        Column::left("mutant"),
        Column::left("on the given bounds"),
        Column::left("killed by a verdict"),
        Column::left("on the bounds of"),
    ]);
    mutants.margin = "  ".into();
    let mut counts = TextTable::new(vec![
        Column::left("design"),
        Column::right("length only"),
        Column::right("of them killed"),
        Column::right("nothing"),
        Column::right("of them killed"),
    ]);
    counts.margin = "  ".into();
    for r in reports {
        let (mut length, mut length_killed, mut nothing, mut nothing_killed) = (0, 0, 0, 0);
        for m in r.mutants.iter().filter(judged) {
            let there = match &m.on_given_bounds {
                Some(OnGivenBounds::LengthOnly(kill)) => {
                    length += 1;
                    length_killed += usize::from(matches!(m.fate, Fate::Killed(_)));
                    format!("a length ({})", kill.property)
                }
                _ => {
                    nothing += 1;
                    nothing_killed += usize::from(matches!(m.fate, Fate::Killed(_)));
                    "nothing".to_string()
                }
            };
            let (verdict, on) = match &m.fate {
                Fate::Killed(kill) => (
                    Cell::painted(kill.words(), Verdict::Holds),
                    cells.get(&kill.flags).unwrap_or(&kill.bounds).clone(),
                ),
                Fate::Known(_) => (
                    Cell::painted("survived (known)", Verdict::Inconclusive),
                    String::new(),
                ),
                Fate::Inconclusive(_) => (
                    Cell::painted("inconclusive", Verdict::Inconclusive),
                    String::new(),
                ),
                _ => (Cell::painted("SURVIVED", Verdict::Violated), String::new()),
            };
            mutants.row(vec![
                m.name.as_str().into(),
                there.into(),
                verdict,
                on.into(),
            ]);
        }
        counts.row(vec![
            r.design.as_str().into(),
            length.to_string().into(),
            length_killed.to_string().into(),
            nothing.to_string().into(),
            nothing_killed.to_string().into(),
        ]);
    }
    out.push_str(&mutants.render(style));
    out.push('\n');
    out.push_str(&counts.render(style));
    out.push('\n');
    out
}

/// A table of `columns` columns without headings, indented two spaces.
fn headless_table(columns: usize) -> TextTable {
    let mut table = TextTable::new(vec![Column::left(""); columns]);
    table.headless = true;
    table.margin = "  ".into();
    table
}

/// The report as its typed record (`mutate --json` serializes it).
pub fn records(reports: &[DesignReport]) -> Vec<DesignMutants> {
    reports
        .iter()
        .map(|r| DesignMutants {
            design: r.design.clone(),
            equivalent: r.equivalent(),
            killed: r.killed(),
            known_survivors: r.known(),
            mutants: r.mutants.iter().map(mutant_record).collect(),
            score: r.score(),
            survived: r.survived(),
            unlisted: r.unlisted.clone(),
        })
        .collect()
}

fn mutant_record(m: &MutantReport) -> MutantRecord {
    let mut record = MutantRecord {
        change: m.change.clone(),
        fate: RecordFate::Killed,
        killed_by: None,
        killed_on_larger_bounds: None,
        listed_as: None,
        name: m.name.clone(),
        on_given_bounds: m.on_given_bounds.as_ref().map(|given| match given {
            OnGivenBounds::Verdict => GivenBoundsRecord {
                change: GivenChange::Verdict,
                length: None,
            },
            OnGivenBounds::LengthOnly(kill) => GivenBoundsRecord {
                change: GivenChange::LengthOnly,
                length: Some(kill.record()),
            },
            OnGivenBounds::Nothing => GivenBoundsRecord {
                change: GivenChange::Nothing,
                length: None,
            },
        }),
        why: None,
    };
    match &m.fate {
        Fate::Killed(kill) => record.killed_by = Some(kill.record()),
        Fate::Survived(larger) => {
            record.fate = RecordFate::Survived;
            record.killed_on_larger_bounds = larger.as_ref().map(Kill::record);
        }
        Fate::Equivalent(why) => {
            record.fate = RecordFate::Equivalent;
            record.why = Some(why.clone());
        }
        Fate::Known(why) => {
            record.fate = RecordFate::KnownSurvivor;
            record.why = Some(why.clone());
        }
        Fate::ListedButKilled {
            listed_as,
            why,
            kill,
        } => {
            record.fate = RecordFate::ListedButKilled;
            record.listed_as = Some(listed_as.to_string());
            record.why = Some(why.clone());
            record.killed_by = Some(kill.record());
        }
        Fate::Inconclusive(why) => {
            record.fate = RecordFate::Inconclusive;
            record.why = Some(why.clone());
        }
    }
    record
}

/// The report as a page: a table per design, a row per mutant.
pub fn html(reports: &[DesignReport], heading: &str) -> String {
    use crate::report::xml_escape;
    let mut body = String::new();
    for r in reports {
        if let Some(why) = &r.unlisted {
            body.push_str(&format!(
                "<h2>{}</h2>\n<p class=\"unsure\">mutants not listed, inconclusive: {}</p>\n",
                xml_escape(&r.design),
                xml_escape(why)
            ));
            continue;
        }
        body.push_str(&format!(
            "<h2>{} <small>{:.1}% killed ({} of {}; {} equivalent)</small></h2>\n<table><thead><tr><th>mutant</th><th>what it changes</th><th>fate</th></tr></thead><tbody>\n",
            xml_escape(&r.design),
            100.0 * r.score(),
            r.killed(),
            r.mutants.len() - r.equivalent(),
            r.equivalent()
        ));
        for m in &r.mutants {
            let (class, fate) = match &m.fate {
                Fate::Killed(kill) => (
                    "good",
                    format!("killed by {} ({})", kill.words(), kill.bounds),
                ),
                Fate::Survived(None) => ("bad", "SURVIVED".to_string()),
                Fate::Survived(Some(kill)) => (
                    "bad",
                    format!(
                        "SURVIVED here; killed on {} by {}",
                        kill.bounds,
                        kill.words()
                    ),
                ),
                Fate::Equivalent(why) => ("good", format!("equivalent: {why}")),
                Fate::Known(why) => ("unsure", format!("survived (known): {why}")),
                Fate::ListedButKilled {
                    listed_as, kill, ..
                } => (
                    "bad",
                    format!("listed as {listed_as} but killed by {}", kill.words()),
                ),
                Fate::Inconclusive(why) => ("unsure", format!("inconclusive: {why}")),
            };
            body.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{}</td><td class=\"{class}\">{}</td></tr>\n",
                xml_escape(&m.name),
                xml_escape(&m.change),
                xml_escape(&fate)
            ));
        }
        body.push_str("</tbody></table>\n");
    }
    crate::report::html::plain_page("slotcheck mutate", heading, &body)
}
