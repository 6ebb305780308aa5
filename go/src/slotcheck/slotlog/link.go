package slotlog

// The link model's events (docs/validate.md, "Link events";
// models/src/events/link.rs): what each JetStream and KV call of a
// builder returned, as the builder saw it. The actor is the builder's id;
// queue is the stream.

// Decisions a builder takes from the running key it read.
const (
	Run  = "run"
	Drop = "drop"
)

// Link writes the link model's events to a Logger.
type Link struct{ l *Logger }

// Link gives the link events of l.
func (l *Logger) Link() Link { return Link{l} }

func (k Link) ask(stream, builder, event, ask string) error {
	return k.l.Emit(stream, builder, event, map[string]any{"ask": ask})
}

// Publish: the client published ask on the work queue.
func (k Link) Publish(stream, ask string) error { return k.ask(stream, "client", "publish", ask) }

// Fetch: a pull request returned the message of ask.
func (k Link) Fetch(stream, builder, ask string) error {
	return k.l.Emit(stream, builder, "fetch", map[string]any{"got": ask})
}

// FetchNone: a pull request gave up empty-handed (`got: null`).
func (k Link) FetchNone(stream, builder string) error {
	return k.l.Emit(stream, builder, "fetch", map[string]any{"got": nil})
}

// LateAnswer: a message reached the builder's subscription after its fetch
// gave up; log it when the builder next fetches or reads.
func (k Link) LateAnswer(stream, builder, ask string) error {
	return k.ask(stream, builder, "late_answer", ask)
}

// Take: the builder read the oldest message of its buffer.
func (k Link) Take(stream, builder, ask string) error { return k.ask(stream, builder, "take", ask) }

// KV is what a KV get of an ask's running key returned.
type KV struct {
	Ask   string
	Found bool
	// When found: the builder the key names and its age by this builder's
	// clock, in ms (HasAge: the age is known).
	Builder  string
	AgeMs    int64
	HasAge   bool
	Decision string // Run or Drop
}

// KvGet: the KV get of the running key, and the decision taken from it.
func (k Link) KvGet(stream, builder string, kv KV) error {
	f := map[string]any{"ask": kv.Ask, "found": kv.Found, "decision": kv.Decision}
	if kv.Found && kv.Builder != "" {
		f["builder"] = kv.Builder
	}
	if kv.Found && kv.HasAge {
		f["age_ms"] = kv.AgeMs
	}
	return k.l.Emit(stream, builder, "kv_get", f)
}

// Put: the running key was put (at a start; the done key at a finish).
func (k Link) Put(stream, builder, ask string) error { return k.ask(stream, builder, "put", ask) }

// BuildStart: the build started.
func (k Link) BuildStart(stream, builder, ask string) error {
	return k.ask(stream, builder, "build_start", ask)
}

// Heartbeat: the key put again and an in-progress sent.
func (k Link) Heartbeat(stream, builder, ask string) error {
	return k.ask(stream, builder, "heartbeat", ask)
}

// BuildFinish: the build finished and its result was announced.
func (k Link) BuildFinish(stream, builder, ask string) error {
	return k.ask(stream, builder, "build_finish", ask)
}

// Ack: the ack was sent (a lost ack is one not sent: log nothing).
func (k Link) Ack(stream, builder, ask string) error { return k.ask(stream, builder, "ack", ask) }

// Nak: the message was handed back at once.
func (k Link) Nak(stream, builder, ask string) error { return k.ask(stream, builder, "nak", ask) }

// KvDelete: the running key was deleted at a finish.
func (k Link) KvDelete(stream, builder, ask string) error {
	return k.ask(stream, builder, "kv_delete", ask)
}

// Server: the server's delivery count of ask (from the message's metadata
// or consumer info); after a fetch or a late answer, the count of the
// delivery it got.
func (k Link) Server(stream, builder, ask string, numDelivered uint64) error {
	return k.l.Emit(stream, builder, "server", map[string]any{"ask": ask, "num_delivered": numDelivered})
}

// ServerSeq is Server with the consumer's delivery sequence of that
// delivery (the ack subject's, `Sequence.Consumer` of nats.go's
// `Metadata()`): it counts every delivery of the consumer, so an answer
// delivered before others and logged after them shows it was held.
func (k Link) ServerSeq(stream, builder, ask string, numDelivered, consumerSeq uint64) error {
	return k.l.Emit(stream, builder, "server", map[string]any{"ask": ask, "num_delivered": numDelivered, "consumer_seq": consumerSeq})
}
