// The rigid experiments of the non-smooth Newton paper (Macklin et al. 2019, seed 002; digest
// seed-002-nsn.md 9.1-9.4, 5.2 and section 14, tests 10-14, 17 and 21) on `--solver nsn`, with
// the paper's fixed counts (newton_tolerance = linear_tolerance = 0: every step runs exactly N
// Newton iterations of M linear ones; nsn_parameters.h) and its h = 0.0083 s:
//   table2  Table 2's rigid rows: the arch (scenes/nsn_arch.xml, 6 x 20), the table pile
//           (scenes/nsn_table_pile.xml, 4 x 20) and the humanoid run (MuJoCo's humanoid100.xml:
//           100 humanoids under random controls, 4 x 10). Per scene: contacts per step, the most
//           contacts of one island, the final and worst residuals, the largest penetration, and
//           the wall time per step at 1 and at 2 threads (RunWithThreads: the same trajectory,
//           the solver is deterministic across thread counts), with the solver's own assembly
//           and linear seconds (summed over islands: CPU time, not wall). Each also with the
//           paper's friction compliance (friction_memory = 0), and the arch converged. And the
//           Fetch Beam row on our beam (scenes/nsn_beam.xml: 16 links of 0.003 kg on hinges of
//           250 N m/rad pushed into a slot by a clamp on a driven slide, BeamControl; 6 x 50,
//           132 steps; the hinges' springs in H, and as the paper's compliance rows at 6 x 50
//           and converged). NSN_ONLY=PREFIX in the environment runs only the rows whose name
//           starts with PREFIX.
//   heavy   Fig. 17 / test 10: the heavy stacks (nsn_heavy_stack_<M>.xml, M = 8..32768, and the
//           paper's geometric stack) under every linear solver {pcr, pcg, jacobi, gauss-seidel}
//           and complementarity scaling {effective-mass, h2, identity}, at 4 x 20 and at 4 x 200:
//           the largest interpenetration of the run, as the solver sees it at its last iterate
//           (max_penetration) and as the next step's collision detection measures it, and how far
//           the top box sank.
//   fig18   Fig. 18 / test 14: one step of a frictional scene with 40 linear iterations per
//           Newton iteration and 30 Newton iterations, per linear solver, the residuals at every
//           Newton iterate (NsnSolver::history): the arch's first step, the geometric stack's
//           first step, the table pile's step 150 (reached with PCR at 4 x 20) and the beam's
//           step 100 (reached at its 6 x 50, the tip in the slot; springs as rows).
//   fig11   Fig. 11: one linear sub-problem (the first Newton iteration's Schur system of a
//           settled step: the geometric stack and the arch after 10 steps, the table pile after
//           150, its largest island) under each linear solver after k = 1..60 iterations, each k
//           its own run of the step (newton_iterations 1), with a check that the k-run is the
//           k-th iterate of a longer Krylov solve (Fig11's comment).
//   fig16   Fig. 16 / test 13: the beam's 132 steps at 100 Newton x 40 PCR iterations, r =
//           effective mass (the trajectory) and r = 1 (from a snapshot of the same state before
//           each step): the row and momentum residuals at every Newton iterate.
//   noise   Sec 10.3 / test 17: FB against min-map on redundant contacts at rest
//           (scenes/nsn_redundant.xml: a box on 4 contacts, a table on 16), 240 steps at 4 x 20
//           and converged: each contact's normal force per step and its spread over the steps.
//   damping the per-step velocity loss (1 - t)^N of damped Newton from u^0 = 0 on a free
//           sphere: one in the air (in no island) and one with an inactive speculative contact
//           row, one step at t in {0.5, 0.75, 1} and N = 1..10.
// Each writes a CSV into DIR (default /tmp/nsn_out; bench/plot_nsn.py plots them) and prints a
// Markdown table. No argument runs them all.
//
// Humanoid100 is edited in memory: its geoms' condim 4 (a cylinder's torsional friction) becomes
// 3, which nsn requires (SolverRefusesModel), and its step becomes the paper's 0.0083 s.
//
// Usage: build/bin/nsn_experiments [table2|heavy|fig18|fig11|fig16|noise|damping|all]
//          [DIR] [STEP_SCALE]
//        (STEP_SCALE multiplies every run's step count, default 1);
//        /usr/bin/python3 bench/plot_nsn.py DIR docs/img/nsn
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "client/cli/random_actions.h"
#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/nsn/nsn_solver.h"
#include "engine/solver/solver.h"

namespace {

using alsim::Data;
using alsim::Model;
using alsim::NsnLinearSolver;
using alsim::NsnSolver;
using alsim::NsnStatistics;
using Clock = std::chrono::steady_clock;

constexpr double kPaperStep = 0.0083;  // s, Table 2: every scene
constexpr char kHumanoid[] = "/usr/share/mujoco/model/humanoid100/humanoid100.xml";

std::string g_dir = "/tmp/nsn_out";
double g_step_scale = 1;

std::shared_ptr<const Model> Load(const std::string& path, bool humanoid = false) {
  const alsim::ModelImport imported = alsim::ImportModelFromFile(path);
  if (!imported) {
    std::fprintf(stderr, "nsn_experiments: %s\n", imported.error.c_str());
    std::exit(1);
  }
  if (!humanoid) return imported.model;
  auto edited = std::make_shared<Model>(*imported.model);
  for (int& condim : edited->geom_condim) condim = std::min(condim, 3);
  for (int& condim : edited->pair_condim) condim = std::min(condim, 3);
  edited->high_condim_geom = -1;
  edited->timestep = kPaperStep;
  return edited;
}

std::string Scene(const std::string& name) { return std::string(ALSIM_SCENES_DIR) + "/" + name; }

// The paper's fixed budget: N Newton iterations of M linear ones, no tolerances.
alsim::StepOptions Options(
    int newton, int linear, NsnLinearSolver solver = NsnLinearSolver::kConjugateResidual,
    alsim::ComplementarityScaling scaling = alsim::ComplementarityScaling::kEffectiveMass) {
  alsim::StepOptions options;
  options.solver.type = alsim::SolverType::kNsn;
  options.solver.nsn.newton_iterations = newton;
  options.solver.nsn.newton_tolerance = 0;
  options.solver.nsn.linear_iterations = linear;
  options.solver.nsn.linear_tolerance = 0;
  options.solver.nsn.linear_solver = solver;
  options.solver.nsn.scaling = scaling;
  return options;
}

void RandomControls(const Model& m, long long step, Data& d) {
  for (int a = 0; a < m.nu; ++a) {
    const auto i = static_cast<std::size_t>(a);
    const alsim::cli::ActionRange range = alsim::cli::ActuatorActionRange(
        m.actuator_ctrl_limited[i], m.actuator_ctrl_lower[i], m.actuator_ctrl_upper[i]);
    d.ctrl[i] =
        alsim::cli::Action(0, 0, static_cast<std::uint64_t>(step), a, range.lower, range.upper);
  }
}

// The beam's clamp (scenes/nsn_beam.xml, generate_nsn_scenes.py): its servo target goes down at
// kBeamSpeed until it has moved kBeamTravel, then holds; step k's target is the one at its end.
constexpr double kBeamSpeed = 0.2;    // m/s, generate_nsn_scenes.py's BEAM_SPEED
constexpr double kBeamTravel = 0.17;  // m, its BEAM_TRAVEL
void BeamControl(const Model& m, long long step, Data& d) {
  d.ctrl[0] = -std::min(kBeamSpeed * m.timestep * static_cast<double>(step + 1), kBeamTravel);
}

enum class Controls { kNone, kRandom, kBeam };

void ApplyControls(Controls controls, const Model& m, long long step, Data& d) {
  if (controls == Controls::kRandom) RandomControls(m, step, d);
  if (controls == Controls::kBeam) BeamControl(m, step, d);
}

const NsnStatistics& Statistics(const Data& d) {
  return static_cast<const NsnSolver*>(d.solver.get())->statistics();
}

// The most contacts in one island of the step.
int MaxIslandContacts(const Data& d) {
  int most = 0;
  for (int k = 0; k < d.islands.num; ++k) {
    int count = 0;
    for (int i = d.islands.constraint_adr[k]; i < d.islands.constraint_adr[k + 1]; ++i) {
      const int c = d.islands.constraints[i];
      if (d.constraints.constraints[c].type == alsim::ConstraintType::kContact) ++count;
    }
    most = std::max(most, count);
  }
  return most;
}

double CollisionPenetration(const Data& d) {
  double deepest = 0;
  for (const alsim::Contact& contact : d.contact) deepest = std::max(deepest, -contact.dist);
  return deepest;
}

struct Moments {
  double sum = 0, sum2 = 0;
  int n = 0;
  void Add(double x) {
    sum += x;
    sum2 += x * x;
    ++n;
  }
  double Mean() const { return n > 0 ? sum / n : 0; }
  double Std() const { return n > 1 ? std::sqrt(std::max(0.0, sum2 / n - Mean() * Mean())) : 0; }
};

// One run of a scene from its initial state.
struct Run {
  bool ok = true;
  int steps = 0;
  Moments contacts, islands, wall, assembly, linear;
  int max_island_contacts = 0;
  double max_solver_penetration = 0;     // max over steps of NsnStatistics::max_penetration
  double max_collision_penetration = 0;  // max over steps of -dist of the step's contacts
  double max_row_residual = 0, max_momentum_residual = 0;
  double last_row_residual = 0, last_momentum_residual = 0;
  double newton_per_island = 0, linear_per_newton = 0;  // means
  int unconverged = 0;
  double max_displacement = 0;  // the largest distance a body's origin moved from its start, m
  double top_sink = 0;          // the last body's start height minus its end height, m
};

Run Simulate(const Model& m, const alsim::StepOptions& options, int steps, Controls controls,
             int threads) {
  Run run;
  Data d(m);
  alsim::RunWithThreads(threads, [&] {
    std::vector<alsim::Vec3> origin(d.xpos.size());
    long long newton = 0, linear = 0, islands = 0;
    for (int k = 0; k < steps; ++k) {
      ApplyControls(controls, m, k, d);
      const Clock::time_point t0 = Clock::now();
      const alsim::StepStatus status = alsim::Step(m, d, options);
      const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
      if (k == 0) origin = d.xpos;  // the bodies after one step: at rest scenes barely moved
      if (status != alsim::StepStatus::kOk) {
        std::fprintf(stderr, "nsn_experiments: step %d failed (%d)\n", k, static_cast<int>(status));
        run.ok = false;
        break;
      }
      ++run.steps;
      const NsnStatistics& s = Statistics(d);
      run.wall.Add(wall);
      run.contacts.Add(static_cast<double>(d.contact.size()));
      run.islands.Add(d.islands.num);
      run.assembly.Add(s.assembly_seconds);
      run.linear.Add(s.linear_seconds);
      run.max_island_contacts = std::max(run.max_island_contacts, MaxIslandContacts(d));
      run.max_solver_penetration = std::max(run.max_solver_penetration, s.max_penetration);
      run.max_collision_penetration =
          std::max(run.max_collision_penetration, CollisionPenetration(d));
      run.max_row_residual = std::max(run.max_row_residual, s.row_residual);
      run.max_momentum_residual = std::max(run.max_momentum_residual, s.momentum_residual);
      run.last_row_residual = s.row_residual;
      run.last_momentum_residual = s.momentum_residual;
      run.unconverged += s.unconverged_islands;
      newton += s.newton_iterations;
      linear += s.linear_iterations;
      islands += d.islands.num;
    }
    run.newton_per_island = islands > 0 ? static_cast<double>(newton) / islands : 0;
    run.linear_per_newton = newton > 0 ? static_cast<double>(linear) / newton : 0;
    for (int b = 1; b < m.nbody; ++b) {
      run.max_displacement = std::max(run.max_displacement, (d.xpos[b] - origin[b]).norm());
    }
    if (m.nbody > 1) run.top_sink = origin[m.nbody - 1].z() - d.xpos[m.nbody - 1].z();
  });
  return run;
}

std::FILE* OpenCsv(const std::string& name, const char* header) {
  const std::string path = g_dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "nsn_experiments: cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::fprintf(f, "%s\n", header);
  return f;
}

int Steps(int steps) { return std::max(1, static_cast<int>(std::lround(steps * g_step_scale))); }

// Table 2's rigid rows.
bool Table2() {
  struct Case {
    const char* name;
    std::string path;
    bool humanoid;
    int newton, linear, steps;
    double memory;
    Controls controls;
    bool spring_rows = false;  // NsnParameters::spring_rows: the paper's compliant joints
  };
  // Steps: the arch 2 s (the paper's claim: it stands without drift), the pile 2.5 s (dropped
  // from up to 3 m, it lands and settles), the humanoid and its 100 objects 2 s of random
  // torques. newton = 0: nsn's own defaults (tolerance 1e-6, up to 50 x 100), the converged
  // reference for the arch. memory: NsnParameters::friction_memory, -1 for nsn's default (0.5,
  // [OURS]); 0 is the paper's W from the current iterate alone.
  const Case cases[] = {
      {"arch", Scene("nsn_arch.xml"), false, 6, 20, 240, -1, Controls::kNone},
      {"arch_paper_w", Scene("nsn_arch.xml"), false, 6, 20, 240, 0, Controls::kNone},
      {"arch_converged", Scene("nsn_arch.xml"), false, 0, 0, 240, -1, Controls::kNone},
      {"table_pile", Scene("nsn_table_pile.xml"), false, 4, 20, 300, -1, Controls::kNone},
      {"table_pile_paper_w", Scene("nsn_table_pile.xml"), false, 4, 20, 300, 0, Controls::kNone},
      {"humanoid_run", kHumanoid, true, 4, 10, 240, -1, Controls::kRandom},
      {"humanoid_run_paper_w", kHumanoid, true, 4, 10, 240, 0, Controls::kRandom},
      // The beam: 132 steps, the paper's Fig. 16 run (the insertion, the tip on the floor).
      {"beam", Scene("nsn_beam.xml"), false, 6, 50, 132, -1, Controls::kBeam},
      {"beam_paper_w", Scene("nsn_beam.xml"), false, 6, 50, 132, 0, Controls::kBeam},
      {"beam_converged", Scene("nsn_beam.xml"), false, 0, 0, 132, -1, Controls::kBeam},
      {"beam_spring_rows", Scene("nsn_beam.xml"), false, 6, 50, 132, -1, Controls::kBeam, true},
      {"beam_spring_rows_converged", Scene("nsn_beam.xml"), false, 0, 0, 132, -1, Controls::kBeam,
       true},
  };
  std::FILE* csv =
      OpenCsv("table2.csv",
              "scene,bodies,nv,steps,newton,linear,mean_contacts,max_island_contacts,mean_islands,"
              "newton_per_island,linear_per_newton,last_row_residual,max_row_residual,"
              "last_momentum_residual,max_momentum_residual,max_solver_penetration,"
              "max_collision_penetration,max_displacement,ms_per_step_1,ms_per_step_2,"
              "assembly_ms_mean,assembly_ms_std,linear_ms_mean,linear_ms_std");
  std::printf(
      "| scene | bodies | steps | N x M (mean per island x per Newton) | contacts/step | max "
      "contacts in an island | row res. "
      "(last, max) m/s | momentum res. (last, max) N s | max penetration solver / collision mm "
      "| max displacement m | ms/step 1 thread | ms/step 2 threads | assembly ms (std) | linear "
      "ms (std) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  bool ok = true;
  const char* only = std::getenv("NSN_ONLY");  // run only the rows whose name starts with it
  for (const Case& c : cases) {
    if (only != nullptr && std::string(c.name).rfind(only, 0) != 0) continue;
    const std::shared_ptr<const Model> model = Load(c.path, c.humanoid);
    const Model& m = *model;
    alsim::StepOptions options = Options(c.newton, c.linear);
    if (c.newton == 0) options.solver.nsn = alsim::NsnParameters{};
    if (c.memory >= 0) options.solver.nsn.friction_memory = c.memory;
    options.solver.nsn.spring_rows = c.spring_rows;
    const int steps = Steps(c.steps);
    const Run one = Simulate(m, options, steps, c.controls, 1);
    const Run two = Simulate(m, options, steps, c.controls, 2);
    ok = ok && one.ok && two.ok;
    std::fprintf(csv,
                 "%s,%d,%d,%d,%d,%d,%.6g,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,"
                 "%.6g,%.6g,%.6g,%.6g,%.6g\n",
                 c.name, m.nbody - 1, m.nv, one.steps, c.newton, c.linear, one.contacts.Mean(),
                 one.max_island_contacts, one.islands.Mean(), one.newton_per_island,
                 one.linear_per_newton, one.last_row_residual, one.max_row_residual,
                 one.last_momentum_residual, one.max_momentum_residual, one.max_solver_penetration,
                 one.max_collision_penetration, one.max_displacement, 1e3 * one.wall.Mean(),
                 1e3 * two.wall.Mean(), 1e3 * one.assembly.Mean(), 1e3 * one.assembly.Std(),
                 1e3 * one.linear.Mean(), 1e3 * one.linear.Std());
    std::printf(
        "| %s | %d | %d | %d x %d (%.1f x %.1f) | %.0f | %d | %.3g, %.3g | %.3g, %.3g | %.3g / "
        "%.3g | %.3g | "
        "%.2f | %.2f | %.2f (%.2f) | %.2f (%.2f) |\n",
        c.name, m.nbody - 1, one.steps, c.newton, c.linear, one.newton_per_island,
        one.linear_per_newton, one.contacts.Mean(), one.max_island_contacts, one.last_row_residual,
        one.max_row_residual, one.last_momentum_residual, one.max_momentum_residual,
        1e3 * one.max_solver_penetration, 1e3 * one.max_collision_penetration, one.max_displacement,
        1e3 * one.wall.Mean(), 1e3 * two.wall.Mean(), 1e3 * one.assembly.Mean(),
        1e3 * one.assembly.Std(), 1e3 * one.linear.Mean(), 1e3 * one.linear.Std());
    std::fflush(stdout);
  }
  std::fclose(csv);
  return ok;
}

constexpr NsnLinearSolver kSolvers[] = {NsnLinearSolver::kConjugateResidual,
                                        NsnLinearSolver::kConjugateGradient,
                                        NsnLinearSolver::kJacobi, NsnLinearSolver::kGaussSeidel};

// Fig. 17 / test 10: interpenetration against the heavy box's mass.
bool Heavy() {
  const std::string masses[] = {"8", "64", "512", "4096", "32768", "geometric"};
  const alsim::ComplementarityScaling scalings[] = {alsim::ComplementarityScaling::kEffectiveMass,
                                                    alsim::ComplementarityScaling::kTimeStepSquared,
                                                    alsim::ComplementarityScaling::kIdentity};
  std::FILE* csv =
      OpenCsv("heavy_stack.csv",
              "stack,solver,scaling,newton,linear,steps,max_solver_penetration,"
              "max_collision_penetration,top_sink,max_row_residual,max_momentum_residual,ok");
  std::printf(
      "| stack | N x M | solver | scaling | max penetration solver mm | max penetration "
      "collision mm | top box sank mm |\n|---|---|---|---|---|---|---|\n");
  const int steps = Steps(120);  // 1 s
  for (const int linear : {20, 200}) {
    for (const std::string& mass : masses) {
      const std::shared_ptr<const Model> model = Load(Scene("nsn_heavy_stack_" + mass + ".xml"));
      for (const NsnLinearSolver solver : kSolvers) {
        for (const alsim::ComplementarityScaling scaling : scalings) {
          const Run run =
              Simulate(*model, Options(4, linear, solver, scaling), steps, Controls::kNone, 1);
          std::fprintf(csv, "%s,%s,%s,4,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%d\n", mass.c_str(),
                       alsim::NsnLinearSolverName(solver),
                       alsim::ComplementarityScalingName(scaling), linear, run.steps,
                       run.max_solver_penetration, run.max_collision_penetration, run.top_sink,
                       run.max_row_residual, run.max_momentum_residual, run.ok ? 1 : 0);
          std::printf("| %s | 4 x %d | %s | %s | %.3g | %.3g | %.3g |%s\n", mass.c_str(), linear,
                      alsim::NsnLinearSolverName(solver),
                      alsim::ComplementarityScalingName(scaling), 1e3 * run.max_solver_penetration,
                      1e3 * run.max_collision_penetration, 1e3 * run.top_sink,
                      run.ok ? "" : " (failed)");
        }
      }
      std::fflush(stdout);
    }
  }
  std::fclose(csv);
  return true;
}

// Fig. 18 / test 14: residuals per Newton iteration of one step, per linear solver.
bool Fig18() {
  struct Case {
    const char* name;
    std::string path;
    int before;  // steps taken first with PCR at 4 x 20 (the beam: its Table 2 budget, 6 x 50,
                 // springs in H)
    Controls controls;
  };
  // The paper ties Fig. 18 to the beam (relaxation does not reach the joints' stiffness) and the
  // heavy stack; the beam's step is one of the insertion, its tip in the slot, with its springs
  // as the paper's compliance rows (NsnParameters::spring_rows; in H the linear solvers never see
  // them).
  const Case cases[] = {
      {"arch", Scene("nsn_arch.xml"), 0, Controls::kNone},
      {"heavy_stack_geometric", Scene("nsn_heavy_stack_geometric.xml"), 0, Controls::kNone},
      {"table_pile", Scene("nsn_table_pile.xml"), 150, Controls::kNone},
      {"beam_springs_as_rows", Scene("nsn_beam.xml"), 100, Controls::kBeam},
  };
  constexpr int kNewton = 30, kLinear = 40;
  std::FILE* csv =
      OpenCsv("fig18.csv",
              "scene,solver,island,iterate,momentum_residual,row_residual,linear_iterations,"
              "linear_residual");
  std::printf("| scene | solver | island rows | row residual at Newton 1, 5, 10, 30 m/s |\n");
  std::printf("|---|---|---|---|\n");
  for (const Case& c : cases) {
    const std::shared_ptr<const Model> model = Load(c.path);
    const Model& m = *model;
    for (const NsnLinearSolver solver : kSolvers) {
      Data d(m);
      alsim::RunWithThreads(1, [&] {
        const bool beam = c.controls == Controls::kBeam;
        const alsim::StepOptions before = beam ? Options(6, 50) : Options(4, 20);
        for (int k = 0; k < c.before; ++k) {
          ApplyControls(c.controls, m, k, d);
          alsim::Step(m, d, before);
        }
        alsim::EnsureSolver(m, d, alsim::SolverType::kNsn);
        auto* nsn = static_cast<NsnSolver*>(d.solver.get());
        nsn->set_record_history(true);
        ApplyControls(c.controls, m, c.before, d);
        alsim::StepOptions options = Options(kNewton, kLinear, solver);
        options.solver.nsn.spring_rows = beam;
        alsim::Step(m, d, options);
        nsn->set_record_history(false);
      });
      // The island with the most constraints; without deformables nsn's system k is island k
      // (NsnSolver::history).
      int island = 0, most = -1;
      for (int k = 0; k < d.islands.num; ++k) {
        const int count = d.islands.constraint_adr[k + 1] - d.islands.constraint_adr[k];
        if (count > most) most = count, island = k;
      }
      const auto& history = static_cast<const NsnSolver*>(d.solver.get())->history(island);
      for (size_t n = 0; n < history.size(); ++n) {
        const NsnSolver::Iterate& it = history[n];
        std::fprintf(csv, "%s,%s,%d,%zu,%.6g,%.6g,%d,%.6g\n", c.name,
                     alsim::NsnLinearSolverName(solver), island, n, it.momentum_residual,
                     it.row_residual, it.linear_iterations, it.linear_residual);
      }
      auto at = [&](size_t n) {
        return n < history.size() ? history[n].row_residual : std::nan("");
      };
      std::printf("| %s | %s | %d constraints | %.3g, %.3g, %.3g, %.3g |\n", c.name,
                  alsim::NsnLinearSolverName(solver), most, at(1), at(5), at(10),
                  at(history.size() - 1));
    }
    std::fflush(stdout);
  }
  std::fclose(csv);
  return true;
}

// Fig. 11: one linear sub-problem (the Schur system (59) of the first Newton iteration of a
// scene's first step, its largest island) solved by each linear solver with k = 1 .. kMax
// iterations: the step is re-run with newton_iterations = 1 and linear_iterations = k (no
// tolerances), and the first iterate's linear_residual (NsnSolver::history: the preconditioned
// residual ||r_k||_{P^-1} over ||b||_{P^-1}, the norm all four solvers report) is the k-th point
// of the curve. The system does not depend on k (it is assembled before the solve), and the
// solvers' iterations do not depend on their budget, so the k-run's residual is the k-th iterate
// of one long solve. Checked, per solver and k: the same step with linear_iterations = kMax and
// linear_tolerance = (the k-run's residual) (1 + 1e-9) stops at the first iterate at or under it;
// where that is iterate k (always for PCR, whose residual is monotone, unless it stagnates), its
// velocities must equal the k-run's bit for bit (the `check` column: 1 equal, 0 differ, -1 it
// stopped at another iterate, which PCG's non-monotone residual allows).
bool Fig11() {
  struct Case {
    const char* name;
    std::string path;
    int before;  // steps taken first with the Table 2 budget (4 x 20)
  };
  // Not the very first step: from lambda = 0 at gap 0 (the scenes start exactly touching) FB's
  // alpha(0, 0) = 0 zeroes every contact row of the first Newton iteration, so its system is
  // diagonal (b = 0 on the stack). After a few steps the resting contacts penetrate slightly and
  // the first iteration's rows are the full coupled system.
  const Case cases[] = {
      {"heavy_stack_geometric", Scene("nsn_heavy_stack_geometric.xml"), 10},
      {"arch", Scene("nsn_arch.xml"), 10},
      {"table_pile", Scene("nsn_table_pile.xml"), 150},
  };
  constexpr int kMax = 60;
  std::FILE* csv =
      OpenCsv("fig11.csv", "scene,solver,rows,iterations,linear_residual,stop_iterations,check");
  std::printf(
      "| scene | solver | relative residual at 5, 10, 20, 40, 60 iterations | "
      "k-runs = tolerance-stopped runs |\n|---|---|---|---|\n");
  for (const Case& c : cases) {
    const std::shared_ptr<const Model> model = Load(c.path);
    const Model& m = *model;
    std::string settled;
    {
      Data d(m);
      alsim::RunWithThreads(1, [&] {
        for (int k = 0; k < c.before; ++k) alsim::Step(m, d, Options(4, 20));
      });
      settled = alsim::SaveStateSnapshot(m, d);
    }
    // One step from the settled state; returns the largest island's first linear solve and the
    // velocities after the step.
    struct Solve {
      int rows = 0, iterations = 0;
      double residual = 0;
      std::vector<double> qvel;
    };
    auto solve = [&](const alsim::StepOptions& options) {
      Solve s;
      Data d(m);
      alsim::StepStatus status = alsim::StepStatus::kOk;
      alsim::RunWithThreads(1, [&] {
        alsim::RestoreStateSnapshot(m, settled, d, nullptr);
        alsim::EnsureSolver(m, d, alsim::SolverType::kNsn);
        static_cast<NsnSolver*>(d.solver.get())->set_record_history(true);
        status = alsim::Step(m, d, options);
      });
      if (status != alsim::StepStatus::kOk || d.islands.num == 0) {  // diverged (Jacobi)
        s.residual = INFINITY;
        s.qvel = d.qvel;
        return s;
      }
      int island = 0, most = -1;
      for (int k = 0; k < d.islands.num; ++k) {
        const int count = d.islands.constraint_adr[k + 1] - d.islands.constraint_adr[k];
        if (count > most) most = count, island = k;
      }
      for (int i = d.islands.constraint_adr[island]; i < d.islands.constraint_adr[island + 1];
           ++i) {
        s.rows += d.constraints.constraints[d.islands.constraints[i]].dim;
      }
      const auto& history = static_cast<const NsnSolver*>(d.solver.get())->history(island);
      if (!history.empty()) {
        s.iterations = history[0].linear_iterations;
        s.residual = history[0].linear_residual;
      }
      // The island's velocities only: with a tolerance the other islands stop elsewhere.
      for (int j = d.islands.subsystem_adr[island]; j < d.islands.subsystem_adr[island + 1]; ++j) {
        const int tree = d.islands.subsystems[j];
        for (int i = 0; i < m.subsystem_dof_num[tree]; ++i) {
          s.qvel.push_back(d.qvel[m.subsystem_dof_adr[tree] + i]);
        }
      }
      return s;
    };
    for (const NsnLinearSolver solver : kSolvers) {
      std::vector<double> curve;
      int equal = 0, differ = 0, elsewhere = 0, rows = 0;
      const bool krylov = solver == NsnLinearSolver::kConjugateResidual ||
                          solver == NsnLinearSolver::kConjugateGradient;
      for (int k = 1; k <= kMax; ++k) {
        const Solve run = solve(Options(1, k, solver));
        int check = -2, stop_iterations = -1;  // -2: not checked (Jacobi, Gauss-Seidel)
        if (krylov) {
          alsim::StepOptions stop = Options(1, kMax, solver);
          stop.solver.nsn.linear_tolerance = run.residual * (1 + 1e-9);
          const Solve stopped = solve(stop);
          stop_iterations = stopped.iterations;
          check = stopped.iterations != run.iterations ? -1 : stopped.qvel == run.qvel ? 1 : 0;
          (check == 1 ? equal : check == 0 ? differ : elsewhere) += 1;
        }
        rows = run.rows;
        curve.push_back(run.residual);
        std::fprintf(csv, "%s,%s,%d,%d,%.9g,%d,%d\n", c.name, alsim::NsnLinearSolverName(solver),
                     run.rows, run.iterations, run.residual, stop_iterations, check);
      }
      auto at = [&](int k) { return k <= static_cast<int>(curve.size()) ? curve[k - 1] : NAN; };
      char checked[96] = "";
      if (krylov) {
        std::snprintf(checked, sizeof(checked), "%d equal, %d differ, %d stopped elsewhere", equal,
                      differ, elsewhere);
      }
      std::printf("| %s (%d rows) | %s | %.3g, %.3g, %.3g, %.3g, %.3g | %s |\n", c.name, rows,
                  alsim::NsnLinearSolverName(solver), at(5), at(10), at(20), at(40), at(60),
                  checked);
      std::fflush(stdout);
    }
  }
  std::fclose(csv);
  return true;
}

// Fig. 16 / test 13: the complementarity preconditioner on the beam. The beam's 132 steps at
// 100 Newton x 40 PCR iterations with the proposed r (66) (effective mass), and from the same
// state before each step (a snapshot) the step again with r = 1 (scaling identity): both
// scalings meet the same 132 problems. Per step and Newton iterate the weighted row residual
// and the momentum residual of the island (the beam's tree is one island from the first step
// on: the clamp's servo row). The quartiles over the steps per iterate are the figure's.
bool Fig16() {
  const std::shared_ptr<const Model> model = Load(Scene("nsn_beam.xml"));
  const Model& m = *model;
  constexpr int kNewton = 100, kLinear = 40;
  const int steps = Steps(132);
  const alsim::ComplementarityScaling scalings[] = {alsim::ComplementarityScaling::kEffectiveMass,
                                                    alsim::ComplementarityScaling::kIdentity};
  std::FILE* csv = OpenCsv("fig16.csv", "scaling,step,iterate,row_residual,momentum_residual");
  // residual[s][n]: scaling s's row residuals at iterate n over the steps.
  std::vector<std::vector<double>> residual[2], momentum[2];
  for (auto& r : residual) r.assign(kNewton + 1, {});
  for (auto& r : momentum) r.assign(kNewton + 1, {});
  Data d(m), probe(m);
  bool ok = true;
  alsim::RunWithThreads(1, [&] {
    for (int k = 0; k < steps && ok; ++k) {
      BeamControl(m, k, d);
      const std::string before = alsim::SaveStateSnapshot(m, d);
      for (int s = 1; s >= 0; --s) {  // the probe (identity) first, then the trajectory
        Data& x = s == 0 ? d : probe;
        if (s == 1) alsim::RestoreStateSnapshot(m, before, probe, nullptr);
        alsim::EnsureSolver(m, x, alsim::SolverType::kNsn);
        static_cast<NsnSolver*>(x.solver.get())->set_record_history(true);
        const alsim::StepOptions options =
            Options(kNewton, kLinear, NsnLinearSolver::kConjugateResidual, scalings[s]);
        if (alsim::Step(m, x, options) != alsim::StepStatus::kOk) {
          std::fprintf(stderr, "nsn_experiments: fig16 step %d failed (%s)\n", k,
                       alsim::ComplementarityScalingName(scalings[s]));
          if (s == 0) ok = false;
          continue;
        }
        int island = 0, most = -1;
        for (int i = 0; i < x.islands.num; ++i) {
          const int count = x.islands.constraint_adr[i + 1] - x.islands.constraint_adr[i];
          if (count > most) most = count, island = i;
        }
        if (x.islands.num == 0) continue;
        const auto& history = static_cast<const NsnSolver*>(x.solver.get())->history(island);
        for (size_t n = 0; n < history.size(); ++n) {
          std::fprintf(csv, "%s,%d,%zu,%.6g,%.6g\n", alsim::ComplementarityScalingName(scalings[s]),
                       k, n, history[n].row_residual, history[n].momentum_residual);
          if (n <= static_cast<size_t>(kNewton)) {
            residual[s][n].push_back(history[n].row_residual);
            momentum[s][n].push_back(history[n].momentum_residual);
          }
        }
      }
    }
  });
  std::fclose(csv);
  auto quartiles = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    auto at = [&](double q) {
      return v.empty() ? NAN : v[static_cast<size_t>(q * (v.size() - 1))];
    };
    char text[96];
    std::snprintf(text, sizeof(text), "%.2g / %.2g / %.2g", at(0.25), at(0.5), at(0.75));
    return std::string(text);
  };
  // The row residual is each scaling's own: a normal row's phi(a, r lambda) / h depends on r
  // away from a root; the momentum residual |g|_inf (N s) does not.
  std::printf(
      "| scaling | residual, quartiles over the steps (25%% / median / 75%%) | Newton iterate "
      "5 | 20 | 50 | 100 |\n|---|---|---|---|---|---|\n");
  for (int s = 0; s < 2; ++s) {
    for (int which = 0; which < 2; ++which) {
      const auto& v = which == 0 ? residual[s] : momentum[s];
      std::printf("| %s | %s | %s | %s | %s | %s |\n",
                  alsim::ComplementarityScalingName(scalings[s]),
                  which == 0 ? "row, m/s" : "momentum, N s", quartiles(v[5]).c_str(),
                  quartiles(v[20]).c_str(), quartiles(v[50]).c_str(), quartiles(v[100]).c_str());
    }
  }
  return ok;
}

// FB against min-map on redundant contacts (digest 9.3, Sec 10.3; test 17): the box and the table
// of scenes/nsn_redundant.xml at rest, 240 steps at the table pile's budget (4 x 20) with each
// NCP function (and once converged, nsn's defaults, for both). Per step each contact's normal
// force lambda_n (the row's impulse over h), the contacts of a body ordered by their position
// (x, then y: at rest the same points every step). The spread of a contact is the standard
// deviation of its force over the steps after the first kSettle (the start at gap 0 settles).
bool Noise() {
  const std::shared_ptr<const Model> model = Load(Scene("nsn_redundant.xml"));
  const Model& m = *model;
  const int steps = Steps(240);
  constexpr int kSettle = 20;
  std::FILE* csv = OpenCsv("noise.csv", "ncp,budget,body,step,contact,x,y,force");
  std::printf(
      "| NCP | N x M | body | contacts | mean force N (m g / n) | std over steps of a contact's "
      "force, N: mean / max over contacts | spread of one step's forces, N (mean over steps) "
      "|\n|---|---|---|---|---|---|---|\n");
  for (const bool converged : {false, true}) {
    for (const alsim::NcpFunction ncp :
         {alsim::NcpFunction::kFischerBurmeister, alsim::NcpFunction::kMinimumMap}) {
      alsim::StepOptions options = Options(4, 20);
      if (converged) options.solver.nsn = alsim::NsnParameters{};
      options.solver.nsn.ncp = ncp;
      Data d(m);
      // force[body][contact] over the steps; within-step std per body.
      std::vector<std::vector<Moments>> force(m.nbody);
      std::vector<Moments> within(m.nbody);
      std::vector<int> count(m.nbody, -1);
      std::vector<double> mass(m.nbody, 0);
      for (int b = 1; b < m.nbody; ++b) mass[b] = m.body_mass[b];
      bool ok = true;
      alsim::RunWithThreads(1, [&] {
        for (int k = 0; k < steps && ok; ++k) {
          ok = alsim::Step(m, d, options) == alsim::StepStatus::kOk;
          struct Point {
            double x, y, f;
          };
          std::vector<std::vector<Point>> points(m.nbody);
          for (const alsim::Constraint& c : d.constraints.constraints) {
            if (c.type != alsim::ConstraintType::kContact) continue;
            const alsim::Contact& contact = d.contact[c.contact];
            const int b1 = m.geom_body[contact.geom1], b2 = m.geom_body[contact.geom2];
            const int body = b1 == 0 ? b2 : b1;
            points[body].push_back(
                {contact.pos.x(), contact.pos.y(), d.constraints.lambda[c.row_adr] / m.timestep});
          }
          for (int b = 1; b < m.nbody; ++b) {
            auto& p = points[b];
            std::sort(p.begin(), p.end(), [](const Point& a, const Point& c) {
              return a.x != c.x ? a.x < c.x : a.y < c.y;
            });
            for (size_t i = 0; i < p.size(); ++i) {
              std::fprintf(csv, "%s,%s,%s,%d,%zu,%.6g,%.6g,%.6g\n", alsim::NcpFunctionName(ncp),
                           converged ? "converged" : "4x20", m.body_name[b].c_str(), k, i, p[i].x,
                           p[i].y, p[i].f);
            }
            if (k < kSettle) continue;
            if (count[b] < 0) count[b] = static_cast<int>(p.size());
            if (static_cast<int>(p.size()) != count[b]) count[b] = -2;  // the set changed
            force[b].resize(std::max(force[b].size(), p.size()));
            Moments step;
            for (size_t i = 0; i < p.size(); ++i) {
              force[b][i].Add(p[i].f);
              step.Add(p[i].f);
            }
            within[b].Add(step.Std());
          }
        }
      });
      for (int b = 1; b < m.nbody; ++b) {
        double mean = 0, worst = 0, sum = 0;
        for (const Moments& f : force[b]) {
          mean += f.Std() / static_cast<double>(force[b].size());
          worst = std::max(worst, f.Std());
          sum += f.Mean();
        }
        std::printf("| %s | %s | %s | %d | %.4g (%.4g) | %.3g / %.3g | %.3g |%s\n",
                    alsim::NcpFunctionName(ncp), converged ? "converged" : "4 x 20",
                    m.body_name[b].c_str(), count[b], sum / std::max<size_t>(1, force[b].size()),
                    mass[b] * 9.81 / std::max<size_t>(1, force[b].size()), mean, worst,
                    within[b].Mean(), ok ? "" : " (failed)");
      }
      std::fflush(stdout);
    }
  }
  std::fclose(csv);
  return true;
}

// The per-step velocity loss of damped Newton from u^0 = 0 (digest 5.2; issue 48's test): on a
// body with no active row each Newton iteration solves its momentum equation H (u - u~) = 0
// exactly and moves u by the fraction t of the way, so after N iterations
// u = (1 - (1 - t)^N) u~. Two free spheres with the same start velocity v0: "air", 1 m above the
// floor (no contact, in no island), and "near", 0.5 mm above the floor and moving up (a
// speculative contact row within the slop, inactive: FB's alpha(a > 0, 0) = 0). One step each at
// t in {0.5, 0.75, 1}, N = 1..10 (20 PCR iterations, no tolerances); measured: the velocity
// after the step projected on u~ = v0 + h g, over |u~|^2.
bool Damping() {
  const alsim::ModelImport imported = alsim::ImportModelFromString(
      "<mujoco><option timestep='0.0083'/><worldbody><geom name='floor' type='plane' "
      "size='0 0 1'/><body name='air' pos='0 0 1'><freejoint/><geom type='sphere' size='0.1' "
      "mass='1'/></body><body name='near' pos='1 0 0.1005'><freejoint/><geom type='sphere' "
      "size='0.1' mass='1'/></body></worldbody></mujoco>");
  if (!imported) {
    std::fprintf(stderr, "nsn_experiments: %s\n", imported.error.c_str());
    return false;
  }
  const Model& m = *imported.model;
  const double v0[3] = {0.3, 0, 0.5};  // m/s, each sphere's linear velocity at the start
  std::FILE* csv = OpenCsv("damping.csv", "body,t,N,measured,formula,rows,island");
  std::printf(
      "| body (rows in its island) | t | measured u.u~ / |u~|^2 at N = 1, 2, 3, 5, 10 | "
      "formula 1 - (1 - t)^N | largest difference |\n|---|---|---|---|---|\n");
  bool ok = true;
  for (int b = 1; b < m.nbody; ++b) {
    const int adr = m.subsystem_dof_adr[m.body_subsystem[b]];
    for (const double t : {0.5, 0.75, 1.0}) {
      std::vector<double> measured, formula;
      int rows = 0, island = -1;
      for (int n = 1; n <= 10; ++n) {
        Data d(m);
        for (int b2 = 1; b2 < m.nbody; ++b2) {
          const int a2 = m.subsystem_dof_adr[m.body_subsystem[b2]];
          for (int i = 0; i < 3; ++i) d.qvel[a2 + i] = v0[i];  // a free joint's linear dofs
        }
        alsim::StepOptions options = Options(n, 20);
        options.solver.nsn.step_fraction = t;
        alsim::RunWithThreads(
            1, [&] { ok = alsim::Step(m, d, options) == alsim::StepStatus::kOk && ok; });
        double dot = 0, norm2 = 0;
        for (int i = 0; i < 3; ++i) {
          const double free = v0[i] + m.timestep * m.gravity[i];
          dot += d.qvel[adr + i] * free;
          norm2 += free * free;
        }
        island = d.islands.subsystem_island[m.body_subsystem[b]];
        rows = 0;
        if (island >= 0) {
          for (int i = d.islands.constraint_adr[island]; i < d.islands.constraint_adr[island + 1];
               ++i) {
            rows += d.constraints.constraints[d.islands.constraints[i]].dim;
          }
        }
        measured.push_back(dot / norm2);
        formula.push_back(1 - std::pow(1 - t, n));
        std::fprintf(csv, "%s,%g,%d,%.12g,%.12g,%d,%d\n", m.body_name[b].c_str(), t, n,
                     measured.back(), formula.back(), rows, island);
      }
      double worst = 0;
      for (size_t i = 0; i < measured.size(); ++i) {
        worst = std::max(worst, std::abs(measured[i] - formula[i]));
      }
      std::printf(
          "| %s (%d) | %g | %.4f, %.4f, %.4f, %.4f, %.4f | %.4f, %.4f, %.4f, %.4f, %.4f | "
          "%.2g |\n",
          m.body_name[b].c_str(), rows, t, measured[0], measured[1], measured[2], measured[4],
          measured[9], formula[0], formula[1], formula[2], formula[4], formula[9], worst);
    }
  }
  std::fclose(csv);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "all";
  if (argc > 2) g_dir = argv[2];
  if (argc > 3) g_step_scale = std::atof(argv[3]);
  std::system(("mkdir -p '" + g_dir + "'").c_str());
  bool ok = true;
  if (which == "table2" || which == "all") ok = Table2() && ok;
  if (which == "heavy" || which == "all") ok = Heavy() && ok;
  if (which == "fig18" || which == "all") ok = Fig18() && ok;
  if (which == "fig11" || which == "all") ok = Fig11() && ok;
  if (which == "fig16" || which == "all") ok = Fig16() && ok;
  if (which == "noise" || which == "all") ok = Noise() && ok;
  if (which == "damping" || which == "all") ok = Damping() && ok;
  return ok ? 0 : 1;
}
