package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// slotcheck faults (SIGKILL, SIGSTOP) only a builder whose last line names
// what it builds: one asleep in its build. Under way in a heartbeat or its
// finish, the line names no build, though the builder still holds it.
func TestOnlyABuilderAsleepInItsBuildSaysWhatItBuilds(t *testing.T) {
	var out bytes.Buffer
	f := &free{m: &machine{building: &held{ask: "A3"}}, out: bufio.NewWriter(&out)}
	last := func() status {
		t.Helper()
		lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
		var s status
		if err := json.Unmarshal(lines[len(lines)-1], &s); err != nil {
			t.Fatalf("not a status line: %v", err)
		}
		return s
	}
	holds := func(s status, ask string) bool {
		for _, h := range s.Held {
			if h == ask {
				return true
			}
		}
		return false
	}
	f.say("start", nil)
	if s := last(); s.Building != "A3" || !holds(s, "A3") {
		t.Fatalf("asleep in its build: %+v", s)
	}
	f.heartbeating = true
	f.say("heartbeat due", nil)
	if s := last(); s.Building != "" || !holds(s, "A3") {
		t.Fatalf("its heartbeat under way: %+v", s)
	}
	f.heartbeating = false
	f.say("heartbeat", nil)
	if s := last(); s.Building != "A3" {
		t.Fatalf("asleep again after its heartbeat: %+v", s)
	}
	f.finishing = true
	f.say("build over", nil)
	if s := last(); s.Building != "" {
		t.Fatalf("its finish under way: %+v", s)
	}
}
