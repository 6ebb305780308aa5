package slotlog

// The stovepipe model's events (docs/validate.md, "Stovepipe events";
// models/src/events/stovepipe.rs): what each statement of a handler, the
// client, the broker or the build system returned.

// A request row's state column.
const (
	Accepted     = "accepted"
	Processing   = "processing"
	Succeeded    = "succeeded"
	Superseded   = "superseded"
	DeadLettered = "dead_lettered"
)

// A message kind as the broker names it.
const (
	Process = "process" // process(R), published on arrival
	Signal  = "signal"  // signal(R), published when R's build finishes
	Dead    = "dead"    // a message out of deliveries, for the DLQ reconciler
)

// Steps a CAS or a transaction may name (checked when given).
const (
	StepClaim                  = "claim"
	StepWriteProcessing        = "write_processing"
	StepCountUp                = "count_up"
	StepUnwind                 = "unwind"
	StepRelease                = "release"
	StepReleaseBeforeSupersede = "release_before_supersede"
	StepSupersede              = "supersede"
	StepSupersedeThenRelease   = "supersede_then_release"
	StepWriteOutcome           = "write_outcome"
)

// Rows a write is on.
const (
	RowQueue   = "queue"
	RowRequest = "request"
)

// RequestRow is a request row as a statement read it.
type RequestRow struct {
	ID      string
	State   string
	Version int64
}

func (r RequestRow) json() map[string]any {
	return map[string]any{"id": r.ID, "state": r.State, "version": r.Version}
}

// QueueRow is the queue row as a statement read it: its version and the
// slot column the design keeps. Use CountRow or OwnersRow.
type QueueRow struct {
	Version int64
	count   *int64
	owners  []string
}

// CountRow is the queue row of a counter design (in_flight_count).
func CountRow(version, count int64) QueueRow {
	return QueueRow{Version: version, count: &count}
}

// OwnersRow is the queue row of an owner-keyed design
// (in_flight_request_ids); nil or empty is the empty set, written [].
func OwnersRow(version int64, owners []string) QueueRow {
	return QueueRow{Version: version, owners: set(owners)}
}

func (q QueueRow) json() map[string]any {
	m := map[string]any{"version": q.Version}
	if q.count != nil {
		m["in_flight_count"] = *q.count
	} else {
		m["in_flight_request_ids"] = set(q.owners)
	}
	return m
}

// Values are the columns a write sets, and nothing else: build them with
// SetState, SetCount and SetOwners.
type Values struct {
	state     string
	count     *int64
	owners    []string
	hasOwners bool
}

// SetState sets a request row's state.
func SetState(state string) Values { return Values{state: state} }

// SetCount sets the queue row's in_flight_count.
func SetCount(n int64) Values { return Values{count: &n} }

// SetOwners sets the queue row's in_flight_request_ids (nil: the empty
// set, written []).
func SetOwners(owners []string) Values {
	return Values{owners: set(owners), hasOwners: true}
}

func (v Values) json() map[string]any {
	m := map[string]any{}
	if v.state != "" {
		m["state"] = v.state
	}
	if v.count != nil {
		m["in_flight_count"] = *v.count
	}
	if v.hasOwners {
		m["in_flight_request_ids"] = set(v.owners)
	}
	return m
}

// Write is one row's write: a CAS's, or one of a transaction's.
type Write struct {
	Row             string // RowQueue or RowRequest
	Request         string // the request, for a request row
	ExpectedVersion int64  // the version the row had to be at (the version read)
	Set             Values
}

func (w Write) json() map[string]any {
	m := map[string]any{"row": w.Row, "expected_version": w.ExpectedVersion, "set": w.Set.json()}
	if w.Request != "" {
		m["request"] = w.Request
	}
	return m
}

// Stovepipe writes the stovepipe model's events to a Logger.
type Stovepipe struct{ l *Logger }

// Stovepipe gives the stovepipe events of l.
func (l *Logger) Stovepipe() Stovepipe { return Stovepipe{l} }

// Arrive: the client inserted R's row (accepted) and published process(R).
func (s Stovepipe) Arrive(queue, request string) error {
	return s.l.Emit(queue, "client", "arrive", map[string]any{"request": request})
}

// Deliver: the broker handed message (Process, Signal, Dead) of request to
// a new handler invocation, which logs as worker. attempt counts from 1;
// 0 leaves it out (a service that holds should: SQS's receive count also
// counts the receive before a hold, the model's does not).
func (s Stovepipe) Deliver(queue, message, request, worker string, attempt int) error {
	f := map[string]any{"message": message, "request": request, "worker": worker}
	if attempt > 0 {
		f["attempt"] = attempt
	}
	return s.l.Emit(queue, "broker", "deliver", f)
}

// Read: the one consistent read of R's row, the queue row and the latest
// head (the request that arrived last).
func (s Stovepipe) Read(queue, worker string, request RequestRow, row QueueRow, head string) error {
	return s.l.Emit(queue, worker, "read", map[string]any{
		"request": request.json(), "queue_row": row.json(), "head": head,
	})
}

// ReadRequest, ReadQueue, ReadHead: a read in three statements (the
// model's split-read option), one line each.
func (s Stovepipe) ReadRequest(queue, worker string, request RequestRow) error {
	return s.l.Emit(queue, worker, "read_request", map[string]any{"request": request.json()})
}

// ReadQueue: the queue row alone (split reads).
func (s Stovepipe) ReadQueue(queue, worker string, row QueueRow) error {
	return s.l.Emit(queue, worker, "read_queue", map[string]any{"queue_row": row.json()})
}

// ReadHead: the latest head alone (split reads).
func (s Stovepipe) ReadHead(queue, worker, head string) error {
	return s.l.Emit(queue, worker, "read_head", map[string]any{"head": head})
}

// RereadQueue: the queue row read again alone, after a lost CAS.
func (s Stovepipe) RereadQueue(queue, worker string, row QueueRow) error {
	return s.l.Emit(queue, worker, "reread_queue", map[string]any{"queue_row": row.json()})
}

// RereadRequest: R's row read again alone, after a lost CAS.
func (s Stovepipe) RereadRequest(queue, worker string, request RequestRow) error {
	return s.l.Emit(queue, worker, "reread_request", map[string]any{"request": request.json()})
}

// CAS: `UPDATE ... SET ..., version = version + 1 WHERE ... AND version =
// expected`; won is rows affected == 1; step ("" for none) names the
// handler's step.
func (s Stovepipe) CAS(queue, worker string, w Write, won bool, step string) error {
	f := w.json()
	f["won"] = won
	if step != "" {
		f["step"] = step
	}
	return s.l.Emit(queue, worker, "cas", f)
}

// Transaction: one transaction writing several rows, committed (won) only
// if every row was at its expected version.
func (s Stovepipe) Transaction(queue, worker string, writes []Write, won bool, step string) error {
	ws := make([]map[string]any, 0, len(writes))
	for _, w := range writes {
		ws = append(ws, w.json())
	}
	f := map[string]any{"writes": ws, "won": won}
	if step != "" {
		f["step"] = step
	}
	return s.l.Emit(queue, worker, "transaction", f)
}

// Reap: the reaping repairs' statement, removing the terminal owners
// (removed; empty: none was terminal) if the queue row was still at
// expected (won).
func (s Stovepipe) Reap(queue, worker string, expected int64, removed []string, won bool) error {
	return s.l.Emit(queue, worker, "reap", map[string]any{
		"expected_version": expected, "removed": set(removed), "won": won,
	})
}

// Submit: R's build submitted; started is whether the build system started
// one (false: it was already submitted).
func (s Stovepipe) Submit(queue, worker, request string, started bool) error {
	return s.l.Emit(queue, worker, "submit", map[string]any{"request": request, "started": started})
}

// CancelBuild: the DLQ reconciler cancelled R's build and it stopped;
// stopped is whether a running build was stopped.
func (s Stovepipe) CancelBuild(queue, worker, request string, stopped bool) error {
	return s.l.Emit(queue, worker, "cancel_build", map[string]any{"request": request, "stopped": stopped})
}

// Ack: the worker acked its message.
func (s Stovepipe) Ack(queue, worker, message, request string) error {
	return s.l.Emit(queue, worker, "ack", map[string]any{"message": message, "request": request})
}

// Hold: the worker held its message (the gate was closed).
func (s Stovepipe) Hold(queue, worker, message, request string) error {
	return s.l.Emit(queue, worker, "hold", map[string]any{"message": message, "request": request})
}

// FinishBuild: the build system finished R's build and published
// signal(R).
func (s Stovepipe) FinishBuild(queue, request string) error {
	return s.l.Emit(queue, "build-system", "finish_build", map[string]any{"request": request})
}
