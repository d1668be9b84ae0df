/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * INI configuration store with file:line errors.
 *
 * Format (parsed by libinih): `[section]` headers, `key = value` lines, `;` or `#` comments
 * (also after a value, preceded by a space). Keys and sections are case-sensitive. Every key
 * a consumer reads is marked used; nl_cfg_check_unused() then refuses any key nobody read,
 * so a typo is an error ("unknown key") rather than a silently ignored setting.
 *
 * Each module parses its own sections with the typed getters below (the seed 002 model in
 * nl_model_cfg.h, the batch engine, ...). A getter that fails writes the message into
 * cfg->err as "FILE:LINE: [section] key: what is wrong" and returns -EINVAL; the program's
 * main() prints it and exits with status 2 (docs/config.md).
 */
#ifndef NL_CFG_H
#define NL_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NL_CFG_ERR_LEN 512u
#define NL_CFG_LIST_MAX 256u /**< most values in one list-valued key */

/** In a parser returning int: evaluate a getter and return its negative errno (cfg->err
 * already holds FILE:LINE and the reason) from the enclosing function. */
#define NL_CFG_TRY(x)                  \
	do {                           \
		int rc_ = (x);         \
		if (rc_ < 0)           \
			return rc_;    \
	} while (0)

/** One `key = value` line. */
struct nl_cfg_entry {
	char *section;
	char *key;
	char *value;
	unsigned int line; /**< 1-based line in the file */
	bool used;         /**< read by some consumer */
};

/** A loaded configuration file. */
struct nl_cfg {
	char *path;                 /**< as given to nl_cfg_load() */
	struct nl_cfg_entry *entry; /**< [n_entry] in file order */
	unsigned int n_entry;
	char **section;             /**< [n_section] distinct section names, file order (a
				     *   section without keys counts: `[name]` alone is a section) */
	unsigned int *section_line; /**< [n_section] line of the first `[name]` header of each */
	bool *section_read;         /**< [n_section] asked for by some consumer (has_section(),
				     *   require_section() or a getter); nl_cfg_check_unused() refuses
				     *   the others */
	unsigned int n_section;
	char err[NL_CFG_ERR_LEN];   /**< last error, "FILE:LINE: message" */
};

/**
 * Load and tokenise an INI file.
 *
 * @param out   Output: the store (free with nl_cfg_free()).
 * @param path  File to read.
 * @param err   Output buffer for the error message ("FILE:LINE: ..."), may be NULL.
 * @param len   Size of err [bytes].
 * @return 0; -ENOENT (or another -errno) when the file cannot be opened; -EINVAL for a syntax
 *         error, a duplicate key or an over-long line; -ENOMEM.
 * @par Context  Control path; allocates.
 */
int nl_cfg_load(struct nl_cfg **out, const char *path, char *err, size_t len);

/** Free a store; NULL is accepted. @par Context Control path. */
void nl_cfg_free(struct nl_cfg *cfg);

/**
 * Load INI text from memory (tests, generated configurations).
 *
 * @param name  Name used in error messages in place of a path.
 * @param text  NUL-terminated INI text.
 * @return as nl_cfg_load().
 */
int nl_cfg_load_string(struct nl_cfg **out, const char *name, const char *text, char *err,
		       size_t len);

/**
 * An empty store named `name` (values from elsewhere than a file: command-line options).
 * @return 0, or -ENOMEM. @par Context Control path; allocates.
 */
int nl_cfg_new(struct nl_cfg **out, const char *name);

/**
 * Add `key = value` to `[section]` as if read on line `line`, so that the typed getters below
 * check a command-line value exactly as they check the file's (`--seeds 1e2` is 100, `2x` is
 * refused).
 * @return 0; -EINVAL for a duplicate key (message in cfg->err); -ENOMEM.
 * @par Context Control path; allocates.
 */
int nl_cfg_add(struct nl_cfg *cfg, const char *section, const char *key, const char *value,
	       unsigned int line);

/**
 * A numeric command-line option checked as a configuration key is (the typed getters below:
 * `1e2` is 100; `2x`, `1.5` for an integer, `nan`, `inf` and values outside [lo, hi] are
 * refused), with the error on stderr as "PROG: --opt: what is wrong".
 * @param prog  Program name for the message.
 * @param opt   Option as written, "--name".
 * @param v     Its argument, or NULL when the option was not given (nothing is done).
 * @param lo    Smallest value allowed.
 * @param hi    Largest value allowed.
 * @param u     Output for an integer option, or NULL.
 * @param d     Output for a real option (when u is NULL).
 * @return 0; -EINVAL after the message.
 * @par Context Control path; allocates.
 */
int nl_cfg_option_number(const char *prog, const char *opt, const char *v, double lo, double hi,
			 uint64_t *u, double *d);

/**
 * Whether `[sec]` is in the file (a `[sec]` line, with or without keys); marks it as known.
 * @par Context Control path (sets a flag in the store).
 */
bool nl_cfg_has_section(const struct nl_cfg *cfg, const char *sec);

/**
 * Refuse a missing section: writes "FILE: missing section [sec]" into cfg->err.
 * @return 0, or -EINVAL.
 */
int nl_cfg_require_section(struct nl_cfg *cfg, const char *sec);

/**
 * Find a key and mark it used.
 * @return The entry, or NULL when absent.
 */
const struct nl_cfg_entry *nl_cfg_find(struct nl_cfg *cfg, const char *sec, const char *key);

/**
 * Replace the value of a key present in the file (e.g. `cpus = auto` resolved from a trace's
 * header), keeping its line for later error messages.
 *
 * @param cfg       Store.
 * @param sec, key  Where.
 * @param value     New value text (copied).
 * @return 0, -ENOENT when the key is absent, -ENOMEM.
 * @par Context Single-threaded, before the consumers read the key.
 * @par Source docs/config.md.
 */
int nl_cfg_set_value(struct nl_cfg *cfg, const char *sec, const char *key, const char *value);

/**
 * Read a real number in [min, max].
 *
 * @param cfg       Store.
 * @param sec, key  Where.
 * @param out       Output; left unchanged when the key is absent and not required.
 * @param min, max  Accepted range, inclusive.
 * @param required  true: absence is an error.
 * @return 1 when read, 0 when absent (optional); -EINVAL (message in cfg->err) when
 *         missing-but-required, not a number, or out of range.
 */
int nl_cfg_get_double(struct nl_cfg *cfg, const char *sec, const char *key, double *out,
		      double min, double max, bool required);

/** As nl_cfg_get_double() for an integer (decimal, or 1e6 style when integral). */
int nl_cfg_get_u64(struct nl_cfg *cfg, const char *sec, const char *key, uint64_t *out,
		   uint64_t min, uint64_t max, bool required);

/** As nl_cfg_get_double() for true/false/yes/no/on/off/1/0. */
int nl_cfg_get_bool(struct nl_cfg *cfg, const char *sec, const char *key, bool *out,
		    bool required);

/**
 * Read a string (pointer into the store, valid until nl_cfg_free()).
 * @return 1, 0 (absent, optional) or -EINVAL.
 */
int nl_cfg_get_str(struct nl_cfg *cfg, const char *sec, const char *key, const char **out,
		   bool required);

/**
 * Read one of a fixed set of words.
 *
 * @param names  NULL-terminated list of accepted words.
 * @param out    Output: index of the word in names.
 * @return 1, 0 (absent, optional) or -EINVAL naming the accepted words.
 */
int nl_cfg_get_enum(struct nl_cfg *cfg, const char *sec, const char *key,
		    const char *const *names, unsigned int *out, bool required);

/**
 * Read a list of reals: comma-separated values and `from:to:step` ranges, e.g.
 * "5:70:5" or "2, 4, 8".
 *
 * @param out   Output array of at most max_n values.
 * @param n     Output: number of values.
 * @return 1, 0 (absent, optional) or -EINVAL (bad number, out of [min,max], empty, too many).
 */
int nl_cfg_get_list(struct nl_cfg *cfg, const char *sec, const char *key, double *out,
		    unsigned int max_n, unsigned int *n, double min, double max, bool required);

/**
 * Refuse keys nobody read ("FILE:LINE: unknown key 'k' in [sec]") and sections nobody
 * read ("FILE:LINE: unknown section [sec]").
 * @return 0 or -EINVAL.
 * @par Context  Call after every consumer has parsed its sections.
 */
int nl_cfg_check_unused(struct nl_cfg *cfg);

/**
 * Write "FILE:LINE: [sec] key: <fmt...>" about an entry into cfg->err.
 * @return -EINVAL, for `return nl_cfg_error(...)`.
 */
int nl_cfg_error(struct nl_cfg *cfg, const struct nl_cfg_entry *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif /* NL_CFG_H */
