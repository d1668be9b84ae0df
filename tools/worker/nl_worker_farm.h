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
 *   options NAME = allow | refuse        whether command NAME's task arguments may be
 *                                        options (default refuse: an argument that would
 *                                        begin an argv word with '-' before the template's
 *                                        '--' word is refused, DONE 126; issue #35)
 *   principals NAME = P1, P2 ...         who may run command NAME here: principal names of
 *                                        the appliance's --principals, @operator for the
 *                                        site key's holder (default: everybody)
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
#define NL_WFARM_MAX_PR 64u      /* principals of a command's `principals` line */
#define NL_WFARM_OPERATOR "@operator" /* the site key's holder in a `principals` line */

struct nl_wfarm_cmd {
	char name[NL_FARM_NAME_MAX + 1];
	char *path;
	char *tok[NL_WFARM_MAX_TOK]; /* template arguments after the path */
	unsigned int n_tok;
	bool has_ph;                 /* a {k} / {@} placeholder appears */
	int dd_tok;                  /* index of the template's first "--" word, -1 = none */
	bool options;                /* `options NAME = allow`: task arguments may be options */
	bool restricted;             /* a `principals NAME` line: only those may run it */
	unsigned int n_pr;
	uint32_t pr[NL_WFARM_MAX_PR]; /* their principal ids (nl_principal_id()), 0 = @operator */
	char *pr_text;               /* the line's list as written (for messages) */
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
 * Whether DISPATCH d may run command c here (issue #35): its submitter (d->principal, 0 = the
 * site key's holder) is one of the command's `principals` (when it has that line); and no
 * task argument would begin an argv word with '-' unless the command allows options or that
 * word comes after the template's "--" word (a template without placeholders appends the task
 * arguments at its end: after "--" when the template has one). So `/usr/bin/sort {@}` given
 * `-o FILE /etc/hostname` is refused, `/usr/bin/sort -- {@}` passes "-o" as a file name to
 * read. A {k} inside a word (`if={1}`) never begins one.
 * @param c    The command. @param d  The DISPATCH.
 * @param why  Output: the reason, one line naming the argument or the principal and the fix.
 * @param whylen  Size of why.
 * @return 0; -EACCES with why set.
 * @par Context Pure.
 */
int nl_wfarm_check(const struct nl_wfarm_cmd *c, const struct nl_msg_dispatch *d, char *why,
		   size_t whylen);

/**
 * Write a refusal (nl_wfarm_check()'s reason) as the sub-task's stderr file (S_I.SUB.err,
 * created afresh as the command's would be), so the submitter finds it beside the outputs.
 * @return 0; -errno (the output folder). @par Context The worker's thread.
 */
int nl_wfarm_note(const struct nl_wfarm *wf, const struct nl_msg_dispatch *d, const char *why);

/**
 * Start a named command for DISPATCH d (no shell): argv from the template and d's arguments,
 * stdout and stderr to OUTDIR/S_I.SUB.out / .err (created afresh, mode 0640, never through a
 * symbolic link), started the hardened way (nl_harden_spawn(): cleared environment, stdin
 * /dev/null, no other descriptors, its own process group, signals at their defaults, the
 * limits `lim` or NULL) with RLIMIT_FSIZE = nl_wfarm_fsize(): a write past it kills the
 * command with SIGXFSZ (DONE status 128 + 25 = 153).
 * nl_wfarm_check() first: a refused DISPATCH runs nothing, its reason goes to the .err file.
 * @return 0 and *pid; -EACCES when nl_wfarm_check() refused it (DONE 126); -errno (a missing
 *         placeholder argument is -EINVAL; -EEXIST / -EPERM when another user's file of that
 *         name sits in a sticky output folder).
 * @par Context The worker's thread.
 */
int nl_wfarm_spawn(const struct nl_wfarm *wf, const struct nl_wfarm_cmd *c,
		   const struct nl_msg_dispatch *d, const struct nl_harden_limits *lim, pid_t *pid);

#endif /* NL_WORKER_FARM_H */
