#include "engine/solver/nsn/nsn_solver.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include <Eigen/Cholesky>

#include "engine/constraint/build_constraints.h"
#include "engine/core/parallel.h"
#include "engine/dynamics/jacobian.h"
#include "engine/model/deformable_spec.h"
#include "engine/solver/island_schedule.h"
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

// A tangent basis of a contact normal: d1 orthogonal to n and to the axis least aligned with it,
// d2 = n x d1.
void TangentBasis(const Vec3& n, Vec3* d1, Vec3* d2) {
  int axis = 0;
  for (int c = 1; c < 3; ++c) {
    if (std::abs(n[c]) < std::abs(n[axis])) axis = c;
  }
  *d1 = n.cross(Vec3::Unit(axis)).normalized();
  *d2 = n.cross(*d1);
}

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// Joins the sets of a and b under the smaller root, so that roots are deterministic.
void Union(std::vector<int>& parent, int a, int b) {
  a = Find(parent, a);
  b = Find(parent, b);
  if (a != b) parent[std::max(a, b)] = std::min(a, b);
}

// The radius of curvature of geom g's surface at a contact, the same everywhere on it: a
// sphere's, a capsule's (its sides and caps); 0 for the others (flat faces, edges and corners,
// where the surface point itself is the point fixed on the body).
double CurvatureRadius(const Model& m, int g) {
  const GeomType type = m.geom_type[g];
  return type == GeomType::kSphere || type == GeomType::kCapsule ? m.geom_size[g][0] : 0;
}

// The most rows of one tet (a Neo-Hookean tet's 9) and its compliance block's size.
constexpr int kMaxTetRows = 9;
constexpr int kBlock = kMaxTetRows * kMaxTetRows;

int TetRowCount(const Model& m, int tet) {
  const auto material =
      static_cast<DeformableMaterial>(m.deform_material[m.vert_deform[m.tet_vert[tet][0]]]);
  return material == DeformableMaterial::kNeoHookean ? 9 : 6;
}

}  // namespace

NsnSolver::NsnSolver(const Model& m) : IslandSolver(m), kinematics_(m) {
  jacobian_.Reserve(m, MaxConstraints(m));
  local_dof_.resize(m.nv);
  local_vertex_.assign(m.nvert, -1);
  trial_velocity_.assign(m.nv, 0.0);
  anchor1_.reserve(MaxConstraints(m));
  anchor2_.reserve(MaxConstraints(m));
  tet_rest_.resize(m.ntet);
  for (int e = 0; e < m.ntet; ++e) {
    TetVertices x;
    for (int a = 0; a < 4; ++a) x.col(a) = m.vert_pos0[m.tet_vert[e][a]];
    MakeTetRest(x, &tet_rest_[e]);  // the importer refused degenerate and inverted tets
  }
  tet_rest0_ = tet_rest_;
  for (int k = 0; k < m.ndeform; ++k) {
    deform_linear_.push_back(
        LinearMaterialFromYoungPoisson(m.deform_young[k], m.deform_poisson[k]));
    deform_neo_hookean_.push_back(
        NeoHookeanFromYoungPoisson(m.deform_young[k], m.deform_poisson[k]));
  }
  contact_adr_.assign(m.ndeform + 1, 0);
  triangle_adr_.assign(m.ndeform + 1, 0);
  pair_adr_.assign(m.ndeform + 1, 0);
  // The springs A can hold (N = I): hinges and slides (theta_method.cc's linear springs).
  spring_joint_.assign(m.nv, -1);
  tree_has_spring_.assign(m.nsubsystem, 0);
  tree_in_system_.assign(m.nsubsystem, 0);
  for (int j = 0; j < m.njnt; ++j) {
    const JointType type = m.jnt_type[j];
    if (m.jnt_stiffness[j] == 0 || (type != JointType::kHinge && type != JointType::kSlide)) {
      continue;
    }
    const int dof = m.jnt_dof_adr[j];
    spring_joint_[dof] = j;
    const int tree = m.body_subsystem[m.jnt_body[j]];
    if (tree >= 0) tree_has_spring_[tree] = 1;
    solves_always_ = true;
  }
  solves_always_ = solves_always_ || m.nvert > 0;
}

void NsnSolver::Prepare(const Model& m, Data& d, const SolverOptions& options) {
  jacobian_.Layout(m, d);
  kinematics_.Begin(m, d);
  // The iterates' rows: the step's constraints, whose contact and equality maps Evaluate moves.
  ConstraintSet& trial = kinematics_.data().constraints;
  trial.constraints = d.constraints.constraints;
  trial.blocks = d.constraints.blocks;
  anchor1_.resize(d.constraints.constraints.size());
  anchor2_.resize(d.constraints.constraints.size());
  // Activations: the rest shape Dm of each activated tet grown by s = 1 + a (Model's activation
  // comment), so Dm^-1 and the shape gradients scale by 1 / s and V_e by s^3.
  for (size_t k = 0; k < m.activation_actuator.size(); ++k) {
    const int a = m.activation_actuator[k];
    const double s = 1 + std::clamp(d.ctrl[a], m.actuator_ctrl_lower[a], m.actuator_ctrl_upper[a]);
    for (int x = m.activation_tet_adr[k]; x < m.activation_tet_adr[k] + m.activation_tet_num[k];
         ++x) {
      const int e = m.activation_tet[x];
      tet_rest_[e].dm_inverse = tet_rest0_[e].dm_inverse / s;
      tet_rest_[e].shape_gradients = tet_rest0_[e].shape_gradients / s;
      tet_rest_[e].volume = tet_rest0_[e].volume * s * s * s;
    }
  }

  // The systems: with no deformable, each island; otherwise the islands no deformable touches,
  // then one group per set of deformables, islands and free trees joined by vertex contacts and
  // attachments (union-find, roots the smallest node: islands, deformables, free trees).
  const int islands = d.islands.num;
  systems_.clear();
  system_island_.clear();
  system_tree_.clear();
  system_deform_.clear();
  const auto tree_node = [&](int j) {
    const int k = islands > 0 ? d.islands.subsystem_island[j] : -1;
    return k >= 0 ? k : islands + m.ndeform + j;
  };
  if (m.ndeform > 0) {
    vertex_contact_impulse_.assign(d.vertex_contact.size(), 0.0);
    group_root_.resize(islands + m.ndeform + m.nsubsystem);
    for (size_t x = 0; x < group_root_.size(); ++x) group_root_[x] = static_cast<int>(x);
    std::fill(contact_adr_.begin(), contact_adr_.end(), 0);
    for (const VertexContact& contact : d.vertex_contact) {
      const int k = m.vert_deform[contact.vertex];
      ++contact_adr_[k + 1];
      const int j = m.body_subsystem[m.geom_body[contact.geom]];
      if (j >= 0) Union(group_root_, islands + k, tree_node(j));
    }
    for (int k = 0; k < m.ndeform; ++k) contact_adr_[k + 1] += contact_adr_[k];
    triangle_contact_impulse_.assign(d.triangle_contact.size(), 0.0);
    std::fill(triangle_adr_.begin(), triangle_adr_.end(), 0);
    for (const TriangleContact& contact : d.triangle_contact) {
      const int k = m.vert_deform[m.tri_vert[contact.triangle][0]];
      ++triangle_adr_[k + 1];
      const int j = m.body_subsystem[m.geom_body[contact.geom]];
      if (j >= 0) Union(group_root_, islands + k, tree_node(j));
    }
    for (int k = 0; k < m.ndeform; ++k) triangle_adr_[k + 1] += triangle_adr_[k];
    vertex_triangle_impulse_.assign(d.vertex_triangle_contact.size(), 0.0);
    std::fill(pair_adr_.begin(), pair_adr_.end(), 0);
    for (const VertexTriangleContact& contact : d.vertex_triangle_contact) {
      const int k = m.vert_deform[contact.vertex];
      ++pair_adr_[k + 1];
      Union(group_root_, islands + k, islands + m.vert_deform[m.tri_vert[contact.triangle][0]]);
    }
    for (int k = 0; k < m.ndeform; ++k) pair_adr_[k + 1] += pair_adr_[k];
    for (int v = 0; v < m.nvert; ++v) {
      const int body = m.vert_body[v];
      const int j = body > 0 ? m.body_subsystem[body] : -1;
      if (j >= 0) Union(group_root_, islands + m.vert_deform[v], tree_node(j));
    }
  }
  for (int k = 0; k < islands; ++k) {
    if (m.ndeform > 0 && Find(group_root_, k) != k) continue;
    bool touched = false;
    for (int x = islands; m.ndeform > 0 && x < islands + m.ndeform; ++x) {
      touched = touched || Find(group_root_, x) == k;
    }
    if (touched) continue;
    System system;
    system.island_adr = static_cast<int>(system_island_.size());
    system.island_num = 1;
    system_island_.push_back(k);
    system.tree_adr = static_cast<int>(system_tree_.size());
    system.deform_adr = static_cast<int>(system_deform_.size());
    systems_.push_back(system);
  }
  for (int k = 0; k < m.ndeform; ++k) {
    const int root = Find(group_root_, islands + k);
    bool first = true;  // the group's first deformable opens it
    for (int x = 0; x < islands + k; ++x) {
      if (x >= islands && Find(group_root_, x) == root) first = false;
    }
    if (!first) continue;
    System system;
    system.island_adr = static_cast<int>(system_island_.size());
    for (int x = 0; x < islands; ++x) {
      if (Find(group_root_, x) == root) system_island_.push_back(x);
    }
    system.island_num = static_cast<int>(system_island_.size()) - system.island_adr;
    system.tree_adr = static_cast<int>(system_tree_.size());
    for (int j = 0; j < m.nsubsystem; ++j) {
      const int node = islands + m.ndeform + j;
      if (tree_node(j) == node && Find(group_root_, node) == root) system_tree_.push_back(j);
    }
    system.tree_num = static_cast<int>(system_tree_.size()) - system.tree_adr;
    system.deform_adr = static_cast<int>(system_deform_.size());
    for (int x = k; x < m.ndeform; ++x) {
      if (Find(group_root_, islands + x) == root) system_deform_.push_back(x);
    }
    system.deform_num = static_cast<int>(system_deform_.size()) - system.deform_adr;
    systems_.push_back(system);
  }
  // Each tree with a joint spring that no system holds is a system of its own (its spring rows,
  // or h^2 K in H under euler; implicit-euler's v_free already is that tree's step).
  const bool spring_systems =
      options.nsn.spring_rows || options.integrator != Integrator::kImplicitEuler;
  std::fill(tree_in_system_.begin(), tree_in_system_.end(), 0);
  for (int j = 0; j < m.nsubsystem; ++j) {
    if (islands > 0 && d.islands.subsystem_island[j] >= 0) tree_in_system_[j] = 1;
  }
  for (const int j : system_tree_) tree_in_system_[j] = 1;
  for (int j = 0; j < m.nsubsystem; ++j) {
    if (!spring_systems || !tree_has_spring_[j] || tree_in_system_[j]) continue;
    System system;
    system.island_adr = static_cast<int>(system_island_.size());
    system.tree_adr = static_cast<int>(system_tree_.size());
    system.tree_num = 1;
    system_tree_.push_back(j);
    system.deform_adr = static_cast<int>(system_deform_.size());
    systems_.push_back(system);
  }
  const int slots = std::max(static_cast<int>(systems_.size()), islands);
  system_statistics_.assign(slots, NsnStatistics{});
  system_results_.assign(slots, IslandSolveResult{});
  while (static_cast<int>(work_.size()) < slots) work_.push_back(std::make_unique<SystemWork>());
}

void NsnSolver::SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                             double deadline_us) {
  const int count = static_cast<int>(systems_.size());
  ParallelFor(0, count, 1, [&](int s) {
    const System& system = systems_[s];
    SolveSystem(m, d, options, deadline_us, system, *work_[s], system_results_[s],
                system_statistics_[s]);
    for (int x = system.island_adr; x < system.island_adr + system.island_num; ++x) {
      const int k = system_island_[x];
      island_results_[k] = system_results_[s];
      if (options.compute_residual) {
        island_results_[k].residual_squares =
            IslandResidualSquares(m, d, subsystem_blocks_, k, residual_);
      }
    }
  });
}

void NsnSolver::SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                            double deadline_us, int island) {
  // Without deformables system k is island k (Prepare); with them the islands are solved in
  // their groups by SolveIslands only.
  SolveSystem(m, d, options, deadline_us, systems_[island], *work_[island], island_results_[island],
              system_statistics_[island]);
}

void NsnSolver::ApplyJ(const SystemWork& work, const double* x, double* y) {
  const int rows = static_cast<int>(work.kind.size());
  for (int k = 0; k < rows; ++k) {
    double sum = 0;
    for (int e = work.row_adr[k]; e < work.row_adr[k + 1]; ++e) {
      sum += work.entry_value[e] * x[work.entry_dof[e]];
    }
    y[k] = work.scale[k] * sum;
  }
}

void NsnSolver::ApplyJT(const SystemWork& work, const double* x, double* y) {
  const int n = work.trees + 3 * static_cast<int>(work.vertex.size());
  const int rows = static_cast<int>(work.kind.size());
  std::fill(y, y + n, 0.0);
  for (int k = 0; k < rows; ++k) {
    const double value = work.scale[k] * x[k];
    if (value == 0) continue;
    for (int e = work.row_adr[k]; e < work.row_adr[k + 1]; ++e) {
      y[work.entry_dof[e]] += work.entry_value[e] * value;
    }
  }
}

void NsnSolver::ApplyInverse(const SystemWork& work, const double* x, double* y) {
  const int trees = work.trees;
  const int n = trees + 3 * static_cast<int>(work.vertex.size());
  Eigen::Map<const Eigen::MatrixXd> inverse(work.inverse.data(), trees, trees);
  Eigen::Map<Eigen::VectorXd>(y, trees).noalias() =
      inverse * Eigen::Map<const Eigen::VectorXd>(x, trees);
  for (int i = trees; i < n; ++i) y[i] = x[i] / work.stiff_mass[i];
}

Vec3 NsnSolver::RowDirection(const Vec3& normal, int r) {
  if (r == 0) return normal;
  Vec3 d1, d2;
  TangentBasis(normal, &d1, &d2);
  return r == 1 ? d1 : d2;
}

Vec3 NsnSolver::TrianglePoint(const Data& d, const SystemWork& work, const std::array<int, 3>& tri,
                              const Vec3& weights) const {
  Vec3 point = Vec3::Zero();
  for (int a = 0; a < 3; ++a) {
    point += weights[a] * VertexPosition(d, work, local_vertex_[tri[a]], tri[a]);
  }
  return point;
}

void NsnSolver::AddVertexEntries(int trees, int local, double weight, const Vec3& direction,
                                 SystemWork& work) {
  if (local < 0) return;
  for (int c = 0; c < 3; ++c) {
    work.entry_dof.push_back(trees + 3 * local + c);
    work.entry_value.push_back(weight * direction[c]);
  }
}

void NsnSolver::AddTriangleEntries(int trees, const std::array<int, 3>& tri, const Vec3& weights,
                                   const Vec3& direction, SystemWork& work) const {
  for (int a = 0; a < 3; ++a) {
    AddVertexEntries(trees, local_vertex_[tri[a]], -weights[a], direction, work);
  }
}

template <class Apply>
KrylovResult NsnSolver::DenseLdlt(const Apply& apply, int rows, SystemWork& work) {
  // S = J H^-1 J^T + C + eps I column by column (column-major), then S = L D L^T in place (L unit
  // lower below the diagonal, D on it; no pivoting: S is symmetric positive definite), then
  // dlambda = L^-T D^-1 L^-1 rhs.
  Grow(work.schur, rows * rows);
  double* s = work.schur.data();
  const auto at = [&](int i, int j) -> double& { return s[static_cast<size_t>(j) * rows + i]; };
  std::fill(work.row_scratch.begin(), work.row_scratch.begin() + rows, 0.0);
  for (int j = 0; j < rows; ++j) {
    work.row_scratch[j] = 1;
    apply(work.row_scratch.data(), s + static_cast<size_t>(j) * rows);
    work.row_scratch[j] = 0;
  }
  for (int j = 0; j < rows; ++j) {
    double dj = at(j, j);
    for (int k = 0; k < j; ++k) dj -= at(j, k) * at(j, k) * at(k, k);
    if (!(dj > 0)) dj = std::numeric_limits<double>::min();  // S lost definiteness in rounding
    at(j, j) = dj;
    for (int i = j + 1; i < rows; ++i) {
      double sum = at(i, j);
      for (int k = 0; k < j; ++k) sum -= at(i, k) * at(j, k) * at(k, k);
      at(i, j) = sum / dj;
    }
  }
  double* x = work.dlambda.data();
  for (int i = 0; i < rows; ++i) {
    double sum = work.rhs[i];
    for (int k = 0; k < i; ++k) sum -= at(i, k) * x[k];
    x[i] = sum;
  }
  for (int i = 0; i < rows; ++i) x[i] /= at(i, i);
  for (int i = rows - 1; i >= 0; --i) {
    double sum = x[i];
    for (int k = i + 1; k < rows; ++k) sum -= at(k, i) * x[k];
    x[i] = sum;
  }
  KrylovResult result;
  result.iterations = 1;
  result.converged = true;
  return result;
}

void NsnSolver::RowDiagonals(SystemWork& work) {
  const int trees = work.trees;
  const int rows = static_cast<int>(work.kind.size());
  for (int k = 0; k < rows; ++k) {
    const int begin = work.row_adr[k], end = work.row_adr[k + 1];
    double diagonal = 0;
    for (int e = begin; e < end; ++e) {
      const int a = work.entry_dof[e];
      const double value = work.entry_value[e];
      if (a >= trees) {
        diagonal += value * value / work.stiff_mass[a];
        continue;
      }
      double sum = 0;
      for (int f = begin; f < end; ++f) {
        const int b = work.entry_dof[f];
        if (b < trees)
          sum += work.inverse[static_cast<size_t>(a) * trees + b] * work.entry_value[f];
      }
      diagonal += value * sum;
    }
    work.raw_diagonal[k] = diagonal;
  }
}

void NsnSolver::AddCompliance(const SystemWork& work, double regularization, const double* x,
                              double* y) {
  const int rows = static_cast<int>(work.kind.size());
  for (int k = 0; k < rows; ++k) {
    if (work.kind[k] != RowKind::kElement) y[k] += (work.compliance[k] + regularization) * x[k];
  }
  for (size_t e = 0; e < work.element_row.size(); ++e) {
    const int first = work.element_row[e], count = work.element_rows[e];
    const double* block = work.element_compliance.data() + kBlock * e;
    for (int r = 0; r < count; ++r) {
      double sum = regularization * x[first + r];
      for (int c = 0; c < count; ++c) sum += block[r * count + c] * x[first + c];  // E / h^2
      y[first + r] += sum;
    }
  }
}

void NsnSolver::AddPointEntries(const Model& m, int body, const Vec3& point, const Vec3& direction,
                                double sign, SystemWork& work) const {
  if (m.body_subsystem[body] < 0) return;  // the world or a static body: no dofs
  const Data& trial = kinematics_.data();
  const int count = BodyPathDofs(trial, body, work.path.data());
  const Vec3 lever = point - SpatialReferencePoint(m, trial, body);
  for (int t = count - 1; t >= 0; --t) {  // increasing dof order
    const int dof = work.path[t];
    const Vec6& motion = trial.cdof[dof];  // (angular, linear) at the tree's reference point
    const Vec3 velocity = motion.head<3>().cross(lever) + motion.tail<3>();
    work.entry_dof.push_back(local_dof_[dof]);
    work.entry_value.push_back(sign * direction.dot(velocity));
  }
}

void NsnSolver::Evaluate(const Model& m, const Data& d, const NsnParameters& p,
                         const System& system, SystemWork& work, bool first) {
  const double h = m.timestep;
  const int trees = work.trees;
  const int vertices = static_cast<int>(work.vertex.size());
  const int n = trees + 3 * vertices;
  const int rows = static_cast<int>(work.kind.size());
  for (int a = 0; a < trees; ++a) trial_velocity_[work.global[a]] = work.u[a];
  for (int x = system.island_adr; x < system.island_adr + system.island_num; ++x) {
    kinematics_.Place(m, d, d.islands, system_island_[x], trial_velocity_.data(), h);
  }
  for (int x = system.tree_adr; x < system.tree_adr + system.tree_num; ++x) {
    kinematics_.PlaceTree(m, d, system_tree_[x], trial_velocity_.data(), h);
  }
  for (int k = 0; k < vertices; ++k) {
    const int v = work.vertex[k];
    work.position[k] = d.vert_xpos[v] + h * Vec3(work.u[trees + 3 * k], work.u[trees + 3 * k + 1],
                                                 work.u[trees + 3 * k + 2]);
  }
  Data& trial = kinematics_.data();
  ConstraintSet& trial_set = trial.constraints;

  // Every row's raw entries (CSR) and value at the iterate.
  work.entry_dof.clear();
  work.entry_value.clear();
  work.row_adr[0] = 0;
  for (int k = 0; k < rows; ++k) {
    const int i = work.constraint[k], r = work.row[k];
    switch (work.origin[k]) {
      case kSet: {
        const Constraint& c = trial_set.constraints[i];
        if (r == 0 && c.type == ConstraintType::kContact) {
          const Contact& contact = d.contact[c.contact];
          const int body1 = m.geom_body[contact.geom1], body2 = m.geom_body[contact.geom2];
          const Vec3& normal = contact.frame.col(0);
          const double r1 = CurvatureRadius(m, contact.geom1);
          const double r2 = CurvatureRadius(m, contact.geom2);
          const Vec3 c1 = trial.xpos[body1] + trial.xmat[body1] * anchor1_[i];
          const Vec3 c2 = trial.xpos[body2] + trial.xmat[body2] * anchor2_[i];
          work.value[k] = normal.dot(c2 - c1) - r1 - r2;
          if (!p.contact_rows_at_start) {
            // Each body's rows at its own surface point: n . (v2(p2) - v1(p1)) is the gap's
            // exact rate (a sphere's centre and its surface point move alike along n), and no
            // body feels the force off its own surface.
            const Vec3 p1 = c1 + r1 * normal, p2 = c2 - r2 * normal;
            for (int b = c.block_adr; b < c.block_adr + c.block_num; ++b) {
              ConstraintBlock& block = trial_set.blocks[b];
              const bool second = block.body == body2;
              SetPointBlockMap(contact.frame.transpose(),
                               (second ? p2 : p1) - SpatialReferencePoint(m, trial, block.body),
                               second ? 1.0 : -1.0, block);
            }
            jacobian_.Fill(m, trial, i);
          }
        } else if (r == 0 && c.type == ConstraintType::kEquality) {
          const int eq = c.key.a;
          const EqualityError error = EqualityErrors(m, trial, eq);
          const bool rotation = c.key.b == 1;
          for (int t = 0; t < 3; ++t) {
            work.value[k + t] = rotation ? error.rotation[t] : error.position[t];
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
        for (int e = jacobian_.entry_adr[i]; e < jacobian_.entry_adr[i] + jacobian_.entry_num[i];
             ++e) {
          work.entry_dof.push_back(local_dof_[jacobian_.dof[e]]);
          work.entry_value.push_back(jacobian_.At(e, r));
        }
        break;
      }
      case kVertexContact: {
        const VertexContact& contact = d.vertex_contact[i];
        const int v = contact.vertex, local = local_vertex_[v];
        const int body = m.geom_body[contact.geom];
        const Vec3 anchor = trial.xpos[body] + trial.xmat[body] * contact.anchor;
        const Vec3 direction = RowDirection(contact.normal, r);
        if (r == 0) {
          work.value[k] = contact.normal.dot(work.position[local] - anchor) -
                          m.deform_thickness[m.vert_deform[v]];
        }
        AddVertexEntries(trees, local, 1, direction, work);
        AddPointEntries(m, body, anchor, direction, -1, work);
        break;
      }
      case kTriangleContact: {
        const TriangleContact& contact = d.triangle_contact[i];
        const auto& tri = m.tri_vert[contact.triangle];
        const int body = m.geom_body[contact.geom];
        const double radius = CurvatureRadius(m, contact.geom);
        const Vec3 centre = trial.xpos[body] + trial.xmat[body] * contact.anchor;
        const Vec3 anchor = centre - radius * contact.normal;  // the geom's surface point
        const Vec3 direction = RowDirection(contact.normal, r);
        if (r == 0) {
          work.value[k] =
              contact.normal.dot(centre - TrianglePoint(d, work, tri, contact.barycentric)) -
              radius - m.deform_thickness[m.vert_deform[tri[0]]];
        }
        AddTriangleEntries(trees, tri, contact.barycentric, direction, work);
        AddPointEntries(m, body, anchor, direction, 1, work);
        break;
      }
      case kVertexTriangle: {
        const VertexTriangleContact& contact = d.vertex_triangle_contact[i];
        const auto& tri = m.tri_vert[contact.triangle];
        const int local = local_vertex_[contact.vertex];
        const Vec3 direction = RowDirection(contact.normal, r);
        if (r == 0) {
          work.value[k] = contact.normal.dot(work.position[local] -
                                             TrianglePoint(d, work, tri, contact.barycentric)) -
                          m.deform_thickness[m.vert_deform[contact.vertex]] -
                          m.deform_thickness[m.vert_deform[tri[0]]];
        }
        AddVertexEntries(trees, local, 1, direction, work);
        AddTriangleEntries(trees, tri, contact.barycentric, direction, work);
        break;
      }
      case kAttachment: {
        const int v = i, local = local_vertex_[v], body = m.vert_body[v];
        const Vec3 point = trial.xpos[body] + trial.xmat[body] * m.vert_body_offset[v];
        work.value[k] = work.position[local][r] - point[r];
        work.entry_dof.push_back(trees + 3 * local + r);
        work.entry_value.push_back(1);
        AddPointEntries(m, body, point, Vec3::Unit(r), -1, work);
        break;
      }
      case kTet: {
        if (r != 0) break;  // the tet's rows at its first
        const auto& tet = m.tet_vert[i];
        const int deform = m.vert_deform[tet[0]];
        const auto material = static_cast<DeformableMaterial>(m.deform_material[deform]);
        TetVertices x;
        for (int a = 0; a < 4; ++a)
          x.col(a) = VertexPosition(d, work, local_vertex_[tet[a]], tet[a]);
        const int element = work.normal[k];  // the tet's index in the system
        double* block = work.element_compliance.data() + kBlock * element;
        const auto store = [&](const auto& result) {
          constexpr int count = std::decay_t<decltype(result.value)>::RowsAtCompileTime;
          for (int t = 0; t < count; ++t) {
            double sum = 0;
            for (int j = 0; j < count; ++j) {
              sum += result.compliance(t, j) * (result.value[j] + work.lambda[k + j]);
              block[t * count + j] = result.compliance(t, j) / (h * h);
            }
            work.residual[k + t] = sum / h;
            work.compliance[k + t] = result.compliance(t, t) / (h * h);
            work.value[k + t] = result.value[t];
            // The row's entries: 3 per vertex that is an unknown.
            if (t > 0) work.row_adr[k + t] = static_cast<int>(work.entry_dof.size());
            for (int a = 0; a < 4; ++a) {
              const int local = local_vertex_[tet[a]];
              if (local < 0) continue;
              for (int c = 0; c < 3; ++c) {
                work.entry_dof.push_back(trees + 3 * local + c);
                work.entry_value.push_back(result.jacobian(t, 3 * a + c));
              }
            }
            work.row_adr[k + t + 1] = static_cast<int>(work.entry_dof.size());
          }
        };
        if (material == DeformableMaterial::kNeoHookean) {
          TetRows<9> result;
          EvaluateNeoHookeanGradientTet(tet_rest_[i], deform_neo_hookean_[deform], x, &result);
          store(result);
        } else {
          TetRows<6> result;
          if (material == DeformableMaterial::kLinear) {
            EvaluateLinearTet(tet_rest_[i], deform_linear_[deform], x, &result);
          } else {
            EvaluateCorotatedTet(tet_rest_[i], deform_linear_[deform], x, &result);
          }
          store(result);
        }
        continue;  // store closed every row of the tet
      }
      case kJointSpring: {  // E (c + lambda) = s + E lambda with c = K s (80), N = I
        const int q = m.jnt_qpos_adr[i], local = local_dof_[m.jnt_dof_adr[i]];
        const double compliance = 1 / m.jnt_stiffness[i];
        work.value[k] = d.qpos[q] + h * work.u[local] - m.qpos_spring[q];  // s
        work.residual[k] = (work.value[k] + compliance * work.lambda[k]) / h;
        work.compliance[k] = compliance / (h * h);
        work.element_compliance[kBlock * work.normal[k]] = work.compliance[k];
        work.entry_dof.push_back(local);
        work.entry_value.push_back(1);
        break;
      }
    }
    if (work.origin[k] != kTet) work.row_adr[k + 1] = static_cast<int>(work.entry_dof.size());
  }

  // The raw rows' J u and diagonals [J H^-1 J^T]_kk.
  for (int k = 0; k < rows; ++k) {
    double velocity = 0;
    for (int e = work.row_adr[k]; e < work.row_adr[k + 1]; ++e) {
      velocity += work.entry_value[e] * work.u[work.entry_dof[e]];
    }
    work.velocity[k] = velocity;
  }
  RowDiagonals(work);
  (void)n;
  if (first) {  // (66), once per step from the rows at q-
    for (int k = 0; k < rows; ++k) {
      if (work.kind[k] == RowKind::kNormal) {
        work.factor[k] = NormalComplementarityFactor(p.scaling, h, work.raw_diagonal[k]);
      } else if (work.kind[k] == RowKind::kTangent && work.row[k] == 1) {
        work.factor[k] = work.factor[k + 1] = FrictionComplementarityFactor(
            p.scaling, h, work.raw_diagonal[k], work.raw_diagonal[k + 1]);
        // The stopping test weighs friction rows by the effective-mass factor whatever the
        // scaling, so that an ablation's r does not loosen it (nsn_parameters.h).
        work.weight_factor[k] =
            FrictionComplementarityFactor(ComplementarityScaling::kEffectiveMass, h,
                                          work.raw_diagonal[k], work.raw_diagonal[k + 1]);
      }
    }
  }

  // The rows of the system: scale (J = scale times the raw row), C and the h-vector (58).
  const ConstraintSet& set = d.constraints;
  for (int k = 0; k < rows; ++k) {
    if (work.kind[k] != RowKind::kTangent) work.weight[k] = 1;  // tangents: set in pairs below
    switch (work.kind[k]) {
      case RowKind::kNormal: {
        if (work.origin[k] == kSet &&
            set.constraints[work.constraint[k]].type != ConstraintType::kContact) {
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
        const double mu = work.origin[k] == kSet ? set.constraints[work.constraint[k]].friction
                          : work.origin[k] == kVertexContact
                              ? d.vertex_contact[work.constraint[k]].friction
                          : work.origin[k] == kVertexTriangle
                              ? d.vertex_triangle_contact[work.constraint[k]].friction
                              : d.triangle_contact[work.constraint[k]].friction;
        const double slip = std::hypot(work.velocity[k], work.velocity[k + 1]);
        const double cone = mu * work.lambda[work.normal[k]];
        const double norm = std::hypot(work.lambda[k], work.lambda[k + 1]);
        const double r = work.factor[k];
        FrictionCompliance friction = EvaluateFrictionCompliance(p.ncp, slip, cone, norm, r);
        // [OURS] memory (NsnParameters::friction_memory), once the contact's W cycles.
        std::uint8_t& cycle = work.friction_cycle[k];
        const double raw = friction.active ? friction.w : 0;
        if (first) {
          cycle = 0;
        } else if (raw < work.previous_w[k]) {
          cycle |= 1;
        } else if (raw > work.previous_w[k] && (cycle & 1) != 0) {
          cycle |= 2;
        }
        if (friction.active && (cycle & 2) != 0) {
          friction.w = std::max(friction.w, p.friction_memory * work.previous_w[k]);
        }
        work.previous_w[k] = friction.active ? friction.w : 0;
        for (int t = k; t < k + 2; ++t) {
          if (friction.active) {
            work.scale[t] = 1;
            work.compliance[t] = friction.w / h;
            work.residual[t] = work.velocity[t] + friction.w * work.lambda[t];
            work.weight[t] = work.weight_factor[k] / (work.weight_factor[k] + friction.w);
          } else {
            work.scale[t] = 0;
            work.compliance[t] = 1 / h;
            work.residual[t] = work.lambda[t];
            work.weight[t] = work.weight_factor[k];
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
        const Constraint& c = set.constraints[work.constraint[k]];
        const double damping = std::max(c.soft_damping, 1e-12);
        work.scale[k] = 1;
        work.compliance[k] = 1 / damping;
        work.residual[k] = work.velocity[k] + (h * work.lambda[k] + c.soft_bias) / damping;
        break;
      }
      case RowKind::kElement:  // residual and C set with the entries
        work.scale[k] = 1;
        break;
    }
  }
}

void NsnSolver::SolveSystem(const Model& m, Data& d, const SolverOptions& options,
                            double deadline_us, const System& system, SystemWork& work,
                            IslandSolveResult& result, NsnStatistics& stats) {
  const NsnParameters& p = options.nsn;
  ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  result = IslandSolveResult{};
  stats = NsnStatistics{};
  const double h = m.timestep;
  double clock = SteadyMicroseconds();

  // The system's tree dofs (islands' subsystems, then free trees; each a contiguous range), then
  // its deformables' vertices that are not pinned.
  std::vector<int>& global = work.global;
  global.clear();
  const auto add_tree = [&](int j) {
    for (int dof = m.subsystem_dof_adr[j]; dof < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j];
         ++dof) {
      local_dof_[dof] = static_cast<int>(global.size());
      global.push_back(dof);
    }
  };
  for (int x = system.island_adr; x < system.island_adr + system.island_num; ++x) {
    const int k = system_island_[x];
    for (int s = islands.subsystem_adr[k]; s < islands.subsystem_adr[k + 1]; ++s) {
      add_tree(islands.subsystems[s]);
    }
  }
  for (int x = system.tree_adr; x < system.tree_adr + system.tree_num; ++x) {
    add_tree(system_tree_[x]);
  }
  const int trees = static_cast<int>(global.size());
  work.trees = trees;
  work.vertex.clear();
  for (int x = system.deform_adr; x < system.deform_adr + system.deform_num; ++x) {
    const int k = system_deform_[x];
    for (int v = m.deform_vert_adr[k]; v < m.deform_vert_adr[k] + m.deform_vert_num[k]; ++v) {
      local_vertex_[v] = m.vert_body[v] == 0 ? -1 : static_cast<int>(work.vertex.size());
      if (m.vert_body[v] != 0) work.vertex.push_back(v);
    }
  }
  const int vertices = static_cast<int>(work.vertex.size());
  const int n = trees + 3 * vertices;

  // The rows: the islands' constraints (contacts' points fixed on their bodies at q-), then per
  // deformable its vertex contacts, attachments and tets.
  work.source.clear();
  work.constraint.clear();
  work.row.clear();
  work.kind.clear();
  work.origin.clear();
  work.normal.clear();
  work.start.clear();
  work.element_row.clear();
  work.element_rows.clear();
  const auto add = [&](Origin origin, int i, int r, RowKind kind, int normal, int source,
                       double start) {
    work.origin.push_back(origin);
    work.source.push_back(source);
    work.constraint.push_back(i);
    work.row.push_back(r);
    work.kind.push_back(kind);
    work.normal.push_back(normal);
    work.start.push_back(start);
  };
  for (int x = system.island_adr; x < system.island_adr + system.island_num; ++x) {
    const int island = system_island_[x];
    for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
      const int i = islands.constraints[s];
      const Constraint& c = set.constraints[i];
      for (int r = 0; r < c.dim; ++r) set.lambda[c.row_adr + r] = 0;
      jacobian_.Fill(m, d, i);
      const auto add_row = [&](int r, RowKind kind, int normal) {
        add(kSet, i, r, kind, normal, c.row_adr + r, set.bias[c.row_adr + r]);
      };
      switch (c.type) {
        case ConstraintType::kContact: {
          const Contact& contact = d.contact[c.contact];
          const int body1 = m.geom_body[contact.geom1], body2 = m.geom_body[contact.geom2];
          const Vec3 half = 0.5 * contact.dist * contact.frame.col(0);
          // Each side's point is its surface point moved in by the geom's radius of curvature
          // (nsn_solver.h): the centre of a sphere or a capsule's axis, the surface point itself
          // on flat geoms.
          const Vec3& axis = contact.frame.col(0);
          const Vec3 c1 = contact.pos - half - CurvatureRadius(m, contact.geom1) * axis;
          const Vec3 c2 = contact.pos + half + CurvatureRadius(m, contact.geom2) * axis;
          anchor1_[i] = d.xmat[body1].transpose() * (c1 - d.xpos[body1]);
          anchor2_[i] = d.xmat[body2].transpose() * (c2 - d.xpos[body2]);
          const int normal = static_cast<int>(work.kind.size());
          add_row(0, RowKind::kNormal, -1);
          add_row(1, RowKind::kTangent, normal);
          add_row(2, RowKind::kTangent, normal);
          break;
        }
        case ConstraintType::kLimit:
          add_row(0, RowKind::kNormal, -1);
          break;
        case ConstraintType::kEquality:
          for (int r = 0; r < c.dim; ++r) add_row(r, RowKind::kBilateral, -1);
          break;
        case ConstraintType::kSoft:
          add_row(0, RowKind::kServo, -1);
          break;
        case ConstraintType::kFriction:  // refused (SolverRefusesModel)
          break;
      }
    }
  }
  for (int x = system.deform_adr; x < system.deform_adr + system.deform_num; ++x) {
    const int k = system_deform_[x];
    for (int c = contact_adr_[k]; c < contact_adr_[k + 1]; ++c) {
      const int normal = static_cast<int>(work.kind.size());
      add(kVertexContact, c, 0, RowKind::kNormal, -1, -1, d.vertex_contact[c].dist);
      add(kVertexContact, c, 1, RowKind::kTangent, normal, -1, 0);
      add(kVertexContact, c, 2, RowKind::kTangent, normal, -1, 0);
    }
    for (int c = triangle_adr_[k]; c < triangle_adr_[k + 1]; ++c) {
      const int normal = static_cast<int>(work.kind.size());
      add(kTriangleContact, c, 0, RowKind::kNormal, -1, -1, d.triangle_contact[c].dist);
      add(kTriangleContact, c, 1, RowKind::kTangent, normal, -1, 0);
      add(kTriangleContact, c, 2, RowKind::kTangent, normal, -1, 0);
    }
    for (int c = pair_adr_[k]; c < pair_adr_[k + 1]; ++c) {
      const int normal = static_cast<int>(work.kind.size());
      add(kVertexTriangle, c, 0, RowKind::kNormal, -1, -1, d.vertex_triangle_contact[c].dist);
      add(kVertexTriangle, c, 1, RowKind::kTangent, normal, -1, 0);
      add(kVertexTriangle, c, 2, RowKind::kTangent, normal, -1, 0);
    }
    for (int v = m.deform_vert_adr[k]; v < m.deform_vert_adr[k] + m.deform_vert_num[k]; ++v) {
      if (m.vert_body[v] <= 0) continue;
      for (int r = 0; r < 3; ++r) add(kAttachment, v, r, RowKind::kBilateral, -1, -1, 0);
    }
    for (int e = m.deform_tet_adr[k]; e < m.deform_tet_adr[k] + m.deform_tet_num[k]; ++e) {
      const int element = static_cast<int>(work.element_row.size());
      const int count = TetRowCount(m, e);
      work.element_row.push_back(static_cast<int>(work.kind.size()));
      work.element_rows.push_back(count);
      for (int r = 0; r < count; ++r) add(kTet, e, r, RowKind::kElement, element, -1, 0);
    }
  }
  // A hinge's or slide's spring: s = q^n - q_spring, c = K s, E = 1 / K (a 1 x 1 element; digest
  // 7: the beam's joints' bending stiffness as compliance).
  for (int i = 0; i < trees && p.spring_rows; ++i) {
    const int j = spring_joint_[global[i]];
    if (j < 0) continue;
    const int element = static_cast<int>(work.element_row.size());
    work.element_row.push_back(static_cast<int>(work.kind.size()));
    work.element_rows.push_back(1);
    add(kJointSpring, j, 0, RowKind::kElement, element, -1, 0);
  }
  const int rows = static_cast<int>(work.kind.size());
  for (std::vector<double>* v :
       {&work.value, &work.velocity, &work.scale, &work.compliance, &work.factor, &work.weight,
        &work.raw_diagonal, &work.residual, &work.lambda, &work.dlambda, &work.diagonal, &work.rhs,
        &work.previous_w, &work.row_scratch, &work.weight_factor}) {
    Grow(*v, rows);
  }
  Grow(work.row_adr, rows + 1);
  Grow(work.friction_cycle, rows);
  for (std::vector<double>* v :
       {&work.u, &work.g, &work.du, &work.work, &work.work2, &work.free_velocity, &work.mass,
        &work.stiff_mass, &work.constraint_force, &work.momentum}) {
    Grow(*v, std::max(n, rows));
  }
  Grow(work.path, m.nv);
  Grow(work.position, vertices);
  const int elements = static_cast<int>(work.element_row.size());
  Grow(work.element_compliance, kBlock * elements);
  Grow(work.a, trees * trees);
  Grow(work.inverse, trees * trees);
  Grow(work.factorization, trees * trees);

  // A over the tree dofs from its tree-sparse storage, its LLT, and A^-1; the vertices' masses
  // and free velocities u~ = v- + h g.
  const TreeSparseLayout& layout = d.mass_layout;
  Eigen::Map<Eigen::MatrixXd> a(work.a.data(), trees, trees);
  a.setZero();
  for (int i = 0; i < trees; ++i) {
    const int dof = global[i];
    for (int t = 0; t < layout.row_nnz[dof]; ++t) {
      const int j = local_dof_[layout.column[layout.row_adr[dof] + t]];
      const double value = d.qA[layout.row_adr[dof] + t];
      a(i, j) = value;
      a(j, i) = value;
    }
  }
  // Hinge and slide springs (NsnParameters::spring_rows). Under either integrator
  // b = (M + h D) v- + h f with the explicit impulse -h K (q- - q_spring) in f (theta_method.h);
  // implicit-euler's A holds h^2 K, euler's does not. Rows: b gives back the impulse and A the
  // h^2 K, which the rows carry. H: A gains h^2 K under euler, and b stays (eliminating the row
  // lambda = -K (q- + h u - q_spring) from H u = b' + h lambda gives (A + h^2 K) u = b).
  const bool springs_in_a = options.integrator == Integrator::kImplicitEuler;
  for (int i = 0; i < trees; ++i) {
    const int dof = global[i], j = spring_joint_[dof];
    work.momentum[i] = d.solver_rhs[dof];
    if (j < 0) continue;
    const double stiffness = m.jnt_stiffness[j];
    if (p.spring_rows) {
      const int q = m.jnt_qpos_adr[j];
      work.momentum[i] += h * stiffness * (d.qpos[q] - m.qpos_spring[q]);
      if (springs_in_a) a(i, i) -= h * h * stiffness;
    } else if (!springs_in_a) {
      a(i, i) += h * h * stiffness;
    }
  }
  Eigen::Map<Eigen::MatrixXd> factorization(work.factorization.data(), trees, trees);
  factorization = a;
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(factorization);
  Eigen::Map<Eigen::MatrixXd> inverse(work.inverse.data(), trees, trees);
  inverse.setIdentity();
  llt.solveInPlace(inverse);
  for (int k = 0; k < vertices; ++k) {
    const int v = work.vertex[k];
    for (int c = 0; c < 3; ++c) {
      work.mass[trees + 3 * k + c] = m.vert_mass[v];
      work.stiff_mass[trees + 3 * k + c] = m.vert_mass[v];  // no geometric stiffness yet
      work.free_velocity[trees + 3 * k + c] = d.vert_xvel[v][c] + h * m.gravity[c];
    }
  }

  work.history.clear();
  // u^0 = 0, lambda^0 = 0 (67)-(68).
  std::fill(work.u.begin(), work.u.begin() + n, 0.0);
  std::fill(work.lambda.begin(), work.lambda.begin() + rows, 0.0);
  double momentum_scale = 1;
  for (int i = 0; i < trees; ++i) {
    momentum_scale = std::max(momentum_scale, std::abs(work.momentum[i]));
  }
  for (int i = trees; i < n; ++i) {
    momentum_scale = std::max(momentum_scale, std::abs(work.mass[i] * work.free_velocity[i]));
  }

  const auto apply = [&](const double* x, double* y) {
    ApplyJT(work, x, work.work.data());
    ApplyInverse(work, work.work.data(), work.work2.data());
    ApplyJ(work, work.work2.data(), y);
    AddCompliance(work, p.regularization, x, y);
  };
  const auto row_product = [&](int k, const double* x) {  // Gauss-Seidel's ablation: row k of A x
    apply(x, work.row_scratch.data());
    return work.row_scratch[k];
  };
  KrylovOptions krylov;
  krylov.max_iterations = p.linear_iterations;
  krylov.relative_tolerance = p.linear_tolerance;

  if (rows == 0) {  // no row (a tree whose only force beyond u~ is its spring in H): u = u~
    for (int i = trees; i < n; ++i) work.work[i] = work.mass[i] * work.free_velocity[i];
    std::copy(work.momentum.begin(), work.momentum.begin() + trees, work.work.begin());
    ApplyInverse(work, work.work.data(), work.u.data());
    result.converged = true;
  }
  for (int iteration = 0; rows > 0; ++iteration) {
    Evaluate(m, d, p, system, work, iteration == 0);
    // g = H (u - u~) - h J^T lambda (57); over the trees H u~ = A v_free = b.
    ApplyJT(work, work.lambda.data(), work.work.data());
    Eigen::Map<const Eigen::VectorXd> u(work.u.data(), trees);
    Eigen::Map<Eigen::VectorXd>(work.g.data(), trees).noalias() = a * u;
    for (int i = 0; i < trees; ++i) work.g[i] -= work.momentum[i] + h * work.work[i];
    for (int i = trees; i < n; ++i) {
      work.g[i] = work.mass[i] * (work.u[i] - work.free_velocity[i]) - h * work.work[i];
    }
    if (p.geometric_stiffness && iteration > 0 && n > trees) {
      // (71)-(74) on the vertex dofs: c_i = -(gc(u^n) - gc(u^n-1))_i / (t du_i) with gc = -h J^T
      // lambda at both configurations with the same lambda (digest 5.4's sign of (73)), and
      // H~_ii = M_ii - min(0, c_i); dofs that hardly moved keep their shift.
      double largest = 0;
      for (int i = trees; i < n; ++i) largest = std::max(largest, std::abs(work.du[i]));
      for (int i = trees; i < n; ++i) {
        const double step = p.step_fraction * work.du[i];
        if (!(std::abs(step) > 1e-12 * p.step_fraction * largest)) continue;
        const double c = -(-h * work.work[i] - work.constraint_force[i]) / step;
        work.stiff_mass[i] = work.mass[i] - std::min(0.0, c);
      }
      RowDiagonals(work);  // A's diagonal with the new H~
    }
    stats.momentum_residual = MaxAbs(work.g, n);
    stats.row_residual = 0;
    for (int k = 0; k < rows; ++k) {
      stats.row_residual =
          std::max(stats.row_residual, std::abs(work.residual[k]) * work.weight[k]);
    }
    if (record_history_) {
      work.history.push_back({stats.momentum_residual, stats.row_residual, 0, 0});
    }
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
    // b = (1/h) (J H^-1 g - h-vector) (59) and the Jacobi diagonal.
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
      case NsnLinearSolver::kLdlt:
        solve = DenseLdlt(apply, rows, work);
        break;
    }
    stats.linear_iterations += solve.iterations;
    if (record_history_) {
      work.history.back().linear_iterations = solve.iterations;
      work.history.back().linear_residual =
          solve.initial_residual > 0 ? solve.residual / solve.initial_residual : 0;
    }
    // du = H^-1 (h J^T dlambda - g) (60); lambda += t dlambda, u += t du (61)-(62).
    ApplyJT(work, work.dlambda.data(), work.work.data());
    for (int i = 0; i < n; ++i) work.work[i] = h * work.work[i] - work.g[i];
    ApplyInverse(work, work.work.data(), work.du.data());
    for (int k = 0; k < rows; ++k) work.lambda[k] += p.step_fraction * work.dlambda[k];
    for (int i = 0; i < n; ++i) work.u[i] += p.step_fraction * work.du[i];
    if (p.geometric_stiffness && n > trees) {  // gc with the new lambda at this iterate's rows
      ApplyJT(work, work.lambda.data(), work.constraint_force.data());
      for (int i = trees; i < n; ++i) work.constraint_force[i] *= -h;
    }
    const double after = SteadyMicroseconds();
    stats.linear_seconds += 1e-6 * (after - clock);
    clock = after;
  }

  for (int i = 0; i < trees; ++i) d.v_hat[global[i]] = work.u[i];
  for (int x = system.deform_adr; x < system.deform_adr + system.deform_num; ++x) {
    const int k = system_deform_[x];
    for (int v = m.deform_vert_adr[k]; v < m.deform_vert_adr[k] + m.deform_vert_num[k]; ++v) {
      const int local = local_vertex_[v];
      d.vert_xvel[v] = local < 0 ? Vec3::Zero()
                                 : Vec3(work.u[trees + 3 * local], work.u[trees + 3 * local + 1],
                                        work.u[trees + 3 * local + 2]);
    }
  }
  for (int k = 0; k < rows; ++k) {
    if (work.origin[k] == kSet) set.lambda[work.source[k]] = h * work.lambda[k];
    if (work.origin[k] == kVertexContact && work.row[k] == 0) {
      vertex_contact_impulse_[work.constraint[k]] = h * work.lambda[k];
    }
    if (work.origin[k] == kTriangleContact && work.row[k] == 0) {
      triangle_contact_impulse_[work.constraint[k]] = h * work.lambda[k];
    }
    if (work.origin[k] == kVertexTriangle && work.row[k] == 0) {
      vertex_triangle_impulse_[work.constraint[k]] = h * work.lambda[k];
    }
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
  for (size_t s = 0; s < systems_.size(); ++s) {
    const NsnStatistics& x = system_statistics_[s];
    statistics_.newton_iterations += x.newton_iterations;
    statistics_.max_newton_iterations =
        std::max(statistics_.max_newton_iterations, x.max_newton_iterations);
    statistics_.linear_iterations += x.linear_iterations;
    statistics_.unconverged_islands += x.unconverged_islands;
    statistics_.momentum_residual = std::max(statistics_.momentum_residual, x.momentum_residual);
    statistics_.row_residual = std::max(statistics_.row_residual, x.row_residual);
    statistics_.max_penetration = std::max(statistics_.max_penetration, x.max_penetration);
    statistics_.assembly_seconds += x.assembly_seconds;
    statistics_.linear_seconds += x.linear_seconds;
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
    {NsnLinearSolver::kGaussSeidel, "gauss-seidel"},
    {NsnLinearSolver::kLdlt, "ldlt"}};
constexpr std::pair<NcpFunction, const char*> kNcpNames[] = {
    {NcpFunction::kFischerBurmeister, "fb"}, {NcpFunction::kMinimumMap, "min-map"}};
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
