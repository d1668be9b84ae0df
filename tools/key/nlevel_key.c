/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nlevel-key: write a principal's key file, derived from the site key (docs/security.md).
 *
 *   nlevel-key --key SITE_KEY --principal NAME --out FILE
 *   nlevel-key --appliance NAME --out FILE      an appliance's own key (issue #36)
 *   nlevel-key --public FILE                    the public key of an appliance's key file
 *
 * FILE (created, owner-only) holds the 32 bytes nl_principal_derive() gives for NAME; give it
 * to NAME only (the submitter's or the worker's host) and name it there with
 * `--key FILE --principal NAME`. The appliance derives the same key from the site key, so it
 * needs no copy of it. Prints the principal's id (the high 32 bits of its sender id).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "nl_appkey.h"
#include "nl_principal.h"
#include "nl_proto.h"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nlevel-key --key SITE_KEY --principal NAME --out FILE\n"
		"       nlevel-key --appliance NAME --out FILE\n"
		"       nlevel-key --public FILE\n"
		"Write principal NAME's key file (32 bytes, mode 0600), derived from the site key\n"
		"with keyed BLAKE2b (docs/security.md). FILE must not exist.\n"
		"With --appliance: write appliance NAME's own key (32 random bytes, mode 0600) and\n"
		"print the line for its [appliance NAME] section, public_key = HEX (X25519; the\n"
		"datagrams between two appliances are sealed under their pair's key,\n"
		"docs/scale-out.md \"Appliance keys\"). With --public: print that line again for an\n"
		"existing appliance key file.\n"
		"  --key FILE         the site key (owner-only permissions; a regular file, not a\n"
		"                     symbolic link)\n"
		"  --principal NAME   1..%u characters of A-Z a-z 0-9 . _ -\n"
		"  --out FILE         the key file to create\n"
		"  --appliance NAME   an appliance's key instead (no --key, no --principal)\n"
		"  --public FILE      print the public key of appliance key FILE\n"
		"  --help             this text\n"
		"Exit status: 0 written; 1 cannot write; 2 bad command line or site key.\n",
		NL_PRINCIPAL_NAME_MAX);
}

/* Create key file out (owner-only, not there before) with raw's n bytes, on disk; raw is
 * wiped either way. 0, or -1 with the error printed (nothing left behind). */
static int
write_key(const char *out, uint8_t *raw, size_t n)
{
	int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	int rc = 0;

	if (fd < 0 || write(fd, raw, n) != (ssize_t)n || fsync(fd) != 0) {
		fprintf(stderr, "nlevel-key: --out %s: %s\n", out, strerror(errno));
		if (fd >= 0)
			unlink(out);
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	sodium_memzero(raw, n);
	return rc;
}

/* Print the configuration line of appliance key file path (and its name when given). */
static int
public_key(const char *path)
{
	uint8_t sk[NL_APPKEY_LEN], pk[NL_APPKEY_LEN];
	char hex[2 * NL_APPKEY_LEN + 1], err[512];

	if (nl_appkey_load(path, sk, pk, err, sizeof(err)) != 0) {
		fprintf(stderr, "nlevel-key: %s\n", err);
		return 2;
	}
	sodium_memzero(sk, sizeof(sk));
	nl_appkey_pub_hex(pk, hex);
	printf("public_key = %s\n", hex);
	return 0;
}

/* --appliance NAME --out FILE: 32 random bytes, owner-only; then its public key. */
static int
appliance_key(const char *name, const char *out)
{
	uint8_t raw[32];

	if (!nl_principal_name_ok(name)) {
		fprintf(stderr, "nlevel-key: --appliance '%s': 1..%u characters of A-Z a-z 0-9 . _ -\n",
			name, NL_PRINCIPAL_NAME_MAX);
		return 2;
	}
	if (sodium_init() < 0) {
		fprintf(stderr, "nlevel-key: libsodium failed to initialise\n");
		return 2;
	}
	randombytes_buf(raw, sizeof(raw));
	if (write_key(out, raw, sizeof(raw)) != 0)
		return 1;
	printf("# %s: appliance %s's own key; in every appliance's configuration:\n", out, name);
	printf("[appliance %s]\n", name);
	return public_key(out);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "principal", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' },
		{ "appliance", required_argument, NULL, 'a' },
		{ "public", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *site_file = NULL, *name = NULL, *out = NULL, *app = NULL, *pub = NULL;
	struct nl_auth_key site;
	uint8_t raw[NL_PRINCIPAL_DERIVED_LEN];
	char err[512];
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'k': site_file = optarg; break;
		case 'p': name = optarg; break;
		case 'o': out = optarg; break;
		case 'a': app = optarg; break;
		case 'P': pub = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "nlevel-key: unexpected argument '%s' (options start with --)\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	if (app != NULL || pub != NULL) {
		if (site_file != NULL || name != NULL || (app != NULL) == (pub != NULL) ||
		    (app != NULL) != (out != NULL)) {
			fprintf(stderr, "nlevel-key: --appliance NAME --out FILE, or --public FILE, "
					"alone\n");
			usage(stderr);
			return 2;
		}
		return app != NULL ? appliance_key(app, out) : public_key(pub);
	}
	if (site_file == NULL || name == NULL || out == NULL) {
		fprintf(stderr, "nlevel-key: --key, --principal and --out are required\n");
		usage(stderr);
		return 2;
	}
	if (!nl_principal_name_ok(name)) {
		fprintf(stderr, "nlevel-key: --principal '%s': 1..%u characters of A-Z a-z 0-9 . _ -\n",
			name, NL_PRINCIPAL_NAME_MAX);
		return 2;
	}
	if (nl_auth_key_load(site_file, &site, err, sizeof(err)) != 0) {
		fprintf(stderr, "nlevel-key: --key: %s\n", err);
		return 2;
	}
	if (nl_principal_derive(&site, name, raw) != 0) {
		fprintf(stderr, "nlevel-key: cannot derive the key\n");
		return 2;
	}
	sodium_memzero(&site, sizeof(site));
	if (write_key(out, raw, sizeof(raw)) != 0)
		return 1;
	printf("nlevel-key: %s: key of principal %s (id %08x)\n", out, name, nl_principal_id(name));
	return 0;
}
