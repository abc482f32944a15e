#pragma once
// Runs a solver in a child process, so that the scheduler outlives the solver library: CBC 2.10's
// preprocessing can crash (a segfault in CglPreProcess::postProcess on some of openb's batches),
// and no solver can be stopped inside its root relaxation, which on a large model outlasts any
// deadline. The child is forked with the model already built; its answer comes back through a
// pipe. A crash costs only the answer (kError), a solve past the deadline is killed (kNoSolution):
// the caller keeps its incumbent either way.

#include <functional>

#include "optimizer/mip.h"

namespace kubesched::optimizer {

//! Runs `solve` in a forked child and returns its result. The child is killed `grace_seconds`
//! after `deadline_seconds` (from now) if it has not answered. Falls back to running `solve` in
//! this process when fork fails.
MipResult SolveIsolated(const std::function<MipResult()>& solve, double deadline_seconds, double grace_seconds = 1);

}  // namespace kubesched::optimizer
