package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// command is one line of the driven protocol from slotcheck.
type command struct {
	Op       string `json:"op"`
	WaitMs   int64  `json:"wait_ms"`
	WithinMs int64  `json:"within_ms"`
	LoseAck  bool   `json:"lose_ack"`
}

type heldJSON struct {
	Ask       string `json:"ask"`
	Delivered uint64 `json:"delivered"`
}

// answer is one line back: what the step did, the events it logged, and
// what the builder holds after it.
type answer struct {
	Ok       bool              `json:"ok"`
	Error    string            `json:"error,omitempty"`
	Result   string            `json:"result,omitempty"`
	Ask      string            `json:"ask,omitempty"`
	Decision string            `json:"decision,omitempty"`
	Events   []json.RawMessage `json:"events"`
	Buffer   []heldJSON        `json:"buffer"`
	Decided  string            `json:"decided,omitempty"`
	Building string            `json:"building,omitempty"`
}

// drive answers commands until its input closes ("quit" or EOF: exit 0) or
// a crash is asked (the process exits at once, nothing acked).
func drive(m *machine, in io.Reader, out io.Writer) int {
	lines := bufio.NewScanner(in)
	w := bufio.NewWriter(out)
	send := func(a answer) {
		a.Events = m.takeEvents()
		a.Buffer = []heldJSON{}
		for _, h := range m.buffer {
			a.Buffer = append(a.Buffer, heldJSON{h.ask, h.delivered})
		}
		if m.decided != nil {
			a.Decided = m.decided.h.ask
		}
		if m.building != nil {
			a.Building = m.building.ask
		}
		b, _ := json.Marshal(a)
		w.Write(b)
		w.WriteByte('\n')
		w.Flush()
	}
	send(answer{Ok: true, Result: "ready"})
	for lines.Scan() {
		var c command
		if err := json.Unmarshal(lines.Bytes(), &c); err != nil {
			send(answer{Error: fmt.Sprintf("not a command: %v", err)})
			continue
		}
		a, err := step(m, c)
		if c.Op == "quit" {
			break
		}
		if err != nil {
			a = answer{Error: err.Error()}
		} else {
			a.Ok = true
		}
		send(a)
	}
	m.nc.Close()
	return 0
}

func step(m *machine, c command) (answer, error) {
	var a answer
	var err error
	switch c.Op {
	case "fetch":
		a.Result, a.Ask, err = m.fetch(time.Duration(c.WaitMs) * time.Millisecond)
	case "land":
		a.Result, a.Ask, err = m.land(time.Duration(c.WithinMs) * time.Millisecond)
	case "take":
		a.Ask, err = m.take()
	case "read":
		var d *decided
		d, err = m.read()
		if d != nil {
			a.Ask, a.Decision = d.h.ask, "run"
			if d.duplicate {
				a.Decision = "drop"
			}
		}
	case "start":
		a.Result, a.Ask, err = m.start()
	case "drop":
		a.Ask, err = m.drop()
	case "heartbeat":
		a.Ask, err = m.heartbeat()
	case "finish":
		a.Ask, err = m.finish(c.LoseAck)
	case "nak":
		a.Ask, err = m.nakOldest()
	case "crash":
		// Dies: no ack, no goodbye; the server sees the connection drop.
		exitNow()
	case "quit":
	default:
		err = fmt.Errorf("unknown op %q", c.Op)
	}
	return a, err
}
