#include "optimizer/cbc_solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <coin/Cbc_C_Interface.h>
#include <fmt/format.h>

#include "optimizer/isolated_solve.h"
#include "optimizer/mip_internal.h"

namespace kubesched::optimizer {
namespace {

using Status = MipResult::Status;

struct CbcModelDeleter {
  void operator()(Cbc_Model* model) const { Cbc_deleteModel(model); }
};
using CbcModelPtr = std::unique_ptr<Cbc_Model, CbcModelDeleter>;

// CbcMain1 reads and writes file-scope globals (its command parser's state among them).
std::mutex& CbcMutex() {
  static std::mutex mutex;
  return mutex;
}

// COIN's infinity is DBL_MAX; anything from kInf on is mapped to it.
double ToCoin(double value) {
  if (value >= MipProblem::kInf) return std::numeric_limits<double>::max();
  if (value <= -MipProblem::kInf) return -std::numeric_limits<double>::max();
  return value;
}

// CBC's random seeds are positive ints; 0 would mean "seed from the clock" for some of them.
std::string SeedParameter(uint64_t seed) {
  return std::to_string(1 + seed % static_cast<uint64_t>(std::numeric_limits<int>::max() - 1));
}

// Cbc_setParameter passes "-name value" to CbcMain1, as on the cbc command line; later settings win.
void SetParameters(Cbc_Model* model, const MipOptions& options) {
  Cbc_setLogLevel(model, 0);
  Cbc_setParameter(model, "log", "0");
  Cbc_setParameter(model, "slog", "0");
  // threads 0 is CBC's serial code; any other value starts worker threads (and nondeterminism).
  Cbc_setParameter(model, "threads", "0");
  const std::string seed = SeedParameter(options.seed);
  Cbc_setParameter(model, "randomSeed", seed.c_str());
  Cbc_setParameter(model, "randomCbcSeed", seed.c_str());
  // CPU time, which in the child process (isolated_solve.h) starts at zero: CBC's elapsed-time mode
  // counts from a clock inherited from the parent, so a late solve would get less time. The wall
  // clock is the parent's to enforce.
  Cbc_setParameter(model, "timeMode", "cpu");
  if (std::isfinite(options.time_limit_seconds) && options.time_limit_seconds < 1e9) {
    const std::string seconds = fmt::format("{}", std::max(0.0, options.time_limit_seconds));
    Cbc_setParameter(model, "sec", seconds.c_str());
  }
  Cbc_setAllowableGap(model, options.absolute_gap);
  const std::string gap = fmt::format("{}", options.absolute_gap);
  Cbc_setParameter(model, "allowableGap", gap.c_str());
  Cbc_setParameter(model, "ratioGap", "0");
}

// Loads the problem column-wise: Cbc_loadProblem takes compressed sparse columns.
void Load(Cbc_Model* model, const MipProblem& problem) {
  const int n = static_cast<int>(problem.num_columns());
  const int m = static_cast<int>(problem.rows.size());
  std::vector<int> start(n + 1, 0);
  for (const MipProblem::Row& row : problem.rows) {
    for (int32_t j : row.index) ++start[j + 1];
  }
  for (int j = 0; j < n; ++j) start[j + 1] += start[j];
  std::vector<int> next(start.begin(), start.end() - 1);
  std::vector<int> index(start[n]);
  std::vector<double> value(start[n]);
  std::vector<double> row_lb(m), row_ub(m);
  for (int i = 0; i < m; ++i) {
    const MipProblem::Row& row = problem.rows[i];
    for (size_t k = 0; k < row.index.size(); ++k) {
      const int at = next[row.index[k]]++;
      index[at] = i;
      value[at] = row.value[k];
    }
    row_lb[i] = ToCoin(row.lb);
    row_ub[i] = ToCoin(row.ub);
  }
  std::vector<double> col_lb(n), col_ub(n);
  for (int j = 0; j < n; ++j) {
    col_lb[j] = ToCoin(problem.col_lb[j]);
    col_ub[j] = ToCoin(problem.col_ub[j]);
  }
  Cbc_loadProblem(model, n, m, start.data(), index.data(), value.data(), col_lb.data(), col_ub.data(),
                  problem.obj.data(), row_lb.data(), row_ub.data());
  for (int j = 0; j < n; ++j) {
    if (problem.integer[j]) Cbc_setInteger(model, j);
  }
  Cbc_setObjSense(model, problem.maximize ? -1 : 1);
}

// CBC fixes the integer columns to the start's values and completes the continuous ones itself.
void SetStart(Cbc_Model* model, const MipProblem& problem, const std::vector<double>& start) {
  const int n = static_cast<int>(problem.num_columns());
  std::vector<int> columns(n);
  std::vector<double> values(start);
  for (int j = 0; j < n; ++j) {
    columns[j] = j;
    if (problem.integer[j]) values[j] = std::round(values[j]);
  }
  Cbc_setMIPStartI(model, n, columns.data(), values.data());
}

// CBC reports huge sentinels (±1e50, DBL_MAX) when it knows no bound.
double CleanBound(const MipProblem& problem, double bound) {
  if (!std::isfinite(bound) || std::abs(bound) >= MipProblem::kInf) return internal::NoBound(problem);
  return bound;
}

MipResult SolveLoaded(Cbc_Model* model, const MipProblem& problem) {
  MipResult result;
  const int n = static_cast<int>(problem.num_columns());
  const int status = Cbc_solve(model);
  if (Cbc_getNumIntegers(model) == 0) {
    // Cbc_solve solved the LP with CLP alone; CBC's own status and bound are not set.
    if (Cbc_isProvenOptimal(model)) {
      const double* x = Cbc_getColSolution(model);
      result.status = Status::kOptimal;
      result.x.assign(x, x + n);
    } else if (Cbc_isProvenInfeasible(model)) {
      result.status = Status::kInfeasible;
      result.message = "the linear program is infeasible or unbounded";
    } else {
      result.status = Status::kError;
      result.message = "CLP did not solve the linear program";
    }
    return result;
  }

  const double* best = Cbc_bestSolution(model);
  const int secondary = Cbc_secondaryStatus(model);
  result.bound = CleanBound(problem, Cbc_getBestPossibleObjValue(model));
  if (secondary == 7) {
    result.status = Status::kError;
    result.message = "the linear relaxation is unbounded";
  } else if (best != nullptr && Cbc_isProvenOptimal(model)) {
    result.status = Status::kOptimal;
  } else if (Cbc_isProvenInfeasible(model) || (status == 0 && best == nullptr)) {
    result.status = Status::kInfeasible;
    result.bound = internal::NoBound(problem);
  } else if (best != nullptr) {
    result.status = Status::kFeasible;
    if (Cbc_isAbandoned(model)) result.message = "CBC stopped on numerical difficulties";
  } else if (Cbc_isAbandoned(model)) {
    result.status = Status::kError;
    result.message = "CBC stopped on numerical difficulties";
  } else {
    result.status = Status::kNoSolution;
  }
  if (best != nullptr && result.status != Status::kError && result.status != Status::kInfeasible) {
    result.x.assign(best, best + n);
  }
  return result;
}

}  // namespace

std::string CbcReportedError(std::string_view output) {
  const size_t at = output.find("ERROR:");
  if (at == std::string_view::npos) return "";
  const size_t start = output.rfind('\n', at);
  const size_t end = output.find('\n', at);
  std::string_view line = output.substr(start == std::string_view::npos ? 0 : start + 1);
  line = line.substr(0, end == std::string_view::npos ? std::string_view::npos : end - (line.data() - output.data()));
  return std::string(line);
}

MipResult CbcSolver::Solve(const MipProblem& problem, const MipOptions& options) {
  return internal::Solve(problem, options, [&] {
    // In a child process (isolated_solve.h): CBC 2.10 can crash in its preprocessing, and its
    // time limit is not checked inside the root relaxation. The lock is held across the fork so
    // that the child's copy of CBC's global state is not in the middle of another solve.
    std::lock_guard lock(CbcMutex());
    std::string output;  // what CBC, CLP and CGL printed: never this process's stdout or stderr
    MipResult result = SolveIsolated(
        [&]() -> MipResult {
          MipResult r;
          try {  // a default MipResult is kError
            CbcModelPtr model(Cbc_newModel());
            Load(model.get(), problem);
            SetParameters(model.get(), options);
            if (options.start) SetStart(model.get(), problem, *options.start);
            r = SolveLoaded(model.get(), problem);
          } catch (const std::exception& e) {
            r = MipResult{};
            r.message = fmt::format("CBC failed: {}", e.what());
          } catch (...) {
            // COIN throws CoinError, which does not derive from std::exception.
            r = MipResult{};
            r.message = "CBC failed with an exception";
          }
          return r;
        },
        options.time_limit_seconds, std::max(1.0, 0.1 * options.time_limit_seconds), kName, &output);
    // CBC's own report of its failure: the answer that came with it is not one (it used to be taken
    // for a search stopped at its deadline, the start standing in for the solution).
    if (std::string error = CbcReportedError(output); !error.empty() && result.status != Status::kError) {
      result = MipResult{};
      result.message = fmt::format("CBC failed: {}", error);
    }
    // A child killed at the deadline, or crashed, said nothing about the bound.
    if (result.status == Status::kNoSolution || result.status == Status::kError) {
      result.bound = internal::NoBound(problem);
    }
    return result;
  });
}

}  // namespace kubesched::optimizer
