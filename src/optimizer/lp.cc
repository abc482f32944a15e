#include "optimizer/lp.h"

#include <glpk.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <vector>

namespace kubesched::optimizer {
namespace {

// GLPK writes to the terminal unless a hook takes its output; the hook swallows it for the
// duration of a solve (the hook and glp_term_out are per thread in GLPK 5), and the caller's
// terminal setting is restored afterwards, as glpk_solver.cc does.
class Silence {
 public:
  Silence() : previous_(glp_term_out(GLP_ON)) { glp_term_hook(&Silence::Hook, nullptr); }
  ~Silence() {
    glp_term_hook(nullptr, nullptr);
    glp_term_out(previous_);
  }
  Silence(const Silence&) = delete;
  Silence& operator=(const Silence&) = delete;

 private:
  static int Hook(void*, const char*) { return 1; }  // handled: nothing reaches the terminal
  int previous_;
};

// GLPK counts whole milliseconds in an int; INT_MAX means no limit.
int Milliseconds(double seconds) {
  if (!(seconds < INT_MAX / 1000.0 - 1)) return INT_MAX;
  return static_cast<int>(std::ceil(std::max(0.0, seconds) * 1000));
}

// Frees the thread's GLPK environment when the thread (and its thread_local objects) end.
struct GlpkEnvironmentGuard {
  ~GlpkEnvironmentGuard() { glp_free_env(); }
};

glp_prob* CreateProb() {
  FreeGlpkEnvironmentAtThreadExit();
  return glp_create_prob();
}

}  // namespace

void FreeGlpkEnvironmentAtThreadExit() {
  thread_local GlpkEnvironmentGuard guard;
  (void)guard;
}

void ColumnLp::ProbDeleter::operator()(glp_prob* prob) const { glp_delete_prob(prob); }

ColumnLp::ColumnLp(std::span<const double> row_upper) : prob_(CreateProb()) {
  glp_prob* p = prob_.get();
  glp_set_obj_dir(p, GLP_MAX);
  if (row_upper.empty()) return;
  glp_add_rows(p, static_cast<int>(row_upper.size()));
  for (size_t i = 0; i < row_upper.size(); ++i) {
    glp_set_row_bnds(p, static_cast<int>(i) + 1, GLP_UP, 0, row_upper[i]);
  }
}

ColumnLp::~ColumnLp() = default;

int32_t ColumnLp::AddColumn(double objective, std::span<const int32_t> rows, std::span<const double> values,
                            double upper) {
  glp_prob* p = prob_.get();
  const int j = glp_add_cols(p, 1);
  // A new column is non-basic, so the last basis stays a basis and, at x_j = 0, primal feasible.
  if (std::isinf(upper)) {
    glp_set_col_bnds(p, j, GLP_LO, 0, 0);
  } else if (upper > 0) {
    glp_set_col_bnds(p, j, GLP_DB, 0, upper);
  } else {
    glp_set_col_bnds(p, j, GLP_FX, 0, 0);
  }
  glp_set_obj_coef(p, j, objective);
  // GLPK's arrays are 1-based: element 0 is unused.
  std::vector<int> index(rows.size() + 1, 0);
  std::vector<double> value(values.size() + 1, 0);
  for (size_t e = 0; e < rows.size(); ++e) {
    index[e + 1] = rows[e] + 1;
    value[e + 1] = values[e];
  }
  glp_set_mat_col(p, j, static_cast<int>(rows.size()), index.data(), value.data());
  return j - 1;
}

ColumnLp::SolveResult ColumnLp::Solve(double time_limit_seconds) {
  Silence silence;
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.meth = GLP_PRIMAL;   // the last basis stays primal feasible when columns are added
  parm.presolve = GLP_OFF;  // the presolver would throw the basis away
  parm.tm_lim = Milliseconds(time_limit_seconds);
  glp_prob* p = prob_.get();
  SolveResult result;
  if (glp_get_num_rows(p) == 0 || glp_get_num_cols(p) == 0) {
    // GLPK refuses an empty problem; its optimum is 0 and every dual 0.
    result.status = Status::kOptimal;
    return result;
  }
  int code = glp_simplex(p, &parm);
  if (code == GLP_EBADB || code == GLP_ESING || code == GLP_ECOND) {
    // The kept basis went bad (numerically): start again from the slack basis, which x = 0 makes
    // feasible.
    glp_std_basis(p);
    code = glp_simplex(p, &parm);
  }
  if (code == GLP_ETMLIM || code == GLP_EITLIM) {
    result.status = Status::kTimeLimit;
    return result;
  }
  if (code != 0) {
    result.message = "glp_simplex failed with code " + std::to_string(code);
    return result;
  }
  const int status = glp_get_status(p);
  if (status != GLP_OPT) {
    result.message = "glp_simplex ended with status " + std::to_string(status);
    return result;
  }
  result.status = Status::kOptimal;
  return result;
}

void ColumnLp::SetObjective(int32_t column, double objective) { glp_set_obj_coef(prob_.get(), column + 1, objective); }

double ColumnLp::Objective() const { return glp_get_obj_val(prob_.get()); }
double ColumnLp::RowDual(int32_t row) const { return glp_get_row_dual(prob_.get(), row + 1); }
double ColumnLp::ColumnValue(int32_t column) const { return glp_get_col_prim(prob_.get(), column + 1); }
int32_t ColumnLp::num_rows() const { return glp_get_num_rows(prob_.get()); }
int32_t ColumnLp::num_columns() const { return glp_get_num_cols(prob_.get()); }

}  // namespace kubesched::optimizer
