//! Designs composed from named parts: `owner-keyed+atomic-admit+dlq-cancels`
//! is a named design (the base) with repairs, each of which sets one part.
//! A composition with the parts of a named design is that design (the named
//! designs are aliases); one the model cannot run is an error naming the
//! conflict.

use super::design::{
    design_named, Admit, Design, Dlq, Gate, Resume, StaleHead, DESIGNS, OWNER_KEYED_ATOMIC_ADMIT,
    OWNER_KEYED_DLQ_CANCELS, OWNER_KEYED_FENCED_CLAIM, OWNER_KEYED_REAPING_GATE,
    OWNER_KEYED_RESUME_SUBMITS, OWNER_KEYED_SUPERSEDE_FIRST,
};
use std::collections::BTreeSet;
use std::sync::Mutex;

/// One repair: a part set to a choice, what it changes and what it costs in
/// a composition's words, and the named design that is owner-keyed with it.
#[derive(Clone, Copy, Debug)]
pub struct Repair {
    /// `atomic-admit`, as a composition names it.
    pub name: &'static str,
    /// The part it sets, as a conflict names it.
    pub part: &'static str,
    /// owner-keyed with this repair alone.
    pub alone: Design,
    /// What it changes, after `BASE, but`.
    pub change: &'static str,
    /// What it adds to the base's cost.
    pub cost: &'static str,
    apply: fn(&mut Design),
}

impl Repair {
    /// Whether `design` already has this repair's choice.
    fn has(&self, design: &Design) -> bool {
        crate::already_chosen(self.apply, design)
    }
}

/// Every repair, in the order a composition's name lists them.
pub static REPAIRS: [Repair; 6] = [
    Repair {
        name: "fenced-claim",
        part: "the admit (steps b and c)",
        alone: OWNER_KEYED_FENCED_CLAIM,
        change: "step b's claim is a transaction that commits only if R's row is as read",
        cost: "every claim a two-row transaction (the queue row locked for it)",
        apply: |d| d.admit = Admit::FencedClaim,
    },
    Repair {
        name: "atomic-admit",
        part: "the admit (steps b and c)",
        alone: OWNER_KEYED_ATOMIC_ADMIT,
        change: "steps b and c are one transaction on the queue row and R's row",
        cost: "every admit one two-row transaction (the queue row locked for the admit)",
        apply: |d| d.admit = Admit::OneTransaction,
    },
    Repair {
        name: "supersede-first",
        part: "the stale head",
        alone: OWNER_KEYED_SUPERSEDE_FIRST,
        change: "a stale head is superseded before its slot is released",
        cost: "none (the same two CASes in the other order)",
        apply: |d| d.stale_head = StaleHead::SupersedeThenRelease,
    },
    Repair {
        name: "reaping-gate",
        part: "the closed gate",
        alone: OWNER_KEYED_REAPING_GATE,
        change: "a closed gate first removes the owners whose request is terminal",
        cost: "on a closed gate one statement reading the owners' rows",
        apply: |d| d.gate = Gate::ReapThenHold,
    },
    Repair {
        name: "resume-submits",
        part: "the resume path",
        alone: OWNER_KEYED_RESUME_SUBMITS,
        change: "a lost processing write that finds R processing submits its build",
        cost: "none (a submit is idempotent)",
        apply: |d| d.resume = Resume::Submit,
    },
    Repair {
        name: "dlq-cancels",
        part: "the DLQ",
        alone: OWNER_KEYED_DLQ_CANCELS,
        change: "the DLQ cancels R's build by request ID before it releases",
        cost: "one build-system cancel per dead-lettered request",
        apply: |d| d.dlq = Dlq::CancelFirst,
    },
];

/// Names made at run time live as long as the program, once each.
fn interned(text: String) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().expect("no panic while interning");
    match names.get(text.as_str()) {
        Some(name) => name,
        None => {
            let name: &'static str = Box::leak(text.into_boxed_str());
            names.insert(name);
            name
        }
    }
}

/// How a composition is written, for errors and `--help`.
pub fn composition_help() -> String {
    let names: Vec<&str> = REPAIRS.iter().map(|r| r.name).collect();
    format!(
        "DESIGN+REPAIR+...: a named design with repairs, each of {}",
        names.join(", ")
    )
}

/// The design `text` names: a named design, or a named design followed by
/// `+REPAIR` parts. The error says which part is unknown or which two
/// cannot go together.
pub fn compose(text: &str) -> Result<Design, String> {
    let mut parts = text.split('+').map(str::trim);
    let base_name = parts.next().unwrap_or_default();
    let base = design_named(base_name).ok_or_else(|| {
        let names: Vec<&str> = DESIGNS.iter().map(|d| d.name).collect();
        format!(
            "unknown design `{base_name}` (known: {}; or {})",
            names.join(", "),
            composition_help()
        )
    })?;
    let mut design = base;
    // The base's own repairs count as chosen: a part is set once.
    let mut chosen: Vec<(&Repair, &str)> = REPAIRS
        .iter()
        .filter(|r| r.has(&base))
        .map(|r| (r, base_name))
        .collect();
    let mut applied: Vec<&Repair> = Vec::new();
    for name in parts {
        let repair = REPAIRS.iter().find(|r| r.name == name).ok_or_else(|| {
            format!(
                "unknown repair `{name}` in `{text}` ({})",
                composition_help()
            )
        })?;
        if let Some((earlier, by)) = chosen.iter().find(|(r, _)| r.part == repair.part) {
            return Err(if earlier.name == name && *by == base_name {
                format!("`{name}` changes nothing in `{text}`: {base_name} already has it")
            } else {
                format!(
                    "`{}` and `{name}` both set {} in `{text}`: choose one",
                    earlier.name, repair.part
                )
            });
        }
        if base.admit == Admit::ProcessingFirst && repair.part == REPAIRS[0].part {
            return Err(format!(
                "`{name}` replaces steps b and c, which fail-open reorders: start from claim-first or owner-keyed"
            ));
        }
        (repair.apply)(&mut design);
        chosen.push((repair, name));
        applied.push(repair);
    }
    if applied.is_empty() {
        return Ok(base);
    }
    if let Some(conflict) = design.conflict() {
        return Err(format!("`{text}` cannot be run: {conflict}"));
    }
    if let Some(named) = DESIGNS.iter().find(|d| d.same_parts(&design)) {
        return Ok(*named);
    }
    // The canonical name: the base, then the repairs in their table's order.
    let mut name = base_name.to_string();
    let mut changes = Vec::new();
    let mut costs = Vec::new();
    for r in REPAIRS
        .iter()
        .filter(|r| applied.iter().any(|a| a.name == r.name))
    {
        name.push('+');
        name.push_str(r.name);
        changes.push(r.change);
        costs.push(r.cost);
    }
    design.name = interned(name);
    design.summary = interned(format!("{base_name} with {}", changes.join("; ")));
    design.change = interned(format!("{base_name}, but {}.", changes.join("; ")));
    design.cost = interned(format!("as {base_name}, and {}", costs.join("; ")));
    Ok(design)
}
