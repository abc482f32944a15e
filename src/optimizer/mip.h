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

//! What SolveWithFallback got: the answer, which back end gave it, and what failed before.
struct FallbackResult {
  //! The answering solver's result, its `seconds` the time of every attempt together.
  MipResult result;
  //! The back end whose answer `result` is (the last one tried when all failed); empty when the
  //! list of solvers held no known name.
  std::string solver;
  //! "name: message" for each back end that failed (kError) before `solver`, in order.
  std::vector<std::string> failures;

  //! `outcome` (what the answer means to the caller, e.g. "optimal") prefixed with the failures:
  //! "solver error (cbc: CBC failed: ...), glpk: optimal"; `outcome` alone when none failed.
  std::string Describe(std::string_view outcome) const;
};

//! Solves with the named back ends in order until one answers. A back end that fails (kError: its
//! library reported or printed an error, crashed, or refused the input) passes the problem on to
//! the next, with the time left of options.time_limit_seconds and the same start, so the caller's
//! incumbent stands; any other status (optimal, feasible, infeasible, no solution at the deadline)
//! is the answer. Unknown names are skipped. Stops trying when the time is up.
FallbackResult SolveWithFallback(const MipProblem& problem, const MipOptions& options,
                                 std::span<const std::string_view> solvers);
//! The same over solver objects (none null), named by their Name().
FallbackResult SolveWithFallback(const MipProblem& problem, const MipOptions& options,
                                 std::span<MipSolver* const> solvers);

//! `preferred` first, then every other back end in MipSolverNames() order: the order
//! SolveWithFallback tries them in when `preferred` is the configured one.
std::vector<std::string_view> FallbackOrder(std::string_view preferred);

//! A MipSolver that runs SolveWithFallback over FallbackOrder(preferred), for callers that take a
//! MipSolver: Name() is `preferred`; the result's message names the back ends that failed and the
//! one that answered ("cbc: CBC failed: ...; answered by glpk") when any failed. nullptr for an
//! unknown name.
std::unique_ptr<MipSolver> MakeFallbackSolver(std::string_view preferred);

//! "cbc" or "glpk"; nullptr for an unknown name.
std::unique_ptr<MipSolver> MakeMipSolver(std::string_view name);
//! The names MakeMipSolver accepts, the default first.
std::vector<std::string_view> MipSolverNames();

}  // namespace kubesched::optimizer
