// The Newton baselines of Table II inside CANAL's AL loop (engine/solver/canal/newton_baselines.h,
// solvers canal-trdogleg and canal-dampedsn) against independent answers: the dense LU against
// Eigen's, the assembled dr/dv of eq. (19) against finite differences of r written here from the
// model's Jacobian rows and the strict operator, the converged velocities against CANAL and
// SubADMM (digest seed-004 section 11, tests 12 and 14) and the incline's analytic velocity, the
// failure count at a step cap of 1, determinism across thread counts, and allocations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <Eigen/Dense>

#include "engine/core/parallel.h"
#include "engine/linalg/tree_sparse_layout.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/canal/canal_solver.h"
#include "engine/solver/canal/newton_baselines.h"
#include "engine/solver/impulse_update.h"
#include "engine/solver/joint_space_jacobian.h"
#include "engine/solver/solver.h"
#include "tests/solver/canal_scenes.h"
#include "tests/support/allocation_counter.h"

namespace alsim {
namespace {

using namespace canal_scenes;  // NOLINT(build/namespaces): the shared scenes

constexpr SolverType kBaselines[] = {SolverType::kCanalTrDogleg, SolverType::kCanalDampedSn};

StepOptions Options(SolverType type, int max_iterations, double tolerance,
                    const CanalParameters& parameters = CanalParameters()) {
  StepOptions options;
  options.solver.type = type;
  options.solver.canal = parameters;
  options.solver.max_iterations = max_iterations;
  options.solver.tolerance = tolerance;
  return options;
}

CanalSolver& Install(const Model& m, Data& d, SolverType type) {
  EXPECT_TRUE(EnsureSolver(m, d, type));
  return static_cast<CanalSolver&>(*d.solver);
}

double Figure(const SolverStatistics& stats, const char* name) {
  for (int f = 0; f < stats.num_figures; ++f) {
    if (std::strcmp(stats.figures[f].name, name) == 0) return stats.figures[f].value;
  }
  ADD_FAILURE() << "no figure " << name;
  return -1;
}

// ---- the dense LU ------------------------------------------------------------------------------

TEST(DenseLuTest, SolvesLikeEigenAndRefusesSingularMatrices) {
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0, 1);
  for (const int n : {1, 2, 7, 12, 30}) {
    Eigen::MatrixXd a(n, n);
    Eigen::VectorXd b(n);
    for (int i = 0; i < n; ++i) {
      b[i] = normal(rng);
      for (int j = 0; j < n; ++j) a(i, j) = normal(rng);
    }
    Eigen::MatrixXd factors = a;  // column-major, as DenseLuFactor takes it
    std::vector<int> pivot(n);
    ASSERT_TRUE(DenseLuFactor(factors.data(), n, pivot.data()));
    Eigen::VectorXd x = b;
    DenseLuSolve(factors.data(), pivot.data(), n, x.data());
    const Eigen::VectorXd reference = a.fullPivLu().solve(b);
    EXPECT_LT((x - reference).norm(), 1e-10 * reference.norm()) << n;
    EXPECT_LT((a * x - b).norm(), 1e-12 * (a.norm() * x.norm() + b.norm())) << n;
  }
  // A rank-deficient matrix (two equal columns), and zero.
  Eigen::MatrixXd singular(3, 3);
  singular << 1, 2, 1, 3, 4, 3, 5, 6, 5;
  std::vector<int> pivot(3);
  EXPECT_FALSE(DenseLuFactor(singular.data(), 3, pivot.data()));
  Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(2, 2);
  EXPECT_FALSE(DenseLuFactor(zero.data(), 2, pivot.data()));
}

// ---- dr/dv of eq. (19) against finite differences ---------------------------------------------

// r(v) = A v - b - sum_i J_i^T T(lambda^l_i - beta_i (J_i v + e_i)) over the whole model (one
// island), written from the dense A, the joint-space Jacobian rows and the strict operator of
// impulse_update.h, for a scene of contacts only.
struct DenseProblem {
  Eigen::MatrixXd A, J;
  Eigen::VectorXd b, e;
  const ConstraintSet* set = nullptr;

  DenseProblem(const Model& m, const Data& d) {
    set = &d.constraints;
    const int nc = static_cast<int>(set->constraints.size());
    JointSpaceJacobian jacobian;
    jacobian.Reserve(m, nc);
    jacobian.Layout(m, d);
    J = Eigen::MatrixXd::Zero(set->num_rows, m.nv);
    for (int i = 0; i < nc; ++i) {
      jacobian.Fill(m, d, i);
      const Constraint& c = set->constraints[i];
      EXPECT_EQ(c.type, ConstraintType::kContact);
      for (int k = jacobian.entry_adr[i]; k < jacobian.entry_adr[i] + jacobian.entry_num[i]; ++k)
        for (int r = 0; r < c.dim; ++r) J(c.row_adr + r, jacobian.dof[k]) = jacobian.value[k][r];
    }
    A = TreeSparseToDense(d.mass_layout, d.qA.data());
    b = Eigen::Map<const Eigen::VectorXd>(d.solver_rhs.data(), m.nv);
    e = Eigen::Map<const Eigen::VectorXd>(set->bias.data(), set->num_rows);
  }
  // The strict operator's arguments x at v (beta: beta_i on each of constraint i's rows).
  Eigen::VectorXd Argument(const Eigen::VectorXd& v, const Eigen::VectorXd& outer,
                           const Eigen::VectorXd& beta) const {
    return outer - beta.cwiseProduct(J * v + e);
  }
  Eigen::VectorXd Residual(const Eigen::VectorXd& v, const Eigen::VectorXd& outer,
                           const Eigen::VectorXd& beta) const {
    const Eigen::VectorXd x = Argument(v, outer, beta);
    Eigen::VectorXd lambda(x.size());
    for (const Constraint& c : set->constraints) {
      lambda.segment<3>(c.row_adr) = StrictConeProjection(x.segment<3>(c.row_adr), c.friction);
    }
    return A * v - b - J.transpose() * lambda;
  }
  // Each contact's strict mode at v: 0 open, 1 stick, 2 slip.
  std::vector<int> Modes(const Eigen::VectorXd& v, const Eigen::VectorXd& outer,
                         const Eigen::VectorXd& beta) const {
    const Eigen::VectorXd x = Argument(v, outer, beta);
    std::vector<int> modes;
    for (const Constraint& c : set->constraints) {
      const Vec3 y = x.segment<3>(c.row_adr);
      modes.push_back(y[0] <= 0 ? 0 : std::hypot(y[1], y[2]) <= c.friction * y[0] ? 1 : 2);
    }
    return modes;
  }
};

TEST(NewtonBaselinesTest, AssembledJacobianIsTheFiniteDifferenceOfTheResidual) {
  // The 1 kg box sliding down the 30 degree incline (mu = 0.3 < tan 30): four slipping corners,
  // where the strict operator's Jacobian is not symmetric. beta0 = 100 kg (or 100 effective
  // masses) keeps r's rounding far below the finite-difference step's truncation.
  const auto model = Load(BoxOnIncline(30, 0.3));
  const Model& m = *model;
  for (const CanalPenalty penalty : {CanalPenalty::kUniform, CanalPenalty::kEffectiveMass}) {
    for (const SolverType type : kBaselines) {
      CanalParameters parameters;
      parameters.penalty = penalty;
      parameters.beta0 = parameters.relative_beta0 = 100;
      Data d(m);
      CanalSolver& solver = Install(m, d, type);
      solver.set_record_history(true);
      ASSERT_EQ(Step(m, d, Options(type, 100, 1e-12, parameters)), StepStatus::kOk);
      ASSERT_EQ(d.constraints.num_contacts, 4);
      const DenseProblem problem(m, d);
      const std::vector<NewtonJacobianRecord>& records = solver.jacobian_history();
      ASSERT_GE(records.size(), 2u) << SolverName(type);
      int checked_columns = 0, asymmetric = 0;
      for (const NewtonJacobianRecord& record : records) {
        ASSERT_EQ(static_cast<int>(record.dofs.size()), m.nv);
        Eigen::VectorXd v(m.nv), recorded_r(m.nv);
        Eigen::MatrixXd recorded(m.nv, m.nv);
        for (int a = 0; a < m.nv; ++a) {
          v[record.dofs[a]] = record.velocity[a];
          recorded_r[record.dofs[a]] = record.residual[a];
          for (int b = 0; b < m.nv; ++b) {
            recorded(record.dofs[a], record.dofs[b]) = record.jacobian[b * m.nv + a];
          }
        }
        const Eigen::VectorXd outer =
            Eigen::Map<const Eigen::VectorXd>(record.outer_impulse.data(), problem.e.size());
        // The strict surrogate has no De Saxce shift: e~ = e.
        for (int r = 0; r < problem.e.size(); ++r) EXPECT_EQ(record.shifted_bias[r], problem.e[r]);
        // beta_i on every row of constraint i: the record's (checked below: beta s_i, s_i 1 or the
        // corner's effective mass 3 / trace(W_ii) from the dense W).
        Eigen::VectorXd beta(problem.e.size());
        const Eigen::MatrixXd W = problem.J * problem.A.llt().solve(problem.J.transpose());
        for (size_t i = 0; i < d.constraints.constraints.size(); ++i) {
          const int row = d.constraints.constraints[i].row_adr;
          beta.segment<3>(row).setConstant(record.penalty[i]);
          const double scale =
              penalty == CanalPenalty::kUniform ? 1.0 : 3.0 / W.block<3, 3>(row, row).trace();
          EXPECT_NEAR(record.penalty[i], record.beta * scale, 1e-12 * record.penalty[i]);
        }
        const Eigen::VectorXd r = problem.Residual(v, outer, beta);
        EXPECT_LT((r - recorded_r).norm(), 1e-12 * std::max(1.0, r.norm()));
        const std::vector<int> modes = problem.Modes(v, outer, beta);
        const double h = 1e-7;
        const double scale = recorded.cwiseAbs().maxCoeff();
        for (int k = 0; k < m.nv; ++k) {
          Eigen::VectorXd plus = v, minus = v;
          plus[k] += h;
          minus[k] -= h;
          // Skip a column whose stencil crosses a kink of the strict operator.
          if (problem.Modes(plus, outer, beta) != modes ||
              problem.Modes(minus, outer, beta) != modes)
            continue;
          const Eigen::VectorXd column =
              (problem.Residual(plus, outer, beta) - problem.Residual(minus, outer, beta)) /
              (2 * h);
          EXPECT_LT((column - recorded.col(k)).cwiseAbs().maxCoeff(), 1e-6 * scale)
              << SolverName(type) << " column " << k;
          ++checked_columns;
        }
        if ((recorded - recorded.transpose()).cwiseAbs().maxCoeff() > 1e-3 * scale) ++asymmetric;
      }
      EXPECT_GE(checked_columns, 6 * static_cast<int>(records.size()) / 2) << SolverName(type);
      EXPECT_GE(asymmetric, 1) << SolverName(type);  // the slip blocks were exercised
      std::printf(
          "[ dr/dv ] %s, %s penalty: %zu assemblies, %d columns against finite differences, %d "
          "not symmetric\n",
          SolverName(type), CanalPenaltyName(penalty), records.size(), checked_columns, asymmetric);
    }
  }
}

// ---- agreement with CANAL and SubADMM ----------------------------------------------------------

std::vector<double> ConvergedVelocity(const Model& m, const Data& start, SolverType type,
                                      SolverStatistics* stats) {
  Data d(m);
  d.qpos = start.qpos;
  d.qvel = start.qvel;
  const bool al_loop = type != SolverType::kSubAdmm;
  StepOptions options = Options(type, al_loop ? 100 : 100000, al_loop ? 1e-13 : 1e-14);
  EXPECT_EQ(Step(m, d, options), StepStatus::kOk) << SolverName(type);
  *stats = d.solver_statistics;
  return d.v_hat;
}

double MaxDifference(const std::vector<double>& a, const std::vector<double>& b) {
  double difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference = std::max(difference, std::abs(a[i] - b[i]));
  return difference;
}

// The three solvers of the AL loop and SubADMM from `start`: every pair within 1e-9 m/s.
void ExpectAgreement(const Model& m, const Data& start, const char* what) {
  SolverStatistics canal_stats, subadmm_stats;
  const std::vector<double> canal = ConvergedVelocity(m, start, SolverType::kCanal, &canal_stats);
  const std::vector<double> subadmm =
      ConvergedVelocity(m, start, SolverType::kSubAdmm, &subadmm_stats);
  EXPECT_LT(MaxDifference(canal, subadmm), 1e-9) << what;
  for (const SolverType type : kBaselines) {
    SolverStatistics stats;
    const std::vector<double> v = ConvergedVelocity(m, start, type, &stats);
    EXPECT_LT(MaxDifference(v, canal), 1e-9) << what << " " << SolverName(type);
    EXPECT_LT(MaxDifference(v, subadmm), 1e-9) << what << " " << SolverName(type);
    EXPECT_EQ(Figure(stats, "inner_failures"), 0) << what << " " << SolverName(type);
    EXPECT_LT(stats.contact_residual, 1e-9) << what << " " << SolverName(type);
    std::printf(
        "[ agree ] %s %-14s |v - canal| %.1e |v - subadmm| %.1e, %d outer, %g Newton "
        "steps, residual %.1e\n",
        what, SolverName(type), MaxDifference(v, canal), MaxDifference(v, subadmm),
        stats.max_iterations, Figure(stats, "newton_steps"), stats.contact_residual);
  }
}

TEST(NewtonBaselinesTest, AgreeWithCanalAndSubAdmmOnTheThreePointStack) {
  const auto model = Load(kThreePointStack);
  const Model& m = *model;
  Data start(m);
  for (int k = 0; k < 60; ++k) ASSERT_EQ(Step(m, start), StepStatus::kOk);
  // The upper box sliding and spinning over the lower one, which sticks to the floor (slip and
  // stick together; canal_test.cc's case).
  const double upper[6] = {-0.2, 0.3, 0.0, 0.0, 0.0, -1.0};
  for (int k = 0; k < 6; ++k) {
    start.qvel[k] = 0;
    start.qvel[6 + k] = upper[k];
  }
  ExpectAgreement(m, start, "stack sliding");
}

TEST(NewtonBaselinesTest, InclineBoxStickingAndSliding) {
  for (const double mu : {0.8, 0.3}) {
    const auto model = Load(BoxOnIncline(30, mu));
    const Model& m = *model;
    Data start(m);
    ExpectAgreement(m, start, mu > 0.5 ? "incline stick" : "incline slip");
    // The analytic answer from rest: 0 (stick), h g (sin 30 - mu cos 30) down the incline
    // (slip), the normal impulse m g cos 30 h.
    const double expected =
        mu > 0.5 ? 0.0 : kStep * kGravity * (std::sin(kPi / 6) - mu * std::cos(kPi / 6));
    const Vec3 downhill(std::cos(kPi / 6), 0, -std::sin(kPi / 6));
    for (const SolverType type : kBaselines) {
      Data d(m);
      ASSERT_EQ(Step(m, d, Options(type, 100, 1e-12)), StepStatus::kOk);
      const Vec3 velocity(d.qvel[0], d.qvel[1], d.qvel[2]);
      EXPECT_NEAR(velocity.dot(downhill), expected, 1e-10) << SolverName(type) << " mu " << mu;
      EXPECT_LT((velocity - downhill * velocity.dot(downhill)).norm(), 1e-10) << SolverName(type);
      double normal_impulse = 0;
      for (const Constraint& c : d.constraints.constraints) {
        normal_impulse += d.constraints.lambda[c.row_adr];
      }
      EXPECT_NEAR(normal_impulse, kGravity * std::cos(kPi / 6) * kStep, 1e-10) << SolverName(type);
    }
  }
}

TEST(NewtonBaselinesTest, AgreeWithSubAdmmOnEveryRowType) {
  const auto model = Load(kEveryRowType);
  const Model& m = *model;
  Data start(m);
  start.qvel[1] = 0.5;   // elbow
  start.qvel[2] = -0.3;  // wrist
  ExpectAgreement(m, start, "every row type");
}

// ---- failures, statistics ----------------------------------------------------------------------

TEST(NewtonBaselinesTest, AnInnerLoopCutShortByTheStepCapIsAFailure) {
  const auto model = Load(kThreePointStack);
  const Model& m = *model;
  Data settled(m);
  for (int k = 0; k < 60; ++k) ASSERT_EQ(Step(m, settled), StepStatus::kOk);
  settled.qvel[6] = 0.2;  // the upper box slides: the first inner loops need several steps
  for (const SolverType type :
       {SolverType::kCanal, SolverType::kCanalTrDogleg, SolverType::kCanalDampedSn}) {
    for (const int cap : {1, 50}) {
      Data d(m);
      d.qpos = settled.qpos;
      d.qvel = settled.qvel;
      CanalSolver& solver = Install(m, d, type);
      solver.set_record_history(true);
      CanalParameters parameters;
      parameters.max_newton_steps = cap;
      parameters.baselines.canal_fallback = false;  // the paper's loop through its failures
      ASSERT_EQ(Step(m, d, Options(type, 10, 0, parameters)), StepStatus::kOk);
      const CanalStatistics& stats = solver.statistics();
      ASSERT_EQ(stats.islands, 1);
      int failed_iterations = 0, steps = 0;
      for (const CanalOuterRecord& record : solver.history()) {
        EXPECT_LE(record.newton_steps, cap);
        failed_iterations += record.inner_failure ? 1 : 0;
        steps += record.newton_steps;
        // An outer iteration whose inner loop met its tolerance has a small Newton residual.
        if (cap == 1 && record.inner_failure) {
          EXPECT_EQ(record.newton_steps, 1);
        }
      }
      EXPECT_EQ(stats.inner_failures, failed_iterations);
      EXPECT_EQ(stats.newton_steps, steps);
      EXPECT_EQ(Figure(d.solver_statistics, "inner_failures"), stats.inner_failures);
      EXPECT_EQ(Figure(d.solver_statistics, "newton_steps"), stats.newton_steps);
      EXPECT_EQ(Figure(d.solver_statistics, "outer_iterations"), stats.outer_iterations);
      EXPECT_EQ(stats.outer_iterations, 10);  // tolerance 0: all ten loops
      if (cap == 1) {
        EXPECT_GE(stats.inner_failures, 1) << SolverName(type);
      } else {
        EXPECT_EQ(stats.inner_failures, 0) << SolverName(type);
      }
      std::printf("[ failures ] %-14s cap %2d: %d Newton steps, %d failures, AL residual %.1e\n",
                  SolverName(type), cap, stats.newton_steps, stats.inner_failures,
                  stats.al_residual);
    }
  }
}

// scenes/spring_linkage_biped.xml as its feet land (134 steps of CANAL from its start): from this
// state both baselines' inner solves stall (the merit 1/2 ||r||^2 stationary at a kink of the
// strict operator with ||r|| > 0), and the paper's loop, run on through its failures, ends at an
// iterate whose momentum residual r = A v - b - J^T lambda is not zero, which the step would apply
// as an impulse nothing accounts for. With CanalParameters::baselines.canal_fallback (the default)
// the first failure hands the island to CANAL, whose step this is then, up to the rounding of the
// dense factorization of H against CHOLMOD's.
TEST(NewtonBaselinesTest, AnInnerFailureHandsTheIslandToCanal) {
  const ModelImport imported = ImportModelFromFile(ALSIM_SCENES_DIR "/spring_linkage_biped.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data landing(m);
  StepOptions canal_options;
  canal_options.solver.type = SolverType::kCanal;
  for (int k = 0; k < 134; ++k) ASSERT_EQ(Step(m, landing, canal_options), StepStatus::kOk);
  ASSERT_GT(landing.constraints.num_contacts, 0);
  const std::string state = SaveStateSnapshot(m, landing);
  auto step_from_landing = [&](const StepOptions& options, Data& d) {
    std::string error;
    ASSERT_TRUE(RestoreStateSnapshot(m, state, d, &error)) << error;
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
  };
  Data canal(m);
  step_from_landing(canal_options, canal);
  for (const SolverType type : kBaselines) {
    for (const bool fallback : {false, true}) {
      SCOPED_TRACE(std::string(SolverName(type)) + (fallback ? " with" : " without") +
                   " the fallback");
      StepOptions options;
      options.solver.type = type;
      options.solver.canal.baselines.canal_fallback = fallback;
      Data d(m);
      step_from_landing(options, d);
      const SolverStatistics& stats = d.solver_statistics;
      ASSERT_GE(Figure(stats, "inner_failures"), 1);
      double difference = 0;
      for (int i = 0; i < m.nv; ++i) {
        difference = std::max(difference, std::abs(d.qvel[i] - canal.qvel[i]));
      }
      if (fallback) {
        EXPECT_EQ(Figure(stats, "canal_fallbacks"), 1);
        EXPECT_LT(difference, 1e-9);
        EXPECT_LT(Figure(stats, "newton_residual"), 1e-9);
      } else {
        EXPECT_EQ(Figure(stats, "canal_fallbacks"), 0);
        EXPECT_GT(Figure(stats, "newton_residual"), 1e-3);  // N s
      }
      std::printf(
          "[ landing ] %-14s fallback %-3s: |v - v_canal| %.1e, ||r|| %.1e N s, %g failures\n",
          SolverName(type), fallback ? "on" : "off", difference, Figure(stats, "newton_residual"),
          Figure(stats, "inner_failures"));
    }
  }
}

TEST(NewtonBaselinesTest, EachReportsItsFigures) {
  const auto model = Load(kThreePointStack);
  const Model& m = *model;
  const std::vector<std::vector<std::string>> expected = {
      {"outer_iterations", "newton_steps", "inner_failures", "rejected_steps", "canal_fallbacks",
       "factorizations", "al_residual", "newton_residual"},
      {"outer_iterations", "newton_steps", "inner_failures", "line_search_iterations",
       "gradient_steps", "canal_fallbacks", "factorizations", "al_residual", "newton_residual"}};
  for (int k = 0; k < 2; ++k) {
    Data d(m);
    for (int n = 0; n < 30; ++n)
      ASSERT_EQ(Step(m, d, Options(kBaselines[k], 30, 1e-10)), StepStatus::kOk);
    std::vector<std::string> names;
    for (int f = 0; f < d.solver_statistics.num_figures; ++f) {
      names.push_back(d.solver_statistics.figures[f].name);
    }
    EXPECT_EQ(names, expected[k]);
    EXPECT_GE(Figure(d.solver_statistics, "factorizations"), 1);
  }
}

TEST(NewtonBaselinesTest, NamesParseAndMakeTheSolvers) {
  for (const SolverType type : kBaselines) {
    SolverType parsed = SolverType::kSubAdmm;
    ASSERT_TRUE(ParseSolverName(SolverName(type), &parsed));
    EXPECT_EQ(parsed, type);
    const auto model = Load(kThreePointStack);
    const auto solver = CreateSolver(type, *model);
    ASSERT_NE(dynamic_cast<CanalSolver*>(solver.get()), nullptr);
    EXPECT_EQ(solver->type(), type);
  }
  EXPECT_STREQ(SolverName(SolverType::kCanalTrDogleg), "canal-trdogleg");
  EXPECT_STREQ(SolverName(SolverType::kCanalDampedSn), "canal-dampedsn");
}

// ---- determinism, allocations ------------------------------------------------------------------

std::vector<double> QposAfterFortySteps(const Model& m, SolverType type, int threads) {
  Data d(m);
  for (int k = 0; k < m.nv; ++k) d.qvel[k] = 0.1 * std::sin(1.0 + k);
  RunWithThreads(threads, [&] {
    for (int n = 0; n < 40; ++n) EXPECT_EQ(Step(m, d, Options(type, 30, 1e-10)), StepStatus::kOk);
  });
  EXPECT_GE(d.islands.num, 3);
  return d.qpos;
}

TEST(NewtonBaselinesTest, BitIdenticalForOneAndTwoThreads) {
  const auto model = Load(SeveralIslands());
  for (const SolverType type : kBaselines) {
    const std::vector<double> one = QposAfterFortySteps(*model, type, 1);
    const std::vector<double> two = QposAfterFortySteps(*model, type, 2);
    ASSERT_EQ(one.size(), two.size());
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)), 0)
        << SolverName(type);
  }
}

// The dense LU works in grow-only storage: once warm, a step allocates nothing at all (counted on
// the calling thread with TBB held to one thread).
TEST(NewtonBaselinesTest, AWarmStepAllocatesNothing) {
  const auto model = Load(SeveralIslands());
  const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, 1);
  for (const SolverType type : kBaselines) {
    Data d(*model);
    const StepOptions options = Options(type, 30, 1e-8);
    for (int n = 0; n < 20; ++n) Step(*model, d, options);
    const testing::AllocationCounter allocations;
    for (int n = 0; n < 20; ++n) Step(*model, d, options);
    EXPECT_EQ(allocations.count(), 0) << SolverName(type);
  }
}

}  // namespace
}  // namespace alsim
