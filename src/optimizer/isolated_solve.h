#pragma once
// Runs a solver in a child process, so that the scheduler outlives the solver library: CBC 2.10's
// preprocessing can crash (a segfault in CglPreProcess::postProcess on some of openb's batches),
// and no solver can be stopped inside its root relaxation, which on a large model outlasts any
// deadline. The child is forked with the model already built; its answer comes back through a
// pipe. A crash costs only the answer (kError), a solve past the deadline is killed (kNoSolution):
// the caller keeps its incumbent either way. The child's standard output and error go into a pipe
// too: CBC and CLP print to them whatever their log level (CBC's C interface prints the errors it
// catches with printf), and a line there would break `kubesched simulate -o json`.

#include <functional>
#include <string>
#include <string_view>

#include "optimizer/mip.h"

namespace kubesched::optimizer {

//! At most this many bytes of what the child printed are kept (the last ones).
inline constexpr size_t kMaxSolverOutput = 16 * 1024;

//! Runs `solve` in a forked child and returns its result. The child is killed `grace_seconds`
//! after `deadline_seconds` (from now) if it has not answered. What the child writes to its
//! standard output and error never reaches this process's: each line is logged at V(4) as
//! "Solver output" with `solver` = `name`, and the text (its last kMaxSolverOutput bytes) is stored
//! in `*output` when given. A child that crashed or was killed gets the last lines it printed in
//! its message. Falls back to running `solve` in this process, uncaptured, when pipe or fork fails.
MipResult SolveIsolated(const std::function<MipResult()>& solve, double deadline_seconds, double grace_seconds = 1,
                        std::string_view name = "solver", std::string* output = nullptr);

//! The last `max_lines` non-empty lines of `text`, joined with "; " (for an error message).
std::string LastLines(std::string_view text, size_t max_lines = 3);

}  // namespace kubesched::optimizer
