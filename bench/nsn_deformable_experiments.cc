// The deformable experiments of the non-smooth Newton paper (Macklin et al. 2019, seed 002; digest
// seed-002-nsn.md 9.2 item 7 and 9.3) on `--solver nsn`:
//   fig13  Figs. 12 and 13: the material extension: linear corotated against stable Neo-Hookean
//   (the paper's
//          E = 1e5 Pa, nu = 0.45; its geometry and extension are not given, so ours): a bar of
//          2 x 2 x 10 Kuhn cells (0.04 x 0.04 x 0.2 m, rho 1000, no gravity), its bottom layer
//          pinned and its top layer attached to a rigid puller (1 kg, a vertical slide held by a
//          position servo, kp 1e5 N/m, kv 1e3 N s/m) whose target rises linearly to +0.2 m (twice
//          the bar's length) over 2 s and then holds for 0.5 s; h = 0.0083 s, converged Newton
//          (tolerance 1e-8, 200 iterations), each with and without the geometric stiffness
//          (NsnParameters::geometric_stiffness; "+gs"). Per step the bar's length over its rest
//          length, its volume over its rest volume (the tets' signed volumes summed) and the Newton
//          iterations, into fig13.csv; the paper's claim: the linear model loses much volume at
//          large strain, the hyperelastic one resists volume change. And Fig. 12 (the paper's
//          stretched sheet, merit with and without geometric stiffness): every Newton
//          iterate's residuals of two steps of the same pull (targets 1.5x and 1.95x), into
//          fig12.csv.
// Writes its CSV into DIR (default /tmp/nsn_deformable_out); bench/plot_nsn_deformable.py plots it.
//
// Usage: build/bin/nsn_deformable_experiments [fig13] [DIR] [PREFIX] (PREFIX: only the variants
//        whose label starts with it, e.g. neohookean)
//        /usr/bin/python3 bench/plot_nsn_deformable.py DIR docs/img/nsn
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/nsn/nsn_solver.h"
#include "engine/solver/solver.h"
#include "tests/support/kuhn_grid.h"

namespace {

using alsim::Data;
using alsim::Model;
using alsim::Vec3;

constexpr double kPaperStep = 0.0083;  // s, Table 2: every scene

std::string Num(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// The last step's solver figure `name` (0 when absent).
double Figure(const Data& d, const char* name) {
  const alsim::SolverStatistics& s = d.solver_statistics;
  for (int k = 0; k < s.num_figures; ++k) {
    if (std::string(name) == s.figures[k].name) return s.figures[k].value;
  }
  return 0;
}

// The bar's volume: its tets' signed volumes at the current vertex positions, m^3.
double Volume(const Model& m, const Data& d) {
  double volume = 0;
  for (const auto& t : m.tet_vert) {
    const Vec3& x0 = d.vert_xpos[t[0]];
    volume +=
        (d.vert_xpos[t[1]] - x0).dot((d.vert_xpos[t[2]] - x0).cross(d.vert_xpos[t[3]] - x0)) / 6;
  }
  return volume;
}

void Fig13(const std::string& dir, const std::string& only) {
  constexpr int kCells = 10;
  constexpr double kCell = 0.02, kLength = kCells * kCell, kRise = 0.2, kRamp = 2, kHold = 0.5;
  constexpr int kRecordA = 120, kRecordB = 228;  // targets 1.5 and 1.95 times the length
  const alsim::testing::KuhnGrid grid =
      alsim::testing::MakeKuhnGrid(2, 2, kCells, kCell, kCell, kCell);
  std::string bottom, top;
  for (int y = 0; y <= 2; ++y) {
    for (int x = 0; x <= 2; ++x) {
      bottom += std::to_string(grid.Id(x, y, 0)) + " ";
      top += std::to_string(grid.Id(x, y, kCells)) + " ";
    }
  }
  const std::string path = dir + "/fig13.csv";
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "nsn_deformable_experiments: cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::fprintf(out, "material,step,time,stretch,volume_ratio,newton_iterations\n");
  const std::string path12 = dir + "/fig12.csv";
  std::FILE* out12 = std::fopen(path12.c_str(), "w");
  if (out12 == nullptr) {
    std::fprintf(stderr, "nsn_deformable_experiments: cannot write %s\n", path12.c_str());
    std::exit(1);
  }
  std::fprintf(out12, "material,step,iteration,momentum_residual,row_residual\n");
  std::printf(
      "| material | volume at stretch 1.5 | final stretch | final volume | Newton iterations "
      "(mean, "
      "max) |\n");
  std::printf("|---|---|---|---|---|\n");
  struct Variant {
    const char* material;
    bool geometric;
  };
  for (const Variant variant : {Variant{"corotated", false}, Variant{"corotated", true},
                                Variant{"neohookean", false}, Variant{"neohookean", true}}) {
    const char* material = variant.material;
    const std::string label = std::string(material) + (variant.geometric ? "+gs" : "");
    if (!only.empty() && label.rfind(only, 0) != 0) continue;
    const std::string scene =
        "<mujoco><option timestep='" + Num(kPaperStep) +
        "' gravity='0 0 0'/><custom><text name='alsim:deformables' data='bar.xml'/></custom>"
        "<worldbody><body name='puller' pos='0.02 0.02 " +
        Num(kLength) +
        "'><joint name='pull' type='slide' axis='0 0 1'/><geom type='box' size='0.03 0.03 0.005' "
        "mass='1' contype='0' conaffinity='0'/></body></worldbody><actuator><position "
        "name='pull' joint='pull' kp='1e5'/><velocity name='damp' joint='pull' kv='1e3'/>"
        "</actuator></mujoco>";
    const std::string companion =
        "<deformables><deformable name='bar' material='" + std::string(material) +
        "' young='1e5' poisson='0.45' density='1000'>" + alsim::testing::TetMeshXml(grid) +
        "<pin vertices='" + bottom + "'/><attach body='puller' vertices='" + top +
        "'/></deformable></deformables>";
    const alsim::ModelImport imported =
        alsim::ImportModelFromString(scene, {{"bar.xml", companion}}, "bar_scene.xml");
    if (!imported) {
      std::fprintf(stderr, "nsn_deformable_experiments: %s\n", imported.error.c_str());
      std::exit(1);
    }
    const Model& m = *imported.model;
    Data d(m);
    alsim::StepOptions options;
    options.solver.type = alsim::SolverType::kNsn;
    options.solver.nsn.newton_tolerance = 1e-8;
    options.solver.nsn.newton_iterations = 200;
    options.solver.nsn.geometric_stiffness = variant.geometric;
    const double rest_volume = Volume(m, d);
    alsim::EnsureSolver(m, d, alsim::SolverType::kNsn);
    auto* nsn = static_cast<alsim::NsnSolver*>(d.solver.get());
    const int steps = static_cast<int>(std::lround((kRamp + kHold) / kPaperStep));
    double at_15 = 0, final_stretch = 0, final_volume = 0, iterations = 0, most = 0;
    for (int n = 0; n < steps; ++n) {
      const double t = (n + 1) * kPaperStep;
      d.ctrl[0] = kRise * std::min(t / kRamp, 1.0);
      d.ctrl[1] = 0;
      // Fig. 12: every Newton iterate's residuals of the steps at stretch ~1.5 and ~1.9 (the
      // target's), the bar and puller being the one system.
      const bool record = n == kRecordA || n == kRecordB;
      nsn->set_record_history(record);
      if (alsim::Step(m, d, options) != alsim::StepStatus::kOk) {
        std::fprintf(stderr, "nsn_deformable_experiments: step %d failed\n", n);
        std::exit(1);
      }
      double z_top = 0, z_bottom = 0;
      for (int y = 0; y <= 2; ++y) {
        for (int x = 0; x <= 2; ++x) {
          z_top += d.vert_xpos[grid.Id(x, y, kCells)].z() / 9;
          z_bottom += d.vert_xpos[grid.Id(x, y, 0)].z() / 9;
        }
      }
      const double stretch = (z_top - z_bottom) / kLength;
      const double ratio = Volume(m, d) / rest_volume;
      const double it = Figure(d, "newton_iterations");
      iterations += it;
      most = std::max(most, it);
      if (at_15 == 0 && stretch >= 1.5) at_15 = ratio;
      if (record) {
        const auto& history = nsn->history(0);
        for (size_t k = 0; k < history.size(); ++k) {
          std::fprintf(out12, "%s,%d,%zu,%.6g,%.6g\n", label.c_str(), n, k,
                       history[k].momentum_residual, history[k].row_residual);
        }
      }
      final_stretch = stretch;
      final_volume = ratio;
      std::fprintf(out, "%s,%d,%.6f,%.9g,%.9g,%g\n", label.c_str(), n, t, stretch, ratio, it);
    }
    std::printf("| %s | %.4f | %.4f | %.4f | %.1f, %.0f |\n", label.c_str(), at_15, final_stretch,
                final_volume, iterations / steps, most);
  }
  std::fclose(out);
  std::fclose(out12);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "fig13";
  const std::string dir = argc > 2 ? argv[2] : "/tmp/nsn_deformable_out";
  if (std::system(("mkdir -p '" + dir + "'").c_str()) != 0) return 1;
  if (what == "fig13") {
    Fig13(dir, argc > 3 ? argv[3] : "");
    return 0;
  }
  std::fprintf(stderr, "usage: nsn_deformable_experiments [fig13] [DIR]\n");
  return 2;
}
