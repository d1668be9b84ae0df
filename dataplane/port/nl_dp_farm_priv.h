/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The task-farm state of port mode (nl_dp_farm.c, its telemetry in nl_dp_farm_tel.c): see the
 * top of nl_dp_farm.c. Private to those two files.
 */
#ifndef NL_DP_FARM_PRIV_H
#define NL_DP_FARM_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "nl_dp_farm.h"
#include "nl_farm_dd.h"
#include "nl_match.h"
#include "nl_match_cad.h"

#define FARM_NAMES 64u     /* distinct command names */
#define FARM_HANDLES 1024u /* registered Requirements/Rank handles (handle 0 unused) */
#define FARM_PR_HANDLES 128u /* #35: new handles one principal may register (the operator: all) */
#define FARM_SUBMITS 4096u /* submit ids with counters (power of two) */
#define FARM_DONE_KEEP 16384u /* ended FSUBMITs remembered for resends (power of two) */

struct farm_worker {
	uint16_t cmd[FARM_NAMES]; /* local command id per name id, 0 = not offered */
};

struct farm_ad {
	struct nl_match_mad *ad;
	char *text;
};

struct farm_handle {
	uint32_t name;             /* name id */
	struct nl_match_expr *x;
	char *req, *rank;          /* texts, for de-duplication */
};

struct farm_sub {
	uint64_t id;               /* submit id, 0 = free */
	uint64_t last_tsc;
	struct nl_farm_counts c;   /* written by the I/O lcore, read relaxed by telemetry */
	uint32_t owner;            /* #35: the principal of its first FSUBMIT (io->principal) */
	bool owned;                /* owner set */
};

/* The replies of an ended FSUBMIT, sent again to a resend. */
struct farm_done {
	uint64_t task_id;          /* 0 = unused */
	uint32_t ip;
	uint16_t port;
	bool has_info;
	struct nl_msg_taskinfo ti;
	struct nl_msg_reply rep;   /* COMPLETE or REJECT */
	uint8_t type;
};

struct nl_dp_farm {
	char names[FARM_NAMES][NL_FARM_NAME_MAX + 1];
	unsigned int n_names;
	struct farm_worker wk[MAX_WORKERS];
	struct farm_ad *ad;        /* [n_mach] */
	struct farm_handle hd[FARM_HANDLES];
	unsigned int n_h;          /* next handle (1..) */
	uint16_t pr_h[NL_PRINCIPAL_MAX]; /* #35: handles each principal registered first */
	uint32_t *h_by_aux;        /* [n_meta] */
	uint64_t *disp_tsc;        /* [n_meta] last DISPATCH of sub-task 0 */
	uint32_t *disp_slot;       /* [n_meta] its machine */
	uint32_t cur_h;            /* handle of the FSUBMIT being admitted, 0 = none */
	struct nl_match_tab *tab;  /* published */
	struct farm_sub sub[FARM_SUBMITS];
	uint64_t n_rebuilds;
	/* resends (see the top of the file) */
	struct nl_farm_dd_tab dd;  /* cap: power of two >= 2 (n_meta + FARM_DONE_KEEP) */
	struct farm_done *done;    /* [FARM_DONE_KEEP] ring */
	uint32_t done_next;
	uint64_t *inf_tid;         /* [n_meta] task id of the in-flight entry of a pool slot, 0 */
	uint32_t *inf_ip;          /* [n_meta] its submitter address */
	uint16_t *inf_port;
	uint8_t cur_attempt;       /* of the FSUBMIT being admitted */
	uint32_t cur_aux;          /* its pool index (nl_dp_farm_task) */
	uint64_t n_resent;         /* resends answered without running (telemetry) */
	struct nl_msg_taskinfo last_ti; /* the TASKINFO just sent (stored with its COMPLETE) */
	uint64_t last_ti_id;
};

/**
 * Answer /nlevel/submits and /nlevel/farm behind the telemetry gate (nl_dp_tel_register()):
 * the handlers read the farm of the engine the gate is open for (nl_dp_tel_dp(), relaxed
 * loads of the counters); nl_port_serve() closes the gate before the farm state is freed.
 * @return 0; -ENOSPC, -EINVAL or -ENOENT from nl_dp_tel_register().
 * @par Context  The I/O lcore, at nl_dp_farm_init(); not on a dispatch path.
 * @par Source   DPDK telemetry library (rte_telemetry_register_cmd()); issue #15.
 */
int nl_dp_farm_tel_attach(void);

#endif /* NL_DP_FARM_PRIV_H */
