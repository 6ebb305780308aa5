//! Swarm runs: what a run draws before its first step (its bounds from
//! ranges, its weights over action kinds), and the ranges as `--range`
//! changes them.

use crate::models::ModelBounds;
use crate::models::ToolModel;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::ops::RangeInclusive;

/// The top of a swarm weight: each action kind gets `0..=MAX_WEIGHT`.
const MAX_WEIGHT: u32 = 8;

/// What run `run` draws before its first step: its model (swarm bounds) and
/// its weights over action kinds. Plain runs draw nothing.
pub fn plan<M: ToolModel>(
    base: &M,
    swarm: Option<&[(String, RangeInclusive<u32>)]>,
    rng: &mut ChaCha8Rng,
) -> Result<(M, Option<Vec<u32>>), String> {
    let Some(ranges) = swarm else {
        return Ok((base.clone(), None));
    };
    let drawn = base.swarm_ranges().len();
    let values: Vec<(&str, u32)> = ranges
        .iter()
        .enumerate()
        .map(|(i, (name, range))| {
            // A kept bound not widened draws nothing (see `swarm_kept`).
            let value = if i >= drawn && range.start() == range.end() {
                *range.start()
            } else {
                rng.random_range(range.clone())
            };
            (name.as_str(), value)
        })
        .collect();
    let model = base.with_bounds(&values)?;
    let weights = (0..base.action_kinds().len())
        .map(|_| rng.random_range(0..=MAX_WEIGHT))
        .collect();
    Ok((model, Some(weights)))
}

/// Parses `NAME=LO..=HI` (or `NAME=N`) against the model's swarm ranges and
/// returns them all, overrides applied.
pub fn swarm_ranges<M: ToolModel>(
    model: &M,
    overrides: &[String],
) -> Result<Vec<(String, RangeInclusive<u32>)>, String> {
    let mut ranges: Vec<(String, RangeInclusive<u32>)> = model
        .swarm_ranges()
        .into_iter()
        .chain(model.swarm_kept())
        .map(|(n, r)| (n.to_string(), r))
        .collect();
    for text in overrides {
        let bad = || format!("--range: `{text}` is not NAME=LOW..=HIGH or NAME=N");
        let (name, range) = text.split_once('=').ok_or_else(bad)?;
        let (low, high) = match range.split_once("..=") {
            Some((l, h)) => (l, h),
            None => (range, range),
        };
        let low: u32 = low.trim().parse().map_err(|_| bad())?;
        let high: u32 = high.trim().parse().map_err(|_| bad())?;
        if low > high {
            return Err(format!(
                "--range {text}: the range is empty ({low} is above {high}); write LOW..=HIGH with LOW <= HIGH"
            ));
        }
        let entry = ranges
            .iter_mut()
            .find(|(n, _)| n == name.trim())
            .ok_or_else(|| {
                let known: Vec<&str> = model
                    .swarm_ranges()
                    .iter()
                    .chain(&model.swarm_kept())
                    .map(|(n, _)| *n)
                    .collect();
                format!(
                    "--range: unknown bound `{name}` (known: {})",
                    known.join(", ")
                )
            })?;
        entry.1 = low..=high;
    }
    // A kept bound not given stays the model's own, out of the list (and of
    // the report's heading).
    let kept = model.swarm_kept();
    ranges.retain(|(name, range)| !kept.iter().any(|(n, r)| n == name && r == range));
    // Both ends must make a valid model.
    for ends in [
        ranges
            .iter()
            .map(|(n, r)| (n.as_str(), *r.start()))
            .collect::<Vec<_>>(),
        ranges.iter().map(|(n, r)| (n.as_str(), *r.end())).collect(),
    ] {
        model
            .with_bounds(&ends)
            .map_err(|e| format!("--range: {e}"))?;
    }
    Ok(ranges)
}
