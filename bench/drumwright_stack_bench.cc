// Drumwright's Fig. 10 (seed 003, Sec. 6.5; digest seed-003-drumwright.md 9.6): stacks of 1 to
// 100 spheres dropped from mid-air (bench/drumwright_stack.h: radius 0.05 m, steel, E* 1e11 Pa,
// B_n 1, mu 0.5, B_t = 1e6 / h, zeta = 1 / h, 5 mm gaps), 500 steps of h = 10 ms on the dense
// first-order step, with the linearized Hertz row and with the paper's (bench/drumwright_hertz.h).
// Then the same stack started at rest at its Hertz static depths (linearized row): every contact
// a row from the first step. Per count and case: the wall time per step and per simulated second
// (the step's program is the dense conic QP of 3 variables per contact: no structured path applies
// to cones), the mean contacts per step, the most interior-point iterations, and whether the stack
// stands: the largest horizontal drift, the highest rise of a centre above its start (a launched
// top), the largest speed at the end, and the final depths against Hertz's static d_k.
//
// Usage: build/bin/drumwright_stack_bench [CSV [MAX_SPHERES]]
//        (CSV: docs/img/drumwright/fig10.csv; MAX_SPHERES 100);
//        /usr/bin/python3 bench/plot_drumwright_stack.py CSV PNG
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/drumwright_stack.h"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "docs/img/drumwright/fig10.csv";
  const int max_spheres = argc > 2 ? std::atoi(argv[2]) : 100;
  std::FILE* csv = std::fopen(path.c_str(), "w");
  if (csv == nullptr) {
    std::fprintf(stderr, "drumwright_stack_bench: cannot write %s\n", path.c_str());
    return 1;
  }
  const int steps = 500;
  std::fprintf(csv,
               "case,spheres,ok,wall_per_step,wall_per_second,mean_contacts,max_iterations,"
               "max_drift,max_rise,end_speed,max_depth_error\n");
  std::printf(
      "| case | spheres | ms per step | s per simulated s | mean contacts | most iterations | "
      "drift m | highest rise m | end speed m/s | max depth error vs Hertz |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  int failures = 0;
  for (const int spheres : {1, 2, 5, 10, 20, 50, 100}) {
    if (spheres > max_spheres) break;
    for (int variant = 0; variant < 3; ++variant) {
      alsim::bench::StackParameters stack;
      stack.spheres = spheres;
      stack.row =
          variant == 1 ? alsim::bench::HertzRow::kPaper : alsim::bench::HertzRow::kLinearized;
      stack.settled = variant == 2;
      const auto start = std::chrono::steady_clock::now();
      const alsim::bench::StackRun run = alsim::bench::DropStack(stack, steps);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const char* name = variant == 0 ? "linearized" : variant == 1 ? "paper" : "settled";
      if (!run.ok) ++failures;
      const double per_step = wall / run.steps;
      const double per_second = per_step / stack.h;
      const double mean_contacts = run.contact_steps / run.steps;
      std::fprintf(csv, "%s,%d,%d,%.6g,%.6g,%.6g,%d,%.6g,%.6g,%.6g,%.6g\n", name, spheres,
                   run.ok ? 1 : 0, per_step, per_second, mean_contacts, run.max_iterations,
                   run.max_drift, run.max_height, run.max_speed, run.max_depth_error);
      std::printf("| %s | %d | %.3g | %.3g | %.1f | %d | %.2g | %.3g | %.3g | %.3g |%s\n", name,
                  spheres, 1e3 * per_step, per_second, mean_contacts, run.max_iterations,
                  run.max_drift, run.max_height, run.max_speed, run.max_depth_error,
                  run.ok ? "" : " (a program failed)");
      std::fflush(stdout);
    }
  }
  std::printf("failed runs: %d\n", failures);
  return std::fclose(csv) == 0 && failures == 0 ? 0 : 1;
}
