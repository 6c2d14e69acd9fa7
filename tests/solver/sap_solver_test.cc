// SAP (--solver sap: the Newton kit, engine/solver/newton, with SAP's cone and parameters,
// engine/solver/sap) against the paper's analytic answers for a particle on the ground (digest
// seed-001-sap.md, section 11): the near-rigid resting penetration -g dt (dt + tau_d) beta^2 /
// (4 pi^2), independent of the mass; the compliant one -m g / k; stiction creep at sigma w dt F;
// Coulomb's law while sliding, its onset and SAP's gliding; the paper's clutter; robot scenes.
// Determinism and allocation: newton_solver_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/sap/sap_parameters.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

constexpr double kStep = 0.002;
constexpr double kGravity = 9.81;

// A particle: a sphere on three slide joints (so W = I / m: w = 1 / m exactly), touching the
// ground at qpos = 0.
std::shared_ptr<const Model> Particle(double mass, double friction, double timestep = kStep) {
  const std::string xml =
      "<mujoco><option timestep='" + std::to_string(timestep) +
      "' gravity='0 0 -9.81'/><worldbody>"
      "<geom type='plane' size='5 5 0.1' friction='" +
      std::to_string(friction) +
      "'/><body pos='0 0 0.1'><joint type='slide' axis='1 0 0'/><joint type='slide' "
      "axis='0 1 0'/><joint type='slide' axis='0 0 1'/><geom type='sphere' size='0.1' mass='" +
      std::to_string(mass) + "' friction='" + std::to_string(friction) +
      "'/></body></worldbody></mujoco>";
  const ModelImport imported = ImportModelFromString(xml, {}, "particle.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

StepOptions SapOptions() {
  StepOptions options;
  options.solver.type = SolverType::kSap;
  options.solver.sap.relative_tolerance = 1e-12;
  return options;
}

// Steps the particle with a horizontal force on it and returns the last step's data.
void StepParticle(const Model& m, Data& d, const StepOptions& options, int steps, double force_x) {
  d.xfrc_applied[1][0] = force_x;
  for (int k = 0; k < steps; ++k) ASSERT_EQ(Step(m, d, options), StepStatus::kOk) << k;
}

TEST(SapSolverTest, NearRigidRestingPenetrationIsIndependentOfMass) {
  const StepOptions options = SapOptions();
  const double tau = options.solver.sap.beta / M_PI * kStep;  // the default tau_d
  const double expected = -kGravity * kStep * (kStep + tau) * options.solver.sap.beta *
                          options.solver.sap.beta / (4 * M_PI * M_PI);
  for (const double mass : {0.5, 2.0, 50.0}) {
    const auto model = Particle(mass, 1.0);
    Data d(*model);
    StepParticle(*model, d, options, 600, 0.0);
    EXPECT_NEAR(d.qpos[2], expected, 1e-3 * std::abs(expected)) << "mass " << mass;
  }
}

// T9 with the digest's numbers: dt = tau_d = 1e-2 gives -4.9698e-5 m for any mass.
TEST(SapSolverTest, NearRigidRestingPenetrationMatchesTheDigestsNumbers) {
  StepOptions options = SapOptions();
  options.solver.sap.dissipation_time = 0.01;
  for (const double mass : {1.0, 5.0}) {
    const auto model = Particle(mass, 1.0, 0.01);
    Data d(*model);
    StepParticle(*model, d, options, 400, 0.0);
    EXPECT_NEAR(d.qpos[2], -4.9698e-5, 1e-8) << "mass " << mass;
  }
}

// T17: eq. (21) picks the compliant branch for the spring-cylinder's contact (m = 0.5, k = 1e4,
// tau_d = dt = 0.02: R_n = 1 / (dt k (dt + tau_d)) = 0.125) and the near-rigid one for k = 1e12.
TEST(SapSolverTest, Equation21SwitchesBetweenItsRegimes) {
  SapParameters p;
  p.stiffness = 1e4;
  p.dissipation_time = 0.02;
  EXPECT_DOUBLE_EQ(SapNormalRegularization(p, 1 / 0.5, 0.02), 0.125);
  p.stiffness = 1e12;
  EXPECT_DOUBLE_EQ(SapNormalRegularization(p, 2.0, 0.02), 2.0 / (4 * M_PI * M_PI));
  p.stiffness = 0;  // near-rigid by default
  EXPECT_DOUBLE_EQ(SapNormalRegularization(p, 2.0, 0.02), 2.0 / (4 * M_PI * M_PI));
}

TEST(SapSolverTest, CompliantRestingPenetrationIsWeightOverStiffness) {
  StepOptions options = SapOptions();
  options.solver.sap.stiffness = 1e4;
  options.solver.sap.dissipation_time = 0.01;
  const auto model = Particle(1.0, 1.0);
  Data d(*model);
  StepParticle(*model, d, options, 2000, 0.0);
  EXPECT_NEAR(d.qpos[2], -kGravity / 1e4, 1e-6 * kGravity / 1e4);
}

TEST(SapSolverTest, StictionCreepsAtSigmaWDtF) {
  const StepOptions options = SapOptions();
  const double mass = 3.0, force = 0.5 * mass * kGravity;  // inside the cone (mu = 1)
  const auto model = Particle(mass, 1.0);
  Data d(*model);
  StepParticle(*model, d, options, 800, force);
  const double expected = options.solver.sap.sigma / mass * kStep * force;
  EXPECT_NEAR(d.qvel[0], expected, 1e-6 * expected);
  EXPECT_NEAR(d.qvel[1], 0.0, 1e-12);
}

TEST(SapSolverTest, SlidingFollowsCoulomb) {
  const StepOptions options = SapOptions();
  const double mass = 1.5, mu = 0.6, force = 2 * mass * kGravity;
  const auto model = Particle(mass, mu);
  Data d(*model);
  StepParticle(*model, d, options, 300, force);
  const double* lambda = d.constraints.lambda.data();
  // The friction impulse is mu times the normal one and opposes the slip.
  EXPECT_NEAR(std::hypot(lambda[1], lambda[2]), mu * lambda[0], 1e-9 * lambda[0]);
  EXPECT_GT(d.qvel[0], 0.0);
  const Mat3& frame = d.contact[0].frame;
  const Vec3 friction = frame.col(1) * lambda[1] + frame.col(2) * lambda[2];
  EXPECT_LT(friction.dot(Vec3(d.qvel[0], d.qvel[1], 0.0)), 0.0);
  // Newton's law over the step: the acceleration is (F - mu N) / m with N the normal impulse's
  // force (which SAP's sliding regularization makes a little less than m g).
  const double velocity = d.qvel[0];
  ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
  const double normal_force = d.constraints.lambda[0] / kStep;
  EXPECT_NEAR((d.qvel[0] - velocity) / kStep, (force - mu * normal_force) / mass, 1e-6);
  EXPECT_NEAR(normal_force, mass * kGravity, 0.05 * mass * kGravity);
}

// T11 and T12: pushed with F = mu m g the particle slides at a constant speed (the acceleration
// is exactly Coulomb's, F / m - mu g = 0) and, SAP's expected gliding artifact, hovers at
// phi = (dt + tau_d) mu |v_t| - R_n (1 + mutilde^2) m g dt (dt + tau_d).
TEST(SapSolverTest, SteadySlidingIsCoulombAndGlidesAsPredicted) {
  const StepOptions options = SapOptions();
  const double mass = 2.0, mu = 0.3, speed = 2.0;
  const auto model = Particle(mass, mu);
  Data d(*model);
  d.qvel[0] = speed;
  StepParticle(*model, d, options, 600, mu * mass * kGravity);
  EXPECT_NEAR(d.qvel[0], speed, 1e-6);
  const SapParameters& p = options.solver.sap;
  const double tau = SapDissipationTime(p, kStep), w = 1 / mass;
  const double rn = SapNormalRegularization(p, w, kStep), rt = p.sigma * w;
  const double mutilde2 = mu * mu * rt / rn;
  const double expected =
      (kStep + tau) * mu * speed - rn * (1 + mutilde2) * mass * kGravity * kStep * (kStep + tau);
  EXPECT_NEAR(d.qpos[2], expected, 1e-6 * std::abs(expected));
}

// T13: a push ramped up from zero leaves the particle stuck (creeping) while F < mu gamma_n / dt
// and sliding once it exceeds it, the switch within one step of the ramp.
TEST(SapSolverTest, SlidingStartsWhereThePushReachesTheCone) {
  const StepOptions options = SapOptions();
  const double mass = 1.0, mu = 0.5, increment = 1e-3 * mu * mass * kGravity;
  const auto model = Particle(mass, mu);
  Data d(*model);
  StepParticle(*model, d, options, 300, 0.0);  // at rest first
  int onset = -1;
  double push = 0, limit = 0;
  for (int k = 1; k < 3000 && onset < 0; ++k) {
    push = k * increment;
    d.xfrc_applied[1][0] = push;
    ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    const double* lambda = d.constraints.lambda.data();
    limit = mu * lambda[0] / kStep;  // the cone's bound on the friction force
    if (std::hypot(lambda[1], lambda[2]) >= mu * lambda[0] * (1 - 1e-9)) onset = k;
  }
  ASSERT_GT(onset, 0);
  EXPECT_NEAR(push, limit, 2 * increment);
  // The normal impulse then is the weight's, up to the start of SAP's gliding.
  EXPECT_NEAR(limit, mu * mass * kGravity, 1e-3 * mu * mass * kGravity);
}

// T16, the paper's clutter (Sec. X-C): 40 bodies (spheres, boxes, capsules) dropped into a bin,
// dt = 10 ms, k = 1e12, tau_d = dt, mu = 1, eps_r = 1e-5. Once the pile has settled (here from
// 4 s to 6 s) SAP takes about 3 Newton iterations per step: here the iterations of the step's
// largest island (the paper solves one problem per step), and the mean over islands below it.
TEST(SapSolverTest, ClutterSettlesInAboutThreeNewtonIterationsPerStep) {
  std::string bodies;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> jitter(-0.01, 0.01), angle(0, 90);
  for (int k = 0; k < 40; ++k) {
    const int layer = k / 20, i = (k % 20) / 5, j = k % 5;
    const char* geom = k % 3 == 0   ? "<geom type='sphere' size='0.035'/>"
                       : k % 3 == 1 ? "<geom type='box' size='0.03 0.035 0.025'/>"
                                    : "<geom type='capsule' size='0.025 0.03'/>";
    // Drawn in source order into locals (the operands of + are evaluated in no set order).
    const double x = -0.15 + 0.1 * i + jitter(rng);
    const double y = -0.2 + 0.1 * j + jitter(rng);
    const double euler_x = angle(rng);
    const double euler_y = angle(rng);
    bodies += "<body pos='" + std::to_string(x) + " " + std::to_string(y) + " " +
              std::to_string(0.1 + 0.12 * layer) + "' euler='" + std::to_string(euler_x) + " " +
              std::to_string(euler_y) + " 0'><freejoint/>" + geom + "</body>";
  }
  const std::string xml =
      "<mujoco><option timestep='0.01'/><default><geom friction='1 0.005 0.0001'/></default>"
      "<worldbody><geom type='plane' size='1 1 0.1'/>"
      "<geom type='box' pos='0.3 0 0.15' size='0.01 0.35 0.15'/>"
      "<geom type='box' pos='-0.3 0 0.15' size='0.01 0.35 0.15'/>"
      "<geom type='box' pos='0 0.35 0.15' size='0.3 0.01 0.15'/>"
      "<geom type='box' pos='0 -0.35 0.15' size='0.3 0.01 0.15'/>" +
      bodies + "</worldbody></mujoco>";
  const ModelImport imported = ImportModelFromString(xml, {}, "clutter.xml");
  ASSERT_TRUE(imported) << imported.error;
  Data d(*imported.model);
  StepOptions options;
  options.solver.type = SolverType::kSap;
  options.solver.sap.stiffness = 1e12;
  options.solver.sap.dissipation_time = 0.01;
  options.solver.sap.relative_tolerance = 1e-5;
  double largest = 0, mean = 0;
  int counted = 0;
  for (int step = 0; step < 600; ++step) {
    ASSERT_EQ(Step(*imported.model, d, options), StepStatus::kOk) << step;
    if (step < 400) continue;
    largest += d.solver_statistics.max_iterations;
    mean += d.solver_statistics.mean_iterations;
    ++counted;
  }
  printf("settled clutter: %.2f Newton iterations per step (largest island), %.2f per island\n",
         largest / counted, mean / counted);
  EXPECT_LE(largest / counted, 4.0);
  EXPECT_LE(mean / counted, 3.0);
}

// T4, duality: SAP's impulse for one contact equals the solution of the dual (eq. 5),
// min over the friction cone of 1/2 gamma^T (W + R) gamma + r^T gamma with W = J A^-1 J^T and
// r = J v* - vhat, found here independently by projected gradient with the Euclidean projection
// onto the cone; and the primal and dual costs add up to zero (no duality gap).
TEST(SapSolverTest, ImpulseSolvesTheDualWithoutADualityGap) {
  const double mass = 2.0, mu = 0.5;
  const auto model = Particle(mass, mu);
  const StepOptions options = SapOptions();
  const SapParameters& p = options.solver.sap;
  for (const Vec3& velocity : {Vec3(1.0, 0.5, -0.3), Vec3(1e-4, -2e-4, -0.2)}) {
    Data d(*model);
    d.qpos[2] = -0.001;  // 1 mm into the ground
    for (int i = 0; i < 3; ++i) d.qvel[i] = velocity[i];
    ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    ASSERT_EQ(d.contact.size(), 1u);
    const Mat3 frame = d.contact[0].frame;  // J = frame^T on the slides, W = I / m
    const Vec3 free(d.v_free[0], d.v_free[1], d.v_free[2]);
    const double tau = SapDissipationTime(p, kStep), w = 1 / mass;
    const Vec3 r_diag(SapNormalRegularization(p, w, kStep), p.sigma * w, p.sigma * w);
    Vec3 r = frame.transpose() * free;
    r[0] += d.contact[0].dist / (kStep + tau);  // -vhat_n = phi0 / (dt + tau_d)
    const Mat3 dual = Mat3::Identity() * w + Mat3(r_diag.asDiagonal());
    // Projected gradient on the dual, step 1 / L with L the largest eigenvalue of W + R.
    Vec3 gamma = Vec3::Zero();
    const double step = 1 / dual.diagonal().maxCoeff();
    for (int k = 0; k < 200000; ++k) {
      Vec3 y = gamma - step * (dual * gamma + r);
      const double yt = std::hypot(y[1], y[2]);
      if (yt <= mu * y[0]) {
        gamma = y;
      } else if (mu * yt <= -y[0]) {
        gamma.setZero();
      } else {  // onto the cone's wall
        const double n = (y[0] + mu * yt) / (1 + mu * mu);
        gamma = Vec3(n, mu * n * y[1] / yt, mu * n * y[2] / yt);
      }
    }
    const Vec3 sap(d.constraints.lambda[0], d.constraints.lambda[1], d.constraints.lambda[2]);
    EXPECT_NEAR((sap - gamma).norm(), 0.0, 1e-8 * gamma.norm()) << sap.transpose();
    const Vec3 v(d.v_hat[0], d.v_hat[1], d.v_hat[2]);
    const double primal =
        0.5 * mass * (v - free).squaredNorm() + 0.5 * sap.dot(Vec3(r_diag.asDiagonal() * sap));
    const double dual_cost = 0.5 * gamma.dot(dual * gamma) + r.dot(gamma);
    EXPECT_NEAR(primal + dual_cost, 0.0, 1e-9 * std::abs(primal));
  }
}

// T7, the certificate of accuracy: after every solve the dimensionless momentum error of eq. (24),
// e_m = ||D grad l_p|| / max(||D p||, ||D j_c||) with D = diag(A)^-1/2, grad l_p =
// A (v - v*) - J^T gamma, p = A v and j_c = J^T gamma, is at most eps_r (the absolute part is
// 1e-14), for every eps_r from 1e-1 to 1e-6. J is rebuilt here from the contacts' frames: a
// column of three particles (slide joints, so each contact's rows are frame^T on the relative
// velocity) with masses 1, 10 and 100 falling onto the ground and onto each other.
TEST(SapSolverTest, MomentumErrorIsBelowTheRelativeTolerance) {
  std::string bodies;
  const double masses[3] = {1, 10, 100};
  for (int b = 0; b < 3; ++b) {
    bodies += "<body pos='0.0" + std::to_string(3 * b) + " 0 " + std::to_string(0.1 + 0.19 * b) +
              "'><joint type='slide' axis='1 0 0'/><joint type='slide' axis='0 1 0'/><joint "
              "type='slide' axis='0 0 1'/><geom type='sphere' size='0.1' mass='" +
              std::to_string(masses[b]) + "'/></body>";
  }
  const ModelImport imported = ImportModelFromString(
      "<mujoco><option timestep='0.01'/><default><geom friction='0.5'/></default><worldbody>"
      "<geom type='plane' size='5 5 0.1'/>" +
          bodies + "</worldbody></mujoco>",
      {}, "particles.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  for (const double tolerance : {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6}) {
    StepOptions options;
    options.solver.type = SolverType::kSap;
    options.solver.sap.relative_tolerance = tolerance;
    Data d(m);
    for (int i = 0; i < m.nv; ++i) d.qvel[i] = 0.3 * std::sin(1.7 * i + 0.4);
    double worst = 0;
    int solves = 0;
    for (int step = 0; step < 60; ++step) {
      ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
      if (d.contact.empty()) continue;
      ++solves;
      Eigen::VectorXd jc = Eigen::VectorXd::Zero(m.nv);
      for (const Constraint& c : d.constraints.constraints) {
        const Contact& contact = d.contact[c.contact];
        const Vec3 gamma(d.constraints.lambda[c.row_adr], d.constraints.lambda[c.row_adr + 1],
                         d.constraints.lambda[c.row_adr + 2]);
        const Vec3 force = contact.frame * gamma;  // on geom2's body, minus on geom1's
        const int b1 = m.geom_body[contact.geom1], b2 = m.geom_body[contact.geom2];
        for (int k = 0; k < 3; ++k) {
          if (b2 > 0) jc[3 * (b2 - 1) + k] += force[k];
          if (b1 > 0) jc[3 * (b1 - 1) + k] -= force[k];
        }
      }
      double gradient2 = 0, momentum2 = 0, impulse2 = 0;
      for (int i = 0; i < m.nv; ++i) {
        const double a = d.qA[d.mass_layout.row_adr[i]];  // A is diagonal here
        const double g = a * (d.v_hat[i] - d.v_free[i]) - jc[i];
        gradient2 += g * g / a;
        momentum2 += a * d.v_hat[i] * d.v_hat[i];
        impulse2 += jc[i] * jc[i] / a;
      }
      const double error = std::sqrt(gradient2 / std::max(momentum2, impulse2));
      worst = std::max(worst, error);
    }
    EXPECT_GT(solves, 30);
    EXPECT_LE(worst, tolerance) << "eps_r " << tolerance;
  }
}

// The project's robot scenes step without diverging, near-rigid contact staying near the surface.
TEST(SapSolverTest, StepsTheRobotScenes) {
  for (const char* scene : {"closed_loop_biped.xml", "quadruped_drop_8.xml", "box_stack.xml",
                            "tendon_gripper.xml", "frictionloss_arm.xml", "mesh_humanoid.xml"}) {
    SCOPED_TRACE(scene);
    const ModelImport imported = ImportModelFromFile(std::string(ALSIM_SCENES_DIR "/") + scene);
    ASSERT_TRUE(imported) << imported.error;
    Data d(*imported.model);
    StepOptions options;
    options.solver.type = SolverType::kSap;
    double deepest = 0;
    for (int step = 0; step < 400; ++step) {
      ASSERT_EQ(Step(*imported.model, d, options), StepStatus::kOk) << step;
      for (const Contact& contact : d.contact) deepest = std::max(deepest, -contact.dist);
    }
    EXPECT_LT(deepest, 0.01);
  }
}

}  // namespace
}  // namespace alsim
