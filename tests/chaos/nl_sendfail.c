/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LD_PRELOAD shim for test_done_retry.sh (issue #33): sendto() of every other nlevel DONE
 * datagram (type byte 6 after the 0x4E4C magic) fails with ENOBUFS, as a full device queue
 * or socket buffer would make it, without sending it. A worker that drops a DONE on a
 * failed sendto() leaves its task without an answer; one that retries sends it.
 * With NL_SENDFAIL_DROP=1 (issue #34) the DONE is lost silently instead: sendto() says it
 * was sent, as a datagram lost on the way (a full receive ring at the appliance) looks to the
 * sender; only the appliance's DONE_ACK tells the worker, which then resends it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tolen);

ssize_t
sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen)
{
	static ssize_t (*real)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	static unsigned int n_done;
	const uint8_t *b = buf;

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "sendto");
	if (len > 8 && b[0] == 0x4E && b[1] == 0x4C && b[3] == 6 && n_done++ % 2 == 0) {
		const char *drop = getenv("NL_SENDFAIL_DROP");

		if (drop != NULL && drop[0] == '1')
			return (ssize_t)len; /* "sent", and lost */
		errno = ENOBUFS;
		return -1;
	}
	return real(fd, buf, len, flags, to, tolen);
}
