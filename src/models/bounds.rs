//! Reading a model's bounds: from a flag (`whole`), from a scenario file
//! (`Whole`, `scenario_whole`, `BoundError`) and from a trace's `#meta`
//! (`meta_bounds_and_options`), the same for every model.

use super::ToolModel;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use std::fmt;
use std::ops::Range;
use toml::Spanned;

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

/// A bound a scenario file gives wrong: where (the value's byte range), the
/// dotted key (`bounds.requests`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundError {
    pub span: Range<usize>,
    pub field: String,
    pub message: String,
}

/// The bounds a trace's `#meta` records, applied to `model` by name, and its
/// options: what every model's [`ToolModel::from_meta`] reads.
pub fn meta_bounds_and_options<M: ToolModel>(
    model: &M,
    meta: &Map<String, Json>,
) -> Result<(M, Vec<String>), String> {
    let bounds = meta
        .get("bounds")
        .and_then(Json::as_object)
        .ok_or("`#meta` has no `bounds` object")?;
    let mut values = Vec::new();
    for (name, _) in model.bound_values() {
        let value = bounds
            .get(name)
            .and_then(Json::as_u64)
            .ok_or_else(|| format!("`#meta.bounds` has no number `{name}`"))?;
        values.push((
            name,
            u32::try_from(value).map_err(|_| format!("{name} too large"))?,
        ));
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

/// A whole number as a scenario writes it, of any size: a bound out of its
/// type's range is then told with its field, the range and the value
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

/// A scenario's bound as its type holds it, or an error at the value that
/// names the field, the range and the value.
pub fn scenario_whole<T>(value: &Spanned<Whole>, field: &str) -> Result<T, BoundError>
where
    T: TryFrom<i64> + Into<i64> + Bounded,
{
    let Whole(n) = *value.get_ref();
    T::try_from(n).map_err(|_| BoundError {
        span: value.span(),
        field: format!("bounds.{field}"),
        message: format!(
            "must be a whole number from 0 to {}, not {n}",
            T::MAX.into()
        ),
    })
}

/// The largest value of a bound's type.
pub trait Bounded {
    const MAX: Self;
}

impl Bounded for u8 {
    const MAX: u8 = u8::MAX;
}

impl Bounded for u16 {
    const MAX: u16 = u16::MAX;
}
