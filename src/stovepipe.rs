//! The stovepipe model as the tool runs it: its default bounds, and the
//! bounds as JSON.

use serde_json::{json, Value};
use slotcheck_models::stovepipe::{Bounds, Options};

/// The bounds `compare` uses when given none: the richest on which all three
/// designs finish in about half a minute on a 2-core machine (measured; see
/// the README).
pub const DEFAULT_BOUNDS: Bounds = Bounds {
    requests: 2,
    max_concurrent: 1,
    crashes: 1,
    stalls: 1,
    max_deliveries: 2,
};

pub fn bounds_json(bounds: &Bounds, options: &Options) -> Value {
    json!({
        "model": "stovepipe",
        "requests": bounds.requests,
        "max_concurrent": bounds.max_concurrent,
        "crashes": bounds.crashes,
        "stalls": bounds.stalls,
        "max_deliveries": bounds.max_deliveries,
        "options": options.names(),
    })
}

/// `requests 2, max_concurrent 1, ...` for headings.
pub fn bounds_line(bounds: &Bounds, options: &Options) -> String {
    let mut line = format!(
        "requests {}, max_concurrent {}, crashes {}, stalls {}, max_deliveries {}",
        bounds.requests,
        bounds.max_concurrent,
        bounds.crashes,
        bounds.stalls,
        bounds.max_deliveries
    );
    for option in options.names() {
        line.push_str(&format!(", option {option}"));
    }
    line
}
