// Drumwright's Fig. 9 (seed 003, Sec. 6.4; digest seed-003-drumwright.md 9.5): the box on the
// 15 degree incline (bench/drumwright_incline.h) for 1 s at h 0.01 and mu from 0 to 0.375: the
// distance it slides beside Coulomb's for the same stepping, g (sin - mu cos) T (T + h) / 2, the
// largest summed normal force over its spring law m g cos15, the first step's normal force beside
// the closed form of the binding cone (drumwright_incline.h), and the highest hop; at the paper's
// zeta = 1 / h (zeta h 1) and at zeta h 1e12 [OURS: zeta >> mu^2 a4^2, 2.5e12 at mu 0.375, so
// that lam_n keeps to its spring law]; then, at mu 0.125, the same over a sweep of zeta h.
//
// Usage: build/bin/drumwright_incline_bench [CSV] (CSV: docs/img/drumwright/fig9.csv);
//        /usr/bin/python3 bench/plot_drumwright_incline.py CSV PNG
#include <cmath>
#include <cstdio>
#include <string>

#include "bench/drumwright_incline.h"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "docs/img/drumwright/fig9.csv";
  std::FILE* csv = std::fopen(path.c_str(), "w");
  if (csv == nullptr) {
    std::fprintf(stderr, "drumwright_incline_bench: cannot write %s\n", path.c_str());
    return 1;
  }
  alsim::bench::InclineParameters incline;
  const int steps = 100;
  const double spring_law = incline.mass * incline.gravity * std::cos(incline.angle);
  std::fprintf(csv,
               "sweep,mu,zeta_h,distance,coulomb,max_normal,spring_law,first_normal,"
               "first_normal_formula,max_lift\n");
  std::printf(
      "| mu | zeta h | distance m | Coulomb m | largest normal / m g cos15 | first step's normal "
      "N (formula) | highest hop m |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  int failures = 0;
  const auto row = [&](const char* sweep, double mu) {
    const alsim::bench::InclineRun run = alsim::bench::SlideOnIncline(incline, mu, steps);
    if (!run.ok) {  // the convex program failed at some step: reported, not plotted
      std::printf("| %.4g | %.3g | the program failed at step %d | | | | |\n", mu, incline.zeta_h,
                  run.failed_step);
      ++failures;
      return;
    }
    const double coulomb = alsim::bench::CoulombDistance(incline, mu, steps);
    const double formula = alsim::bench::InflatedFirstNormal(incline, mu);
    std::fprintf(csv, "%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", sweep, mu,
                 incline.zeta_h, run.x, coulomb, run.max_normal, spring_law, run.first_normal,
                 formula, run.max_lift);
    std::printf("| %.4g | %.3g | %.6f | %.6f | %.4g | %.4f (%.4f) | %.3g |\n", mu, incline.zeta_h,
                run.x, coulomb, run.max_normal / spring_law, run.first_normal, formula,
                run.max_lift);
  };
  for (const double zeta_h : {1.0, 1e12}) {
    incline.zeta_h = zeta_h;
    for (int k = 0; k <= 15; ++k) row(zeta_h == 1 ? "mu_paper" : "mu_large_zeta", 0.025 * k);
  }
  for (const double zeta_h : {1.0, 1e2, 1e4, 1e6, 1e8, 1e9, 1e10, 1e11, 1e12, 1e14, 1e16}) {
    incline.zeta_h = zeta_h;
    row("zeta", 0.125);
  }
  std::printf("failed programs: %d\n", failures);
  return std::fclose(csv) == 0 && failures == 0 ? 0 : 1;
}
