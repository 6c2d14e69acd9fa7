// condim 4 and 6: torsional and rolling friction rows (issue 32), against analytic answers and
// MuJoCo 2.2.2 (elliptic cone) as the oracle.
//
// MuJoCo's contacts are soft (solref/solimp), alsim's hard: in the scenes below the friction
// torques are saturated (slip in the torsional or rolling row) for the compared stretch, so the
// force law is mu_j times the normal force in both engines, and the normal force averages m g once
// the contact settles. The tolerances allow for MuJoCo's settling transient (its contact sinks a
// little during the first tens of milliseconds) and its soft friction creeping near zero speed,
// which is why comparisons stop before the motion does.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/collision/collision.h"
#include "engine/data/data.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/impulse_update.h"
#include "engine/solver/solver.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using testing::OracleScene;
using testing::WriteTempScene;

constexpr double kG = 9.81;

// The solvers with torsional and rolling rows (SolverSupportsHighCondim); the rest refuse.
constexpr SolverType kCondimSolvers[] = {SolverType::kSubAdmm, SolverType::kAuto, SolverType::kPgs,
                                         SolverType::kAdmmNoSub, SolverType::kAdmmNoBody};

StepOptions OptionsOf(SolverType type) {
  StepOptions options;
  options.solver.type = type;
  return options;
}

// A sphere (radius R, mass m) resting on a plane, its contact of condim `condim` (set on the
// sphere; the floor is condim 3), with friction (mu, mu_t, mu_r) on both geoms.
std::string SphereScene(int condim, double mu, double mu_t, double mu_r, double radius = 0.1,
                        double timestep = 0.001) {
  const std::string friction =
      std::to_string(mu) + " " + std::to_string(mu_t) + " " + std::to_string(mu_r);
  return "<mujoco><option timestep=\"" + std::to_string(timestep) +
         "\" cone=\"elliptic\"/><worldbody>"
         "<geom name=\"floor\" type=\"plane\" size=\"5 5 0.1\" friction=\"" +
         friction +
         "\"/>"
         "<body name=\"ball\" pos=\"0 0 " +
         std::to_string(radius) +
         "\"><freejoint/>"
         "<geom name=\"ball\" type=\"sphere\" size=\"" +
         std::to_string(radius) + "\" mass=\"1\" condim=\"" + std::to_string(condim) +
         "\" friction=\"" + friction + "\"/></body></worldbody></mujoco>";
}

// Steps both engines `steps` times and calls probe(step, alsim qvel, mujoco qvel) after each.
template <class Probe>
void StepBoth(OracleScene& scene, int steps, const StepOptions& options, const Probe& probe) {
  const Model& m = scene.model();
  Data& d = scene.data();
  mjModel* mjm = scene.mutable_mj_model();
  mjData* mjd = scene.mj_data();
  mjm->opt.integrator = mjINT_EULER;
  for (int n = 1; n <= steps; ++n) {
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk) << "step " << n;
    mj_step(mjm, mjd);
    probe(n, d.qvel.data(), mjd->qvel);
  }
}

// The contacts' dim and friction follow MuJoCo's mixing: an explicit pair's own, the
// higher-priority geom's, else the max of condim and of each coefficient; condim 1 (here the
// priority geom's) is frictionless: 3 rows with friction 0, where MuJoCo has one row.
TEST(CondimTest, ContactDimAndFrictionMatchMujocosMixing) {
  const std::string xml = R"(<mujoco><option cone="elliptic"/><worldbody>
    <geom name="floor" type="plane" size="5 5 0.1" condim="3" friction="1 0.01 0.002"/>
    <body name="a" pos="0 0 0.099"><freejoint/>
      <geom name="a" type="sphere" size="0.1" priority="1" condim="4" friction="0.5 0.003 0.001"/>
    </body>
    <body name="b" pos="1 0 0.099"><freejoint/>
      <geom name="b" type="sphere" size="0.1" condim="6" friction="0.7 0.002 0.004"/>
    </body>
    <body name="c" pos="2 0 0.099"><freejoint/>
      <geom name="c" type="sphere" size="0.1" contype="0" conaffinity="0"/>
    </body>
    <body name="d" pos="3 0 0.099"><freejoint/>
      <geom name="d" type="sphere" size="0.1" priority="1" condim="1" friction="0.6 0.02 0.02"/>
    </body></worldbody>
    <contact><pair geom1="floor" geom2="c" condim="4" friction="0.9 0.9 0.02 0.001 0.001"/>
    </contact></mujoco>)";
  OracleScene scene(WriteTempScene("mixing.xml", xml));
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  ASSERT_EQ(Step(m, d), StepStatus::kOk);
  mj_forward(scene.mj_model(), scene.mj_data());
  const mjData* mjd = scene.mj_data();
  ASSERT_EQ(static_cast<int>(d.contact.size()), mjd->ncon);
  ASSERT_EQ(mjd->ncon, 4);
  int checked = 0;
  for (const Contact& c : d.contact) {
    for (int k = 0; k < mjd->ncon; ++k) {
      const mjContact& mc = mjd->contact[k];
      if (mc.geom1 != c.geom1 || mc.geom2 != c.geom2) continue;
      SCOPED_TRACE(m.geom_name[c.geom2]);
      EXPECT_EQ(c.dim, mc.dim == 1 ? 3 : mc.dim);
      EXPECT_DOUBLE_EQ(c.friction, mc.dim == 1 ? 0.0 : mc.friction[0]);
      EXPECT_DOUBLE_EQ(c.friction_torsion, mc.dim >= 4 ? mc.friction[2] : 0.0);
      EXPECT_DOUBLE_EQ(c.friction_rolling, mc.dim >= 6 ? mc.friction[3] : 0.0);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
  // The cases differ: the priority geom's condim 4, the max 6, the pair's 4, and condim 1.
  EXPECT_EQ(d.contact[0].dim, 4);
  EXPECT_EQ(d.contact[1].dim, 6);
  EXPECT_DOUBLE_EQ(d.contact[1].friction_rolling, 0.004);
  EXPECT_EQ(d.contact[2].dim, 4);
  EXPECT_EQ(d.contact[3].dim, 3);
  EXPECT_EQ(mjd->contact[3].dim, 1);
  EXPECT_EQ(d.contact[3].friction, 0.0);
  EXPECT_EQ(d.constraints.num_rows, 4 + 6 + 4 + 3);
}

// The friction part of the cone projection is the Euclidean projection onto the ellipsoid: the
// result lies on its boundary, x - y is along the outward normal (y_j / mu_j^2) with a positive
// multiplier (the KKT conditions of the convex problem), and no sampled point of the boundary is
// closer to x; points inside are kept.
TEST(CondimTest, EllipsoidProjectionIsTheClosestPoint) {
  const double mu[5] = {0.8, 0.8, 0.02, 0.004, 0.004};
  const double ones[5] = {1, 1, 1, 1, 1};
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0.1, 2.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = trial % 2 == 0 ? 5 : 3;
    const double r = uniform(rng);
    double x[5], y[5];
    for (int j = 0; j < n; ++j) x[j] = normal(rng) * mu[j] * r * (trial % 3 == 0 ? 0.4 : 3.0);
    ProjectOntoFrictionEllipsoid(x, mu, ones, n, r, y);
    double level = 0, inside = 0;
    for (int j = 0; j < n; ++j) {
      level += (y[j] / mu[j]) * (y[j] / mu[j]);
      inside += (x[j] / mu[j]) * (x[j] / mu[j]);
    }
    if (inside <= r * r) {
      for (int j = 0; j < n; ++j) EXPECT_EQ(y[j], x[j]);
      continue;
    }
    EXPECT_NEAR(level, r * r, 1e-10 * r * r);
    double multiplier = -1;
    for (int j = 0; j < n; ++j) {
      const double gradient = y[j] / (mu[j] * mu[j]);
      if (std::abs(gradient) < 1e-9) continue;
      const double t = (x[j] - y[j]) / gradient;
      EXPECT_GT(t, 0);
      if (multiplier < 0) multiplier = t;
      EXPECT_NEAR(t, multiplier, 1e-8 * multiplier);
    }
    double distance2 = 0;
    for (int j = 0; j < n; ++j) distance2 += (x[j] - y[j]) * (x[j] - y[j]);
    for (int sample = 0; sample < 200; ++sample) {
      double p[5], norm = 0;
      for (int j = 0; j < n; ++j) {
        p[j] = normal(rng);
        norm += p[j] * p[j];
      }
      double other2 = 0;
      for (int j = 0; j < n; ++j) {
        const double point = mu[j] * r * p[j] / std::sqrt(norm);
        other2 += (x[j] - point) * (x[j] - point);
      }
      EXPECT_GE(other2, distance2 * (1 - 1e-12));
    }
  }
}

constexpr double kSpin0 = 20;           // rad/s
constexpr double kSpinMu = 1.0;         // sliding
constexpr double kSpinTorsion = 0.005;  // m

// A sphere spinning about the vertical on a floor decelerates at mu_t N / I with N = m g and
// I = 2/5 m R^2 (the contact point does not slide, so the whole cone goes to the torsional row,
// saturated: |lambda_torsion| = mu_t lambda_n), i.e. alpha = mu_t g / (0.4 R^2), until it stops
// and then stays stopped; MuJoCo's soft contact follows the same line. Condim 3 keeps spinning.
TEST(CondimTest, SpinningSphereStopsAtTheTorsionalRateAsAnalyticAndMujoco) {
  const double radius = 0.1, h = 0.001;
  const double alpha = kSpinTorsion * kG / (0.4 * radius * radius);
  for (const SolverType type : kCondimSolvers)
    for (const int condim : {3, 4, 6}) {
      SCOPED_TRACE(std::string(SolverName(type)) + ", condim " + std::to_string(condim));
      OracleScene scene(
          WriteTempScene("spin.xml", SphereScene(condim, kSpinMu, kSpinTorsion, 0.001, radius, h)));
      ASSERT_TRUE(scene.ok());
      scene.data().qvel[5] = kSpin0;
      scene.mj_data()->qvel[5] = kSpin0;
      double largest_analytic = 0, largest_mujoco = 0;
      StepBoth(scene, 2000, OptionsOf(type), [&](int n, const double* a, const double* b) {
        const double t = n * h;
        const double expected = condim == 3 ? kSpin0 : std::max(0.0, kSpin0 - alpha * t);
        largest_analytic = std::max(largest_analytic, std::abs(a[5] - expected));
        // MuJoCo's soft friction creeps near zero speed: compare while it spins at 2 rad/s or more.
        if (expected >= 2) largest_mujoco = std::max(largest_mujoco, std::abs(a[5] - b[5]));
      });
      // SubADMM and PGS solve each step to round-off here. The ADMM ablations stop on eq. (42)'s
      // tolerance with the torsional row about 0.2% short of saturation (its rad/s row shares one
      // penalty with the m/s rows, from a Delassus trace its 1/I dominates), which adds up to
      // 0.05 rad/s (0.25% of the spin) by the time it stops.
      const bool ablation = type == SolverType::kAdmmNoSub || type == SolverType::kAdmmNoBody;
      EXPECT_LE(largest_analytic, ablation ? 0.06 : 1e-3) << "rad/s";
      EXPECT_LE(largest_mujoco, ablation ? 0.1 : 0.05) << "rad/s (0.25-0.5% of the initial spin)";
      if (condim > 3) {
        EXPECT_NEAR(scene.data().qvel[5], 0.0, 1e-9) << "stopped and stuck";
      }
    }
}

// The impulses of a condim-6 contact at the end of a step satisfy the cone's optimality
// conditions: the cone is saturated while the row slips, and the friction rows obey maximal
// dissipation, lambda_j / mu_j = -s mu_j u_j (s >= 0, u the rows' velocities J v_hat), which the
// radial scaling (lambda parallel to -u) would not.
void ExpectMaximalDissipation(const Model& m, const Data& d) {
  ASSERT_EQ(d.constraints.num_contacts, 1);
  const Constraint& c = d.constraints.constraints[0];
  ASSERT_EQ(c.dim, 6);
  const Contact& contact = d.contact[c.contact];
  const double* lambda = d.constraints.lambda.data() + c.row_adr;
  const int body = m.geom_body[contact.geom2];
  ASSERT_EQ(body, 1);  // the ball is geom2 (geom1 is the floor)
  const Vec3 omega = d.xmat[body] * Vec3(d.qvel[3], d.qvel[4], d.qvel[5]);
  const Vec3 linear(d.qvel[0], d.qvel[1], d.qvel[2]);
  const Vec3 point_velocity = linear + omega.cross(contact.pos - d.xipos[body]);
  const Vec3 sliding = contact.frame.transpose() * point_velocity;
  const Vec3 angular = contact.frame.transpose() * omega;
  const double u[5] = {sliding[1], sliding[2], angular[0], angular[1], angular[2]};
  const double mu[5] = {c.friction, c.friction, c.friction_torsion, c.friction_rolling,
                        c.friction_rolling};
  double level = 0, dot = 0, norm_a = 0, norm_b = 0;
  for (int j = 0; j < 5; ++j) {
    const double a = lambda[1 + j] / mu[j], b = -mu[j] * u[j];
    level += a * a;
    dot += a * b;
    norm_a += a * a;
    norm_b += b * b;
  }
  EXPECT_GT(lambda[0], 0);
  EXPECT_NEAR(std::sqrt(level), lambda[0], 1e-4 * lambda[0]) << "on the cone's boundary";
  EXPECT_GT(dot / std::sqrt(norm_a * norm_b), 0.9999) << "maximal dissipation";
}

// A ball rolling on a floor with condim 6 slows under its rolling friction like MuJoCo's (the
// elliptic cone shares its normal force between the sliding force that keeps the ball rolling
// and the rolling torque, and the ball slips a little, as maximal dissipation has it); with
// condim 4 it rolls on at constant speed in both engines.
TEST(CondimTest, RollingBallDeceleratesLikeMujocoWithCondimSixOnly) {
  const double radius = 0.1, h = 0.001, v0 = 2;
  for (const SolverType type : kCondimSolvers)
    for (const int condim : {4, 6}) {
      SCOPED_TRACE(std::string(SolverName(type)) + ", condim " + std::to_string(condim));
      OracleScene scene(
          WriteTempScene("roll.xml", SphereScene(condim, 1.0, 0.005, 0.01, radius, h)));
      ASSERT_TRUE(scene.ok());
      scene.data().qvel[0] = scene.mj_data()->qvel[0] = v0;
      scene.data().qvel[4] = scene.mj_data()->qvel[4] = v0 / radius;
      double largest_v = 0, largest_w = 0;
      StepBoth(scene, 2000, OptionsOf(type), [&](int n, const double* a, const double* b) {
        largest_v = std::max(largest_v, std::abs(a[0] - b[0]));
        largest_w = std::max(largest_w, std::abs(a[4] - b[4]));
        if (condim == 6 && n % 500 == 0) ExpectMaximalDissipation(scene.model(), scene.data());
      });
      EXPECT_LE(largest_v, 0.006) << "m/s";
      EXPECT_LE(largest_w, 0.1) << "rad/s (0.5% of the initial spin: MuJoCo's contact settling)";
      if (condim == 6) {
        // Without the coupling, mu_r g / (1.4 R) = 0.70 m/s^2: 1.4 m/s lost in 2 s.
        EXPECT_NEAR(scene.data().qvel[0], v0 - 0.70 * 2, 0.01);
      } else {
        EXPECT_NEAR(scene.data().qvel[0], v0, 1e-4);
      }
    }
}

// condim 1 is frictionless, as in MuJoCo: a ball sent sliding over a condim-1 floor keeps its
// speed and never starts to turn (with friction it would roll at 5/7 of it), and a box on a
// condim-1 incline of 20 degrees, which friction 1 would hold, slides down at g sin 20. Every
// solver, CANAL included; MuJoCo (one row) agrees.
TEST(CondimTest, CondimOneIsFrictionlessAsAnalyticAndMujoco) {
  const std::string xml = R"(<mujoco><option timestep="0.001" cone="elliptic"/><worldbody>
    <geom name="floor" type="plane" size="5 5 0.1" condim="1" friction="1 0.005 0.0001"/>
    <geom name="ramp" type="plane" size="1 1 0.1" pos="0 3 1" euler="20 0 0" condim="1"
          friction="1 0.005 0.0001"/>
    <body name="ball" pos="0 0 0.1"><freejoint/>
      <geom type="sphere" size="0.1" mass="1" condim="1" friction="1 0.005 0.0001"/>
    </body>
    <body name="box" pos="0 3 1" euler="20 0 0"><freejoint/>
      <geom type="box" size="0.05 0.05 0.05" pos="0 0 0.05" mass="1" condim="1"
            friction="1 0.005 0.0001"/>
    </body></worldbody></mujoco>)";
  const double v0 = 2, seconds = 0.5;
  const double slide = kG * std::sin(20 * M_PI / 180);
  std::vector<SolverType> types(std::begin(kCondimSolvers), std::end(kCondimSolvers));
  types.push_back(SolverType::kCanal);
  for (const SolverType type : types) {
    SCOPED_TRACE(SolverName(type));
    OracleScene scene(WriteTempScene("frictionless.xml", xml));
    ASSERT_TRUE(scene.ok());
    scene.data().qvel[0] = scene.mj_data()->qvel[0] = v0;
    double largest_ball = 0;
    StepBoth(scene, 500, OptionsOf(type), [&](int, const double* a, const double* b) {
      largest_ball = std::max(largest_ball, std::abs(a[0] - b[0]));
    });
    const Data& d = scene.data();
    ASSERT_EQ(d.contact.size(), 5u) << "the ball's point and the box's four corners";
    for (const Contact& c : d.contact) EXPECT_EQ(c.friction, 0.0);
    EXPECT_NEAR(d.qvel[0], v0, 1e-9) << "the ball keeps its speed";
    EXPECT_NEAR(d.qvel[4], 0, 1e-9) << "and does not turn";
    EXPECT_LE(largest_ball, 1e-6);
    // The box: its speed down the slope (along the ramp's -y, tilted by 20 degrees about x).
    const Vec3 down_slope(0, -std::cos(20 * M_PI / 180), -std::sin(20 * M_PI / 180));
    const double alsim_speed = Vec3(d.qvel[6], d.qvel[7], d.qvel[8]).dot(down_slope);
    const double* mj = scene.mj_data()->qvel;
    const double mujoco_speed = Vec3(mj[6], mj[7], mj[8]).dot(down_slope);
    EXPECT_NEAR(alsim_speed, slide * seconds, 0.01 * slide * seconds);
    EXPECT_NEAR(mujoco_speed, slide * seconds, 0.03 * slide * seconds);
  }
}

// scenes/spinning_top.xml: a tilted top spinning at 60 rad/s on its condim-6 tip loses spin to
// torsional friction as MuJoCo's does, until it starts to topple (about 0.7 s in both engines;
// the comparison stops at 0.6 s), and its tip stays on the floor.
void ExpectTopSlowsDownLikeMujoco(const StepOptions& options) {
  OracleScene scene(std::string(ALSIM_SCENES_DIR) + "/spinning_top.xml");
  ASSERT_TRUE(scene.ok());
  EXPECT_TRUE(scene.model().warnings.empty());
  const double spin0 = 60;
  scene.data().qvel[5] = scene.mj_data()->qvel[5] = spin0;
  double largest = 0;
  StepBoth(scene, 600, options, [&](int, const double* a, const double* b) {
    largest = std::max(largest, std::abs(a[5] - b[5]));
    EXPECT_NEAR(scene.data().qpos[2], 0.005, 1e-4) << "the tip stays on the floor";
  });
  EXPECT_LE(largest, 0.02 * spin0) << "rad/s";
  EXPECT_LT(scene.data().qvel[5], 0.75 * spin0) << "torsional friction slowed it";
  EXPECT_EQ(scene.data().contact.size(), 1u);
  EXPECT_EQ(scene.data().contact[0].dim, 6);
}

TEST(CondimTest, SpinningTopSlowsDownLikeMujoco) {
  for (const SolverType type : kCondimSolvers) {
    SCOPED_TRACE(SolverName(type));
    ExpectTopSlowsDownLikeMujoco(OptionsOf(type));
  }
}

// The torsional and rolling impulses are warm-started from step to step, so a state snapshot
// carries them: an instance restored mid-spin steps on bit for bit as the original.
TEST(CondimTest, StateSnapshotKeepsTheAngularWarmStart) {
  const ModelImport top = ImportModelFromFile(std::string(ALSIM_SCENES_DIR) + "/spinning_top.xml");
  ASSERT_NE(top.model, nullptr) << top.error;
  const Model& m = *top.model;
  Data original(m);
  original.qvel[5] = 60;
  for (int n = 0; n < 200; ++n) ASSERT_EQ(Step(m, original), StepStatus::kOk);
  ASSERT_EQ(original.warm_start.key.size(), 1u);
  ASSERT_NE(original.warm_start.angular_impulse[0][2], 0.0) << "the torsional impulse";
  const std::string snapshot = SaveStateSnapshot(m, original);
  const size_t doubles = static_cast<size_t>(m.nq) + m.nv + m.nu + m.ngeom;
  // ... + one warm-start entry, its angular impulse, no vertex state (its count), the checksum.
  EXPECT_EQ(snapshot.size(), 60 + 20 + 8 * doubles + 4 + 72 + 4 + 24 + 4 + 8);
  Data restored(m);
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(m, snapshot, restored, &error)) << error;
  EXPECT_EQ(SaveStateSnapshot(m, restored), snapshot);
  for (int n = 0; n < 100; ++n) {
    ASSERT_EQ(Step(m, original), StepStatus::kOk);
    ASSERT_EQ(Step(m, restored), StepStatus::kOk);
  }
  EXPECT_EQ(StateHash(m, restored), StateHash(m, original));
  for (int i = 0; i < m.nv; ++i) EXPECT_EQ(restored.qvel[i], original.qvel[i]) << i;
}

// A step with condim 6 contacts allocates nothing once the instance has had its contacts: the
// spinning top through its fall onto the disk (more contacts), for every solver that takes it.
TEST(CondimTest, AStepAllocatesNothing) {
  const ModelImport top = ImportModelFromFile(std::string(ALSIM_SCENES_DIR) + "/spinning_top.xml");
  ASSERT_NE(top.model, nullptr) << top.error;
  const Model& m = *top.model;
  for (const SolverType type : kCondimSolvers) {
    SCOPED_TRACE(SolverName(type));
    const StepOptions options = OptionsOf(type);
    Data d(m);
    d.qvel[5] = 60;
    // Uncounted: the first 1.5 s, which create the solver and reach the most contacts (the disk
    // lands on the floor after the top has slowed down).
    int warm_contacts = 0;
    for (int n = 0; n < 1500; ++n) {
      ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
      warm_contacts = std::max(warm_contacts, static_cast<int>(d.contact.size()));
    }
    const testing::AllocationCounter allocations;
    int contacts = 0;
    for (int n = 0; n < 500; ++n) {
      ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
      contacts = std::max(contacts, static_cast<int>(d.contact.size()));
    }
    EXPECT_EQ(allocations.count(), 0);
    EXPECT_GE(contacts, 1);
    EXPECT_LE(contacts, warm_contacts);
  }
}

// Every solver without torsional/rolling rows refuses a condim 4/6 scene at Step, naming itself
// and the geom, and changes nothing; a condim-3 scene is not refused.
TEST(CondimTest, SolversWithoutTheRowsRefuseTheSceneByName) {
  const ModelImport top = ImportModelFromFile(std::string(ALSIM_SCENES_DIR) + "/spinning_top.xml");
  ASSERT_NE(top.model, nullptr) << top.error;
  const ModelImport plain = ImportModelFromString(SphereScene(3, 1, 0.005, 0.001));
  ASSERT_NE(plain.model, nullptr) << plain.error;
  for (const SolverType type :
       {SolverType::kSubAdmm, SolverType::kPgs, SolverType::kAdmmNoSub, SolverType::kAdmmNoBody,
        SolverType::kCanal, SolverType::kCanalTrDogleg, SolverType::kCanalDampedSn,
        SolverType::kAuto}) {
    SCOPED_TRACE(SolverName(type));
    StepOptions options;
    options.solver.type = type;
    EXPECT_TRUE(SolverRefusesModel(*plain.model, type).empty());
    Data d(*top.model);
    const std::string refused = SolverRefusesModel(*top.model, type);
    if (SolverSupportsHighCondim(type)) {
      EXPECT_TRUE(refused.empty());
      EXPECT_EQ(Step(*top.model, d, options), StepStatus::kOk);
      continue;
    }
    EXPECT_NE(refused.find(std::string("'") + SolverName(type) + "'"), std::string::npos)
        << refused;
    EXPECT_NE(refused.find("'tip'"), std::string::npos) << refused;
    EXPECT_EQ(Step(*top.model, d, options), StepStatus::kInvalidOptions);
    EXPECT_EQ(d.time, 0.0);
  }
}

}  // namespace
}  // namespace alsim
