#pragma once
// GLPK (Debian's libglpk) through glp_intopt.

#include "optimizer/mip.h"

namespace kubesched::optimizer {

//! Runs glp_intopt silenced, with MIR, Gomory and cover cuts and the feasibility pump, under a
//! wall-clock limit. GLPK has only a relative gap, so the absolute one is enforced from the
//! branch-and-cut callback, which also records the best bound and offers the start as the first
//! incumbent. With a start GLPK's MIP presolver is off (the callback speaks in the tree's columns,
//! which presolve renumbers) and the LP relaxation is solved first. GLPK is deterministic and has
//! no seed: options.seed is ignored.
class GlpkSolver final : public MipSolver {
 public:
  static constexpr std::string_view kName = "glpk";
  std::string_view Name() const override { return kName; }
  MipResult Solve(const MipProblem& problem, const MipOptions& options) override;
};

}  // namespace kubesched::optimizer
