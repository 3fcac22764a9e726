// SPDX-License-Identifier: GPL-2.0-only
/*
 * memcglab's compiled engine, one translation unit: the files of this directory in the
 * order their functions call each other (each file ports one former numba module of
 * memcglab/engine, whose name it keeps). memcglab/engine/native/__init__.py builds it
 * into a shared library on first use; its exports are run_ops(), conservation(),
 * splitmix64_next(), get_random_u32_below(), the trace scanner's scan() and the
 * validator's check_rows(), insert_key() and rehash().
 */
#include "core.h"

#include "pagecounter.c"
#include "cgroup_v1.c"
#include "rng.c"
#include "victims.c"
#include "stocks.c"
#include "pcstock.c"
#include "pcstock_v4.c"
#include "objstock.c"
#include "charge.c"
#include "objstock_v5.c"
#include "objstock_caches.c"
#include "loop.c"
#include "scan.c"
#include "validate.c"
