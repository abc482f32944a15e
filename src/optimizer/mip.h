#pragma once
// A mixed-integer linear program and the solvers that take one, behind one interface so the
// placement model does not depend on a solver library (COIN-OR CBC and GLPK, from Debian).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kubesched::optimizer {

//! min (or max) obj·x subject to row_lb <= A x <= row_ub, col_lb <= x <= col_ub, x_j integer
//! where integer[j]. Infinite bounds are ±kInf.
struct MipProblem {
  static constexpr double kInf = 1e30;

  struct Row {
    std::vector<int32_t> index;  // column indices, each at most once
    std::vector<double> value;   // parallel to index
    double lb = -kInf;
    double ub = kInf;
  };

  std::vector<double> col_lb;
  std::vector<double> col_ub;
  std::vector<double> obj;
  std::vector<uint8_t> integer;  // 1 = integer column
  std::vector<Row> rows;
  bool maximize = false;

  //! Adds a column; returns its index.
  int32_t AddColumn(double lb, double ub, double objective, bool is_integer) {
    col_lb.push_back(lb);
    col_ub.push_back(ub);
    obj.push_back(objective);
    integer.push_back(is_integer ? 1 : 0);
    return static_cast<int32_t>(col_lb.size() - 1);
  }
  void AddRow(Row row) { rows.push_back(std::move(row)); }
  size_t num_columns() const { return col_lb.size(); }
};

struct MipOptions {
  //! Wall-clock limit for the whole solve.
  double time_limit_seconds = 10;
  //! The solver's random seed (same seed and problem: same answer).
  uint64_t seed = 1;
  //! A feasible solution to start from (one value per column), when known.
  std::optional<std::vector<double>> start;
  //! Stop when best bound and incumbent are closer than this (absolute, in objective units).
  //! The placement objective is integral, so anything below 1 proves optimality.
  double absolute_gap = 0.5;
};

struct MipResult {
  enum class Status {
    kOptimal,     // x is proved optimal (within absolute_gap)
    kFeasible,    // x is feasible; stopped at the time limit; bound is the best bound known
    kInfeasible,  // proved infeasible
    kNoSolution,  // stopped at the time limit without a feasible solution
    kError,       // the solver failed; message says why
  };
  Status status = Status::kError;
  std::vector<double> x;  // when kOptimal or kFeasible
  double objective = 0;
  //! Best bound on the optimal objective (a lower bound when minimising); -kInf (+kInf when
  //! maximising) when the solver stopped before it knew one.
  double bound = 0;
  double seconds = 0;
  std::string message;
};

std::string_view ToString(MipResult::Status status);

class MipSolver {
 public:
  virtual ~MipSolver() = default;
  virtual std::string_view Name() const = 0;
  //! Solves silently (nothing on stdout or stderr) and throws nothing: malformed input or a
  //! library failure is kError with a message. When options.start is feasible the result is never
  //! worse than it: kFeasible or kOptimal with an objective at least as good.
  virtual MipResult Solve(const MipProblem& problem, const MipOptions& options) = 0;
};

//! Empty when the problem and options are well formed (sizes agree, column indices in range and
//! unique within a row, no NaN, a start of the right size); otherwise what is wrong. The back ends
//! check this first: their libraries abort or throw on malformed input.
std::string ValidateMipProblem(const MipProblem& problem, const MipOptions& options);

//! The largest violation of a column bound, a row or integrality by x; 0 when x is feasible.
//! Row and bound violations are divided by 1 + |the violated bound|, so big coefficients do not
//! turn rounding noise into infeasibility. x must have one value per column.
double MaxViolation(const MipProblem& problem, std::span<const double> x);

//! obj·x.
double ObjectiveValue(const MipProblem& problem, std::span<const double> x);

//! "cbc" or "glpk"; nullptr for an unknown name.
std::unique_ptr<MipSolver> MakeMipSolver(std::string_view name);
//! The names MakeMipSolver accepts, the default first.
std::vector<std::string_view> MipSolverNames();

}  // namespace kubesched::optimizer
