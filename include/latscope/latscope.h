/* latscope: the umbrella header. Link with -llatscope (pkg-config latscope, or CMake
 * find_package(latscope) -> latscope::latscope). */
#ifndef LATSCOPE_LATSCOPE_H
#define LATSCOPE_LATSCOPE_H
#include "latscope/errors.h"
#include "latscope/registry.h"
#include "latscope/timer.h"
#include "latscope/stats.h"
#include "latscope/reps.h"
#include "latscope/sizes.h"
#include "latscope/json.h"
#include "latscope/bench.h"
#include "latscope/clocksync.h"
#include "latscope/results.h"
#include "latscope/algos.h"
#include "latscope/tune.h"
#include "latscope/hooks.h"
#endif
