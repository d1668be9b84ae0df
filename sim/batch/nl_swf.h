/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Standard Workload Format (SWF v2.2) reader and writer, the job-log format of the Parallel
 * Workloads Archive (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html).
 *
 * A trace is a list of header entries (the `;` comment lines) and a list of job records (one
 * line of 18 whitespace-separated numbers each, -1 = unknown). Input may be plain text or
 * gzip (read directly with zlib; the suffix does not matter). Everything is loaded in memory:
 * the largest archive logs are a few million jobs, ~150 bytes per job here.
 *
 * Header forms understood (docs/batch.md "SWF header"):
 *  - `; Key: value` with Key = [A-Za-z][A-Za-z0-9]* (Version, Computer, MaxJobs, MaxRecords,
 *    MaxNodes, MaxProcs, Queues, Partitions, UnixStartTime, Note, ...); also `;Key:value`.
 *  - continuation lines: `;` followed by two or more blanks (or a tab) and text, appended to
 *    the previous key's value with '\n' (multi-line Note, Information, Queues).
 *  - bare `;` lines (and `;` + blanks): end a continuation; kept as free comments.
 *  - any other `; text` line: a free comment, kept in order.
 *  - numbers followed by text (`MaxNodes: 338 (batch partition; 512 total)`):
 *    nl_swf_header_int() reads the leading integer.
 * Comment lines after the first job are kept too (written back in the header).
 *
 * Errors name the line: "PATH:LINE: expected 18 fields, found 17" and return -EINVAL.
 *
 * This API is used by the batch engine (nl_batch.h) and the job-mix generator (tools/jobmix):
 * it is stable; add, never change.
 */
#ifndef NL_SWF_H
#define NL_SWF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NL_SWF_FIELDS 18u   /**< fields per job record */
#define NL_SWF_ERR_LEN 512u /**< recommended size of error buffers [bytes] */

/** SWF field 11, job status. */
enum nl_swf_status {
	NL_SWF_STATUS_FAILED = 0,     /**< ran, ended abnormally */
	NL_SWF_STATUS_COMPLETED = 1,  /**< ran to completion */
	NL_SWF_STATUS_PARTIAL = 2,    /**< partial execution, more records follow (checkpoint) */
	NL_SWF_STATUS_LAST_OK = 3,    /**< last partial record, completed */
	NL_SWF_STATUS_LAST_FAIL = 4,  /**< last partial record, failed */
	NL_SWF_STATUS_CANCELLED = 5,  /**< cancelled (before or after it started) */
};

/**
 * One job record: the 18 SWF fields in file order; -1 means unknown. Integer fields hold
 * integers (the reader refuses `12.5` there); fields 6, 7 and 10 may be fractional in some
 * logs and are doubles.
 */
struct nl_swf_job {
	int64_t id;          /**< 1  job number */
	int64_t submit_s;    /**< 2  submit time [s] since the log start (UnixStartTime) */
	int64_t wait_s;      /**< 3  wait time in the original system [s] */
	int64_t run_s;       /**< 4  run time (wall clock) [s] */
	int64_t alloc_procs; /**< 5  allocated processors */
	double avg_cpu_s;    /**< 6  average CPU time used per processor [s] */
	double used_mem_kb;  /**< 7  used memory per processor [KB] */
	int64_t req_procs;   /**< 8  requested processors */
	int64_t req_time_s;  /**< 9  requested time (user estimate) [s] */
	double req_mem_kb;   /**< 10 requested memory per processor [KB] */
	int64_t status;      /**< 11 enum nl_swf_status, or -1 */
	int64_t user;        /**< 12 user id */
	int64_t group;       /**< 13 group id */
	int64_t exe;         /**< 14 executable (application) number */
	int64_t queue;       /**< 15 queue number */
	int64_t partition;   /**< 16 partition number */
	int64_t prev_job;    /**< 17 preceding job number */
	int64_t think_s;     /**< 18 think time from the preceding job [s] */
};

/** One header entry: a `Key: value` (key != NULL) or a free comment (key == NULL). */
struct nl_swf_hdr {
	char *key;   /**< "MaxProcs", ..., or NULL for a free comment */
	char *value; /**< value without the key; continuation lines joined with '\n'. For a free
		      *   comment: the text after ';' as written (may be empty for a bare ';'). */
};

/** A loaded (or generated) trace. */
struct nl_swf {
	struct nl_swf_hdr *hdr; /**< [n_hdr] header entries in file order */
	size_t n_hdr;
	struct nl_swf_job *job; /**< [n_job] job records in file order */
	size_t n_job;
	size_t cap_hdr, cap_job; /**< allocated entries (internal) */
};

/** Set every field of a job to -1 (unknown). */
void nl_swf_job_init(struct nl_swf_job *j);

/**
 * Read an SWF file, plain or gzip.
 *
 * @param out   Output: a new trace; free with nl_swf_free(). Left NULL on error.
 * @param path  File to read.
 * @param err   Output buffer for "PATH:LINE: message" (or "PATH: message"); may be NULL.
 * @param len   Size of err [bytes] (NL_SWF_ERR_LEN is enough).
 * @return 0; -ENOENT (or another -errno) when it cannot be opened; -EINVAL for a malformed
 *         line (wrong field count, not a number, non-integer in an integer field, line
 *         longer than 64 KiB) or a corrupt gzip stream; -ENOMEM.
 * @par Context  Control path; allocates; O(file size).
 * @par Source   SWF v2.2, Parallel Workloads Archive.
 */
int nl_swf_load(struct nl_swf **out, const char *path, char *err, size_t len);

/**
 * Parse SWF text held in memory (tests, generated traces).
 *
 * @param name  Name used in place of a path in error messages.
 * @param text  NUL-terminated SWF text.
 * @return as nl_swf_load().
 */
int nl_swf_load_string(struct nl_swf **out, const char *name, const char *text, char *err,
		       size_t len);

/** New empty trace (for writers). @return 0 or -ENOMEM. @par Context Control path. */
int nl_swf_new(struct nl_swf **out);

/** Free a trace; NULL is accepted. */
void nl_swf_free(struct nl_swf *t);

/**
 * Append a job record (copied).
 * @return 0 or -ENOMEM.
 */
int nl_swf_append(struct nl_swf *t, const struct nl_swf_job *j);

/**
 * Set a header key: replace the value of the first entry with that key, else append one.
 *
 * @param key    Key, [A-Za-z][A-Za-z0-9]*; NULL appends a free comment.
 * @param value  Value; '\n' separates continuation lines.
 * @return 0; -EINVAL for a bad key; -ENOMEM.
 */
int nl_swf_header_set(struct nl_swf *t, const char *key, const char *value);

/**
 * Value of the first header entry with this key (exact, case-sensitive).
 * @return the value (valid until the trace is freed or the key set again), or NULL.
 */
const char *nl_swf_header_get(const struct nl_swf *t, const char *key);

/**
 * Leading integer of a header value, ignoring any text after it ("338 (batch ...)" -> 338).
 * @return the integer, or -1 when the key is absent or does not start with an integer.
 */
int64_t nl_swf_header_int(const struct nl_swf *t, const char *key);

/**
 * Write a trace as SWF: header entries first (`; Key: value`, continuation lines aligned
 * under the value, free comments as `;text`), then one line per job with the 18 fields.
 * Integral doubles are written as integers; others with 15 significant digits.
 *
 * @param f  Output stream.
 * @return 0, or -EIO.
 */
int nl_swf_write_file(const struct nl_swf *t, FILE *f);

/**
 * Write a trace to a path; gzip-compressed when the path ends in ".gz".
 * @return 0; -errno when it cannot be created or written.
 */
int nl_swf_write(const struct nl_swf *t, const char *path);

/* ---- Filtering: from a record to a rigid job the batch engine can run ---- */

/** Which processor count a job needs. */
enum nl_swf_procs_src {
	NL_SWF_PROCS_REQUESTED = 0, /**< field 8, else field 5 when 8 is -1 (default) */
	NL_SWF_PROCS_ALLOCATED,     /**< field 5, else field 8 when 5 is -1 */
	NL_SWF_PROCS_MAX,           /**< the larger of 5 and 8 */
};

/** What to do with a job that ran longer than it requested (field 4 > field 9). */
enum nl_swf_overrun {
	NL_SWF_OVERRUN_EXTEND = 0, /**< estimate := run time (the job is never killed; default) */
	NL_SWF_OVERRUN_KILL,       /**< run time := estimate (killed at its limit) */
};

/** Filtering rules (docs/batch.md "Filtering"). Zero-initialised = the defaults. */
struct nl_swf_filter {
	enum nl_swf_procs_src procs_src;
	enum nl_swf_overrun overrun;
	bool drop_cancelled; /**< drop status 5 even when it ran (run time > 0) */
	bool drop_zero_run;  /**< drop run time 0 */
	int64_t max_procs;   /**< drop jobs needing more processors; <= 0: no limit */
	bool exact_estimates; /**< estimate := run time (perfect user estimates) */
};

/** Why a record was dropped (index into nl_swf_drop_name()). */
enum nl_swf_drop {
	NL_SWF_KEEP = 0,
	NL_SWF_DROP_NO_RUNTIME,   /**< run time -1 */
	NL_SWF_DROP_NO_PROCS,     /**< neither requested nor allocated processors known (> 0) */
	NL_SWF_DROP_CANCELLED,    /**< status 5 with run time <= 0 (never ran), or drop_cancelled */
	NL_SWF_DROP_ZERO_RUN,     /**< run time 0 with drop_zero_run */
	NL_SWF_DROP_TOO_WIDE,     /**< needs more than max_procs */
	NL_SWF_DROP_NO_SUBMIT,    /**< submit time -1 */
	NL_SWF_DROP_PARTIAL,      /**< status 2/3/4 (checkpoint records: one job over lines) */
	NL_SWF_DROP__COUNT
};

/** Short name of a drop reason ("no_runtime", ...). */
const char *nl_swf_drop_name(enum nl_swf_drop d);

/**
 * Print the drop counts of a trace's filtering: for every reason with a count, `sep`, its
 * name, a space and the count (" no_runtime 2808 cancelled 2786" with sep " ").
 * @param f      Stream.
 * @param drops  [NL_SWF_DROP__COUNT] records per reason (index 0, kept, is not printed).
 * @param sep    Text before each reason.
 * @par Context  Any.
 */
void nl_swf_drops_fprint(FILE *f, const size_t *drops, const char *sep);

/** A record turned into a rigid job. */
struct nl_swf_rigid {
	int64_t procs;    /**< processors held for the whole run, >= 1 */
	int64_t run_s;    /**< actual run time [s], >= 0 */
	int64_t est_s;    /**< user estimate [s] (field 9; run time when -1), >= run_s unless
			   *   overrun = KILL made run_s = est_s */
};

/**
 * Apply the filtering rules to one record.
 *
 * Rules (in this order): submit -1 -> NO_SUBMIT; run time -1 -> NO_RUNTIME; status 5 with
 * run time <= 0 (or drop_cancelled) -> CANCELLED; status 2, 3 or 4 -> PARTIAL; processors
 * from procs_src with fall-back (-1 on both -> NO_PROCS); more than max_procs -> TOO_WIDE;
 * run time 0 with drop_zero_run -> ZERO_RUN. Estimate: field 9, or the run time when -1 or
 * 0; when run time > estimate, overrun decides (EXTEND: estimate := run; KILL: run := est);
 * exact_estimates: estimate := run time.
 *
 * @param j    Record.
 * @param f    Rules; NULL = defaults.
 * @param out  Output when kept.
 * @return NL_SWF_KEEP, or the reason it is dropped.
 * @par Context  Pure.
 */
enum nl_swf_drop nl_swf_rigid(const struct nl_swf_job *j, const struct nl_swf_filter *f,
			      struct nl_swf_rigid *out);

#ifdef __cplusplus
}
#endif
#endif /* NL_SWF_H */
