package main

// The database side: the schema, the connection, and the rule that keeps
// each queue's log in the order the database did its steps.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The schema of docs/real-database.md ("The schema"), plus when a build
// started, for the build system that finishes it.
var schema = []string{
	`CREATE TABLE queues (
    id BIGINT PRIMARY KEY,
    version BIGINT NOT NULL,
    in_flight_count BIGINT NOT NULL,
    in_flight_request_ids VARCHAR(255) NOT NULL
)`,
	`CREATE TABLE requests (
    queue BIGINT NOT NULL,
    num BIGINT NOT NULL,
    state VARCHAR(16) NOT NULL,
    version BIGINT NOT NULL,
    PRIMARY KEY (queue, num)
)`,
	`CREATE TABLE builds (
    queue BIGINT NOT NULL,
    num BIGINT NOT NULL,
    state VARCHAR(16) NOT NULL,
    running_at_start BIGINT NOT NULL,
    PRIMARY KEY (queue, num)
)`,
	`CREATE TABLE messages (
    queue BIGINT NOT NULL,
    num BIGINT NOT NULL,
    kind VARCHAR(16) NOT NULL,
    status VARCHAR(16) NOT NULL,
    attempts BIGINT NOT NULL,
    delivery BIGINT,
    deadline_ms BIGINT,
    PRIMARY KEY (queue, num, kind)
)`,
}

func open(socket, database string) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "unix"
	cfg.Addr = socket
	cfg.DBName = database
	cfg.Params = map[string]string{"tx_isolation": "'REPEATABLE-READ'", "innodb_lock_wait_timeout": "5"}
	return sql.Open("mysql", cfg.FormatDSN())
}

// retryable: InnoDB rolled the statement or the transaction back and asks
// for a retry (1213 deadlock, 1205 lock wait timeout). The step changed
// nothing and is taken again; only its last attempt is logged.
func retryable(err error) bool {
	var m *mysql.MySQLError
	return errors.As(err, &m) && (m.Number == 1213 || m.Number == 1205)
}

// order keeps each queue's log in the database's order when several
// processes write one file: a step takes its queue's turnstile (a MariaDB
// named lock, released by the server when a killed process's connection
// drops) just before its commit or its non-locking read, and gives it
// back once its line is written. Nothing but a commit or a plain read
// runs while it is held, so it cannot deadlock with InnoDB's row locks.
// With one file per process (-order process) it does nothing: validate
// merges the files by what the lines say.
type order struct {
	turnstile bool
}

func lockName(queue int64) string { return "slotcheck-q" + strconv.FormatInt(queue, 10) }

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (o order) take(ctx context.Context, q querier, queue int64) error {
	if !o.turnstile {
		return nil
	}
	var got sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT GET_LOCK(?, 60)", lockName(queue)).Scan(&got); err != nil {
		return err
	}
	if got.Int64 != 1 {
		return fmt.Errorf("the turnstile of queue %d was not free within 60 s", queue)
	}
	return nil
}

func (o order) give(ctx context.Context, conn *sql.Conn, queue int64) {
	if o.turnstile {
		var ignored sql.NullInt64
		_ = conn.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", lockName(queue)).Scan(&ignored)
	}
}

// stepper runs one process's steps: each a statement or a transaction and
// the line that says what it returned, whole (a crash of the process waits
// for the steps under way, so that no write is left without its line).
type stepper struct {
	order order
	steps sync.RWMutex
}

// tx runs body in one transaction on conn; commits, then logs (say) while
// the queue's turnstile is held. A retryable error rolls back and retries
// the whole step (nothing is logged for the aborted attempts).
func (s *stepper) tx(ctx context.Context, conn *sql.Conn, queue int64, body func(*sql.Tx) error, say func()) error {
	for attempt := 0; ; attempt++ {
		err := s.txOnce(ctx, conn, queue, body, say)
		if err == nil || !retryable(err) || attempt >= 200 {
			return err
		}
		time.Sleep(time.Duration(1+attempt%10) * time.Millisecond)
	}
}

func (s *stepper) txOnce(ctx context.Context, conn *sql.Conn, queue int64, body func(*sql.Tx) error, say func()) error {
	s.steps.RLock()
	defer s.steps.RUnlock()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := body(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := s.order.take(ctx, tx, queue); err != nil {
		_ = tx.Rollback()
		return err
	}
	defer s.order.give(ctx, conn, queue)
	if err := tx.Commit(); err != nil {
		return err
	}
	say()
	return nil
}

// read runs a non-locking read (one statement: one snapshot) and logs it,
// the turnstile held from before the read until the line is written.
func (s *stepper) read(ctx context.Context, conn *sql.Conn, queue int64, body func() error, say func()) error {
	for attempt := 0; ; attempt++ {
		err := func() error {
			s.steps.RLock()
			defer s.steps.RUnlock()
			if err := s.order.take(ctx, conn, queue); err != nil {
				return err
			}
			defer s.order.give(ctx, conn, queue)
			if err := body(); err != nil {
				return err
			}
			say()
			return nil
		}()
		if err == nil || !retryable(err) || attempt >= 200 {
			return err
		}
	}
}

// Owners as the column holds them: "1,3", ascending.
func ownersColumn(owners []int64) string {
	parts := make([]string, 0, len(owners))
	for _, n := range sortedUnique(owners) {
		parts = append(parts, strconv.FormatInt(n, 10))
	}
	return strings.Join(parts, ",")
}

func parseOwners(text string) []int64 {
	var out []int64
	for _, t := range strings.Split(text, ",") {
		if t == "" {
			continue
		}
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			panic(fmt.Sprintf("in_flight_request_ids %q", text))
		}
		out = append(out, n)
	}
	return out
}

func sortedUnique(xs []int64) []int64 {
	out := append([]int64{}, xs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	u := out[:0]
	for i, x := range out {
		if i == 0 || x != out[i-1] {
			u = append(u, x)
		}
	}
	return u
}

func has(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func without(xs []int64, x int64) []int64 {
	out := []int64{}
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

// lockQueue and wake: a durable write wakes the queue's parked messages
// in its own transaction; a hold and every wake lock the queue row first,
// so that no wake passes a hold about to park.
func lockQueue(ctx context.Context, tx *sql.Tx, queue int64) error {
	var id int64
	return tx.QueryRowContext(ctx, "SELECT id FROM queues WHERE id = ? FOR UPDATE", queue).Scan(&id)
}

func wake(ctx context.Context, tx *sql.Tx, queue int64) error {
	if err := lockQueue(ctx, tx, queue); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, "UPDATE messages SET status = 'visible' WHERE queue = ? AND status = 'parked'", queue)
	return err
}

func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
