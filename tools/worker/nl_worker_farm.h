/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-worker's task-farm configuration (--commands FILE, issue #15; docs/taskfarm.md):
 * named commands (a name -> an absolute executable and a fixed argument template; never a
 * shell string from the network), the machines' ClassAd records announced in MACHAD, and
 * where each sub-task's stdout and stderr go (OUTDIR/SUBMIT_INDEX.SUB.out / .err, Slurm's
 * %A_%a) with a size cap.
 *
 * File format (one statement a line, '#' starts a comment; errors are FILE:LINE):
 *   command NAME = /abs/path [ARG ...]   ARG: literal text in which {1}..{9} is task
 *                                        argument k (count={1}), or the word {@} (every
 *                                        task argument, one word each); without any
 *                                        placeholder the task's arguments are appended
 *   machine ATTR = EXPR                  ClassAd attribute of every machine of this worker
 *   machine.K ATTR = EXPR                only machine K (0-based, --mach order)
 *   output_dir = DIR                     default ./nlevel-out
 *   output_cap = BYTES                   per file (k, M, G suffixes), default 16M
 */
#ifndef NL_WORKER_FARM_H
#define NL_WORKER_FARM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "nl_harden.h"

#include "nl_proto.h"

#define NL_WFARM_ID0 0x8000u     /* local command ids of named commands: 0x8000 + index */
#define NL_WFARM_MAX_TOK 32u     /* template tokens per command */

struct nl_wfarm_cmd {
	char name[NL_FARM_NAME_MAX + 1];
	char *path;
	char *tok[NL_WFARM_MAX_TOK]; /* template arguments after the path */
	unsigned int n_tok;
	bool has_ph;                 /* a {k} / {@} placeholder appears */
};

struct nl_wfarm {
	struct nl_wfarm_cmd cmd[NL_FARM_MAX_CMDS];
	unsigned int n_cmd;
	char ad[NL_PROTO_MAX_MACH][NL_FARM_AD_MAX + 1]; /* per machine, "A = e; B = f" */
	char out_dir[512];
	uint64_t out_cap;
	char *buf;                   /* the file, owned */
};

/*
 * Load a --commands file. Machine records start with the built-in attributes (Name, Machine,
 * Cpus, Memory [MiB], Arch, OpSys, Mips, KFlops) and the file's lines override or add.
 * @return 0; -1 with err = "FILE:LINE: message".
 */
int nl_wfarm_load(struct nl_wfarm *wf, const char *path, uint32_t wid, unsigned int n_mach,
		  const struct nl_msg_mach *desc, char *err, size_t errlen);

/* Free what nl_wfarm_load() allocated. */
void nl_wfarm_free(struct nl_wfarm *wf);

/* The CMDS message and machine i's MACHAD message. */
void nl_wfarm_cmds_msg(const struct nl_wfarm *wf, uint32_t wid, struct nl_msg *m);
void nl_wfarm_ad_msg(const struct nl_wfarm *wf, uint32_t wid, unsigned int i, struct nl_msg *m);

/* The named command of a DISPATCH's cmd_id, or NULL. */
const struct nl_wfarm_cmd *nl_wfarm_find(const struct nl_wfarm *wf, uint16_t cmd_id);

/*
 * Start a named command for DISPATCH d (no shell): argv from the template and d's arguments,
 * stdout and stderr to OUTDIR/S_I.SUB.out / .err (truncated), started the hardened way
 * (nl_harden_spawn(): cleared environment, stdin /dev/null, no other descriptors, its own
 * process group, signals at their defaults, the limits `lim` or NULL); the size cap is the
 * inherited RLIMIT_FSIZE of nl_wfarm_limits() unless lim sets fsize (a write past it: SIGXFSZ).
 * @return 0 and *pid; -errno (a missing placeholder argument is -EINVAL).
 */
int nl_wfarm_spawn(const struct nl_wfarm *wf, const struct nl_wfarm_cmd *c,
		   const struct nl_msg_dispatch *d, const struct nl_harden_limits *lim, pid_t *pid);

/*
 * Cap every file the worker and its commands write at out_cap bytes: RLIMIT_FSIZE of the
 * worker itself (inherited by every command), SIGXFSZ ignored so a write past the cap fails
 * with EFBIG. Call once after nl_wfarm_load(). @return 0 or -errno.
 */
int nl_wfarm_limits(const struct nl_wfarm *wf);

#endif /* NL_WORKER_FARM_H */
