/* SPDX-License-Identifier: BSD-3-Clause */
#include "nl_swf.h"
