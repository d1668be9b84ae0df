/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A third policy that lives only in the tests: power-of-two choices at the leaf (Mitzenmacher,
 * "The Power of Two Choices in Randomized Load Balancing", IEEE TPDS 2001). It proves that
 * the engines know a policy only through its ops table (nl_policy.h I5): the simulator and
 * the appliance run it unchanged (tests/lockstep/), and the contract test checks it with the
 * shipped ones (tests/managers/).
 *
 * Managers: 0 is a front manager where every task appears; it forwards the task to the leaf
 * manager of its vector (1 + leaf index of the resource tree) or rejects it (no machine).
 * A leaf manager places each of the L sub-tasks on the better of two machines of its group
 * drawn at random (expected completion: backlog + the sub-task's time, counting sub-tasks it
 * already placed in this decision); machines that left are never drawn.
 */
#ifndef NL_POLICY_P2C_H
#define NL_POLICY_P2C_H

#include "nl_policy.h"

/** Power-of-two choices at the leaf (test-only policy, see the file comment). */
extern const struct nl_policy_ops nl_test_policy_p2c;

#endif /* NL_POLICY_P2C_H */
