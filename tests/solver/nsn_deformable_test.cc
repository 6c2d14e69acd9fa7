// Tetrahedral deformables stepped by --solver nsn (engine/solver/nsn/nsn_solver.h; digest
// seed-002-nsn.md section 14): a nu = 0 column on a frictionless floor shortens by
// rho g L^2 / (2 Y) and a bar hanging from pins stretches as much; contact forces hold the weight
// of a soft cube, of a rigid box on a soft pad attached to it (two-way attachment rows) and of a
// rigid sphere resting on a soft cube (vertex contacts with a moving geom); refusals; bit-identical
// for 1, 2 and 8 threads; no allocation once warm.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <oneapi/tbb/global_control.h>

#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"
#include "engine/solver/nsn/nsn_solver.h"
#include "engine/solver/solver.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/kuhn_grid.h"
#include "tests/support/nsn_deformables.h"
#include "tests/support/solver_figures.h"

namespace alsim {
namespace {

constexpr double kGravity = 9.81;

std::string Num(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", x);
  return text;
}

// A scene whose custom text names the companion file soft.xml.
std::shared_ptr<const Model> Import(const std::string& bodies, const std::string& companion,
                                    double h, const std::string& option = "") {
  const std::string scene =
      "<mujoco><option timestep='" + Num(h) + "' " + option +
      "/><custom><text name='alsim:deformables' data='soft.xml'/></custom><worldbody>" + bodies +
      "</worldbody></mujoco>";
  const ModelImport imported = ImportModelFromString(scene, {{"soft.xml", companion}}, "s.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

std::string Deformable(const std::string& name, const testing::KuhnGrid& grid,
                       const std::string& attributes, const std::string& children = "") {
  return "<deformable name='" + name + "' " + attributes + ">" + testing::TetMeshXml(grid) +
         children + "</deformable>";
}

StepOptions TightNsn() {
  StepOptions options;
  options.solver.type = SolverType::kNsn;
  options.solver.nsn.newton_tolerance = 1e-9;
  options.solver.nsn.newton_iterations = 200;
  return options;
}

using testing::Figure;

using testing::ContactForce;
using testing::DeformableMass;
using testing::Solver;

// The mean z of the grid's top layer of vertices.
double TopHeight(const Data& d, const testing::KuhnGrid& grid, int first) {
  double sum = 0;
  int count = 0;
  for (int y = 0; y <= grid.ny; ++y) {
    for (int x = 0; x <= grid.nx; ++x) {
      sum += d.vert_xpos[first + grid.Id(x, y, grid.nz)].z();
      ++count;
    }
  }
  return sum / count;
}

// Digest 14 (FEM): a nu = 0 column of 1 x 1 x 6 cells (0.05 m, L = 0.3 m, rho 1000, Y 1e5;
// linear, corotated and Neo-Hookean) on a frictionless floor settles shortened by rho g L^2 / (2 Y)
// (1%), its vertex contacts carrying its weight (1e-5: its slow axial mode still rings at a few
// 1e-6 after 3 s, backward Euler's damping of it being slight).
TEST(NsnDeformableTest, AColumnOnAFrictionlessFloorShortensByItsWeight) {
  const double dx = 0.05, length = 0.3, rho = 1000, young = 1e5;
  for (const char* material : {"linear", "corotated", "neohookean"}) {
    const testing::KuhnGrid grid = testing::MakeKuhnGrid(1, 1, 6, dx, dx, length / 6);
    const auto model = Import(
        "<geom name='floor' type='plane' size='5 5 0.1' friction='0'/>",
        "<deformables>" +
            Deformable("column", grid,
                       std::string("material='") + material + "' young='" + Num(young) +
                           "' poisson='0' density='" + Num(rho) + "' friction='0' thickness='0'") +
            "</deformables>",
        0.01);
    ASSERT_NE(model, nullptr);
    Data d(*model);
    for (int n = 0; n < 300; ++n) ASSERT_EQ(Step(*model, d, TightNsn()), StepStatus::kOk) << n;
    const double expected = rho * kGravity * length * length / (2 * young);
    EXPECT_NEAR(length - TopHeight(d, grid, 0), expected, 0.01 * expected) << material;
    EXPECT_NEAR(ContactForce(*model, d, -1), DeformableMass(*model) * kGravity,
                1e-5 * DeformableMass(*model) * kGravity)
        << material;
    EXPECT_EQ(Figure(d, "unconverged_islands"), 0) << material;
  }
}

// The same bar (corotated) hanging from its pinned top layer stretches by as much, with the
// geometric stiffness on or off.
TEST(NsnDeformableTest, ABarHangingFromPinsStretchesByItsWeight) {
  const double dx = 0.05, length = 0.3, rho = 1000, young = 1e5;
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(1, 1, 6, dx, dx, length / 6);
  std::string pins;
  for (int y = 0; y <= 1; ++y) {
    for (int x = 0; x <= 1; ++x) pins += std::to_string(grid.Id(x, y, 6)) + " ";
  }
  const auto model =
      Import("",
             "<deformables>" +
                 Deformable("bar", grid,
                            "young='" + Num(young) + "' poisson='0' density='" + Num(rho) + "'",
                            "<pin vertices='" + pins + "'/>") +
                 "</deformables>",
             0.01);
  ASSERT_NE(model, nullptr);
  // With and without the geometric stiffness (NsnParameters::geometric_stiffness): it changes the
  // iterates, not the solution.
  for (const bool geometric : {false, true}) {
    Data d(*model);
    StepOptions options = TightNsn();
    options.solver.nsn.geometric_stiffness = geometric;
    for (int n = 0; n < 300; ++n) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk) << n;
    double bottom = 0;
    for (int y = 0; y <= 1; ++y) {
      for (int x = 0; x <= 1; ++x) bottom += d.vert_xpos[grid.Id(x, y, 0)].z() / 4;
    }
    const double expected = rho * kGravity * length * length / (2 * young);
    EXPECT_NEAR(-bottom, expected, 0.01 * expected) << geometric;
    EXPECT_EQ(Figure(d, "unconverged_islands"), 0) << geometric;
  }
}

// Two-way coupling through attachment rows: a rigid box of 2 kg carried by the top layer of a
// soft pad (0.1 m cube of 2 x 2 x 2 cells, 1 kg) that rests on the floor. The floor's contacts
// carry both weights (1e-6) and the box sits on the pad.
TEST(NsnDeformableTest, ARigidBoxOnASoftPadAttachedToItWeighsOnTheFloor) {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(2, 2, 2, 0.05, 0.05, 0.05);
  std::string top;
  for (int y = 0; y <= 2; ++y) {
    for (int x = 0; x <= 2; ++x) top += std::to_string(grid.Id(x, y, 2)) + " ";
  }
  const auto model = Import(
      "<geom name='floor' type='plane' size='5 5 0.1' friction='0.5'/><body name='box' "
      "pos='0.05 0.05 0.15'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='2' "
      "contype='0' conaffinity='0'/></body>",
      "<deformables>" +
          Deformable("pad", grid, "young='1e5' poisson='0.3' density='1000' thickness='0'",
                     "<attach body='box' vertices='" + top + "'/>") +
          "</deformables>",
      0.01);
  ASSERT_NE(model, nullptr);
  Data d(*model);
  for (int n = 0; n < 200; ++n) ASSERT_EQ(Step(*model, d, TightNsn()), StepStatus::kOk) << n;
  const double weight = (2 + DeformableMass(*model)) * kGravity;
  EXPECT_NEAR(DeformableMass(*model), 1, 1e-12);
  EXPECT_NEAR(ContactForce(*model, d, 0), weight, 1e-6 * weight);
  EXPECT_LT(std::abs(d.qvel[2]), 1e-6);
  EXPECT_LT(d.qpos[2], 0.15);  // the pad is compressed
}

// Vertex contacts with a moving geom: a rigid box of 0.5 kg resting on a soft cube's top layer of
// vertices, the cube on the floor: the box's contacts carry its weight, the floor's both (1e-5).
// (A sphere balanced on one vertex rolls off it into the face: rigid geoms against the
// deformable's triangles are not modelled yet, engine/collision/deformable_contacts.h.)
TEST(NsnDeformableTest, ARigidBoxRestsOnASoftCube) {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(2, 2, 2, 0.05, 0.05, 0.05);
  const auto model = Import(
      "<geom name='floor' type='plane' size='5 5 0.1' friction='0.5'/><body name='lid' "
      "pos='0.05 0.05 0.125'><freejoint/><geom name='lid' type='box' size='0.06 0.06 0.025' "
      "mass='0.5'/></body>",
      "<deformables>" +
          Deformable("cube", grid, "young='1e5' poisson='0.3' density='1000' thickness='0'") +
          "</deformables>",
      0.01);
  ASSERT_NE(model, nullptr);
  Data d(*model);
  for (int n = 0; n < 200; ++n) ASSERT_EQ(Step(*model, d, TightNsn()), StepStatus::kOk) << n;
  const int lid = 1;
  EXPECT_NEAR(ContactForce(*model, d, lid), 0.5 * kGravity, 1e-5 * kGravity);
  const double weight = (0.5 + DeformableMass(*model)) * kGravity;
  EXPECT_NEAR(ContactForce(*model, d, 0), weight, 1e-5 * weight);
  EXPECT_LT(std::abs(d.qvel[2]), 1e-5);
  EXPECT_NEAR(d.qpos[2], 0.125, 0.005);
  EXPECT_EQ(Figure(d, "unconverged_islands"), 0);
}

// Triangle contacts: a rigid sphere of 0.3 kg (r 0.03 m) dropped onto the middle of a soft cube's
// top face (3 x 3 cells: the middle of a cell, between vertices) stays on the face (its contacts
// are the face's triangles' closest points, not only vertices) and the floor carries both
// weights (1e-5). After 1.5 s it still creeps across the dented face at about 1 cm/s, its
// contacts' force within 1% of its weight (measured: 0.7% over, 0.0099 m/s).
TEST(NsnDeformableTest, ARigidSphereRestsOnASoftCubesFace) {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(3, 3, 2, 0.1 / 3, 0.1 / 3, 0.05);
  const auto model = Import(
      "<geom name='floor' type='plane' size='5 5 0.1' friction='0.5'/><body name='ball' "
      "pos='0.05 0.05 0.14'><freejoint/><geom name='ball' type='sphere' size='0.03' "
      "mass='0.3'/></body>",
      "<deformables>" +
          Deformable("cube", grid, "young='1e5' poisson='0.3' density='1000' thickness='0'") +
          "</deformables>",
      0.01);
  ASSERT_NE(model, nullptr);
  Data d(*model);
  for (int n = 0; n < 150; ++n) ASSERT_EQ(Step(*model, d, TightNsn()), StepStatus::kOk) << n;
  EXPECT_FALSE(d.triangle_contact.empty());
  const int ball = 1;
  EXPECT_NEAR(ContactForce(*model, d, ball), 0.3 * kGravity, 0.01 * 0.3 * kGravity);
  const double weight = (0.3 + DeformableMass(*model)) * kGravity;
  EXPECT_NEAR(ContactForce(*model, d, 0), weight, 1e-5 * weight);
  EXPECT_GT(d.qpos[2], 0.1 + 0.03 - 0.01);  // on the face, not sunk into the cube
  EXPECT_LT(Vec3(d.qvel[0], d.qvel[1], d.qvel[2]).norm(), 0.02);
}

// A box's corners against a deformable's triangles: a 2 cm box of 0.2 kg set on the middle of one
// cell of a soft cube's top face (cells of 0.05 m), where no vertex of the cube lies under it,
// rests on the face by its bottom corners: their normal impulses carry its weight (1%: the face
// dimples under the corners, so the normals tilt and friction takes a share), the floor's both
// exactly (1e-5: a plane's normals are vertical), and it stays on the face (within 1 mm), at rest.
TEST(NsnDeformableTest, ASmallBoxRestsOnASoftFaceByItsCorners) {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(2, 2, 2, 0.05, 0.05, 0.05);
  const auto model = Import(
      "<geom name='floor' type='plane' size='5 5 0.1' friction='0.5'/><body name='box' "
      "pos='0.025 0.025 0.11'><freejoint/><geom name='box' type='box' size='0.01 0.01 0.01' "
      "mass='0.2'/></body>",
      "<deformables>" +
          Deformable("cube", grid, "young='1e5' poisson='0.3' density='1000' thickness='0'") +
          "</deformables>",
      0.01);
  ASSERT_NE(model, nullptr);
  Data d(*model);
  for (int n = 0; n < 200; ++n) ASSERT_EQ(Step(*model, d, TightNsn()), StepStatus::kOk) << n;
  const int box = 1;
  int corners = 0;
  for (const TriangleContact& contact : d.triangle_contact) corners += contact.geom == box;
  EXPECT_GE(corners, 4);
  EXPECT_NEAR(ContactForce(*model, d, box), 0.2 * kGravity, 0.01 * 0.2 * kGravity);
  const double weight = (0.2 + DeformableMass(*model)) * kGravity;
  EXPECT_NEAR(ContactForce(*model, d, 0), weight, 1e-5 * weight);
  EXPECT_GT(d.qpos[2], TopHeight(d, grid, 0) + 0.01 - 1e-3);
  EXPECT_LT(Vec3(d.qvel[0], d.qvel[1], d.qvel[2]).norm(), 1e-3);
}

// Deformable against deformable: a soft cube (0.1 m, 2 x 2 x 2 cells) resting on another, shifted
// by half a cell so that its bottom vertices stand on the lower cube's triangles: the
// vertex-triangle contacts (both ways round) carry the upper cube's weight (1e-3: normals tilted by
// the dimpled faces, friction taking the rest) and the floor both exactly (1e-5); the upper cube's
// bottom stays on the lower's top (within 1 mm).
TEST(NsnDeformableTest, ASoftCubeRestsOnAnother) {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(2, 2, 2, 0.05, 0.05, 0.05);
  const auto model = Import(
      "<geom name='floor' type='plane' size='5 5 0.1' friction='0.5'/>",
      "<deformables>" + Deformable("lower", grid, "young='1e5' poisson='0.3' density='1000'") +
          Deformable("upper", grid,
                     "young='1e5' poisson='0.3' density='500' pos='0.025 0.025 0.1'") +
          "</deformables>",
      0.01);
  ASSERT_NE(model, nullptr);
  Data d(*model);
  for (int n = 0; n < 200; ++n) ASSERT_EQ(Step(*model, d, TightNsn()), StepStatus::kOk) << n;
  ASSERT_FALSE(d.vertex_triangle_contact.empty());
  double between = 0;
  for (size_t k = 0; k < d.vertex_triangle_contact.size(); ++k) {
    between += Solver(d).vertex_triangle_impulse()[k] / model->timestep;
  }
  double upper = 0;
  for (int v = model->deform_vert_adr[1]; v < model->nvert; ++v) upper += model->vert_mass[v];
  EXPECT_NEAR(upper, 0.5, 1e-12);
  EXPECT_NEAR(between, upper * kGravity, 1e-3 * upper * kGravity);
  const double weight = DeformableMass(*model) * kGravity;
  EXPECT_NEAR(ContactForce(*model, d, 0), weight, 1e-5 * weight);
  double bottom = 0;
  for (int y = 0; y <= 2; ++y) {
    for (int x = 0; x <= 2; ++x)
      bottom += d.vert_xpos[model->deform_vert_adr[1] + grid.Id(x, y, 0)].z() / 9;
  }
  EXPECT_NEAR(bottom, TopHeight(d, grid, 0), 1e-3);
  EXPECT_EQ(Figure(d, "unconverged_islands"), 0);
}

TEST(NsnDeformableTest, OtherSolversRefuseAFreeDeformable) {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(1, 1, 1, 0.1, 0.1, 0.1);
  const auto free_cube = Import(
      "",
      "<deformables>" + Deformable("jelly", grid, "young='1e5' density='1000'") + "</deformables>",
      0.01);
  ASSERT_NE(free_cube, nullptr);
  ASSERT_EQ(free_cube->nvert, 8);
  ASSERT_EQ(free_cube->vert_body[0], -1);
  EXPECT_NE(SolverRefusesModel(*free_cube, SolverType::kSubAdmm)
                .find("cannot move the deformable 'jelly'; use solver 'nsn'"),
            std::string::npos)
      << SolverRefusesModel(*free_cube, SolverType::kSubAdmm);
  EXPECT_EQ(SolverRefusesModel(*free_cube, SolverType::kNsn), "");
  std::string all;
  for (int v = 0; v < 8; ++v) all += std::to_string(v) + " ";
  const auto pinned = Import(
      "",
      "<deformables>" +
          Deformable("jelly", grid, "young='1e5' density='1000'", "<pin vertices='" + all + "'/>") +
          "</deformables>",
      0.01);
  EXPECT_EQ(SolverRefusesModel(*pinned, SolverType::kSubAdmm), "");
}

// Two soft cubes falling onto the floor, one onto a rigid box: systems in parallel.
std::shared_ptr<const Model> Scatter() {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(2, 2, 2, 0.04, 0.04, 0.04);
  return Import(
      "<geom name='floor' type='plane' size='5 5 0.1' friction='0.6'/><body pos='1 0 0.1'>"
      "<freejoint/><geom type='box' size='0.1 0.1 0.1' mass='1'/></body><body pos='-1 0 0.1'>"
      "<freejoint/><geom type='sphere' size='0.1' mass='1'/></body>",
      "<deformables>" +
          Deformable("a", grid, "young='1e5' poisson='0.3' density='500' pos='0.95 -0.05 0.25'") +
          Deformable("b", grid,
                     "material='corotated' young='1e5' poisson='0.3' density='500' pos='0 0 "
                     "0.05'") +
          "</deformables>",
      0.005);
}

std::uint64_t HashAfterSteps(const Model& model, int threads) {
  Data d(model);
  StepOptions options;
  options.solver.type = SolverType::kNsn;
  RunWithThreads(threads, [&] {
    for (int n = 0; n < 100; ++n) EXPECT_EQ(Step(model, d, options), StepStatus::kOk);
  });
  return StateHash(model, d);
}

// Activations (Model's activation comment): a control a grows its tets' rest shape by 1 + a. A
// free cube (2 x 2 x 2 cells of 0.05 m, no gravity) with every tet activated at a = 0.1 settles
// at its rest shape scaled by 1.1 about its centroid: every tet edge 1.1 times its rest length
// (1e-6), the centroid where it was (no external force), for the linear and corotated materials
// (both stress-free there: no rotation). The activation is the scene's action column "grow".
TEST(NsnDeformableTest, AnActivatedCubeGrowsToItsScaledRestShape) {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(2, 2, 2, 0.05, 0.05, 0.05);
  std::string tets;
  for (size_t e = 0; e < grid.tets.size(); ++e) tets += std::to_string(e) + " ";
  for (const char* material : {"linear", "corotated"}) {
    const auto model =
        Import("",
               "<deformables>" +
                   Deformable("cube", grid,
                              std::string("material='") + material +
                                  "' young='1e5' poisson='0.3' density='1000' pos='0 0 1'",
                              "<activation name='grow' tets='" + tets + "' range='-0.5 0.5'/>") +
                   "</deformables>",
               0.01, "gravity='0 0 0'");
    ASSERT_NE(model, nullptr);
    ASSERT_EQ(model->nu, 1);
    EXPECT_EQ(model->actuator_name[0], "grow");
    Data d(*model);
    const auto centroid = [&] {
      Vec3 c = Vec3::Zero();
      for (int v = 0; v < model->nvert; ++v) c += d.vert_xpos[v] / model->nvert;
      return c;
    };
    const Vec3 start = centroid();
    d.ctrl[0] = 0.1;
    for (int n = 0; n < 300; ++n) ASSERT_EQ(Step(*model, d, TightNsn()), StepStatus::kOk) << n;
    double worst = 0;
    for (const auto& t : model->tet_vert) {
      for (int a = 0; a < 4; ++a) {
        for (int b = a + 1; b < 4; ++b) {
          const double rest = (model->vert_pos0[t[a]] - model->vert_pos0[t[b]]).norm();
          const double now = (d.vert_xpos[t[a]] - d.vert_xpos[t[b]]).norm();
          worst = std::max(worst, std::abs(now / rest - 1.1));
        }
      }
    }
    EXPECT_LT(worst, 1e-6) << material;
    EXPECT_LT((centroid() - start).norm(), 1e-12) << material;
    EXPECT_EQ(Figure(d, "unconverged_islands"), 0) << material;
    // Back to a = 0: the rest shape again; a control below its range is clamped to it.
    d.ctrl[0] = -3;
    for (int n = 0; n < 300; ++n) ASSERT_EQ(Step(*model, d, TightNsn()), StepStatus::kOk) << n;
    const double rest = (model->vert_pos0[0] - model->vert_pos0[1]).norm();
    EXPECT_NEAR((d.vert_xpos[0] - d.vert_xpos[1]).norm() / rest, 0.5, 1e-6) << material;
  }
}

// The paper's PneuNet mechanism (Sec 10.1.4): activating one layer of a bilayer bar (8 x 1 x 2
// cells of 0.05 m, corotated, nu = 0, free, no gravity) lengthens it and the bar curls away from
// the activated side: its ends fall below its middle (Timoshenko's bimetal strip), more at a
// larger activation; the unactivated bar stays straight.
TEST(NsnDeformableTest, ActivatingOneLayerOfABarBendsItAwayFromThatLayer) {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(8, 1, 2, 0.05, 0.05, 0.05);
  const int per_layer = 6 * 8 * 1;
  std::string top;
  for (int e = per_layer; e < 2 * per_layer; ++e) top += std::to_string(e) + " ";
  const auto model =
      Import("",
             "<deformables>" +
                 Deformable("bar", grid, "young='1e5' poisson='0' density='1000' pos='0 0 1'",
                            "<activation name='inflate' tets='" + top + "' range='0 0.2'/>") +
                 "</deformables>",
             0.01, "gravity='0 0 0'");
  ASSERT_NE(model, nullptr);
  // The mid-plane's sag: the middle column's mean z minus the two end columns' mean z.
  const auto sag = [&](const Data& d) {
    double middle = 0, ends = 0;
    for (int z = 0; z <= 2; ++z) {
      for (int y = 0; y <= 1; ++y) {
        middle += d.vert_xpos[grid.Id(4, y, z)].z() / 6;
        ends += (d.vert_xpos[grid.Id(0, y, z)].z() + d.vert_xpos[grid.Id(8, y, z)].z()) / 12;
      }
    }
    return middle - ends;
  };
  double previous = 0;
  for (const double a : {0.0, 0.05, 0.1}) {
    Data d(*model);
    d.ctrl[0] = a;
    for (int n = 0; n < 200; ++n) ASSERT_EQ(Step(*model, d, TightNsn()), StepStatus::kOk) << n;
    if (a == 0) {
      EXPECT_LT(std::abs(sag(d)), 1e-12);
    } else {
      EXPECT_GT(sag(d), previous + 1e-3) << a;
    }
    previous = sag(d);
  }
}

TEST(NsnDeformableTest, BitIdenticalForOneTwoAndEightThreads) {
  const auto model = Scatter();
  ASSERT_NE(model, nullptr);
  const std::uint64_t one = HashAfterSteps(*model, 1);
  EXPECT_EQ(HashAfterSteps(*model, 2), one);
  EXPECT_EQ(HashAfterSteps(*model, 8), one);
}

TEST(NsnDeformableTest, AWarmStepAllocatesNothing) {
  const auto model = Scatter();
  ASSERT_NE(model, nullptr);
  const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, 1);
  Data d(*model);
  StepOptions options;
  options.solver.type = SolverType::kNsn;
  for (int n = 0; n < 200; ++n) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
  long count = 0;
  {
    const testing::AllocationCounter allocations;
    for (int n = 0; n < 50; ++n) Step(*model, d, options);
    count = allocations.count();
  }
  EXPECT_EQ(count, 0);
}

}  // namespace
}  // namespace alsim
