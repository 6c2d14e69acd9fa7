// The experiments of Irrotational Contact Fields that bench/icf_experiments.cc prints (through
// bench/icf_scenarios.h, which these tests run too) against answers that do not come from the
// runs: Painleve's singular angle for the sliding rod (Sec. XI-C), Table I's stiffening of
// Similar, first-order convergence of a consistent scheme (Figs. 4, 7, 13), the weight a resting
// clutter puts on the floor (Sec. XII-A), and the momentum balance the rebuilt Hessian's contacts
// must meet for its condition number to be the solver's.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bench/icf_scenarios.h"

namespace alsim {
namespace {

namespace ex = icf_experiments;
using ex::Variant;

const std::string kScenes = ALSIM_SCENES_DIR;

// The pitch (above the start's 30 deg) at which the rod's Painleve singularity sits: sliding
// forward with friction mu N backward at its lower end, the end's normal acceleration gains
//   B N = (1 / m + r_x (r_x + mu r_z) / I) N
// from the normal force (r = end - center: r_x = 0.245 cos b, r_z = -0.245 sin b - 0.005 for the
// capsule's end, I = m L^2 / 12); B = 0 where the force needed to keep the end on the ground
// grows without bound ([34, Sec. 5.3]: mu > 4/3 for a uniform rod). Found by bisection on b.
double SingularPitch() {
  const double inertia = ex::kRodMass * 0.5 * 0.5 / 12;
  auto b_of = [&](double b) {
    const double rx = ex::kRodEnd * std::cos(b);
    const double rz = -ex::kRodEnd * std::sin(b) - ex::kRodRadius;
    return 1 / ex::kRodMass + rx * (rx + ex::kRodMu * rz) / inertia;
  };
  double lo = ex::kRodAngle, hi = M_PI / 4;  // B > 0 at 30 deg, < 0 at 45 deg
  EXPECT_GT(b_of(lo), 0);
  EXPECT_LT(b_of(hi), 0);
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (b_of(mid) > 0 ? lo : hi) = mid;
  }
  return lo - ex::kRodAngle;
}

// At the paper's reference step (1e-7 s) the three models jam and jump alike without dissipation
// (Sec. XI-C: "the compliant model is identical"). While B > 0 the force only oscillates with the
// ground's compliance; once the pitch passes Painleve's angle it grows without bound until the end
// sticks (within the next few ms: the compliant contact takes time to load), peaking at over 100
// times the weight and 6 times anything before, and the rod leaves the ground.
TEST(IcfExperimentsTest, RodJamsAndJumpsPastPainlevesAngle) {
  const double singular = SingularPitch();
  std::vector<ex::RodSample> samples;
  double impact[3] = {0, 0, 0};
  int n = 0;
  for (const Variant v : {Variant::kLagged, Variant::kSimilar, Variant::kSap}) {
    ASSERT_TRUE(ex::RunRod(kScenes, v, false, 1e-7, 0.02, &samples));
    const ex::RodEvents e = ex::RodEventsOf(samples);
    EXPECT_TRUE(e.jammed) << ex::VariantName(v);
    EXPECT_TRUE(e.jumped) << ex::VariantName(v);
    EXPECT_GT(e.stiction_time, 0) << ex::VariantName(v);
    EXPECT_GT(e.peak_force, 100 * ex::kRodMass * ex::kGravity) << ex::VariantName(v);
    double before = 0, crossing = -1;
    for (const ex::RodSample& r : samples) {
      if (r.q[2] < singular) before = std::max(before, r.normal_force);
      if (r.q[2] >= singular && crossing < 0) crossing = r.t;
    }
    EXPECT_LT(before, e.peak_force / 6) << ex::VariantName(v);
    EXPECT_GT(e.impact_time, crossing) << ex::VariantName(v);
    EXPECT_LT(e.impact_time, crossing + 3e-3) << ex::VariantName(v);
    impact[n++] = e.impact_time;
  }
  EXPECT_NEAR(impact[1], impact[0], 0.02 * impact[0]);
  EXPECT_NEAR(impact[2], impact[0], 0.02 * impact[0]);
}

// Sec. XI-C: the lagged normal force in Coulomb's law misses the impact at large steps (the
// paper: dt > 1e-3 s); at small steps Lagged finds it, at the reference's time.
TEST(IcfExperimentsTest, LaggedMissesTheRodsImpactAtLargeStepsOnly) {
  std::vector<ex::RodSample> samples;
  ASSERT_TRUE(ex::RunRod(kScenes, Variant::kLagged, false, 1e-6, ex::kRodDuration, &samples));
  const ex::RodEvents reference = ex::RodEventsOf(samples);
  ASSERT_TRUE(reference.jumped);
  for (const double dt : {2e-3, 1.28e-3}) {
    ASSERT_TRUE(ex::RunRod(kScenes, Variant::kLagged, false, dt, ex::kRodDuration, &samples));
    const ex::RodEvents e = ex::RodEventsOf(samples);
    EXPECT_FALSE(e.jammed) << dt;
    EXPECT_FALSE(e.jumped) << dt;
    EXPECT_LT(e.peak_force, 10 * ex::kRodMass * ex::kGravity) << dt;
  }
  for (const double dt : {4e-5, 1e-5}) {
    ASSERT_TRUE(ex::RunRod(kScenes, Variant::kLagged, false, dt, ex::kRodDuration, &samples));
    const ex::RodEvents e = ex::RodEventsOf(samples);
    EXPECT_TRUE(e.jumped) << dt;
    EXPECT_NEAR(e.impact_time, reference.impact_time, 0.2 * reference.impact_time) << dt;
  }
}

// Table I: while the end slides, Similar's contact is stiffer, k (1 + mu d |v_t|), where Lagged's
// is k; the force oscillates faster by the square root (Sec. XI-C, Fig. 11: 5.6 at 10 m/s). The
// ratio of the two runs' omega^2 (ForceOmegaSquared, 1 to 12 ms, both at the reference step)
// against 1 + mu d |v_t| at the window's mean slip: within 20%, the estimator fitting a linear
// spring to Similar's contact, which leaves the ground once a cycle. Without dissipation there is
// no stiffening: the ratio stays below 1.5.
TEST(IcfExperimentsTest, SimilarsForceOscillatesAsAContactStifferByOnePlusMuDSlip) {
  std::vector<ex::RodSample> lagged, similar;
  for (const bool dissipation : {true, false}) {
    ASSERT_TRUE(ex::RunRod(kScenes, Variant::kLagged, dissipation, 1e-7, 0.012, &lagged));
    ASSERT_TRUE(ex::RunRod(kScenes, Variant::kSimilar, dissipation, 1e-7, 0.012, &similar));
    const double ratio = ex::ForceOmegaSquared(similar, 1e-3, 0.012, 10) /
                         ex::ForceOmegaSquared(lagged, 1e-3, 0.012, 10);
    if (dissipation) {
      const double expected = 1 + ex::kRodMu * 0.2 * ex::MeanSlip(similar, 1e-3, 0.012);
      EXPECT_GT(expected, 4.5);
      EXPECT_NEAR(ratio, expected, 0.2 * expected);
    } else {
      EXPECT_LT(ratio, 1.5);
    }
  }
}

// Figs. 4, 7, 13: Lagged, consistent, converges at first order against itself at dt / 10. The
// least-squares slope of log e_q against log dt over the paper's steps: 1 within 0.15 (three or
// four points, the largest step not yet asymptotic). SAP's error on the falling sphere plateaus
// (its gliding mu tau_d |v_t| does not vanish with dt): its slope stays below 0.7, and without
// dissipation the rod's SAP and Similar runs coincide (Sec. XI-C).
TEST(IcfExperimentsTest, LaggedConvergesAtFirstOrderSapPlateaus) {
  for (const ex::ConvergenceCase c :
       {ex::ConvergenceCase::kConveyor, ex::ConvergenceCase::kFallingSphere,
        ex::ConvergenceCase::kRod, ex::ConvergenceCase::kRodDissipative}) {
    const std::vector<double> steps = ex::CaseSteps(c);
    const double dt_ref = steps.front() < steps.back() ? steps.front() / 10 : steps.back() / 10;
    std::vector<std::vector<double>> reference, run;
    ASSERT_TRUE(ex::RunCase(kScenes, c, Variant::kLagged, dt_ref, &reference));
    std::vector<double> errors[3];
    int n = 0;
    for (const Variant v : {Variant::kLagged, Variant::kSimilar, Variant::kSap}) {
      for (const double dt : steps) {
        ASSERT_TRUE(ex::RunCase(kScenes, c, v, dt, &run));
        errors[n].push_back(ex::TrajectoryError(run, dt, reference, dt_ref));
      }
      ++n;
    }
    EXPECT_NEAR(ex::FittedSlope(steps, errors[0]), 1.0, 0.15) << ex::CaseName(c);
    if (c == ex::ConvergenceCase::kFallingSphere) {
      EXPECT_LT(ex::FittedSlope(steps, errors[2]), 0.7);
      EXPECT_GT(errors[2][0], 5 * errors[0][0]) << "SAP's plateau at the smallest step";
    }
    if (c == ex::ConvergenceCase::kRod) {
      for (size_t i = 0; i < steps.size(); ++i) {
        EXPECT_NEAR(errors[2][i], errors[1][i], 0.01 * errors[1][i]) << steps[i];
      }
    }
  }
}

// Objects resting on the floor: at rest the normal law's force is k (-phi) (eq. 22 at v = 0),
// and the contacts carry the weight, so sum_i k (-phi_i) = M g whatever k: the penetration falls
// exactly as 1 / k (Fig. 18), at m g / k per contact for a sphere. Two spheres and two boxes of
// the clutter (0.524 and 1 kg; a box's weight shared by its corner contacts), Lagged, 1 s.
TEST(IcfExperimentsTest, RestingObjectsPenetrateByTheirWeightOverTheStiffness) {
  const std::string xml =
      "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='2 2 .1'/>"
      "<body pos='0 0 0.051'><freejoint/><geom type='sphere' size='0.05' mass='0.5236'/></body>"
      "<body pos='0.3 0 0.051'><freejoint/><geom type='sphere' size='0.05' mass='0.5236'/></body>"
      "<body pos='0 0.3 0.051'><freejoint/><geom type='box' size='.05 .05 .05' mass='1'/></body>"
      "<body pos='.3 .3 0.051'><freejoint/><geom type='box' size='.05 .05 .05' mass='1'/></body>"
      "</worldbody></mujoco>";
  const ModelImport imported = ImportModelFromString(xml, {}, "resting.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  const double weight = (2 * 0.5236 + 2 * 1.0) * ex::kGravity;
  for (const double k : {1e5, 1e7, 1e9}) {
    const StepOptions options = ex::VariantOptions(Variant::kLagged, ex::ClutterPhysics(k));
    Data d(m);
    for (int step = 0; step < 500; ++step) ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
    double force = 0, sphere = 0;
    int contacts = 0;
    for (const Constraint& c : d.constraints.constraints) {
      if (c.type != ConstraintType::kContact) continue;
      const double phi = d.constraints.bias[c.row_adr];
      force += k * std::max(0.0, -phi);
      if (d.contact[c.contact].geom2 == 1 || d.contact[c.contact].geom1 == 1) sphere = -phi;
      ++contacts;
    }
    EXPECT_EQ(contacts, 2 + 2 * 4) << k;
    EXPECT_NEAR(force, weight, 1e-3 * weight) << k;
    EXPECT_NEAR(sphere, 0.5236 * ex::kGravity / k, 1e-3 * 0.5236 * ex::kGravity / k) << k;
  }
}

// The clutter of Sec. XII-A (scenes/icf_clutter.xml) through its first impacts: for every model
// the rebuilt contacts (AssembleHessian) meet the momentum balance A (v - v_free) = J^T gamma at
// the solver's answer to its tolerance's order, so the H whose condition number the bench reports
// is the solver's; H is SPD. The mean penetration over the last steps falls with k as 1 / k
// within a factor 2 (the loads differ as the piles differ), at the order of an object's m g / k.
TEST(IcfExperimentsTest, ClutterRebuildsTheSolversHessianAndPenetratesAsOneOverK) {
  const auto m = ex::Scene(kScenes, "icf_clutter.xml", 5e-3);
  ASSERT_TRUE(m);
  std::vector<double> v0;
  for (const Variant v :
       {Variant::kLagged, Variant::kRegularizedLagged, Variant::kSimilar, Variant::kSap}) {
    const StepOptions options = ex::VariantOptions(v, ex::ClutterPhysics(1e7));
    Data d(*m);
    int checked = 0;
    for (int step = 0; step < 60; ++step) {
      const ex::ClutterSample s = ex::ClutterStep(*m, d, options, step % 20 == 19, &v0);
      ASSERT_TRUE(s.ok);
      if (s.condition > 0) {
        EXPECT_LT(s.relative_residual, 1e-4) << ex::VariantName(v) << " step " << step;
        EXPECT_GT(s.condition, 1) << ex::VariantName(v);
        ++checked;
      }
    }
    EXPECT_EQ(checked, 3) << ex::VariantName(v) << ": steps with contacts";
  }
  double penetration[2] = {0, 0};
  const double stiffness[2] = {1e5, 1e6};
  for (int i = 0; i < 2; ++i) {
    const StepOptions options =
        ex::VariantOptions(Variant::kLagged, ex::ClutterPhysics(stiffness[i]));
    Data d(*m);
    int counted = 0;
    for (int step = 0; step < 400; ++step) {
      const ex::ClutterSample s = ex::ClutterStep(*m, d, options, false, &v0);
      ASSERT_TRUE(s.ok);
      if (step >= 300) {
        penetration[i] += s.mean_penetration;
        ++counted;
      }
    }
    penetration[i] /= counted;
    const double mg_over_k = 1.0 * ex::kGravity / stiffness[i];
    EXPECT_GT(penetration[i], 0.1 * mg_over_k) << stiffness[i];
    EXPECT_LT(penetration[i], 10 * mg_over_k) << stiffness[i];
  }
  const double ratio = penetration[0] / penetration[1];
  EXPECT_GT(ratio, 5);
  EXPECT_LT(ratio, 20);
}

}  // namespace
}  // namespace alsim
