// Drumwright's Tables 1-2 (seed 003, Sec. 5.5; digest seed-003-drumwright.md 9.4): the cube on
// the elastic foundation (bench/drumwright_foundation.h) for 1 s, 8 rows (load 5 / 50 N,
// 100 / 900 elements, E 1e7 / 1e11 Pa).
//
// Table 1: wall seconds per simulated second, one thread, of
//   ours      the first-order step at h 0.01 (SolveFirstOrderStep, the low-rank QP path);
//   BDF1      SUNDIALS CVODE, BDF of max order 1, Newton with a dense difference-quotient
//             Jacobian, RelTol 1e-3, AbsTol 1e-6 (ode15s's defaults; ode15s "in first order"),
//             first step 0.01 (the paper's h), max step 0.1 (ode15s's default, a tenth of the
//             span);
//   DP5(4)    Boost.Odeint's controlled runge_kutta_dopri5 at RelTol 1e-3, AbsTol 1e-6 (ode45's
//             defaults; Boost's error norm |err_i| / (AbsTol + RelTol (|y_i| + dt |y'_i|)), not
//             MATLAB's), first step 0.01, max step 0.1;
// both baselines on the law (68) itself, no event location (as MATLAB without Events), each
// capped at --max-seconds of wall time (the simulated time reached is reported then).
// Table 2: |q(1) - q_ref(1)| over (position, quaternion) and relative to |q_ref(1)| for ours at
// h 0.01 (and 1e-3 for the 50 N, 100-element rows, the paper's 3.14e-3 and 9.22e-5), where q_ref
// is the reference: the continuous model with its switches located, by RKF7(8) at 1e-12 (absolute
// and relative); its uncertainty is |q_ref - q_DP5| with DP5(4) at 1e-12 the same way. A row whose
// error is not 10x its uncertainty is marked. Also the fewest elements with phi <= 0 (ours: rows
// of a step; the reference: at step ends after the start): below n the cube lifted off.
// References are slow (the paper's ode45 took up to 17400 s); each is cached in --cache (one CSV
// line per row and method; a run with a cap that stopped short is not cached) so that rows can be
// computed in separate processes.
//
// Usage: build/bin/drumwright_foundation_bench [--elements 100|900] [--modulus 1e7|1e11]
//          [--load 5|50] [--max-seconds S (120)] [--reference-seconds S (7200)]
//          [--cache FILE (docs/img/drumwright/foundation_reference.csv)] [--reference-only]
//          [--method 'RKF7(8)'|'DP5(4)' (compute only that reference)] [--out DIR
//          (docs/img/drumwright)]
// writes DIR/table1.csv, DIR/table2.csv (the rows run) and DIR/fig7.csv (the element forces of
// ours at t = 1 for 900 elements, E 1e7, 50 N, when that row runs); prints both tables.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "bench/drumwright_foundation.h"

namespace {

using alsim::bench::CubeState;
using alsim::bench::FoundationOde;
using alsim::bench::FoundationParameters;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Row {
  double load;
  int elements;
  double modulus;
  // The paper's Table 1 (constraint-based, ode15s, ode45 seconds) and Table 2 (absolute error).
  double paper_ours, paper_ode15s, paper_ode45, paper_error;
};

// Table 2's order; Table 1's numbers beside each.
const Row kRows[] = {
    {5, 100, 1e7, 0.331, 0.302, 28.0, 2.96e-5}, {5, 100, 1e11, 0.286, 0.189, 27.4, 2.91e-7},
    {5, 900, 1e7, 7.40, 4.75, 829, 1.98e-5},    {5, 900, 1e11, 8.23, 1.10, 17100, 2.71e-9},
    {50, 100, 1e7, 0.332, 9.55, 15.5, 0.813},   {50, 100, 1e11, 0.396, 5550, 621, 0.814},
    {50, 900, 1e7, 12.98, 27.3, 346, 1.0e-2},   {50, 900, 1e11, 26.00, 2.31, 17400, 1.0e-2},
};

FoundationParameters ParametersOf(const Row& row) {
  FoundationParameters s;
  s.load = row.load;
  s.per_side = row.elements == 900 ? 30 : 10;
  s.modulus = row.modulus;
  return s;
}

struct Run {
  bool ok = false;
  double t_reached = 0, seconds = 0;
  CubeState end;
  long steps = 0, evaluations = 0;
  int min_contacts = 0;
};

// Ours at step h over [0, 1].
Run RunOurs(const FoundationParameters& s, double h, Eigen::VectorXd* forces = nullptr) {
  const std::vector<Eigen::Vector3d> elements = alsim::bench::FoundationElements(s);
  Run run;
  run.end = alsim::bench::RestingCube(s);
  run.min_contacts = s.Elements();
  const int steps = static_cast<int>(std::lround(1.0 / h));
  const Clock::time_point start = Clock::now();
  for (int n = 0; n < steps; ++n) {
    const alsim::bench::FoundationStep step =
        alsim::bench::StepFoundation(s, elements, n * h, h, &run.end);
    if (!step.ok) {
      run.seconds = Since(start);
      return run;
    }
    if (n > 0) run.min_contacts = std::min(run.min_contacts, step.rows);
    if (forces != nullptr) *forces = step.forces;
    ++run.steps;
    run.t_reached = (n + 1) * h;
  }
  run.seconds = Since(start);
  run.ok = true;
  return run;
}

struct CvodeData {
  const FoundationParameters* s;
  const std::vector<Eigen::Vector3d>* elements;
  long evaluations = 0;
};

int CvodeRhs(sunrealtype t, N_Vector y, N_Vector ydot, void* user) {
  auto* data = static_cast<CvodeData*>(user);
  FoundationOde in, out;
  std::memcpy(in.data(), N_VGetArrayPointer(y), sizeof(in));
  alsim::bench::FoundationDerivative(*data->s, *data->elements, nullptr, in, out, t);
  std::memcpy(N_VGetArrayPointer(ydot), out.data(), sizeof(out));
  ++data->evaluations;
  return 0;
}

// CVODE BDF of max order 1 (header comment).
Run RunCvode(const FoundationParameters& s, double max_seconds) {
  const std::vector<Eigen::Vector3d> elements = alsim::bench::FoundationElements(s);
  Run run;
  CvodeData data{&s, &elements};
  SUNContext context = nullptr;
  if (SUNContext_Create(nullptr, &context) != 0) return run;
  const FoundationOde y0 = alsim::bench::ToOde(alsim::bench::RestingCube(s));
  N_Vector y = N_VNew_Serial(13, context);
  std::memcpy(N_VGetArrayPointer(y), y0.data(), sizeof(y0));
  void* memory = CVodeCreate(CV_BDF, context);
  SUNMatrix matrix = SUNDenseMatrix(13, 13, context);
  SUNLinearSolver solver = SUNLinSol_Dense(y, matrix, context);
  bool ok =
      CVodeInit(memory, CvodeRhs, 0.0, y) == CV_SUCCESS &&
      CVodeSStolerances(memory, 1e-3, 1e-6) == CV_SUCCESS &&
      CVodeSetUserData(memory, &data) == CV_SUCCESS && CVodeSetMaxOrd(memory, 1) == CV_SUCCESS &&
      CVodeSetLinearSolver(memory, solver, matrix) == CV_SUCCESS &&
      CVodeSetInitStep(memory, 0.01) == CV_SUCCESS && CVodeSetMaxStep(memory, 0.1) == CV_SUCCESS &&
      CVodeSetMaxNumSteps(memory, -1) == CV_SUCCESS &&  // no limit: the wall cap stops it
      CVodeSetStopTime(memory, 1.0) == CV_SUCCESS;
  const Clock::time_point start = Clock::now();
  sunrealtype t = 0;
  while (ok && t < 1.0) {
    if (CVode(memory, 1.0, y, &t, CV_ONE_STEP) < 0) {
      ok = false;
      break;
    }
    if (Since(start) > max_seconds) break;
  }
  run.seconds = Since(start);
  run.t_reached = t;
  run.ok = ok && t >= 1.0;
  FoundationOde end;
  std::memcpy(end.data(), N_VGetArrayPointer(y), sizeof(end));
  run.end = alsim::bench::FromOde(end);
  long steps = 0;
  CVodeGetNumSteps(memory, &steps);
  run.steps = steps;
  run.evaluations = data.evaluations;
  CVodeFree(&memory);
  SUNLinSolFree(solver);
  SUNMatDestroy(matrix);
  N_VDestroy(y);
  SUNContext_Free(&context);
  return run;
}

// Boost's controlled Dormand-Prince 5(4) at ode45's defaults (header comment).
Run RunDopri(const FoundationParameters& s, double max_seconds) {
  namespace odeint = boost::numeric::odeint;
  const std::vector<Eigen::Vector3d> elements = alsim::bench::FoundationElements(s);
  Run run;
  auto sys = [&](const FoundationOde& x, FoundationOde& dx, double t) {
    ++run.evaluations;
    alsim::bench::FoundationDerivative(s, elements, nullptr, x, dx, t);
  };
  using Stepper = odeint::runge_kutta_dopri5<FoundationOde>;
  auto stepper = odeint::make_controlled<Stepper>(1e-6, 1e-3, 0.1);
  FoundationOde y = alsim::bench::ToOde(alsim::bench::RestingCube(s));
  double t = 0, dt = 0.01;
  const Clock::time_point start = Clock::now();
  while (t < 1.0) {
    if ((run.steps & 1023) == 0 && Since(start) > max_seconds) break;
    dt = std::min(dt, 1.0 - t);
    if (stepper.try_step(sys, y, t, dt) == odeint::success) {
      ++run.steps;
      if (1.0 - t < 1e-15) t = 1.0;
    }
  }
  run.seconds = Since(start);
  run.t_reached = t;
  run.ok = t >= 1.0;
  run.end = alsim::bench::FromOde(y);
  return run;
}

// The reference cache: one line per (elements, modulus, load, method).
using CacheKey = std::tuple<int, double, double, std::string>;

std::map<CacheKey, alsim::bench::ReferenceRun> ReadCache(const std::string& path) {
  std::map<CacheKey, alsim::bench::ReferenceRun> cache;
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return cache;
  char line[1024];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    int elements = 0, min_contacts = 0;
    double modulus = 0, load = 0, tolerance = 0, t_reached = 0, seconds = 0;
    long steps = 0, events = 0;
    char method[32] = {0};
    double q[7];
    if (std::sscanf(line, "%d,%lf,%lf,%31[^,],%lf,%lf,%ld,%ld,%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf",
                    &elements, &modulus, &load, method, &tolerance, &t_reached, &steps, &events,
                    &min_contacts, &seconds, &q[0], &q[1], &q[2], &q[3], &q[4], &q[5],
                    &q[6]) != 17) {
      continue;  // the header
    }
    alsim::bench::ReferenceRun run;
    run.ok = true;
    run.t_reached = t_reached;
    run.steps = steps;
    run.events = events;
    run.min_contacts = min_contacts;
    run.seconds = seconds;
    run.end.position = Eigen::Vector3d(q[0], q[1], q[2]);
    run.end.orientation = Eigen::Quaterniond(q[3], q[4], q[5], q[6]);
    cache[CacheKey{elements, modulus, load, method}] = run;
  }
  std::fclose(f);
  return cache;
}

void AppendCache(const std::string& path, const CacheKey& key, double tolerance,
                 const alsim::bench::ReferenceRun& run) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) return;
  if (std::ftell(f) == 0) {
    std::fprintf(f,
                 "elements,modulus,load,method,tolerance,t_reached,steps,events,min_contacts,"
                 "seconds,x,y,z,qw,qx,qy,qz\n");
  }
  const CubeState& c = run.end;
  std::fprintf(
      f, "%d,%.17g,%.17g,%s,%.3g,%.17g,%ld,%ld,%d,%.3f,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n",
      std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key).c_str(), tolerance,
      run.t_reached, run.steps, run.events, run.min_contacts, run.seconds, c.position.x(),
      c.position.y(), c.position.z(), c.orientation.w(), c.orientation.x(), c.orientation.y(),
      c.orientation.z());
  std::fclose(f);
}

std::string Seconds(const Run& run, double cap) {
  char text[96];
  if (run.ok) {
    std::snprintf(text, sizeof(text), "%.3g", run.seconds);
  } else if (run.seconds > cap) {
    std::snprintf(text, sizeof(text), "> %.0f (t %.3g s)", cap, run.t_reached);
  } else {
    std::snprintf(text, sizeof(text), "failed at t %.3g s", run.t_reached);
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  int only_elements = 0;
  double only_modulus = 0, only_load = 0, max_seconds = 120, reference_seconds = 7200;
  std::string cache_path = "docs/img/drumwright/foundation_reference.csv";
  std::string out = "docs/img/drumwright";
  bool reference_only = false;
  std::string only_method;  // RKF7(8) or DP5(4): compute only that reference
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--elements" && has_value) {
      only_elements = std::atoi(argv[++i]);
    } else if (arg == "--modulus" && has_value) {
      only_modulus = std::atof(argv[++i]);
    } else if (arg == "--load" && has_value) {
      only_load = std::atof(argv[++i]);
    } else if (arg == "--max-seconds" && has_value) {
      max_seconds = std::atof(argv[++i]);
    } else if (arg == "--reference-seconds" && has_value) {
      reference_seconds = std::atof(argv[++i]);
    } else if (arg == "--cache" && has_value) {
      cache_path = argv[++i];
    } else if (arg == "--out" && has_value) {
      out = argv[++i];
    } else if (arg == "--method" && has_value) {
      only_method = argv[++i];
    } else if (arg == "--reference-only") {
      reference_only = true;
    } else {
      std::fprintf(stderr, "drumwright_foundation_bench: unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  constexpr double kTolerance = 1e-12;
  const alsim::bench::ReferenceMethod methods[] = {alsim::bench::ReferenceMethod::kFehlberg78,
                                                   alsim::bench::ReferenceMethod::kDormandPrince5};

  std::FILE* table1 = nullptr;
  std::FILE* table2 = nullptr;
  if (!reference_only) {
    table1 = std::fopen((out + "/table1.csv").c_str(), "w");
    table2 = std::fopen((out + "/table2.csv").c_str(), "w");
    if (table1 == nullptr || table2 == nullptr) {
      std::fprintf(stderr, "drumwright_foundation_bench: cannot write to %s\n", out.c_str());
      return 1;
    }
    std::fprintf(table1,
                 "elements,load,modulus,ours_s,ours_ok,bdf1_s,bdf1_ok,bdf1_t,bdf1_steps,"
                 "bdf1_rhs,dp54_s,dp54_ok,dp54_t,dp54_steps,dp54_rhs,bdf1_error,dp54_error,"
                 "paper_ours_s,paper_ode15s_s,paper_ode45_s\n");
    std::fprintf(table2,
                 "load,elements,modulus,h,error,relative,uncertainty,claimed,ours_min_rows,"
                 "reference_min_contacts,reference_events,paper_error\n");
  }
  std::vector<std::string> lines1, lines2;
  for (const Row& row : kRows) {
    if ((only_elements != 0 && row.elements != only_elements) ||
        (only_modulus != 0 && row.modulus != only_modulus) ||
        (only_load != 0 && row.load != only_load)) {
      continue;
    }
    const FoundationParameters s = ParametersOf(row);
    const std::vector<Eigen::Vector3d> elements = alsim::bench::FoundationElements(s);
    // The references, cached.
    alsim::bench::ReferenceRun reference[2];
    bool have_reference = true;
    for (int m = 0; m < 2; ++m) {
      const CacheKey key{row.elements, row.modulus, row.load,
                         alsim::bench::ReferenceMethodName(methods[m])};
      const auto cache = ReadCache(cache_path);
      const auto found = cache.find(key);
      if (found != cache.end()) {
        reference[m] = found->second;
        continue;
      }
      if (!only_method.empty() && only_method != std::get<3>(key)) {
        have_reference = false;
        continue;
      }
      reference[m] =
          alsim::bench::IntegrateReference(s, elements, alsim::bench::RestingCube(s), 1.0,
                                           methods[m], kTolerance, reference_seconds);
      std::fprintf(
          stderr, "reference %d el, E %.0e, %.0f N, %s: t %.4g, %ld steps, %ld events, %.1f s\n",
          row.elements, row.modulus, row.load, std::get<3>(key).c_str(), reference[m].t_reached,
          reference[m].steps, reference[m].events, reference[m].seconds);
      if (reference[m].ok) {
        AppendCache(cache_path, key, kTolerance, reference[m]);
      } else {
        have_reference = false;
      }
    }
    if (reference_only) continue;
    const CubeState& truth = reference[0].end;
    const double size = alsim::bench::Coordinates(truth).norm();
    const double uncertainty =
        have_reference ? alsim::bench::CoordinateError(reference[1].end, truth) : NAN;

    // Table 1.
    Eigen::VectorXd forces;
    const bool fig7 = row.elements == 900 && row.modulus == 1e7 && row.load == 50;
    const Run ours = RunOurs(s, 0.01, fig7 ? &forces : nullptr);
    const Run bdf1 = RunCvode(s, max_seconds);
    const Run dp54 = RunDopri(s, max_seconds);
    const auto error_of = [&](const Run& run) {
      return run.ok && have_reference ? alsim::bench::CoordinateError(run.end, truth) : NAN;
    };
    std::fprintf(table1,
                 "%d,%g,%g,%.6g,%d,%.6g,%d,%.6g,%ld,%ld,%.6g,%d,%.6g,%ld,%ld,%.6g,%.6g,%g,%g,%g\n",
                 row.elements, row.load, row.modulus, ours.seconds, ours.ok, bdf1.seconds, bdf1.ok,
                 bdf1.t_reached, bdf1.steps, bdf1.evaluations, dp54.seconds, dp54.ok,
                 dp54.t_reached, dp54.steps, dp54.evaluations, error_of(bdf1), error_of(dp54),
                 row.paper_ours, row.paper_ode15s, row.paper_ode45);
    char text[512];
    std::snprintf(
        text, sizeof(text),
        "| %d | %g | %.0e | %s | %s | %s | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g | %.3g |",
        row.elements, row.load, row.modulus, Seconds(ours, 1e30).c_str(),
        Seconds(bdf1, max_seconds).c_str(), Seconds(dp54, max_seconds).c_str(),
        bdf1.ok ? bdf1.seconds / ours.seconds : NAN, dp54.ok ? dp54.seconds / ours.seconds : NAN,
        error_of(bdf1), error_of(dp54), row.paper_ours, row.paper_ode15s, row.paper_ode45);
    lines1.push_back(text);

    // Table 2.
    std::vector<double> steps = {0.01};
    if (row.load == 50 && row.elements == 100) steps.push_back(1e-3);
    for (const double h : steps) {
      const Run run = h == 0.01 ? ours : RunOurs(s, h);
      const double error = error_of(run);
      const bool claimed = error >= 10 * uncertainty;
      const double paper = h == 0.01 ? row.paper_error : (row.modulus == 1e7 ? 3.14e-3 : 9.22e-5);
      std::fprintf(table2, "%g,%d,%g,%g,%.6g,%.6g,%.6g,%d,%d,%d,%ld,%g\n", row.load, row.elements,
                   row.modulus, h, error, error / size, uncertainty, claimed, run.min_contacts,
                   reference[0].min_contacts, reference[0].events, paper);
      std::snprintf(text, sizeof(text),
                    "| %g | %d | %.0e | %g | %.3g%s | %.3g | %.2g | %d / %d | %d | %.3g |",
                    row.load, row.elements, row.modulus, h, error, claimed ? "" : " (*)",
                    error / size, uncertainty, run.min_contacts, reference[0].min_contacts,
                    row.elements, paper);
      lines2.push_back(text);
    }
    if (fig7) {
      std::FILE* f = std::fopen((out + "/fig7.csv").c_str(), "w");
      if (f != nullptr) {
        std::fprintf(f, "x,y,force\n");
        for (size_t j = 0; j < elements.size(); ++j) {
          std::fprintf(f, "%.6g,%.6g,%.17g\n", elements[j].x(), elements[j].y(), forces[j]);
        }
        std::fclose(f);
      }
    }
    std::fflush(table1);
    std::fflush(table2);
  }
  if (reference_only) return 0;
  std::printf(
      "Table 1: wall seconds to simulate 1 s (one thread; caps %.0f s)\n"
      "| elements | load N | E Pa | ours h 0.01 | CVODE BDF1 | DP5(4) | BDF1 / ours | DP5 / ours "
      "| BDF1 error | DP5 error | paper ours | paper ode15s | paper ode45 |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
      max_seconds);
  for (const std::string& line : lines1) std::printf("%s\n", line.c_str());
  std::printf(
      "\nTable 2: |q(1) - q_ref(1)|, (*): not 10x above the reference's uncertainty\n"
      "| load N | elements | E Pa | h | error | relative | uncertainty | min rows ours / ref "
      "| n | paper error |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& line : lines2) std::printf("%s\n", line.c_str());
  return std::fclose(table1) == 0 && std::fclose(table2) == 0 ? 0 : 1;
}
