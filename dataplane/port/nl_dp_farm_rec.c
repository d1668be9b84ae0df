/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The task farm's records on disk (nl_dp_farm_rec.h). Schema (PRAGMA user_version 1; issue
 * #34's journal adds tables and columns, it does not replace these):
 *   batch(submit PRIMARY KEY, owner, t_first_ns)       owner: principal index, -1 = site key
 *   task(submit, idx, state, attempts, status, worker, mach, queue_ms, run_ms, cpu_ms,
 *        mem_kib, t_accept_ns, t_end_ns, PRIMARY KEY(submit, idx)) WITHOUT ROWID
 * state is enum nl_farm_tstate; #34 adds handle(h, name, req, rank, principal) (user_version
 * 2) and fsubmit(submit, idx, handle, attempt, need, data_bits, n_split, tl_ms, args,
 * client_ip, client_port, client_mac, client_ts_ns, principal) (user_version 3): the FSUBMIT
 * of each task not ended, deleted with its end, so a restart admits it again; fdisp(submit,
 * idx, sub, worker, mach) (user_version 4): where each sub-task after the first of a task not
 * ended was dispatched (sub-task 0's is task.worker, task.mach), deleted with its end, so a
 * restart sends each back to its own worker. Each pass of the thread writes what the ring holds in one transaction (synchronous =
 * FULL in WAL mode: one fsync of the WAL per pass, a group commit, not one per task), then
 * publishes how many events are on disk (the I/O lcore holds a farm DISPATCH until its
 * record is: nl_farm_rec_durable()), then answers the queries it met, in ring order.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sqlite3.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "nl_atomic.h"
#include "nl_dp_farm_rec.h"
#include "nl_principal.h"

#define EV_RING 65536u
#define OUT_RING 256u
#define BURST 512u

struct nl_farm_rec {
	sqlite3 *db;
	sqlite3_stmt *ins_batch, *accept, *dispatch, *end, *counts, *owner, *list, *handle;
	sqlite3_stmt *ins_sub, *del_sub; /* #34: fsubmit */
	sqlite3_stmt *ins_disp, *del_disp; /* #34: fdisp */
	struct rte_ring *ev;
	struct rte_ring *out;
	pthread_t th;
	bool started;
	int quit;
	uint64_t dropped, written;
	uint64_t put_n;   /* #34: events queued (the I/O lcore) */
	uint64_t durable_n; /* #34: events committed (the records thread; release store) */
};

static const char *const schema =
	"PRAGMA journal_mode=WAL;"
	"CREATE TABLE IF NOT EXISTS batch(submit INTEGER PRIMARY KEY, owner INTEGER NOT NULL,"
	" t_first_ns INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS task(submit INTEGER NOT NULL, idx INTEGER NOT NULL,"
	" state INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
	" status INTEGER NOT NULL DEFAULT -1, worker INTEGER NOT NULL DEFAULT 0,"
	" mach INTEGER NOT NULL DEFAULT 0, queue_ms INTEGER NOT NULL DEFAULT 0,"
	" run_ms INTEGER NOT NULL DEFAULT 0, cpu_ms INTEGER NOT NULL DEFAULT 0,"
	" mem_kib INTEGER NOT NULL DEFAULT 0, t_accept_ns INTEGER NOT NULL DEFAULT 0,"
	" t_end_ns INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(submit, idx)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS handle(h INTEGER PRIMARY KEY, name TEXT NOT NULL,"
	" req TEXT NOT NULL, rank TEXT NOT NULL, principal INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS fsubmit(submit INTEGER NOT NULL, idx INTEGER NOT NULL,"
	" handle INTEGER NOT NULL, attempt INTEGER NOT NULL, need INTEGER NOT NULL,"
	" data_bits INTEGER NOT NULL, n_split INTEGER NOT NULL, tl_ms INTEGER NOT NULL,"
	" args BLOB, client_ip INTEGER NOT NULL, client_port INTEGER NOT NULL,"
	" client_mac BLOB, client_ts_ns INTEGER NOT NULL, principal INTEGER NOT NULL,"
	" PRIMARY KEY(submit, idx)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS fdisp(submit INTEGER NOT NULL, idx INTEGER NOT NULL,"
	" sub INTEGER NOT NULL, worker INTEGER NOT NULL, mach INTEGER NOT NULL,"
	" PRIMARY KEY(submit, idx, sub)) WITHOUT ROWID;"
	"PRAGMA user_version=4;";

static int
prep(struct nl_farm_rec *r, sqlite3_stmt **st, const char *sql)
{
	return sqlite3_prepare_v3(r->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
}

static void
step(sqlite3_stmt *st)
{
	sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

static void
write_ev(struct nl_farm_rec *r, const struct nl_farm_rec_ev *e)
{
	int64_t sub = (int64_t)(e->task_id >> 32), idx = (int64_t)(e->task_id & 0xffffffffu);

	switch (e->kind) {
	case NL_REC_ACCEPT:
		sqlite3_bind_int64(r->ins_batch, 1, sub);
		sqlite3_bind_int64(r->ins_batch, 2,
				   e->principal == NL_PRINCIPAL_NONE ? -1 : (int64_t)e->principal);
		sqlite3_bind_int64(r->ins_batch, 3, (int64_t)e->t_ns);
		step(r->ins_batch);
		sqlite3_bind_int64(r->accept, 1, sub);
		sqlite3_bind_int64(r->accept, 2, idx);
		sqlite3_bind_int(r->accept, 3, e->attempt);
		sqlite3_bind_int64(r->accept, 4, (int64_t)e->t_ns);
		step(r->accept);
		if (e->sub != NULL) { /* #34: kept until the task ends */
			const struct nl_farm_rec_sub *q = e->sub;

			sqlite3_bind_int64(r->ins_sub, 1, sub);
			sqlite3_bind_int64(r->ins_sub, 2, idx);
			sqlite3_bind_int64(r->ins_sub, 3, q->handle);
			sqlite3_bind_int(r->ins_sub, 4, q->attempt);
			sqlite3_bind_int64(r->ins_sub, 5, (int64_t)q->need);
			sqlite3_bind_int64(r->ins_sub, 6, (int64_t)q->data_bits);
			sqlite3_bind_int(r->ins_sub, 7, q->n_split);
			sqlite3_bind_int64(r->ins_sub, 8, q->tl_ms);
			sqlite3_bind_blob(r->ins_sub, 9, q->args, q->args_len, SQLITE_STATIC);
			sqlite3_bind_int64(r->ins_sub, 10, q->ip);
			sqlite3_bind_int(r->ins_sub, 11, q->port);
			sqlite3_bind_blob(r->ins_sub, 12, q->mac, 6, SQLITE_STATIC);
			sqlite3_bind_int64(r->ins_sub, 13, (int64_t)q->client_ts_ns);
			sqlite3_bind_int64(r->ins_sub, 14, q->principal == NL_PRINCIPAL_NONE ?
								  -1 : (int64_t)q->principal);
			step(r->ins_sub);
			free(e->sub);
		}
		break;
	case NL_REC_DISPATCH:
		if (e->subtask != 0) { /* #34: a later sub-task's worker and machine */
			sqlite3_bind_int64(r->ins_disp, 1, sub);
			sqlite3_bind_int64(r->ins_disp, 2, idx);
			sqlite3_bind_int(r->ins_disp, 3, e->subtask);
			sqlite3_bind_int64(r->ins_disp, 4, e->worker_id);
			sqlite3_bind_int(r->ins_disp, 5, e->mach);
			step(r->ins_disp);
			break;
		}
		sqlite3_bind_int64(r->dispatch, 1, e->worker_id);
		sqlite3_bind_int(r->dispatch, 2, e->mach);
		sqlite3_bind_int64(r->dispatch, 3, sub);
		sqlite3_bind_int64(r->dispatch, 4, idx);
		step(r->dispatch);
		break;
	case NL_REC_END:
		sqlite3_bind_int64(r->end, 1, sub);
		sqlite3_bind_int64(r->end, 2, idx);
		sqlite3_bind_int(r->end, 3, e->state);
		sqlite3_bind_int(r->end, 4, e->status);
		sqlite3_bind_int64(r->end, 5, e->worker_id);
		sqlite3_bind_int(r->end, 6, e->mach);
		sqlite3_bind_int64(r->end, 7, e->queue_ms);
		sqlite3_bind_int64(r->end, 8, e->run_ms);
		sqlite3_bind_int64(r->end, 9, e->cpu_ms);
		sqlite3_bind_int64(r->end, 10, e->mem_kib);
		sqlite3_bind_int64(r->end, 11, (int64_t)e->t_ns);
		sqlite3_bind_int(r->end, 12, e->attempt);
		step(r->end);
		sqlite3_bind_int64(r->del_sub, 1, sub); /* #34: ended: not admitted again */
		sqlite3_bind_int64(r->del_sub, 2, idx);
		step(r->del_sub);
		sqlite3_bind_int64(r->del_disp, 1, sub);
		sqlite3_bind_int64(r->del_disp, 2, idx);
		step(r->del_disp);
		break;
	case NL_REC_HANDLE: { /* #34: "name\0req\0rank" */
		const char *name = e->text, *req = name + strlen(name) + 1;
		const char *rank = req + strlen(req) + 1;

		sqlite3_bind_int64(r->handle, 1, e->worker_id);
		sqlite3_bind_text(r->handle, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->handle, 3, req, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->handle, 4, rank, -1, SQLITE_STATIC);
		sqlite3_bind_int64(r->handle, 5,
				   e->principal == NL_PRINCIPAL_NONE ? -1 : (int64_t)e->principal);
		step(r->handle);
		free(e->text);
		break;
	}
	default:
		return;
	}
	nl_atomic_store_relaxed(&r->written, r->written + 1);
}

/* Whether the asker may see batch sub (#35: its owner or the site key); known: it exists. */
static bool
visible(struct nl_farm_rec *r, int64_t sub, uint32_t asker, bool *known)
{
	bool ok = false;

	*known = false;
	sqlite3_bind_int64(r->owner, 1, sub);
	if (sqlite3_step(r->owner) == SQLITE_ROW) {
		int64_t o = sqlite3_column_int64(r->owner, 0);

		*known = true;
		ok = asker == NL_PRINCIPAL_NONE || o == (asker == NL_PRINCIPAL_NONE ? -1 : (int64_t)asker);
	}
	sqlite3_reset(r->owner);
	sqlite3_clear_bindings(r->owner);
	return ok;
}

static void
answer(struct nl_farm_rec *r, const struct nl_farm_rec_ev *e)
{
	struct nl_farm_rec_out *o = calloc(1, sizeof(*o));
	int64_t sub = (int64_t)(e->task_id >> 32);
	bool known, vis;

	if (o == NULL)
		return;
	o->principal = e->principal;
	o->ip = e->ip;
	o->port = e->port;
	memcpy(o->mac, e->mac, 6);
	vis = visible(r, sub, e->principal, &known);
	if (e->kind == NL_REC_STATUS_Q) {
		struct nl_msg_status *s = &o->m.u.farm.status;

		o->m.type = NL_MSG_STATUS;
		s->req_id = e->req_id;
		s->submit_id = (uint64_t)sub;
		s->known = e->known;
		s->c = e->c;
		if (known && !vis) { /* #35: another principal's batch */
			s->known = 0;
			memset(&s->c, 0, sizeof(s->c));
		} else if (known) {
			s->known = 1;
			s->has_tasks = 1;
			sqlite3_bind_int64(r->counts, 1, sub);
			while (sqlite3_step(r->counts) == SQLITE_ROW) {
				int st = sqlite3_column_int(r->counts, 0);
				uint32_t n = (uint32_t)sqlite3_column_int64(r->counts, 1);

				if (st > 0 && st < NL_FARM_T_MAX)
					s->t.n[st] += n;
				s->t.tasks += n;
			}
			sqlite3_reset(r->counts);
			sqlite3_clear_bindings(r->counts);
		}
	} else {
		struct nl_msg_tasks *t = &o->m.u.farm.tasks;

		o->m.type = NL_MSG_TASKS;
		t->req_id = e->req_id;
		t->submit_id = (uint64_t)sub;
		t->known = known && vis;
		t->next = e->from;
		if (t->known) {
			sqlite3_bind_int64(r->list, 1, sub);
			sqlite3_bind_int64(r->list, 2, e->from);
			sqlite3_bind_int(r->list, 3, e->max + 1);
			while (sqlite3_step(r->list) == SQLITE_ROW) {
				struct nl_farm_trec *q;

				if (t->n == e->max) {
					t->more = 1;
					t->next = (uint32_t)sqlite3_column_int64(r->list, 0);
					break;
				}
				q = &t->rec[t->n++];
				q->index = (uint32_t)sqlite3_column_int64(r->list, 0);
				q->state = (uint8_t)sqlite3_column_int(r->list, 1);
				q->attempts = (uint8_t)sqlite3_column_int(r->list, 2);
				q->status = sqlite3_column_int(r->list, 3);
				q->worker_id = (uint32_t)sqlite3_column_int64(r->list, 4);
				q->mach = (uint16_t)sqlite3_column_int(r->list, 5);
				q->queue_ms = (uint32_t)sqlite3_column_int64(r->list, 6);
				q->run_ms = (uint32_t)sqlite3_column_int64(r->list, 7);
				if (q->state >= NL_FARM_T_MAX)
					q->state = NL_FARM_T_NONE;
			}
			sqlite3_reset(r->list);
			sqlite3_clear_bindings(r->list);
		}
	}
	if (rte_ring_sp_enqueue(r->out, o) != 0)
		free(o); /* the asker asks again */
}

static void *
rec_thread(void *arg)
{
	struct nl_farm_rec *r = arg;
	struct nl_farm_rec_ev *ev = malloc(BURST * sizeof(*ev));

	if (ev == NULL)
		return NULL;
	for (;;) {
		unsigned int n = rte_ring_sc_dequeue_burst_elem(r->ev, ev, sizeof(*ev), BURST, NULL);

		if (n == 0) {
			if (__atomic_load_n(&r->quit, __ATOMIC_ACQUIRE))
				break;
			usleep(1000);
			continue;
		}
		sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL);
		for (unsigned int i = 0; i < n; i++)
			write_ev(r, &ev[i]);
		sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
		/* #34: what was queued up to here is on disk: held DISPATCHes may go */
		__atomic_store_n(&r->durable_n, r->durable_n + n, __ATOMIC_RELEASE);
		for (unsigned int i = 0; i < n; i++)
			if (ev[i].kind == NL_REC_STATUS_Q || ev[i].kind == NL_REC_TASKS_Q)
				answer(r, &ev[i]);
	}
	free(ev);
	return NULL;
}

static int
mkdirs(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		char c = p[i];

		p[i] = '\0';
		if (mkdir(p, 0750) != 0 && errno != EEXIST)
			return -errno;
		p[i] = c;
	}
	return 0;
}

int
nl_farm_rec_open(struct nl_farm_rec **out, const char *dir, uint32_t ip, uint16_t udp_port,
		 bool full_sync, char *err, size_t errlen)
{
	struct nl_farm_rec *r = calloc(1, sizeof(*r));
	char path[4200], ipt[INET_ADDRSTRLEN] = "0.0.0.0";
	struct in_addr a = { .s_addr = ip };
	static unsigned int seq;
	char rn[32];
	int rc;

	*out = NULL;
	if (r == NULL)
		return -ENOMEM;
	rc = mkdirs(dir);
	if (rc == 0 && access(dir, W_OK | X_OK) != 0)
		rc = -errno;
	if (rc != 0) {
		snprintf(err, errlen, "--state-dir %s: cannot create or write it: %s", dir,
			 strerror(-rc));
		free(r);
		return rc;
	}
	inet_ntop(AF_INET, &a, ipt, sizeof(ipt));
	snprintf(path, sizeof(path), "%s/farm-%s_%u.sqlite", dir, ipt, udp_port);
	if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				       SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    sqlite3_exec(r->db, schema, NULL, NULL, NULL) != SQLITE_OK ||
	    /* #34: FULL: each pass's commit is on disk (a group commit) */
	    sqlite3_exec(r->db, full_sync ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    prep(r, &r->ins_batch, "INSERT OR IGNORE INTO batch(submit, owner, t_first_ns) "
				   "VALUES(?1, ?2, ?3)") != SQLITE_OK ||
	    prep(r, &r->accept, "INSERT INTO task(submit, idx, state, attempts, t_accept_ns) "
				"VALUES(?1, ?2, 1, ?3, ?4) ON CONFLICT(submit, idx) DO UPDATE SET "
				"state = 1, attempts = max(attempts, excluded.attempts), "
				"t_accept_ns = excluded.t_accept_ns") != SQLITE_OK ||
	    prep(r, &r->dispatch, "UPDATE task SET state = 2, worker = ?1, mach = ?2 WHERE "
				  "submit = ?3 AND idx = ?4 AND state IN (1, 2)") != SQLITE_OK ||
	    prep(r, &r->end, "INSERT INTO task(submit, idx, state, status, worker, mach, queue_ms,"
			     " run_ms, cpu_ms, mem_kib, t_end_ns, attempts) VALUES(?1, ?2, ?3, ?4,"
			     " ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT(submit, idx) DO "
			     "UPDATE SET state = ?3, status = ?4, worker = ?5, mach = ?6, "
			     "queue_ms = ?7, run_ms = ?8, cpu_ms = ?9, mem_kib = ?10, "
			     "t_end_ns = ?11, attempts = max(attempts, ?12)") != SQLITE_OK ||
	    prep(r, &r->counts, "SELECT state, count(*) FROM task WHERE submit = ?1 GROUP BY "
				"state") != SQLITE_OK ||
	    prep(r, &r->owner, "SELECT owner FROM batch WHERE submit = ?1") != SQLITE_OK ||
	    prep(r, &r->list, "SELECT idx, state, attempts, status, worker, mach, queue_ms, "
			      "run_ms FROM task WHERE submit = ?1 AND idx >= ?2 ORDER BY idx "
			      "LIMIT ?3") != SQLITE_OK ||
	    prep(r, &r->handle, "INSERT OR REPLACE INTO handle(h, name, req, rank, principal) "
				"VALUES(?1, ?2, ?3, ?4, ?5)") != SQLITE_OK ||
	    prep(r, &r->ins_sub, "INSERT OR REPLACE INTO fsubmit(submit, idx, handle, attempt, "
				 "need, data_bits, n_split, tl_ms, args, client_ip, client_port, "
				 "client_mac, client_ts_ns, principal) VALUES(?1, ?2, ?3, ?4, ?5, "
				 "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)") != SQLITE_OK ||
	    prep(r, &r->del_sub, "DELETE FROM fsubmit WHERE submit = ?1 AND idx = ?2") !=
		    SQLITE_OK ||
	    prep(r, &r->ins_disp, "INSERT OR REPLACE INTO fdisp(submit, idx, sub, worker, mach) "
				  "VALUES(?1, ?2, ?3, ?4, ?5)") != SQLITE_OK ||
	    prep(r, &r->del_disp, "DELETE FROM fdisp WHERE submit = ?1 AND idx = ?2") !=
		    SQLITE_OK) {
		snprintf(err, errlen, "task records %s: %s", path,
			 r->db != NULL ? sqlite3_errmsg(r->db) : "cannot open");
		nl_farm_rec_close(r);
		return -EIO;
	}
	snprintf(rn, sizeof(rn), "nl_rec_ev%u", seq);
	r->ev = rte_ring_create_elem(rn, sizeof(struct nl_farm_rec_ev), EV_RING, SOCKET_ID_ANY,
				     RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(rn, sizeof(rn), "nl_rec_out%u", seq++);
	r->out = rte_ring_create(rn, OUT_RING, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (r->ev == NULL || r->out == NULL ||
	    pthread_create(&r->th, NULL, rec_thread, r) != 0) {
		snprintf(err, errlen, "task records: cannot start their thread");
		nl_farm_rec_close(r);
		return -ENOMEM;
	}
	r->started = true;
	*out = r;
	return 0;
}

void
nl_farm_rec_close(struct nl_farm_rec *r)
{
	void *o;

	if (r == NULL)
		return;
	if (r->started) {
		__atomic_store_n(&r->quit, 1, __ATOMIC_RELEASE);
		pthread_join(r->th, NULL);
	}
	while (r->out != NULL && rte_ring_sc_dequeue(r->out, &o) == 0)
		free(o);
	rte_ring_free(r->ev);
	rte_ring_free(r->out);
	sqlite3_finalize(r->ins_batch);
	sqlite3_finalize(r->accept);
	sqlite3_finalize(r->dispatch);
	sqlite3_finalize(r->end);
	sqlite3_finalize(r->counts);
	sqlite3_finalize(r->owner);
	sqlite3_finalize(r->list);
	sqlite3_finalize(r->handle);
	sqlite3_finalize(r->ins_sub);
	sqlite3_finalize(r->del_sub);
	sqlite3_finalize(r->ins_disp);
	sqlite3_finalize(r->del_disp);
	sqlite3_close(r->db);
	free(r);
}

bool
nl_farm_rec_put(struct nl_farm_rec *r, const struct nl_farm_rec_ev *ev)
{
	if (rte_ring_sp_enqueue_elem(r->ev, (void *)(uintptr_t)ev, sizeof(*ev)) == 0) {
		r->put_n++;
		return true;
	}
	nl_atomic_store_relaxed(&r->dropped, r->dropped + 1);
	if (ev->kind == NL_REC_HANDLE)
		free(ev->text);
	if (ev->kind == NL_REC_ACCEPT)
		free(ev->sub);
	return false;
}

static const char *
col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t != NULL ? (const char *)t : "";
}

/* #34: columns 11.. of a task not ended: its FSUBMIT, when the journal kept it */
static void
row_sub(sqlite3_stmt *st, struct nl_farm_rec_task *t)
{
	struct nl_farm_rec_sub *q = &t->sub;
	int64_t p;
	int n;

	if (sqlite3_column_type(st, 11) == SQLITE_NULL)
		return;
	q->handle = (uint32_t)sqlite3_column_int64(st, 11);
	q->attempt = (uint8_t)sqlite3_column_int(st, 12);
	q->need = (uint64_t)sqlite3_column_int64(st, 13);
	q->data_bits = (uint64_t)sqlite3_column_int64(st, 14);
	q->n_split = (uint16_t)sqlite3_column_int(st, 15);
	q->tl_ms = (uint32_t)sqlite3_column_int64(st, 16);
	n = sqlite3_column_bytes(st, 17);
	if (n < 0 || n > (int)NL_PROTO_MAX_ARGS)
		return; /* not ours: not admitted again */
	if (n > 0)
		memcpy(q->args, sqlite3_column_blob(st, 17), (size_t)n);
	q->args_len = (uint8_t)n;
	q->ip = (uint32_t)sqlite3_column_int64(st, 18);
	q->port = (uint16_t)sqlite3_column_int(st, 19);
	if (sqlite3_column_bytes(st, 20) == 6)
		memcpy(q->mac, sqlite3_column_blob(st, 20), 6);
	q->client_ts_ns = (uint64_t)sqlite3_column_int64(st, 21);
	p = sqlite3_column_int64(st, 22);
	q->principal = p < 0 ? NL_PRINCIPAL_NONE : (uint32_t)p;
	t->has_sub = q->handle != 0 && q->n_split >= 1 && q->n_split <= NL_PROTO_MAX_SPLIT;
}

static void
row_task(sqlite3_stmt *st, struct nl_farm_rec_task *t)
{
	memset(t, 0, sizeof(*t));
	t->task_id = (uint64_t)sqlite3_column_int64(st, 0) << 32 |
		     ((uint64_t)sqlite3_column_int64(st, 1) & 0xffffffffu);
	t->state = (uint8_t)sqlite3_column_int(st, 2);
	t->attempt = (uint8_t)sqlite3_column_int(st, 3);
	t->status = sqlite3_column_int(st, 4);
	t->worker_id = (uint32_t)sqlite3_column_int64(st, 5);
	t->mach = (uint16_t)sqlite3_column_int(st, 6);
	t->queue_ms = (uint32_t)sqlite3_column_int64(st, 7);
	t->run_ms = (uint32_t)sqlite3_column_int64(st, 8);
	t->cpu_ms = (uint32_t)sqlite3_column_int64(st, 9);
	t->mem_kib = (uint32_t)sqlite3_column_int64(st, 10);
}

int
nl_farm_rec_replay(struct nl_farm_rec *r, nl_farm_rec_handle_fn on_h, nl_farm_rec_task_fn on_t,
		   nl_farm_rec_disp_fn on_d, void *ctx, uint32_t max_ended)
{
	static const char *const q_task[2] = {
		"SELECT submit, idx, state, attempts, status, worker, mach, queue_ms, run_ms, "
		"cpu_ms, mem_kib, handle, attempt, need, data_bits, n_split, tl_ms, args, "
		"client_ip, client_port, client_mac, client_ts_ns, principal FROM task LEFT JOIN "
		"fsubmit USING(submit, idx) WHERE state IN (1, 2) ORDER BY submit, idx",
		"SELECT submit, idx, state, attempts, status, worker, mach, queue_ms, run_ms, "
		"cpu_ms, mem_kib FROM task WHERE state >= 3 ORDER BY t_end_ns DESC LIMIT ?1",
	};
	sqlite3_stmt *st = NULL;
	int n = 0, rc = SQLITE_OK;

	if (on_h != NULL &&
	    sqlite3_prepare_v2(r->db, "SELECT h, name, req, rank, principal FROM handle ORDER BY h",
			       -1, &st, NULL) == SQLITE_OK) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t p = sqlite3_column_int64(st, 4);
			struct nl_farm_rec_handle h = {
				.h = (uint32_t)sqlite3_column_int64(st, 0),
				.principal = p < 0 ? NL_PRINCIPAL_NONE : (uint32_t)p,
				.name = col_text(st, 1), .req = col_text(st, 2), .rank = col_text(st, 3),
			};

			on_h(ctx, &h);
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return -EIO;
	}
	for (unsigned int q = 0; on_t != NULL && q < 2; q++) {
		if (sqlite3_prepare_v2(r->db, q_task[q], -1, &st, NULL) != SQLITE_OK)
			return -EIO;
		if (q == 1)
			sqlite3_bind_int64(st, 1, max_ended);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct nl_farm_rec_task t;

			row_task(st, &t);
			if (q == 0)
				row_sub(st, &t);
			on_t(ctx, &t);
			n++;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return -EIO;
	}
	if (on_d != NULL) {
		if (sqlite3_prepare_v2(r->db, "SELECT submit, idx, d.sub, d.worker, d.mach FROM "
				       "fdisp AS d JOIN task USING(submit, idx) WHERE state IN (1, 2) "
				       "ORDER BY submit, idx, d.sub", -1, &st, NULL) != SQLITE_OK)
			return -EIO;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			on_d(ctx, ((uint64_t)sqlite3_column_int64(st, 0) << 32) |
					  (uint32_t)sqlite3_column_int64(st, 1),
			     (uint16_t)sqlite3_column_int(st, 2),
			     (uint32_t)sqlite3_column_int64(st, 3), (uint16_t)sqlite3_column_int(st, 4));
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return -EIO;
	}
	return n;
}

struct nl_farm_rec_out *
nl_farm_rec_answer(struct nl_farm_rec *r)
{
	void *o;

	return r != NULL && rte_ring_sc_dequeue(r->out, &o) == 0 ? o : NULL;
}

uint64_t
nl_farm_rec_dropped(const struct nl_farm_rec *r)
{
	return nl_atomic_load_relaxed(&r->dropped);
}

uint64_t
nl_farm_rec_written(const struct nl_farm_rec *r)
{
	return nl_atomic_load_relaxed(&r->written);
}

uint64_t
nl_farm_rec_mark(const struct nl_farm_rec *r)
{
	return r->put_n;
}

bool
nl_farm_rec_durable(const struct nl_farm_rec *r, uint64_t mark)
{
	return __atomic_load_n(&r->durable_n, __ATOMIC_ACQUIRE) >= mark;
}
