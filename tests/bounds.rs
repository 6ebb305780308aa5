//! Each model's bounds are its table (`ToolModel::bound_table`): every row
//! shows as a flag, a scenario key, a JSON key, in the one-line form, in
//! the suggested flags and in a trace's names; and a bad value of each bound
//! in a scenario file is told at that bound's own line and column.

use clap::{Args, Command};
use slotcheck::models::{Bound, ModelArgs, ModelBounds, ToolModel};
use slotcheck::scenario::{parse, InputError};
use slotcheck_models::link::Link;
use slotcheck_models::stovepipe::Stovepipe;
use std::path::Path;

/// A shipped scenario of model `M` without its stories, whose `[bounds]`
/// table the tests replace.
fn shipped<M: ToolModel>() -> String {
    let name = match M::NAME {
        "stovepipe" => "SP-OCT-003",
        _ => "link-skew-40-loses-ask",
    };
    let text = std::fs::read_to_string(format!("scenarios/{name}.toml")).unwrap();
    // Its stories hold on its own bounds only.
    match text.find("\n[[story") {
        Some(at) => text[..=at].to_string(),
        None => text,
    }
}

/// `text` with its `[bounds]` table's lines replaced by `lines`.
fn with_bounds_lines(text: &str, lines: &[String]) -> String {
    let start = text.find("[bounds]\n").unwrap() + "[bounds]\n".len();
    let end = start + text[start..].find("\n[").unwrap();
    format!("{}{}\n{}", &text[..start], lines.join("\n"), &text[end..])
}

/// Bounds on which `row` is told and the model takes them: the defaults,
/// with `row` moved by one of its units where it is not told at them.
fn told_bounds<M: ToolModel>(row: &Bound<M::Bounds>) -> M::Bounds {
    let default = M::DEFAULT_BOUNDS;
    let value = (row.get)(&default);
    for candidate in [value, value + row.unit, value.saturating_sub(row.unit)] {
        let mut b = default;
        if !row.range.contains(&candidate) {
            continue;
        }
        (row.set)(&mut b, candidate);
        if row.is_told(&b) && M::validate_bounds(&b).is_ok() {
            return b;
        }
    }
    panic!("{}: no bounds near the default tell `{}`", M::NAME, row.key);
}

fn every_row_shows_in_every_form<M: ToolModel>() {
    let command = ModelArgs::augment_args(Command::new("bounds"));
    let flags: Vec<&str> = command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .collect();
    let table = M::bound_table();
    assert!(!table.is_empty());
    for row in table {
        assert!(flags.contains(&row.flag), "--{} is no flag", row.flag);

        let b = told_bounds::<M>(row);
        let model = M::first_design(b);
        let value = (row.get)(&b);
        let json = model.bounds_json();
        assert_eq!(json[row.json], value, "{} in {json}", row.json);
        let line = model.bounds_line();
        let words = row.words.replace("{}", &value.to_string());
        assert!(line.contains(&words), "`{words}` not in `{line}`");
        let suggested = model.bounds_flags();
        let flag = format!("--{} {value}", row.flag);
        assert!(suggested.contains(&flag), "`{flag}` not in `{suggested}`");
        assert!(
            model
                .bound_values()
                .contains(&(row.name, (value / row.unit) as u32)),
            "{} not among the names",
            row.name
        );

        // The scenario key: a file giving every bound, this one at `value`,
        // reads back the same bounds.
        let lines: Vec<String> = table
            .iter()
            .map(|r| format!("{} = {}", r.key, (r.get)(&b)))
            .collect();
        let text = with_bounds_lines(&shipped::<M>(), &lines);
        let scenario = parse(Path::new("every-bound.toml"), &text)
            .unwrap_or_else(|e| panic!("{} = {value}: {e}", row.key));
        assert_eq!(scenario.heading.bounds_line, line, "{}", row.key);
    }
}

#[test]
fn every_stovepipe_bound_shows_as_a_flag_a_scenario_key_a_json_key_and_in_words() {
    every_row_shows_in_every_form::<Stovepipe>();
}

#[test]
fn every_link_bound_shows_as_a_flag_a_scenario_key_a_json_key_and_in_words() {
    every_row_shows_in_every_form::<Link>();
}

/// The error of a scenario whose `[bounds]` are `lines`.
fn error_of<M: ToolModel>(lines: &[String]) -> InputError {
    let text = with_bounds_lines(&shipped::<M>(), lines);
    match parse(Path::new("bad.toml"), &text) {
        Ok(_) => panic!("{lines:?} was taken"),
        Err(e) => e,
    }
}

/// The line of `needle` in the text a scenario with `[bounds]` `lines` has.
fn line_of<M: ToolModel>(lines: &[String], needle: &str) -> usize {
    let text = with_bounds_lines(&shipped::<M>(), lines);
    text.lines().position(|l| l == needle).unwrap() + 1
}

fn a_bad_bound_is_told_at_its_own_line_and_column<M: ToolModel>() {
    let table = M::bound_table();
    let good: Vec<String> = table
        .iter()
        .map(|r| format!("{} = {}", r.key, (r.get)(&M::DEFAULT_BOUNDS)))
        .collect();
    for (i, row) in table.iter().enumerate() {
        let above = (row.range.end() + 1).to_string();
        let below = row
            .range
            .start()
            .checked_sub(1)
            .map_or("-1".into(), |n| n.to_string());
        for bad in [&above, &below, "\"two\"", "1.5"] {
            let mut lines = good.clone();
            lines[i] = format!("{} = {bad}", row.key);
            let error = error_of::<M>(&lines);
            let line = line_of::<M>(&lines, &lines[i]);
            let column = row.key.len() + " = ".len() + 1;
            assert_eq!(
                error.at,
                Some((line, column)),
                "{} = {bad}: {error}",
                row.key
            );
            assert_eq!(
                error.field.as_deref(),
                Some(format!("bounds.{}", row.key).as_str()),
                "{error}"
            );
        }
    }
    // A key no bound has is told at the key.
    let mut lines = good.clone();
    lines.insert(1, "bogus = 1".into());
    let error = error_of::<M>(&lines);
    assert_eq!(
        error.at,
        Some((line_of::<M>(&lines, "bogus = 1"), 1)),
        "{error}"
    );
    assert_eq!(error.field.as_deref(), Some("bounds.bogus"), "{error}");
    assert!(error.message.contains("unknown field `bogus`"), "{error}");
}

#[test]
fn a_bad_stovepipe_bound_in_a_scenario_is_told_at_its_own_line_and_column() {
    a_bad_bound_is_told_at_its_own_line_and_column::<Stovepipe>();
}

#[test]
fn a_bad_link_bound_in_a_scenario_is_told_at_its_own_line_and_column() {
    a_bad_bound_is_told_at_its_own_line_and_column::<Link>();
}
