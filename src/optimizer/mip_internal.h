#pragma once
// What every MIP back end does before and after calling its library, so the solvers answer alike.

#include <functional>

#include "optimizer/mip.h"

namespace kubesched::optimizer::internal {

//! The MaxViolation up to which a start or a solver's answer counts as feasible.
inline constexpr double kFeasibilityTolerance = 1e-6;

//! Values at or beyond ±MipProblem::kInf (or an IEEE infinity) mean "no bound".
inline bool IsInfinite(double value) { return value >= MipProblem::kInf || value <= -MipProblem::kInf; }

//! The bound when nothing is known: -kInf when minimising, +kInf when maximising.
double NoBound(const MipProblem& problem);

//! The answer for a problem without columns (the libraries reject or mishandle it): optimal when
//! every row admits 0, infeasible otherwise.
MipResult SolveWithoutColumns(const MipProblem& problem);

//! Makes a back end's raw answer honour the MipSolver contract: integer columns rounded, the
//! objective recomputed from x, a feasible start kept when the solver found nothing as good, and
//! the bound no worse than the objective it accompanies.
void Finish(const MipProblem& problem, const MipOptions& options, MipResult& result);

//! The frame of every back end's Solve: validation, the problem without columns, `solve` (the
//! library's part) otherwise, then Finish and the time taken.
MipResult Solve(const MipProblem& problem, const MipOptions& options, const std::function<MipResult()>& solve);

}  // namespace kubesched::optimizer::internal
