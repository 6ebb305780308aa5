package main

// The events of `slotcheck validate`'s link log (docs/validate.md), written
// through slotlog: what each nats.go call returned, as this builder saw it.
// Driven, the lines go into a buffer that each answer carries back; free,
// into this process's own file.

import (
	"bytes"
	"encoding/json"

	"slotcheck/slotlog"
)

func (m *machine) link() slotlog.Link { return m.lg.Link() }

func (m *machine) sayAsk(tag, ask string) {
	k := m.link()
	switch tag {
	case "late_answer":
		k.LateAnswer(m.stream, m.name, ask)
	case "take":
		k.Take(m.stream, m.name, ask)
	case "put":
		k.Put(m.stream, m.name, ask)
	case "build_start":
		k.BuildStart(m.stream, m.name, ask)
	case "heartbeat":
		k.Heartbeat(m.stream, m.name, ask)
	case "build_finish":
		k.BuildFinish(m.stream, m.name, ask)
	case "ack":
		k.Ack(m.stream, m.name, ask)
	case "nak":
		k.Nak(m.stream, m.name, ask)
	case "kv_delete":
		k.KvDelete(m.stream, m.name, ask)
	default:
		panic("no such link event: " + tag)
	}
}

func (m *machine) sayFetch(got string) {
	if got == "" {
		m.link().FetchNone(m.stream, m.name)
		return
	}
	m.link().Fetch(m.stream, m.name, got)
}

func (m *machine) sayKV(kv slotlog.KV) {
	m.link().KvGet(m.stream, m.name, kv)
}

// sayServer records the server's own delivery count of a message and the
// consumer's sequence of that delivery, from its ack subject
// (msg.Metadata()).
func (m *machine) sayServer(h held) {
	m.link().ServerSeq(m.stream, m.name, h.ask, h.delivered, h.consumerSeq)
}

// takeEvents hands over the lines logged since the last call (driven
// mode), each a whole log line.
func (m *machine) takeEvents() []json.RawMessage {
	events := []json.RawMessage{}
	if m.pending == nil {
		return events
	}
	for _, line := range bytes.Split(bytes.TrimSpace(m.pending.Bytes()), []byte("\n")) {
		if len(line) > 0 {
			events = append(events, json.RawMessage(append([]byte{}, line...)))
		}
	}
	m.pending.Reset()
	return events
}
