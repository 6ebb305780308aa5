//! A model's bounds, written once: each model gives a table of [`Bound`]
//! rows, and every form of its bounds is made from it here, the same for
//! every model: the command-line flags ([`BoundFlags`]), a scenario file's
//! `[bounds]` ([`scenario_bounds`]), the JSON of a report, the one-line
//! form of headings, the flags slotcheck suggests, the names and values a
//! trace's `#meta`, shrinking and `--range` use, and the swarm ranges
//! ([`ModelBounds`]).

use super::{ForModel, ToolModel, MODELS};
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Range, RangeInclusive};
use toml::Spanned;

/// One bound of a model: a row of its table ([`ToolModel::bound_table`]).
/// Its default is the model's [`ToolModel::DEFAULT_BOUNDS`], read with
/// `get`, so that it too is written once.
pub struct Bound<B: 'static> {
    /// The scenario key: `max_concurrent`.
    pub key: &'static str,
    /// The flag without its dashes: `max-concurrent`.
    pub flag: &'static str,
    /// The JSON key of a report's `bounds`: `skew_s`.
    pub json: &'static str,
    /// The name swarm ranges, `--range`, shrinking and a trace's `#meta`
    /// use, in the model's own unit (`skew_ticks`).
    pub name: &'static str,
    /// How the one-line form says it, `{}` standing for the value
    /// (`skew {} s`); a piece that starts with `(` follows the one before
    /// after a space rather than a comma (`late heartbeats 1 (by up to 10 s)`).
    pub words: &'static str,
    /// The flag's value name in `--help`: `N`, `SECONDS`.
    pub value_name: &'static str,
    /// What the bound is, for `--help`.
    pub help: &'static str,
    /// The values a flag or a scenario may give (in the flag's unit).
    pub range: RangeInclusive<u64>,
    /// How a swarm run chooses it, in units of `name`.
    pub swarm: Swarm,
    /// How many of the flag's unit make one of `name`'s: 5 where the flag
    /// says seconds and the model counts ticks of 5 s.
    pub unit: u64,
    /// `None` when the outputs always tell the bound (and a scenario must
    /// give it); else when they tell it. A bound beyond the contract's
    /// reading is told only where it differs from that reading, so that
    /// every output of the reading stays as it was, and a scenario may
    /// leave it out (it is then the default).
    pub told: Option<fn(&B) -> bool>,
    /// Reads the bound, in the flag's unit.
    pub get: fn(&B) -> u64,
    /// Sets the bound, in the flag's unit, to a value in `range`.
    pub set: fn(&mut B, u64),
}

/// How a swarm run chooses a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swarm {
    /// Drawn from `LOW..=HIGH` (in units of the row's `name`).
    Drawn(u32, u32),
    /// The model's value unless `--range` widens it (drawn only then, after
    /// the others, so that every run of the drawn ranges draws as it did).
    Kept,
    /// Never drawn: the model's value.
    Fixed,
}

impl<B> Bound<B> {
    /// A count (asks, crashes, stalls): a whole number `N` from 0 to 255,
    /// the same name in a scenario, JSON and swarm ranges, never drawn and
    /// always told. A row gives its words, help and whatever else differs.
    pub const fn count(
        key: &'static str,
        flag: &'static str,
        get: fn(&B) -> u64,
        set: fn(&mut B, u64),
    ) -> Self {
        Bound {
            key,
            flag,
            json: key,
            name: key,
            words: "",
            value_name: "N",
            help: "",
            range: 0..=255,
            swarm: Swarm::Fixed,
            unit: 1,
            told: None,
            get,
            set,
        }
    }

    /// A time: whole seconds on the command line, in scenarios, JSON
    /// (`json`, `skew_s`) and words; ticks of 5 s in `name` (`skew_ticks`).
    pub const fn seconds(
        key: &'static str,
        flag: &'static str,
        json: &'static str,
        name: &'static str,
        get: fn(&B) -> u64,
        set: fn(&mut B, u64),
    ) -> Self {
        Bound {
            json,
            name,
            value_name: "SECONDS",
            range: 0..=65535,
            unit: 5,
            ..Bound::count(key, flag, get, set)
        }
    }

    /// Whether the outputs tell this bound for these bounds.
    pub fn is_told(&self, bounds: &B) -> bool {
        self.told.is_none_or(|told| told(bounds))
    }

    /// This bound's value in units of its `name`.
    pub fn value(&self, bounds: &B) -> u32 {
        ((self.get)(bounds) / self.unit) as u32
    }

    /// Sets the bound from a value in units of its `name`; the error says
    /// the value is outside its range.
    fn set_in_units(&self, bounds: &mut B, value: u32) -> Result<(), String> {
        let flag_value = u64::from(value) * self.unit;
        if !self.range.contains(&flag_value) {
            return Err(format!(
                "{} {value} is out of range ({} to {})",
                self.name,
                self.range.start() / self.unit,
                self.range.end() / self.unit
            ));
        }
        (self.set)(bounds, flag_value);
        Ok(())
    }

    /// `expected a whole number from 0 to 255`.
    fn expected(&self) -> String {
        format!(
            "expected a whole number from {} to {}",
            self.range.start(),
            self.range.end()
        )
    }

    /// Whether a model's message about its bounds (`longest build must be
    /// ...`, `max_concurrent must ...`) is about this bound.
    fn named_in(&self, message: &str) -> bool {
        message.starts_with(self.key) || message.starts_with(&self.key.replace('_', " "))
    }
}

/// The forms of a model's bounds, made from its table: every model has them.
pub trait ModelBounds: ToolModel {
    /// The bounds and options as JSON (the `bounds` of a report).
    fn bounds_json(&self) -> Json {
        let b = self.bounds();
        let mut object = Map::new();
        object.insert("model".into(), Self::NAME.into());
        for row in told::<Self>(&b) {
            object.insert(row.json.into(), (row.get)(&b).into());
        }
        object.insert("options".into(), self.option_names().into());
        Json::Object(object)
    }

    /// The bounds in words: `requests 2, max_concurrent 1, ...`, then the
    /// options.
    fn bounds_line(&self) -> String {
        let b = self.bounds();
        let mut line = String::new();
        for row in told::<Self>(&b) {
            let piece = row.words.replace("{}", &(row.get)(&b).to_string());
            if !line.is_empty() {
                line.push_str(if piece.starts_with('(') { " " } else { ", " });
            }
            line.push_str(&piece);
        }
        for option in self.option_names() {
            line.push_str(&format!(", option {option}"));
        }
        line
    }

    /// The command-line flags that give these bounds and options
    /// (`--requests 2 --max-concurrent 1 ...`), for the commands slotcheck
    /// suggests.
    fn bounds_flags(&self) -> String {
        let b = self.bounds();
        let mut flags: Vec<String> = told::<Self>(&b)
            .map(|row| format!("--{} {}", row.flag, (row.get)(&b)))
            .collect();
        flags.extend(self.option_names().iter().map(|o| format!("--option {o}")));
        flags.join(" ")
    }

    /// Every bound told, by name, with this model's value (in the name's
    /// unit): what a trace's `#meta` records and shrinking lowers.
    fn bound_values(&self) -> Vec<(&'static str, u32)> {
        let b = self.bounds();
        told::<Self>(&b)
            .map(|row| (row.name, row.value(&b)))
            .collect()
    }

    /// The bounds a swarm run draws, by name, with their ranges.
    fn swarm_ranges(&self) -> Vec<(&'static str, RangeInclusive<u32>)> {
        Self::bound_table()
            .iter()
            .filter_map(|row| match row.swarm {
                Swarm::Drawn(low, high) => Some((row.name, low..=high)),
                _ => None,
            })
            .collect()
    }

    /// The bounds a swarm run keeps at this model's value unless `--range`
    /// widens them.
    fn swarm_kept(&self) -> Vec<(&'static str, RangeInclusive<u32>)> {
        let b = self.bounds();
        Self::bound_table()
            .iter()
            .filter(|row| row.swarm == Swarm::Kept)
            .map(|row| (row.name, row.value(&b)..=row.value(&b)))
            .collect()
    }

    /// The same model with the named bounds changed (each in its name's
    /// unit); an error when a value is out of its range or the model
    /// refuses the bounds.
    fn with_bounds(&self, values: &[(&str, u32)]) -> Result<Self, String> {
        let mut b = self.bounds();
        for &(name, value) in values {
            let row = Self::bound_table()
                .iter()
                .find(|row| row.name == name)
                .ok_or_else(|| format!("unknown {} bound `{name}`", Self::NAME))?;
            row.set_in_units(&mut b, value)?;
        }
        // The model's own check, so that a drawn or lowered bound is never
        // one the command line would refuse.
        Self::validate_bounds(&b)?;
        Ok(self.on_bounds(b))
    }
}

impl<M: ToolModel> ModelBounds for M {}

/// The rows of `M`'s table the outputs tell for these bounds.
fn told<M: ToolModel>(bounds: &M::Bounds) -> impl Iterator<Item = &'static Bound<M::Bounds>> + '_ {
    M::bound_table()
        .iter()
        .filter(move |row| row.is_told(bounds))
}

// ---------------------------------------------------------------- flags

/// Every model's bound flags, each once (`--crashes`, which both models
/// have, once), and `--option`: the values typed, by flag.
#[derive(Clone, Debug, Default)]
pub struct BoundFlags {
    given: BTreeMap<&'static str, u64>,
    /// The model options given (`--option split-read`), by name.
    pub options: Vec<String>,
}

/// A bound flag as `--help` shows it: what each model that has it says.
struct FlagRow {
    flag: &'static str,
    value_name: &'static str,
    /// `Stovepipe: ... (default 2)` for each model that has the flag.
    help: Vec<String>,
    range: RangeInclusive<u64>,
}

/// Every model's flags, in the models' order, each flag once.
fn flag_rows() -> Vec<FlagRow> {
    struct Rows;
    impl ForModel for Rows {
        type Out = Vec<(&'static str, &'static str, String, RangeInclusive<u64>)>;
        fn run<M: ToolModel>(self) -> Self::Out {
            M::bound_table()
                .iter()
                .map(|row| {
                    let default = (row.get)(&M::DEFAULT_BOUNDS);
                    let help = format!("{}: {} (default {default})", M::NAME, row.help);
                    (row.flag, row.value_name, help, row.range.clone())
                })
                .collect()
        }
    }
    let mut rows: Vec<FlagRow> = Vec::new();
    for model in MODELS {
        for (flag, value_name, help, range) in super::for_model(model, Rows).expect("a model") {
            match rows.iter_mut().find(|r| r.flag == flag) {
                Some(row) => {
                    row.help.push(help);
                    row.range =
                        *row.range.start().min(range.start())..=*row.range.end().max(range.end());
                }
                None => rows.push(FlagRow {
                    flag,
                    value_name,
                    help: vec![help],
                    range,
                }),
            }
        }
    }
    rows
}

impl BoundFlags {
    /// Whether `--FLAG` was given.
    pub fn has(&self, flag: &str) -> bool {
        self.given.contains_key(flag)
    }

    /// The bound flags given (`--asks`), in the flags' order.
    pub fn given(&self) -> Vec<String> {
        flag_rows()
            .iter()
            .filter(|row| self.has(row.flag))
            .map(|row| format!("--{}", row.flag))
            .collect()
    }

    /// The bound flags given that model `M` has not.
    pub fn not_of<M: ToolModel>(&self) -> Vec<String> {
        flag_rows()
            .iter()
            .filter(|row| self.has(row.flag))
            .filter(|row| !M::bound_table().iter().any(|r| r.flag == row.flag))
            .map(|row| format!("--{}", row.flag))
            .collect()
    }

    /// `M`'s bounds: its defaults, with the flags given; the error names a
    /// flag out of this model's range. The model's own check is left to
    /// the caller.
    pub fn bounds<M: ToolModel>(&self) -> Result<M::Bounds, String> {
        let mut b = M::DEFAULT_BOUNDS;
        for row in M::bound_table() {
            if let Some(&value) = self.given.get(row.flag) {
                if !row.range.contains(&value) {
                    return Err(format!("--{}: {}", row.flag, row.expected()));
                }
                (row.set)(&mut b, value);
            }
        }
        Ok(b)
    }
}

/// `Stovepipe: ...` of `stovepipe: ...`.
fn capitalised(text: &str) -> String {
    let mut text = text.to_string();
    if let Some(first) = text.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    text
}

impl Args for BoundFlags {
    fn augment_args(mut cmd: Command) -> Command {
        for row in flag_rows() {
            let (low, high) = (*row.range.start(), *row.range.end());
            cmd = cmd.arg(
                Arg::new(row.flag)
                    .long(row.flag)
                    .value_name(row.value_name)
                    .help(capitalised(&row.help.join("; ")))
                    .value_parser(whole(low, Some(high))),
            );
        }
        cmd.arg(
            Arg::new("option")
                .long("option")
                .value_name("NAME")
                .action(ArgAction::Append)
                .help(super::OPTIONS_HELP),
        )
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for BoundFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = BoundFlags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for row in flag_rows() {
            if let Some(&value) = matches.get_one::<u64>(row.flag) {
                self.given.insert(row.flag, value);
            }
        }
        if let Some(options) = matches.get_many::<String>("option") {
            self.options = options.cloned().collect();
        }
        Ok(())
    }
}

/// A flag's value parser for a whole number from `low` to `high` (no upper
/// end when `None`), whose error says so: clap's own says `invalid digit
/// found in string` of `x` and `-1 is not in 1..=32`.
pub fn whole<T>(low: T, high: Option<T>) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |text: &str| {
        let expected = match high {
            Some(high) => format!("expected a whole number from {low} to {high}"),
            None => format!("expected a whole number, {low} or more"),
        };
        match text.trim().parse::<T>() {
            Ok(n) if n >= low && high.is_none_or(|high| n <= high) => Ok(n),
            _ => Err(expected),
        }
    }
}

// ---------------------------------------------------------------- scenario files

/// A bound a scenario file gives wrong: where (the value's byte range, or
/// the key's for a key no bound has), the dotted key (`bounds.requests`)
/// and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundError {
    pub span: Range<usize>,
    pub field: String,
    pub message: String,
}

/// A scenario file's `[bounds]` table as read, every key and value spanned
/// so that an error points at it; [`scenario_bounds`] reads it by the
/// model's table.
pub type ScenarioBounds = BTreeMap<Spanned<String>, Spanned<Whole>>;

/// The bounds a scenario file's `[bounds]` gives model `M`: every bound the
/// outputs always tell is required (so that a scenario does not change when
/// a default does), the others default. Each error points at its bound: a
/// key no bound has, a value out of the bound's range, or one the model
/// refuses (at the bound its message names).
pub fn scenario_bounds<M: ToolModel>(
    raw: &Spanned<ScenarioBounds>,
) -> Result<M::Bounds, BoundError> {
    let table = M::bound_table();
    let given = raw.get_ref();
    for key in given.keys() {
        if !table.iter().any(|row| row.key == key.get_ref()) {
            let known: Vec<String> = table.iter().map(|row| format!("`{}`", row.key)).collect();
            return Err(BoundError {
                span: key.span(),
                field: format!("bounds.{}", key.get_ref()),
                message: format!(
                    "unknown field `{}`, expected one of {}",
                    key.get_ref(),
                    known.join(", ")
                ),
            });
        }
    }
    let value_of = |key: &str| {
        given
            .iter()
            .find(|(k, _)| k.get_ref() == key)
            .map(|(_, v)| v)
    };
    let mut b = M::DEFAULT_BOUNDS;
    for row in table {
        let Some(value) = value_of(row.key) else {
            if row.told.is_none() {
                return Err(BoundError {
                    span: raw.span(),
                    field: "bounds".into(),
                    message: format!("missing field `{}`", row.key),
                });
            }
            continue;
        };
        let Whole(n) = *value.get_ref();
        match u64::try_from(n) {
            Ok(n) if row.range.contains(&n) => (row.set)(&mut b, n),
            _ => {
                return Err(BoundError {
                    span: value.span(),
                    field: format!("bounds.{}", row.key),
                    message: format!(
                        "must be a whole number from {} to {}, not {n}",
                        row.range.start(),
                        row.range.end()
                    ),
                })
            }
        }
    }
    M::validate_bounds(&b).map(|()| b).map_err(|message| {
        // The message names the bound; point at it (the longest name that
        // fits, and only a bound the file gives).
        let at = table
            .iter()
            .filter(|row| row.named_in(&message))
            .max_by_key(|row| row.key.len())
            .and_then(|row| value_of(row.key).map(|v| (row.key, v.span())));
        let (field, span) = at.map_or(("bounds".to_string(), raw.span()), |(key, span)| {
            (format!("bounds.{key}"), span)
        });
        BoundError {
            span,
            field,
            message,
        }
    })
}

/// A whole number as a scenario writes it, of any size: a bound out of its
/// range is then told with its field, the range and the value
/// (`from 0 to 255, not 1000`) rather than as `expected u8`.
#[derive(Clone, Copy, Debug)]
pub struct Whole(pub i64);

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct WholeVisitor;
        impl Visitor<'_> for WholeVisitor {
            type Value = Whole;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a whole number")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Whole, E> {
                Ok(Whole(n))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Whole, E> {
                Ok(Whole(i64::try_from(n).unwrap_or(i64::MAX)))
            }
        }
        deserializer.deserialize_any(WholeVisitor)
    }
}

// ---------------------------------------------------------------- traces

/// The model a trace's `#meta` records: `model` on the bounds `#meta.bounds`
/// gives by name (a bound the outputs always tell is required, the others
/// keep `model`'s value), and its options: what every model's
/// [`ToolModel::from_meta`] reads.
pub fn meta_bounds_and_options<M: ToolModel>(
    model: &M,
    meta: &Map<String, Json>,
) -> Result<(M, Vec<String>), String> {
    let bounds = meta
        .get("bounds")
        .and_then(Json::as_object)
        .ok_or("`#meta` has no `bounds` object")?;
    let mut values = Vec::new();
    for row in M::bound_table() {
        let Some(value) = bounds.get(row.name) else {
            if row.told.is_none() {
                return Err(format!("`#meta.bounds` has no number `{}`", row.name));
            }
            continue;
        };
        let value = value
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("`#meta.bounds.{}` is not a small whole number", row.name))?;
        values.push((row.name, value));
    }
    let model = model.with_bounds(&values)?;
    let mut options = Vec::new();
    for name in meta
        .get("options")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let name = name.as_str().ok_or("`#meta.options` holds a non-string")?;
        options.push(name.to_string());
    }
    Ok((model, options))
}
