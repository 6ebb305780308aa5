package main

import (
	"testing"
	"time"
)

// The log's clock counts from the start line's milliseconds on the
// monotonic clock; a start line without a time leaves the wall clock.
func TestRunClockCountsFromTheStartLine(t *testing.T) {
	var c runClock
	c.begin("start 1234")
	if !c.set || c.base != 1234 {
		t.Fatalf("begin(\"start 1234\"): base %d, set %v", c.base, c.set)
	}
	// A wall-clock step would move time.Now() but not time.Since of a
	// reading that carries the monotonic clock.
	c.from = c.from.Add(-250 * time.Millisecond)
	if ms := c.now().UnixMilli(); ms < 1484 || ms > 1484+1000 {
		t.Fatalf("250 ms after the start line: ts %d, want about 1484", ms)
	}
	var wall runClock
	wall.begin("start")
	if wall.set {
		t.Fatal("a start line without a time set the run's clock")
	}
	if d := time.Since(wall.now()); d < 0 || d > time.Minute {
		t.Fatalf("without a time the clock is the wall clock, off by %v", d)
	}
}
