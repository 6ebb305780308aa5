/*
 * The stovepipe admission contract (the spec: stovepipe-model.md, PR #966's
 * owner-keyed slots) in Promela, written from the contract, apart from
 * slotcheck's Rust model, so that the two check each other. README.md says
 * what is modelled and how to run it.
 *
 * One process, the world: every action (an arrival, a delivery, a build's
 * finish, one step of one worker, a crash, a stall) is one d_step, so one
 * transition and no intermediate states. Workers are packed into one short
 * each and the table is kept sorted, so two states that differ only in the
 * order of their workers are one state (the contract's "workers are
 * interchangeable").
 */

/* Bounds, given with -D on spin's command line. */
#ifndef N
#define N 3
#endif
#ifndef K
#define K 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef STALLS
#define STALLS 1
#endif
#ifndef MAXDEL
#define MAXDEL 2
#endif

/* The design: owner-keyed (PR #966) with none, the recommendation with all
 * three repairs. */
#ifndef ATOMIC_ADMIT
#define ATOMIC_ADMIT 0    /* steps b and c one transaction on Q and R */
#endif
#ifndef SUPERSEDE_FIRST
#define SUPERSEDE_FIRST 0 /* a stale head: CAS R superseded, then release */
#endif
#ifndef DLQ_CANCELS
#define DLQ_CANCELS 0     /* the DLQ cancels R's build before releasing */
#endif

/* At most one worker holds each message in flight (a request has a process
 * or dead-process message, and a signal or dead-signal one, so two), and a
 * worker that no longer holds its message was stalled: so 2N + STALLS. */
#define W (2 * N + STALLS)
#if N > 4 || W > 10
#error "the model takes 1 to 4 requests (3 bits a request) and at most 10 workers"
#endif

/* Request rows: 0 is not arrived yet. */
#define ACCEPTED 1
#define PROCESSING 2
#define SUCCEEDED 3
#define SUPERSEDED 4
#define DEAD_LETTERED 5
#define terminal(s) ((s) >= SUCCEEDED)

/* Messages, four kinds per request, at msg[4r + kind]: the status in the
 * low two bits, the attempts used above them. */
#define KPROC 0
#define KSIG 1
#define KDEADP 2
#define KDEADS 3
#define GONE 0
#define VISIBLE 1
#define INFLIGHT 2
#define PARKED 3
#define STATUS(m) ((m) & 3)

/* Builds. */
#define NOBUILD 0
#define RUNNING 1
#define STOPPED 2

/* A worker's program counter: the next step of its handler. */
#define READ 1
#define ACK 2
#define HOLD 3
#define SUBMIT 4
#define SUPERSEDE 5        /* CAS R -> superseded, then ack */
#define REL_THEN_SUP 6     /* owner-keyed's stale head: release, then SUPERSEDE */
#define SUP_THEN_REL 7     /* supersede-first: CAS R -> superseded, then UNWIND */
#define CLAIM 8            /* b (or b and c as one transaction) */
#define WRITE_PROC 9       /* c: CAS R -> processing */
#define REREAD_R 10        /* c lost: re-read R */
#define UNWIND 11          /* release R's slot, retried after a re-read of Q */
#define REREAD_Q 12
#define SIG_RELEASE 13
#define SIG_OUTCOME 14     /* CAS R -> succeeded */
#define DLQ_CANCEL_REL 15  /* cancel R's build, then DLQ_RELEASE */
#define DLQ_CANCEL 16      /* cancel R's build, then DLQ_OUTCOME */
#define DLQ_RELEASE 17
#define DLQ_OUTCOME 18     /* CAS R -> dead_lettered */

/* A worker in a short: request, message kind, pc, whether it still holds
 * its message, and which of its reads are still current (a CAS wins iff
 * the row is unchanged since the worker read it, so a version is only ever
 * asked that: one bit per row read, R's row, Q and the latest head). 0 is
 * no worker. */
#define FR 1
#define FQ 2
#define FH 4
#define HOLDS 8
#define PCOF(w) (((w) >> 4) & 31)
#define KOF(w) (((w) >> 9) & 3)
#define ROF(w) (((w) >> 11) & 7)
#define MKW(r, k, p, h, f) (((r) << 11) | ((k) << 9) | ((p) << 4) | (h) | (f))

/* Which reads a pc may still use (dead-variable reduction: a bit no later
 * step asks is cleared, so it does not split states). A hold asks whether
 * anything read changed; a release or claim CASes Q and a later step R;
 * after a lost processing write only Q is used again. */
#define LIVE(p) ((p == HOLD) -> (FR | FQ | FH) : \
	((p == SUPERSEDE || p == SIG_OUTCOME || p == DLQ_OUTCOME || p == DLQ_CANCEL) -> FR : \
	((p == REREAD_R || p == UNWIND) -> FQ : \
	((p == READ || p == ACK || p == SUBMIT || p == REREAD_Q) -> 0 : (FR | FQ)))))

byte rs[N];          /* request rows */
bit owner[N];        /* in_flight_request_ids */
byte build[N];
byte msg[4 * N];
byte arrived;        /* R1..R(arrived) are in; the latest head is the last */
byte crashes = CRASHES;
byte stalls = STALLS;
byte nw;             /* workers in wk[0..nw-1], sorted descending */
short wk[W];

/* Scratch for the d_steps, outside the state vector. */
hidden byte j, jj, r, k, pc, np, f, h, s, a, count;
hidden short w, v;
hidden byte won;
/* Each property is asserted through a variable of its own name, so that
 * pan's "assertion violated" line names it. */
hidden byte no_wedge, builds_within_limit, count_not_low, count_not_high;
hidden byte outcome_final, no_message_left_in_flight, dead_letter_needs_faults;
hidden byte workers_fit;
hidden byte all_succeed, some_superseded, some_dead_lettered, some_held;

inline sortw() {
	jj = 1;
	do
	:: jj < nw ->
		v = wk[jj];
		j = jj;
		do
		:: j > 0 && wk[j - 1] < v -> wk[j] = wk[j - 1]; j--
		:: else -> break
		od;
		wk[j] = v;
		jj++
	:: else -> break
	od
}

inline removew(idx) {
	j = idx;
	do
	:: j + 1 < nw -> wk[j] = wk[j + 1]; j++
	:: else -> break
	od;
	nw--;
	wk[nw] = 0
}

inline addw(x) {
	workers_fit = (nw < W);
	assert(workers_fit);
	wk[nw] = x;
	nw++;
	sortw()
}

/* A durable write (a row inserted or changed, a build submitted, finished
 * or cancelled) wakes every parked message. */
inline durable() {
	j = 0;
	do
	:: j < 4 * N ->
		if
		:: STATUS(msg[j]) == PARKED -> msg[j] = msg[j] - 2
		:: else
		fi;
		j++
	:: else -> break
	od
}

/* Another worker's read of a row is no longer current. */
inline stale(bitv, forr) {
	j = 0;
	do
	:: j < nw ->
		if
		:: (wk[j] & bitv) && (forr == 255 || ROF(wk[j]) == forr) -> wk[j] = wk[j] - bitv
		:: else
		fi;
		j++
	:: else -> break
	od
}

/* CAS R's row to `to`: wins only if R is unchanged since the read. */
inline casr(to) {
	if
	:: (f & FR) ->
#ifndef OFF_outcome_final
		outcome_final = !terminal(rs[r]);
		assert(outcome_final);
#endif
		rs[r] = to;
		stale(FR, r);
		durable();
		won = 1
	:: else -> won = 0
	fi
}

/* CAS Q's set to hold R or not. */
inline casq(in) {
	if
	:: (f & FQ) -> owner[r] = in; stale(FQ, 255); durable(); won = 1
	:: else -> won = 0
	fi
}

/* The message a worker held comes back with one more attempt, or, out of
 * deliveries, is replaced by its dead letter; a dead letter is retried
 * forever. */
inline expire() {
	if
	:: STATUS(msg[4 * r + k]) == GONE
	:: else ->
		if
		:: k >= KDEADP -> msg[4 * r + k] = VISIBLE
		:: else ->
			a = (msg[4 * r + k] >> 2) + 1;
			if
			:: a < MAXDEL -> msg[4 * r + k] = VISIBLE + 4 * a
			:: else ->
#ifndef OFF_dead_letter_needs_faults
				/* holds never count an attempt: only faults do */
				dead_letter_needs_faults = ((CRASHES - crashes) + (STALLS - stalls) >= MAXDEL);
				assert(dead_letter_needs_faults);
#endif
				msg[4 * r + k] = GONE;
				msg[4 * r + k + 2] = VISIBLE
			fi
		fi
	fi
}

inline cancel() {
	if
	:: build[r] != STOPPED -> build[r] = STOPPED; durable()
	:: else
	fi
}

/* `process`, `signal` and `dlq` after their read: the next step. */
inline after_read() {
	f = FR | FQ | FH;
	s = rs[r];
	count = 0;
	j = 0;
	do
	:: j < N -> count = count + owner[j]; j++
	:: else -> break
	od;
	if
	:: terminal(s) -> np = ACK
	:: else ->
		if
		:: k == KPROC ->
			if
			:: s == PROCESSING -> np = SUBMIT    /* a duplicate admission */
			:: s == ACCEPTED && r + 1 != arrived ->
				np = (owner[r] -> (SUPERSEDE_FIRST -> SUP_THEN_REL : REL_THEN_SUP) : SUPERSEDE)
			:: else ->
				/* a: R's own claim resumes at c (one transaction claims
				 * again); a full set holds; else b */
				np = (owner[r] -> (ATOMIC_ADMIT -> CLAIM : WRITE_PROC) : ((count >= K) -> HOLD : CLAIM))
			fi
		:: k == KSIG -> np = (owner[r] -> SIG_RELEASE : SIG_OUTCOME)
		:: else ->
			np = (DLQ_CANCELS -> (owner[r] -> DLQ_CANCEL_REL : DLQ_CANCEL)
			                   : (owner[r] -> DLQ_RELEASE : DLQ_OUTCOME))
		fi
	fi
}

inline step() {
	r = ROF(w); k = KOF(w); pc = PCOF(w); f = w & 7; h = w & HOLDS;
	np = 0;
	if
	:: pc == READ -> after_read()
	:: pc == ACK ->
		if
		:: h -> msg[4 * r + k] = GONE
		:: else    /* handed out again: the ack changes nothing */
		fi
	:: pc == HOLD ->
		if
		:: h ->
			/* parked until a durable write; visible at once if one of
			 * the rows read has changed already */
			msg[4 * r + k] = (msg[4 * r + k] & 252) + ((f == (FR | FQ | FH)) -> PARKED : VISIBLE)
		:: else
		fi
	:: pc == SUBMIT ->
		if
		:: build[r] == NOBUILD -> build[r] = RUNNING; durable()
		:: else    /* idempotent by request ID */
		fi;
		np = ACK
	:: pc == SUPERSEDE -> casr(SUPERSEDED); np = (won -> ACK : READ)
	:: pc == SUP_THEN_REL -> casr(SUPERSEDED); np = (won -> UNWIND : READ)
	:: pc == REL_THEN_SUP -> casq(0); np = (won -> SUPERSEDE : READ)
	:: pc == CLAIM ->
		if
		:: ATOMIC_ADMIT ->
			if
			:: (f & FR) && (f & FQ) ->
#ifndef OFF_outcome_final
				outcome_final = !terminal(rs[r]);
				assert(outcome_final);
#endif
				owner[r] = 1; rs[r] = PROCESSING;
				stale(FQ, 255); stale(FR, r); durable();
				np = SUBMIT
			:: else -> np = READ
			fi
		:: else -> casq(1); np = (won -> WRITE_PROC : READ)
		fi
	:: pc == WRITE_PROC -> casr(PROCESSING); np = (won -> SUBMIT : REREAD_R)
	:: pc == REREAD_R ->
		f = f | FR;
		np = (terminal(rs[r]) -> UNWIND : ((rs[r] == PROCESSING) -> ACK : READ))
	:: pc == UNWIND -> casq(0); np = (won -> ACK : REREAD_Q)
	:: pc == REREAD_Q -> f = f | FQ; np = (owner[r] -> UNWIND : ACK)
	:: pc == SIG_RELEASE -> casq(0); np = (won -> SIG_OUTCOME : READ)
	:: pc == SIG_OUTCOME -> casr(SUCCEEDED); np = (won -> ACK : READ)
	:: pc == DLQ_CANCEL_REL -> cancel(); np = DLQ_RELEASE
	:: pc == DLQ_CANCEL -> cancel(); np = DLQ_OUTCOME
	:: pc == DLQ_RELEASE -> casq(0); np = (won -> DLQ_OUTCOME : READ)
	:: pc == DLQ_OUTCOME -> casr(DEAD_LETTERED); np = (won -> ACK : READ)
	fi;
	if
	:: np != 0 -> f = f & LIVE(np); addw(MKW(r, k, np, h, f))
	:: else -> sortw()    /* stale() may have reordered the table */
	fi
}

/* The `always` properties, after every transition. */
inline check() {
	count = 0;
	j = 0;
	do
	:: j < N -> count = count + (build[j] == RUNNING); j++
	:: else -> break
	od;
#ifndef OFF_builds_within_limit
	builds_within_limit = (count <= K);
	assert(builds_within_limit);
#endif
	/* quiescent: no worker, nothing visible or in flight */
	count = nw;
	j = 0;
	do
	:: j < 4 * N ->
		count = count + (STATUS(msg[j]) == VISIBLE || STATUS(msg[j]) == INFLIGHT);
		j++
	:: else -> break
	od;
	if
	:: count == 0 ->
		j = 0;
		do
		:: j < N ->
#ifndef OFF_count_not_low
			count_not_low = (rs[j] != PROCESSING || owner[j]);
			assert(count_not_low);
#endif
#ifndef OFF_count_not_high
			count_not_high = (!owner[j] || rs[j] == PROCESSING);
			assert(count_not_high);
#endif
			j++
		:: else -> break
		od
	:: else
	fi;
#ifndef OFF_no_message_left_in_flight
	/* each message in flight has a worker holding it */
	j = 0;
	do
	:: j < 4 * N ->
		if
		:: STATUS(msg[j]) == INFLIGHT ->
			no_message_left_in_flight = 0;
			jj = 0;
			do
			:: jj < nw ->
				if
				:: (wk[jj] & HOLDS) && ROF(wk[jj]) * 4 + KOF(wk[jj]) == j ->
					no_message_left_in_flight = 1
				:: else
				fi;
				jj++
			:: else -> break
			od;
			assert(no_message_left_in_flight)
		:: else
		fi;
		j++
	:: else -> break
	od;
#endif
#ifdef WITNESSES
	/* `sometimes` properties: "assertion violated !(x)" means reached */
	all_succeed = (arrived == N);
	some_superseded = 0;
	some_dead_lettered = 0;
	j = 0;
	do
	:: j < N ->
		all_succeed = all_succeed && rs[j] == SUCCEEDED;
		some_superseded = some_superseded || rs[j] == SUPERSEDED;
		some_dead_lettered = some_dead_lettered || rs[j] == DEAD_LETTERED;
		j++
	:: else -> break
	od;
	some_held = 0;
	j = 0;
	do
	:: j < 4 * N -> some_held = some_held || STATUS(msg[j]) == PARKED; j++
	:: else -> break
	od;
	assert(!all_succeed);
	assert(!some_superseded);
	assert(!some_dead_lettered);
	assert(!some_held);
#endif
	skip
}

/* One worker's step; equal workers are one (the first stands for all). */
#define WSTEP(i) :: d_step { i < nw && (i == 0 || wk[i] != wk[i - 1]) -> \
	w = wk[i]; removew(i); step(); check() }
#define CRASH(i) :: d_step { crashes > 0 && i < nw && (i == 0 || wk[i] != wk[i - 1]) -> \
	crashes--; w = wk[i]; removew(i); r = ROF(w); k = KOF(w); \
	if :: (w & HOLDS) -> expire() :: else fi; check() }
#define STALL(i) :: d_step { stalls > 0 && i < nw && (wk[i] & HOLDS) && (i == 0 || wk[i] != wk[i - 1]) -> \
	stalls--; w = wk[i]; removew(i); r = ROF(w); k = KOF(w); \
	addw(w - HOLDS); expire(); check() }
#define DELIVER(rr, kk) :: d_step { STATUS(msg[4 * rr + kk]) == VISIBLE -> \
	msg[4 * rr + kk] = msg[4 * rr + kk] + 1; addw(MKW(rr, kk, READ, HOLDS, 0)); check() }
#define DELIVER4(rr) DELIVER(rr, 0) DELIVER(rr, 1) DELIVER(rr, 2) DELIVER(rr, 3)
#define FINISH(rr) :: d_step { build[rr] == RUNNING -> \
	build[rr] = STOPPED; msg[4 * rr + KSIG] = VISIBLE; durable(); check() }

active proctype world() {
	do
	/* the next request arrives, as the latest head */
	:: d_step { arrived < N ->
		rs[arrived] = ACCEPTED;
		msg[4 * arrived + KPROC] = VISIBLE;
		arrived++;
		stale(FH, 255);
		durable();
		sortw();
		check() }
	DELIVER4(0)
#if N > 1
	DELIVER4(1)
#endif
#if N > 2
	DELIVER4(2)
#endif
#if N > 3
	DELIVER4(3)
#endif
	FINISH(0)
#if N > 1
	FINISH(1)
#endif
#if N > 2
	FINISH(2)
#endif
#if N > 3
	FINISH(3)
#endif
	WSTEP(0) WSTEP(1) WSTEP(2)
	CRASH(0) CRASH(1) CRASH(2)
	STALL(0) STALL(1) STALL(2)
#if W > 3
	WSTEP(3) CRASH(3) STALL(3)
#endif
#if W > 4
	WSTEP(4) CRASH(4) STALL(4)
#endif
#if W > 5
	WSTEP(5) CRASH(5) STALL(5)
#endif
#if W > 6
	WSTEP(6) CRASH(6) STALL(6)
#endif
#if W > 7
	WSTEP(7) CRASH(7) STALL(7)
#endif
#if W > 8
	WSTEP(8) CRASH(8) STALL(8)
#endif
#if W > 9
	WSTEP(9) CRASH(9) STALL(9)
#endif
	/* nothing at all can happen */
	:: timeout -> break
	od;
	skip;    /* break may not jump into a d_step */
#ifndef OFF_no_wedge
	/* one d_step: the scratch loop counter is hidden, so outside one its
	 * steps would match as one state */
	d_step {
		no_wedge = 1;
		j = 0;
		do
		:: j < N -> no_wedge = no_wedge && terminal(rs[j]); j++
		:: else -> break
		od;
		assert(no_wedge)
	}
#endif
}
