package main

// The events of `slotcheck validate`'s link log (docs/validate.md): what
// each nats.go call returned, as this builder saw it. Each is the line's
// fields without its header (model, queue, ts_ms, actor), which the reader
// of the driven protocol adds.

type event map[string]interface{}

func (m *machine) say(e event) {
	m.events = append(m.events, e)
}

func (m *machine) sayAsk(tag, ask string) {
	m.say(event{"event": tag, "ask": ask})
}

// sayServer records the server's own delivery count of a message, from its
// ack subject (msg.Metadata()).
func (m *machine) sayServer(h held) {
	m.say(event{"event": "server", "ask": h.ask, "num_delivered": h.delivered})
}
