//! `check --bless`: a scenario file's expectations written from a run. Every
//! design of the file's model (and every design the file already names) is
//! checked on every property; what the file lacks is added, what differs is
//! rewritten, and the rest of the file (comments, notes, stories, layout) is
//! kept as written. Adding a design or a property is then a line of code and
//! a bless, and each change is printed as a diff line for review.

use super::format::{verdict_named, Expected};
use super::{judge, Status};
use crate::check::Verdict;
use toml_edit::{DocumentMut, InlineTable, Item, Table, Value};

/// One design's verdicts on the scenario's bounds, property by property in
/// the model's order: the expectation a run gives, or what cut it short.
pub struct Blessed {
    pub design: String,
    pub results: Vec<(&'static str, Result<Expected, &'static str>)>,
}

/// What blessing changed in one file: the new text and a diff line per
/// change (`+` added, `-`/`+` rewritten, `?` left as it was: inconclusive).
pub struct Blessing {
    pub text: String,
    pub changes: Vec<String>,
    pub inconclusive: usize,
}

/// The expectation as the files write it: `"holds"`, or
/// `{ verdict = "violated", steps = N }`.
fn value_of(expected: Expected) -> Value {
    match expected.steps {
        None => Value::from(expected.verdict.word()),
        Some(n) => {
            let mut table = InlineTable::new();
            table.insert("verdict", Value::from(expected.verdict.word()));
            table.insert("steps", Value::from(n as i64));
            table.fmt();
            Value::InlineTable(table)
        }
    }
}

/// An expectation as written in the file (`None`: not one the loader reads,
/// which cannot happen in a file that loaded).
fn written(item: &Item) -> Option<Expected> {
    match item.as_value()? {
        Value::String(word) => Some(Expected {
            verdict: verdict_named(word.value())?,
            steps: None,
        }),
        Value::InlineTable(table) => Some(Expected {
            verdict: verdict_named(table.get("verdict")?.as_str()?)?,
            steps: match table.get("steps") {
                Some(n) => Some(usize::try_from(n.as_integer()?).ok()?),
                None => None,
            },
        }),
        _ => None,
    }
}

/// A value as a diff line shows it: without its spacing and comment.
fn shown(value: &Value) -> String {
    let mut bare = value.clone();
    bare.decor_mut().clear();
    bare.to_string()
}

/// Moves every table at or after `from` in the document one place down, so
/// that a new table can stand at `from` (after the last expectation, before
/// the stories).
fn make_room(table: &mut Table, from: usize) {
    for (_, item) in table.iter_mut() {
        match item {
            Item::Table(t) => {
                if let Some(p) = t.position().filter(|&p| p >= from) {
                    t.set_position(p + 1);
                }
                make_room(t, from);
            }
            Item::ArrayOfTables(array) => {
                for t in array.iter_mut() {
                    if let Some(p) = t.position().filter(|&p| p >= from) {
                        t.set_position(p + 1);
                    }
                    make_room(t, from);
                }
            }
            _ => {}
        }
    }
}

/// Writes `blessed` into the scenario text `text`: a design's table is
/// added after the last `[expect.*]` table, a property at the end of its
/// design's table; an expectation that the run confirms (the same verdict,
/// and the same steps where the file pins them) is left as written.
pub fn bless_text(text: &str, blessed: &[Blessed]) -> Result<Blessing, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    if !doc.contains_key("expect") {
        let mut t = Table::new();
        t.set_implicit(true);
        doc.insert("expect", Item::Table(t));
    }
    let mut changes = Vec::new();
    let mut inconclusive = 0;
    for design in blessed {
        let expect = doc["expect"].as_table().ok_or("`expect` is not a table")?;
        if !expect.contains_key(&design.design) {
            let last = expect
                .iter()
                .filter_map(|(_, item)| item.as_table()?.position())
                .max();
            let mut table = Table::new();
            table.decor_mut().set_prefix("\n");
            if let Some(last) = last {
                // After the last expectation: what follows (the stories)
                // moves one place down.
                make_room(doc.as_table_mut(), last + 1);
                table.set_position(last + 1);
            }
            doc["expect"]
                .as_table_mut()
                .expect("checked above")
                .insert(&design.design, Item::Table(table));
            changes.push(format!("+ [expect.{}]", design.design));
        }
        let table = doc["expect"][&design.design]
            .as_table_mut()
            .ok_or_else(|| format!("`expect.{}` is not a table", design.design))?;
        for (property, result) in &design.results {
            let got = match result {
                Ok(got) => *got,
                Err(cut) => {
                    inconclusive += 1;
                    changes.push(format!(
                        "? [expect.{}] {property}: left as it was: inconclusive, {cut}",
                        design.design
                    ));
                    continue;
                }
            };
            match table.get(property) {
                None => {
                    let value = value_of(got);
                    changes.push(format!(
                        "+ [expect.{}] {property} = {}",
                        design.design,
                        shown(&value)
                    ));
                    table.insert(property, Item::Value(value));
                }
                Some(item) => {
                    let old = written(item).ok_or_else(|| {
                        format!(
                            "`expect.{}.{property}` is not an expectation",
                            design.design
                        )
                    })?;
                    if judge(old, got.verdict, got.steps) == Status::Ok {
                        continue;
                    }
                    // Keep the steps unpinned where the file leaves them so.
                    let new = Expected {
                        verdict: got.verdict,
                        steps: got
                            .steps
                            .filter(|_| old.steps.is_some() || old.verdict != got.verdict),
                    };
                    let mut value = value_of(new);
                    let old_value = item.as_value().expect("an expectation is a value");
                    *value.decor_mut() = old_value.decor().clone();
                    changes.push(format!(
                        "- [expect.{}] {property} = {}",
                        design.design,
                        shown(old_value)
                    ));
                    changes.push(format!(
                        "+ [expect.{}] {property} = {}",
                        design.design,
                        shown(&value)
                    ));
                    table.insert(property, Item::Value(value));
                }
            }
        }
    }
    Ok(Blessing {
        text: doc.to_string(),
        changes,
        inconclusive,
    })
}

/// The expectation a property's verdict gives: the steps of a violation
/// pinned, a witness's not (as the files write them).
pub fn expectation(verdict: Verdict, steps: Option<usize>) -> Result<Expected, ()> {
    match verdict {
        Verdict::Inconclusive => Err(()),
        Verdict::Violated => Ok(Expected { verdict, steps }),
        _ => Ok(Expected {
            verdict,
            steps: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"# a comment that stays
id = "x"
model = "stovepipe"

[bounds]
requests = 1

[expect.a]
p = "holds"   # kept
q = { verdict = "violated", steps = 8 }

[[story]]
design = "a"
violates = "q"
steps = []
"#;

    fn blessed(design: &str, results: &[(&'static str, Verdict, Option<usize>)]) -> Blessed {
        Blessed {
            design: design.to_string(),
            results: results
                .iter()
                .map(|&(p, v, s)| (p, Ok(expectation(v, s).unwrap())))
                .collect(),
        }
    }

    #[test]
    fn a_confirmed_file_is_left_byte_for_byte() {
        let b = bless_text(
            FILE,
            &[blessed(
                "a",
                &[
                    ("p", Verdict::Holds, None),
                    ("q", Verdict::Violated, Some(8)),
                ],
            )],
        )
        .unwrap();
        assert_eq!(b.text, FILE);
        assert!(b.changes.is_empty(), "{:?}", b.changes);
    }

    #[test]
    fn a_new_design_goes_after_the_last_expectation_and_a_change_keeps_its_comment() {
        let b = bless_text(
            FILE,
            &[
                blessed(
                    "a",
                    &[
                        ("p", Verdict::Violated, Some(3)),
                        ("q", Verdict::Violated, Some(8)),
                    ],
                ),
                blessed(
                    "b",
                    &[("p", Verdict::Holds, None), ("q", Verdict::Reached, None)],
                ),
            ],
        )
        .unwrap();
        assert!(
            b.text
                .contains("p = { verdict = \"violated\", steps = 3 }   # kept"),
            "{}",
            b.text
        );
        let new = b.text.find("[expect.b]").expect("the new table");
        assert!(new < b.text.find("[[story]]").unwrap(), "{}", b.text);
        assert!(
            b.text
                .contains("[expect.b]\np = \"holds\"\nq = \"reached\"\n"),
            "{}",
            b.text
        );
        assert_eq!(
            b.changes,
            [
                "- [expect.a] p = \"holds\"",
                "+ [expect.a] p = { verdict = \"violated\", steps = 3 }",
                "+ [expect.b]",
                "+ [expect.b] p = \"holds\"",
                "+ [expect.b] q = \"reached\"",
            ]
        );
    }
}
