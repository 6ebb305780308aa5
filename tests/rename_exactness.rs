//! Renaming requests is exact (`docs/checking.md`, *Requests renamed*):
//! the model that stores one form for the namings of the requests below the
//! latest head (`rename_requests`, the default) gives, on a grid of small
//! bounds, for every design and option, every property's verdict (progress
//! included) and the length of every shortest counterexample, witness and
//! lasso that the model storing every naming gives; every path it finds
//! replays as the whole model's own steps to a state that shows what it
//! was found for; it stores fewer states wherever a request can fall
//! below the head beside another; and it lists the same mutants.

use crate::common::{bounds, stovepipe_with};
use crate::split_read_exactness::{lengths, replays};
use slotcheck::check::{check, Limits};
use slotcheck_models::stovepipe::{mutation, Bounds, Design, Stovepipe, DESIGNS};

/// The grid: three requests under each fault alone, two slots, the
/// options, and the split read (its reduction chooses a reader in the
/// stored form); four requests without faults. `SLOTCHECK_EXACTNESS=full`
/// adds three requests under a crash and a stall, and four under a crash.
fn grid() -> Vec<(Bounds, &'static [&'static str])> {
    let mut grid: Vec<(Bounds, &'static [&'static str])> = vec![
        (bounds(3, 1, 1, 0, 2), &[]),
        (bounds(3, 1, 0, 1, 1), &[]),
        (bounds(3, 2, 0, 1, 1), &[]),
        (bounds(3, 1, 1, 0, 1), &["aborts"]),
        (bounds(3, 1, 0, 1, 1), &["delayed-hold"]),
        (bounds(3, 1, 1, 0, 1), &["split-read"]),
        (bounds(4, 1, 0, 0, 1), &[]),
        (bounds(4, 2, 0, 0, 1), &[]),
    ];
    if full() {
        grid.push((bounds(3, 1, 1, 1, 2), &[]));
        grid.push((bounds(3, 1, 0, 1, 1), &["split-read"]));
        grid.push((bounds(4, 1, 1, 0, 1), &[]));
    }
    grid
}

fn full() -> bool {
    std::env::var("SLOTCHECK_EXACTNESS").is_ok_and(|v| v == "full")
}

/// The model on `bounds` with `options`, renaming, and the same storing
/// every naming.
fn models(design: Design, bounds: Bounds, options: &[&str]) -> (Stovepipe, Stovepipe) {
    let renamed = stovepipe_with(design, bounds, options);
    assert!(renamed.rename_requests, "on by default");
    let whole = Stovepipe {
        rename_requests: false,
        ..renamed
    };
    (renamed, whole)
}

#[test]
fn renamed_requests_give_every_verdict_and_shortest_length_of_every_naming() {
    let (mut settings, mut fewer) = (0, 0);
    for (setting, (bounds, options)) in grid().into_iter().enumerate() {
        for (i, design) in DESIGNS.iter().enumerate() {
            // Every third pair (shifted from setting to setting, so that
            // the designs take turns) within CI's time; the nightly, all.
            if !full() && !(setting + i).is_multiple_of(3) {
                continue;
            }
            let (renamed, whole) = models(*design, bounds, options);
            let label = format!("{} on {bounds:?} {options:?}", design.name);
            let outcome = check(renamed, &[], &Limits::default());
            let whole_outcome = check(whole, &[], &Limits::default());
            assert_eq!(lengths(&outcome), lengths(&whole_outcome), "{label}");
            let mut plain = whole;
            plain.reduce_split_reads = false;
            replays(&plain, &outcome, &label);
            fewer += usize::from(outcome.stats.unique < whole_outcome.stats.unique);
            settings += 1;
        }
    }
    assert!(
        settings * 3 >= grid().len() * DESIGNS.len() - 2,
        "{settings}"
    );
    assert_eq!(fewer, settings, "{fewer} of {settings} smaller");
}

/// A mutant stores every naming (its steps may move a row back); its
/// design lists the same mutants renamed or not (the sites are found on
/// stored forms).
#[test]
fn a_mutant_is_not_renamed_and_its_design_lists_the_same_mutants() {
    for design in DESIGNS.iter() {
        let (renamed, whole) = models(*design, bounds(3, 1, 1, 0, 1), &[]);
        let listed = mutation::mutations(&renamed);
        assert_eq!(listed, mutation::mutations(&whole), "{}", design.name);
        let m = listed[0];
        assert!(!renamed.mutant(m).renames(), "{}", m.name(design.name));
    }
    let (renamed, whole) = models(DESIGNS[0], bounds(3, 1, 1, 0, 1), &[]);
    let m = mutation::mutations(&renamed)[0];
    let (a, b) = (
        check(renamed.mutant(m), &[], &Limits::default()),
        check(whole.mutant(m), &[], &Limits::default()),
    );
    assert_eq!(a.stats.unique, b.stats.unique);
    assert_eq!(lengths(&a), lengths(&b));
}
