//! The Promela model of the stovepipe contract (`spin/stovepipe.pml`),
//! written apart from slotcheck's, and slotcheck agree on every safety
//! property's verdict and every witness, design by design, on small bounds.
//! A disagreement is a finding about one of the two models, never a reason
//! to tune either. It needs `spin` and `gcc`: under CI (`CI` set) a missing
//! one fails the test, elsewhere the test says it skipped. Its own binary,
//! since it starts programs (Cargo.toml).

use slotcheck::check::{check, Limits, Verdict};
use slotcheck::commands::bench_spin::{missing, verdicts, DESIGNS, SAFETY, WITNESSES};
use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe};

#[test]
fn spin_and_slotcheck_agree_on_every_verdict() {
    if let Some(why) = missing() {
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("skipped: {why}");
        return;
    }
    // Two requests: owner-keyed violates four safety properties here, the
    // recommendation none, and every witness is reached in both.
    let bounds = Bounds {
        requests: 2,
        max_concurrent: 1,
        crashes: 1,
        stalls: 1,
        max_deliveries: 2,
    };
    let mut differ = Vec::new();
    for (design, _) in DESIGNS {
        let (spin, pan) = verdicts(design, bounds, true).expect("pan runs");
        let outcome = check(
            Stovepipe::new(design_named(design).unwrap(), bounds),
            &[],
            &Limits::default(),
        );
        // The same state graph, but for the steps by which pan's process
        // ends after `timeout`.
        assert!(
            pan.states >= outcome.stats.unique && pan.states - outcome.stats.unique < 200,
            "{design}: SPIN stored {}, slotcheck found {} unique",
            pan.states,
            outcome.stats.unique
        );
        for name in SAFETY.iter().chain(&WITNESSES) {
            let ours = outcome.result(name).expect("a property").verdict;
            let theirs = spin[name];
            let same = match ours {
                Verdict::Violated | Verdict::Reached => theirs,
                Verdict::Holds | Verdict::NotReached => !theirs,
                Verdict::Inconclusive => false,
            };
            if !same {
                differ.push(format!(
                    "{design} {name}: slotcheck {}, SPIN {}",
                    ours.word(),
                    if theirs {
                        "violated/reached"
                    } else {
                        "holds/not reached"
                    }
                ));
            }
        }
    }
    assert!(differ.is_empty(), "the two models disagree: {differ:#?}");
}
