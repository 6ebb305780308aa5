//! The tables and everything around the handlers: the client that inserts a
//! request, the at-least-once message table the broker runs on (visible, in
//! flight, parked, dead; attempts; a visibility deadline), and the build
//! system's table (submit idempotent by request ID, cancel, finish). Each
//! function is one statement or one transaction, so that it is one step of
//! the model.

use crate::engine::{Conn, DbResult, Val};
use crate::parts::SlotField;
use std::sync::Mutex;

/// The schema, the same text on both engines.
pub const SCHEMA: [&str; 4] = [
    "CREATE TABLE queues (
    id BIGINT PRIMARY KEY,
    version BIGINT NOT NULL,
    in_flight_count BIGINT NOT NULL,
    in_flight_request_ids VARCHAR(255) NOT NULL
)",
    "CREATE TABLE requests (
    queue BIGINT NOT NULL,
    num BIGINT NOT NULL,
    state VARCHAR(16) NOT NULL,
    version BIGINT NOT NULL,
    PRIMARY KEY (queue, num)
)",
    "CREATE TABLE builds (
    queue BIGINT NOT NULL,
    num BIGINT NOT NULL,
    state VARCHAR(16) NOT NULL,
    running_at_start BIGINT NOT NULL,
    PRIMARY KEY (queue, num)
)",
    "CREATE TABLE messages (
    queue BIGINT NOT NULL,
    num BIGINT NOT NULL,
    kind VARCHAR(16) NOT NULL,
    status VARCHAR(16) NOT NULL,
    attempts BIGINT NOT NULL,
    delivery BIGINT,
    deadline_ms BIGINT,
    PRIMARY KEY (queue, num, kind)
)",
];

/// A message kind as the `kind` column holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Process,
    Signal,
    DeadProcess,
    DeadSignal,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::Process,
        Kind::Signal,
        Kind::DeadProcess,
        Kind::DeadSignal,
    ];

    pub fn column(self) -> &'static str {
        match self {
            Kind::Process => "process",
            Kind::Signal => "signal",
            Kind::DeadProcess => "dead-process",
            Kind::DeadSignal => "dead-signal",
        }
    }

    pub fn from_column(text: &str) -> Kind {
        Kind::ALL
            .into_iter()
            .find(|k| k.column() == text)
            .unwrap_or_else(|| panic!("messages.kind `{text}`"))
    }

    pub fn is_dead(self) -> bool {
        matches!(self, Kind::DeadProcess | Kind::DeadSignal)
    }

    /// The event log's name: `process`, `signal`, `dead`.
    pub fn event_name(self) -> &'static str {
        match self {
            Kind::Process => "process",
            Kind::Signal => "signal",
            _ => "dead",
        }
    }

    /// `process(R1)`, as the model's rows name it.
    pub fn render(self, num: i64) -> String {
        let name = match self {
            Kind::Process => "process",
            Kind::Signal => "signal",
            _ => "dead",
        };
        format!("{name}(R{num})")
    }
}

pub const TERMINAL: &str = "('succeeded', 'superseded', 'dead_lettered')";

/// Creates the tables.
pub fn create_schema(conn: &mut Conn) -> DbResult<()> {
    for statement in SCHEMA {
        conn.exec(statement, &[])?;
    }
    Ok(())
}

/// A queue's row, at version 1 with no slot taken.
pub fn add_queue(conn: &mut Conn, queue: i64) -> DbResult<()> {
    conn.exec(
        "INSERT INTO queues (id, version, in_flight_count, in_flight_request_ids) VALUES (?, 1, 0, '')",
        &[queue.into()],
    )
    .map(|_| ())
}

/// A durable write wakes every parked message of the queue (the model's
/// broker: a hold waits for the next write, not for a timer).
pub const WAKE: &str =
    "UPDATE messages SET status = 'visible' WHERE queue = ? AND status = 'parked'";

/// Locks the queue row (MariaDB; SQLite has one writer at a time anyway):
/// a hold and every wake of the queue take it first, so that no wake can
/// pass a hold that is about to park. At READ COMMITTED, InnoDB's wake
/// (an `UPDATE`) skips a row another transaction holds locked whose
/// committed values do not match (a semi-consistent read): without this
/// lock a hold that read the rows before a write, and parks after it, is
/// never woken (a live run found that wedge).
pub fn lock_queue(conn: &mut Conn, queue: i64) -> DbResult<()> {
    let lock = conn.dialect().for_update();
    if !lock.is_empty() {
        conn.query(
            &format!("SELECT id FROM queues WHERE id = ?{lock}"),
            &[queue.into()],
        )?;
    }
    Ok(())
}

pub fn wake(conn: &mut Conn, queue: i64) -> DbResult<()> {
    lock_queue(conn, queue)?;
    conn.exec(WAKE, &[queue.into()]).map(|_| ())
}

/// The client: R's row inserted `accepted` and `process(R)` published, in
/// one transaction.
pub fn arrive(conn: &mut Conn, queue: i64, num: i64) -> DbResult<()> {
    conn.transaction(|c| {
        c.exec(
            "INSERT INTO requests (queue, num, state, version) VALUES (?, ?, 'accepted', 1)",
            &[queue.into(), num.into()],
        )?;
        publish(c, queue, num, Kind::Process)?;
        wake(c, queue)
    })
}

fn publish(conn: &mut Conn, queue: i64, num: i64, kind: Kind) -> DbResult<()> {
    conn.exec(
        "INSERT INTO messages (queue, num, kind, status, attempts) VALUES (?, ?, ?, 'visible', 0)",
        &[queue.into(), num.into(), kind.column().into()],
    )
    .map(|_| ())
}

/// The broker hands a visible message to delivery `token`; returns its
/// attempts so far when it did (rows affected 1).
pub fn deliver(
    conn: &mut Conn,
    queue: i64,
    num: i64,
    kind: Kind,
    token: i64,
    deadline_ms: i64,
) -> DbResult<Option<i64>> {
    conn.transaction(|c| {
        let won = c.exec(
            "UPDATE messages SET status = 'in_flight', delivery = ?, deadline_ms = ? \
             WHERE queue = ? AND num = ? AND kind = ? AND status = 'visible'",
            &[
                token.into(),
                deadline_ms.into(),
                queue.into(),
                num.into(),
                kind.column().into(),
            ],
        )?;
        if won != 1 {
            return Ok(None);
        }
        let row = c.query_one(
            "SELECT attempts FROM messages WHERE queue = ? AND num = ? AND kind = ?",
            &[queue.into(), num.into(), kind.column().into()],
        )?;
        Ok(row.map(|r| r[0].int()))
    })
}

/// The broker's visibility deadline passed for delivery `token` of a
/// message: visible again with one attempt more, or out of deliveries and
/// replaced by `dead(R)` (dead messages are retried for ever, counting
/// none). One transaction; nothing when the token no longer holds it.
pub fn expire(
    conn: &mut Conn,
    queue: i64,
    num: i64,
    kind: Kind,
    token: i64,
    max_deliveries: i64,
) -> DbResult<bool> {
    conn.transaction(|c| {
        let key = [queue.into(), num.into(), kind.column().into()];
        let row = c.query_one(
            "SELECT attempts, delivery FROM messages WHERE queue = ? AND num = ? AND kind = ? AND status = 'in_flight'",
            &key,
        )?;
        let Some(row) = row else { return Ok(false) };
        if row[1] != Val::Int(token) {
            return Ok(false);
        }
        let attempts = row[0].int() + 1;
        if kind.is_dead() {
            c.exec(
                "UPDATE messages SET status = 'visible', delivery = NULL, deadline_ms = NULL WHERE queue = ? AND num = ? AND kind = ?",
                &key,
            )?;
        } else if attempts < max_deliveries {
            c.exec(
                "UPDATE messages SET status = 'visible', attempts = ?, delivery = NULL, deadline_ms = NULL WHERE queue = ? AND num = ? AND kind = ?",
                &[attempts.into(), key[0].clone(), key[1].clone(), key[2].clone()],
            )?;
        } else {
            c.exec(
                "DELETE FROM messages WHERE queue = ? AND num = ? AND kind = ?",
                &key,
            )?;
            let dead = if kind == Kind::Process {
                Kind::DeadProcess
            } else {
                Kind::DeadSignal
            };
            publish(c, queue, num, dead)?;
        }
        Ok(true)
    })
}

/// The messages whose deadline has passed: `(queue, num, kind, token)`.
pub fn overdue(conn: &mut Conn, now_ms: i64) -> DbResult<Vec<(i64, i64, Kind, i64)>> {
    Ok(conn
        .query(
            "SELECT queue, num, kind, delivery FROM messages WHERE status = 'in_flight' AND deadline_ms < ?",
            &[now_ms.into()],
        )?
        .into_iter()
        .map(|r| (r[0].int(), r[1].int(), Kind::from_column(&r[2].text()), r[3].int()))
        .collect())
}

/// The build system: one lock around its calls, so that the number of
/// builds running at each start is exact (it is the system under the
/// queue, not part of the design).
#[derive(Default)]
pub struct BuildSystem {
    lock: Mutex<()>,
}

impl BuildSystem {
    /// Submit R's build, idempotent by request ID: returns whether a build
    /// started (rows affected 1), and records how many of the queue's
    /// builds were running once it did.
    pub fn submit(&self, conn: &mut Conn, queue: i64, num: i64) -> DbResult<bool> {
        let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let insert = format!(
            "{} INTO builds (queue, num, state, running_at_start) VALUES (?, ?, 'running', 0)",
            conn.dialect().insert_ignore()
        );
        conn.transaction(|c| {
            let started = c.exec(&insert, &[queue.into(), num.into()])? == 1;
            if started {
                c.exec(
                    "UPDATE builds SET running_at_start = (SELECT n FROM (SELECT COUNT(*) AS n FROM builds WHERE queue = ? AND state = 'running') AS running) WHERE queue = ? AND num = ?",
                    &[queue.into(), queue.into(), num.into()],
                )?;
                wake(c, queue)?;
            }
            Ok(started)
        })
    }

    /// A running build finishes and `signal(R)` is published; false when R
    /// has no running build.
    pub fn finish(&self, conn: &mut Conn, queue: i64, num: i64) -> DbResult<bool> {
        let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        conn.transaction(|c| {
            let finished = c.exec(
                "UPDATE builds SET state = 'finished' WHERE queue = ? AND num = ? AND state = 'running'",
                &[queue.into(), num.into()],
            )? == 1;
            if finished {
                publish(c, queue, num, Kind::Signal)?;
                wake(c, queue)?;
            }
            Ok(finished)
        })
    }

    /// Cancel R's build by request ID and wait for it to stop: a running
    /// build stops without a signal; one never submitted is recorded as
    /// finished, so that a later submit starts nothing. Returns whether a
    /// running build was stopped.
    pub fn cancel(&self, conn: &mut Conn, queue: i64, num: i64) -> DbResult<bool> {
        let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let insert = format!(
            "{} INTO builds (queue, num, state, running_at_start) VALUES (?, ?, 'finished', 0)",
            conn.dialect().insert_ignore()
        );
        conn.transaction(|c| {
            let stopped = c.exec(
                "UPDATE builds SET state = 'finished' WHERE queue = ? AND num = ? AND state = 'running'",
                &[queue.into(), num.into()],
            )? == 1;
            let recorded = !stopped && c.exec(&insert, &[queue.into(), num.into()])? == 1;
            if stopped || recorded {
                wake(c, queue)?;
            }
            Ok(stopped)
        })
    }

    /// The queue's running builds.
    pub fn running(&self, conn: &mut Conn, queue: i64) -> DbResult<Vec<i64>> {
        Ok(conn
            .query(
                "SELECT num FROM builds WHERE queue = ? AND state = 'running' ORDER BY num",
                &[queue.into()],
            )?
            .into_iter()
            .map(|r| r[0].int())
            .collect())
    }
}

/// `in_flight_request_ids` as the column holds it: `1,3` (request numbers,
/// ascending).
pub fn owners_column(owners: &[i64]) -> String {
    let mut sorted = owners.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

pub fn parse_owners(text: &str) -> Vec<i64> {
    text.split(',')
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse()
                .unwrap_or_else(|_| panic!("in_flight_request_ids `{text}`"))
        })
        .collect()
}

/// The queue's rows as the model renders its own (`queue`, `R1`,
/// `build R1`, `process(R1)`), with versions, for a row-by-row comparison.
pub fn rows(
    conn: &mut Conn,
    queue: i64,
    slot: SlotField,
    max_deliveries: i64,
) -> DbResult<Vec<(String, String)>> {
    let mut rows = Vec::new();
    let q = conn
        .query_one(
            "SELECT version, in_flight_count, in_flight_request_ids FROM queues WHERE id = ?",
            &[queue.into()],
        )?
        .expect("the queue row exists");
    let field = match slot {
        SlotField::Count => format!("in_flight_count {}", q[1].int()),
        SlotField::Owners => {
            let names: Vec<String> = parse_owners(&q[2].text())
                .iter()
                .map(|n| format!("R{n}"))
                .collect();
            format!("in_flight_request_ids {{{}}}", names.join(", "))
        }
    };
    rows.push(("queue".to_string(), format!("{field} (v{})", q[0].int())));
    for r in conn.query(
        "SELECT num, state, version FROM requests WHERE queue = ? ORDER BY num",
        &[queue.into()],
    )? {
        rows.push((
            format!("R{}", r[0].int()),
            format!("{} (v{})", r[1].text(), r[2].int()),
        ));
    }
    for b in conn.query(
        "SELECT num, state FROM builds WHERE queue = ? ORDER BY num",
        &[queue.into()],
    )? {
        rows.push((format!("build R{}", b[0].int()), b[1].text()));
    }
    let mut messages: Vec<(i64, usize, String, String)> = Vec::new();
    for m in conn.query(
        "SELECT num, kind, status, attempts FROM messages WHERE queue = ?",
        &[queue.into()],
    )? {
        let kind = Kind::from_column(&m[1].text());
        let status = match m[2].text().as_str() {
            "in_flight" => "in flight".to_string(),
            other => other.to_string(),
        };
        let value = if kind.is_dead() {
            status
        } else {
            format!("{status}, {}/{max_deliveries} attempts", m[3].int())
        };
        let order = Kind::ALL.iter().position(|k| *k == kind).unwrap();
        messages.push((m[0].int(), order, kind.render(m[0].int()), value));
    }
    messages.sort();
    rows.extend(
        messages
            .into_iter()
            .map(|(_, _, name, value)| (name, value)),
    );
    Ok(rows)
}
