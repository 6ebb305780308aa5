// Command slotcheck-builder is a link builder written on nats.go, as a team
// running the source's builders would write one: a pull subscription bound
// to the work queue's durable consumer, Fetch with MaxWait, the bucket of
// checks running through nats.go's KeyValue, Ack/AckSync/Nak/InProgress on
// the messages it holds. Its design is the set of switches of the link
// model's designs (docs/link.md), given as flags by slotcheck, which reads
// them from the model's own design value.
//
// In driven mode (the only mode so far) it makes one step at a time on
// command, one JSON line in on its standard input and one JSON line out on
// its standard output (docs/real-jetstream.md, "The Go builder"). It exits
// when its input closes, so it never outlives the slotcheck that started it.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
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
	mode := flag.String("mode", "driven", "driven: one step per command on stdin")
	flag.Parse()
	if c.stream == "" || c.consumer == "" || c.running == "" || c.results == "" {
		fmt.Fprintln(os.Stderr, "slotcheck-builder: -stream, -consumer, -running and -results are required")
		os.Exit(2)
	}
	if *mode != "driven" {
		fmt.Fprintf(os.Stderr, "slotcheck-builder: -mode %s: only driven is built\n", *mode)
		os.Exit(2)
	}
	m, err := connect(c)
	if err != nil {
		fmt.Fprintf(os.Stderr, "slotcheck-builder %s: %v\n", c.name, err)
		os.Exit(1)
	}
	os.Exit(drive(m, os.Stdin, os.Stdout))
}

// exitNow ends the process at once, as a crash does.
func exitNow() {
	os.Exit(3)
}
