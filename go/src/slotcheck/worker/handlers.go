package main

// The handlers process(R), signal(R) and dlq(R) of docs/stovepipe.md, in
// the two designs this worker implements (docs/designs.md), with the SQL
// of docs/real-database.md. A handler decides only by what its statements
// returned, and logs each step after it, with what it returned.

import (
	"context"
	"database/sql"
	"fmt"

	"slotcheck/slotlog"
)

// design: the parts of the two designs this worker knows.
type design struct {
	name string
	// atomicAdmit: steps b and c are one transaction (claim and R ->
	// processing commit together); else two CASes, claim first.
	atomicAdmit bool
	// dlqCancels: the DLQ reconciler cancels R's build and waits for it to
	// stop before it releases R's slot.
	dlqCancels bool
	// supersedeFirst: a stale head holding a slot is superseded (a CAS on
	// R's row) before its slot is released; else released first. Why: with
	// reads in separate statements, releasing first is guarded only by the
	// queue's version and can win while R's build runs.
	supersedeFirst bool
}

var designs = map[string]design{
	"owner-keyed":                          {name: "owner-keyed"},
	"owner-keyed-atomic-admit-dlq-cancels": {name: "owner-keyed-atomic-admit-dlq-cancels", atomicAdmit: true, dlqCancels: true},
	"owner-keyed-atomic-admit-supersede-first-dlq-cancels": {
		name: "owner-keyed-atomic-admit-supersede-first-dlq-cancels", atomicAdmit: true, dlqCancels: true, supersedeFirst: true},
}

// Message kinds as the messages table holds them.
const (
	kindProcess     = "process"
	kindSignal      = "signal"
	kindDeadProcess = "dead-process"
	kindDeadSignal  = "dead-signal"
)

func messageName(kind string) string {
	switch kind {
	case kindProcess:
		return slotlog.Process
	case kindSignal:
		return slotlog.Signal
	}
	return slotlog.Dead
}

func terminal(state string) bool {
	return state == slotlog.Succeeded || state == slotlog.Superseded || state == slotlog.DeadLettered
}

func requestID(num int64) string   { return fmt.Sprintf("req-%d", num) }
func queueName(queue int64) string { return fmt.Sprintf("q%d", queue) }

func requestIDs(nums []int64) []string {
	out := []string{}
	for _, n := range sortedUnique(nums) {
		out = append(out, requestID(n))
	}
	return out
}

type step int

const (
	stepRead step = iota
	stepHold
	stepAck
	stepSubmit
	stepReleaseBeforeSupersede
	stepSupersede
	stepSupersedeThenRelease
	stepClaim
	stepWriteProcessing
	stepRereadRequest
	stepUnwind
	stepRereadQueueForUnwind
	stepRelease
	stepWriteOutcome
	stepCancelBuild
	stepDone
)

// handler is one handler invocation: one delivery of one message.
type handler struct {
	w      *worker
	log    *slotlog.Logger
	conn   *sql.Conn
	queue  int64
	num    int64
	kind   string
	token  int64
	name   string
	design design
	// What it last read (or wrote, and so knows).
	state          string
	requestVersion int64
	owners         []int64
	queueVersion   int64
	head           int64
	// Whether the DLQ's cancel is followed by a release.
	releaseAfterCancel bool
}

func (h *handler) say() slotlog.Stovepipe { return h.log.Stovepipe() }
func (h *handler) q() string              { return queueName(h.queue) }
func (h *handler) r() string              { return requestID(h.num) }

func (h *handler) requestRow() slotlog.RequestRow {
	return slotlog.RequestRow{ID: h.r(), State: h.state, Version: h.requestVersion}
}

func (h *handler) queueRow() slotlog.QueueRow {
	return slotlog.OwnersRow(h.queueVersion, requestIDs(h.owners))
}

// run takes the steps until the handler is done; the worker may crash
// (the process) or stall (this handler) before any step.
func (h *handler) run(ctx context.Context) error {
	s := stepRead
	for s != stepDone {
		h.w.fault(h)
		next, err := h.step(ctx, s)
		if err != nil {
			return fmt.Errorf("%s, %s(%s) in %s: %w", h.name, h.kind, h.r(), h.q(), err)
		}
		s = next
	}
	return nil
}

func (h *handler) step(ctx context.Context, s step) (step, error) {
	switch s {
	case stepRead:
		return h.read(ctx)
	case stepHold:
		return stepDone, h.hold(ctx)
	case stepAck:
		return stepDone, h.ack(ctx)
	case stepSubmit:
		return stepAck, h.submit(ctx)
	case stepReleaseBeforeSupersede:
		return h.casQueue(ctx, without(h.owners, h.num), slotlog.StepReleaseBeforeSupersede, stepSupersede, stepRead)
	case stepSupersede:
		return h.casRequest(ctx, slotlog.Superseded, slotlog.StepSupersede, stepAck, stepRead)
	case stepSupersedeThenRelease:
		// Won: R is superseded, its slot is given back as an unwind is.
		return h.casRequest(ctx, slotlog.Superseded, slotlog.StepSupersedeThenRelease, stepUnwind, stepRead)
	case stepClaim:
		if h.design.atomicAdmit {
			return h.admitTransaction(ctx)
		}
		return h.casQueue(ctx, append(append([]int64{}, h.owners...), h.num), slotlog.StepClaim, stepWriteProcessing, stepRead)
	case stepWriteProcessing:
		return h.casRequest(ctx, slotlog.Processing, slotlog.StepWriteProcessing, stepSubmit, stepRereadRequest)
	case stepRereadRequest:
		if err := h.rereadRequest(ctx); err != nil {
			return 0, err
		}
		switch {
		case terminal(h.state):
			return stepUnwind, nil
		case h.state == slotlog.Processing:
			return stepAck, nil
		}
		return stepRead, nil
	case stepUnwind:
		return h.casQueue(ctx, without(h.owners, h.num), slotlog.StepUnwind, stepAck, stepRereadQueueForUnwind)
	case stepRereadQueueForUnwind:
		if err := h.rereadQueue(ctx); err != nil {
			return 0, err
		}
		if has(h.owners, h.num) {
			return stepUnwind, nil
		}
		return stepAck, nil
	case stepRelease:
		return h.casQueue(ctx, without(h.owners, h.num), slotlog.StepRelease, stepWriteOutcome, stepRead)
	case stepWriteOutcome:
		to := slotlog.DeadLettered
		if h.kind == kindSignal {
			to = slotlog.Succeeded
		}
		return h.casRequest(ctx, to, slotlog.StepWriteOutcome, stepAck, stepRead)
	case stepCancelBuild:
		if err := h.cancelBuild(ctx); err != nil {
			return 0, err
		}
		if h.releaseAfterCancel {
			return stepRelease, nil
		}
		return stepWriteOutcome, nil
	}
	return 0, fmt.Errorf("no step %d", s)
}

// read: R's row, the queue row and the latest head, in one statement (one
// snapshot).
func (h *handler) read(ctx context.Context) (step, error) {
	err := h.w.steps.read(ctx, h.conn, h.queue, func() error {
		var owners string
		var count int64
		if err := h.conn.QueryRowContext(ctx,
			`SELECT r.state, r.version, q.version, q.in_flight_count, q.in_flight_request_ids,
			 (SELECT MAX(h.num) FROM requests h WHERE h.queue = q.id)
			 FROM requests r JOIN queues q ON q.id = r.queue WHERE r.queue = ? AND r.num = ?`,
			h.queue, h.num).Scan(&h.state, &h.requestVersion, &h.queueVersion, &count, &owners, &h.head); err != nil {
			return err
		}
		h.owners = parseOwners(owners)
		return nil
	}, func() {
		h.say().Read(h.q(), h.name, h.requestRow(), h.queueRow(), requestID(h.head))
	})
	if err != nil {
		return 0, err
	}
	return h.decide(), nil
}

// decide: the handler's next step by what the read returned.
func (h *handler) decide() step {
	hasSlot := has(h.owners, h.num)
	full := int64(len(h.owners)) >= h.w.maxConcurrent
	switch h.kind {
	case kindProcess:
		switch {
		case terminal(h.state):
			return stepAck
		case h.state == slotlog.Processing:
			return stepSubmit
		case h.head != h.num:
			// A head that is no longer the latest: superseded, and its
			// slot released, in the design's order.
			if hasSlot && h.design.supersedeFirst {
				return stepSupersedeThenRelease
			}
			if hasSlot {
				return stepReleaseBeforeSupersede
			}
			return stepSupersede
		case hasSlot && h.design.atomicAdmit:
			return stepClaim
		case hasSlot:
			// A redelivery resumes its own claim.
			return stepWriteProcessing
		case full:
			return stepHold
		}
		return stepClaim
	case kindSignal:
		switch {
		case terminal(h.state):
			return stepAck
		case hasSlot:
			return stepRelease
		}
		return stepWriteOutcome
	}
	// dlq(R): any nonterminal request's slot is released.
	switch {
	case terminal(h.state):
		return stepAck
	case h.design.dlqCancels:
		h.releaseAfterCancel = hasSlot
		return stepCancelBuild
	case hasSlot:
		return stepRelease
	}
	return stepWriteOutcome
}

// casQueue: the queue row's owners set to `to` if the row is still at the
// version read, and the queue's parked messages woken if it won.
func (h *handler) casQueue(ctx context.Context, to []int64, name string, won, lost step) (step, error) {
	expected := h.queueVersion
	var ok bool
	err := h.w.steps.tx(ctx, h.conn, h.queue, func(tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx,
			"UPDATE queues SET in_flight_request_ids = ?, version = version + 1 WHERE id = ? AND version = ?",
			ownersColumn(to), h.queue, expected))
		if err != nil {
			return err
		}
		ok = n == 1
		if ok {
			return wake(ctx, tx, h.queue)
		}
		return nil
	}, func() {
		h.say().CAS(h.q(), h.name, slotlog.Write{Row: slotlog.RowQueue, ExpectedVersion: expected,
			Set: slotlog.SetOwners(requestIDs(to))}, ok, name)
	})
	if err != nil {
		return 0, err
	}
	if !ok {
		return lost, nil
	}
	h.owners, h.queueVersion = sortedUnique(to), expected+1
	return won, nil
}

// casRequest: R's state set to `to` if its row is still at the version
// read.
func (h *handler) casRequest(ctx context.Context, to, name string, won, lost step) (step, error) {
	expected := h.requestVersion
	var ok bool
	err := h.w.steps.tx(ctx, h.conn, h.queue, func(tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx,
			"UPDATE requests SET state = ?, version = version + 1 WHERE queue = ? AND num = ? AND version = ?",
			to, h.queue, h.num, expected))
		if err != nil {
			return err
		}
		ok = n == 1
		if ok {
			return wake(ctx, tx, h.queue)
		}
		return nil
	}, func() {
		h.say().CAS(h.q(), h.name, slotlog.Write{Row: slotlog.RowRequest, Request: h.r(),
			ExpectedVersion: expected, Set: slotlog.SetState(to)}, ok, name)
	})
	if err != nil {
		return 0, err
	}
	if !ok {
		return lost, nil
	}
	h.state, h.requestVersion = to, expected+1
	return won, nil
}

// admitTransaction: steps b and c in one transaction. Both rows are read
// FOR UPDATE (locked until the commit) and must be at the versions the
// handler's read saw; else nothing is written and the handler reads again.
func (h *handler) admitTransaction(ctx context.Context) (step, error) {
	qv, rv := h.queueVersion, h.requestVersion
	claimed := sortedUnique(append(append([]int64{}, h.owners...), h.num))
	lock := " FOR UPDATE"
	if h.w.bug == "no-for-update" {
		lock = ""
	}
	var ok bool
	err := h.w.steps.tx(ctx, h.conn, h.queue, func(tx *sql.Tx) error {
		ok = false
		var gotQ, gotR, count int64
		var owners, state string
		if err := tx.QueryRowContext(ctx, "SELECT version, in_flight_count, in_flight_request_ids FROM queues WHERE id = ?"+lock,
			h.queue).Scan(&gotQ, &count, &owners); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, "SELECT state, version FROM requests WHERE queue = ? AND num = ?"+lock,
			h.queue, h.num).Scan(&state, &gotR); err != nil {
			return err
		}
		if gotQ != qv || gotR != rv {
			return nil
		}
		claimed = sortedUnique(append(parseOwners(owners), h.num))
		h.w.pause()
		if _, err := tx.ExecContext(ctx, "UPDATE queues SET in_flight_request_ids = ?, version = version + 1 WHERE id = ?",
			ownersColumn(claimed), h.queue); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE requests SET state = 'processing', version = version + 1 WHERE queue = ? AND num = ?",
			h.queue, h.num); err != nil {
			return err
		}
		ok = true
		return wake(ctx, tx, h.queue)
	}, func() {
		h.say().Transaction(h.q(), h.name, []slotlog.Write{
			{Row: slotlog.RowQueue, ExpectedVersion: qv, Set: slotlog.SetOwners(requestIDs(claimed))},
			{Row: slotlog.RowRequest, Request: h.r(), ExpectedVersion: rv, Set: slotlog.SetState(slotlog.Processing)},
		}, ok, slotlog.StepClaim)
	})
	if err != nil {
		return 0, err
	}
	if !ok {
		return stepRead, nil
	}
	h.owners, h.queueVersion = claimed, qv+1
	h.state, h.requestVersion = slotlog.Processing, rv+1
	return stepSubmit, nil
}

func (h *handler) rereadRequest(ctx context.Context) error {
	return h.w.steps.read(ctx, h.conn, h.queue, func() error {
		return h.conn.QueryRowContext(ctx, "SELECT state, version FROM requests WHERE queue = ? AND num = ?",
			h.queue, h.num).Scan(&h.state, &h.requestVersion)
	}, func() { h.say().RereadRequest(h.q(), h.name, h.requestRow()) })
}

func (h *handler) rereadQueue(ctx context.Context) error {
	return h.w.steps.read(ctx, h.conn, h.queue, func() error {
		var owners string
		var count int64
		if err := h.conn.QueryRowContext(ctx, "SELECT version, in_flight_count, in_flight_request_ids FROM queues WHERE id = ?",
			h.queue).Scan(&h.queueVersion, &count, &owners); err != nil {
			return err
		}
		h.owners = parseOwners(owners)
		return nil
	}, func() { h.say().RereadQueue(h.q(), h.name, h.queueRow()) })
}

// hold: park the message while nothing the read saw has changed (else it
// is visible at once: a write has overtaken the hold), and only while this
// delivery still holds it.
func (h *handler) hold(ctx context.Context) error {
	return h.w.steps.tx(ctx, h.conn, h.queue, func(tx *sql.Tx) error {
		if err := lockQueue(ctx, tx, h.queue); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx,
			`UPDATE messages SET status = CASE WHEN
			 (SELECT version FROM requests r WHERE r.queue = ? AND r.num = ?) = ?
			 AND (SELECT version FROM queues q WHERE q.id = ?) = ?
			 AND (SELECT MAX(h.num) FROM requests h WHERE h.queue = ?) = ?
			 THEN 'parked' ELSE 'visible' END, delivery = NULL, deadline_ms = NULL
			 WHERE queue = ? AND num = ? AND kind = ? AND delivery = ? AND status = 'in_flight'`,
			h.queue, h.num, h.requestVersion, h.queue, h.queueVersion, h.queue, h.head,
			h.queue, h.num, h.kind, h.token)
		return err
	}, func() { h.say().Hold(h.q(), h.name, messageName(h.kind), h.r()) })
}

// ack: delete the message, only while this delivery still holds it (a
// stalled worker's ack changes nothing).
func (h *handler) ack(ctx context.Context) error {
	return h.w.steps.tx(ctx, h.conn, h.queue, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			"DELETE FROM messages WHERE queue = ? AND num = ? AND kind = ? AND delivery = ? AND status = 'in_flight'",
			h.queue, h.num, h.kind, h.token)
		return err
	}, func() { h.say().Ack(h.q(), h.name, messageName(h.kind), h.r()) })
}

// submit: R's build, idempotent by request ID (started: the insert
// affected one row).
func (h *handler) submit(ctx context.Context) error {
	var started bool
	return h.w.steps.tx(ctx, h.conn, h.queue, func(tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx,
			"INSERT IGNORE INTO builds (queue, num, state, running_at_start) VALUES (?, ?, 'running', 0)", h.queue, h.num))
		if err != nil {
			return err
		}
		started = n == 1
		if !started {
			return nil
		}
		// The build system counts the queue's running builds at each
		// start (the invariant the run is judged on).
		if _, err := tx.ExecContext(ctx,
			`UPDATE builds SET running_at_start = (SELECT n FROM (SELECT COUNT(*) AS n FROM builds
			 WHERE queue = ? AND state = 'running') AS running) WHERE queue = ? AND num = ?`,
			h.queue, h.queue, h.num); err != nil {
			return err
		}
		return wake(ctx, tx, h.queue)
	}, func() { h.say().Submit(h.q(), h.name, h.r(), started) })
}

// cancelBuild: the DLQ reconciler cancels R's build by request ID and
// waits for it to stop; a build never submitted is recorded finished, so
// that a later submit starts nothing.
func (h *handler) cancelBuild(ctx context.Context) error {
	var stopped bool
	return h.w.steps.tx(ctx, h.conn, h.queue, func(tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx,
			"UPDATE builds SET state = 'finished' WHERE queue = ? AND num = ? AND state = 'running'", h.queue, h.num))
		if err != nil {
			return err
		}
		stopped = n == 1
		recorded := int64(0)
		if !stopped {
			recorded, err = affected(tx.ExecContext(ctx,
				"INSERT IGNORE INTO builds (queue, num, state, running_at_start) VALUES (?, ?, 'finished', 0)", h.queue, h.num))
			if err != nil {
				return err
			}
		}
		if stopped || recorded == 1 {
			return wake(ctx, tx, h.queue)
		}
		return nil
	}, func() { h.say().CancelBuild(h.q(), h.name, h.r(), stopped) })
}
