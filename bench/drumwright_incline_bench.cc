// Drumwright's Fig. 9 (seed 003, Sec. 6.4; digest seed-003-drumwright.md 9.5): the box on the
// 15 degree incline (bench/drumwright_incline.h) for 1 s at h 0.01 and mu from 0 to 0.375:
// the distance it slides beside Coulomb's for the same stepping, g (sin - mu cos) T (T + h) / 2,
// and the largest summed normal force over its spring law m g cos15 (the inflation of test H:
// the objective trades the tangential slack against lam_n while the cone binds); then, at mu
// 0.125, the same over a sweep of zeta h (the paper's zeta = 1 / h is zeta h = 1).
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
  std::fprintf(csv, "sweep,mu,zeta_h,distance,coulomb,max_normal,spring_law\n");
  std::printf("| mu | zeta h | distance m | Coulomb m | largest normal / m g cos15 |\n");
  std::printf("|---|---|---|---|---|\n");
  const auto row = [&](const char* sweep, double mu) {
    const alsim::bench::InclineRun run = alsim::bench::SlideOnIncline(incline, mu, steps);
    if (!run.ok) {  // the convex program failed at some step: reported, not plotted
      std::printf("| %.4g | %.3g | a step's program failed | | |\n", mu, incline.zeta_h);
      return;
    }
    const double coulomb = alsim::bench::CoulombDistance(incline, mu, steps);
    std::fprintf(csv, "%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", sweep, mu, incline.zeta_h, run.x,
                 coulomb, run.max_normal, spring_law);
    std::printf("| %.4g | %.3g | %.6f | %.6f | %.4f |\n", mu, incline.zeta_h, run.x, coulomb,
                run.max_normal / spring_law);
  };
  for (int k = 0; k <= 15; ++k) {
    row("mu", 0.025 * k);
  }
  for (const double zeta_h : {1.0, 1e2, 1e4, 1e6, 1e8, 1e10}) {
    incline.zeta_h = zeta_h;
    row("zeta", 0.125);
  }
  return std::fclose(csv) == 0 ? 0 : 1;
}
