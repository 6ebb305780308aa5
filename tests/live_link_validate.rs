//! Every live run of the link builders on a real nats-server (seeded
//! faults: crashes, late heartbeats, lost acks) writes a log of what the
//! server returned to each builder, and `slotcheck live` validates it with
//! the link search of `slotcheck validate`: here, every design's runs on a
//! few seeds must conform (with a violation where the server's evidence
//! shows one), and the log written must validate the same way on its own.

#![cfg(feature = "real")]

mod common;

use common::{code, scratch, stdout};

/// Seeds per design: each run takes a few seconds of real time.
const SEEDS: [&str; 2] = ["3", "4"];

#[test]
#[cfg_attr(no_nats_server, ignore = "nats-server is not installed")]
fn every_live_run_of_every_design_validates() {
    let runs: Vec<(&str, &str)> = ["before-1649", "after-1649", "check-only", "margin-only"]
        .into_iter()
        .flat_map(|design| SEEDS.map(|seed| (design, seed)))
        .collect();
    // Four at a time: a live run waits on real ticks, not on the CPU.
    let results = common::par_map_on(4, &runs, |&(design, seed)| {
        let dir = scratch("live_link_validate", &format!("{design}-{seed}"));
        let log = dir.join("log.ndjson");
        let out = live_nats(
            std::time::Duration::from_secs(120),
            design,
            &[
                "--seed",
                seed,
                "--crash-percent",
                "10",
                "--stall-percent",
                "10",
                "--timeout",
                "20",
                "--log",
                log.to_str().unwrap(),
            ],
        );
        let text = stdout(&out);
        let server_violated = text.contains("=> a property is violated");
        let expected = if server_violated {
            "validated against {d}: conforms, with a violation"
        } else {
            "validated against {d}: conforms\n"
        }
        .replace("{d}", design);
        if !text.contains(&expected) {
            return Err(format!(
                "{design} seed {seed}: expected `{expected}`, exit {}:\n{text}\nstderr: {}",
                code(&out),
                common::stderr(&out)
            ));
        }
        // The log on its own: the same verdict from `validate`.
        let again = common::slotcheck(&["validate", log.to_str().unwrap(), "--design", design]);
        let want = if server_violated { 1 } else { 0 };
        if code(&again) != want {
            return Err(format!(
                "{design} seed {seed}: validate {} exits {}, not {want}:\n{}",
                log.display(),
                code(&again),
                stdout(&again)
            ));
        }
        Ok(server_violated)
    });
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    let violations = results.iter().filter(|r| matches!(r, Ok(true))).count();
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    println!("{violations} run(s) broke a property, and their logs conform with it");
}

/// Clocks off by up to 15 s: the log's header says `skew_s`, and the log
/// still conforms (each judging builder's offset tried within it, and a
/// builder's age of its own key compared within the skew).
#[test]
#[cfg_attr(no_nats_server, ignore = "nats-server is not installed")]
fn a_live_run_with_skewed_clocks_validates() {
    let out = live_nats(
        std::time::Duration::from_secs(120),
        "after-1649",
        &["--seed", "2", "--skew", "15", "--timeout", "20"],
    );
    let text = stdout(&out);
    let violated = text.contains("=> a property is violated");
    let expected = if violated {
        "validated against after-1649: conforms, with a violation"
    } else {
        "validated against after-1649: conforms\n"
    };
    assert!(text.contains(expected), "{text}");
}

/// `slotcheck live --model link --on nats --design DESIGN` and `rest`,
/// within `limit`.
fn live_nats(limit: std::time::Duration, design: &str, rest: &[&str]) -> std::process::Output {
    let args = [
        &[
            "live", "--model", "link", "--on", "nats", "--design", design,
        ][..],
        rest,
    ]
    .concat();
    common::run_within(limit, &args, "a live run stops by itself")
}
