//! The handlers `process`, `signal` and `dlq` as SQL, one statement (or one
//! transaction, where a design makes the step one) per step of the
//! contract. A worker decides only by what its statements returned: the
//! rows it read, and whether a CAS affected one row. Each step logs those
//! returns as a line of the event log (`slotcheck validate`'s format).

use crate::engine::{Conn, DbError, DbResult, Val};
use crate::parts::{Admit, Parts, SlotField, StaleHead};
use crate::sqltext;
use crate::store::{self, BuildSystem, Kind, TERMINAL};
use serde_json::{json, Value as Json};

/// How a worker reads R's row, the queue row and the latest head.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadMode {
    /// One statement (a join): one consistent snapshot on both engines.
    Joined,
    /// Three statements in one transaction: one snapshot at REPEATABLE
    /// READ, not at READ COMMITTED.
    Transaction,
    /// Three statements, each its own step (the model's `split-read`).
    Separate,
}

/// How a transaction of the admit reads the rows it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TxRead {
    /// `SELECT ... FOR UPDATE`: the rows locked until the commit.
    ForUpdate,
    /// A plain `SELECT`: a snapshot read, no lock.
    Plain,
}

/// What a worker does when the engine refuses its write (a serialization
/// failure, a deadlock): both are rules docs/logging.md gives a service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Aborts {
    /// The step is retried and only the attempt that went through logged.
    Retried,
    /// The refused write is logged as sent, `won: false` and `aborted:
    /// true`, and the worker goes back to its read.
    Logged,
}

/// The SQL variants a run uses (item 5 of issue 22).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    pub read: ReadMode,
    pub tx_read: TxRead,
    pub aborts: Aborts,
}

impl Default for Variant {
    fn default() -> Self {
        Variant {
            read: ReadMode::Joined,
            tx_read: TxRead::ForUpdate,
            aborts: Aborts::Retried,
        }
    }
}

/// The queue's slot field as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slots {
    Count(i64),
    Owners(Vec<i64>),
}

impl Slots {
    fn from_row(slot: SlotField, count: &Val, ids: &Val) -> Slots {
        match slot {
            SlotField::Count => Slots::Count(count.int()),
            SlotField::Owners => Slots::Owners(store::parse_owners(&ids.text())),
        }
    }

    fn taken(&self) -> i64 {
        match self {
            Slots::Count(n) => *n,
            Slots::Owners(o) => o.len() as i64,
        }
    }

    /// Whether a release by R writes: always for a count, R in the set.
    fn has(&self, num: i64) -> bool {
        match self {
            Slots::Count(_) => true,
            Slots::Owners(o) => o.contains(&num),
        }
    }

    fn claimed(&self, num: i64) -> Slots {
        match self {
            Slots::Count(n) => Slots::Count(n + 1),
            Slots::Owners(o) => {
                let mut o = o.clone();
                o.push(num);
                o.sort_unstable();
                o.dedup();
                Slots::Owners(o)
            }
        }
    }

    fn released(&self, num: i64) -> Slots {
        match self {
            Slots::Count(n) => Slots::Count((n - 1).max(0)),
            Slots::Owners(o) => Slots::Owners(o.iter().copied().filter(|&x| x != num).collect()),
        }
    }

    /// The column and its value as a parameter.
    fn column(&self) -> (&'static str, Val) {
        match self {
            Slots::Count(n) => ("in_flight_count", Val::Int(*n)),
            Slots::Owners(o) => ("in_flight_request_ids", Val::Text(store::owners_column(o))),
        }
    }

    /// The queue row's slot field in the event log.
    fn event_fields(&self, object: &mut serde_json::Map<String, Json>) {
        match self {
            Slots::Count(n) => {
                object.insert("in_flight_count".into(), json!(n));
            }
            Slots::Owners(o) => {
                let ids: Vec<String> = o.iter().map(|n| format!("R{n}")).collect();
                object.insert("in_flight_request_ids".into(), json!(ids));
            }
        }
    }
}

/// What a worker last read (or wrote, and so knows), with versions.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    pub request: Option<(String, i64)>,
    pub queue: Option<(Slots, i64)>,
    pub head: Option<i64>,
}

/// A worker's next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Read,
    ReadQueue,
    ReadHead,
    Hold,
    Ack,
    SubmitBuild,
    ReleaseBeforeSupersede,
    Supersede,
    SupersedeThenRelease,
    Claim,
    WriteProcessing,
    CountUp,
    RereadQueueForCountUp,
    RereadRequest,
    Unwind,
    RereadQueueForUnwind,
    Release,
    WriteOutcome,
    Reap,
    CancelBuild { release: bool },
    Done,
}

/// One handler invocation: a delivery of one message, and its connection's
/// view of what it read.
pub struct Worker {
    /// The delivery's token in `messages.delivery`, and its name in logs.
    pub token: i64,
    pub queue: i64,
    pub num: i64,
    pub kind: Kind,
    pub step: Step,
    pub seen: Seen,
    pub parts: Parts,
    pub variant: Variant,
    pub max_concurrent: i64,
    /// The step's write was refused and logged so (`Aborts::Logged`).
    aborted: bool,
}

/// Everything a step may touch besides its worker.
pub struct Ctx<'a> {
    pub conn: &'a mut Conn,
    pub builds: &'a BuildSystem,
    /// The event log's lines this step adds (without `queue` and `actor`).
    pub events: Vec<Json>,
}

fn is_terminal(state: &str) -> bool {
    matches!(state, "succeeded" | "superseded" | "dead_lettered")
}

impl Worker {
    pub fn new(
        token: i64,
        queue: i64,
        num: i64,
        kind: Kind,
        parts: Parts,
        variant: Variant,
        k: i64,
    ) -> Worker {
        Worker {
            token,
            queue,
            num,
            kind,
            step: Step::Read,
            seen: Seen::default(),
            parts,
            variant,
            max_concurrent: k,
            aborted: false,
        }
    }

    pub fn name(&self) -> String {
        format!("worker-{}", self.token)
    }

    fn request_id(&self) -> String {
        format!("R{}", self.num)
    }

    fn request_event(&self, state: &str, version: i64) -> Json {
        json!({"id": self.request_id(), "state": state, "version": version})
    }

    fn queue_event(slots: &Slots, version: i64) -> Json {
        let mut object = serde_json::Map::new();
        object.insert("version".into(), json!(version));
        slots.event_fields(&mut object);
        Json::Object(object)
    }

    /// A write's transaction. Under `Aborts::Logged` a refusal the engine
    /// asks to retry is `None` (nothing was written): its line says so and
    /// the worker reads again.
    fn write<T>(
        &mut self,
        ctx: &mut Ctx,
        body: impl FnOnce(&mut Conn) -> DbResult<T>,
    ) -> DbResult<Option<T>> {
        match ctx.conn.transaction(body) {
            Err(DbError::Retry(_)) if self.variant.aborts == Aborts::Logged => {
                self.aborted = true;
                Ok(None)
            }
            result => result.map(Some),
        }
    }

    /// `won`, and `aborted` when the write was refused.
    fn outcome(line: &mut Json, won: Option<bool>) {
        line["won"] = json!(won == Some(true));
        if won.is_none() {
            line["aborted"] = json!(true);
        }
    }

    /// Takes the next step; on `DbError::Retry` nothing happened (the
    /// statement or its transaction rolled back) and the step is to be
    /// taken again.
    pub fn step(&mut self, ctx: &mut Ctx) -> DbResult<()> {
        let next = match self.step {
            Step::Done => Step::Done,
            Step::Read | Step::ReadQueue | Step::ReadHead => self.read(ctx)?,
            Step::Hold => {
                self.hold(ctx)?;
                Step::Done
            }
            Step::Ack => {
                self.ack(ctx)?;
                Step::Done
            }
            Step::SubmitBuild => {
                let started = ctx.builds.submit(ctx.conn, self.queue, self.num)?;
                ctx.events.push(
                    json!({"event": "submit", "request": self.request_id(), "started": started}),
                );
                Step::Ack
            }
            Step::ReleaseBeforeSupersede => {
                if self.release(ctx, "release_before_supersede")? {
                    Step::Supersede
                } else {
                    Step::Read
                }
            }
            Step::Supersede => {
                if self.cas_request(ctx, "superseded", "supersede")? {
                    Step::Ack
                } else {
                    Step::Read
                }
            }
            Step::SupersedeThenRelease => {
                if self.cas_request(ctx, "superseded", "supersede_then_release")? {
                    Step::Unwind
                } else {
                    Step::Read
                }
            }
            Step::Claim => self.claim(ctx)?,
            Step::WriteProcessing => {
                let won = self.cas_request(ctx, "processing", "write_processing")?;
                match (self.parts.admit, won) {
                    (_, true) if self.parts.admit == Admit::FailOpen => Step::CountUp,
                    (_, true) => Step::SubmitBuild,
                    (Admit::ClaimFirst, false) => Step::Unwind,
                    (Admit::FailOpen, false) => Step::Ack,
                    (_, false) => Step::RereadRequest,
                }
            }
            Step::CountUp => {
                let (slots, _) = self.seen.queue.clone().expect("a count-up follows a read");
                if self.cas_queue(ctx, slots.claimed(self.num), "count_up")? {
                    Step::SubmitBuild
                } else {
                    Step::RereadQueueForCountUp
                }
            }
            Step::RereadQueueForCountUp => {
                self.reread_queue(ctx)?;
                Step::CountUp
            }
            Step::RereadRequest => {
                let state = self.reread_request(ctx)?;
                if is_terminal(&state) {
                    Step::Unwind
                } else if state == "processing" {
                    if self.parts.resume_submits {
                        Step::SubmitBuild
                    } else {
                        Step::Ack
                    }
                } else {
                    Step::Read
                }
            }
            Step::Unwind => {
                if self.release(ctx, "unwind")? {
                    Step::Ack
                } else {
                    Step::RereadQueueForUnwind
                }
            }
            Step::RereadQueueForUnwind => {
                if self.reread_queue(ctx)?.has(self.num) {
                    Step::Unwind
                } else {
                    Step::Ack
                }
            }
            Step::Release => {
                if self.release(ctx, "release")? {
                    Step::WriteOutcome
                } else {
                    Step::Read
                }
            }
            Step::WriteOutcome => {
                let to = if self.kind == Kind::Signal {
                    "succeeded"
                } else {
                    "dead_lettered"
                };
                if self.cas_request(ctx, to, "write_outcome")? {
                    Step::Ack
                } else {
                    Step::Read
                }
            }
            Step::CancelBuild { release } => {
                let stopped = ctx.builds.cancel(ctx.conn, self.queue, self.num)?;
                ctx.events.push(json!({"event": "cancel_build", "request": self.request_id(), "stopped": stopped}));
                if release {
                    Step::Release
                } else {
                    Step::WriteOutcome
                }
            }
            Step::Reap => self.reap(ctx)?,
        };
        // A refused write sends the worker back to its read, whatever the
        // path would take after a lost one.
        self.step = if std::mem::take(&mut self.aborted) {
            Step::Read
        } else {
            next
        };
        Ok(())
    }

    /// The read, or one part of a split read; returns the next step.
    fn read(&mut self, ctx: &mut Ctx) -> DbResult<Step> {
        let (q, n) = (Val::Int(self.queue), Val::Int(self.num));
        let slot = self.parts.slot;
        // A read's place in the queue's log is its snapshot.
        ctx.conn.read_point();
        match (self.variant.read, self.step) {
            (ReadMode::Joined, _) => {
                let row = ctx
                    .conn
                    .query_one(sqltext::READ_JOINED, &[q, n])?
                    .ok_or_else(|| DbError::Fatal("R's row is missing".into()))?;
                let slots = Slots::from_row(slot, &row[3], &row[4]);
                self.seen = Seen {
                    request: Some((row[0].text(), row[1].int())),
                    queue: Some((slots, row[2].int())),
                    head: Some(row[5].int()),
                };
            }
            (ReadMode::Transaction, _) => {
                let (request, queue, head) = ctx.conn.read_transaction(|c| {
                    let request = c.query_one(sqltext::READ_REQUEST, &[q.clone(), n.clone()])?;
                    let queue = c.query_one(sqltext::READ_QUEUE, std::slice::from_ref(&q))?;
                    let head = c.query_one(sqltext::READ_HEAD, std::slice::from_ref(&q))?;
                    Ok((request, queue, head))
                })?;
                let (request, queue, head) = (request.unwrap(), queue.unwrap(), head.unwrap());
                self.seen = Seen {
                    request: Some((request[0].text(), request[1].int())),
                    queue: Some((Slots::from_row(slot, &queue[1], &queue[2]), queue[0].int())),
                    head: Some(head[0].int()),
                };
            }
            (ReadMode::Separate, Step::Read) => {
                let row = ctx.conn.query_one(sqltext::READ_REQUEST, &[q, n])?.unwrap();
                self.seen = Seen {
                    request: Some((row[0].text(), row[1].int())),
                    ..Seen::default()
                };
                ctx.events.push(json!({"event": "read_request", "request": self.request_event(&row[0].text(), row[1].int())}));
                return Ok(Step::ReadQueue);
            }
            (ReadMode::Separate, Step::ReadQueue) => {
                let row = ctx.conn.query_one(sqltext::READ_QUEUE, &[q])?.unwrap();
                let slots = Slots::from_row(slot, &row[1], &row[2]);
                ctx.events.push(json!({"event": "read_queue", "queue_row": Self::queue_event(&slots, row[0].int())}));
                self.seen.queue = Some((slots, row[0].int()));
                return Ok(Step::ReadHead);
            }
            (ReadMode::Separate, _) => {
                let row = ctx.conn.query_one(sqltext::READ_HEAD, &[q])?.unwrap();
                self.seen.head = Some(row[0].int());
                ctx.events
                    .push(json!({"event": "read_head", "head": format!("R{}", row[0].int())}));
                return Ok(self.decide());
            }
        }
        let (state, version) = self.seen.request.clone().unwrap();
        let (slots, queue_version) = self.seen.queue.clone().unwrap();
        ctx.events.push(json!({
            "event": "read",
            "request": self.request_event(&state, version),
            "queue_row": Self::queue_event(&slots, queue_version),
            "head": format!("R{}", self.seen.head.unwrap()),
        }));
        Ok(self.decide())
    }

    /// The step after a whole read, by what it returned.
    fn decide(&self) -> Step {
        let state = self.seen.request.as_ref().unwrap().0.clone();
        let slots = &self.seen.queue.as_ref().unwrap().0;
        let has_slot = slots.has(self.num);
        let full = slots.taken() >= self.max_concurrent;
        let latest = self.seen.head == Some(self.num);
        let parts = self.parts;
        match self.kind {
            Kind::Process => {
                if is_terminal(&state) {
                    return Step::Ack;
                }
                if state == "processing" {
                    return Step::SubmitBuild;
                }
                if !latest {
                    return match (
                        parts.stale_head,
                        has_slot && parts.slot == SlotField::Owners,
                    ) {
                        (StaleHead::ReleaseThenSupersede, true) => Step::ReleaseBeforeSupersede,
                        (StaleHead::SupersedeThenRelease, true) => Step::SupersedeThenRelease,
                        _ => Step::Supersede,
                    };
                }
                let closed = if parts.reaping_gate {
                    Step::Reap
                } else {
                    Step::Hold
                };
                match parts.admit {
                    Admit::ClaimFirst if full => Step::Hold,
                    Admit::ClaimFirst => Step::Claim,
                    Admit::FailOpen if full => Step::Hold,
                    Admit::FailOpen => Step::WriteProcessing,
                    Admit::TwoCas | Admit::FencedClaim if has_slot => Step::WriteProcessing,
                    Admit::OneTransaction if has_slot => Step::Claim,
                    _ if full => closed,
                    _ => Step::Claim,
                }
            }
            Kind::Signal => {
                if is_terminal(&state) {
                    Step::Ack
                } else if has_slot {
                    Step::Release
                } else {
                    Step::WriteOutcome
                }
            }
            Kind::DeadProcess | Kind::DeadSignal => {
                let release = parts.dlq_releases_state(state == "processing") && has_slot;
                if is_terminal(&state) {
                    Step::Ack
                } else if parts.dlq_cancels {
                    Step::CancelBuild { release }
                } else if release {
                    Step::Release
                } else {
                    Step::WriteOutcome
                }
            }
        }
    }

    /// A CAS of the queue's slot field from the version last seen, and the
    /// wake of parked messages when it wins, in one transaction.
    fn cas_queue(&mut self, ctx: &mut Ctx, to: Slots, step: &str) -> DbResult<bool> {
        let (_, version) = self.seen.queue.clone().expect("a CAS follows a read");
        let (column, value) = to.column();
        let queue = self.queue;
        let sql = sqltext::cas_queue(column);
        let won = self.write(ctx, |c| {
            let won = c.exec(&sql, &[value, queue.into(), version.into()])? == 1;
            if won {
                store::wake(c, queue)?;
            }
            Ok(won)
        })?;
        let mut set = serde_json::Map::new();
        to.event_fields(&mut set);
        let mut line = json!({"event": "cas", "row": "queue", "expected_version": version, "set": set, "step": step});
        Self::outcome(&mut line, won);
        ctx.events.push(line);
        let won = won == Some(true);
        if won {
            self.seen.queue = Some((to, version + 1));
        }
        Ok(won)
    }

    /// A CAS of R's row to `to` from the version last seen.
    fn cas_request(&mut self, ctx: &mut Ctx, to: &str, step: &str) -> DbResult<bool> {
        let (_, version) = self.seen.request.clone().expect("a CAS follows a read");
        let (queue, num) = (self.queue, self.num);
        let won = self.write(ctx, |c| {
            let won = c.exec(
                sqltext::CAS_REQUEST,
                &[to.into(), queue.into(), num.into(), version.into()],
            )? == 1;
            if won {
                store::wake(c, queue)?;
            }
            Ok(won)
        })?;
        let mut line = json!({"event": "cas", "row": "request", "request": self.request_id(), "expected_version": version, "set": {"state": to}, "step": step});
        Self::outcome(&mut line, won);
        ctx.events.push(line);
        let won = won == Some(true);
        if won {
            self.seen.request = Some((to.to_string(), version + 1));
        }
        Ok(won)
    }

    /// Release R's slot from the queue row as last seen.
    fn release(&mut self, ctx: &mut Ctx, step: &str) -> DbResult<bool> {
        let (slots, _) = self.seen.queue.clone().expect("a release follows a read");
        self.cas_queue(ctx, slots.released(self.num), step)
    }

    /// Step b: the claim, as the design writes it.
    fn claim(&mut self, ctx: &mut Ctx) -> DbResult<Step> {
        let (slots, _) = self.seen.queue.clone().expect("a claim follows a read");
        Ok(match self.parts.admit {
            Admit::ClaimFirst | Admit::TwoCas => {
                if self.cas_queue(ctx, slots.claimed(self.num), "claim")? {
                    Step::WriteProcessing
                } else {
                    Step::Read
                }
            }
            Admit::FencedClaim => {
                if self.transaction(ctx, false)? {
                    Step::WriteProcessing
                } else {
                    Step::Read
                }
            }
            Admit::OneTransaction => {
                if self.transaction(ctx, true)? {
                    Step::SubmitBuild
                } else {
                    Step::Read
                }
            }
            Admit::FailOpen => unreachable!("fail-open claims at its count-up"),
        })
    }

    /// The claim (and with `processing`, R -> processing) in one
    /// transaction: read both rows (locked, or plain), commit only if both
    /// are at the versions last seen.
    fn transaction(&mut self, ctx: &mut Ctx, processing: bool) -> DbResult<bool> {
        let (_, queue_version) = self.seen.queue.clone().unwrap();
        let (state, request_version) = self.seen.request.clone().unwrap();
        let (queue, num, slot) = (self.queue, self.num, self.parts.slot);
        let lock = match self.variant.tx_read {
            TxRead::ForUpdate => ctx.conn.dialect().for_update(),
            TxRead::Plain => "",
        };
        let attempt = self.write(ctx, |c| {
            let q = c
                .query_one(&format!("{}{lock}", sqltext::READ_QUEUE), &[queue.into()])?
                .unwrap();
            let r = c
                .query_one(
                    &format!("{}{lock}", sqltext::READ_REQUEST),
                    &[queue.into(), num.into()],
                )?
                .unwrap();
            if q[0].int() != queue_version || r[1].int() != request_version {
                return Ok(None);
            }
            // Where another admit's reads can come between this one's
            // reads and writes (all a plain read lets through).
            c.mid_transaction();
            let claimed = Slots::from_row(slot, &q[1], &q[2]).claimed(num);
            let (column, value) = claimed.column();
            c.exec(&sqltext::tx_write_queue(column), &[value, queue.into()])?;
            if processing {
                c.exec(sqltext::TX_WRITE_REQUEST, &[queue.into(), num.into()])?;
            }
            store::wake(c, queue)?;
            Ok(Some(claimed))
        })?;
        let refused = attempt.is_none();
        let result = attempt.flatten();
        let won = result.is_some();
        let mut set = serde_json::Map::new();
        let claimed = result
            .clone()
            .unwrap_or_else(|| self.seen.queue.as_ref().unwrap().0.claimed(num));
        claimed.event_fields(&mut set);
        let mut writes =
            vec![json!({"row": "queue", "expected_version": queue_version, "set": set})];
        if processing {
            writes.push(json!({"row": "request", "request": self.request_id(), "expected_version": request_version, "set": {"state": "processing"}}));
        }
        let mut line = json!({"event": "transaction", "writes": writes, "step": "claim"});
        Self::outcome(&mut line, (!refused).then_some(won));
        ctx.events.push(line);
        if let Some(claimed) = result {
            self.seen.queue = Some((claimed, queue_version + 1));
            if processing {
                self.seen.request = Some(("processing".into(), request_version + 1));
            } else {
                self.seen.request = Some((state, request_version));
            }
        }
        Ok(won)
    }

    fn reread_queue(&mut self, ctx: &mut Ctx) -> DbResult<Slots> {
        ctx.conn.read_point();
        let row = ctx
            .conn
            .query_one(sqltext::READ_QUEUE, &[self.queue.into()])?
            .unwrap();
        let slots = Slots::from_row(self.parts.slot, &row[1], &row[2]);
        ctx.events.push(
            json!({"event": "reread_queue", "queue_row": Self::queue_event(&slots, row[0].int())}),
        );
        self.seen.queue = Some((slots.clone(), row[0].int()));
        Ok(slots)
    }

    fn reread_request(&mut self, ctx: &mut Ctx) -> DbResult<String> {
        ctx.conn.read_point();
        let row = ctx
            .conn
            .query_one(sqltext::READ_REQUEST, &[self.queue.into(), self.num.into()])?
            .unwrap();
        ctx.events.push(json!({"event": "reread_request", "request": self.request_event(&row[0].text(), row[1].int())}));
        self.seen.request = Some((row[0].text(), row[1].int()));
        Ok(row[0].text())
    }

    /// The reaping gate: in one transaction guarded by the queue row's
    /// version, remove every owner whose request is terminal.
    fn reap(&mut self, ctx: &mut Ctx) -> DbResult<Step> {
        let (_, version) = self.seen.queue.clone().unwrap();
        let (queue, slot) = (self.queue, self.parts.slot);
        let lock = ctx.conn.dialect().for_update();
        let attempt = self.write(ctx, |c| {
            let q = c
                .query_one(&format!("{}{lock}", sqltext::READ_QUEUE), &[queue.into()])?
                .unwrap();
            if q[0].int() != version {
                return Ok(None);
            }
            let Slots::Owners(owners) = Slots::from_row(slot, &q[1], &q[2]) else {
                unreachable!("the reaping gate keeps owners")
            };
            let terminal: Vec<i64> = c
                .query(
                    &format!("SELECT num FROM requests WHERE queue = ? AND state IN {TERMINAL}"),
                    &[queue.into()],
                )?
                .into_iter()
                .map(|r| r[0].int())
                .filter(|n| owners.contains(n))
                .collect();
            if !terminal.is_empty() {
                let kept: Vec<i64> = owners
                    .into_iter()
                    .filter(|n| !terminal.contains(n))
                    .collect();
                c.exec(
                    &sqltext::cas_queue("in_flight_request_ids"),
                    &[
                        store::owners_column(&kept).into(),
                        queue.into(),
                        version.into(),
                    ],
                )?;
                store::wake(c, queue)?;
            }
            Ok(Some(terminal))
        })?;
        let refused = attempt.is_none();
        let outcome = attempt.flatten();
        let removed: Vec<String> = outcome
            .clone()
            .unwrap_or_default()
            .iter()
            .map(|n| format!("R{n}"))
            .collect();
        let mut line = json!({"event": "reap", "expected_version": version, "removed": removed});
        Self::outcome(&mut line, (!refused).then_some(outcome.is_some()));
        ctx.events.push(line);
        Ok(match outcome {
            None => Step::Read,
            Some(t) if t.is_empty() => Step::Hold,
            Some(_) => Step::Read,
        })
    }

    /// Hold: park the message, or make it visible at once when a row the
    /// read saw has changed since (a write that would have woken it).
    fn hold(&mut self, ctx: &mut Ctx) -> DbResult<()> {
        let (_, request_version) = self.seen.request.clone().unwrap();
        let (slots, queue_version) = self.seen.queue.clone().unwrap();
        let head = self.seen.head.unwrap();
        let reaped = match (&slots, self.parts.reaping_gate) {
            (Slots::Owners(owners), true) => Some(owners.clone()),
            _ => None,
        };
        let sql = sqltext::hold(reaped.as_deref());
        let (q, n) = (Val::Int(self.queue), Val::Int(self.num));
        let mut params = vec![
            q.clone(),
            n.clone(),
            request_version.into(),
            q.clone(),
            queue_version.into(),
            q.clone(),
            head.into(),
        ];
        if reaped.is_some() {
            params.push(q.clone());
        }
        params.extend([q, n, self.kind.column().into(), self.token.into()]);
        let queue = self.queue;
        let held = ctx.conn.transaction(|c| {
            store::lock_queue(c, queue)?;
            c.exec(&sql, &params)
        })? == 1;
        ctx.events.push(json!({"event": "hold", "message": self.kind.event_name(), "request": self.request_id(), "held": held}));
        Ok(())
    }

    fn ack(&mut self, ctx: &mut Ctx) -> DbResult<()> {
        let key = [
            self.queue.into(),
            self.num.into(),
            self.kind.column().into(),
            self.token.into(),
        ];
        let deleted = ctx.conn.transaction(|c| c.exec(sqltext::ACK, &key))? == 1;
        ctx.events.push(json!({"event": "ack", "message": self.kind.event_name(), "request": self.request_id(), "deleted": deleted}));
        Ok(())
    }
}
