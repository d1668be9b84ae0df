/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key files (nl_appkey.h, nl_proto.h): the owner-only file reader and the labelled BLAKE2b
 * of its bytes (nl_key_file_derive()), shared by the site key (nl_auth_key_load(), a
 * principal's key file) and an appliance's own key (nl_appkey_load()). Moved out of
 * nl_proto.c unchanged in behaviour (issue #36).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "nl_appkey.h"
#include "nl_proto.h"


static void
errf(char *err, size_t n, const char *fmt, const char *path, const char *what)
{
	if (err != NULL && n > 0)
		snprintf(err, n, fmt, path, what);
}

/* Read a key file under the site key's rules into raw (*len bytes). */
static int
key_file_read(const char *path, uint8_t raw[NL_KEY_FILE_MAX + 1], size_t *len, char *err,
	      size_t errlen)
{
	struct stat sb;
	ssize_t n;
	size_t have = 0;
	int fd;

	if (sodium_init() < 0) {
		errf(err, errlen, "%s: %s", path, "libsodium failed to initialise");
		return -EIO;
	}
	/*
	 * O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer; such a file is
	 * refused below. O_NOFOLLOW: a symbolic link as the last component is refused, not
	 * followed, so the file whose owner and mode are checked is the file named.
	 */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ELOOP && lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode))
			errf(err, errlen, "key file %s: %s", path,
			     "is a symbolic link; give the key file itself");
		else
			errf(err, errlen, "key file %s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &sb) != 0) {
		int e = errno;

		close(fd);
		errf(err, errlen, "key file %s: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		errf(err, errlen, "key file %s: %s", path,
		     S_ISDIR(sb.st_mode) ? "is a directory, not a regular file" :
		     S_ISFIFO(sb.st_mode) ? "is a FIFO, not a regular file" :
					    "not a regular file");
		return -EINVAL;
	}
	if ((sb.st_mode & 077) != 0) {
		char what[160];

		snprintf(what, sizeof(what),
			 "permissions %04o are too wide: it must be readable by its owner only "
			 "(chmod 600)", (unsigned int)(sb.st_mode & 07777));
		close(fd);
		errf(err, errlen, "key file %s: %s", path, what);
		return -EPERM;
	}
	while (have < (NL_KEY_FILE_MAX + 1)) {
		n = read(fd, raw + have, (NL_KEY_FILE_MAX + 1) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			sodium_memzero(raw, (NL_KEY_FILE_MAX + 1));
			errf(err, errlen, "key file %s: %s", path, strerror(e));
			return -e;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	close(fd);
	if (have < NL_KEY_FILE_MIN || have > NL_KEY_FILE_MAX) {
		sodium_memzero(raw, (NL_KEY_FILE_MAX + 1));
		errf(err, errlen, "key file %s: %s", path,
		     "must hold 32 to 4096 bytes (make one: head -c 32 /dev/urandom > FILE; "
		     "chmod 600 FILE)");
		return -EINVAL;
	}
	*len = have;
	return 0;
}

int
nl_key_file_derive(const char *path, const char *label, uint8_t *out, size_t outlen, char *err,
		   size_t errlen)
{
	uint8_t raw[NL_KEY_FILE_MAX + 1];
	crypto_generichash_state st;
	size_t have = 0;
	int rc = key_file_read(path, raw, &have, err, errlen);

	if (rc != 0)
		return rc;
	/* a BLAKE2b hash of the file (any length, any bytes), domain-separated by the label
	 * (its terminating NUL included, as the site key's always was) */
	crypto_generichash_init(&st, NULL, 0, outlen);
	crypto_generichash_update(&st, (const uint8_t *)label, strlen(label) + 1);
	crypto_generichash_update(&st, raw, have);
	crypto_generichash_final(&st, out, outlen);
	sodium_memzero(raw, sizeof(raw));
	sodium_memzero(&st, sizeof(st));
	return 0;
}

int
nl_auth_key_load(const char *path, struct nl_auth_key *key, char *err, size_t errlen)
{
	return nl_key_file_derive(path, "nlevel site key v2", key->k, NL_AUTH_KEY_LEN, err, errlen);
}
