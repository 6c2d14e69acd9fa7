// Drumwright's scalar spring-mass-damper (seed 003, Sec. 3; digest seed-003-drumwright.md
// section 2): the trajectories of the paper's Figs. 1-3 and the spectral radii of the three
// integrators' iteration matrices (bench/drumwright_scalar.h), to CSVs in DIR:
//   fig1.csv   explicit Euler, f = 0, h = 1e-5, m = 1, k = 1e6, b = 1, 10, 2e5 and 2.1e5;
//   fig2.csv   semi-implicit Euler, f = 0, h = 1e-3, m = 1, b = 1, k = 1e6 and 1e7;
//   fig3.csv   implicit Euler, f = 0, k = 1e6, m = 1, b = 0, h = 1e-5 and 1e-2;
//   radii.csv  every case above plus the semi-implicit bound k = 4.002e6: trace and det of A,
//              whether its eigenvalues are a complex pair, rho(A) and the stability: rho < 1,
//              rho = 1 (marginal) or rho > 1.
// The radii also go to stdout as a Markdown table.
//
// Choices the paper leaves open (its figures carry no axes in the text): every run starts from
// x0 = 1, v0 = 0 (a unit stretch at rest) with f = 0. Durations show each behavior without
// overflow: 0.5 s (5e4 steps, ~80 periods of omega = 1000 rad/s) for the explicit b = 1, 10 and
// 2e5; 2 ms (200 steps) for b = 2.1e5, whose growing mode gains 1.09995 a step; 2 s
// (2000 steps) for the semi-implicit k = 1e6 and 20 steps for k = 1e7 (7.864 a step); 0.1 s for
// both implicit steps (1e4 and 10 steps). Long runs are written every STRIDE-th step (50 for the
// explicit ones: ~12.6 samples a period; 10 for the implicit h = 1e-5: ~63), short ones every
// step. Each row carries the exact solution of eq. (3) at the same time (ExactState).
//
// Usage: build/bin/drumwright_scalar_bench [DIR] > radii.md (DIR: docs/img/drumwright);
//        /usr/bin/python3 bench/plot_drumwright_scalar.py DIR
#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/drumwright_scalar.h"

namespace {

using alsim::drumwright_scalar::Determinant;
using alsim::drumwright_scalar::EigenvaluesOf;
using alsim::drumwright_scalar::ExactState;
using alsim::drumwright_scalar::Integrator;
using alsim::drumwright_scalar::IntegratorName;
using alsim::drumwright_scalar::Map;
using alsim::drumwright_scalar::Params;
using alsim::drumwright_scalar::SemiImplicitStiffnessBound;
using alsim::drumwright_scalar::SpectralRadius;
using alsim::drumwright_scalar::Trajectory;

struct Run {
  Integrator integrator;
  Params params;
  int steps;
  int stride;
};

Params Make(double h, double b, double k) {
  Params p;
  p.m = 1.0;
  p.f = 0.0;
  p.h = h;
  p.b = b;
  p.k = k;
  return p;
}

bool WriteFigure(const std::string& path, const std::vector<Run>& runs) {
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  }
  std::fprintf(out, "integrator,h,m,b,k,step,t,x,v,x_exact,v_exact\n");
  const Eigen::Vector2d y0(1.0, 0.0);
  for (const Run& run : runs) {
    const Params& p = run.params;
    const std::vector<Eigen::Vector2d> y = Trajectory(run.integrator, p, y0, run.steps);
    for (int i = 0; i <= run.steps; i += run.stride) {
      const double t = i * p.h;
      const Eigen::Vector2d exact = ExactState(p, y0, t);
      std::fprintf(out, "%s,%g,%g,%g,%g,%d,%.6g,%.7g,%.7g,%.7g,%.7g\n",
                   IntegratorName(run.integrator), p.h, p.m, p.b, p.k, i, t, y[i][0], y[i][1],
                   exact[0], exact[1]);
    }
  }
  std::fclose(out);
  return true;
}

// Stable (rho < 1), marginal (rho = 1 to round-off: a pair on the unit circle, or the
// semi-implicit bound's eigenvalue -1) or not.
const char* Stability(double rho) {
  if (std::abs(rho - 1.0) <= 1e-9) return "marginal";
  return rho < 1.0 ? "yes" : "no";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "docs/img/drumwright";
  const Integrator ee = Integrator::kExplicit;
  const Integrator sie = Integrator::kSemiImplicit;
  const Integrator ie = Integrator::kImplicit;
  const std::vector<Run> fig1 = {{ee, Make(1e-5, 1.0, 1e6), 50000, 50},
                                 {ee, Make(1e-5, 10.0, 1e6), 50000, 50},
                                 {ee, Make(1e-5, 2e5, 1e6), 50000, 50},
                                 {ee, Make(1e-5, 2.1e5, 1e6), 200, 1}};
  const std::vector<Run> fig2 = {{sie, Make(1e-3, 1.0, 1e6), 2000, 1},
                                 {sie, Make(1e-3, 1.0, 1e7), 20, 1}};
  const std::vector<Run> fig3 = {{ie, Make(1e-5, 0.0, 1e6), 10000, 10},
                                 {ie, Make(1e-2, 0.0, 1e6), 10, 1}};
  if (!WriteFigure(dir + "/fig1.csv", fig1) || !WriteFigure(dir + "/fig2.csv", fig2) ||
      !WriteFigure(dir + "/fig3.csv", fig3)) {
    return 1;
  }

  std::vector<Run> cases = fig1;
  cases.insert(cases.end(), fig2.begin(), fig2.end());
  const Params bound = Make(1e-3, 1.0, 0.0);
  cases.push_back({sie, Make(1e-3, 1.0, SemiImplicitStiffnessBound(bound)), 0, 1});
  cases.insert(cases.end(), fig3.begin(), fig3.end());

  const std::string path = dir + "/radii.csv";
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return 1;
  }
  std::fprintf(out, "integrator,h,m,b,k,trace,det,complex_pair,rho,stable\n");
  std::printf("| integrator | h | b | k | trace A | det A | eigenvalues | rho(A) | stable |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Run& run : cases) {
    const Params& p = run.params;
    const Eigen::Matrix2d a = Map(run.integrator, p).A;
    const bool complex_pair = EigenvaluesOf(a).complex_pair;
    const double rho = SpectralRadius(a);
    std::fprintf(out, "%s,%g,%g,%g,%.10g,%.10g,%.10g,%d,%.10g,%s\n", IntegratorName(run.integrator),
                 p.h, p.m, p.b, p.k, a.trace(), Determinant(a), complex_pair ? 1 : 0, rho,
                 Stability(rho));
    std::printf("| %s | %g | %g | %.10g | %.7f | %.7f | %s | %.7f | %s |\n",
                IntegratorName(run.integrator), p.h, p.b, p.k, a.trace(), Determinant(a),
                complex_pair ? "complex pair" : "real", rho, Stability(rho));
  }
  std::fclose(out);
  return 0;
}
