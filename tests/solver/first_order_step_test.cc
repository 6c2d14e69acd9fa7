// Drumwright's first-order step on dense systems (engine/solver/drumwright/first_order_step.h),
// against the closed forms of the digest's section 12: A (a 1-dof particle is implicit Euler),
// C (the stiff limit), D (static equilibrium of a unilateral spring), E (a duplicated bilateral
// row is one row of twice the stiffness and damping, its force split equally), F (the velocity
// form equals the n x n form (61)-(62), (53)), H (one unilateral row), K (a sliding particle's
// friction is mu lam_n in any direction), G (Fig. 4's pendulum converges), I (restitution of a
// unilateral spring), J (the paper's box on an incline).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <Eigen/SVD>

#include "bench/drumwright_foundation.h"
#include "bench/drumwright_incline.h"
#include "bench/drumwright_pendulum.h"
#include "engine/solver/drumwright/first_order_step.h"

namespace alsim {
namespace {

FirstOrderProblem Particle(double m, double x0, double v0, double f, double k, double b, double h,
                           SpringRowClass type = SpringRowClass::kBilateral) {
  FirstOrderProblem p;
  p.mass = Eigen::MatrixXd::Constant(1, 1, m);
  p.velocity = Eigen::VectorXd::Constant(1, v0);
  p.force = Eigen::VectorXd::Constant(1, f);
  p.h = h;
  p.jacobian = Eigen::MatrixXd::Constant(1, 1, 1.0);
  SpringRow row;
  row.type = type;
  row.phi0 = x0;
  row.stiffness = k;
  row.damping = b;
  p.rows = {row};
  return p;
}

// A: v1 = (v0 + h (f - k x0) / m) / (1 + (h b + h^2 k) / m) for k to 1e15 and h 1e-8 to 1, by
// both forms; the amplitude ratio of Fig. 3's setting (b = 0, f = 0) is 1 / sqrt(1 + h^2 k / m).
TEST(FirstOrderStepTest, AOneDofParticleIsImplicitEuler) {
  const double m = 2, x0 = 0.01, v0 = -0.3, f = -19.6;
  for (const double k : {1e3, 1e6, 1e9, 1e12, 1e15}) {
    for (const double b : {0.0, 1.0, 1e12}) {
      for (const double h : {1e-8, 1e-5, 1e-3, 0.1, 1.0}) {
        const FirstOrderProblem p = Particle(m, x0, v0, f, k, b, h);
        const double expected = (v0 + h * (f - k * x0) / m) / (1 + (h * b + h * h * k) / m);
        for (const FirstOrderResult& r :
             {SolveFirstOrderStep(p), SolveBilateralConstraintSpace(p)}) {
          ASSERT_TRUE(r.ok);
          // Round-off: the velocity update's terms, v0 and h (lam + f) / m, cancel (both
          // forms); the spring's h k x0 / m enters both.
          const double scale =
              std::abs(v0) + h * (std::abs(f) + std::abs(r.lambda[0]) + k * std::abs(x0)) / m;
          EXPECT_NEAR(r.velocity[0], expected, 1e-14 * scale)
              << "k " << k << " b " << b << " h " << h;
          EXPECT_FALSE(r.solved_program);  // bilateral rows only: one linear solve
        }
      }
    }
  }
  // The amplitude of one period of an undamped spring stepped at Fig. 3's h.
  for (const auto& [h, ratio] : {std::pair{1e-5, 0.99995}, std::pair{1e-2, 0.0995}}) {
    const double k = 1e6;
    // Start at x0 = 1 with v0 = 0; the step maps (x, v/omega) by a matrix of norm ratio.
    const FirstOrderResult r = SolveFirstOrderStep(Particle(1, 1, 0, 0, k, 0, h));
    const double x1 = 1 + h * r.velocity[0], w = std::sqrt(k);
    const double amplitude = std::hypot(x1, r.velocity[0] / w);
    EXPECT_NEAR(amplitude, 1 / std::sqrt(1 + h * h * k), 1e-12);
    EXPECT_NEAR(amplitude, ratio, 5e-5);
  }
}

// C: k = 1e15 pulls phi to ~0 in one step: phid1 = -phi0 / h to a relative (1 + h b / m) /
// (h^2 k / m), no blow-up for h from 1e-6 to 1, and the spring's energy does not grow.
TEST(FirstOrderStepTest, CTheStiffLimitClosesTheGapInOneStep) {
  const double k = 1e15, b = 1, m = 1;
  for (const double h : {1e-6, 1e-3, 0.1, 1.0}) {
    const double phi0 = 0.01;
    const FirstOrderResult r = SolveFirstOrderStep(Particle(m, phi0, 0, 0, k, b, h));
    ASSERT_TRUE(r.ok);
    const double relative = (1 + h * b / m) / (h * h * k / m);
    EXPECT_NEAR(r.velocity[0], -phi0 / h, (1.01 * relative + 1e-14) * phi0 / h) << h;
    const double phi1 = phi0 + h * r.velocity[0];
    EXPECT_LE(k * phi1 * phi1 + m * r.velocity[0] * r.velocity[0], k * phi0 * phi0) << h;
    EXPECT_TRUE(std::isfinite(r.lambda[0]));
  }
}

// D: a particle on a unilateral spring under gravity comes to rest at x* = -m g / k with
// lam = m g, at a large and a small step.
TEST(FirstOrderStepTest, DAUnilateralSpringHoldsThePariticleAtMinusMgOverK) {
  const double m = 3, g = 9.81, k = 1e5, b = 100;
  for (const double h : {1e-3, 0.05}) {
    double x = 0, v = 0, lambda = 0;
    for (int n = 0; n < 4000; ++n) {
      const bool active = x <= 0;  // the paper's rows only at phi <= 0
      if (active) {
        const FirstOrderResult r =
            SolveFirstOrderStep(Particle(m, x, v, -m * g, k, b, h, SpringRowClass::kUnilateral));
        ASSERT_TRUE(r.ok) << n;
        v = r.velocity[0];
        lambda = r.lambda[0];
      } else {
        v += h * -g;
        lambda = 0;
      }
      x += h * v;
    }
    EXPECT_NEAR(x, -m * g / k, 1e-9) << h;
    EXPECT_NEAR(lambda, m * g, 1e-6 * m * g) << h;
  }
}

// D on the elastic foundation (Sec. 5.5; digest 9.4; bench/drumwright_foundation.h): an 8 kg
// cube of side 1 m on a Winkler foundation of depth 1 m as 100 unilateral rows at the centers of
// its bottom face's elements (K = E area / depth, B 1), 6 dofs, g 9.8, h 0.01, released touching
// with no load: it comes to rest 78.4 N / E deep (7.84e-6 m at E 1e7, 7.84e-10 m at 1e11),
// level, every element carrying 0.784 N.
TEST(FirstOrderStepTest, DTheCubeSinksIntoTheFoundationBy784NewtonsOverE) {
  for (const double modulus : {1e7, 1e11}) {
    bench::FoundationParameters s;
    s.modulus = modulus;
    s.load = 0;
    const std::vector<Eigen::Vector3d> elements = bench::FoundationElements(s);
    const double h = 0.01, weight = s.mass * s.gravity;
    bench::CubeState state = bench::RestingCube(s);
    bench::FoundationStep step;
    for (int n = 0; n < 60; ++n) {
      step = bench::StepFoundation(s, elements, n * h, h, &state);
      ASSERT_TRUE(step.ok) << n;
      ASSERT_EQ(step.rows, s.Elements()) << n;
    }
    const double depth = s.side / 2 - state.position.z();
    EXPECT_NEAR(depth, weight / modulus, 1e-6 * weight / modulus) << modulus;
    EXPECT_LT(state.orientation.vec().norm(), 1e-12);
    for (int e = 0; e < s.Elements(); ++e) {
      EXPECT_NEAR(step.forces[e], weight / s.Elements(), 1e-6 * weight / s.Elements()) << e;
    }
    std::printf("[ foundation ] E %.0e: depth %.4e m (78.4 / E = %.4e), element forces %.5f N\n",
                modulus, depth, weight / modulus, step.forces[0]);
  }
}

// H: one unilateral row gives max(0, r / (1 + w s)), r = -K phi0 - (h K + B)(phid0 + h f / m),
// w = h^2 K + h B, s = 1 / m: a row pushed apart by its velocity carries no force.
TEST(FirstOrderStepTest, HOneUnilateralRowIsTheClampedSpringLaw) {
  const double m = 0.5, k = 1e4, b = 20, h = 1e-2;
  for (const double v0 : {-2.0, -0.1, 0.0, 0.3, 5.0}) {
    const double phi0 = -1e-3, f = -4.9;
    const FirstOrderResult r =
        SolveFirstOrderStep(Particle(m, phi0, v0, f, k, b, h, SpringRowClass::kUnilateral));
    ASSERT_TRUE(r.ok);
    ASSERT_TRUE(r.solved_program);
    const double rhs = -k * phi0 - (h * k + b) * (v0 + h * f / m);
    const double w = h * h * k + h * b;
    const double expected = std::max(0.0, rhs / (1 + w / m));
    EXPECT_NEAR(r.lambda[0], expected, 1e-7 * (1 + std::abs(rhs))) << v0;
  }
}

// E: a duplicated bilateral row is one row of (2k, 2b): the same v1, the force split equally;
// M + G^T W G stays SPD with no regularization though G has rank 1.
TEST(FirstOrderStepTest, EADuplicatedRowIsOneRowOfTwiceTheStiffness) {
  FirstOrderProblem twice;
  twice.mass = Eigen::Matrix2d{{2, 0.3}, {0.3, 1}};
  twice.velocity = Eigen::Vector2d(0.4, -0.2);
  twice.force = Eigen::Vector2d(0, -9.81);
  twice.h = 1e-3;
  twice.jacobian = Eigen::MatrixXd(2, 2);
  twice.jacobian << 1, -0.5, 1, -0.5;
  SpringRow row;
  row.phi0 = 0.002;
  row.stiffness = 1e8;
  row.damping = 50;
  twice.rows = {row, row};
  FirstOrderProblem once = twice;
  once.jacobian = twice.jacobian.topRows(1);
  row.stiffness *= 2;
  row.damping *= 2;
  once.rows = {row};
  const FirstOrderResult a = SolveFirstOrderStep(twice), c = SolveFirstOrderStep(once);
  ASSERT_TRUE(a.ok && c.ok);
  EXPECT_LT((a.velocity - c.velocity).norm(), 1e-13 * c.velocity.norm());
  EXPECT_DOUBLE_EQ(a.lambda[0], a.lambda[1]);
  EXPECT_NEAR(a.lambda[0] + a.lambda[1], c.lambda[0], 1e-12 * std::abs(c.lambda[0]));
}

// F: the velocity form (M + G^T W G) v1 = M v0 + h f - h G^T K phi0 equals the n x n form
// (61)-(62), (53), on random systems, to round-off.
TEST(FirstOrderStepTest, FTheVelocityFormEqualsTheConstraintSpaceForm) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int trial = 0; trial < 50; ++trial) {
    const int nv = 6, rows = 4;
    FirstOrderProblem p;
    Eigen::MatrixXd a(nv, nv);
    for (int i = 0; i < nv * nv; ++i) a.data()[i] = unit(random);
    p.mass = a * a.transpose() + Eigen::MatrixXd::Identity(nv, nv);
    p.velocity = Eigen::VectorXd(nv);
    p.force = Eigen::VectorXd(nv);
    for (int i = 0; i < nv; ++i) {
      p.velocity[i] = unit(random);
      p.force[i] = 10 * unit(random);
    }
    p.h = std::pow(10.0, -1 - 3 * (0.5 + 0.5 * unit(random)));
    p.jacobian = Eigen::MatrixXd(rows, nv);
    for (int i = 0; i < rows * nv; ++i) p.jacobian.data()[i] = unit(random);
    for (int i = 0; i < rows; ++i) {
      SpringRow row;
      row.phi0 = 1e-3 * unit(random);
      row.stiffness = std::pow(10.0, 3 + 3 * (1 + unit(random)));
      row.damping = std::pow(10.0, 2 * (1 + unit(random)));
      p.rows.push_back(row);
    }
    const FirstOrderResult velocity_form = SolveFirstOrderStep(p);
    const FirstOrderResult constraint_form = SolveBilateralConstraintSpace(p);
    ASSERT_TRUE(velocity_form.ok && constraint_form.ok);
    // Round-off grows with the conditioning of I + S W (stiffness up to 1e9, h up to 0.1).
    Eigen::VectorXd w(rows);
    for (int i = 0; i < rows; ++i) {
      w[i] = p.h * p.h * p.rows[i].stiffness + p.h * p.rows[i].damping;
    }
    const Eigen::MatrixXd system =
        Eigen::MatrixXd::Identity(rows, rows) +
        p.jacobian * p.mass.llt().solve(p.jacobian.transpose()) * w.asDiagonal();
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(system);
    const double condition = svd.singularValues()(0) / svd.singularValues()(rows - 1);
    const double eps = 1e-16 * condition;
    const double scale = constraint_form.velocity.norm() + p.velocity.norm() + p.h * p.force.norm();
    EXPECT_LT((velocity_form.velocity - constraint_form.velocity).norm(), 100 * eps * scale)
        << trial << " condition " << condition;
    // lam = -K phi0 - (h K + B) phid1: its two terms' sizes.
    Eigen::VectorXd law(rows);
    for (int i = 0; i < rows; ++i) {
      const SpringRow& row = p.rows[i];
      law[i] = std::abs(row.stiffness * row.phi0) +
               std::abs((p.h * row.stiffness + row.damping) *
                        p.jacobian.row(i).dot(constraint_form.velocity));
    }
    EXPECT_LT((velocity_form.lambda - constraint_form.lambda).norm(), 100 * eps * (1 + law.norm()))
        << trial;
  }
}

// K and H's cone case: a particle sliding on a floor contact (normal z, tangents x and y) with the
// paper's memoryless friction rows (K_r = 0, B_r = 1e6 / h, zeta = 1 / h): the objective trades
// the tangential slack against an inflated normal force, lam_n = max(spring law,
// a mu |c| / (zeta + mu^2 (1 + a^2))), a = 1 + h B_r / m, c = -B_r (v_t + h f_t / m) (the
// issue's test H), and the friction is mu lam_n opposite the slip, in any direction.
TEST(FirstOrderStepTest, KTheConeBindsWithTheInflatedNormalForceInAnyDirection) {
  const double m = 1, h = 1e-3, mu = 0.4, speed = 2, b_r = 1e6 / h;
  const double a = 1 + h * b_r / m, c = b_r * speed, zeta = 1 / h;
  const double inflated = a * mu * c / (zeta + mu * mu * (1 + a * a));
  for (int k = 0; k < 8; ++k) {
    const double angle = 2 * 3.14159265358979323846 * k / 8;
    FirstOrderProblem p;
    p.mass = m * Eigen::Matrix3d::Identity();
    p.velocity = Eigen::Vector3d(speed * std::cos(angle), speed * std::sin(angle), 0);
    p.force = Eigen::Vector3d(0, 0, -9.81 * m);
    p.h = h;
    p.jacobian = Eigen::MatrixXd(3, 3);
    p.jacobian << 0, 0, 1, 1, 0, 0, 0, 1, 0;  // normal, tangent x, tangent y
    SpringRow normal, tangent;
    normal.type = SpringRowClass::kNormal;
    normal.phi0 = -1e-5;
    normal.stiffness = 1e6;
    normal.damping = 1;
    normal.friction = mu;
    tangent.type = SpringRowClass::kTangent;
    tangent.damping = b_r;
    p.rows = {normal, tangent, tangent};
    const FirstOrderResult r = SolveFirstOrderStep(p);
    ASSERT_TRUE(r.ok) << k;
    ASSERT_TRUE(r.solved_program);
    const double lambda_n = r.lambda[0];
    const Eigen::Vector2d lambda_t(r.lambda[1], r.lambda[2]);
    const double spring_law = -normal.stiffness * normal.phi0;  // far below the inflated force
    ASSERT_LT(spring_law, 0.1 * inflated);
    EXPECT_NEAR(lambda_n, inflated, 1e-6 * inflated) << k;
    EXPECT_NEAR(lambda_t.norm(), mu * lambda_n, 1e-6 * lambda_n) << k;
    const Eigen::Vector2d push(std::cos(angle), std::sin(angle));
    EXPECT_LT(lambda_t.normalized().dot(push), -1 + 1e-9) << k;
  }
}

// I: a particle dropped on a unilateral spring (b = 0) at speed 1: each step in contact is A's
// implicit Euler recursion, and it leaves with the restitution of N = pi / atan(w h) steps of
// amplitude 1 / sqrt(1 + (w h)^2) each, e = (1 + (w h)^2)^(-N/2): 0.984, 0.855, 0.25 at w h 0.01,
// 0.1, 1 (within 0.01), and under 0.03 at w h 10.
TEST(FirstOrderStepTest, IAUnilateralSpringBouncesWithTheImplicitEulerRestitution) {
  const double m = 1, k = 1e4, w = std::sqrt(k / m);
  for (const double wh : {0.01, 0.1, 1.0, 10.0}) {
    const double h = wh / w;
    double x = 0, v = -1;
    int contact_steps = 0;
    while (x <= 0 && contact_steps < 100000) {
      const FirstOrderResult r =
          SolveFirstOrderStep(Particle(m, x, v, 0, k, 0, h, SpringRowClass::kUnilateral));
      ASSERT_TRUE(r.ok);
      if (r.lambda[0] > 0) {  // the spring pushes: A's recursion
        const double recursion = (v - h * k * x / m) / (1 + h * h * k / m);
        EXPECT_NEAR(r.velocity[0], recursion, 1e-14 * (std::abs(v) + h * k * std::abs(x) / m))
            << "w h " << wh << " step " << contact_steps;
      }
      v = r.velocity[0];
      x += h * v;
      ++contact_steps;
    }
    const double n = 3.14159265358979323846 / std::atan(wh);
    const double expected = std::pow(1 + wh * wh, -n / 2);
    if (wh < 5) {
      EXPECT_NEAR(v, expected, 0.01) << "w h " << wh;
    } else {
      EXPECT_LT(v, 0.03) << "w h " << wh;
    }
    std::printf("[ restitution ] w h %g: %.4f after %d steps in contact (predicted %.4f)\n", wh, v,
                contact_steps, expected);
  }
}

// G: Fig. 4's pendulum in absolute coordinates, 2D (bench/drumwright_pendulum.h): a rod (m 1 kg,
// L 1 m, I = m L^2 / 12) with state (x, y, theta), its end pinned to the origin by two bilateral
// rows phi = (x, y) - (L/2) (sin theta, -cos theta), released horizontal, g 9.8, b 1. At k 1e6 the
// state at 1 s converges to the compliant model's (m q'' = G^T lam + f, lam = -k phi - b phid,
// integrated by RK4 at 1e-6 s) with order 1 +- 0.1 over h 4e-4 .. 5e-5; at k 1e15 the largest
// |phi| over the second falls with order 2 +- 0.1 over h 1e-3 .. 1e-4.
TEST(FirstOrderStepTest, GThePendulumConvergesWithOrderOneAndKeepsPhiAtOrderTwo) {
  const Eigen::Vector3d reference = bench::CompliantRodReference(1e6, 1e-6, 1.0);
  std::vector<double> hs = {4e-4, 2e-4, 1e-4, 5e-5}, errors;
  for (const double h : hs) {
    const bench::RodPendulumRun run = bench::RunRodPendulum(1e6, h, 1.0);
    ASSERT_TRUE(run.ok) << h;
    errors.push_back((run.q - reference).norm() / reference.norm());
  }
  const double order = bench::LogLogSlope(hs, errors);
  EXPECT_NEAR(order, 1, 0.1);
  std::vector<double> stiff_hs = {1e-3, 5e-4, 2e-4, 1e-4}, max_phis;
  for (const double h : stiff_hs) {
    const bench::RodPendulumRun run = bench::RunRodPendulum(1e15, h, 1.0);
    ASSERT_TRUE(run.ok) << h;
    max_phis.push_back(run.max_phi);
  }
  const double stiff_order = bench::LogLogSlope(stiff_hs, max_phis);
  EXPECT_NEAR(stiff_order, 2, 0.1);
  std::printf(
      "[ pendulum ] k 1e6: relative errors at 1 s %.2e %.2e %.2e %.2e, order %.3f; k 1e15: "
      "max |phi| %.2e %.2e %.2e %.2e, order %.3f\n",
      errors[0], errors[1], errors[2], errors[3], order, max_phis[0], max_phis[1], max_phis[2],
      max_phis[3], stiff_order);
}

// J: the paper's box on a 15 degree incline (Sec. 6.4; digest 9.5; bench/drumwright_incline.h):
// a translating 1 kg body on four Hertz feet (E* 1e11 Pa, r 0.01 m, the linearized row of
// bench/drumwright_hertz.h), h 0.01, g 9.8, from rest at its Hertz depth. Frictionless it slides
// g sin15 T (T + h) / 2 = 1.2809 m in 1 s with the normal forces summing to m g cos15 = 9.47 N at
// a depth of 3.83e-7 m; at mu 0.375 (> tan 15) it sticks and creeps at m g sin15 / (4 B_r) with
// B_r = 1e6 / h. At mu 0.125 and 0.25 with zeta h 1e12 (>> mu^2 a4^2 h, a4 = 1 + 4 h B_r / m) it
// slides Coulomb's g (sin15 - mu cos15) T (T + h) / 2 (0.68335 m, 0.08580 m) on m g cos15; at the
// paper's zeta = 1 / h the first step's cone binds with the four feet's summed normal force
// 4 a4 mu c / (zeta + mu^2 (1 + a4^2)), c = B_r h g sin15 (20.29 N at mu 0.125).
TEST(FirstOrderStepTest, JTheBoxOnTheInclineSlidesFrictionlessAndCreepsWhenStuck) {
  const bench::InclineParameters incline;
  const double g_sin = incline.gravity * std::sin(incline.angle);
  const bench::InclineRun free = bench::SlideOnIncline(incline, 0, 100);
  ASSERT_TRUE(free.ok);
  EXPECT_NEAR(free.x, bench::CoulombDistance(incline, 0, 100), 1e-9);
  EXPECT_NEAR(free.x, g_sin * 1.0 * (1.0 + 0.01) / 2, 1e-9);  // 1.2809 m
  EXPECT_NEAR(free.x, 1.2809, 5e-5);
  EXPECT_NEAR(free.normal, incline.gravity * std::cos(incline.angle), 1e-6);  // 9.47 N
  EXPECT_NEAR(free.depth, 3.83e-7, 0.005e-7);
  const bench::InclineRun stuck = bench::SlideOnIncline(incline, 0.375, 100);
  ASSERT_TRUE(stuck.ok);
  const double creep = g_sin / (4 * 1e6 / 0.01);  // 6.3e-9 m/s
  EXPECT_NEAR(stuck.speed, creep, 0.05 * creep);
  EXPECT_LT(stuck.x, 1e-6);
  bench::InclineParameters large_zeta = incline;
  large_zeta.zeta_h = 1e12;
  const double g_cos = incline.gravity * std::cos(incline.angle);
  for (const double mu : {0.125, 0.25}) {
    const bench::InclineRun slid = bench::SlideOnIncline(large_zeta, mu, 100);
    ASSERT_TRUE(slid.ok) << mu;
    EXPECT_NEAR(slid.x, (g_sin - mu * g_cos) * 1.0 * (1.0 + 0.01) / 2, 1e-6) << mu;
    EXPECT_NEAR(slid.max_normal, g_cos, 1e-6) << mu;
    EXPECT_LT(slid.max_lift, 1e-9) << mu;
  }
  const double b_r = 1e6 / 0.01, a4 = 1 + 4 * 0.01 * b_r, c = b_r * 0.01 * g_sin, mu = 0.125;
  const double inflated = 4 * a4 * mu * c / (1 / 0.01 + mu * mu * (1 + a4 * a4));
  EXPECT_NEAR(inflated, 20.29, 0.005);
  const bench::InclineRun paper = bench::SlideOnIncline(incline, mu, 1);
  ASSERT_TRUE(paper.ok);
  EXPECT_NEAR(paper.first_normal, inflated, 1e-5 * inflated);
  // The hops this inflation starts end in landings whose programs span H_kk from zeta to
  // (1 + 4 h B_r / m)^2: every step's program solves (it failed at mu 0.25 unequilibrated).
  EXPECT_TRUE(bench::SlideOnIncline(incline, 0.25, 100).ok);
  std::printf(
      "[ incline ] frictionless %.6f m, normal %.4f N, depth %.4e m; mu 0.375 creeps "
      "%.3e m/s (%.3e predicted)\n",
      free.x, free.normal, free.depth, stuck.speed, creep);
}

// H's cone case on J's incline: one foot from rest at mu 0.125 (< tan 15: the cone binds) takes
// lam_n = a mu |c| / (zeta + mu^2 (1 + a^2)) = 20.29 N where the spring law asks 9.47 N.
TEST(FirstOrderStepTest, HOnTheInclineTheBindingConeInflatesTheNormalForceTo20Newtons) {
  const double m = 1, g = 9.8, h = 0.01, mu = 0.125, angle = 15 * 3.14159265358979323846 / 180;
  const double stiffness = 1e11 * std::sqrt(0.01), b_r = 1e6 / h;
  FirstOrderProblem p;
  p.mass = m * Eigen::Matrix3d::Identity();
  p.velocity = Eigen::Vector3d::Zero();
  p.force = Eigen::Vector3d(m * g * std::sin(angle), 0, -m * g * std::cos(angle));
  p.h = h;
  p.jacobian = Eigen::MatrixXd(3, 3);
  p.jacobian << 0, 0, 1, 1, 0, 0, 0, 1, 0;
  SpringRow normal, tangent;
  normal.type = SpringRowClass::kNormal;
  normal.phi0 = -(m * g * std::cos(angle)) / stiffness;  // the spring law's 9.47 N at rest
  normal.stiffness = stiffness;
  normal.damping = 1;
  normal.friction = mu;
  tangent.type = SpringRowClass::kTangent;
  tangent.damping = b_r;
  p.rows = {normal, tangent, tangent};
  const FirstOrderResult r = SolveFirstOrderStep(p);
  ASSERT_TRUE(r.ok);
  const double a = 1 + h * b_r / m, c = b_r * h * p.force.x() / m, zeta = 1 / h;
  const double inflated = a * mu * c / (zeta + mu * mu * (1 + a * a));
  EXPECT_NEAR(inflated, 20.29, 0.005);
  EXPECT_NEAR(r.lambda[0], inflated, 1e-6 * inflated);
  EXPECT_NEAR(std::hypot(r.lambda[1], r.lambda[2]), mu * r.lambda[0], 1e-6 * r.lambda[0]);
}

// The diagonal-plus-low-rank path (unilateral rows only, >= 4 per dof; first_order_step.h): the
// step's lam and v1 equal those of the dense program of the QP (83)-(85) built here, P = zeta I,
// -(I + W S) lam + s = -q, -lam + s = 0 (S = G M^-1 G^T, q = -K phi0 - (h K + B) G v_c,
// v_c = v0 + h M^-1 f), solved by ConicQpSolver::Solve, to 1e-9 relative; for the foundation's
// rows at random points of a slightly tilted 8 kg cube's bottom face (30 or 100 over 6 dofs,
// phi0 <= 0, K 1e3 to 1e8, random loads), where some rows end up without force. Where the
// structured program fails the step falls back to the dense one: most must not.
TEST(FirstOrderStepTest, UnilateralRowsGoThroughTheLowRankPathToTheDenseProgramsAnswer) {
  std::mt19937 rng(47);
  std::uniform_real_distribution<double> unit(-1, 1);
  int with_zero_force = 0, low_rank = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const int n = trial % 2 == 0 ? 100 : 30, nv = 6;
    const double h = trial % 3 == 0 ? 1e-3 : 1e-2, stiffness = std::pow(10.0, 3 + trial % 6);
    FirstOrderProblem p;
    const double inertia = 8.0 / 6;
    p.mass = (Eigen::VectorXd(nv) << 8, 8, 8, inertia, inertia, inertia).finished().asDiagonal();
    p.velocity.resize(nv);
    p.force.resize(nv);
    for (int i = 0; i < nv; ++i) {
      p.velocity[i] = 1e3 / stiffness * unit(rng);
      p.force[i] = 50 * unit(rng);
    }
    p.force[2] -= 78.4;
    p.h = h;
    p.jacobian = Eigen::MatrixXd::Zero(n, nv);
    for (int k = 0; k < n; ++k) {
      // A point (x, y) of a cube's bottom face, tilted by a small random rotation.
      const double x = 0.5 * unit(rng), y = 0.5 * unit(rng);
      p.jacobian.row(k) << 0.01 * unit(rng), 0.01 * unit(rng), 1, y, -x, 0.01 * unit(rng);
      SpringRow row;
      row.type = SpringRowClass::kUnilateral;
      row.phi0 = -(1 + unit(rng)) * 10 / stiffness;  // up to 20 N of spring force
      row.stiffness = stiffness;
      row.damping = 1;
      p.rows.push_back(row);
    }
    const FirstOrderResult r = SolveFirstOrderStep(p);
    ASSERT_TRUE(r.ok) << trial;
    ASSERT_TRUE(r.solved_program);
    if (r.low_rank) ++low_rank;

    // The dense program.
    const Eigen::LLT<Eigen::MatrixXd> mass(p.mass);
    const Eigen::MatrixXd response = mass.solve(p.jacobian.transpose());
    const Eigen::MatrixXd delassus = p.jacobian * response;
    const Eigen::VectorXd free_velocity = p.velocity + h * mass.solve(p.force);
    Eigen::MatrixXd g = Eigen::MatrixXd::Zero(2 * n, n);
    Eigen::VectorXd hv = Eigen::VectorXd::Zero(2 * n);
    for (int k = 0; k < n; ++k) {
      const SpringRow& row = p.rows[k];
      const double w = h * h * row.stiffness + h * row.damping;
      g.row(k) = -w * delassus.row(k);
      g(k, k) -= 1;
      hv[k] = row.stiffness * row.phi0 +
              (h * row.stiffness + row.damping) * p.jacobian.row(k).dot(free_velocity);
      g(n + k, k) = -1;
    }
    ConeDimensions cones;
    cones.linear = 2 * n;
    ConicQpSolver dense;
    dense.Resize(n, cones);
    const ConicQpStatistics stats =
        dense.Solve((1 / h) * Eigen::MatrixXd::Identity(n, n), Eigen::VectorXd::Zero(n), g, hv);
    ASSERT_EQ(stats.status, ConicQpStatus::kSolved) << trial;
    const Eigen::VectorXd lambda = dense.x();
    const Eigen::VectorXd velocity = free_velocity + h * response * lambda;
    EXPECT_LE((r.lambda - lambda).norm(), 1e-9 * lambda.norm()) << trial;
    EXPECT_LE((r.velocity - velocity).norm(), 1e-9 * velocity.norm()) << trial;
    if (lambda.minCoeff() <= 1e-12 * lambda.norm()) ++with_zero_force;
  }
  EXPECT_GE(with_zero_force, 4);  // the bound lam >= 0 was active in some of them
  EXPECT_EQ(low_rank, 12);        // the structured path answered (not the dense fallback)
  std::printf("[ low rank ] %d of 12 programs by the structured path, %d with a zero force\n",
              low_rank, with_zero_force);
}
// ---------------------------------------------------------------------------------------------
// The velocity product (digest 4, option (b)): Gd v0 with Mhat = (G M^-1 G^T)^+ per class.

// Bilateral rows, redundant ones among them: v1 is the digest's velocity form with Gd v0,
// (M + G^T W G) v1 = M v0 + h f - h G^T (K phi0 + W a + S^+ a), S = G M^-1 G^T, with S^+ from
// Eigen's complete orthogonal decomposition; the force is lam = -(K phi0 + W a + S^+ a) -
// (h K + B) G v1 (53).
TEST(FirstOrderStepTest, TheVelocityProductIsTheMinimumNormMhatGdv) {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int trial = 0; trial < 20; ++trial) {
    const int nv = 5, rows = 4;
    FirstOrderProblem p;
    const Eigen::MatrixXd root = Eigen::MatrixXd::NullaryExpr(nv, nv, [&] { return unit(random); });
    p.mass = root * root.transpose() + Eigen::MatrixXd::Identity(nv, nv);
    p.velocity = Eigen::VectorXd::NullaryExpr(nv, [&] { return unit(random); });
    p.force = Eigen::VectorXd::NullaryExpr(nv, [&] { return 10 * unit(random); });
    p.h = 1e-3;
    p.jacobian = Eigen::MatrixXd::NullaryExpr(rows, nv, [&] { return unit(random); });
    // Odd trials: row 3 repeats row 1 (rank 3), with its own Gd v0 (not in S's range).
    if (trial % 2 == 1) p.jacobian.row(3) = p.jacobian.row(1);
    p.velocity_product = true;
    for (int r = 0; r < rows; ++r) {
      SpringRow row;
      row.phi0 = 1e-3 * unit(random);
      row.stiffness = std::pow(10.0, 3 + 3 * (1 + unit(random)));
      row.damping = 10 * (1 + unit(random));
      row.acceleration = 5 * unit(random);
      p.rows.push_back(row);
    }
    const FirstOrderResult result = SolveFirstOrderStep(p);
    ASSERT_TRUE(result.ok);
    EXPECT_EQ(result.velocity_product_rank, trial % 2 == 1 ? 3 : 4);

    const Eigen::MatrixXd s = p.jacobian * p.mass.llt().solve(p.jacobian.transpose());
    Eigen::VectorXd a(rows), w(rows), k(rows), phi0(rows), b(rows);
    for (int r = 0; r < rows; ++r) {
      a[r] = p.rows[r].acceleration;
      k[r] = p.rows[r].stiffness;
      b[r] = p.rows[r].damping;
      phi0[r] = p.rows[r].phi0;
      w[r] = p.h * p.h * k[r] + p.h * b[r];
    }
    const Eigen::VectorXd mhat_a = s.completeOrthogonalDecomposition().pseudoInverse() * a;
    const Eigen::VectorXd law = k.cwiseProduct(phi0) + w.cwiseProduct(a) + mhat_a;
    const Eigen::MatrixXd system = p.mass + p.jacobian.transpose() * w.asDiagonal() * p.jacobian;
    const Eigen::VectorXd v1 = system.llt().solve(p.mass * p.velocity + p.h * p.force -
                                                  p.h * p.jacobian.transpose() * law);
    EXPECT_LT((result.velocity - v1).norm(), 1e-11 * (1 + v1.norm())) << trial;
    const Eigen::VectorXd lambda = -law - (p.h * k + b).cwiseProduct(p.jacobian * v1);
    EXPECT_LT((result.lambda - lambda).norm(), 1e-9 * (1 + lambda.norm())) << trial;
    // Off, the same problem ignores the accelerations: the law is K phi0 alone.
    p.velocity_product = false;
    const FirstOrderResult off = SolveFirstOrderStep(p);
    const Eigen::VectorXd v_off = system.llt().solve(
        p.mass * p.velocity + p.h * p.force - p.h * p.jacobian.transpose() * k.cwiseProduct(phi0));
    EXPECT_LT((off.velocity - v_off).norm(), 1e-11 * (1 + v_off.norm())) << trial;
  }
}

// H with the velocity product: one unilateral row of G = 1 has Mhat = m, so its law gains
// W a + m a: lam = max(0, (-K phi0 - W a - m a - (h K + B)(v0 + h f / m)) / (1 + W / m)).
TEST(FirstOrderStepTest, HOneUnilateralRowWithItsGdvIsTheClampedSpringLaw) {
  const double m = 0.5, k = 1e4, b = 20, h = 1e-2, phi0 = -1e-3, f = -4.9;
  for (const double a : {-30.0, -1.0, 0.0, 2.0, 40.0}) {
    FirstOrderProblem p = Particle(m, phi0, 0.1, f, k, b, h, SpringRowClass::kUnilateral);
    p.rows[0].acceleration = a;
    p.velocity_product = true;
    const FirstOrderResult r = SolveFirstOrderStep(p);
    ASSERT_TRUE(r.ok);
    const double w = h * h * k + h * b;
    const double rhs = -k * phi0 - w * a - m * a - (h * k + b) * (0.1 + h * f / m);
    const double expected = std::max(0.0, rhs / (1 + w / m));
    EXPECT_NEAR(r.lambda[0], expected, 1e-7 * (1 + std::abs(rhs))) << a;
  }
}

// G with the velocity product: Fig. 4's rod on a soft pin (K 1e3 N/m, where the omitted term
// stretches the pin by ~2 cm at the bottom of the swing) converges with order one to its own
// continuous model (15), not to the model without the term, which lies far beyond the error.
TEST(FirstOrderStepTest, GWithItsGdvTheSoftRodConvergesToTheModelWithTheTerm) {
  const double k = 1e3, seconds = 1;
  const Eigen::Vector3d with = bench::CompliantRodReference(k, 1e-5, seconds, true);
  const Eigen::Vector3d without = bench::CompliantRodReference(k, 1e-5, seconds);
  std::vector<double> hs, errors;
  for (const double h : {2e-4, 1e-4, 5e-5}) {
    Eigen::Vector3d q = bench::RodPendulum::Start(), v = Eigen::Vector3d::Zero();
    const long steps = std::lround(seconds / h);
    for (long n = 0; n < steps; ++n) {
      const FirstOrderResult r = SolveFirstOrderStep(bench::RodPendulumProblem(q, v, k, h, true));
      ASSERT_TRUE(r.ok);
      v = r.velocity;
      q += h * v;
    }
    hs.push_back(h);
    errors.push_back((q - with).norm());
  }
  const double slope = bench::LogLogSlope(hs, errors);
  std::printf(
      "[ Gd v ] K 1e3: errors at 1 s %.3g %.3g %.3g, order %.3f; the term moves q by %.3g\n",
      errors[0], errors[1], errors[2], slope, (with - without).norm());
  EXPECT_NEAR(slope, 1, 0.1);
  EXPECT_GT((with - without).norm(), 20 * errors.back());
}

}  // namespace
}  // namespace alsim
