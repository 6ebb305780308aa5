// Package slotlog writes the event log that `slotcheck validate` checks a
// service against: one JSON object per line (NDJSON), a header first, in
// the format of docs/validate.md (the Rust types are
// models/src/events.rs). Standard library only.
//
// One Logger per process writes one file. Every line names the process
// (`process`) and carries the process's own sequence number (`seq`, from
// 1, in the order the lines were written), so that the files of several
// processes can be merged and each process's lines kept in its own order.
// A line is written after the call it reports has returned, with what it
// returned: the rows read with their versions, whether a CAS affected one
// row, whether a build started. Never what the service expected.
//
// The stovepipe model's events are methods of Stovepipe, the link model's
// of Link; Emit writes any other event (a field slotlog does not know yet).
package slotlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// Model names.
const (
	ModelStovepipe = "stovepipe"
	ModelLink      = "link"
)

// Header is the log's first line: the model and the system's
// configuration, which validate reads from the log rather than from flags.
// Zero fields are left out.
type Header struct {
	// Model is "stovepipe" or "link" (required).
	Model string
	// Design is what the system claims to be, for the record.
	Design string
	// Stovepipe: K, the queue's limit of builds in flight (required).
	MaxConcurrent int
	// Stovepipe: the broker's deliveries before a message is
	// dead-lettered, SQS maxReceiveCount (required).
	MaxDeliveries int
	// Steps the system does not log: "deliver", "finish_build".
	Unlogged []string
	// Link: real milliseconds per model tick (5 s of the source's time).
	MsPerTick int
	// Link: the stream's max_deliver (required).
	MaxDeliver int
	// Link: the most a builder's clock may be off the log's, seconds.
	SkewS int
	// Link: ack wait, heartbeat period and freshness, seconds of the
	// source's time, when they differ from the source's 60, 10 and 25.
	AckWaitS, HeartbeatEveryS, FreshForS int
	// Link: the most a heartbeat may be late, seconds of the source's
	// time, and the most a call's answer may take on the network, ms.
	HeartbeatLateS, NetworkDelayMs int
	// Link: the nats-server's version, as the connection reports it
	// (nats.Conn.ConnectedServerVersion): before 2.10.14 a server may
	// hand a message out again counted 1, which validate then allows.
	NatsServer string
	// The queues (stovepipe) or streams (link) the log must have, or how
	// many: a queue that logged nothing is named, not silently absent.
	Queues       []string
	ExpectQueues int
	// Two lines of different processes whose ts_ms differ by more than
	// this are in the order of their times (0: times order nothing).
	OrderSlackMs int
	// Extra fields for the header (fields validate learns later); they
	// must not clash with the above.
	Extra map[string]any
}

func (h Header) fields() (map[string]any, error) {
	if h.Model != ModelStovepipe && h.Model != ModelLink {
		return nil, fmt.Errorf("slotlog: header model %q: want %q or %q", h.Model, ModelStovepipe, ModelLink)
	}
	f := map[string]any{}
	for k, v := range h.Extra {
		f[k] = v
	}
	f["event"] = "header"
	f["model"] = h.Model
	put := func(name string, v int) {
		if v != 0 {
			f[name] = v
		}
	}
	if h.Design != "" {
		f["design"] = h.Design
	}
	put("max_concurrent", h.MaxConcurrent)
	put("max_deliveries", h.MaxDeliveries)
	if len(h.Unlogged) > 0 {
		f["unlogged"] = h.Unlogged
	}
	put("ms_per_tick", h.MsPerTick)
	put("max_deliver", h.MaxDeliver)
	put("skew_s", h.SkewS)
	put("ack_wait_s", h.AckWaitS)
	put("heartbeat_every_s", h.HeartbeatEveryS)
	put("fresh_for_s", h.FreshForS)
	put("heartbeat_late_s", h.HeartbeatLateS)
	put("network_delay_ms", h.NetworkDelayMs)
	if h.NatsServer != "" {
		f["nats_server"] = h.NatsServer
	}
	if len(h.Queues) > 0 {
		f["queues"] = h.Queues
	}
	put("expect_queues", h.ExpectQueues)
	put("order_slack_ms", h.OrderSlackMs)
	return f, nil
}

// Logger writes one process's log. Its methods are safe for concurrent
// use; lines are written whole, in the order of the calls, each with the
// next sequence number.
type Logger struct {
	mu      sync.Mutex
	out     io.Writer
	closer  io.Closer
	process string
	seq     uint64
	now     func() time.Time
	err     error
}

// Option changes a Logger.
type Option func(*Logger)

// WithClock makes the Logger read time from now (tests; a service whose
// clocks are corrected to one). The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(l *Logger) { l.now = now }
}

// New writes the header to out and returns a Logger for process (a name
// unique among the processes whose logs are merged, e.g. "worker-2" or
// "host-a/1234").
func New(out io.Writer, process string, h Header, opts ...Option) (*Logger, error) {
	if process == "" {
		return nil, fmt.Errorf("slotlog: a process needs a name")
	}
	fields, err := h.fields()
	if err != nil {
		return nil, err
	}
	l := &Logger{out: out, process: process, now: time.Now}
	for _, o := range opts {
		o(l)
	}
	if err := l.line(fields); err != nil {
		return nil, err
	}
	return l, nil
}

// Create makes dir (if needed) and the file dir/<process>.ndjson (an
// existing one is truncated), writes the header, and returns its Logger:
// one file per process. Close it at the end.
func Create(dir, process string, h Header, opts ...Option) (*Logger, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, FileName(process)))
	if err != nil {
		return nil, err
	}
	l, err := New(f, process, h, opts...)
	if err != nil {
		f.Close()
		return nil, err
	}
	l.closer = f
	return l, nil
}

// FileName is the file Create writes for process: its name, with path
// separators replaced, and ".ndjson".
func FileName(process string) string {
	b := []byte(process)
	for i, c := range b {
		if c == '/' || c == '\\' || c == os.PathSeparator {
			b[i] = '_'
		}
	}
	return string(b) + ".ndjson"
}

// Process is the name this Logger writes on every line.
func (l *Logger) Process() string { return l.process }

// Err is the first write error, if any (later lines are dropped).
func (l *Logger) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close closes the file of a Logger made by Create and returns the first
// error.
func (l *Logger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closer != nil {
		if err := l.closer.Close(); err != nil && l.err == nil {
			l.err = err
		}
		l.closer = nil
	}
	return l.err
}

// Emit writes one event line: queue ("" for a log of one queue), actor
// (who acted), event (the tag) and the event's own fields. It adds
// `process`, `seq` and `ts_ms`. The fields map is not kept.
func (l *Logger) Emit(queue, actor, event string, fields map[string]any) error {
	line := make(map[string]any, len(fields)+6)
	for k, v := range fields {
		line[k] = v
	}
	if queue != "" {
		line["queue"] = queue
	}
	line["actor"] = actor
	line["event"] = event
	line["process"] = l.process
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	line["seq"] = l.seq
	line["ts_ms"] = l.now().UnixMilli()
	return l.write(line)
}

func (l *Logger) line(fields map[string]any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.write(fields)
}

// write encodes one line; the caller holds mu.
func (l *Logger) write(fields map[string]any) error {
	if l.err != nil {
		return l.err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil {
		l.err = err
		return err
	}
	if _, err := l.out.Write(buf.Bytes()); err != nil {
		l.err = err
		return err
	}
	return nil
}

// set is an owner set as a JSON list: never null (an empty set is []),
// sorted so that two logs of one run read alike.
func set(ids []string) []string {
	out := append([]string{}, ids...)
	sort.Strings(out)
	return out
}

// Join opens a log file that several processes write (appending, created
// if missing), for process: it writes no header (the file's creator
// does). Each line is one write, so lines of processes appending at once
// do not mix; their order across processes is the order of the writes.
func Join(path, process string, opts ...Option) (*Logger, error) {
	if process == "" {
		return nil, fmt.Errorf("slotlog: a process needs a name")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	l := &Logger{out: f, closer: f, process: process, now: time.Now}
	for _, o := range opts {
		o(l)
	}
	return l, nil
}
