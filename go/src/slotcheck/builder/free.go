package main

// Free mode: the builder as a service, as a team runs it. It loops on its
// own (fetch, read or take, build with a heartbeat every period, finish)
// until its standard input closes, writing its log through slotlog into a
// file of its own. slotcheck injects the process-level faults from outside
// (SIGKILL, SIGSTOP/SIGCONT, the proxy's delay); the builder itself only
// draws its builds' lengths and its lost acks, from its seed.
//
// On its standard output it says one JSON line after each step (and one
// before each heartbeat): the step, what it holds, what it builds (only
// while it sleeps in its build). slotcheck reads them to name the step in
// an error and to know whom it may crash or stop; nothing else is on that
// output.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

type freeConfig struct {
	takeWait, idleWait, tick, heartbeat time.Duration
	longestBuildTicks                   int
	lostAckPercent, lostAcks            int
	seed                                int64
}

type status struct {
	Step     string   `json:"step"`
	Held     []string `json:"held"`
	Building string   `json:"building,omitempty"`
	Error    string   `json:"error,omitempty"`
	Costs    costs    `json:"costs"`
}

type free struct {
	m   *machine
	c   freeConfig
	rng *rand.Rand
	mu  sync.Mutex
	out *bufio.Writer
	// finishing: the build is over and its finish under way (slotcheck
	// crashes only builders that build, not one half way through its
	// finish, whose log would miss what it did).
	finishing bool
	// heartbeating: a heartbeat under way, its line not yet written. Its
	// put and its in-progress reach the server one after the other, and a
	// SIGKILL between them and the line leaves the server with an ack wait
	// restarted that no line says (the model's heartbeat is one step), so
	// slotcheck faults a builder only while it sleeps in its build.
	heartbeating bool
}

func (f *free) say(step string, err error) {
	s := status{Step: step, Held: []string{}, Costs: f.m.costs}
	for _, h := range f.m.buffer {
		s.Held = append(s.Held, h.ask)
	}
	if f.m.decided != nil {
		s.Held = append(s.Held, f.m.decided.h.ask)
	}
	if f.m.building != nil && !f.finishing {
		if !f.heartbeating {
			s.Building = f.m.building.ask
		}
		s.Held = append(s.Held, f.m.building.ask)
	}
	if err != nil {
		s.Error = err.Error()
	}
	b, _ := json.Marshal(s)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.Write(b)
	f.out.WriteByte('\n')
	f.out.Flush()
}

// runClock is the log's clock in free mode: the run's milliseconds, read
// from the start line ("start <ms>", slotcheck's own monotonic count) and
// counted on from there by this process's monotonic clock, so that a step of
// the machine's wall clock (NTP on a fresh machine) moves no line. Before
// the start line, and when it names no time, it is the wall clock.
type runClock struct {
	base int64
	from time.Time
	set  bool
}

func (c *runClock) now() time.Time {
	if !c.set {
		return time.Now()
	}
	return time.UnixMilli(c.base + time.Since(c.from).Milliseconds())
}

// begin reads the start line's time, if it has one.
func (c *runClock) begin(line string) {
	ms, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "start")), 10, 64)
	if err == nil {
		c.base, c.from, c.set = ms, time.Now(), true
	}
}

// serve runs until its input closes (exit 0) or a call fails (the error
// said on its output and its standard error, exit 1).
func serve(m *machine, c freeConfig, clock *runClock, in io.Reader, out io.Writer) int {
	f := &free{m: m, c: c, rng: rand.New(rand.NewSource(c.seed)), out: bufio.NewWriter(out)}
	start := make(chan struct{})
	go func() {
		// A line is the start (the asks are published and every builder
		// is connected: the model's builders act from its first moment);
		// its input closing is the end: slotcheck's stop, or slotcheck
		// gone.
		lines := bufio.NewScanner(in)
		if lines.Scan() {
			clock.begin(lines.Text())
			close(start)
			for lines.Scan() {
			}
		}
		m.lg.Close()
		os.Exit(0)
	}()
	f.say("ready", nil)
	<-start
	if err := f.loop(); err != nil {
		f.say("failed", err)
		fmt.Fprintf(os.Stderr, "slotcheck-builder %s: %v\n", m.name, err)
		return 1
	}
	return 0
}

func (f *free) loop() error {
	m := f.m
	lost := 0
	for {
		// Idle: the design's fetch, then the idle wait when empty.
		result, _, err := m.fetch(f.c.takeWait)
		if err != nil {
			return err
		}
		if result == "empty" && len(m.buffer) == 0 {
			if _, _, err := m.fetch(f.c.idleWait); err != nil {
				return err
			}
		}
		f.say("fetch", nil)
		if len(m.buffer) == 0 {
			continue
		}
		if m.sw.duplicateCheck {
			d, err := m.read()
			if err != nil {
				return err
			}
			f.say("read", nil)
			if d == nil {
				continue
			}
			if d.duplicate {
				if _, err := m.drop(); err != nil {
					return err
				}
				f.say("drop", nil)
				continue
			}
			result, _, err := m.start()
			if err != nil {
				return err
			}
			if result != "runs" {
				f.say("start", nil)
				continue
			}
		} else if _, err := m.take(); err != nil {
			return err
		}
		f.say("start", nil)
		ticks := 1
		if f.c.longestBuildTicks > 1 {
			ticks += f.rng.Intn(f.c.longestBuildTicks)
		}
		began := time.Now()
		end := began.Add(time.Duration(ticks) * f.c.tick)
		next := began.Add(f.c.heartbeat)
		for {
			if !end.After(next) {
				time.Sleep(time.Until(end))
				break
			}
			time.Sleep(time.Until(next))
			f.heartbeating = true
			f.say("heartbeat due", nil)
			if _, err := m.heartbeat(); err != nil {
				return err
			}
			f.heartbeating = false
			f.say("heartbeat", nil)
			next = time.Now().Add(f.c.heartbeat)
		}
		f.finishing = true
		f.say("build over", nil)
		lose := lost < f.c.lostAcks && f.rng.Intn(100) < f.c.lostAckPercent
		if lose {
			lost++
		}
		if _, err := m.finish(lose); err != nil {
			return err
		}
		f.finishing = false
		if lose {
			f.say("finish, its ack lost", nil)
		} else {
			f.say("finish", nil)
		}
	}
}
