package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"slotcheck/slotlog"
)

// switches are the link model's design switches (models/src/link/design.rs)
// beyond the fetch margin, which is the fetch's wait and comes with each
// fetch.
type switches struct {
	duplicateCheck  bool
	serverClock     bool
	revisionStart   bool
	handBack        bool
	syncAck         bool
	deferDuplicates bool
	doneKey         bool
}

type config struct {
	url, name, stream, consumer, running, results, design string
	freshFor, offset                                      time.Duration
	sw                                                    switches
}

// runningValue is a running key's value (the source's CheckRunning): who
// runs which build since when; Done only with the done key.
type runningValue struct {
	Builder   string `json:"builder"`
	Build     string `json:"build"`
	StartedMs uint64 `json:"started_ms"`
	Done      bool   `json:"done,omitempty"`
}

// held is a message this builder holds: its ask and the server's delivery
// count from the ack subject.
type held struct {
	msg         *nats.Msg
	ask         string
	delivered   uint64
	consumerSeq uint64
}

// decided is a read's outcome, waiting for its start or drop.
type decided struct {
	h         held
	duplicate bool
	// done: the key read was left done by a finished build.
	done bool
	// found and revision: the key read, for a revision-checked start.
	found    bool
	revision uint64
}

// costs are what the repairs cost, counted as the reference builder counts
// them (nats/src/builder.rs, Costs).
type costs struct {
	ProbePuts uint64 `json:"probe_puts"`
	HandBacks uint64 `json:"hand_backs"`
	Deferred  uint64 `json:"deferred"`
	DonePuts  uint64 `json:"done_puts"`
}

type machine struct {
	config
	nc       *nats.Conn
	sub      *nats.Subscription
	running  nats.KeyValue
	results  nats.KeyValue
	buffer   []held
	decided  *decided
	building *held
	// landed: the ask of a late answer a fetch read (the message was
	// pending when it started), until a land step claims it.
	landed  string
	started uint64
	costs   costs
	// lg writes the log; pending holds its lines in driven mode.
	lg      *slotlog.Logger
	pending *bytes.Buffer
}

func connect(c config) (*machine, error) {
	nc, err := nats.Connect(c.url, nats.NoReconnect(), nats.Name(c.name))
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", c.url, err)
	}
	js, err := nc.JetStream()
	if err != nil {
		return nil, err
	}
	sub, err := js.PullSubscribe("", c.consumer, nats.Bind(c.stream, c.consumer))
	if err != nil {
		return nil, fmt.Errorf("pull subscribe to %s/%s: %w", c.stream, c.consumer, err)
	}
	running, err := js.KeyValue(c.running)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", c.running, err)
	}
	results, err := js.KeyValue(c.results)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", c.results, err)
	}
	return &machine{config: c, nc: nc, sub: sub, running: running, results: results}, nil
}

func heldOf(msg *nats.Msg) (held, error) {
	meta, err := msg.Metadata()
	if err != nil {
		return held{}, fmt.Errorf("a message without JetStream metadata: %w", err)
	}
	return held{msg: msg, ask: string(msg.Data), delivered: meta.NumDelivered, consumerSeq: meta.Sequence.Consumer}, nil
}

// fetch is the source's `sub.Fetch(1, nats.MaxWait(wait))`. A builder
// holding a message reads that first and asks nothing. A message already
// in the pull subscription when the fetch starts (an earlier fetch's
// answer that came after it gave up) is what nats.go's Fetch returns, with
// no request sent: logged as a late answer.
func (m *machine) fetch(wait time.Duration) (string, string, error) {
	if len(m.buffer) > 0 {
		return "buffered", m.buffer[len(m.buffer)-1].ask, nil
	}
	pending, _, err := m.sub.Pending()
	if err != nil {
		return "", "", err
	}
	msgs, err := m.sub.Fetch(1, nats.MaxWait(wait))
	if errors.Is(err, nats.ErrTimeout) || (err == nil && len(msgs) == 0) {
		m.sayFetch("")
		return "empty", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("fetch: %w", err)
	}
	h, err := heldOf(msgs[0])
	if err != nil {
		return "", "", err
	}
	m.buffer = append(m.buffer, h)
	if pending > 0 {
		m.sayAsk("late_answer", h.ask)
		m.sayServer(h)
		m.landed = h.ask
		return "buffered", h.ask, nil
	}
	m.sayFetch(h.ask)
	m.sayServer(h)
	return "got", h.ask, nil
}

// land waits up to `within` for a late answer to reach the pull
// subscription (sub.Pending), then reads it into the builder's hands with a
// Fetch, which sends no request while a message is pending. With hand-back
// a builder that builds naks it at once. A late answer a fetch already
// read counts; a message a fetch returned as its own answer (nats.go's
// Fetch returning an earlier request's answer) does not.
func (m *machine) land(within time.Duration) (string, string, error) {
	if m.landed != "" {
		ask := m.landed
		m.landed = ""
		return "landed", ask, nil
	}
	deadline := time.Now().Add(within)
	for {
		pending, _, err := m.sub.Pending()
		if err != nil {
			return "", "", err
		}
		if pending > 0 {
			break
		}
		if time.Now().After(deadline) {
			return "none", "", nil
		}
		time.Sleep(time.Millisecond)
	}
	msgs, err := m.sub.Fetch(1, nats.MaxWait(time.Until(deadline)+10*time.Millisecond))
	if err != nil || len(msgs) == 0 {
		return "none", "", nil
	}
	h, err := heldOf(msgs[0])
	if err != nil {
		return "", "", err
	}
	m.sayAsk("late_answer", h.ask)
	m.sayServer(h)
	if m.sw.handBack && m.building != nil {
		if err := m.nak(h); err != nil {
			return "", "", err
		}
		m.costs.HandBacks++
		return "handed-back", h.ask, nil
	}
	m.buffer = append(m.buffer, h)
	return "landed", h.ask, nil
}

func (m *machine) oldest() (held, bool) {
	if len(m.buffer) == 0 {
		return held{}, false
	}
	h := m.buffer[0]
	m.buffer = m.buffer[1:]
	m.sayAsk("take", h.ask)
	return h, true
}

// take: without the duplicate check, read the oldest message and run it.
func (m *machine) take() (string, error) {
	h, ok := m.oldest()
	if !ok {
		return "", nil
	}
	return h.ask, m.run(h, nil)
}

// read: with the duplicate check, read the oldest message, get its running
// key and decide (the source's runningElsewhere and duplicateOf). A key
// that cannot be read runs the check.
func (m *machine) read() (*decided, error) {
	h, ok := m.oldest()
	if !ok {
		return nil, nil
	}
	d := &decided{h: h}
	m.decided = d
	entry, err := m.running.Get(h.ask)
	if err != nil {
		m.sayKV(slotlog.KV{Ask: h.ask, Decision: slotlog.Run})
		return d, nil
	}
	d.found, d.revision = true, entry.Revision()
	var v runningValue
	if json.Unmarshal(entry.Value(), &v) != nil {
		m.sayKV(slotlog.KV{Ask: h.ask, Found: true, Decision: slotlog.Run})
		return d, nil
	}
	var age time.Duration
	if m.sw.serverClock {
		// Two times the server stamps: the key's last put and a put of
		// this builder's own probe key, read back.
		probe := "probe." + m.name
		if _, err := m.running.Put(probe, []byte(m.name)); err != nil {
			return nil, fmt.Errorf("probe put: %w", err)
		}
		m.costs.ProbePuts++
		p, err := m.running.Get(probe)
		if err != nil {
			return nil, fmt.Errorf("probe get: %w", err)
		}
		age = p.Created().Sub(entry.Created())
	} else {
		// Seen is the server's time, judged on this builder's clock.
		age = time.Now().Add(m.offset).Sub(entry.Created())
	}
	if age < 0 {
		age = 0
	}
	switch {
	case v.Done && v.Build == h.ask:
		d.duplicate, d.done = true, true
	case v.Build == h.ask && v.Builder != m.name && age < m.freshFor:
		d.duplicate = true
	}
	decision := slotlog.Run
	if d.duplicate {
		decision = slotlog.Drop
	}
	m.sayKV(slotlog.KV{Ask: h.ask, Found: true, Builder: v.Builder,
		AgeMs: int64(age / time.Millisecond), HasAge: true, Decision: decision})
	return d, nil
}

// start runs what the read decided to run. With the revision-checked start
// a put that fails (another builder wrote the key since the read) drops
// the ask as a duplicate: "conflict".
func (m *machine) start() (string, string, error) {
	d := m.decided
	if d == nil || d.duplicate {
		return "none", "", nil
	}
	m.decided = nil
	if err := m.run(d.h, d); err != nil {
		if errors.Is(err, errConflict) {
			return "conflict", d.h.ask, m.dropHeld(d.h, false)
		}
		return "", "", err
	}
	return "runs", d.h.ask, nil
}

var errConflict = errors.New("the revision-checked put failed")

func (m *machine) value(ask string, done bool) []byte {
	b, _ := json.Marshal(runningValue{Builder: m.name, Build: ask, StartedMs: m.started, Done: done})
	return b
}

// run puts the running key and starts the build. With hand-back whatever
// else the builder holds is naked now that it is busy.
func (m *machine) run(h held, d *decided) error {
	m.started = uint64(time.Now().UnixMilli())
	var err error
	switch {
	case m.sw.revisionStart && d != nil && d.found:
		_, err = m.running.Update(h.ask, m.value(h.ask, false), d.revision)
	case m.sw.revisionStart && d != nil:
		_, err = m.running.Create(h.ask, m.value(h.ask, false))
	default:
		_, err = m.running.Put(h.ask, m.value(h.ask, false))
	}
	if err != nil && m.sw.revisionStart {
		return errConflict
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", h.ask, err)
	}
	m.sayAsk("put", h.ask)
	m.sayAsk("build_start", h.ask)
	m.building = &h
	if m.sw.handBack {
		rest := m.buffer
		m.buffer = nil
		for _, r := range rest {
			if err := m.nak(r); err != nil {
				return err
			}
			m.costs.HandBacks++
		}
	}
	return nil
}

// drop acks what the read found a duplicate (or, deferring duplicates,
// leaves it to its ack wait unless the key was left done).
func (m *machine) drop() (string, error) {
	d := m.decided
	if d == nil || !d.duplicate {
		return "", nil
	}
	m.decided = nil
	return d.h.ask, m.dropHeld(d.h, d.done)
}

func (m *machine) dropHeld(h held, done bool) error {
	if m.sw.deferDuplicates && !done {
		m.costs.Deferred++
		return nil
	}
	return m.ack(h, false)
}

func (m *machine) ack(h held, lose bool) error {
	if lose && !m.sw.syncAck {
		return nil // the fault: the ack never leaves
	}
	if m.sw.syncAck {
		// AckSync, retried until the server confirms it (a lost first
		// try included).
		var err error
		for try := 0; try < 10; try++ {
			if lose && try == 0 {
				continue
			}
			if err = h.msg.AckSync(nats.AckWait(time.Second)); err == nil || errors.Is(err, nats.ErrMsgAlreadyAckd) {
				err = nil
				break
			}
		}
		if err != nil {
			return fmt.Errorf("AckSync %s: %w", h.ask, err)
		}
	} else if err := h.msg.Ack(); err != nil {
		return fmt.Errorf("ack %s: %w", h.ask, err)
	}
	if err := m.nc.Flush(); err != nil {
		return err
	}
	m.sayAsk("ack", h.ask)
	return nil
}

func (m *machine) nak(h held) error {
	if err := h.msg.Nak(); err != nil {
		return fmt.Errorf("nak %s: %w", h.ask, err)
	}
	if err := m.nc.Flush(); err != nil {
		return err
	}
	m.sayAsk("nak", h.ask)
	return nil
}

// heartbeat puts the running key again and says in-progress (fire and
// forget, as the source).
func (m *machine) heartbeat() (string, error) {
	if m.building == nil {
		return "", nil
	}
	h := *m.building
	if m.sw.handBack {
		// What landed since the last look goes back: a message pending in
		// the pull subscription is what Fetch returns without asking.
		if pending, _, _ := m.sub.Pending(); pending > 0 {
			if msgs, err := m.sub.Fetch(1, nats.MaxWait(10*time.Millisecond)); err == nil {
				for _, msg := range msgs {
					if late, err := heldOf(msg); err == nil {
						m.sayAsk("late_answer", late.ask)
						m.sayServer(late)
						if err := m.nak(late); err != nil {
							return "", err
						}
						m.costs.HandBacks++
					}
				}
			}
		}
	}
	if _, err := m.running.Put(h.ask, m.value(h.ask, false)); err != nil {
		return "", fmt.Errorf("put %s: %w", h.ask, err)
	}
	if err := h.msg.InProgress(); err != nil {
		return "", fmt.Errorf("in-progress %s: %w", h.ask, err)
	}
	if err := m.nc.Flush(); err != nil {
		return "", err
	}
	m.sayAsk("heartbeat", h.ask)
	return h.ask, nil
}

// finish announces the result, acks, and deletes the running key (or,
// with the done key, puts it marked done).
func (m *machine) finish(loseAck bool) (string, error) {
	if m.building == nil {
		return "", nil
	}
	h := *m.building
	m.building = nil
	if _, err := m.results.Put(h.ask, []byte(m.name)); err != nil {
		return "", fmt.Errorf("result %s: %w", h.ask, err)
	}
	m.sayAsk("build_finish", h.ask)
	if err := m.ack(h, loseAck); err != nil {
		return "", err
	}
	if m.sw.doneKey {
		if _, err := m.running.Put(h.ask, m.value(h.ask, true)); err != nil {
			return "", fmt.Errorf("put %s done: %w", h.ask, err)
		}
		m.costs.DonePuts++
		return h.ask, nil
	}
	if err := m.running.Delete(h.ask); err != nil {
		return "", fmt.Errorf("delete %s: %w", h.ask, err)
	}
	m.sayAsk("kv_delete", h.ask)
	return h.ask, nil
}

// nakOldest is the nak fault: the oldest message handed back at once
// instead of read.
func (m *machine) nakOldest() (string, error) {
	if len(m.buffer) == 0 {
		return "", nil
	}
	h := m.buffer[0]
	m.buffer = m.buffer[1:]
	return h.ask, m.nak(h)
}
