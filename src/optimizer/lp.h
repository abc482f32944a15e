#pragma once
// A linear program that grows by columns, as column generation's restricted master needs:
// max c·x subject to A x <= b, 0 <= x <= u. It stays loaded in GLPK between solves, so a solve
// after new columns or a new objective starts from the last optimal basis (still primal feasible:
// a new column enters at zero, and the constraints do not change) instead of from scratch.

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>

typedef struct glp_prob glp_prob;

namespace kubesched::optimizer {

//! GLPK keeps an environment per thread (allocated by the thread's first GLPK call) and frees it
//! only on glp_free_env: a thread that solved with GLPK would leak it when it ends (a `run`
//! scheduling thread whose gang cycles used the LP). Called before a thread's GLPK work, this
//! frees that thread's environment when the thread exits. Cheap after the first call.
void FreeGlpkEnvironmentAtThreadExit();

class ColumnLp {
 public:
  //! One row per entry, sum_j a_ij x_j <= row_upper[i]; no columns yet.
  explicit ColumnLp(std::span<const double> row_upper);
  ~ColumnLp();
  ColumnLp(const ColumnLp&) = delete;
  ColumnLp& operator=(const ColumnLp&) = delete;

  //! Adds 0 <= x_j <= upper with objective coefficient objective and entries value[e] in row
  //! rows[e] (each row at most once, in range); returns j, counted from 0.
  int32_t AddColumn(double objective, std::span<const int32_t> rows, std::span<const double> values,
                    double upper = std::numeric_limits<double>::infinity());
  //! Changes column's objective coefficient.
  void SetObjective(int32_t column, double objective);

  enum class Status {
    kOptimal,    //!< the duals are optimal; Objective() is the LP's optimum
    kTimeLimit,  //!< stopped early: x is feasible (b >= 0 is required), the duals are not optimal
    kFailed,     //!< GLPK failed; message says how
  };
  struct SolveResult {
    Status status = Status::kFailed;
    std::string message;
  };
  //! Runs GLPK's primal simplex from the last basis, printing nothing. Requires every row_upper
  //! >= 0 and every upper >= 0, so that x = 0 is feasible and the LP is never infeasible.
  SolveResult Solve(double time_limit_seconds);

  //! The last solve's objective value, row dual and column value.
  double Objective() const;
  double RowDual(int32_t row) const;
  double ColumnValue(int32_t column) const;
  int32_t num_rows() const;
  int32_t num_columns() const;

 private:
  struct ProbDeleter {
    void operator()(glp_prob* prob) const;
  };
  std::unique_ptr<glp_prob, ProbDeleter> prob_;
};

}  // namespace kubesched::optimizer
