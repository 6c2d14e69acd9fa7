#include "engine/solver/drumwright/drumwright_solver.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/data/contact.h"
#include "engine/linalg/tree_sparse_layout.h"
#include "engine/solver/drumwright/row_acceleration.h"

namespace alsim {
namespace {

// The most programs an island solves again after dropping rows that push while extended
// (DrumwrightParameters::complementary).
constexpr int kMaxComplementaryRounds = 8;

// A value of geom g from per-geom storage, `fallback` where unset (negative).
double Own(const std::vector<double>& values, int g, double fallback) {
  return g >= 0 && g < static_cast<int>(values.size()) && values[g] >= 0 ? values[g] : fallback;
}

// Two springs (or dampers) in series; one unset (infinite) leaves the other.
double Series(double a, double b) {
  if (std::isinf(a)) return b;
  if (std::isinf(b)) return a;
  return a + b > 0 ? a * b / (a + b) : 0;
}

// The radius of curvature of a geom's surface for Hertz's law: spheres' and capsules', else
// infinite (flat).
double HertzRadius(const Model& m, int g) {
  const GeomType type = m.geom_type[g];
  if (type == GeomType::kSphere || type == GeomType::kCapsule) return m.geom_size[g][0];
  return std::numeric_limits<double>::infinity();
}

}  // namespace

DrumwrightContactSpring ContactSpring(const Model& m, const DrumwrightParameters& parameters,
                                      int geom1, int geom2) {
  constexpr double kUnset = std::numeric_limits<double>::infinity();
  DrumwrightContactSpring spring;
  // Hertz moduli combine as 1 / E* = 1 / E1 + 1 / E2 (an unset geom is rigid), a pair's wins.
  double modulus =
      Series(Own(m.geom_hertz_modulus, geom1, kUnset), Own(m.geom_hertz_modulus, geom2, kUnset));
  double stiffness = Series(Own(m.geom_contact_stiffness, geom1, kUnset),
                            Own(m.geom_contact_stiffness, geom2, kUnset));
  double damping = Series(Own(m.geom_contact_damping, geom1, kUnset),
                          Own(m.geom_contact_damping, geom2, kUnset));
  const int lo = std::min(geom1, geom2), hi = std::max(geom1, geom2);
  for (size_t p = 0; p < m.contact_pair_geom1.size(); ++p) {
    if (m.contact_pair_geom1[p] != lo || m.contact_pair_geom2[p] != hi) continue;
    if (m.contact_pair_stiffness[p] >= 0) {
      stiffness = m.contact_pair_stiffness[p];
      modulus = kUnset;
    }
    if (m.contact_pair_hertz_modulus[p] >= 0) {
      modulus = m.contact_pair_hertz_modulus[p];
      stiffness = kUnset;
    }
    if (m.contact_pair_damping[p] >= 0) damping = m.contact_pair_damping[p];
  }
  spring.damping = std::isinf(damping) ? parameters.contact_damping : damping;
  if (!std::isinf(modulus)) {
    double radius = Series(HertzRadius(m, geom1), HertzRadius(m, geom2));
    if (std::isinf(radius)) radius = parameters.hertz_radius;
    spring.stiffness = modulus * std::sqrt(radius);
    spring.hertz = true;
  } else {
    spring.stiffness = std::isinf(stiffness) ? parameters.contact_stiffness : stiffness;
  }
  return spring;
}

DrumwrightSolver::DrumwrightSolver(const Model& m) : IslandSolver(m) {
  jacobian_.Reserve(m, MaxConstraints(m));
  local_dof_.resize(m.nv);
}

void DrumwrightSolver::Prepare(const Model& m, Data& d, const SolverOptions& /*options*/) {
  jacobian_.Layout(m, d);
  island_statistics_.assign(d.islands.num, DrumwrightStatistics{});
  while (static_cast<int>(work_.size()) < d.islands.num) {
    work_.push_back(std::make_unique<IslandWork>());
  }
}

void DrumwrightSolver::SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                                   double /*deadline_us*/, int island) {
  const DrumwrightParameters& parameters = options.drumwright;
  ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  IslandSolveResult& result = island_results_[island];
  result = IslandSolveResult{};
  DrumwrightStatistics& stats = island_statistics_[island];
  stats = DrumwrightStatistics{};
  IslandWork& work = *work_[island];
  const double h = m.timestep;

  // The island's dofs, subsystem by subsystem (each a contiguous range).
  std::vector<int>& global = work.global;
  global.clear();
  for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
    const int j = islands.subsystems[s];
    for (int dof = m.subsystem_dof_adr[j]; dof < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j];
         ++dof) {
      local_dof_[dof] = static_cast<int>(global.size());
      global.push_back(dof);
    }
  }
  const int n = static_cast<int>(global.size());

  // The rows that act and their springs, in constraint order; `source` is each row's row in the
  // constraint set, `physical` a physical spring (not a servo's row, not a tangent).
  std::vector<SpringRow>& springs = work.springs;
  std::vector<int>& source = work.source;
  std::vector<int>& constraint_of = work.constraint_of;
  std::vector<char>& physical = work.physical;
  springs.clear();
  source.clear();
  constraint_of.clear();
  physical.clear();
  const auto add = [&](int row, int constraint, SpringRowClass type, double phi0, double k,
                       double b, double mu) {
    SpringRow spring;
    spring.type = type;
    spring.phi0 = phi0;
    spring.stiffness = k;
    spring.damping = b;
    spring.friction = mu;
    springs.push_back(spring);
    source.push_back(row);
    constraint_of.push_back(constraint);
    physical.push_back(type != SpringRowClass::kTangent);
  };
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    for (int r = 0; r < c.dim; ++r) set.lambda[c.row_adr + r] = 0;
    const double phi0 = set.bias[c.row_adr];
    switch (c.type) {
      case ConstraintType::kContact: {
        if (phi0 > 0) break;
        const Contact& contact = d.contact[c.contact];
        const DrumwrightContactSpring spring =
            ContactSpring(m, parameters, contact.geom1, contact.geom2);
        // Hertz: the linearized row K_n = f'(d0) = (3/2) E* sqrt(r d0) on phi_n = -(2/3) d0
        // (the header comment).
        const double depth = -phi0;
        const double phi = spring.hertz ? -2.0 / 3.0 * depth : phi0;
        const double k =
            spring.hertz ? 1.5 * spring.stiffness * std::sqrt(depth) : spring.stiffness;
        stats.max_violation = std::max(stats.max_violation, depth);
        add(c.row_adr, i, SpringRowClass::kNormal, phi, k, spring.damping, c.friction);
        for (int t = 1; t < 3; ++t) {
          add(c.row_adr + t, i, SpringRowClass::kTangent, 0, 0, parameters.friction_damping / h, 0);
        }
        break;
      }
      case ConstraintType::kLimit: {
        if (phi0 > 0) break;
        // A joint's limit, a tendon's, or a foundation element (constraint_set.h).
        const int kind = c.key.kind, a = c.key.a;
        const double k = kind == kKindFoundation    ? m.foundation_stiffness[a]
                         : kind == kKindTendonLimit ? Own(m.tendon_spring_stiffness, a, -1)
                                                    : Own(m.jnt_spring_stiffness, a, -1);
        const double b = kind == kKindFoundation    ? m.foundation_damping[a]
                         : kind == kKindTendonLimit ? Own(m.tendon_spring_damping, a, -1)
                                                    : Own(m.jnt_spring_damping, a, -1);
        stats.max_violation = std::max(stats.max_violation, -phi0);
        add(c.row_adr, i, SpringRowClass::kUnilateral, phi0,
            k >= 0 ? k : parameters.limit_stiffness, b >= 0 ? b : parameters.limit_damping, 0);
        break;
      }
      case ConstraintType::kEquality: {
        const double k = Own(m.eq_spring_stiffness, c.key.a, parameters.equality_stiffness);
        const double b = Own(m.eq_spring_damping, c.key.a, parameters.equality_damping);
        for (int r = 0; r < c.dim; ++r) {
          const double error = set.bias[c.row_adr + r];
          stats.max_violation = std::max(stats.max_violation, std::abs(error));
          add(c.row_adr + r, i, SpringRowClass::kBilateral, error, k, b, 0);
        }
        break;
      }
      case ConstraintType::kSoft:  // eq. (4) as the spring law (53): the file comment
        add(c.row_adr, i, SpringRowClass::kBilateral, c.soft_bias, 1 / h, c.soft_damping / h - 1,
            0);
        physical.back() = false;
        break;
      case ConstraintType::kFriction:  // refused (SolverRefusesModel)
        break;
    }
  }
  const int rows = static_cast<int>(springs.size());
  if (rows == 0) {  // only speculative contacts and limits: v_hat = v_free
    result.converged = true;
    return;
  }

  // A over the island's dofs from its tree-sparse storage, G, and (with the velocity product)
  // each row's Gd v0 (row_acceleration.h; 0 where it is not computed).
  FirstOrderStepSolver& step = work.step;
  step.program_parameters() = parameters.program;
  step.Reset(n, rows, h, parameters.zeta_h / h, parameters.velocity_product);
  for (int k = 0; k < rows; ++k) step.row(k) = springs[k];
  const TreeSparseLayout& layout = d.mass_layout;
  auto mass = step.mass();
  auto velocity = step.velocity();
  for (int a = 0; a < n; ++a) {
    const int dof = global[a];
    velocity[a] = d.v_free[dof];
    for (int t = 0; t < layout.row_nnz[dof]; ++t) {
      const int b = local_dof_[layout.column[layout.row_adr[dof] + t]];
      const double value = d.qA[layout.row_adr[dof] + t];
      mass(a, b) = value;
      mass(b, a) = value;
    }
  }
  auto jacobian = step.jacobian();
  double* acceleration = work.acceleration.data();
  int filled = -1;
  bool accelerated = false;
  for (int k = 0; k < rows; ++k) {
    const int i = constraint_of[k];
    if (i != filled) {
      jacobian_.Fill(m, d, i);
      if (parameters.velocity_product) {
        accelerated = set.constraints[i].dim <= kMaxConstraintDim &&
                      RowVelocityProductAcceleration(m, d, i, acceleration);
      }
      filled = i;
    }
    const int r = source[k] - set.constraints[i].row_adr;
    for (int e = jacobian_.entry_adr[i]; e < jacobian_.entry_adr[i] + jacobian_.entry_num[i]; ++e) {
      jacobian(k, local_dof_[jacobian_.dof[e]]) += jacobian_.At(e, r);
    }
    if (accelerated && physical[k]) step.row(k).acceleration = acceleration[r];
  }

  for (int round = 0;; ++round) {
    const bool ok = step.Solve();
    const FirstOrderStatistics& solve = step.statistics();
    if (solve.solved_program) {
      ++stats.programs;
      stats.program_iterations += solve.program.iterations;
      result.iterations += solve.program.iterations;
      stats.admm_programs += solve.admm && ok;
    }
    if (!ok) {
      if (solve.solved_program) ++stats.failed_programs;
      for (int k = 0; k < rows; ++k) set.lambda[source[k]] = 0;
      return;  // v_hat stays v_free, every impulse 0
    }
    if (!parameters.complementary || round == kMaxComplementaryRounds) break;
    // Rows that push (lam > 0) while their spring ends the step extended (phi1 > 0, so lam >
    // their law): dropped, with a contact's tangents, and the program solved again.
    const auto lambda = step.lambda();
    const auto rate = step.row_rate();
    const double largest = lambda.lpNorm<Eigen::Infinity>();
    std::vector<char>& keep = work.keep;
    keep.assign(step.num_rows(), 1);
    bool dropped = false;
    for (int k = 0; k < step.num_rows(); ++k) {
      const SpringRowClass type = step.row(k).type;
      if (type != SpringRowClass::kNormal && type != SpringRowClass::kUnilateral) continue;
      if (!(lambda[k] > 1e-12 * largest && step.row(k).phi0 + h * rate[k] > 0)) continue;
      keep[k] = 0;
      if (type == SpringRowClass::kNormal) keep[k + 1] = keep[k + 2] = 0;
      dropped = true;
    }
    if (!dropped) break;
    ++stats.dropped_rows;
    int kept = 0;
    for (int k = 0; k < step.num_rows(); ++k) {
      if (!keep[k]) continue;
      source[kept] = source[k];
      physical[kept] = physical[k];
      ++kept;
    }
    step.KeepRows(keep);
  }
  const FirstOrderStatistics& solve = step.statistics();
  result.converged = true;
  if (solve.solved_program) stats.max_kkt_residual = solve.program.kkt_residual;
  const auto v1 = step.velocity_out();
  for (int a = 0; a < n; ++a) d.v_hat[global[a]] = v1[a];
  const auto lambda = step.lambda();
  const auto rate = step.row_rate();  // phid1
  for (int k = 0; k < step.num_rows(); ++k) {
    set.lambda[source[k]] = h * lambda[k];
    const SpringRow& row = step.row(k);
    const double phi1 = row.phi0 + h * rate[k];
    // A unilateral spring stores energy only while compressed.
    const bool stretched = row.type == SpringRowClass::kBilateral || phi1 < 0;
    if (physical[k] && stretched) stats.spring_energy += 0.5 * row.stiffness * phi1 * phi1;
    if (row.type != SpringRowClass::kNormal) continue;
    // The spring-law bound of (137) and the cone's state of this contact.
    const double bound = -row.stiffness * phi1 - row.damping * rate[k];
    if (bound > 0)
      stats.max_normal_inflation = std::max(stats.max_normal_inflation, lambda[k] / bound);
    const double tangential = std::hypot(lambda[k + 1], lambda[k + 2]);
    if (row.friction > 0 && tangential < row.friction * lambda[k] * (1 - 1e-6)) {
      const double slip = std::hypot(rate[k + 1], rate[k + 2]);
      stats.max_stiction_slip = std::max(stats.max_stiction_slip, slip);
    }
  }
}

void DrumwrightSolver::AddFigures(SolverStatistics* stats) const {
  statistics_ = DrumwrightStatistics{};
  for (const DrumwrightStatistics& s : island_statistics_) {
    statistics_.programs += s.programs;
    statistics_.program_iterations += s.program_iterations;
    statistics_.failed_programs += s.failed_programs;
    statistics_.admm_programs += s.admm_programs;
    statistics_.dropped_rows += s.dropped_rows;
    statistics_.max_kkt_residual = std::max(statistics_.max_kkt_residual, s.max_kkt_residual);
    statistics_.max_violation = std::max(statistics_.max_violation, s.max_violation);
    statistics_.max_normal_inflation =
        std::max(statistics_.max_normal_inflation, s.max_normal_inflation);
    statistics_.max_stiction_slip = std::max(statistics_.max_stiction_slip, s.max_stiction_slip);
    statistics_.spring_energy += s.spring_energy;
  }
  stats->AddFigure("programs", statistics_.programs);
  stats->AddFigure("program_iterations", statistics_.program_iterations);
  stats->AddFigure("failed_programs", statistics_.failed_programs);
  stats->AddFigure("admm_programs", statistics_.admm_programs);
  stats->AddFigure("resolved_programs", statistics_.dropped_rows);
  stats->AddFigure("max_kkt_residual", statistics_.max_kkt_residual);
  stats->AddFigure("max_violation", statistics_.max_violation);
  stats->AddFigure("max_normal_inflation", statistics_.max_normal_inflation);
  stats->AddFigure("max_stiction_slip", statistics_.max_stiction_slip);
  stats->AddFigure("spring_energy", statistics_.spring_energy);
}

}  // namespace alsim
