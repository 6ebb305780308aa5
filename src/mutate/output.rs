//! The mutation report: text for people (each mutant's fate, then each
//! design's score), JSON, and an HTML page.

use super::*;
use crate::report::mutation::{DesignMutants, Fate as RecordFate, MutantRecord};
use crate::report::table::{Cell, Column, TextTable};
use crate::report::{count, Style};

/// The report for people: each mutant's fate (with the bounds that killed
/// it, when they are not `given`), then each design's score.
pub fn text(reports: &[DesignReport], given: &str, model_flag: &str, style: Style) -> String {
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
