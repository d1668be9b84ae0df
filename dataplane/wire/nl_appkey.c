/* SPDX-License-Identifier: BSD-3-Clause */
/* Appliance keys and pair keys (nl_appkey.h, issue #36). */
#include <errno.h>
#include <string.h>

#include <sodium.h>

#include "nl_appkey.h"

static const char secret_label[] = "nlevel appliance key v1";
static const char pair_label[] = "nlevel appliance pair v1";

int
nl_appkey_load(const char *path, uint8_t sk[NL_APPKEY_LEN], uint8_t pk[NL_APPKEY_LEN],
	       char *err, size_t errlen)
{
	int rc = nl_key_file_derive(path, secret_label, sk, NL_APPKEY_LEN, err, errlen);

	if (rc == 0)
		crypto_scalarmult_base(pk, sk);
	return rc;
}

int
nl_appkey_pair(const uint8_t sk[NL_APPKEY_LEN], const uint8_t pk_self[NL_APPKEY_LEN],
	       const uint8_t pk_peer[NL_APPKEY_LEN], struct nl_auth_key *out)
{
	uint8_t q[crypto_scalarmult_BYTES];
	crypto_generichash_state st;
	int lo;

	if (sodium_init() < 0)
		return -EIO;
	lo = memcmp(pk_self, pk_peer, NL_APPKEY_LEN);
	if (lo == 0 || crypto_scalarmult(q, sk, pk_peer) != 0)
		return -EINVAL;
	crypto_generichash_init(&st, NULL, 0, NL_AUTH_KEY_LEN);
	crypto_generichash_update(&st, (const uint8_t *)pair_label, sizeof(pair_label));
	crypto_generichash_update(&st, q, sizeof(q));
	crypto_generichash_update(&st, lo < 0 ? pk_self : pk_peer, NL_APPKEY_LEN);
	crypto_generichash_update(&st, lo < 0 ? pk_peer : pk_self, NL_APPKEY_LEN);
	crypto_generichash_final(&st, out->k, NL_AUTH_KEY_LEN);
	sodium_memzero(q, sizeof(q));
	sodium_memzero(&st, sizeof(st));
	return 0;
}

int
nl_appkey_pub_parse(const char *hex, uint8_t pk[NL_APPKEY_LEN])
{
	size_t got = 0;
	const char *end = NULL;

	if (hex == NULL || strlen(hex) != 2 * NL_APPKEY_LEN)
		return -EINVAL;
	if (sodium_hex2bin(pk, NL_APPKEY_LEN, hex, 2 * NL_APPKEY_LEN, NULL, &got, &end) != 0 ||
	    got != NL_APPKEY_LEN || end == NULL || *end != '\0')
		return -EINVAL;
	return 0;
}

void
nl_appkey_pub_hex(const uint8_t pk[NL_APPKEY_LEN], char hex[2 * NL_APPKEY_LEN + 1])
{
	sodium_bin2hex(hex, 2 * NL_APPKEY_LEN + 1, pk, NL_APPKEY_LEN);
}
