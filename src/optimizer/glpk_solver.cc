#include "optimizer/glpk_solver.h"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <memory>
#include <vector>

#include "optimizer/isolated_solve.h"
#include "optimizer/lp.h"
#include "optimizer/mip_internal.h"

namespace kubesched::optimizer {
namespace {

using Status = MipResult::Status;

struct GlpProbDeleter {
  void operator()(glp_prob* prob) const { glp_delete_prob(prob); }
};
using GlpProbPtr = std::unique_ptr<glp_prob, GlpProbDeleter>;

// GLPK prints nothing to the terminal while a solve runs: its output goes to a hook that keeps it,
// so that the solve can tell whether GLPK met numerical trouble (a singular basis after cuts),
// after which it may report a search it lost as finished. glp_term_out and the hook are per
// thread in GLPK 5; the caller's terminal setting is restored on the way out.
class TerminalCapture {
 public:
  TerminalCapture() : previous_(glp_term_out(GLP_ON)) { glp_term_hook(&TerminalCapture::Hook, &text_); }
  ~TerminalCapture() {
    glp_term_hook(nullptr, nullptr);
    glp_term_out(previous_);
  }
  TerminalCapture(const TerminalCapture&) = delete;
  TerminalCapture& operator=(const TerminalCapture&) = delete;

  //! Whether GLPK reported numerical trouble so far.
  bool NumericalTrouble() const {
    return text_.find("nable to factorize") != std::string::npos || text_.find("nstab") != std::string::npos ||
           text_.find("ingular") != std::string::npos;
  }

 private:
  static int Hook(void* info, const char* s) {
    auto* text = static_cast<std::string*>(info);
    if (text->size() < (1u << 16)) text->append(s);
    return 1;  // handled: nothing reaches the terminal
  }
  int previous_;
  std::string text_;
};

// GLPK's bounds are a type plus values; ±kInf become the free sides.
int BoundType(double lb, double ub) {
  const bool has_lb = !internal::IsInfinite(lb);
  const bool has_ub = !internal::IsInfinite(ub);
  if (has_lb && has_ub) return lb == ub ? GLP_FX : GLP_DB;
  if (has_lb) return GLP_LO;
  if (has_ub) return GLP_UP;
  return GLP_FR;
}

GlpProbPtr Load(const MipProblem& problem) {
  FreeGlpkEnvironmentAtThreadExit();
  GlpProbPtr prob(glp_create_prob());
  glp_prob* p = prob.get();
  const int n = static_cast<int>(problem.num_columns());
  const int m = static_cast<int>(problem.rows.size());
  glp_set_obj_dir(p, problem.maximize ? GLP_MAX : GLP_MIN);
  if (m > 0) glp_add_rows(p, m);
  glp_add_cols(p, n);
  for (int j = 0; j < n; ++j) {
    const double lb = problem.col_lb[j], ub = problem.col_ub[j];
    glp_set_col_bnds(p, j + 1, BoundType(lb, ub), lb, ub);
    glp_set_obj_coef(p, j + 1, problem.obj[j]);
    if (problem.integer[j]) glp_set_col_kind(p, j + 1, GLP_IV);
  }
  // GLPK's arrays are 1-based: element 0 is unused.
  std::vector<int> index;
  for (int i = 0; i < m; ++i) {
    const MipProblem::Row& row = problem.rows[i];
    glp_set_row_bnds(p, i + 1, BoundType(row.lb, row.ub), row.lb, row.ub);
    index.assign(1, 0);
    for (int32_t j : row.index) index.push_back(j + 1);
    std::vector<double> value(1, 0);
    value.insert(value.end(), row.value.begin(), row.value.end());
    glp_set_mat_row(p, i + 1, static_cast<int>(row.index.size()), index.data(), value.data());
  }
  return prob;
}

// GLPK counts whole milliseconds in an int; INT_MAX means no limit.
int Milliseconds(double seconds) {
  if (!(seconds < INT_MAX / 1000.0 - 1)) return INT_MAX;
  return static_cast<int>(std::ceil(std::max(0.0, seconds) * 1000));
}

// Shared with the branch-and-cut callback through cb_info.
struct Search {
  double absolute_gap = 0;
  //! The start as GLPK wants it (1-based), empty when none is offered.
  std::vector<double> start;
  bool start_offered = false;
  bool has_bound = false;
  double bound = 0;
  bool stopped_on_gap = false;
};

void Callback(glp_tree* tree, void* info) {
  Search& search = *static_cast<Search*>(info);
  // The best bound among the active nodes is the global bound (pruned nodes are no better than the
  // incumbent, which Finish accounts for); it only improves, so the last one seen is the best.
  // A node whose LP is not solved yet inherits its parent's bound; the root's is ±DBL_MAX.
  if (int best = glp_ios_best_node(tree); best != 0) {
    if (double bound = glp_ios_node_bound(tree, best); !internal::IsInfinite(bound)) {
      search.has_bound = true;
      search.bound = bound;
    }
  }
  if (glp_ios_reason(tree) == GLP_IHEUR && !search.start_offered && !search.start.empty()) {
    search.start_offered = true;
    glp_ios_heur_sol(tree, search.start.data());  // nonzero only when no better than the incumbent
  }
  // GLPK's mip_gap is relative; the contract's gap is absolute.
  glp_prob* prob = glp_ios_get_prob(tree);
  if (search.has_bound && glp_mip_status(prob) == GLP_FEAS &&
      std::abs(glp_mip_obj_val(prob) - search.bound) < search.absolute_gap) {
    search.stopped_on_gap = true;
    glp_ios_terminate(tree);
  }
}

MipResult SolveLoaded(glp_prob* prob, const MipProblem& problem, const MipOptions& options,
                      const TerminalCapture& terminal) {
  using Clock = std::chrono::steady_clock;
  const auto began = Clock::now();
  MipResult result;
  result.bound = internal::NoBound(problem);
  Search search;
  search.absolute_gap = options.absolute_gap;

  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_ERR;  // to the capturing hook only
  parm.mip_gap = 0;
  parm.mir_cuts = GLP_ON;
  // Gomory's mixed-integer cuts stay off: with them GLPK reported a singular basis, or failed its
  // search (glp_intopt code 5), on most of the Boreas models.
  parm.gmi_cuts = GLP_OFF;
  parm.cov_cuts = GLP_ON;
  parm.fp_heur = GLP_ON;
  parm.cb_func = Callback;
  parm.cb_info = &search;

  const double* start = options.start ? options.start->data() : nullptr;
  if (start != nullptr && MaxViolation(problem, *options.start) <= internal::kFeasibilityTolerance) {
    search.start.assign(1, 0);
    for (size_t j = 0; j < problem.num_columns(); ++j) {
      search.start.push_back(problem.integer[j] ? std::round(start[j]) : start[j]);
    }
  }

  if (search.start.empty()) {
    parm.presolve = GLP_ON;
  } else {
    // Without the presolver glp_intopt needs the LP relaxation solved to optimality first.
    glp_smcp simplex;
    glp_init_smcp(&simplex);
    simplex.msg_lev = GLP_MSG_OFF;
    simplex.presolve = GLP_ON;
    simplex.tm_lim = Milliseconds(options.time_limit_seconds);
    const int code = glp_simplex(prob, &simplex);
    if (code == GLP_ETMLIM) {
      result.status = Status::kNoSolution;
      return result;
    }
    if (code == GLP_ENOPFS || code == GLP_EBOUND) {
      result.status = Status::kInfeasible;
      return result;
    }
    if (code == GLP_ENODFS) {
      result.status = Status::kError;
      result.message = "the linear relaxation is unbounded";
      return result;
    }
    if (code != 0 || glp_get_status(prob) != GLP_OPT) {
      const int status = glp_get_status(prob);
      result.status = status == GLP_NOFEAS ? Status::kInfeasible : Status::kError;
      if (status == GLP_UNBND) result.message = "the linear relaxation is unbounded";
      if (result.status == Status::kError && result.message.empty()) {
        result.message = "GLPK's simplex failed on the linear relaxation";
      }
      return result;
    }
    result.bound = glp_get_obj_val(prob);
    parm.presolve = GLP_OFF;
  }
  const double spent = std::chrono::duration<double>(Clock::now() - began).count();
  parm.tm_lim = Milliseconds(options.time_limit_seconds - spent);

  const int code = glp_intopt(prob, &parm);
  if (search.has_bound) result.bound = search.bound;
  const int mip_status = glp_mip_status(prob);
  switch (code) {
    case 0:
    case GLP_ESTOP:
    case GLP_ETMLIM:
      if (mip_status == GLP_OPT || (mip_status == GLP_FEAS && search.stopped_on_gap)) {
        result.status = Status::kOptimal;
      } else if (mip_status == GLP_FEAS) {
        result.status = Status::kFeasible;
      } else if (mip_status == GLP_NOFEAS) {
        result.status = Status::kInfeasible;
      } else {
        result.status = Status::kNoSolution;
      }
      break;
    case GLP_ENOPFS:
    case GLP_EBOUND:  // crossed bounds: the problem is validated, so nothing else can be wrong with them
      result.status = Status::kInfeasible;
      break;
    case GLP_ENODFS:
      result.status = Status::kError;
      result.message = "the linear relaxation is unbounded";
      break;
    default:
      // Numerical trouble (a singular basis after cuts) ends the search; an incumbent found
      // before is still a valid answer, only not a proved one.
      if (mip_status == GLP_FEAS || mip_status == GLP_OPT) {
        result.status = Status::kFeasible;
      } else {
        result.status = Status::kError;
      }
      result.message = "glp_intopt failed with code " + std::to_string(code);
      break;
  }
  // GLPK may end a search it lost to numerical trouble with "tree is empty" and GLP_OPT: that is
  // not a proof.
  if (result.status == Status::kOptimal && !search.stopped_on_gap && terminal.NumericalTrouble()) {
    result.status = Status::kFeasible;
    result.message = "GLPK met numerical trouble: the answer is not proved optimal";
  }
  if (result.status == Status::kOptimal || result.status == Status::kFeasible) {
    result.objective = glp_mip_obj_val(prob);
    result.x.resize(problem.num_columns());
    for (size_t j = 0; j < problem.num_columns(); ++j) {
      result.x[j] = glp_mip_col_val(prob, static_cast<int>(j) + 1);
    }
    if (result.status == Status::kOptimal && !search.stopped_on_gap) result.bound = result.objective;
    if (result.status == Status::kFeasible && !search.has_bound) result.bound = internal::NoBound(problem);
  } else if (result.status == Status::kInfeasible) {
    result.bound = internal::NoBound(problem);
  }
  return result;
}

}  // namespace

MipResult GlpkSolver::Solve(const MipProblem& problem, const MipOptions& options) {
  return internal::Solve(problem, options, [&] {
    // In a child process too (isolated_solve.h): GLPK checks its time limit between the nodes of
    // its search, not inside a node's simplex, and in process one such simplex ran for over 15
    // minutes on a model of kubesched_preemption_bench (Gomory cuts off). The price is the fork:
    // 40-80 ms per decision at 10,000 pods, in page faults the scheduler takes afterwards (README,
    // cross-node preemption). Its answer normally comes well before the deadline, so the kill
    // needs little grace.
    MipResult result = SolveIsolated(
        [&] {
          TerminalCapture terminal;
          GlpProbPtr prob = Load(problem);
          return SolveLoaded(prob.get(), problem, options, terminal);
        },
        options.time_limit_seconds, 0.05 + 0.1 * options.time_limit_seconds, kName);
    if (result.status == Status::kNoSolution || result.status == Status::kError) {
      result.bound = internal::NoBound(problem);
    }
    return result;
  });
}

}  // namespace kubesched::optimizer
