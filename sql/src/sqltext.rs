//! The statements the handlers run, as text, in one place: the handlers
//! execute exactly these, and `slotcheck-sql`'s listing (docs/real-database.md)
//! prints them per design, so the two cannot drift.

use crate::parts::{Admit, Parts, SlotField, StaleHead};
use crate::store::{self, TERMINAL};

/// The one consistent read: R's row, the queue row and the latest head, in
/// one statement.
pub const READ_JOINED: &str =
    "SELECT r.state, r.version, q.version, q.in_flight_count, q.in_flight_request_ids, \
(SELECT MAX(h.num) FROM requests h WHERE h.queue = q.id) \
FROM requests r JOIN queues q ON q.id = r.queue WHERE r.queue = ? AND r.num = ?";
pub const READ_REQUEST: &str = "SELECT state, version FROM requests WHERE queue = ? AND num = ?";
pub const READ_QUEUE: &str =
    "SELECT version, in_flight_count, in_flight_request_ids FROM queues WHERE id = ?";
pub const READ_HEAD: &str = "SELECT MAX(num) FROM requests WHERE queue = ?";

/// A CAS of the queue's slot field: wins when it affects one row.
pub fn cas_queue(column: &str) -> String {
    format!("UPDATE queues SET {column} = ?, version = version + 1 WHERE id = ? AND version = ?")
}

pub const CAS_REQUEST: &str =
    "UPDATE requests SET state = ?, version = version + 1 WHERE queue = ? AND num = ? AND version = ?";

/// Inside the admit transaction, once both rows were read at the versions
/// the worker's read saw: the writes need no guard of their own.
pub fn tx_write_queue(column: &str) -> String {
    format!("UPDATE queues SET {column} = ?, version = version + 1 WHERE id = ?")
}

pub const TX_WRITE_REQUEST: &str =
    "UPDATE requests SET state = 'processing', version = version + 1 WHERE queue = ? AND num = ?";

pub const ACK: &str = "DELETE FROM messages WHERE queue = ? AND num = ? AND kind = ? AND delivery = ? AND status = 'in_flight'";

/// The hold: parked if nothing the read saw has changed (R's version, the
/// queue's version, the latest head, and for the reaping gate no owner
/// terminal), else visible at once; only while this delivery holds it.
pub fn hold(reaped_owners: Option<&[i64]>) -> String {
    let reap = match reaped_owners {
        Some(owners) if !owners.is_empty() => format!(
            " AND NOT EXISTS (SELECT 1 FROM requests o WHERE o.queue = ? AND o.num IN ({}) AND o.state IN {TERMINAL})",
            store::owners_column(owners)
        ),
        // An empty set: the condition still takes its parameter.
        Some(_) => " AND ? IS NOT NULL".to_string(),
        None => String::new(),
    };
    format!(
        "UPDATE messages SET status = CASE WHEN \
(SELECT version FROM requests r WHERE r.queue = ? AND r.num = ?) = ? \
AND (SELECT version FROM queues q WHERE q.id = ?) = ? \
AND (SELECT MAX(h.num) FROM requests h WHERE h.queue = ?) = ?{reap} \
THEN 'parked' ELSE 'visible' END, delivery = NULL, deadline_ms = NULL \
WHERE queue = ? AND num = ? AND kind = ? AND delivery = ? AND status = 'in_flight'"
    )
}

/// The SQL of one design, step by step, as the handlers run it: for the
/// docs (generated, see docs/real-database.md).
pub fn listing(name: &str, parts: &Parts) -> String {
    let column = match parts.slot {
        SlotField::Count => "in_flight_count",
        SlotField::Owners => "in_flight_request_ids",
    };
    let claim_value = match parts.slot {
        SlotField::Count => "count + 1",
        SlotField::Owners => "set ∪ {R}",
    };
    let release_value = match parts.slot {
        SlotField::Count => "max(count − 1, 0)",
        SlotField::Owners => "set − {R}",
    };
    let cas_q = cas_queue(column);
    let mut out = format!("-- {name}: slot column {column}\n");
    let mut step = |title: &str, sql: &str| {
        out.push_str(&format!("\n-- {title}\n{sql};\n"));
    };
    step(
        "read (one statement: R's row, the queue row, the latest head)",
        READ_JOINED,
    );
    match parts.admit {
        Admit::ClaimFirst => {
            step(&format!("b. claim: {column} = {claim_value} (lost: read again)"), &cas_q);
            step("c. R -> processing (lost: unwind)", CAS_REQUEST);
            step(&format!("unwind: {column} = {release_value} (lost: re-read the queue, retry)"), &cas_q);
        }
        Admit::FailOpen => {
            step("b. R -> processing (lost: ack)", CAS_REQUEST);
            step(&format!("c. count up: {column} = {claim_value} (lost: re-read the queue, retry)"), &cas_q);
        }
        Admit::TwoCas | Admit::FencedClaim => {
            if parts.admit == Admit::FencedClaim {
                step(
                    "b. fenced claim: one transaction (R's version fences the claim)",
                    &format!(
                        "START TRANSACTION; -- SQLite: BEGIN IMMEDIATE\n{READ_QUEUE} FOR UPDATE;\n{READ_REQUEST} FOR UPDATE;\n-- both at the versions read, else ROLLBACK (lost: read again)\n{};\nCOMMIT",
                        tx_write_queue(column)
                    ),
                );
            } else {
                step(&format!("b. claim: {column} = {claim_value} (lost: read again)"), &cas_q);
            }
            step("c. R -> processing (lost: re-read R)", CAS_REQUEST);
            step(
                if parts.resume_submits {
                    "re-read R (terminal: unwind; processing: submit, ack)"
                } else {
                    "re-read R (terminal: unwind; processing: ack)"
                },
                READ_REQUEST,
            );
            step(&format!("unwind: {column} = {release_value} (lost: re-read the queue; R still in it: retry)"), &cas_q);
        }
        Admit::OneTransaction => step(
            "b+c. one transaction: claim and R -> processing (lost: read again)",
            &format!(
                "START TRANSACTION; -- SQLite: BEGIN IMMEDIATE\n{READ_QUEUE} FOR UPDATE;\n{READ_REQUEST} FOR UPDATE;\n-- both at the versions read, else ROLLBACK (lost: read again)\n{};\n{TX_WRITE_REQUEST};\nCOMMIT",
                tx_write_queue(column)
            ),
        ),
    }
    if parts.reaping_gate {
        step(
            "a. closed gate: reap the owners whose request is terminal, guarded by the queue's version",
            &format!(
                "START TRANSACTION;\n{READ_QUEUE} FOR UPDATE;\nSELECT num FROM requests WHERE queue = ? AND state IN {TERMINAL};\n{cas_q};\nCOMMIT"
            ),
        );
    }
    step(
        "a. closed gate: hold (parked unless a row read has changed)",
        &hold(None),
    );
    match parts.stale_head {
        StaleHead::Supersede => step("stale head: R -> superseded", CAS_REQUEST),
        StaleHead::ReleaseThenSupersede => {
            step(
                &format!("stale head holding a slot: release, {column} = {release_value}"),
                &cas_q,
            );
            step("then R -> superseded", CAS_REQUEST);
        }
        StaleHead::SupersedeThenRelease => {
            step("stale head holding a slot: R -> superseded", CAS_REQUEST);
            step(&format!("then release, {column} = {release_value}"), &cas_q);
        }
    }
    step("d. submit the build, idempotent by request ID", "-- SQLite: INSERT OR IGNORE\nINSERT IGNORE INTO builds (queue, num, state, running_at_start) VALUES (?, ?, 'running', 0)");
    step(
        &format!("signal / dlq: release, {column} = {release_value}"),
        &cas_q,
    );
    step(
        "then the outcome: R -> succeeded / dead_lettered",
        CAS_REQUEST,
    );
    if parts.dlq_cancels {
        step(
            "dlq, first: cancel R's build by request ID (a build never submitted is recorded finished)",
            "UPDATE builds SET state = 'finished' WHERE queue = ? AND num = ? AND state = 'running';\nINSERT IGNORE INTO builds (queue, num, state, running_at_start) VALUES (?, ?, 'finished', 0)",
        );
    }
    step("ack (only while this delivery holds the message)", ACK);
    step(
        "every winning write, in its transaction: wake the parked messages",
        store::WAKE,
    );
    out
}
