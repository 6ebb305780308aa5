package slotlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock returns the times of ts, one per call: a log's ts_ms as written.
func clock(ts ...int64) func() time.Time {
	i := 0
	return func() time.Time {
		t := ts[i]
		i++
		return time.UnixMilli(t)
	}
}

func lines(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", len(out)+1, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// sameAs checks that got (slotlog's output) is want (a log of the book)
// line by line as JSON values, once slotlog's own `process` and `seq` are
// checked and taken out.
func sameAs(t *testing.T, got string, wantFile, process string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "examples", wantFile))
	if err != nil {
		t.Fatal(err)
	}
	g, w := lines(t, got), lines(t, string(text))
	if len(g) != len(w) {
		t.Fatalf("%d lines, the book's %s has %d", len(g), wantFile, len(w))
	}
	for i := range g {
		if i > 0 {
			if g[i]["process"] != process || g[i]["seq"] != float64(i) {
				t.Errorf("line %d: process %v seq %v, want %s %d", i+1, g[i]["process"], g[i]["seq"], process, i)
			}
			delete(g[i], "process")
			delete(g[i], "seq")
		} else if _, ok := g[i]["seq"]; ok {
			t.Errorf("the header has a seq")
		}
		if !reflect.DeepEqual(g[i], w[i]) {
			t.Errorf("line %d:\n got  %v\n want %v", i+1, g[i], w[i])
		}
	}
}

// The book's stovepipe example (docs/examples/stovepipe.ndjson, which
// tests/validate.rs validates), written through slotlog.
func TestStovepipeWritesTheBooksExample(t *testing.T) {
	var buf bytes.Buffer
	l, err := New(&buf, "svc-1", Header{
		Model: ModelStovepipe, Design: "owner-keyed-atomic-admit-dlq-cancels",
		MaxConcurrent: 1, MaxDeliveries: 2,
	}, WithClock(clock(1000, 1003, 1010, 1015, 1020, 1022, 1500, 1502, 1510, 1520,
		9000, 9001, 9005, 9010, 9012, 9013, 9020, 9025, 9030, 9032, 9033)))
	if err != nil {
		t.Fatal(err)
	}
	s, q := l.Stovepipe(), ""
	s.Arrive(q, "pr-101")
	s.Deliver(q, Process, "pr-101", "w-1", 1)
	s.Read(q, "w-1", RequestRow{"pr-101", Accepted, 1}, OwnersRow(1, nil), "pr-101")
	s.Transaction(q, "w-1", []Write{
		{Row: RowQueue, ExpectedVersion: 1, Set: SetOwners([]string{"pr-101"})},
		{Row: RowRequest, Request: "pr-101", ExpectedVersion: 1, Set: SetState(Processing)},
	}, true, StepClaim)
	s.Submit(q, "w-1", "pr-101", true)
	s.Ack(q, "w-1", Process, "pr-101")
	s.Arrive(q, "pr-102")
	s.Deliver(q, Process, "pr-102", "w-2", 1)
	s.Read(q, "w-2", RequestRow{"pr-102", Accepted, 1}, OwnersRow(2, []string{"pr-101"}), "pr-102")
	s.Hold(q, "w-2", Process, "pr-102")
	s.FinishBuild(q, "pr-101")
	s.Deliver(q, Signal, "pr-101", "w-3", 1)
	s.Read(q, "w-3", RequestRow{"pr-101", Processing, 2}, OwnersRow(2, []string{"pr-101"}), "pr-102")
	s.CAS(q, "w-3", Write{Row: RowQueue, ExpectedVersion: 2, Set: SetOwners(nil)}, true, StepRelease)
	s.CAS(q, "w-3", Write{Row: RowRequest, Request: "pr-101", ExpectedVersion: 2, Set: SetState(Succeeded)}, true, StepWriteOutcome)
	s.Ack(q, "w-3", Signal, "pr-101")
	s.Deliver(q, Process, "pr-102", "w-4", 1)
	s.Read(q, "w-4", RequestRow{"pr-102", Accepted, 1}, OwnersRow(3, []string{}), "pr-102")
	s.Transaction(q, "w-4", []Write{
		{Row: RowQueue, ExpectedVersion: 3, Set: SetOwners([]string{"pr-102"})},
		{Row: RowRequest, Request: "pr-102", ExpectedVersion: 1, Set: SetState(Processing)},
	}, true, StepClaim)
	s.Submit(q, "w-4", "pr-102", true)
	if err := s.Ack(q, "w-4", Process, "pr-102"); err != nil {
		t.Fatal(err)
	}
	sameAs(t, buf.String(), "stovepipe.ndjson", "svc-1")
}

// The book's link example (docs/examples/link.ndjson), written through
// slotlog.
func TestLinkWritesTheBooksExample(t *testing.T) {
	var buf bytes.Buffer
	l, err := New(&buf, "b1-host", Header{
		Model: ModelLink, Design: "after-1649", MsPerTick: 5000, MaxDeliver: 3,
	}, WithClock(clock(0, 40, 41, 45, 50, 52, 10050, 14000, 14003, 14006, 14100)))
	if err != nil {
		t.Fatal(err)
	}
	k, s := l.Link(), ""
	k.Publish(s, "check-881")
	k.Fetch(s, "b1", "check-881")
	k.Take(s, "b1", "check-881")
	k.KvGet(s, "b1", KV{Ask: "check-881", Found: false, Decision: Run})
	k.Put(s, "b1", "check-881")
	k.BuildStart(s, "b1", "check-881")
	k.Heartbeat(s, "b1", "check-881")
	k.BuildFinish(s, "b1", "check-881")
	k.Ack(s, "b1", "check-881")
	k.KvDelete(s, "b1", "check-881")
	k.Server(s, "server", "check-881", 1)
	sameAs(t, buf.String(), "link.ndjson", "b1-host")
}

// Empty sets are [] (a null set is what the book's first sketch wrote),
// a counter design's row has its count, values set only what they name.
func TestFieldsAsValidateReadsThem(t *testing.T) {
	var buf bytes.Buffer
	l, _ := New(&buf, "p", Header{Model: ModelStovepipe, MaxConcurrent: 2, MaxDeliveries: 3,
		Unlogged: []string{"finish_build"}}, WithClock(clock(5, 6, 7, 8, 9, 10, 11)))
	s := l.Stovepipe()
	s.Read("q1", "w", RequestRow{"r", Accepted, 1000}, OwnersRow(7, nil), "r")
	s.Read("q1", "w", RequestRow{"r", Accepted, 1000}, CountRow(7, 0), "r")
	s.CAS("q1", "w", Write{Row: RowQueue, ExpectedVersion: 7, Set: SetCount(0)}, false, "")
	s.Reap("q1", "w", 8, nil, true)
	s.Deliver("q1", Dead, "r", "w2", 0)
	s.CancelBuild("q1", "w2", "r", false)
	l.Link().FetchNone("s", "b1")
	want := []string{
		`{"event":"header","max_concurrent":2,"max_deliveries":3,"model":"stovepipe","unlogged":["finish_build"]}`,
		`{"actor":"w","event":"read","head":"r","process":"p","queue":"q1","queue_row":{"in_flight_request_ids":[],"version":7},"request":{"id":"r","state":"accepted","version":1000},"seq":1,"ts_ms":5}`,
		`{"actor":"w","event":"read","head":"r","process":"p","queue":"q1","queue_row":{"in_flight_count":0,"version":7},"request":{"id":"r","state":"accepted","version":1000},"seq":2,"ts_ms":6}`,
		`{"actor":"w","event":"cas","expected_version":7,"process":"p","queue":"q1","row":"queue","seq":3,"set":{"in_flight_count":0},"ts_ms":7,"won":false}`,
		`{"actor":"w","event":"reap","expected_version":8,"process":"p","queue":"q1","removed":[],"seq":4,"ts_ms":8,"won":true}`,
		`{"actor":"broker","event":"deliver","message":"dead","process":"p","queue":"q1","request":"r","seq":5,"ts_ms":9,"worker":"w2"}`,
		`{"actor":"w2","event":"cancel_build","process":"p","queue":"q1","request":"r","seq":6,"stopped":false,"ts_ms":10}`,
		`{"actor":"b1","event":"fetch","got":null,"process":"p","queue":"s","seq":7,"ts_ms":11}`,
	}
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Concurrent writers: every line whole, the sequence 1..n in file order.
func TestConcurrentLinesAreWholeAndNumberedInFileOrder(t *testing.T) {
	var buf bytes.Buffer
	l, _ := New(&buf, "many", Header{Model: ModelLink, MaxDeliver: 3})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				l.Link().Take("s", fmt.Sprintf("b%d", g), fmt.Sprintf("a%d", i))
			}
		}(g)
	}
	wg.Wait()
	ls := lines(t, buf.String())
	if len(ls) != 1+8*200 {
		t.Fatalf("%d lines", len(ls))
	}
	for i, m := range ls[1:] {
		if m["seq"] != float64(i+1) {
			t.Fatalf("line %d: seq %v", i+2, m["seq"])
		}
	}
}

// One file per process: Create writes dir/<process>.ndjson, header first.
func TestCreateWritesOneFilePerProcess(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"worker-1", "host/2"} {
		l, err := Create(dir, p, Header{Model: ModelStovepipe, MaxConcurrent: 1, MaxDeliveries: 2})
		if err != nil {
			t.Fatal(err)
		}
		l.Stovepipe().Arrive("", "r-"+p)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"worker-1.ndjson", "host_2.ndjson"} {
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		ls := lines(t, string(text))
		if len(ls) != 2 || ls[0]["event"] != "header" || ls[1]["seq"] != float64(1) {
			t.Errorf("%s: %s", name, text)
		}
	}
}

// The header's fields by validate's names, zero ones left out.
func TestTheHeadersFields(t *testing.T) {
	var buf bytes.Buffer
	if _, err := New(&buf, "p", Header{Model: ModelLink, MaxDeliver: 3, MsPerTick: 500, SkewS: 5,
		AckWaitS: 30, HeartbeatEveryS: 10, FreshForS: 25, HeartbeatLateS: 15, NetworkDelayMs: 40,
		NatsServer: "2.9.10", Queues: []string{"s1", "s2"}, ExpectQueues: 2, OrderSlackMs: 100}); err != nil {
		t.Fatal(err)
	}
	want := `{"ack_wait_s":30,"event":"header","expect_queues":2,"fresh_for_s":25,"heartbeat_every_s":10,` +
		`"heartbeat_late_s":15,"max_deliver":3,"model":"link","ms_per_tick":500,"nats_server":"2.9.10",` +
		`"network_delay_ms":40,"order_slack_ms":100,"queues":["s1","s2"],"skew_s":5}` + "\n"
	if buf.String() != want {
		t.Errorf("got  %s\nwant %s", buf.String(), want)
	}
}

func TestABadHeaderIsRefused(t *testing.T) {
	if _, err := New(&bytes.Buffer{}, "p", Header{Model: "stovepip"}); err == nil {
		t.Error("a misspelt model was accepted")
	}
	if _, err := New(&bytes.Buffer{}, "", Header{Model: ModelLink}); err == nil {
		t.Error("a process without a name was accepted")
	}
}
