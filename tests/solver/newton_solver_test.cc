// The Newton kit (engine/solver/newton) for every contact model it solves: the cost falls at
// every Newton iteration (the exact line search's descent, digest seed-001-sap.md T6), from the
// humanoid's random-control load, for MuJoCo's pyramidal and elliptic cones and for SAP.
#include "engine/solver/newton/newton_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"
#include "tests/support/allocation_counter.h"

namespace alsim {
namespace {

// The kit's solver of `type` in d (made now), or null.
NewtonSolver* KitSolver(const Model& m, Data& d, SolverType type) {
  if (!EnsureSolver(m, d, type)) return nullptr;
  return dynamic_cast<NewtonSolver*>(d.solver.get());
}

void ExpectMonotoneDescent(const std::string& xml, SolverType type) {
  const ModelImport imported = ImportModelFromString(xml, {}, "humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data d(m);
  StepOptions options;
  options.solver.type = type;
  NewtonSolver* solver = KitSolver(m, d, type);
  ASSERT_NE(solver, nullptr);
  solver->set_record_history(true);
  int iterations = 0;
  for (int step = 0; step < 400; ++step) {
    for (int a = 0; a < m.nu; ++a) d.ctrl[a] = std::sin(0.37 * step + 1.3 * a);
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
    if (d.islands.num == 0) continue;
    const std::vector<double>& cost = solver->cost_history();
    for (size_t k = 1; k < cost.size(); ++k) {
      EXPECT_LE(cost[k], cost[k - 1] + 1e-12 * std::abs(cost[k - 1])) << "step " << step;
    }
    iterations += static_cast<int>(cost.size()) - 1;
  }
  EXPECT_GT(iterations, 400);  // the check saw real work
}

std::string Humanoid(const std::string& option) {
  std::ifstream file("/usr/share/mujoco/model/humanoid/humanoid.xml");
  std::string xml((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t at = xml.find("<option");
  if (at != std::string::npos && !option.empty()) xml.insert(at + 7, " " + option);
  return xml;
}

TEST(NewtonSolverTest, CostFallsAtEveryIterationInMujocosModel) {
  ExpectMonotoneDescent(Humanoid(""), SolverType::kMujoco);
  ExpectMonotoneDescent(Humanoid("cone='elliptic'"), SolverType::kMujoco);
}

TEST(NewtonSolverTest, CostFallsAtEveryIterationInSap) {
  ExpectMonotoneDescent(Humanoid(""), SolverType::kSap);
}

TEST(NewtonSolverTest, CostFallsAtEveryIterationInIcf) {
  ExpectMonotoneDescent(Humanoid(""), SolverType::kIcfLagged);
  ExpectMonotoneDescent(Humanoid(""), SolverType::kIcfSimilar);
}

// Every contact model of the kit steps the humanoid to the same bits at 1, 2 and 8 threads, and
// a step allocates nothing once the instance has seen its largest islands.
TEST(NewtonSolverTest, BitIdenticalForOneTwoAndEightThreadsAndAllocationFree) {
  const ModelImport imported = ImportModelFromFile("/usr/share/mujoco/model/humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  for (const SolverType type :
       {SolverType::kMujoco, SolverType::kSap, SolverType::kIcfLagged, SolverType::kIcfSimilar}) {
    SCOPED_TRACE(SolverName(type));
    StepOptions options;
    options.solver.type = type;
    std::vector<std::uint64_t> hashes;
    for (const int threads : {1, 2, 8}) {
      RunWithThreads(threads, [&] {
        Data d(m);
        for (int step = 0; step < 300; ++step) {
          for (int a = 0; a < m.nu; ++a) d.ctrl[a] = std::sin(0.05 * step + a);
          ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
        }
        hashes.push_back(StateHash(m, d));
      });
    }
    EXPECT_EQ(hashes[0], hashes[1]);
    EXPECT_EQ(hashes[0], hashes[2]);
    Data d(m);
    for (int step = 0; step < 400; ++step) ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
    testing::AllocationCounter counter;
    for (int step = 0; step < 300; ++step) ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
    EXPECT_EQ(counter.count(), 0);
  }
}

// Rank-1 updates of H's tree factor (MujocoNewtonParameters::rank_updates) give the step that
// factoring H afresh at every iteration gives, up to rounding: from the same states (restored
// from one snapshot, warm start included) along the humanoid's random-control load, the next
// velocities agree to 1e-9 relative while the updates do happen.
TEST(NewtonSolverTest, RankOneUpdatesGiveTheStepOfFreshFactorizations) {
  const ModelImport imported = ImportModelFromFile("/usr/share/mujoco/model/humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  StepOptions updates;
  updates.solver.type = SolverType::kMujoco;
  StepOptions fresh = updates;
  fresh.solver.mujoco.rank_updates = false;
  Data d(m), other(m);
  ASSERT_TRUE(EnsureSolver(m, d, SolverType::kMujoco));
  ASSERT_TRUE(EnsureSolver(m, other, SolverType::kMujoco));
  auto* solver = dynamic_cast<NewtonSolver*>(d.solver.get());
  auto* other_solver = dynamic_cast<NewtonSolver*>(other.solver.get());
  ASSERT_NE(solver, nullptr);
  int updated = 0;
  for (int step = 0; step < 600; ++step) {
    for (int a = 0; a < m.nu; ++a) d.ctrl[a] = std::sin(0.37 * step + 1.3 * a);
    std::string error;
    ASSERT_TRUE(RestoreStateSnapshot(m, SaveStateSnapshot(m, d), other, &error)) << error;
    ASSERT_EQ(Step(m, d, updates), StepStatus::kOk);
    ASSERT_EQ(Step(m, other, fresh), StepStatus::kOk);
    EXPECT_EQ(other_solver->statistics().rank_updates, 0);
    updated += solver->statistics().rank_updates;
    double norm = 0, difference = 0;
    for (int i = 0; i < m.nv; ++i) {
      norm = std::max(norm, std::abs(other.qvel[i]));
      difference = std::max(difference, std::abs(d.qvel[i] - other.qvel[i]));
    }
    ASSERT_LE(difference, 1e-9 * std::max(1.0, norm)) << "step " << step;
  }
  EXPECT_GT(updated, 100);
}

// T3 (digest seed-001-sap.md, section 11) for every contact model of the kit: at each Newton
// iterate of island 0, grad cost against central differences of the cost, H d = -g against
// differences of the gradient along d, and the line search's phi'(alpha) and phi''(alpha)
// against differences of phi and phi'. The cost is C^1 and piecewise C^2 with kinks at unknown
// places, and stiff rows (near-rigid SAP) make a difference across a kink far off; so each
// check takes the best of a ladder of steps, plain and extrapolated (a correct derivative is
// matched by some step that avoids the kinks, a wrong one by none), its error relative to the
// derivative plus a bound on the rounding of the difference (64 eps |terms| / step), and the
// second derivatives' checks one-sided (forward or backward: the side without a kink).
struct DerivativeErrors {
  double gradient = 0, hessian = 0, slope = 0, curvature = 0;
  int iterates = 0;
};

// The smallest over steps 10^-2 .. 10^-9 of error(step).
template <class Error>
double BestOverSteps(const Error& error) {
  double best = std::numeric_limits<double>::infinity();
  for (double step = 1e-2; step > 1e-9; step /= 10) best = std::min(best, error(step));
  return best;
}

// Richardson's extrapolation of a difference quotient D(step) = D + c step^order + ...:
// (2^order D(step / 2) - D(step)) / (2^order - 1).
template <class Quotient>
auto Richardson(const Quotient& quotient, double step, int order) {
  using Value = std::decay_t<decltype(quotient(step))>;  // evaluated, not an expression
  const double weight = std::pow(2.0, order);
  const Value half = quotient(step / 2), full = quotient(step);
  return Value((weight * half - full) / (weight - 1));
}

// The smaller of error(D(step)) and error(Richardson(D, step)): extrapolation removes the
// leading truncation term where the quotient is smooth, and doubles the rounding where not.
template <class Quotient, class Error>
double BestEstimate(const Quotient& quotient, double step, int order, const Error& error) {
  return std::min(error(quotient(step)), error(Richardson(quotient, step, order)));
}

DerivativeErrors ProbeDerivatives(const Model& m, SolverType type, int steps) {
  Data d(m);
  StepOptions options;
  options.solver.type = type;
  NewtonSolver* solver = KitSolver(m, d, type);
  DerivativeErrors errors;
  EXPECT_NE(solver, nullptr);
  if (solver == nullptr) return errors;
  constexpr double kRounding = 64 * std::numeric_limits<double>::epsilon();
  solver->set_probe([&](const NewtonProbe& probe) {
    const int n = probe.dofs;
    const Eigen::Map<const Eigen::VectorXd> v(probe.velocity, n), g(probe.gradient, n),
        dir(probe.direction, n);
    const double g_norm = g.lpNorm<Eigen::Infinity>();
    if (!(g_norm > 0)) return;
    ++errors.iterates;
    auto cost = [&](const Eigen::VectorXd& x) { return probe.cost(x.data(), nullptr); };
    auto gradient = [&](const Eigen::VectorXd& x) {
      Eigen::VectorXd out(n);
      probe.cost(x.data(), out.data());
      return out;
    };
    const double terms = std::abs(cost(v)) + probe.scale * v.lpNorm<Eigen::Infinity>();
    EXPECT_LE((gradient(v) - g).lpNorm<Eigen::Infinity>(), n * kRounding * probe.scale);
    // grad cost, by coordinates.
    const double scale = std::max(1.0, v.lpNorm<Eigen::Infinity>());
    for (int i = 0; i < n; ++i) {
      auto central = [&](double step) {
        Eigen::VectorXd at = v;
        at[i] += step * scale;
        const double plus = cost(at);
        at[i] -= 2 * step * scale;
        return (plus - cost(at)) / (2 * step * scale);
      };
      auto error = [&](double step) {
        return BestEstimate(central, step, 2, [&](double estimate) {
          return std::abs(estimate - g[i]) / (g_norm + kRounding * terms / (step * scale));
        });
      };
      errors.gradient = std::max(errors.gradient, BestOverSteps(error));
    }
    // H d = -g, one-sided along d.
    auto hessian_error = [&](double step) {
      auto forward = [&](double h) { return Eigen::VectorXd((gradient(v + h * dir) - g) / h); };
      auto backward = [&](double h) { return Eigen::VectorXd((g - gradient(v - h * dir)) / h); };
      const double rounding = kRounding * probe.scale / step;
      auto error = [&](const Eigen::VectorXd& estimate) {
        return (estimate + g).lpNorm<Eigen::Infinity>() / (g_norm + rounding);
      };
      return std::min(BestEstimate(forward, step, 1, error),
                      BestEstimate(backward, step, 1, error));
    };
    errors.hessian = std::max(errors.hessian, BestOverSteps(hessian_error));
    // phi'(alpha) and phi''(alpha) along d, around the Newton step alpha = 1.
    LineSearchSample sample;
    probe.line(0, &sample);
    const double d_terms = probe.scale * dir.lpNorm<1>();
    EXPECT_NEAR(sample.first, g.dot(dir), 1e-9 * std::abs(g.dot(dir)) + kRounding * d_terms);
    for (const double alpha : {0.0, 0.3, 0.8, 1.0, 1.7}) {
      probe.line(alpha, &sample);
      auto slope_error = [&](double step) {
        auto central = [&](double h) {
          return (cost(v + (alpha + h) * dir) - cost(v + (alpha - h) * dir)) / (2 * h);
        };
        return BestEstimate(central, step, 2, [&](double estimate) {
          return std::abs(estimate - sample.first) /
                 (std::abs(g.dot(dir)) + kRounding * terms / step);
        });
      };
      auto curvature_error = [&](double step) {
        auto side = [&](double h) {  // h < 0: backward
          LineSearchSample at;
          probe.line(alpha + h, &at);
          return (at.first - sample.first) / h;
        };
        auto backward = [&](double h) { return side(-h); };
        auto error = [&](double estimate) {
          return std::abs(estimate - sample.second) / (sample.second + kRounding * d_terms / step);
        };
        return std::min(BestEstimate(side, step, 1, error), BestEstimate(backward, step, 1, error));
      };
      errors.slope = std::max(errors.slope, BestOverSteps(slope_error));
      errors.curvature = std::max(errors.curvature, BestOverSteps(curvature_error));
    }
  });
  for (int step = 0; step < steps; ++step) {
    for (int a = 0; a < m.nu; ++a) d.ctrl[a] = std::sin(0.37 * step + 1.3 * a);
    EXPECT_EQ(Step(m, d, options), StepStatus::kOk);
  }
  return errors;
}

TEST(NewtonSolverTest, DerivativesMatchFiniteDifferencesT3) {
  // The humanoid under moving controls (trees: H by the tree LDL^T) and three particles stacked
  // on the ground (contacts between bodies: H dense), in stick, slip and separation.
  const ModelImport humanoid = ImportModelFromFile("/usr/share/mujoco/model/humanoid/humanoid.xml");
  ASSERT_TRUE(humanoid) << humanoid.error;
  std::string bodies;
  for (int b = 0; b < 3; ++b) {
    bodies += "<body pos='0.0" + std::to_string(3 * b) + " 0 " + std::to_string(0.1 + 0.19 * b) +
              "'><joint type='slide' axis='1 0 0'/><joint type='slide' axis='0 1 0'/><joint "
              "type='slide' axis='0 0 1'/><geom type='sphere' size='0.1' mass='" +
              std::to_string(1 + 9 * b) + "'/></body>";
  }
  const ModelImport particles = ImportModelFromString(
      "<mujoco><option timestep='0.01'/><default><geom friction='0.5'/></default><worldbody>"
      "<geom type='plane' size='5 5 0.1'/>" +
          bodies + "</worldbody></mujoco>",
      {}, "particles.xml");
  ASSERT_TRUE(particles) << particles.error;
  for (const SolverType type : {SolverType::kSap, SolverType::kMujoco}) {
    for (const bool elliptic : {false, true}) {
      if (type == SolverType::kSap && elliptic) continue;  // SAP's cone is its own
      for (const Model* m : {humanoid.model.get(), particles.model.get()}) {
        Model model = *m;
        if (elliptic) model.cone = FrictionCone::kElliptic;
        SCOPED_TRACE(std::string(SolverName(type)) + (elliptic ? " elliptic " : " ") +
                     std::to_string(model.nv) + " dofs");
        const DerivativeErrors errors = ProbeDerivatives(model, type, 150);
        EXPECT_GT(errors.iterates, 100);
        // A wrong derivative is off by its missing term, far above these bounds. The elliptic
        // middle zone's curvature grows like 1 / T near the cone's apex, where no step of the
        // ladder separates truncation from rounding better than ~1e-3.
        EXPECT_LE(errors.gradient, 1e-3);
        EXPECT_LE(errors.hessian, elliptic ? 2e-3 : 1e-4);
        EXPECT_LE(errors.slope, 1e-2);
        EXPECT_LE(errors.curvature, 1e-4);
        std::printf("%s: gradient %.2e hessian %.2e slope %.2e curvature %.2e over %d iterates\n",
                    SolverName(type), errors.gradient, errors.hessian, errors.slope,
                    errors.curvature, errors.iterates);
      }
    }
  }
}

}  // namespace
}  // namespace alsim
