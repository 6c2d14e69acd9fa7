#include "engine/solver/nsn/nsn_solver.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include <Eigen/Cholesky>

#include "engine/constraint/build_constraints.h"
#include "engine/solver/stop_test.h"

namespace alsim {
namespace {

double MaxAbs(const std::vector<double>& x, int n) {
  double largest = 0;
  for (int i = 0; i < n; ++i) largest = std::max(largest, std::abs(x[i]));
  return largest;
}

// Grows a vector to at least n entries (never shrinks: the storage is the slot's).
template <class T>
void Grow(std::vector<T>& v, int n) {
  if (static_cast<int>(v.size()) < n) v.resize(n);
}

}  // namespace

NsnSolver::NsnSolver(const Model& m) : IslandSolver(m), kinematics_(m) {
  jacobian_.Reserve(m, MaxConstraints(m));
  local_dof_.resize(m.nv);
  trial_velocity_.assign(m.nv, 0.0);
  anchor1_.reserve(MaxConstraints(m));
  anchor2_.reserve(MaxConstraints(m));
}

void NsnSolver::Prepare(const Model& m, Data& d, const SolverOptions& /*options*/) {
  jacobian_.Layout(m, d);
  kinematics_.Begin(m, d);
  // The iterates' rows: the step's constraints, whose contact and equality maps Evaluate moves.
  ConstraintSet& trial = kinematics_.data().constraints;
  trial.constraints = d.constraints.constraints;
  trial.blocks = d.constraints.blocks;
  anchor1_.resize(d.constraints.constraints.size());
  anchor2_.resize(d.constraints.constraints.size());
  island_statistics_.assign(d.islands.num, NsnStatistics{});
  while (static_cast<int>(work_.size()) < d.islands.num) {
    work_.push_back(std::make_unique<IslandWork>());
  }
}

void NsnSolver::ApplyJ(const IslandWork& work, const double* x, double* y) const {
  const int rows = static_cast<int>(work.source.size());
  for (int k = 0; k < rows; ++k) {
    const int i = work.constraint[k], r = work.row[k];
    double sum = 0;
    for (int e = jacobian_.entry_adr[i]; e < jacobian_.entry_adr[i] + jacobian_.entry_num[i]; ++e) {
      sum += jacobian_.At(e, r) * x[local_dof_[jacobian_.dof[e]]];
    }
    y[k] = work.scale[k] * sum;
  }
}

void NsnSolver::ApplyJT(const IslandWork& work, const double* x, double* y) const {
  const int n = static_cast<int>(work.global.size());
  const int rows = static_cast<int>(work.source.size());
  std::fill(y, y + n, 0.0);
  for (int k = 0; k < rows; ++k) {
    const double value = work.scale[k] * x[k];
    if (value == 0) continue;
    const int i = work.constraint[k], r = work.row[k];
    for (int e = jacobian_.entry_adr[i]; e < jacobian_.entry_adr[i] + jacobian_.entry_num[i]; ++e) {
      y[local_dof_[jacobian_.dof[e]]] += jacobian_.At(e, r) * value;
    }
  }
}

void NsnSolver::ApplyInverse(const IslandWork& work, const double* x, double* y) {
  const int n = static_cast<int>(work.global.size());
  Eigen::Map<const Eigen::MatrixXd> inverse(work.inverse.data(), n, n);
  Eigen::Map<const Eigen::VectorXd> in(x, n);
  Eigen::Map<Eigen::VectorXd> out(y, n);
  out.noalias() = inverse * in;
}

void NsnSolver::Evaluate(const Model& m, const Data& d, const NsnParameters& p, int island,
                         IslandWork& work, bool first) {
  const double h = m.timestep;
  const int n = static_cast<int>(work.global.size());
  const int rows = static_cast<int>(work.source.size());
  for (int a = 0; a < n; ++a) trial_velocity_[work.global[a]] = work.u[a];
  kinematics_.Place(m, d, d.islands, island, trial_velocity_.data(), h);
  Data& trial = kinematics_.data();
  ConstraintSet& trial_set = trial.constraints;

  // Contacts and equalities at q^n: their values, maps and Jacobians.
  for (int k = 0; k < rows; ++k) {
    if (work.row[k] != 0) continue;
    const int i = work.constraint[k];
    const Constraint& c = trial_set.constraints[i];
    if (c.type == ConstraintType::kContact) {
      const Contact& contact = d.contact[c.contact];
      const int body1 = m.geom_body[contact.geom1], body2 = m.geom_body[contact.geom2];
      const Vec3 p1 = trial.xpos[body1] + trial.xmat[body1] * anchor1_[i];
      const Vec3 p2 = trial.xpos[body2] + trial.xmat[body2] * anchor2_[i];
      work.value[k] = contact.frame.col(0).dot(p2 - p1);
      const Vec3 point = 0.5 * (p1 + p2);
      if (p.contact_rows_at_start) continue;  // J stays the one filled at q-
      for (int b = c.block_adr; b < c.block_adr + c.block_num; ++b) {
        ConstraintBlock& block = trial_set.blocks[b];
        SetPointBlockMap(contact.frame.transpose(),
                         point - SpatialReferencePoint(m, trial, block.body),
                         block.body == body2 ? 1.0 : -1.0, block);
      }
      jacobian_.Fill(m, trial, i);
    } else if (c.type == ConstraintType::kEquality) {
      const int eq = c.key.a;
      const EqualityError error = EqualityErrors(m, trial, eq);
      const bool rotation = c.key.b == 1;
      for (int r = 0; r < 3; ++r) {
        work.value[k + r] = rotation ? error.rotation[r] : error.position[r];
      }
      if (!rotation) {
        for (int b = c.block_adr; b < c.block_adr + c.block_num; ++b) {
          ConstraintBlock& block = trial_set.blocks[b];
          const bool first_body = block.body == m.eq_body1[eq];
          SetPointBlockMap(Mat3::Identity(),
                           (first_body ? error.point1 : error.point2) -
                               SpatialReferencePoint(m, trial, block.body),
                           first_body ? 1.0 : -1.0, block);
        }
      }
      jacobian_.Fill(m, trial, i);
    }
  }

  // The raw rows' J u and diagonals [J A^-1 J^T]_kk.
  for (int k = 0; k < rows; ++k) {
    const int i = work.constraint[k], r = work.row[k];
    const int begin = jacobian_.entry_adr[i], end = begin + jacobian_.entry_num[i];
    double velocity = 0, diagonal = 0;
    for (int e = begin; e < end; ++e) {
      const int a = local_dof_[jacobian_.dof[e]];
      const double value = jacobian_.At(e, r);
      velocity += value * work.u[a];
      double sum = 0;
      for (int f = begin; f < end; ++f) {
        sum += work.inverse[static_cast<size_t>(a) * n + local_dof_[jacobian_.dof[f]]] *
               jacobian_.At(f, r);
      }
      diagonal += value * sum;
    }
    work.velocity[k] = velocity;
    work.raw_diagonal[k] = diagonal;
  }
  if (first) {  // (66), once per step from the rows at q-
    for (int k = 0; k < rows; ++k) {
      if (work.kind[k] == RowKind::kNormal) {
        work.factor[k] = NormalComplementarityFactor(p.scaling, h, work.raw_diagonal[k]);
      } else if (work.kind[k] == RowKind::kTangent && work.row[k] == 1) {
        work.factor[k] = work.factor[k + 1] = FrictionComplementarityFactor(
            p.scaling, h, work.raw_diagonal[k], work.raw_diagonal[k + 1]);
      }
    }
  }

  // The rows of the system: scale (J = scale times the raw row), C and the h-vector (58).
  const ConstraintSet& set = d.constraints;
  for (int k = 0; k < rows; ++k) {
    const Constraint& c = set.constraints[work.constraint[k]];
    work.weight[k] = 1;
    switch (work.kind[k]) {
      case RowKind::kNormal: {
        if (c.type != ConstraintType::kContact) {
          work.value[k] = work.start[k] + h * work.velocity[k];  // a limit: linear in q
        }
        const NcpEvaluation ncp = EvaluateNcp(p.ncp, work.value[k], work.lambda[k], work.factor[k]);
        work.residual[k] = ncp.phi / h;
        work.scale[k] = ncp.dphi_da;
        work.compliance[k] = ncp.dphi_db / (h * h);
        break;
      }
      case RowKind::kTangent: {
        if (work.row[k] != 1) break;  // both tangents at the first
        const double slip = std::hypot(work.velocity[k], work.velocity[k + 1]);
        const double cone = c.friction * work.lambda[work.normal[k]];
        const double norm = std::hypot(work.lambda[k], work.lambda[k + 1]);
        const double r = work.factor[k];
        FrictionCompliance friction = EvaluateFrictionCompliance(p.ncp, slip, cone, norm, r);
        if (friction.active && !first) {  // [OURS] memory: NsnParameters::friction_memory
          friction.w = std::max(friction.w, p.friction_memory * work.previous_w[k]);
        }
        work.previous_w[k] = friction.active ? friction.w : 0;
        for (int t = k; t < k + 2; ++t) {
          if (friction.active) {
            work.scale[t] = 1;
            work.compliance[t] = friction.w / h;
            work.residual[t] = work.velocity[t] + friction.w * work.lambda[t];
            work.weight[t] = r / (r + friction.w);
          } else {
            work.scale[t] = 0;
            work.compliance[t] = 1 / h;
            work.residual[t] = work.lambda[t];
            work.weight[t] = r;
          }
        }
        break;
      }
      case RowKind::kBilateral:
        work.scale[k] = 1;
        work.compliance[k] = 0;
        work.residual[k] = work.value[k] / h;
        break;
      case RowKind::kServo: {
        // h lambda = -k e - b J u: J u + (h lambda + k e) / b = 0, C = 1 / b.
        const double damping = std::max(c.soft_damping, 1e-12);
        work.scale[k] = 1;
        work.compliance[k] = 1 / damping;
        work.residual[k] = work.velocity[k] + (h * work.lambda[k] + c.soft_bias) / damping;
        break;
      }
    }
  }
}

void NsnSolver::SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                            double deadline_us, int island) {
  const NsnParameters& p = options.nsn;
  ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  IslandSolveResult& result = island_results_[island];
  result = IslandSolveResult{};
  NsnStatistics& stats = island_statistics_[island];
  stats = NsnStatistics{};
  IslandWork& work = *work_[island];
  const double h = m.timestep;
  double clock = SteadyMicroseconds();

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

  // The rows, in constraint order; contacts' points fixed on their bodies at q-.
  work.source.clear();
  work.constraint.clear();
  work.row.clear();
  work.kind.clear();
  work.normal.clear();
  work.start.clear();
  const auto add = [&](int i, int r, RowKind kind, int normal) {
    work.source.push_back(set.constraints[i].row_adr + r);
    work.constraint.push_back(i);
    work.row.push_back(r);
    work.kind.push_back(kind);
    work.normal.push_back(normal);
    work.start.push_back(set.bias[set.constraints[i].row_adr + r]);
  };
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    for (int r = 0; r < c.dim; ++r) set.lambda[c.row_adr + r] = 0;
    jacobian_.Fill(m, d, i);
    switch (c.type) {
      case ConstraintType::kContact: {
        const Contact& contact = d.contact[c.contact];
        const int body1 = m.geom_body[contact.geom1], body2 = m.geom_body[contact.geom2];
        const Vec3 half = 0.5 * contact.dist * contact.frame.col(0);
        anchor1_[i] = d.xmat[body1].transpose() * (contact.pos - half - d.xpos[body1]);
        anchor2_[i] = d.xmat[body2].transpose() * (contact.pos + half - d.xpos[body2]);
        const int normal = static_cast<int>(work.source.size());
        add(i, 0, RowKind::kNormal, -1);
        add(i, 1, RowKind::kTangent, normal);
        add(i, 2, RowKind::kTangent, normal);
        break;
      }
      case ConstraintType::kLimit:
        add(i, 0, RowKind::kNormal, -1);
        break;
      case ConstraintType::kEquality:
        for (int r = 0; r < c.dim; ++r) add(i, r, RowKind::kBilateral, -1);
        break;
      case ConstraintType::kSoft:
        add(i, 0, RowKind::kServo, -1);
        break;
      case ConstraintType::kFriction:  // refused (SolverRefusesModel)
        break;
    }
  }
  const int rows = static_cast<int>(work.source.size());
  for (std::vector<double>* v :
       {&work.value, &work.velocity, &work.scale, &work.compliance, &work.factor, &work.weight,
        &work.raw_diagonal, &work.residual, &work.lambda, &work.dlambda, &work.diagonal, &work.rhs,
        &work.previous_w}) {
    Grow(*v, rows);
  }
  for (std::vector<double>* v : {&work.u, &work.g, &work.du, &work.work, &work.work2}) {
    Grow(*v, std::max(n, rows));
  }
  Grow(work.a, n * n);
  Grow(work.inverse, n * n);
  Grow(work.factorization, n * n);

  // A over the island's dofs from its tree-sparse storage, its LLT, and A^-1.
  const TreeSparseLayout& layout = d.mass_layout;
  Eigen::Map<Eigen::MatrixXd> a(work.a.data(), n, n);
  a.setZero();
  for (int i = 0; i < n; ++i) {
    const int dof = global[i];
    for (int t = 0; t < layout.row_nnz[dof]; ++t) {
      const int j = local_dof_[layout.column[layout.row_adr[dof] + t]];
      const double value = d.qA[layout.row_adr[dof] + t];
      a(i, j) = value;
      a(j, i) = value;
    }
  }
  Eigen::Map<Eigen::MatrixXd> factorization(work.factorization.data(), n, n);
  factorization = a;
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(factorization);
  Eigen::Map<Eigen::MatrixXd> inverse(work.inverse.data(), n, n);
  inverse.setIdentity();
  llt.solveInPlace(inverse);

  work.history.clear();
  // u^0 = 0, lambda^0 = 0 (67)-(68).
  std::fill(work.u.begin(), work.u.begin() + n, 0.0);
  std::fill(work.lambda.begin(), work.lambda.begin() + rows, 0.0);
  double momentum_scale = 1;
  for (int i = 0; i < n; ++i)
    momentum_scale = std::max(momentum_scale, std::abs(d.solver_rhs[global[i]]));

  const auto apply = [&](const double* x, double* y) {
    ApplyJT(work, x, work.work.data());
    ApplyInverse(work, work.work.data(), work.work2.data());
    ApplyJ(work, work.work2.data(), y);
    for (int k = 0; k < rows; ++k) y[k] += (work.compliance[k] + p.regularization) * x[k];
  };
  const auto row_product = [&](int k, const double* x) {
    ApplyJT(work, x, work.work.data());
    ApplyInverse(work, work.work.data(), work.work2.data());
    const int i = work.constraint[k], r = work.row[k];
    double sum = 0;
    for (int e = jacobian_.entry_adr[i]; e < jacobian_.entry_adr[i] + jacobian_.entry_num[i]; ++e) {
      sum += jacobian_.At(e, r) * work.work2[local_dof_[jacobian_.dof[e]]];
    }
    return work.scale[k] * sum + (work.compliance[k] + p.regularization) * x[k];
  };
  KrylovOptions krylov;
  krylov.max_iterations = p.linear_iterations;
  krylov.relative_tolerance = p.linear_tolerance;

  for (int iteration = 0;; ++iteration) {
    Evaluate(m, d, p, island, work, iteration == 0);
    // g = A (u - v_free) - h J^T lambda (57), with A v_free = b.
    ApplyJT(work, work.lambda.data(), work.work.data());
    Eigen::Map<const Eigen::VectorXd> u(work.u.data(), n);
    Eigen::Map<Eigen::VectorXd> g(work.g.data(), n);
    g.noalias() = a * u;
    for (int i = 0; i < n; ++i) work.g[i] -= d.solver_rhs[global[i]] + h * work.work[i];
    stats.momentum_residual = MaxAbs(work.g, n);
    stats.row_residual = 0;
    for (int k = 0; k < rows; ++k) {
      stats.row_residual =
          std::max(stats.row_residual, std::abs(work.residual[k]) * work.weight[k]);
    }
    if (record_history_)
      work.history.push_back({stats.momentum_residual, stats.row_residual, 0, 0});
    const double now = SteadyMicroseconds();
    stats.assembly_seconds += 1e-6 * (now - clock);
    clock = now;
    if (p.newton_tolerance > 0 && stats.momentum_residual <= p.newton_tolerance * momentum_scale &&
        stats.row_residual <= p.newton_tolerance / h) {
      result.converged = true;
      break;
    }
    if (iteration == p.newton_iterations) break;
    if (deadline_us > 0 && now > deadline_us) break;
    ++stats.newton_iterations;
    // b = (1/h) (J A^-1 g - h-vector) (59) and the Jacobi diagonal.
    ApplyInverse(work, work.g.data(), work.work.data());
    ApplyJ(work, work.work.data(), work.rhs.data());
    for (int k = 0; k < rows; ++k) {
      work.rhs[k] = (work.rhs[k] - work.residual[k]) / h;
      work.diagonal[k] = work.scale[k] * work.scale[k] * work.raw_diagonal[k] + work.compliance[k] +
                         p.regularization;
    }
    std::fill(work.dlambda.begin(), work.dlambda.begin() + rows, 0.0);
    KrylovResult solve;
    switch (p.linear_solver) {
      case NsnLinearSolver::kConjugateResidual:
        solve = JacobiConjugateResidual(apply, work.diagonal.data(), work.rhs.data(), rows, krylov,
                                        &work.krylov, work.dlambda.data());
        break;
      case NsnLinearSolver::kConjugateGradient:
        solve = JacobiConjugateGradient(apply, work.diagonal.data(), work.rhs.data(), rows, krylov,
                                        &work.krylov, work.dlambda.data());
        break;
      case NsnLinearSolver::kJacobi:
        solve = JacobiIteration(apply, work.diagonal.data(), work.rhs.data(), rows, krylov,
                                &work.krylov, work.dlambda.data());
        break;
      case NsnLinearSolver::kGaussSeidel:
        solve = GaussSeidelIteration(row_product, work.diagonal.data(), work.rhs.data(), rows,
                                     krylov, &work.krylov, work.dlambda.data());
        break;
    }
    stats.linear_iterations += solve.iterations;
    if (record_history_) {
      work.history.back().linear_iterations = solve.iterations;
      work.history.back().linear_residual =
          solve.initial_residual > 0 ? solve.residual / solve.initial_residual : 0;
    }
    // du = A^-1 (h J^T dlambda - g) (60); lambda += t dlambda, u += t du (61)-(62).
    ApplyJT(work, work.dlambda.data(), work.work.data());
    for (int i = 0; i < n; ++i) work.work[i] = h * work.work[i] - work.g[i];
    ApplyInverse(work, work.work.data(), work.du.data());
    for (int k = 0; k < rows; ++k) work.lambda[k] += p.step_fraction * work.dlambda[k];
    for (int i = 0; i < n; ++i) work.u[i] += p.step_fraction * work.du[i];
    const double after = SteadyMicroseconds();
    stats.linear_seconds += 1e-6 * (after - clock);
    clock = after;
  }

  for (int i = 0; i < n; ++i) d.v_hat[global[i]] = work.u[i];
  for (int k = 0; k < rows; ++k) {
    set.lambda[work.source[k]] = h * work.lambda[k];
    if (work.kind[k] == RowKind::kNormal) {
      stats.max_penetration = std::max(stats.max_penetration, -work.value[k]);
    }
  }
  stats.max_newton_iterations = stats.newton_iterations;
  stats.unconverged_islands = p.newton_tolerance > 0 && !result.converged;
  result.iterations = stats.newton_iterations;
  result.primal_residual = stats.row_residual;
  result.dual_residual = stats.momentum_residual;
}

void NsnSolver::AddFigures(SolverStatistics* stats) const {
  statistics_ = NsnStatistics{};
  for (const NsnStatistics& s : island_statistics_) {
    statistics_.newton_iterations += s.newton_iterations;
    statistics_.max_newton_iterations =
        std::max(statistics_.max_newton_iterations, s.max_newton_iterations);
    statistics_.linear_iterations += s.linear_iterations;
    statistics_.unconverged_islands += s.unconverged_islands;
    statistics_.momentum_residual = std::max(statistics_.momentum_residual, s.momentum_residual);
    statistics_.row_residual = std::max(statistics_.row_residual, s.row_residual);
    statistics_.max_penetration = std::max(statistics_.max_penetration, s.max_penetration);
    statistics_.assembly_seconds += s.assembly_seconds;
    statistics_.linear_seconds += s.linear_seconds;
  }
  stats->AddFigure("newton_iterations", statistics_.newton_iterations);
  stats->AddFigure("max_newton_iterations", statistics_.max_newton_iterations);
  stats->AddFigure("linear_iterations", statistics_.linear_iterations);
  stats->AddFigure("unconverged_islands", statistics_.unconverged_islands);
  stats->AddFigure("momentum_residual", statistics_.momentum_residual);
  stats->AddFigure("row_residual", statistics_.row_residual);
  stats->AddFigure("max_penetration", statistics_.max_penetration);
  stats->AddFigure("assembly_seconds", statistics_.assembly_seconds);
  stats->AddFigure("linear_seconds", statistics_.linear_seconds);
}

}  // namespace alsim

namespace alsim {
namespace {

template <class Enum, size_t kCount>
const char* NameOf(const std::pair<Enum, const char*> (&names)[kCount], Enum value) {
  for (const auto& [candidate, name] : names) {
    if (candidate == value) return name;
  }
  return "unknown";
}

template <class Enum, size_t kCount>
bool ParseName(const std::pair<Enum, const char*> (&names)[kCount], const char* text, Enum* value) {
  for (const auto& [candidate, name] : names) {
    if (std::strcmp(name, text) == 0) {
      *value = candidate;
      return true;
    }
  }
  return false;
}

constexpr std::pair<NsnLinearSolver, const char*> kLinearSolverNames[] = {
    {NsnLinearSolver::kConjugateResidual, "pcr"},
    {NsnLinearSolver::kConjugateGradient, "pcg"},
    {NsnLinearSolver::kJacobi, "jacobi"},
    {NsnLinearSolver::kGaussSeidel, "gauss-seidel"}};
constexpr std::pair<NcpFunction, const char*> kNcpNames[] = {
    {NcpFunction::kFischerBurmeister, "fischer-burmeister"}, {NcpFunction::kMinimumMap, "min-map"}};
constexpr std::pair<ComplementarityScaling, const char*> kScalingNames[] = {
    {ComplementarityScaling::kEffectiveMass, "effective-mass"},
    {ComplementarityScaling::kIdentity, "identity"},
    {ComplementarityScaling::kTimeStepSquared, "h2"}};

}  // namespace

const char* NsnLinearSolverName(NsnLinearSolver solver) {
  return NameOf(kLinearSolverNames, solver);
}
bool ParseNsnLinearSolverName(const char* name, NsnLinearSolver* solver) {
  return ParseName(kLinearSolverNames, name, solver);
}
const char* NcpFunctionName(NcpFunction function) { return NameOf(kNcpNames, function); }
bool ParseNcpFunctionName(const char* name, NcpFunction* function) {
  return ParseName(kNcpNames, name, function);
}
const char* ComplementarityScalingName(ComplementarityScaling scaling) {
  return NameOf(kScalingNames, scaling);
}
bool ParseComplementarityScalingName(const char* name, ComplementarityScaling* scaling) {
  return ParseName(kScalingNames, name, scaling);
}

}  // namespace alsim
