/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Appliances as principals (issue #36): each appliance of a split tree has a key of its own,
 * and the datagrams between two appliances are sealed under their pair's key, which only
 * those two can compute; a holder of the site key (a client, a worker, the operator's tools)
 * cannot speak as an appliance.
 *
 * An appliance key file is a site-key-like file (owner-only, 32..4096 bytes of any content;
 * `nlevel-key --appliance NAME --out FILE` makes one); its X25519 secret is
 * BLAKE2b-256("nlevel appliance key v1" || bytes) and its public key the X25519 base-point
 * multiple, written in the configuration as `[appliance NAME] public_key = HEX`. The pair key
 * of A and B is BLAKE2b-128("nlevel appliance pair v1" || X25519(sk_A, pk_B) || pk_lo ||
 * pk_hi), pk_lo < pk_hi bytewise: the construction of libsodium's crypto_kx (a hash of the
 * shared point and both public keys), symmetric in A and B. Pure C on libsodium.
 */
#ifndef NL_APPKEY_H
#define NL_APPKEY_H

#include <stddef.h>
#include <stdint.h>

#include "nl_proto.h"

#define NL_KEY_FILE_MIN 32u    /**< key file: bytes of key material, at least */
#define NL_KEY_FILE_MAX 4096u  /**< key file: bytes, at most */
#define NL_APPKEY_LEN 32u      /**< X25519 secret or public key [bytes] */

/**
 * Read a key file under the site key's rules (nl_auth_key_load(): a regular file, not a
 * symbolic link, mode & 077 == 0, 32..4096 bytes) and derive outlen bytes from it:
 * BLAKE2b(label, its NUL included, || the file's bytes). nl_auth_key_load() is this with
 * "nlevel site key v2" and 16 bytes; nl_appkey_load() with "nlevel appliance key v1" and 32.
 *
 * @param path    Key file.
 * @param label   Domain label (NUL-terminated).
 * @param out     Output, outlen bytes (crypto_generichash: 16..64).
 * @param err     Output: a one-line error naming the file and the fix; may be NULL.
 * @param errlen  Size of err [bytes].
 * @return 0; -errno of open/fstat/read (-ELOOP: a symbolic link); -EPERM: permissions too
 *         wide; -EINVAL: not a regular file or the wrong size; -EIO: libsodium cannot start.
 * @par Context Any thread; never blocks on a FIFO. @par Source MUNGE key file rules
 *      (munged(8)); libsodium crypto_generichash (BLAKE2b, RFC 7693).
 */
int nl_key_file_derive(const char *path, const char *label, uint8_t *out, size_t outlen,
		       char *err, size_t errlen);

/**
 * Load an appliance's key file: its X25519 secret and public key.
 *
 * @param path  Key file (nl_key_file_derive() rules).
 * @param sk    Output: secret scalar (32 bytes).
 * @param pk    Output: public key (32 bytes).
 * @param err, errlen  As nl_key_file_derive().
 * @return 0 or nl_key_file_derive()'s errors.
 * @par Context Any thread. @par Source libsodium crypto_scalarmult_base (X25519, RFC 7748).
 */
int nl_appkey_load(const char *path, uint8_t sk[NL_APPKEY_LEN], uint8_t pk[NL_APPKEY_LEN],
		   char *err, size_t errlen);

/**
 * The MAC key of the pair (self, peer): the same on both sides, computable only with one of
 * the two secrets.
 *
 * @param sk       Our secret (nl_appkey_load()).
 * @param pk_self  Our public key.
 * @param pk_peer  The peer's public key (the configuration's `public_key`).
 * @param out      Output: the pair's MAC key (SipHash key of protocol version 2).
 * @return 0; -EINVAL when the peer's key is a low-order point (the shared point is zero) or
 *         equals ours; -EIO when libsodium cannot start.
 * @par Context Any thread. @par Source RFC 7748 §6.1; libsodium crypto_kx construction.
 */
int nl_appkey_pair(const uint8_t sk[NL_APPKEY_LEN], const uint8_t pk_self[NL_APPKEY_LEN],
		   const uint8_t pk_peer[NL_APPKEY_LEN], struct nl_auth_key *out);

/**
 * Parse a public key written as 64 hexadecimal digits.
 *
 * @param hex  Text (exactly 64 hex digits, either case).
 * @param pk   Output (32 bytes).
 * @return 0; -EINVAL otherwise.
 * @par Context Any thread.
 */
int nl_appkey_pub_parse(const char *hex, uint8_t pk[NL_APPKEY_LEN]);

/**
 * Write a public key as 64 lower-case hex digits and a NUL.
 *
 * @param pk   Public key.
 * @param hex  Output: 65 bytes of room.
 * @par Context Any thread.
 */
void nl_appkey_pub_hex(const uint8_t pk[NL_APPKEY_LEN], char hex[2 * NL_APPKEY_LEN + 1]);

#endif /* NL_APPKEY_H */
