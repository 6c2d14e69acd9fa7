// Concave meshes against boxes, cylinders and ellipsoids (engine/collision/sdf_pairs.h): the
// primitives' fields against finite differences and closed forms; a box on a concave tray's
// floor at its four corners, tilted too; a box against a U channel's wall where the hull is wrong;
// a cylinder standing and an ellipsoid upright and tilted on the floor; the same output twice; and
// a box dropped into the tray resting at its analytic height.
#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/collision/narrowphase.h"
#include "engine/collision/sdf_pairs.h"
#include "engine/core/parallel.h"
#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "tests/collision/sdf_test_scene.h"
#include "tests/support/allocation_counter.h"

namespace alsim {
namespace {

using namespace sdf_test;  // Scene, Load, Geom, Collide, Deepest

// An open tray, 0.4 x 0.3 floor at z = 0 and walls 0.1 high, wound outward like a closed cup's
// outside (its floor's normal is -z: the box inside is on the floor's back side).
const std::string kTray =
    "<mesh name='tray' vertex='-0.2 -0.15 0  0.2 -0.15 0  0.2 0.15 0  -0.2 0.15 0 "
    "-0.2 -0.15 0.1  0.2 -0.15 0.1  0.2 0.15 0.1  -0.2 0.15 0.1' "
    "face='0 2 1  0 3 2  0 1 5  0 5 4  1 2 6  1 6 5  2 3 7  2 7 6  3 0 4  3 4 7'/>";

// A world with the tray (concave unless `hull`) and `body` (geoms or bodies).
std::string TrayWorld(const std::string& body, bool hull = false, const std::string& option = "") {
  return "<mujoco>" + option + "<asset>" + kTray + "</asset>" +
         (hull ? "" : "<custom><text name='alsim:concave:tray' data='triangles'/></custom>") +
         "<worldbody><geom name='tray' type='mesh' mesh='tray'/>" + body + "</worldbody></mujoco>";
}

// The tray's floor height in the world as the model stores it (vertices are floats in the
// mesh's principal frame): the lowest world z of its vertices.
double FloorHeight(const Scene& scene) {
  const GeomShape tray = ShapeOfGeom(*scene.model, *scene.data, Geom(*scene.model, "tray"));
  double floor = INFINITY;
  for (int i = 0; i < tray.vertex_count; ++i) {
    floor = std::min(floor, (tray.pos + tray.rot * tray.vertices[i]).z());
  }
  return floor;
}

std::string Num(double x) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// ---------------------------------------------------------------- fields

// Central differences of `field` at p, step e.
template <class Field>
Vec3 Differences(const Field& field, const Vec3& p, double e) {
  Vec3 g, unused;
  for (int i = 0; i < 3; ++i) {
    Vec3 up = p, down = p;
    up[i] += e;
    down[i] -= e;
    g[i] = (field(up, &unused) - field(down, &unused)) / (2 * e);
  }
  return g;
}

TEST(PrimitiveFields, BoxMatchesClosedFormsAndFiniteDifferences) {
  const Vec3 h(0.05, 0.03, 0.02);
  Vec3 g;
  EXPECT_DOUBLE_EQ(BoxField(h, Vec3(0.08, 0.01, -0.01), &g), 0.03);
  EXPECT_EQ(g, Vec3::UnitX());
  EXPECT_NEAR(BoxField(h, Vec3(-0.08, 0.07, 0.0), &g), 0.05, 1e-15);  // off an edge: 3-4-5
  EXPECT_LT((g - Vec3(-0.6, 0.8, 0)).norm(), 1e-14);
  EXPECT_DOUBLE_EQ(BoxField(h, Vec3(0.01, 0.0, -0.015), &g), -0.005);  // nearest the bottom face
  EXPECT_EQ(g, -Vec3::UnitZ());
  const auto field = [&h](const Vec3& p, Vec3* grad) { return BoxField(h, p, grad); };
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-2, 2);
  int checked = 0;
  for (int k = 0; k < 2000; ++k) {
    const Vec3 p = Vec3(u(rng), u(rng), u(rng)).cwiseProduct(h);
    // Inside, the field has kinks where two faces are equally near: stay off them.
    const Vec3 q = p.cwiseAbs() - h;
    std::array<double, 3> sorted = {q[0], q[1], q[2]};
    std::sort(sorted.begin(), sorted.end());
    if (sorted[2] < 0 && sorted[2] - sorted[1] < 1e-4) continue;
    const double value = BoxField(h, p, &g);
    EXPECT_LT((g - Differences(field, p, 1e-7)).norm(), 1e-6) << p.transpose();
    EXPECT_NEAR(g.norm(), 1, 1e-12);
    // The value against the distance to the box's nearest point (outside) or face (inside).
    const Vec3 nearest = p.cwiseMax(-h).cwiseMin(h);
    EXPECT_NEAR(value, sorted[2] > 0 ? (p - nearest).norm() : sorted[2], 1e-15);
    ++checked;
  }
  EXPECT_GT(checked, 1500);
}

TEST(PrimitiveFields, CylinderMatchesClosedFormsAndFiniteDifferences) {
  const double r = 0.04, h = 0.03;
  Vec3 g;
  EXPECT_NEAR(CylinderField(r, h, Vec3(0.03, 0.04, 0.01), &g), 0.01, 1e-15);
  EXPECT_LT((g - Vec3(0.6, 0.8, 0)).norm(), 1e-14);
  EXPECT_NEAR(CylinderField(r, h, Vec3(0.0, 0.07, 0.07), &g), 0.05, 1e-15);  // off the rim
  EXPECT_LT((g - Vec3(0, 0.6, 0.8)).norm(), 1e-14);
  EXPECT_NEAR(CylinderField(r, h, Vec3(0.0, 0.01, -0.025), &g), -0.005, 1e-15);
  EXPECT_EQ(g, -Vec3::UnitZ());
  const auto field = [&](const Vec3& p, Vec3* grad) { return CylinderField(r, h, p, grad); };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-2, 2);
  for (int k = 0; k < 2000; ++k) {
    const Vec3 p(u(rng) * r, u(rng) * r, u(rng) * h);
    const double qr = std::hypot(p.x(), p.y()) - r, qz = std::abs(p.z()) - h;
    if (qr < 0 && qz < 0 && std::abs(qr - qz) < 1e-4) continue;  // the inner kink
    if (std::hypot(p.x(), p.y()) < 1e-4) continue;               // the axis
    CylinderField(r, h, p, &g);
    EXPECT_LT((g - Differences(field, p, 1e-7)).norm(), 1e-6) << p.transpose();
  }
}

// The first-order ellipsoid distance: exact on the axes, 0 on the surface with the unit normal,
// its gradient the finite differences', within the Lipschitz bound outside, and second order in
// the distance along the surface's normals.
TEST(PrimitiveFields, EllipsoidIsFirstOrderAndWithinItsLipschitzBound) {
  const Vec3 a(0.05, 0.03, 0.02);
  Vec3 g;
  EXPECT_NEAR(EllipsoidField(a, Vec3(0, 0, 0.027), &g), 0.007, 1e-15);
  EXPECT_LT((g - Vec3::UnitZ()).norm(), 1e-14);
  EXPECT_NEAR(EllipsoidField(a, Vec3(-0.04, 0, 0), &g), -0.01, 1e-15);
  const auto field = [&a](const Vec3& p, Vec3* grad) { return EllipsoidField(a, p, grad); };
  const double lipschitz = 2 + std::pow(a.maxCoeff() / a.minCoeff(), 2);
  std::mt19937_64 rng(13);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> u(0, 1);
  double worst = 0;
  for (int k = 0; k < 4000; ++k) {
    const Vec3 dir = Vec3(normal(rng), normal(rng), normal(rng)).normalized();
    const Vec3 s = dir.cwiseProduct(a);  // on the surface
    const Vec3 n = s.cwiseQuotient(a.cwiseProduct(a)).normalized();
    EXPECT_NEAR(EllipsoidField(a, s, &g), 0, 1e-16);
    EXPECT_LT((g - n).norm(), 1e-12);
    // Outside along the normal the true distance is d.
    const double d = 0.02 * u(rng);
    const Vec3 p = s + d * n;
    const double f = EllipsoidField(a, p, &g);
    worst = std::max(worst, std::abs(f - d) / (d * d / a.minCoeff()));
    EXPECT_LT(g.norm(), lipschitz);
    EXPECT_LT((g - Differences(field, p, 1e-8)).norm(), 1e-5) << p.transpose();
  }
  EXPECT_LT(worst, 2.0);
}

// ---------------------------------------------------------------- pairs

// A box resting 1 mm above the tray's floor, turned about z: its four bottom corners at the
// analytic gap with the floor's normal; the floor is single-sided and wound away from the box.
// As the hull the box is deep inside the tray.
TEST(ConcavePrimitives, BoxOnATraysFloorTouchesAtItsFourCorners) {
  const double gap = 0.001;
  const std::string box =
      "<geom name='box' type='box' size='0.05 0.04 0.03' euler='0 0 23' "
      "pos='0.03 -0.02 " +
      Num(0.03 + gap) + "'/>";
  const Scene scene = Load(TrayWorld(box));
  ASSERT_TRUE(scene.model) << scene.error;
  const double floor = FloorHeight(scene);
  EXPECT_NEAR(floor, 0, 1e-8);  // float vertices
  const double expected = gap - floor;
  const int b = Geom(*scene.model, "box");
  for (const bool swap : {false, true}) {
    const std::vector<Contact> contacts =
        swap ? Collide(scene, "box", "tray", 0.005) : Collide(scene, "tray", "box", 0.005);
    ASSERT_GE(contacts.size(), 4u);
    int corners = 0;
    for (const Contact& c : contacts) {
      EXPECT_NEAR(c.dist, expected, 1e-9);
      EXPECT_LT((c.normal - (swap ? -1.0 : 1.0) * Vec3::UnitZ()).norm(), 1e-7);
      const Vec3 local = scene.data->geom_xmat[b].transpose() *
                         (c.pos + Vec3(0, 0, c.dist / 2) - scene.data->geom_xpos[b]);
      EXPECT_NEAR(local.z(), -0.03, 1e-9);
      if (std::abs(std::abs(local.x()) - 0.05) < 1e-9 &&
          std::abs(std::abs(local.y()) - 0.04) < 1e-9) {
        ++corners;
      }
    }
    EXPECT_EQ(corners, 4);
  }
  const Scene hull = Load(TrayWorld(box, true));
  ASSERT_TRUE(hull.model) << hull.error;
  EXPECT_LT(Deepest(Collide(hull, "tray", "box", 0.005)), -0.03);
}

// The tray and the box both tilted 15 degrees about x and turned 40 about z, the box 1 mm off the
// floor along the tray's z axis: the same four corners at the gap, normals the tray's z axis.
TEST(ConcavePrimitives, TiltedTrayAndBoxTouchAtTheCornersAlongTheTraysAxis) {
  const double gap = 0.001;
  const Eigen::Matrix3d rot = (Eigen::AngleAxisd(40 * 3.14159265358979323846 / 180, Vec3::UnitZ()) *
                               Eigen::AngleAxisd(15 * 3.14159265358979323846 / 180, Vec3::UnitX()))
                                  .toRotationMatrix();
  const Vec3 center = rot * Vec3(0.03, -0.02, 0.03 + gap);
  const std::string xml =
      "<mujoco><compiler eulerseq='zyx'/><asset>" + kTray +
      "</asset><custom><text name='alsim:concave:tray' data='triangles'/></custom><worldbody>"
      "<body euler='40 0 15'><geom name='tray' type='mesh' mesh='tray'/></body>"
      "<body euler='40 0 15' pos='" +
      Num(center.x()) + " " + Num(center.y()) + " " + Num(center.z()) +
      "'><geom name='box' type='box' size='0.05 0.04 0.03'/></body></worldbody></mujoco>";
  const Scene scene = Load(xml);
  ASSERT_TRUE(scene.model) << scene.error;
  const GeomShape tray = ShapeOfGeom(*scene.model, *scene.data, Geom(*scene.model, "tray"));
  const Vec3 axis =
      tray.rot *
      (tray.vertices[1] - tray.vertices[0]).cross(tray.vertices[2] - tray.vertices[0]).normalized();
  const Vec3 up = axis.dot(rot.col(2)) > 0 ? axis : Vec3(-axis);  // the floor's side of the box
  EXPECT_LT((up - rot.col(2)).norm(), 1e-6);
  const double floor = up.dot(tray.pos + tray.rot * tray.vertices[0]);
  const int b = Geom(*scene.model, "box");
  const std::vector<Contact> contacts = Collide(scene, "tray", "box", 0.005);
  ASSERT_GE(contacts.size(), 4u);
  int corners = 0;
  for (const Contact& c : contacts) {
    const Vec3 bottom = c.pos + up * (c.dist / 2);  // where the contact meets the box
    EXPECT_NEAR(c.dist, up.dot(bottom) - floor, 1e-12);
    EXPECT_NEAR(c.dist, gap, 1e-7);  // float vertices
    EXPECT_LT((c.normal - up).norm(), 1e-12);
    const Vec3 local = scene.data->geom_xmat[b].transpose() * (bottom - scene.data->geom_xpos[b]);
    EXPECT_NEAR(local.z(), -0.03, 1e-7);
    if (std::abs(std::abs(local.x()) - 0.05) < 1e-7 &&
        std::abs(std::abs(local.y()) - 0.04) < 1e-7) {
      ++corners;
    }
  }
  EXPECT_EQ(corners, 4);
}

// A U channel along y (floor z = 0, walls x = +-0.1 up to z = 0.1, open ends and top) and a
// box 1.5 mm from its right wall, high off the floor: the wall's normal, -x, at 1.5 mm. As the
// hull (the solid block) the box is deep inside with some other normal.
TEST(ConcavePrimitives, BoxInAChannelGetsTheSideWallsNormal) {
  const std::string channel =
      "<asset><mesh name='channel' vertex='-0.1 -0.2 0  0.1 -0.2 0  0.1 0.2 0  -0.1 0.2 0 "
      "-0.1 -0.2 0.1  0.1 -0.2 0.1  0.1 0.2 0.1  -0.1 0.2 0.1' "
      "face='0 2 1  0 3 2  1 2 6  1 6 5  3 0 4  3 4 7'/></asset>";
  const double gap = 0.0015;
  const std::string world =
      "<worldbody><geom name='channel' type='mesh' mesh='channel'/>"
      "<geom name='box' type='box' size='0.03 0.03 0.03' pos='" +
      Num(0.1 - 0.03 - gap) + " 0.01 0.05'/></worldbody>";
  const Scene scene =
      Load("<mujoco>" + channel +
           "<custom><text name='alsim:concave:channel' data='triangles'/></custom>" + world +
           "</mujoco>");
  ASSERT_TRUE(scene.model) << scene.error;
  const std::vector<Contact> contacts = Collide(scene, "channel", "box", 0.005);
  ASSERT_GE(contacts.size(), 4u);
  for (const Contact& c : contacts) {
    EXPECT_NEAR(c.dist, gap, 1e-8);  // float vertices
    EXPECT_LT((c.normal + Vec3::UnitX()).norm(), 1e-6);
  }
  const Scene hull = Load("<mujoco>" + channel + world + "</mujoco>");
  ASSERT_TRUE(hull.model) << hull.error;
  const std::vector<Contact> wrong = Collide(hull, "channel", "box", 0.005);
  ASSERT_GE(wrong.size(), 1u);
  EXPECT_LT(Deepest(wrong), -0.02);
}

// A cylinder standing 0.7 mm above the tray's floor: its lower rim at the gap, normals up.
TEST(ConcavePrimitives, CylinderStandingOnTheFloorTouchesAlongItsRim) {
  const double gap = 0.0007;
  const Scene scene =
      Load(TrayWorld("<geom name='can' type='cylinder' size='0.04 0.03' pos='-0.05 0.02 " +
                     Num(0.03 + gap) + "'/>"));
  ASSERT_TRUE(scene.model) << scene.error;
  const double expected = gap - FloorHeight(scene);
  const std::vector<Contact> contacts = Collide(scene, "tray", "can", 0.005);
  ASSERT_GE(contacts.size(), 4u);
  const Vec3 center(-0.05, 0.02, 0);
  int rim = 0;
  for (const Contact& c : contacts) {
    EXPECT_NEAR(c.dist, expected, 1e-9);
    EXPECT_LT((c.normal - Vec3::UnitZ()).norm(), 1e-7);
    if (std::abs((c.pos - center).head<2>().norm() - 0.04) < 1e-9) ++rim;
  }
  EXPECT_GE(rim, 4);
}

// An ellipsoid above the floor: upright (its short axis vertical, where the field is exact) at
// the gap; tilted 30 degrees about x, at the gap of its support point within the first-order
// field's error, and the normal up either way.
TEST(ConcavePrimitives, EllipsoidOnTheFloorAtTheAnalyticDistance) {
  const double gap = 0.001;
  const Scene upright =
      Load(TrayWorld("<geom name='egg' type='ellipsoid' size='0.05 0.03 0.02' "
                     "pos='0.01 0.02 " +
                     Num(0.02 + gap) + "'/>"));
  ASSERT_TRUE(upright.model) << upright.error;
  std::vector<Contact> contacts = Collide(upright, "tray", "egg", 0.005);
  ASSERT_GE(contacts.size(), 1u);
  EXPECT_NEAR(contacts[0].dist, gap - FloorHeight(upright), 1e-9);
  EXPECT_LT((contacts[0].normal - Vec3::UnitZ()).norm(), 1e-7);
  // Tilted: the lowest point lies sqrt((0.03 sin 30)^2 + (0.02 cos 30)^2) below the center.
  const double pi = 3.14159265358979323846;
  const double drop = std::hypot(0.03 * std::sin(pi / 6), 0.02 * std::cos(pi / 6));
  const Scene tilted =
      Load(TrayWorld("<geom name='egg' type='ellipsoid' size='0.05 0.03 0.02' "
                     "euler='30 0 0' pos='0.01 0.02 " +
                     Num(drop + gap) + "'/>"));
  ASSERT_TRUE(tilted.model) << tilted.error;
  contacts = Collide(tilted, "tray", "egg", 0.005);
  ASSERT_GE(contacts.size(), 1u);
  // The documented accuracy: within 2 d^2 / a_min of the true distance d.
  EXPECT_NEAR(Deepest(contacts), gap - FloorHeight(tilted), 2 * gap * gap / 0.02);
  EXPECT_LT((contacts[0].normal - Vec3::UnitZ()).norm(), 1e-6);
}

// A box tilted on the tray's floor against a corner of the walls, a cylinder lying across the
// floor: the same contacts twice, bit for bit.
TEST(ConcavePrimitives, Deterministic) {
  const Scene scene = Load(TrayWorld(
      "<geom name='box' type='box' size='0.05 0.04 0.03' euler='10 20 30' pos='0.15 0.1 0.04'/>"
      "<geom name='can' type='cylinder' size='0.02 0.08' euler='90 0 0' pos='-0.1 0 0.019'/>"));
  ASSERT_TRUE(scene.model) << scene.error;
  for (const char* other : {"box", "can"}) {
    const std::vector<Contact> once = Collide(scene, "tray", other, 0.005);
    const std::vector<Contact> again = Collide(scene, "tray", other, 0.005);
    ASSERT_GE(once.size(), 1u) << other;
    ASSERT_EQ(once.size(), again.size());
    for (size_t i = 0; i < once.size(); ++i) {
      EXPECT_EQ(once[i].dist, again[i].dist);
      EXPECT_EQ(once[i].pos, again[i].pos);
      EXPECT_EQ(once[i].normal, again[i].normal);
    }
  }
}

// A box dropped 2 cm into the tray settles on its floor: its center at the half-height above
// the floor, level, within the solver's tolerance, its steps then allocating nothing. As the hull
// the tray pushes it out on top of its rim.
TEST(ConcavePrimitives, BoxDroppedIntoTheTrayRestsAtTheAnalyticHeight) {
  for (const bool hull : {false, true}) {
    const ModelImport imported = ImportModelFromString(
        TrayWorld("<body name='box' pos='0.02 -0.01 0.05'><freejoint/>"
                  "<geom name='box' type='box' size='0.05 0.04 0.03' euler='0 0 15'/></body>",
                  hull));
    ASSERT_TRUE(imported) << imported.error;
    const Model& m = *imported.model;
    Data d(m);
    const int steps = static_cast<int>(std::lround(1.5 / m.timestep));
    for (int k = 0; k < steps; ++k) ASSERT_EQ(Step(m, d), StepStatus::kOk);
    if (hull) {
      EXPECT_GT(d.qpos[2], 0.1);
      continue;
    }
    // At rest, further steps allocate nothing.
    RunWithThreads(1, [&] {
      const testing::AllocationCounter allocations;
      for (int k = 0; k < 20; ++k) ASSERT_EQ(Step(m, d), StepStatus::kOk);
      EXPECT_EQ(allocations.count(), 0);
    });
    EXPECT_NEAR(d.qpos[2], 0.03, 5e-5);
    EXPECT_NEAR(d.qpos[0], 0.02, 1e-3);
    EXPECT_NEAR(d.qpos[1], -0.01, 1e-3);
    // Level: the body's z axis stays vertical.
    const Eigen::Quaterniond q(d.qpos[3], d.qpos[4], d.qpos[5], d.qpos[6]);
    EXPECT_GT((q * Vec3::UnitZ()).z(), 1 - 1e-6);
    EXPECT_LT(Vec3(d.qvel[0], d.qvel[1], d.qvel[2]).norm(), 1e-3);
  }
}

}  // namespace
}  // namespace alsim
