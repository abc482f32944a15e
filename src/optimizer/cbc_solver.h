#pragma once
// COIN-OR CBC 2.10 (Debian's coinor-libcbc) through its C interface.

#include <string>
#include <string_view>

#include "optimizer/mip.h"

namespace kubesched::optimizer {

//! Runs CBC's standard driver (CbcMain1: preprocessing, cuts, heuristics, branch and bound) in one
//! thread with options.seed as both CBC's and CLP's random seed, a wall-clock limit and the
//! absolute gap; the start, if any, goes in as CBC's MIP start. The solve runs in a child process
//! (isolated_solve.h), killed a grace period after the limit; CbcMain1 keeps global state, so
//! concurrent Solve calls take turns.
//! The error CBC printed while solving, empty when none: its C interface catches a CoinError
//! thrown inside CbcMain1, prints it with printf ("Cbc_C_Interface::Cbc_solve(): ERROR: ...") and
//! returns the model's status as if the search had merely stopped, so the printed line is the only
//! sign that the answer is not one.
std::string CbcReportedError(std::string_view output);

class CbcSolver final : public MipSolver {
 public:
  static constexpr std::string_view kName = "cbc";
  std::string_view Name() const override { return kName; }
  MipResult Solve(const MipProblem& problem, const MipOptions& options) override;
};

}  // namespace kubesched::optimizer
