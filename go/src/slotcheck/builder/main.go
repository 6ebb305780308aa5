// Command slotcheck-builder is a link builder written on nats.go, as a team
// running the source's builders would write one: a pull subscription bound
// to the work queue's durable consumer, Fetch with MaxWait, the bucket of
// checks running through nats.go's KeyValue, Ack/AckSync/Nak/InProgress on
// the messages it holds. Its design is the set of switches of the link
// model's designs (docs/link.md), given as flags by slotcheck, which reads
// them from the model's own design value.
//
// In driven mode it makes one step at a time on command, one JSON line in
// on its standard input and one JSON line out on its standard output
// (docs/real-jetstream.md, "The Go builder"). In free mode it runs as a
// service, writing its log into a file of its own (free.go). Either way it
// exits when its input closes, so it never outlives the slotcheck that
// started it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"time"

	"slotcheck/slotlog"
)

func main() {
	var c config
	flag.StringVar(&c.url, "url", "nats://127.0.0.1:4222", "the server (or a proxy in front of it)")
	flag.StringVar(&c.name, "name", "b1", "this builder's name, in the running key and the log")
	flag.StringVar(&c.stream, "stream", "", "the work queue's stream")
	flag.StringVar(&c.consumer, "consumer", "", "the stream's durable pull consumer")
	flag.StringVar(&c.running, "running", "", "the bucket of checks running")
	flag.StringVar(&c.results, "results", "", "the bucket of results")
	flag.StringVar(&c.design, "design", "", "the design's name, for messages")
	flag.DurationVar(&c.freshFor, "fresh-for", 25*time.Second, "runningFreshFor: how recent a running key must be for its builder to count as alive")
	flag.DurationVar(&c.offset, "offset", 0, "this builder's clock less the server's (a fault)")
	flag.BoolVar(&c.sw.duplicateCheck, "duplicate-check", false, "drop an ask whose running key names another builder and is fresh")
	flag.BoolVar(&c.sw.serverClock, "server-clock", false, "judge freshness on server-stamped times: a probe put read back")
	flag.BoolVar(&c.sw.revisionStart, "revision-start", false, "start with kv.Update at the revision read (kv.Create where there was none)")
	flag.BoolVar(&c.sw.handBack, "hand-back", false, "nak whatever lands in the buffer while building")
	flag.BoolVar(&c.sw.syncAck, "sync-ack", false, "the finish's ack is AckSync, retried until confirmed")
	flag.BoolVar(&c.sw.deferDuplicates, "defer-duplicates", false, "leave a duplicate to its ack wait instead of acking it")
	flag.BoolVar(&c.sw.doneKey, "done-key", false, "the finish puts the running key marked done instead of deleting it")
	mode := flag.String("mode", "driven", "driven: one step per command on stdin; free: a service until stdin closes")
	var h slotlog.Header
	h.Model = slotlog.ModelLink
	flag.IntVar(&h.MsPerTick, "ms-per-tick", 0, "free: the log header's ms_per_tick")
	flag.IntVar(&h.MaxDeliver, "max-deliver", 0, "free: the log header's max_deliver")
	flag.IntVar(&h.SkewS, "skew-s", 0, "free: the log header's skew_s")
	flag.IntVar(&h.NetworkDelayMs, "network-delay-ms", 0, "free: the log header's network_delay_ms")
	logDir := flag.String("log-dir", "", "free: write the log to <log-dir>/<process>.ndjson")
	process := flag.String("process", "", "free: this process's name in the log (default: -name)")
	var fc freeConfig
	flag.DurationVar(&fc.takeWait, "take-wait", 100*time.Millisecond, "free: the design's fetch wait")
	flag.DurationVar(&fc.idleWait, "idle-wait", time.Second, "free: the fetch wait when idle and the quick fetch got nothing")
	flag.DurationVar(&fc.tick, "tick", 100*time.Millisecond, "free: a model tick (5 s of the source's time)")
	flag.DurationVar(&fc.heartbeat, "heartbeat", 200*time.Millisecond, "free: the heartbeat period")
	flag.IntVar(&fc.longestBuildTicks, "longest-build-ticks", 15, "free: the longest build, in ticks")
	flag.IntVar(&fc.lostAckPercent, "lost-ack-percent", 0, "free: the chance per finish that its ack is not sent")
	flag.IntVar(&fc.lostAcks, "lost-acks", 0, "free: the most acks this process loses")
	flag.Int64Var(&fc.seed, "seed", 1, "free: seeds the builds' lengths and the lost acks")
	flag.Parse()
	if c.stream == "" || c.consumer == "" || c.running == "" || c.results == "" {
		fmt.Fprintln(os.Stderr, "slotcheck-builder: -stream, -consumer, -running and -results are required")
		os.Exit(2)
	}
	if *mode != "driven" && *mode != "free" {
		fmt.Fprintf(os.Stderr, "slotcheck-builder: -mode %s: not driven or free\n", *mode)
		os.Exit(2)
	}
	if *mode == "free" && (*logDir == "" || h.MsPerTick == 0 || h.MaxDeliver == 0) {
		fmt.Fprintln(os.Stderr, "slotcheck-builder: -mode free needs -log-dir, -ms-per-tick and -max-deliver")
		os.Exit(2)
	}
	m, err := connect(c)
	if err != nil {
		fmt.Fprintf(os.Stderr, "slotcheck-builder %s: %v\n", c.name, err)
		os.Exit(1)
	}
	if *process == "" {
		*process = c.name
	}
	h.Design = c.design
	h.NatsServer = m.nc.ConnectedServerVersion()
	clock := &runClock{}
	if *mode == "driven" {
		// Each answer carries the lines logged since the last one; the
		// header is slotcheck's.
		m.pending = &bytes.Buffer{}
		m.lg, err = slotlog.New(m.pending, *process, h)
		m.pending.Reset()
	} else {
		m.lg, err = slotlog.Create(*logDir, *process, h, slotlog.WithClock(clock.now))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "slotcheck-builder %s: the log: %v\n", c.name, err)
		os.Exit(1)
	}
	if *mode == "free" {
		os.Exit(serve(m, fc, clock, os.Stdin, os.Stdout))
	}
	os.Exit(drive(m, os.Stdin, os.Stdout))
}

// exitNow ends the process at once, as a crash does.
func exitNow() {
	os.Exit(3)
}
