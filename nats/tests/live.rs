//! Live runs on a real nats-server: builders running freely, seeded
//! faults, bounded in time, properties judged from the server's evidence.

use slotcheck_nats::design::Design;
use slotcheck_nats::live::{live, LiveOptions, LiveOutcome};
use slotcheck_nats::server::Server;
use std::time::Duration;

/// Seeds from 1 until the first violation, at most `runs`.
fn until_violation(options: LiveOptions, runs: u64) -> Vec<LiveOutcome> {
    let server = Server::start().expect("a private nats-server");
    let address = format!("127.0.0.1:{}", server.port()).parse().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut outcomes = Vec::new();
    for seed in 1..=runs {
        let outcome = runtime
            .block_on(live(
                address,
                &LiveOptions {
                    seed,
                    ..options.clone()
                },
            ))
            .unwrap();
        println!("{}", outcome.text());
        slotcheck_models::events::parse("live", &outcome.log).unwrap();
        let violated = outcome.violated();
        outcomes.push(outcome);
        if violated {
            break;
        }
    }
    outcomes
}

fn quiet(design: Design) -> LiveOptions {
    LiveOptions {
        crash_rate: 0.0,
        late_rate: 0.0,
        lost_ack_rate: 0.0,
        limit: Duration::from_secs(10),
        ..LiveOptions::new(design, 1)
    }
}

/// before-1649 with one builder's link 25 ms slow each way (a round trip
/// longer than its 30 ms fetch): its late answers wait in its buffer while
/// it builds, and another builder runs them too.
#[test]
#[cfg_attr(no_nats_server, ignore = "nats-server is not installed")]
fn before_1649_builds_twice_live_when_a_link_is_slow() {
    let outcomes = until_violation(
        LiveOptions {
            delay: Some(Duration::from_millis(25)),
            ..quiet(Design::BEFORE_1649)
        },
        4,
    );
    let last = outcomes.last().unwrap();
    assert!(last.violated(), "no violation in {} runs", outcomes.len());
    assert!(last.log.contains("\"late_answer\""));
}

/// after-1649 with no fault and no delay: every ask built once.
#[test]
#[cfg_attr(no_nats_server, ignore = "nats-server is not installed")]
fn after_1649_holds_live_with_no_fault() {
    let outcomes = until_violation(quiet(Design::AFTER_1649), 1);
    let only = &outcomes[0];
    assert!(!only.violated());
    assert!(only.finished, "every ask got a result");
    assert_eq!(only.builds.len(), 6);
    assert!(!only.log.contains("\"late_answer\""));
}
