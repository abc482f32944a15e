#include "optimizer/mip.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace kubesched::optimizer {
namespace {

using Status = MipResult::Status;
constexpr double kInf = MipProblem::kInf;
constexpr double kEps = 1e-6;

MipProblem::Row Row(std::vector<int32_t> index, std::vector<double> value, double lb, double ub) {
  return MipProblem::Row{.index = std::move(index), .value = std::move(value), .lb = lb, .ub = ub};
}

// Burkardt's knapsack P01: capacity 165, optimum 309 (items 0, 1, 2, 3, 5).
MipProblem Knapsack() {
  const std::vector<double> weight = {23, 31, 29, 44, 53, 38, 63, 85, 89, 82};
  const std::vector<double> profit = {92, 57, 49, 68, 60, 43, 67, 84, 87, 72};
  MipProblem p;
  p.maximize = true;
  MipProblem::Row capacity;
  for (size_t j = 0; j < weight.size(); ++j) {
    capacity.index.push_back(p.AddColumn(0, 1, profit[j], true));
    capacity.value.push_back(weight[j]);
  }
  capacity.ub = 165;
  p.AddRow(std::move(capacity));
  return p;
}

// Six items into at most six bins of size 10, minimising the bins used: sizes sum to 26, so 3 bins
// is a lower bound, and {6,4} {6,3} {5,2} attains it. Columns: used[b], then x[i][b].
MipProblem BinPacking() {
  const std::vector<double> size = {6, 6, 5, 4, 3, 2};
  const int bins = 6;
  MipProblem p;
  std::vector<int32_t> used;
  for (int b = 0; b < bins; ++b) used.push_back(p.AddColumn(0, 1, 1, true));
  std::vector<std::vector<int32_t>> x(size.size());
  for (size_t i = 0; i < size.size(); ++i) {
    for (int b = 0; b < bins; ++b) x[i].push_back(p.AddColumn(0, 1, 0, true));
  }
  for (size_t i = 0; i < size.size(); ++i) {
    p.AddRow(Row(x[i], std::vector<double>(bins, 1), 1, 1));  // each item in exactly one bin
  }
  for (int b = 0; b < bins; ++b) {
    MipProblem::Row capacity = Row({used[b]}, {-10}, -kInf, 0);
    for (size_t i = 0; i < size.size(); ++i) {
      capacity.index.push_back(x[i][b]);
      capacity.value.push_back(size[i]);
    }
    p.AddRow(std::move(capacity));
  }
  return p;
}

// A random multi-dimensional knapsack (binary, m rows at half capacity): branch and bound needs
// many nodes for n = 60, so a zero time limit stops it long before it proves anything.
MipProblem MultiKnapsack(int n, int m, uint32_t seed) {
  std::mt19937 rng(seed);
  MipProblem p;
  p.maximize = true;
  for (int j = 0; j < n; ++j) p.AddColumn(0, 1, 20 + rng() % 80, true);
  for (int i = 0; i < m; ++i) {
    MipProblem::Row row;
    double total = 0;
    for (int j = 0; j < n; ++j) {
      row.index.push_back(j);
      row.value.push_back(10 + rng() % 90);
      total += row.value.back();
    }
    row.ub = total / 2;
    p.AddRow(std::move(row));
  }
  return p;
}

// Greedy by profit: take an item when it fits every row.
std::vector<double> GreedyStart(const MipProblem& p) {
  std::vector<double> x(p.num_columns(), 0);
  std::vector<int> order(p.num_columns());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p.obj[a] > p.obj[b]; });
  for (int j : order) {
    x[j] = 1;
    if (MaxViolation(p, x) > 0) x[j] = 0;
  }
  return x;
}

class MipSolverTest : public testing::TestWithParam<std::string_view> {
 protected:
  std::unique_ptr<MipSolver> solver_ = MakeMipSolver(GetParam());

  MipResult Solve(const MipProblem& p, MipOptions options = {}) {
    MipResult r = solver_->Solve(p, options);
    if (r.status == Status::kOptimal || r.status == Status::kFeasible) {
      EXPECT_EQ(r.x.size(), p.num_columns());
      EXPECT_LE(MaxViolation(p, r.x), kEps);
      EXPECT_NEAR(r.objective, ObjectiveValue(p, r.x), kEps);
      // The bound is on the side of the objective the optimum lies.
      if (p.maximize) {
        EXPECT_GE(r.bound, r.objective - kEps);
      } else {
        EXPECT_LE(r.bound, r.objective + kEps);
      }
    }
    EXPECT_GE(r.seconds, 0);
    return r;
  }
};

TEST_P(MipSolverTest, Name) { EXPECT_EQ(solver_->Name(), GetParam()); }

TEST_P(MipSolverTest, KnapsackOptimum) {
  MipResult r = Solve(Knapsack());
  ASSERT_EQ(r.status, Status::kOptimal) << r.message;
  EXPECT_DOUBLE_EQ(r.objective, 309);
  EXPECT_EQ(r.x, (std::vector<double>{1, 1, 1, 1, 0, 1, 0, 0, 0, 0}));
  EXPECT_NEAR(r.bound, 309, 0.5);
}

TEST_P(MipSolverTest, BinPackingUsesThreeBins) {
  MipProblem p = BinPacking();
  MipResult r = Solve(p);
  ASSERT_EQ(r.status, Status::kOptimal) << r.message;
  EXPECT_DOUBLE_EQ(r.objective, 3);
  EXPECT_GT(r.bound, 2.5);
}

TEST_P(MipSolverTest, MaximizeAndMinimizeTheSameRows) {
  // 3 <= x + y <= 7.5, y - x <= 2, x, y integer in [0, 10], objective x + 2y.
  MipProblem p;
  p.AddColumn(0, 10, 1, true);
  p.AddColumn(0, 10, 2, true);
  p.AddRow(Row({0, 1}, {1, 1}, 3, 7.5));
  p.AddRow(Row({0, 1}, {-1, 1}, -kInf, 2));
  struct Case {
    std::string name;
    bool maximize;
    double objective;
    std::vector<double> x;
  };
  for (const Case& c : std::vector<Case>{{"maximize", true, 11, {3, 4}}, {"minimize", false, 3, {3, 0}}}) {
    SCOPED_TRACE(c.name);
    p.maximize = c.maximize;
    MipResult r = Solve(p);
    ASSERT_EQ(r.status, Status::kOptimal) << r.message;
    EXPECT_DOUBLE_EQ(r.objective, c.objective);
    EXPECT_EQ(r.x, c.x);
  }
}

TEST_P(MipSolverTest, EqualityRows) {
  // x0 + x1 + x2 = 5, x0 - x1 = 1: min 3 x0 + 2 x1 + x2 = 3 x1 + 7, so x = (1, 0, 4).
  MipProblem p;
  p.AddColumn(0, kInf, 3, true);
  p.AddColumn(0, kInf, 2, true);
  p.AddColumn(0, kInf, 1, true);
  p.AddRow(Row({0, 1, 2}, {1, 1, 1}, 5, 5));
  p.AddRow(Row({0, 1}, {1, -1}, 1, 1));
  MipResult r = Solve(p);
  ASSERT_EQ(r.status, Status::kOptimal) << r.message;
  EXPECT_DOUBLE_EQ(r.objective, 7);
  EXPECT_EQ(r.x, (std::vector<double>{1, 0, 4}));
}

TEST_P(MipSolverTest, Infeasible) {
  struct Case {
    std::string name;
    MipProblem problem;
  };
  std::vector<Case> cases;
  {
    MipProblem p;  // the linear relaxation already fails: x + y >= 3 and x + y <= 2.5
    p.AddColumn(0, 10, 1, true);
    p.AddColumn(0, 10, 1, true);
    p.AddRow(Row({0, 1}, {1, 1}, 3, kInf));
    p.AddRow(Row({0, 1}, {1, 1}, -kInf, 2.5));
    cases.push_back({"linear relaxation infeasible", p});
  }
  {
    MipProblem p;  // 2x + 2y = 3 has real solutions but no integer ones
    p.AddColumn(0, 10, 1, true);
    p.AddColumn(0, 10, 1, true);
    p.AddRow(Row({0, 1}, {2, 2}, 3, 3));
    cases.push_back({"integer infeasible", p});
  }
  {
    MipProblem p;  // crossed column bounds
    p.AddColumn(2, 1, 1, true);
    cases.push_back({"crossed bounds", p});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    MipResult r = Solve(c.problem);
    EXPECT_EQ(r.status, Status::kInfeasible) << r.message;
    EXPECT_TRUE(r.x.empty());
  }
}

TEST_P(MipSolverTest, ContinuousColumns) {
  // min x + y, x >= 1.5 continuous, y integer, x + y >= 2.2: y = 1, x = 1.5 (or y = 0, x = 2.2).
  MipProblem p;
  p.AddColumn(1.5, kInf, 1, false);
  p.AddColumn(0, kInf, 1.1, true);
  p.AddRow(Row({0, 1}, {1, 1}, 2.2, kInf));
  MipResult r = Solve(p);
  ASSERT_EQ(r.status, Status::kOptimal) << r.message;
  EXPECT_NEAR(r.objective, 2.2, kEps);

  MipProblem lp;  // no integer columns at all
  lp.AddColumn(0, kInf, 1, false);
  lp.AddRow(Row({0}, {2}, 3, kInf));
  r = Solve(lp);
  ASSERT_EQ(r.status, Status::kOptimal) << r.message;
  EXPECT_NEAR(r.objective, 1.5, kEps);
}

TEST_P(MipSolverTest, EmptyProblem) {
  MipProblem p;
  EXPECT_EQ(Solve(p).status, Status::kOptimal);
  p.AddRow(Row({}, {}, 1, kInf));
  EXPECT_EQ(Solve(p).status, Status::kInfeasible);
}

TEST_P(MipSolverTest, MalformedInputIsAnError) {
  struct Case {
    std::string name;
    MipProblem problem;
    MipOptions options;
  };
  std::vector<Case> cases;
  MipProblem out_of_range = Knapsack();
  out_of_range.rows[0].index[0] = 99;
  cases.push_back({"column out of range", out_of_range, {}});
  MipProblem twice = Knapsack();
  twice.rows[0].index[1] = twice.rows[0].index[0];
  cases.push_back({"column twice in a row", twice, {}});
  MipProblem ragged = Knapsack();
  ragged.rows[0].value.pop_back();
  cases.push_back({"values and indices differ", ragged, {}});
  MipProblem short_columns = Knapsack();
  short_columns.obj.pop_back();
  cases.push_back({"column arrays differ", short_columns, {}});
  MipOptions short_start;
  short_start.start = std::vector<double>{1, 0};
  cases.push_back({"start too short", Knapsack(), short_start});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    MipResult r = solver_->Solve(c.problem, c.options);
    EXPECT_EQ(r.status, Status::kError);
    EXPECT_FALSE(r.message.empty());
  }
}

TEST_P(MipSolverTest, StartIsKeptWhenTimeRunsOut) {
  MipProblem p = MultiKnapsack(60, 5, 3);
  std::vector<double> start = GreedyStart(p);
  ASSERT_EQ(MaxViolation(p, start), 0);
  const double start_objective = ObjectiveValue(p, start);
  for (double limit : {0.0, 0.0001}) {
    SCOPED_TRACE(limit);
    MipOptions options;
    options.time_limit_seconds = limit;
    options.start = start;
    MipResult r = Solve(p, options);
    ASSERT_TRUE(r.status == Status::kFeasible || r.status == Status::kOptimal) << ToString(r.status);
    EXPECT_GE(r.objective, start_objective - kEps);
  }
}

TEST_P(MipSolverTest, StartHelpsOrAtLeastDoesNotHurt) {
  MipProblem p = Knapsack();
  MipOptions options;
  options.start = std::vector<double>{1, 1, 1, 1, 0, 0, 0, 0, 0, 0};  // feasible, 266
  MipResult r = Solve(p, options);
  ASSERT_EQ(r.status, Status::kOptimal) << r.message;
  EXPECT_DOUBLE_EQ(r.objective, 309);

  options.start = std::vector<double>(10, 1);  // infeasible: ignored
  r = Solve(p, options);
  ASSERT_EQ(r.status, Status::kOptimal) << r.message;
  EXPECT_DOUBLE_EQ(r.objective, 309);
}

TEST_P(MipSolverTest, ZeroTimeLimitWithoutStart) {
  MipOptions options;
  options.time_limit_seconds = 0;
  MipResult r = Solve(MultiKnapsack(60, 5, 3), options);
  // Whatever the solver manages before it looks at the clock, it must say so consistently.
  EXPECT_NE(r.status, Status::kError) << r.message;
  EXPECT_NE(r.status, Status::kInfeasible);
  if (r.status == Status::kNoSolution) {
    EXPECT_TRUE(r.x.empty());
  }
}

TEST_P(MipSolverTest, SameSeedSameAnswer) {
  MipProblem p = MultiKnapsack(30, 4, 11);
  MipOptions options;
  options.seed = 42;
  options.time_limit_seconds = 60;
  MipResult first = Solve(p, options);
  MipResult second = Solve(p, options);
  ASSERT_EQ(first.status, Status::kOptimal) << first.message;
  EXPECT_EQ(first.status, second.status);
  EXPECT_EQ(first.x, second.x);
  EXPECT_EQ(first.objective, second.objective);
}

TEST_P(MipSolverTest, Silent) {
  MipOptions timed_out;
  timed_out.time_limit_seconds = 0;
  MipProblem infeasible;
  infeasible.AddColumn(0, 10, 1, true);
  infeasible.AddRow(Row({0}, {2}, 3, 3));
  MipProblem lp;
  lp.AddColumn(0, kInf, 1, false);
  lp.AddRow(Row({0}, {2}, 3, kInf));
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  solver_->Solve(Knapsack(), {});
  solver_->Solve(BinPacking(), {});
  solver_->Solve(infeasible, {});
  solver_->Solve(lp, {});
  solver_->Solve(MultiKnapsack(60, 5, 3), timed_out);
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
}

INSTANTIATE_TEST_SUITE_P(Solvers, MipSolverTest, testing::ValuesIn(MipSolverNames()),
                         [](const testing::TestParamInfo<std::string_view>& info) { return std::string(info.param); });

TEST(MipSolverRegistry, Names) {
  EXPECT_EQ(MipSolverNames(), (std::vector<std::string_view>{"cbc", "glpk"}));
  EXPECT_EQ(MakeMipSolver("gurobi"), nullptr);
  EXPECT_EQ(ToString(Status::kNoSolution), "no solution");
}

TEST(MaxViolation, MeasuresBoundsRowsAndIntegrality) {
  MipProblem p;
  p.AddColumn(0, 4, 0, true);
  p.AddRow(Row({0}, {1}, -kInf, 2));
  EXPECT_EQ(MaxViolation(p, std::vector<double>{2}), 0);
  EXPECT_DOUBLE_EQ(MaxViolation(p, std::vector<double>{1.5}), 0.5);    // fractional
  EXPECT_DOUBLE_EQ(MaxViolation(p, std::vector<double>{3}), 1.0 / 3);  // row: (3 - 2) / (1 + 2)
  EXPECT_DOUBLE_EQ(MaxViolation(p, std::vector<double>{5}), 1.0);      // row (3/3) beats the bound (1/5)
}

}  // namespace
}  // namespace kubesched::optimizer

namespace kubesched::optimizer {
namespace {

// A back end whose library fails, as CBC did on the application mix.
class FailingSolver final : public MipSolver {
 public:
  std::string_view Name() const override { return "broken"; }
  MipResult Solve(const MipProblem&, const MipOptions& options) override {
    time_limit = options.time_limit_seconds;
    MipResult r;
    r.status = MipResult::Status::kError;
    r.message = "CBC failed: Cbc_C_Interface::Cbc_solve(): ERROR: ClpModel::getColumnName, Illegal index";
    return r;
  }
  double time_limit = -1;
};

TEST(SolveWithFallback, AFailureHandsOverToTheNextSolver) {
  FailingSolver broken;
  auto glpk = MakeMipSolver("glpk");
  MipSolver* const solvers[] = {&broken, glpk.get()};
  MipOptions options;
  options.time_limit_seconds = 30;
  FallbackResult r = SolveWithFallback(Knapsack(), options, solvers);
  EXPECT_NEAR(broken.time_limit, 30, 0.5);
  ASSERT_EQ(r.result.status, MipResult::Status::kOptimal) << r.result.message;
  EXPECT_NEAR(r.result.objective, 309, 1e-6);
  EXPECT_EQ(r.solver, "glpk");
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0],
            "broken: CBC failed: Cbc_C_Interface::Cbc_solve(): ERROR: ClpModel::getColumnName, Illegal index");
  EXPECT_EQ(r.Describe("optimal"),
            "solver error (broken: CBC failed: Cbc_C_Interface::Cbc_solve(): ERROR: ClpModel::getColumnName, Illegal "
            "index), glpk: optimal");
}

TEST(SolveWithFallback, TheFirstAnswerThatIsNotAFailureStands) {
  const std::string_view order[] = {"cbc", "glpk"};
  MipProblem infeasible;
  infeasible.AddColumn(0, 10, 1, true);
  infeasible.AddRow(Row({0}, {2}, 3, 3));
  FallbackResult r = SolveWithFallback(infeasible, {}, order);
  EXPECT_EQ(r.result.status, MipResult::Status::kInfeasible);
  EXPECT_EQ(r.solver, "cbc");
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(r.Describe("infeasible"), "infeasible");
}

TEST(SolveWithFallback, EveryFailureIsReported) {
  MipProblem malformed = Knapsack();
  malformed.rows[0].index.push_back(99);  // out of range: every back end refuses it
  malformed.rows[0].value.push_back(1);
  FallbackResult r = SolveWithFallback(malformed, {}, FallbackOrder("glpk"));
  EXPECT_EQ(r.result.status, MipResult::Status::kError);
  EXPECT_EQ(r.solver, "cbc");
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], "glpk: row 0: column 99 out of range");
}

TEST(SolveWithFallback, UnknownNamesAreSkipped) {
  const std::string_view order[] = {"gurobi", "glpk"};
  FallbackResult r = SolveWithFallback(Knapsack(), {}, order);
  EXPECT_EQ(r.result.status, MipResult::Status::kOptimal);
  EXPECT_EQ(r.solver, "glpk");
  EXPECT_TRUE(r.failures.empty());
}

TEST(FallbackOrder, PreferredFirst) {
  EXPECT_EQ(FallbackOrder("glpk"), (std::vector<std::string_view>{"glpk", "cbc"}));
  EXPECT_EQ(FallbackOrder("cbc"), (std::vector<std::string_view>{"cbc", "glpk"}));
}

TEST(MakeFallbackSolver, NamesTheFailuresInItsMessage) {
  EXPECT_EQ(MakeFallbackSolver("gurobi"), nullptr);
  auto solver = MakeFallbackSolver("cbc");
  ASSERT_NE(solver, nullptr);
  EXPECT_EQ(solver->Name(), "cbc");
  MipResult r = solver->Solve(Knapsack(), {});
  EXPECT_EQ(r.status, MipResult::Status::kOptimal);
  EXPECT_EQ(r.message, "");
}

}  // namespace
}  // namespace kubesched::optimizer
