/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Minimal TAP output for tests (TAP 13: "1..N", "ok N - name", "not ok N - name").
 * Test names are claims about behaviour. Randomised tests take NL_TEST_SEED.
 */
#ifndef NL_TAP_H
#define NL_TAP_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned int nl_tap_n, nl_tap_fail;

/** Report one check. @return cond. */
static inline int
nl_tap_ok(int cond, const char *fmt, ...)
{
	char name[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	for (char *p = name; *p != '\0'; p++) /* one TAP line, and no directive by accident */
		if (*p == '\n' || *p == '\r' || *p == '#')
			*p = ' ';
	nl_tap_n++;
	printf("%sok %u - %s\n", cond ? "" : "not ", nl_tap_n, name);
	fflush(stdout);
	if (!cond)
		nl_tap_fail++;
	return cond;
}

/** Report one check named by a plain string (no format). @return cond. */
static inline int
nl_tap_check(int cond, const char *name)
{
	return nl_tap_ok(cond, "%s", name);
}

/** Report one check skipped, with the reason (TAP "# SKIP"). */
static inline void
nl_tap_skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("ok %u - %s # SKIP ", ++nl_tap_n, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/** A diagnostic line. */
#define nl_tap_diag(...)                     \
	do {                                 \
		printf("# ");                \
		printf(__VA_ARGS__);         \
		printf("\n");                \
	} while (0)

/** Print the plan and return the exit status. */
static inline int
nl_tap_done(void)
{
	printf("1..%u\n", nl_tap_n);
	return nl_tap_fail == 0 ? 0 : 1;
}

/** Seed from NL_TEST_SEED or the default; printed so a failure can be replayed. */
static inline uint64_t
nl_tap_seed(uint64_t def)
{
	const char *s = getenv("NL_TEST_SEED");
	uint64_t v = s != NULL ? strtoull(s, NULL, 0) : def;

	printf("# seed %llu (set NL_TEST_SEED to replay)\n", (unsigned long long)v);
	return v;
}

#endif /* NL_TAP_H */
