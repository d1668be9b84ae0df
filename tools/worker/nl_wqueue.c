/* SPDX-License-Identifier: BSD-3-Clause */
/* nlevel-worker's per-machine queue: occupancy, KILL lookup, time limits, DONE (nl_wqueue.h) */
#include <string.h>
#include <sys/wait.h>

#include "nl_wqueue.h"

uint32_t
nl_wq_ms(uint64_t ns)
{
	return ns / 1000000 > UINT32_MAX ? UINT32_MAX : (uint32_t)(ns / 1000000);
}

uint64_t
nl_wq_backlog_ns(const struct nl_wq_mach *m, uint64_t now)
{
	uint64_t est = m->mean_ns > 0 ? m->mean_ns : 1000000000ull, sum = 0;

	for (unsigned int j = 0; j < m->n; j++) {
		const struct nl_wq_sub *s = &m->q[(m->head + j) % NL_WQ_QCAP];
		uint64_t e = est;

		if (s->d.cmd_id == 0)
			continue;
		if (s->d.time_limit_ms != 0 && (uint64_t)s->d.time_limit_ms * 1000000ull < e)
			e = (uint64_t)s->d.time_limit_ms * 1000000ull;
		if (j == 0 && m->pid > 0) {
			uint64_t el = now > m->start_ns ? now - m->start_ns : 0;

			e = e > el + e / 4 ? e - el : e / 4;
			if (m->deadline_ns > now && m->deadline_ns - now < e)
				e = m->deadline_ns - now;
			if (e < 1000000)
				e = 1000000;
		}
		sum += e;
	}
	if (m->busy_until_ns > now)
		sum += m->busy_until_ns - now;
	return sum;
}

enum nl_wq_kill_res
nl_wq_kill(struct nl_wq_mach *mach, unsigned int n_mach, const struct nl_msg_kill *k,
	   uint64_t now, struct nl_msg_dispatch *d, struct nl_msg_done *done)
{
	uint8_t from;

	return nl_wq_kill_from(mach, n_mach, k, now, d, done, &from);
}

enum nl_wq_kill_res
nl_wq_kill_from(struct nl_wq_mach *mach, unsigned int n_mach, const struct nl_msg_kill *k,
		uint64_t now, struct nl_msg_dispatch *d, struct nl_msg_done *done, uint8_t *from)
{
	struct nl_wq_mach *m;

	if (k->mach >= n_mach)
		return NL_WQ_KILL_NONE;
	m = &mach[k->mach];
	for (unsigned int j = 0; j < m->n; j++) {
		struct nl_wq_sub *s = &m->q[(m->head + j) % NL_WQ_QCAP];

		if (s->d.task_id != k->task_id || s->d.token != k->token || s->d.sub != k->sub)
			continue;
		if (j == 0 && (m->pid > 0 || m->starting)) {
			if (m->end_state == NL_DONE_EXITED)
				m->end_state = NL_DONE_CANCELLED;
			return NL_WQ_KILL_RUNNING;
		}
		memset(done, 0, sizeof(*done));
		done->state = NL_DONE_CANCELLED;
		done->queue_ms = nl_wq_ms(now > s->arr_ns ? now - s->arr_ns : 0);
		*d = s->d;
		*from = s->from;
		for (unsigned int i = j; i + 1 < m->n; i++) /* close the gap in the ring */
			m->q[(m->head + i) % NL_WQ_QCAP] = m->q[(m->head + i + 1) % NL_WQ_QCAP];
		m->n--;
		return NL_WQ_KILL_QUEUED;
	}
	return NL_WQ_KILL_NONE;
}

void
nl_wq_started(struct nl_wq_mach *m, uint64_t now, uint64_t max_time_ns)
{
	uint64_t lim = (uint64_t)m->q[m->head].d.time_limit_ms * 1000000ull;

	if (max_time_ns != 0 && (lim == 0 || max_time_ns < lim))
		lim = max_time_ns;
	m->start_ns = now;
	m->deadline_ns = lim != 0 ? now + lim : 0;
	m->kill_ns = 0;
	m->end_state = NL_DONE_EXITED;
}

int32_t
nl_wq_end(struct nl_wq_mach *m, int wstatus, bool oom, uint64_t now, struct nl_msg_dispatch *d,
	  struct nl_msg_done *done)
{
	const struct nl_wq_sub *s = &m->q[m->head];
	uint64_t run = now > m->start_ns ? now - m->start_ns : 0;

	done->state = m->end_state;
	if (oom && done->state == NL_DONE_EXITED) /* its memory limit's OOM kill */
		done->state = NL_DONE_OOM;
	done->run_ms = nl_wq_ms(run);
	done->queue_ms = nl_wq_ms(m->start_ns > s->arr_ns ? m->start_ns - s->arr_ns : 0);
	m->mean_ns = m->mean_ns == 0 ? run : (4 * m->mean_ns + run) / 5;
	*d = s->d;
	m->pid = 0;
	m->deadline_ns = 0;
	m->end_state = NL_DONE_EXITED;
	m->head = (m->head + 1) % NL_WQ_QCAP;
	m->n--;
	return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) :
	       WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : 255;
}
