#include "engine/solver/drumwright/drumwright_solver.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/data/contact.h"
#include "engine/linalg/tree_sparse_layout.h"

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
  const double h = m.timestep;

  // The island's dofs, subsystem by subsystem (each a contiguous range).
  std::vector<int> global;
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
  // constraint set.
  FirstOrderProblem p;
  p.h = h;
  p.zeta = parameters.zeta_h / h;
  std::vector<int> source;
  std::vector<int> constraint_of;
  std::vector<char> physical;  // a physical spring (not a servo's row, not a tangent)
  const auto add = [&](int row, int constraint, SpringRowClass type, double phi0, double k,
                       double b, double mu) {
    SpringRow spring;
    spring.type = type;
    spring.phi0 = phi0;
    spring.stiffness = k;
    spring.damping = b;
    spring.friction = mu;
    p.rows.push_back(spring);
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
        // Key kinds (constraint_set.h): 2 joint limit, 5 tendon limit, 6 foundation element.
        const int kind = c.key.kind, a = c.key.a;
        const double k = kind == 6   ? m.foundation_stiffness[a]
                         : kind == 5 ? Own(m.tendon_spring_stiffness, a, -1)
                                     : Own(m.jnt_spring_stiffness, a, -1);
        const double b = kind == 6   ? m.foundation_damping[a]
                         : kind == 5 ? Own(m.tendon_spring_damping, a, -1)
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
  const int rows = static_cast<int>(p.rows.size());
  if (rows == 0) {  // only speculative contacts and limits: v_hat = v_free
    result.converged = true;
    return;
  }

  // A over the island's dofs from its tree-sparse storage, and G.
  const TreeSparseLayout& layout = d.mass_layout;
  p.mass = Eigen::MatrixXd::Zero(n, n);
  p.velocity.resize(n);
  p.force = Eigen::VectorXd::Zero(n);
  for (int a = 0; a < n; ++a) {
    const int dof = global[a];
    p.velocity[a] = d.v_free[dof];
    for (int t = 0; t < layout.row_nnz[dof]; ++t) {
      const int b = local_dof_[layout.column[layout.row_adr[dof] + t]];
      const double value = d.qA[layout.row_adr[dof] + t];
      p.mass(a, b) = value;
      p.mass(b, a) = value;
    }
  }
  p.jacobian = Eigen::MatrixXd::Zero(rows, n);
  int filled = -1;
  for (int k = 0; k < rows; ++k) {
    const int i = constraint_of[k];
    if (i != filled) {
      jacobian_.Fill(m, d, i);
      filled = i;
    }
    const int r = source[k] - set.constraints[i].row_adr;
    for (int e = jacobian_.entry_adr[i]; e < jacobian_.entry_adr[i] + jacobian_.entry_num[i]; ++e) {
      p.jacobian(k, local_dof_[jacobian_.dof[e]]) += jacobian_.At(e, r);
    }
  }

  FirstOrderResult step;
  for (int round = 0;; ++round) {
    step = SolveFirstOrderStep(p, parameters.program);
    if (step.solved_program) {
      ++stats.programs;
      stats.program_iterations += step.program.iterations;
      result.iterations += step.program.iterations;
      stats.admm_programs += step.admm && step.ok;
    }
    if (!step.ok) {
      if (step.solved_program) ++stats.failed_programs;
      for (int k = 0; k < static_cast<int>(source.size()); ++k) set.lambda[source[k]] = 0;
      return;  // v_hat stays v_free, every impulse 0
    }
    if (!parameters.complementary || round == kMaxComplementaryRounds) break;
    // Rows that push (lam > 0) while their spring ends the step extended (phi1 > 0, so lam >
    // their law): dropped, with a contact's tangents, and the program solved again.
    const Eigen::VectorXd y = p.jacobian * step.velocity;
    const double largest = step.lambda.lpNorm<Eigen::Infinity>();
    std::vector<char> keep(p.rows.size(), 1);
    bool dropped = false;
    for (int k = 0; k < static_cast<int>(p.rows.size()); ++k) {
      const SpringRowClass type = p.rows[k].type;
      if (type != SpringRowClass::kNormal && type != SpringRowClass::kUnilateral) continue;
      if (!(step.lambda[k] > 1e-12 * largest && p.rows[k].phi0 + h * y[k] > 0)) continue;
      keep[k] = 0;
      if (type == SpringRowClass::kNormal) keep[k + 1] = keep[k + 2] = 0;
      dropped = true;
    }
    if (!dropped) break;
    ++stats.dropped_rows;
    int kept = 0;
    for (int k = 0; k < static_cast<int>(p.rows.size()); ++k) {
      if (!keep[k]) continue;
      p.rows[kept] = p.rows[k];
      p.jacobian.row(kept) = p.jacobian.row(k);
      source[kept] = source[k];
      constraint_of[kept] = constraint_of[k];
      physical[kept] = physical[k];
      ++kept;
    }
    p.rows.resize(kept);
    p.jacobian.conservativeResize(kept, Eigen::NoChange);
    source.resize(kept);
    constraint_of.resize(kept);
    physical.resize(kept);
  }
  const int rows_left = static_cast<int>(p.rows.size());
  result.converged = true;
  if (step.solved_program) stats.max_kkt_residual = step.program.kkt_residual;
  for (int a = 0; a < n; ++a) d.v_hat[global[a]] = step.velocity[a];
  const Eigen::VectorXd row_velocity = p.jacobian * step.velocity;
  for (int k = 0; k < rows_left; ++k) {
    set.lambda[source[k]] = h * step.lambda[k];
    const SpringRow& row = p.rows[k];
    const double phi1 = row.phi0 + h * row_velocity[k];
    // A unilateral spring stores energy only while compressed.
    const bool stretched = row.type == SpringRowClass::kBilateral || phi1 < 0;
    if (physical[k] && stretched) stats.spring_energy += 0.5 * row.stiffness * phi1 * phi1;
    if (row.type != SpringRowClass::kNormal) continue;
    // The spring-law bound of (137) and the cone's state of this contact.
    const double bound = -row.stiffness * phi1 - row.damping * row_velocity[k];
    if (bound > 0) {
      stats.max_normal_inflation = std::max(stats.max_normal_inflation, step.lambda[k] / bound);
    }
    const double tangential = std::hypot(step.lambda[k + 1], step.lambda[k + 2]);
    if (row.friction > 0 && tangential < row.friction * step.lambda[k] * (1 - 1e-6)) {
      const double slip = std::hypot(row_velocity[k + 1], row_velocity[k + 2]);
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
