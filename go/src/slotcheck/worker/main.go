// Command worker is a small sample stovepipe service in Go, written from
// the book (docs/stovepipe.md, docs/designs.md, docs/real-database.md) as
// a team would: database/sql and go-sql-driver/mysql over a MariaDB Unix
// socket, the designs owner-keyed, owner-keyed-atomic-admit-dlq-cancels (the
// former recommendation) and owner-keyed-atomic-admit-supersede-first-dlq-cancels
// (the recommendation), and a log in slotcheck validate's format through slotlog.
//
// `worker -run` is a whole live run, bounded and seeded: it creates the
// schema and the queues, plays the client (requests arrive at seeded
// times), the build system (builds finish after a seeded time) and the
// broker's clock (a message whose visibility deadline passed is visible
// again, or dead after -max-deliveries), and runs -processes worker
// processes of -goroutines handlers each. Faults: a worker process kills
// itself (SIGKILL) at a seeded step, and is started again under a new
// name, at most -crashes times; a handler stalls (sleeps past its
// message's visibility deadline, then goes on) at most -stalls times per
// process. It stops when every request is terminal and no message is
// left, or at -timeout, and prints a JSON summary on stdout.
//
// Build: GO111MODULE=off GOPATH=<repo>/go:/usr/share/gocode go build slotcheck/worker
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"slotcheck/slotlog"
)

type options struct {
	socket, database, design, logPath, process, bug, order string
	run                                                    bool
	seed                                                   int64
	queues, requests, processes, goroutines                int
	maxConcurrent, maxDeliveries                           int64
	crashes, stalls                                        int
	crashAfter                                             int
	tokenBase                                              int64
	visibilityMs, txPauseMs                                int
	timeout                                                time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.socket, "socket", "", "MariaDB's Unix socket")
	flag.StringVar(&o.database, "db", "slotcheck_go", "the database (created empty beforehand)")
	flag.StringVar(&o.design, "design", "owner-keyed-atomic-admit-supersede-first-dlq-cancels", "owner-keyed, owner-keyed-atomic-admit-dlq-cancels or owner-keyed-atomic-admit-supersede-first-dlq-cancels")
	flag.StringVar(&o.logPath, "log", "run.ndjson", "the log: one file (-order turnstile), or a folder of one file per process (-order process)")
	flag.StringVar(&o.order, "order", "turnstile", "turnstile: one file, each queue's lines in commit order; process: one file per process, in the process's order")
	flag.StringVar(&o.process, "process", "", "(a worker process) its name in the log")
	flag.StringVar(&o.bug, "bug", "", "a seeded bug: no-for-update (the admit transaction reads its rows without locking them)")
	flag.BoolVar(&o.run, "run", false, "a whole live run (else: one worker process, started by -run)")
	flag.Int64Var(&o.seed, "seed", 1, "the faults' and the timings' seed")
	flag.IntVar(&o.queues, "queues", 6, "independent queues")
	flag.IntVar(&o.requests, "requests", 3, "requests per queue")
	flag.IntVar(&o.processes, "processes", 2, "worker processes")
	flag.IntVar(&o.goroutines, "goroutines", 3, "handlers per worker process")
	flag.Int64Var(&o.maxConcurrent, "max-concurrent", 1, "K, builds in flight per queue")
	flag.Int64Var(&o.maxDeliveries, "max-deliveries", 2, "deliveries of a message before it is dead")
	flag.IntVar(&o.crashes, "crashes", 2, "worker processes killed in the run, at most")
	flag.IntVar(&o.stalls, "stalls", 1, "stalls per worker process, at most")
	flag.IntVar(&o.crashAfter, "crash-after", 0, "(a worker process) kill itself before its Nth step (0: never)")
	flag.Int64Var(&o.tokenBase, "token-base", 0, "(a worker process) its delivery tokens start after this")
	flag.IntVar(&o.visibilityMs, "visibility-ms", 150, "a delivery's visibility timeout")
	flag.IntVar(&o.txPauseMs, "tx-pause-ms", 3, "a pause inside the admit transaction, between its reads and its writes (a slow network)")
	flag.DurationVar(&o.timeout, "timeout", 60*time.Second, "the run stops by then")
	flag.Parse()
	if _, ok := designs[o.design]; !ok {
		fail(fmt.Errorf("-design %q: this worker implements owner-keyed, owner-keyed-atomic-admit-dlq-cancels and owner-keyed-atomic-admit-supersede-first-dlq-cancels", o.design))
	}
	if o.order != "turnstile" && o.order != "process" {
		fail(fmt.Errorf("-order %q: turnstile or process", o.order))
	}
	if o.bug != "" && o.bug != "no-for-update" {
		fail(fmt.Errorf("-bug %q: the only seeded bug is no-for-update", o.bug))
	}
	var err error
	if o.run {
		err = supervise(o)
	} else {
		err = workerProcess(o)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "worker:", err)
	os.Exit(2)
}

func header(o options) slotlog.Header {
	return slotlog.Header{Model: slotlog.ModelStovepipe, Design: o.design,
		MaxConcurrent: int(o.maxConcurrent), MaxDeliveries: int(o.maxDeliveries)}
}

// logger opens the log of process (a sequential thread of control): the
// shared file (appending; its header is the run's) or, with -order
// process, a file of its own in the folder.
func logger(o options, process string) (*slotlog.Logger, error) {
	if o.order == "process" {
		return slotlog.Create(o.logPath, process, header(o))
	}
	return slotlog.Join(o.logPath, process)
}

// faultStall begins the line a worker process writes on stderr when a
// handler stalls.
const faultStall = "fault: stall"

func nowMs() int64 { return time.Now().UnixMilli() }

// ---- the worker process ----

type worker struct {
	db            *sql.DB
	opts          options
	steps         stepper
	design        design
	maxConcurrent int64
	visibility    time.Duration
	txPause       time.Duration
	bug           string

	mu         sync.Mutex
	rng        *rand.Rand
	stepsTaken int
	crashAt    int
	stallsLeft int
	nextToken  int64
	tokenBase  int64
	process    string
}

// fault: before a step, the process may crash (at its seeded step: it
// waits for the steps under way to be logged, then kills itself) or this
// handler may stall.
func (w *worker) fault(h *handler) {
	w.mu.Lock()
	w.stepsTaken++
	crash := w.crashAt > 0 && w.stepsTaken >= w.crashAt
	stall := !crash && w.stallsLeft > 0 && w.rng.Intn(100) < 4
	if stall {
		w.stallsLeft--
	}
	w.mu.Unlock()
	if crash {
		w.steps.steps.Lock() // no step half done: every write has its line
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	if stall {
		// Told to the run, which counts the faults (a killed process
		// cannot say anything afterwards).
		fmt.Fprintf(os.Stderr, "%s %s\n", faultStall, h.name)
		time.Sleep(w.visibility + w.visibility/2)
	}
}

func (w *worker) pause() {
	if w.txPause > 0 {
		time.Sleep(w.txPause)
	}
}

func workerProcess(o options) error {
	if o.process == "" {
		return fmt.Errorf("a worker process needs -process")
	}
	db, err := open(o.socket, o.database)
	if err != nil {
		return err
	}
	defer db.Close()
	w := &worker{db: db, opts: o, design: designs[o.design], maxConcurrent: o.maxConcurrent,
		visibility: time.Duration(o.visibilityMs) * time.Millisecond, txPause: time.Duration(o.txPauseMs) * time.Millisecond,
		bug: o.bug, rng: rand.New(rand.NewSource(o.seed)), crashAt: o.crashAfter, tokenBase: o.tokenBase, stallsLeft: o.stalls, process: o.process,
		steps: stepper{order: order{turnstile: o.order == "turnstile"}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// SIGTERM: stop between steps (the steps under way are logged first).
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		w.steps.steps.Lock()
		os.Exit(0)
	}()
	// Each handler goroutine logs as a process of its own, p<i>.<j>/g<k>
	// (its lines are in its own order, whatever the others do), to the
	// shared file or to a file of its own.
	errs := make(chan error, o.goroutines)
	for g := 1; g <= o.goroutines; g++ {
		log, err := logger(o, fmt.Sprintf("%s/g%d", o.process, g))
		if err != nil {
			return err
		}
		defer log.Close()
		go func() { errs <- w.loop(ctx, log) }()
	}
	return <-errs
}

// loop: one handler at a time, on its own connection; the broker's side
// of a delivery is the UPDATE that takes a visible message.
func (w *worker) loop(ctx context.Context, log *slotlog.Logger) error {
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for {
		h, err := w.deliver(ctx, conn, log)
		if err != nil {
			return err
		}
		if h == nil {
			time.Sleep(time.Duration(2+w.intn(4)) * time.Millisecond)
			continue
		}
		if err := h.run(ctx); err != nil {
			return err
		}
	}
}

func (w *worker) intn(n int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rng.Intn(n)
}

// deliver: the broker hands a visible message to a new handler invocation
// (a token of its own); logged as the broker's deliver line.
func (w *worker) deliver(ctx context.Context, conn *sql.Conn, log *slotlog.Logger) (*handler, error) {
	rows, err := conn.QueryContext(ctx, "SELECT queue, num, kind FROM messages WHERE status = 'visible' LIMIT 16")
	if err != nil {
		return nil, err
	}
	type key struct {
		queue, num int64
		kind       string
	}
	var visible []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.queue, &k.num, &k.kind); err != nil {
			rows.Close()
			return nil, err
		}
		visible = append(visible, k)
	}
	rows.Close()
	if len(visible) == 0 {
		return nil, nil
	}
	k := visible[w.intn(len(visible))]
	w.mu.Lock()
	w.nextToken++
	token := w.nextToken
	w.mu.Unlock()
	// Tokens unique across processes: the process's base and a count.
	name := fmt.Sprintf("%s-w%d", w.process, token)
	dbToken := w.tokenBase + token
	var got bool
	var attempts int64
	err = w.steps.tx(ctx, conn, k.queue, func(tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx,
			"UPDATE messages SET status = 'in_flight', delivery = ?, deadline_ms = ? WHERE queue = ? AND num = ? AND kind = ? AND status = 'visible'",
			dbToken, nowMs()+w.visibility.Milliseconds(), k.queue, k.num, k.kind))
		if err != nil {
			return err
		}
		got = n == 1
		if !got {
			return nil
		}
		return tx.QueryRowContext(ctx, "SELECT attempts FROM messages WHERE queue = ? AND num = ? AND kind = ?",
			k.queue, k.num, k.kind).Scan(&attempts)
	}, func() {
		if got {
			// attempt: one more than the deliveries that ended in a crash
			// or an expiry (a dead message counts none).
			log.Stovepipe().Deliver(queueName(k.queue), messageName(k.kind), requestID(k.num), name, int(attempts)+1)
		}
	})
	if err != nil || !got {
		return nil, err
	}
	return &handler{w: w, log: log, conn: conn, queue: k.queue, num: k.num, kind: k.kind, token: dbToken, name: name, design: w.design}, nil
}

// ---- the run: client, build system, broker's clock, worker processes ----

type summary struct {
	Design      string `json:"design"`
	Seed        int64  `json:"seed"`
	Queues      int    `json:"queues"`
	Drained     bool   `json:"drained"`
	Cut         string `json:"cut,omitempty"`
	Crashes     int    `json:"crashes"`
	Stalls      int    `json:"stalls"`
	Processes   int    `json:"processes"`
	MaxRunning  int64  `json:"max_running"`
	NotTerminal int64  `json:"not_terminal"`
	Lines       int    `json:"lines"`
	Bug         string `json:"bug,omitempty"`
}

func supervise(o options) error {
	db, err := open(o.socket, o.database)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	for _, s := range schema {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	for q := 1; q <= o.queues; q++ {
		if _, err := db.ExecContext(ctx, "INSERT INTO queues (id, version, in_flight_count, in_flight_request_ids) VALUES (?, 1, 0, '')", q); err != nil {
			return err
		}
	}
	var log *slotlog.Logger
	if o.order == "process" {
		log, err = slotlog.Create(o.logPath, "service", header(o))
	} else {
		var f *os.File
		if f, err = os.Create(o.logPath); err == nil {
			log, err = slotlog.New(f, "service", header(o))
			f.Close()
			if err == nil {
				log, err = slotlog.Join(o.logPath, "service")
			}
		}
	}
	if err != nil {
		return err
	}
	defer log.Close()
	rng := rand.New(rand.NewSource(o.seed))
	deadline := time.Now().Add(o.timeout)
	st := &stepper{order: order{turnstile: o.order == "turnstile"}}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()

	// Arrivals: each queue's requests at seeded times within the first
	// second, in order.
	type arrival struct {
		at         time.Time
		queue, num int64
	}
	var arrivals []arrival
	start := time.Now()
	for q := 1; q <= o.queues; q++ {
		at := start
		for n := 1; n <= o.requests; n++ {
			at = at.Add(time.Duration(rng.Intn(300)) * time.Millisecond)
			arrivals = append(arrivals, arrival{at, int64(q), int64(n)})
		}
	}
	buildTime := map[[2]int64]time.Time{}

	// The worker processes, each started again under a new name after a
	// crash, while crashes are left.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	type child struct {
		cmd  *exec.Cmd
		done chan error
	}
	children := map[int]*child{}
	incarnation := map[int]int{}
	crashesLeft := o.crashes
	var stallsMu sync.Mutex
	stalls := 0
	crashes := 0
	spawn := func(i int) error {
		incarnation[i]++
		name := fmt.Sprintf("p%d.%d", i, incarnation[i])
		crashAt := 0
		if crashesLeft > 0 && rng.Intn(2) == 0 {
			crashesLeft--
			crashAt = 5 + rng.Intn(40)
		}
		args := []string{"-socket", o.socket, "-db", o.database, "-design", o.design, "-log", o.logPath,
			"-order", o.order, "-process", name, "-seed", fmt.Sprint(rng.Int63()), "-goroutines", fmt.Sprint(o.goroutines),
			"-max-concurrent", fmt.Sprint(o.maxConcurrent), "-stalls", fmt.Sprint(o.stalls),
			"-crash-after", fmt.Sprint(crashAt), "-visibility-ms", fmt.Sprint(o.visibilityMs),
			"-tx-pause-ms", fmt.Sprint(o.txPauseMs),
			"-token-base", fmt.Sprint(int64(i*1000+incarnation[i]) * 1_000_000)}
		if o.bug != "" {
			args = append(args, "-bug", o.bug)
		}
		cmd := exec.Command(self, args...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			return err
		}
		// A worker dies with the run.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return err
		}
		c := &child{cmd: cmd, done: make(chan error, 1)}
		lines := make(chan struct{})
		go func() {
			// The child's stderr: its stalls counted, the rest passed on.
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), faultStall+" ") {
					stallsMu.Lock()
					stalls++
					stallsMu.Unlock()
				} else {
					fmt.Fprintln(os.Stderr, sc.Text())
				}
			}
			close(lines)
		}()
		go func() {
			<-lines
			c.done <- cmd.Wait()
		}()
		children[i] = c
		return nil
	}
	for i := 1; i <= o.processes; i++ {
		if err := spawn(i); err != nil {
			return err
		}
	}
	stopAll := func() {
		for _, c := range children {
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, c := range children {
			select {
			case <-c.done:
			case <-time.After(5 * time.Second):
				_ = c.cmd.Process.Kill()
				<-c.done
			}
		}
	}
	defer stopAll()

	sum := summary{Design: o.design, Seed: o.seed, Queues: o.queues, Processes: o.processes, Bug: o.bug}
	for {
		now := time.Now()
		if now.After(deadline) {
			sum.Cut = fmt.Sprintf("the run's timeout, %s, came before every queue drained", o.timeout)
			break
		}
		// A worker process that died: killed by its crash (started again
		// under a new name), or failed (the run fails).
		for i, c := range children {
			select {
			case err := <-c.done:
				ws, _ := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
				if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					delete(children, i)
					return fmt.Errorf("worker process p%d.%d failed: %v", i, incarnation[i], err)
				}
				crashes++
				if err := spawn(i); err != nil {
					return err
				}
			default:
			}
		}
		// The client.
		for len(arrivals) > 0 && !arrivals[0].at.After(now) {
			a := arrivals[0]
			arrivals = arrivals[1:]
			if err := arrive(ctx, st, conn, log, a.queue, a.num); err != nil {
				return err
			}
		}
		// The build system.
		if err := finishBuilds(ctx, st, conn, log, buildTime, rng); err != nil {
			return err
		}
		// The broker's clock.
		if err := expire(ctx, db, o.maxDeliveries); err != nil {
			return err
		}
		if len(arrivals) == 0 {
			drained, err := isDrained(ctx, db)
			if err != nil {
				return err
			}
			if drained {
				sum.Drained = true
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	stopAll()
	children = nil
	sum.Crashes = crashes
	stallsMu.Lock()
	sum.Stalls = stalls
	stallsMu.Unlock()
	if err := db.QueryRowContext(ctx, "SELECT COALESCE(MAX(running_at_start), 0) FROM builds").Scan(&sum.MaxRunning); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM requests WHERE state NOT IN ('succeeded', 'superseded', 'dead_lettered')").Scan(&sum.NotTerminal); err != nil {
		return err
	}
	if o.order == "turnstile" {
		if text, err := os.ReadFile(o.logPath); err == nil {
			for _, c := range text {
				if c == '\n' {
					sum.Lines++
				}
			}
		}
	} else if files, err := filepath.Glob(filepath.Join(o.logPath, "*.ndjson")); err == nil {
		sum.Lines = len(files)
	}
	return json.NewEncoder(os.Stdout).Encode(sum)
}

// arrive: R's row inserted accepted and process(R) published, in one
// transaction; then the client's line.
func arrive(ctx context.Context, st *stepper, conn *sql.Conn, log *slotlog.Logger, queue, num int64) error {
	return st.tx(ctx, conn, queue, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO requests (queue, num, state, version) VALUES (?, ?, 'accepted', 1)", queue, num); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO messages (queue, num, kind, status, attempts) VALUES (?, ?, 'process', 'visible', 0)", queue, num); err != nil {
			return err
		}
		return wake(ctx, tx, queue)
	}, func() { log.Stovepipe().Arrive(queueName(queue), requestID(num)) })
}

// finishBuilds: a running build finishes a seeded 20 to 120 ms after the
// build system first saw it; signal(R) is published with it.
func finishBuilds(ctx context.Context, st *stepper, conn *sql.Conn, log *slotlog.Logger, seen map[[2]int64]time.Time, rng *rand.Rand) error {
	rows, err := conn.QueryContext(ctx, "SELECT queue, num FROM builds WHERE state = 'running' ORDER BY queue, num")
	if err != nil {
		return err
	}
	var running [][2]int64
	for rows.Next() {
		var k [2]int64
		if err := rows.Scan(&k[0], &k[1]); err != nil {
			rows.Close()
			return err
		}
		running = append(running, k)
	}
	rows.Close()
	for _, k := range running {
		at, ok := seen[k]
		if !ok {
			seen[k] = time.Now().Add(time.Duration(20+rng.Intn(100)) * time.Millisecond)
			continue
		}
		if time.Now().Before(at) {
			continue
		}
		var finished bool
		err := st.tx(ctx, conn, k[0], func(tx *sql.Tx) error {
			n, err := affected(tx.ExecContext(ctx, "UPDATE builds SET state = 'finished' WHERE queue = ? AND num = ? AND state = 'running'", k[0], k[1]))
			if err != nil {
				return err
			}
			finished = n == 1
			if !finished {
				return nil
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO messages (queue, num, kind, status, attempts) VALUES (?, ?, 'signal', 'visible', 0)", k[0], k[1]); err != nil {
				return err
			}
			return wake(ctx, tx, k[0])
		}, func() {
			if finished {
				log.Stovepipe().FinishBuild(queueName(k[0]), requestID(k[1]))
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// expire: a delivery whose visibility deadline passed makes its message
// visible again with one attempt more, or, out of deliveries, dead (dead
// messages are retried for ever). Silent: no line (validate infers it).
func expire(ctx context.Context, db *sql.DB, maxDeliveries int64) error {
	rows, err := db.QueryContext(ctx, "SELECT queue, num, kind, delivery FROM messages WHERE status = 'in_flight' AND deadline_ms < ?", nowMs())
	if err != nil {
		return err
	}
	type due struct {
		queue, num, token int64
		kind              string
	}
	var overdue []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.queue, &d.num, &d.kind, &d.token); err != nil {
			rows.Close()
			return err
		}
		overdue = append(overdue, d)
	}
	rows.Close()
	for _, d := range overdue {
		for attempt := 0; ; attempt++ {
			err := expireOne(ctx, db, d.queue, d.num, d.kind, d.token, maxDeliveries)
			if err == nil || !retryable(err) || attempt > 200 {
				if err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

func expireOne(ctx context.Context, db *sql.DB, queue, num int64, kind string, token, maxDeliveries int64) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var attempts int64
	var delivery sql.NullInt64
	err = tx.QueryRowContext(ctx, "SELECT attempts, delivery FROM messages WHERE queue = ? AND num = ? AND kind = ? AND status = 'in_flight' FOR UPDATE",
		queue, num, kind).Scan(&attempts, &delivery)
	if err == sql.ErrNoRows || (err == nil && delivery.Int64 != token) {
		return nil
	}
	if err != nil {
		return err
	}
	attempts++
	switch {
	case kind == kindDeadProcess || kind == kindDeadSignal:
		_, err = tx.ExecContext(ctx, "UPDATE messages SET status = 'visible', delivery = NULL, deadline_ms = NULL WHERE queue = ? AND num = ? AND kind = ?", queue, num, kind)
	case attempts < maxDeliveries:
		_, err = tx.ExecContext(ctx, "UPDATE messages SET status = 'visible', attempts = ?, delivery = NULL, deadline_ms = NULL WHERE queue = ? AND num = ? AND kind = ?", attempts, queue, num, kind)
	default:
		if _, err = tx.ExecContext(ctx, "DELETE FROM messages WHERE queue = ? AND num = ? AND kind = ?", queue, num, kind); err == nil {
			dead := kindDeadProcess
			if kind == kindSignal {
				dead = kindDeadSignal
			}
			_, err = tx.ExecContext(ctx, "INSERT INTO messages (queue, num, kind, status, attempts) VALUES (?, ?, ?, 'visible', 0)", queue, num, dead)
		}
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

func isDrained(ctx context.Context, db *sql.DB) (bool, error) {
	var open, messages int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM requests WHERE state NOT IN ('succeeded', 'superseded', 'dead_lettered')").Scan(&open); err != nil {
		return false, err
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM messages").Scan(&messages); err != nil {
		return false, err
	}
	return open == 0 && messages == 0, nil
}
