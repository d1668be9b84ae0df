/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-worker's task-farm configuration (--commands FILE, issue #15; docs/taskfarm.md):
 * named commands (a name -> an absolute executable and a fixed argument template; never a
 * shell string from the network), the machines' ClassAd records announced in MACHAD, and
 * where each sub-task's stdout and stderr go (OUTDIR/SUBMIT_INDEX.SUB.out / .err, Slurm's
 * %A_%a) with a size cap.
 *
 * File format (one statement a line; errors are FILE:LINE; '#' starts a comment at the start
 * of a line or after a space or tab, outside a "..." string, so "a#b" and /bin/echo a#b keep
 * their '#'):
 *   command NAME = /abs/path [ARG ...]   ARG: literal text in which {1}..{9} is task
 *                                        argument k (count={1}), or the word {@} (every
 *                                        task argument, one word each); without any
 *                                        placeholder the task's arguments are appended
 *   machine ATTR = EXPR                  ClassAd attribute of every machine of this worker
 *   machine.K ATTR = EXPR                only machine K (0-based, --mach order)
 *   output_dir = DIR                     default ./nlevel-out; created 0750 when missing;
 *                                        an existing one must belong to the worker's user
 *                                        or root and not be group/world-writable unless
 *                                        sticky (else refused at start)
 *   output_cap = BYTES                   per file (k, M, G suffixes), default 16M
 * Output files are created afresh (an earlier file of the name is removed, then O_EXCL |
 * O_NOFOLLOW), mode 0640, relative to the folder opened at start.
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
#define NL_WFARM_ATTR_MAX 63u    /* bytes of a machine attribute name */

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
	int out_dirfd;               /* out_dir, open (O_DIRECTORY) when have_dir */
	bool have_dir;
	uint64_t out_cap;
	char *buf;                   /* the file, owned */
};

/**
 * Load a --commands file. Machine records start with the built-in attributes (Name, Machine,
 * Cpus, Memory [MiB], Arch, OpSys, Mips, KFlops) and the file's lines override or add. Each
 * command's program must be an absolute path to an executable regular file; the output
 * folder is opened (created when missing) and checked as the file format above says.
 * @param wf      Output; free with nl_wfarm_free() even after an error.
 * @param path    The file.
 * @param wid     Worker id (the records' Name = "wWID.K").
 * @param n_mach  Machines of the worker, 1..NL_PROTO_MAX_MACH.
 * @param desc    Their descriptions [n_mach] (speeds for Mips, KFlops).
 * @param err     Output: "FILE:LINE: message" on an error.
 * @param errlen  Size of err.
 * @return 0; -1 with err set.
 * @par Context Start-up of the worker (blocking file I/O).
 */
int nl_wfarm_load(struct nl_wfarm *wf, const char *path, uint32_t wid, unsigned int n_mach,
		  const struct nl_msg_mach *desc, char *err, size_t errlen);

/**
 * Free what nl_wfarm_load() allocated and close the output folder.
 * @par Context The worker's thread.
 */
void nl_wfarm_free(struct nl_wfarm *wf);

/**
 * The CMDS message of the worker's commands.
 * @par Context Pure.
 */
void nl_wfarm_cmds_msg(const struct nl_wfarm *wf, uint32_t wid, struct nl_msg *m);

/**
 * Machine i's MACHAD message (its ClassAd record).
 * @par Context Pure.
 */
void nl_wfarm_ad_msg(const struct nl_wfarm *wf, uint32_t wid, unsigned int i, struct nl_msg *m);

/**
 * The named command of a DISPATCH's cmd_id, or NULL.
 * @par Context Pure.
 */
const struct nl_wfarm_cmd *nl_wfarm_find(const struct nl_wfarm *wf, uint16_t cmd_id);

/**
 * Whether prog may be a command's program: an absolute path to an executable regular file
 * (not a folder, not a device). Used for --commands and for --cmd ID=PATH.
 * @param why     Output: the reason on failure ("/tmp is not a regular file (a directory)").
 * @param whylen  Size of why.
 * @return 0; -errno (-EINVAL when not absolute or not a regular file).
 * @par Context Start-up (stat(2), access(2)).
 */
int nl_wfarm_program_ok(const char *prog, char *why, size_t whylen);

/**
 * The output size cap [bytes] of a named command, its RLIMIT_FSIZE: the smallest of
 * output_cap, --rlimit fsize= (lim->fsize_bytes, when set) and the worker's own hard
 * RLIMIT_FSIZE (an unprivileged command could not raise it), so the limit can always be set.
 * @par Context Any (getrlimit(2)).
 */
uint64_t nl_wfarm_fsize(const struct nl_wfarm *wf, const struct nl_harden_limits *lim);

/**
 * Start a named command for DISPATCH d (no shell): argv from the template and d's arguments,
 * stdout and stderr to OUTDIR/S_I.SUB.out / .err (created afresh, mode 0640, never through a
 * symbolic link), started the hardened way (nl_harden_spawn(): cleared environment, stdin
 * /dev/null, no other descriptors, its own process group, signals at their defaults, the
 * limits `lim` or NULL) with RLIMIT_FSIZE = nl_wfarm_fsize(): a write past it kills the
 * command with SIGXFSZ (DONE status 128 + 25 = 153).
 * @return 0 and *pid; -errno (a missing placeholder argument is -EINVAL; -EEXIST / -EPERM
 *         when another user's file of that name sits in a sticky output folder).
 * @par Context The worker's thread.
 */
int nl_wfarm_spawn(const struct nl_wfarm *wf, const struct nl_wfarm_cmd *c,
		   const struct nl_msg_dispatch *d, const struct nl_harden_limits *lim, pid_t *pid);

#endif /* NL_WORKER_FARM_H */
