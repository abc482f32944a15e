#include "optimizer/mip.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "optimizer/cbc_solver.h"
#include "optimizer/glpk_solver.h"
#include "optimizer/mip_internal.h"

namespace kubesched::optimizer {

std::string_view ToString(MipResult::Status status) {
  switch (status) {
    case MipResult::Status::kOptimal:
      return "optimal";
    case MipResult::Status::kFeasible:
      return "feasible";
    case MipResult::Status::kInfeasible:
      return "infeasible";
    case MipResult::Status::kNoSolution:
      return "no solution";
    case MipResult::Status::kError:
      return "error";
  }
  return "unknown";
}

std::unique_ptr<MipSolver> MakeMipSolver(std::string_view name) {
  if (name == CbcSolver::kName) return std::make_unique<CbcSolver>();
  if (name == GlpkSolver::kName) return std::make_unique<GlpkSolver>();
  return nullptr;
}

std::vector<std::string_view> MipSolverNames() { return {CbcSolver::kName, GlpkSolver::kName}; }

std::string FallbackResult::Describe(std::string_view outcome) const {
  if (failures.empty()) return std::string(outcome);
  return fmt::format("solver error ({}), {}: {}", fmt::join(failures, "; "), solver, outcome);
}

FallbackResult SolveWithFallback(const MipProblem& problem, const MipOptions& options,
                                 std::span<MipSolver* const> solvers) {
  using Clock = std::chrono::steady_clock;
  const auto began = Clock::now();
  FallbackResult out;
  MipOptions attempt = options;
  for (MipSolver* solver : solvers) {
    const double spent = std::chrono::duration<double>(Clock::now() - began).count();
    if (!out.solver.empty()) {
      // A later back end gets only what is left; with nothing left the failure stands.
      if (options.time_limit_seconds - spent <= 0) break;
      out.failures.push_back(fmt::format("{}: {}", out.solver, out.result.message));
    }
    attempt.time_limit_seconds = options.time_limit_seconds - spent;
    out.result = solver->Solve(problem, attempt);
    out.solver = std::string(solver->Name());
    if (out.result.status != MipResult::Status::kError) break;
  }
  out.result.seconds = std::chrono::duration<double>(Clock::now() - began).count();
  return out;
}

FallbackResult SolveWithFallback(const MipProblem& problem, const MipOptions& options,
                                 std::span<const std::string_view> solvers) {
  std::vector<std::unique_ptr<MipSolver>> owned;
  std::vector<MipSolver*> known;
  for (std::string_view name : solvers) {
    if (auto solver = MakeMipSolver(name)) {
      known.push_back(solver.get());
      owned.push_back(std::move(solver));
    }
  }
  return SolveWithFallback(problem, options, std::span<MipSolver* const>(known));
}

std::vector<std::string_view> FallbackOrder(std::string_view preferred) {
  std::vector<std::string_view> order{preferred};
  for (std::string_view name : MipSolverNames()) {
    if (name != preferred) order.push_back(name);
  }
  return order;
}

namespace {

class FallbackSolver final : public MipSolver {
 public:
  explicit FallbackSolver(std::string_view preferred) : name_(preferred), order_(FallbackOrder(name_)) {}
  std::string_view Name() const override { return name_; }
  MipResult Solve(const MipProblem& problem, const MipOptions& options) override {
    FallbackResult r = SolveWithFallback(problem, options, order_);
    if (!r.failures.empty()) {
      r.result.message = fmt::format("{}; answered by {}{}{}", fmt::join(r.failures, "; "), r.solver,
                                     r.result.message.empty() ? "" : ": ", r.result.message);
    }
    return std::move(r.result);
  }

 private:
  std::string name_;
  std::vector<std::string_view> order_;
};

}  // namespace

std::unique_ptr<MipSolver> MakeFallbackSolver(std::string_view preferred) {
  if (!MakeMipSolver(preferred)) return nullptr;
  return std::make_unique<FallbackSolver>(preferred);
}

std::string ValidateMipProblem(const MipProblem& problem, const MipOptions& options) {
  const size_t n = problem.num_columns();
  if (problem.col_ub.size() != n || problem.obj.size() != n || problem.integer.size() != n) {
    return fmt::format("column arrays differ in size: {} lower bounds, {} upper bounds, {} objective, {} integer", n,
                       problem.col_ub.size(), problem.obj.size(), problem.integer.size());
  }
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max()) ||
      problem.rows.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return "too many columns or rows";
  }
  for (size_t j = 0; j < n; ++j) {
    if (std::isnan(problem.col_lb[j]) || std::isnan(problem.col_ub[j]) || !std::isfinite(problem.obj[j])) {
      return fmt::format("column {}: NaN bound or non-finite objective", j);
    }
  }
  // Seen[j] == row index + 1 when row already names column j: finds duplicates in O(nonzeros).
  std::vector<size_t> seen(n, 0);
  for (size_t i = 0; i < problem.rows.size(); ++i) {
    const MipProblem::Row& row = problem.rows[i];
    if (row.index.size() != row.value.size()) {
      return fmt::format("row {}: {} indices but {} values", i, row.index.size(), row.value.size());
    }
    if (std::isnan(row.lb) || std::isnan(row.ub)) return fmt::format("row {}: NaN bound", i);
    for (size_t k = 0; k < row.index.size(); ++k) {
      const int32_t j = row.index[k];
      if (j < 0 || static_cast<size_t>(j) >= n) return fmt::format("row {}: column {} out of range", i, j);
      if (!std::isfinite(row.value[k])) return fmt::format("row {}: non-finite coefficient", i);
      if (seen[j] == i + 1) return fmt::format("row {}: column {} appears twice", i, j);
      seen[j] = i + 1;
    }
  }
  if (std::isnan(options.time_limit_seconds)) return "time limit is NaN";
  if (!(options.absolute_gap >= 0)) return "absolute gap must be non-negative";
  if (options.start) {
    if (options.start->size() != n) {
      return fmt::format("start has {} values for {} columns", options.start->size(), n);
    }
    for (double v : *options.start) {
      if (!std::isfinite(v)) return "start has a non-finite value";
    }
  }
  return "";
}

namespace {

// How far value lies outside [lb, ub], relative to the bound it breaks.
double BoundViolation(double value, double lb, double ub) {
  if (!internal::IsInfinite(lb) && value < lb) return (lb - value) / (1 + std::abs(lb));
  if (!internal::IsInfinite(ub) && value > ub) return (value - ub) / (1 + std::abs(ub));
  return 0;
}

}  // namespace

double MaxViolation(const MipProblem& problem, std::span<const double> x) {
  double worst = 0;
  for (size_t j = 0; j < problem.num_columns(); ++j) {
    worst = std::max(worst, BoundViolation(x[j], problem.col_lb[j], problem.col_ub[j]));
    if (problem.integer[j]) worst = std::max(worst, std::abs(x[j] - std::round(x[j])));
  }
  for (const MipProblem::Row& row : problem.rows) {
    double activity = 0;
    for (size_t k = 0; k < row.index.size(); ++k) activity += row.value[k] * x[row.index[k]];
    worst = std::max(worst, BoundViolation(activity, row.lb, row.ub));
  }
  return worst;
}

double ObjectiveValue(const MipProblem& problem, std::span<const double> x) {
  double sum = 0;
  for (size_t j = 0; j < problem.num_columns(); ++j) sum += problem.obj[j] * x[j];
  return sum;
}

namespace internal {

double NoBound(const MipProblem& problem) { return problem.maximize ? MipProblem::kInf : -MipProblem::kInf; }

MipResult SolveWithoutColumns(const MipProblem& problem) {
  MipResult result;
  for (const MipProblem::Row& row : problem.rows) {
    if (BoundViolation(0, row.lb, row.ub) > kFeasibilityTolerance || row.lb > row.ub) {
      result.status = MipResult::Status::kInfeasible;
      result.bound = NoBound(problem);
      return result;
    }
  }
  result.status = MipResult::Status::kOptimal;
  return result;
}

MipResult Solve(const MipProblem& problem, const MipOptions& options, const std::function<MipResult()>& solve) {
  const auto began = std::chrono::steady_clock::now();
  MipResult result;
  if (std::string error = ValidateMipProblem(problem, options); !error.empty()) {
    result.status = MipResult::Status::kError;
    result.message = std::move(error);
  } else if (problem.num_columns() == 0) {
    result = SolveWithoutColumns(problem);
  } else {
    result = solve();
  }
  Finish(problem, options, result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return result;
}

void Finish(const MipProblem& problem, const MipOptions& options, MipResult& result) {
  using Status = MipResult::Status;
  // Better means a larger objective when maximising, a smaller one when minimising.
  auto better = [&](double a, double b) { return problem.maximize ? a > b : a < b; };
  const bool has_solution = result.status == Status::kOptimal || result.status == Status::kFeasible;
  if (has_solution) {
    for (size_t j = 0; j < problem.num_columns(); ++j) {
      if (problem.integer[j]) result.x[j] = std::round(result.x[j]);
    }
    result.objective = ObjectiveValue(problem, result.x);
  } else {
    result.x.clear();
  }

  // The libraries may drop a start (CBC when the time runs out before it is read, GLPK when the
  // limit strikes before the first heuristic callback); the caller still gets it back.
  if (options.start && result.status != Status::kError) {
    std::vector<double> start = *options.start;
    for (size_t j = 0; j < problem.num_columns(); ++j) {
      if (problem.integer[j]) start[j] = std::round(start[j]);
    }
    const double start_objective = ObjectiveValue(problem, start);
    if ((!has_solution || better(start_objective, result.objective)) &&
        MaxViolation(problem, start) <= kFeasibilityTolerance) {
      if (result.status == Status::kInfeasible) {
        result.message = "the solver reported infeasible but the start is feasible (numerical trouble)";
      }
      if (!has_solution) result.status = Status::kFeasible;
      result.x = std::move(start);
      result.objective = start_objective;
    }
  }

  if (result.status == Status::kOptimal || result.status == Status::kFeasible) {
    // The objective is attained, so the optimum is at least that good; rounding or tolerances can
    // leave a solver's bound marginally on the wrong side.
    if (better(result.objective, result.bound)) result.bound = result.objective;
    if (result.status == Status::kOptimal && std::abs(result.bound - result.objective) > options.absolute_gap) {
      result.bound = result.objective;  // proved optimal: the bound is the objective
    }
  }
}

}  // namespace internal
}  // namespace kubesched::optimizer
