/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the frame and message parsers (dataplane/nl_proto.c): any input is
 * parsed as an Ethernet frame and as a bare message; whatever the parser accepts must
 * re-encode to the same bytes, so a field the parser does not check cannot slip through.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nl_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nl_frame_addr a;
	const uint8_t *pl;
	size_t plen;
	struct nl_msg m;
	uint8_t re[NL_PROTO_MAX_LEN];

	if (nl_frame_parse(data, size, 0, &a, &pl, &plen) == NL_PROTO_OK &&
	    (pl < data || pl + plen > data + size))
		abort();
	if (nl_proto_decode(data, size, &m) == NL_PROTO_OK) {
		int n = nl_proto_encode(&m, re, sizeof(re));

		if (n != (int)size || memcmp(re, data, size) != 0)
			abort();
	}
	return 0;
}
