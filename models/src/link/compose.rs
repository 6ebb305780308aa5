//! Designs composed from named parts: `after-1649+hand-back+sync-ack` is a
//! named design (the base) with repairs, each of which sets one part. A
//! composition with the parts of a named design is that design
//! (`after-1649+hand-back` is `after-1649-hand-back`); one the model cannot
//! run is an error that says why.

use super::design::{
    all_designs, BusyBuffer, Design, Duplicate, DuplicateCheck, FinishAck, FinishKey, StartPut,
};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// One repair: a part set to a choice, and what it changes and costs in a
/// composition's words.
#[derive(Clone, Copy, Debug)]
pub struct Repair {
    /// `hand-back`, as a composition names it.
    pub name: &'static str,
    /// What it changes, after `BASE, but`.
    pub change: &'static str,
    /// What it adds to the base's cost.
    pub cost: &'static str,
    /// Whether it changes step 3's read of the running key, which a base
    /// without the duplicate check does not make.
    needs_check: bool,
    apply: fn(&mut Design),
}

impl Repair {
    /// Whether `design` already has this repair's choice.
    fn has(&self, design: &Design) -> bool {
        crate::already_chosen(self.apply, design)
    }
}

/// Every repair, in the order a composition's name lists them (that of the
/// named repairs, `design::REPAIRS`).
pub static REPAIR_PARTS: [Repair; 6] = [
    Repair {
        name: "server-clock",
        change: "step 3 judges freshness on server-stamped times",
        cost: "a probe put per read",
        needs_check: true,
        apply: |d| d.check = DuplicateCheck::ServerClock,
    },
    Repair {
        name: "revision-start",
        change: "step 4's put is revision-checked",
        cost: "none",
        needs_check: true,
        apply: |d| d.start = StartPut::RevisionChecked,
    },
    Repair {
        name: "hand-back",
        change: "a busy builder hands back what lands with a nak",
        cost: "a nak per answer landing on a busy builder",
        needs_check: false,
        apply: |d| d.busy_buffer = BusyBuffer::HandedBack,
    },
    Repair {
        name: "sync-ack",
        change: "step 5's ack is synchronous, retried until confirmed",
        cost: "a round trip per finish",
        needs_check: false,
        apply: |d| d.finish_ack = FinishAck::Sync,
    },
    Repair {
        name: "defer-duplicates",
        change: "a duplicate is left to its ack wait",
        cost: "a delivery per deferred duplicate",
        needs_check: true,
        apply: |d| d.duplicate = Duplicate::LeftToAckWait,
    },
    Repair {
        name: "done-key",
        change: "step 5 marks the key done instead of deleting it",
        cost: "none (the delete becomes a put)",
        needs_check: true,
        apply: |d| d.finish_key = FinishKey::MarkedDone,
    },
];

/// How a composition is written, for errors and `--help`.
pub fn composition_help() -> String {
    let names: Vec<&str> = REPAIR_PARTS.iter().map(|r| r.name).collect();
    format!(
        "DESIGN+REPAIR+...: a named design with repairs, each of {}",
        names.join(", ")
    )
}

/// Whether two designs make the same choice for every part.
fn same_parts(a: &Design, b: &Design) -> bool {
    let blank = |d: &Design| Design {
        name: "",
        summary: "",
        change: "",
        cost: "",
        ..*d
    };
    blank(a) == blank(b)
}

/// Composed designs, made once per name and kept for the program's life:
/// a model holds its design by reference.
static MADE: Mutex<BTreeMap<String, &'static Design>> = Mutex::new(BTreeMap::new());

/// The design `text` names: a named design, or a named design followed by
/// `+REPAIR` parts. The error says which part is unknown, repeats the base,
/// or needs a duplicate check the base does not make.
pub fn compose(text: &str) -> Result<&'static Design, String> {
    let mut parts = text.split('+').map(str::trim);
    let base_name = parts.next().unwrap_or_default();
    let base = all_designs().find(|d| d.name == base_name).ok_or_else(|| {
        let names: Vec<&str> = all_designs().map(|d| d.name).collect();
        format!(
            "unknown design `{base_name}` (known: {}; or {})",
            names.join(", "),
            composition_help()
        )
    })?;
    let mut design = *base;
    let mut applied: Vec<&str> = Vec::new();
    for name in parts {
        let repair = REPAIR_PARTS
            .iter()
            .find(|r| r.name == name)
            .ok_or_else(|| {
                format!(
                    "unknown repair `{name}` in `{text}` ({})",
                    composition_help()
                )
            })?;
        if repair.has(&design) {
            return Err(format!(
                "`{name}` changes nothing in `{text}`: it is there already"
            ));
        }
        if repair.needs_check && !base.check.reads_key() {
            return Err(format!(
                "`{name}` changes step 3's duplicate check, which {base_name} does not make: start from after-1649 or check-only"
            ));
        }
        (repair.apply)(&mut design);
        applied.push(repair.name);
    }
    if applied.is_empty() {
        return Ok(base);
    }
    if let Some(named) = all_designs().find(|d| same_parts(d, &design)) {
        return Ok(named);
    }
    // The canonical name: the base, then the repairs in their table's order.
    let repairs: Vec<&Repair> = REPAIR_PARTS
        .iter()
        .filter(|r| applied.contains(&r.name))
        .collect();
    let changes: Vec<&str> = repairs.iter().map(|r| r.change).collect();
    let costs: Vec<&str> = repairs.iter().map(|r| r.cost).collect();
    let mut name = base_name.to_string();
    for r in &repairs {
        name.push('+');
        name.push_str(r.name);
    }
    let mut made = MADE.lock().expect("no panic while composing");
    if let Some(design) = made.get(&name) {
        return Ok(design);
    }
    let leak = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
    design.summary = leak(format!("{base_name} with {}", changes.join("; ")));
    design.change = leak(format!("{base_name}, but {}.", changes.join("; ")));
    design.cost = leak(format!("as {base_name}, and {}", costs.join("; ")));
    design.name = leak(name.clone());
    let design: &'static Design = Box::leak(Box::new(design));
    made.insert(name, design);
    Ok(design)
}
