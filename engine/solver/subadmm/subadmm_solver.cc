#include "engine/solver/subadmm/subadmm_solver.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/core/parallel.h"
#include "engine/dynamics/mass_matrix.h"
#include "engine/linalg/tree_ldl.h"
#include "engine/solver/admm/anderson.h"
#include "engine/solver/impulse_update.h"
#include "engine/solver/island_schedule.h"
#include "engine/solver/solve_statistics.h"

namespace alsim {
namespace {

// Anderson acceleration (SolverOptions::anderson_memory) starts late (AndersonSchedule::start),
// so islands that converge at once never pay for it, and runs only on islands whose iterate (z
// and lambda / beta) has at most kAndersonMaxState values. It cuts the iterations, and with them
// the step time, of the humanoids, the stacks and the quadrupeds; a large island whose contacts
// keep switching between stick and slip (ball_pile) saved no iterations and lost much of its speed
// to the extrapolation's cost, hence the size limit.
//
// The accelerated map is two ADMM iterations (G o G), so the extrapolation and its iterate's
// gather and scatter are paid every other iteration. Extrapolating after every iteration in every
// island takes fewer iterations but more time on most scenes; three iterations per extrapolation
// was slower on all but humanoid.xml.
//
// An island that is one tree alone (a robot on the ground: no single-body shortcut, nothing else
// touching it) pays a tree solve per iteration, far more than the extrapolation over its few
// contacts' values, so it extrapolates after every iteration from iteration 3 on. Its resting
// steps start close to the solution and then contract only slowly (a linear rate near 1), which
// the first extrapolation removes: fewer iterations and instructions on the humanoids and the
// quadrupeds. Extrapolating after every iteration in every island with a tree cost humanoid100
// instructions, since its humanoid shares its island with sliding objects. Figures: BENCHMARKS.md
// (SubADMM) and docs/benchmarks-history.md ("Anderson after every iteration for a lone tree").
struct AndersonSchedule {
  int start;   // the iterate after iteration start - 1 is the first one extrapolated from
  int period;  // ADMM iterations per extrapolation (the accelerated map is G^period)
};
constexpr AndersonSchedule kAndersonDefault{5, 2};
constexpr AndersonSchedule kAndersonLoneTree{3, 1};
constexpr int kAndersonMaxState = 1024;

// [OURS] Once an island has run SolverOptions::response_after_iterations iterations, each of its
// trees (not single bodies) with at most kResponseMaxRows constraint rows switches its velocity
// step (34) to the constraint-space response: with K_j = A_j + beta sum_i s_i J_ij^T J_ij fixed
// between refactorizations,
//   J_j v_j = J_j K_j^{-1} b_j + (J_j K_j^{-1} J_j^T) y_j = (J v_free)_j + P_j y_j,
// y_j the rows' beta s_i z_ij + lambda_i. Building P_j (BuildResponse) costs a substitution
// along a chain per row and a dot product per pair of rows, each velocity step then a rows x rows
// product instead of the tree's gather, two substitutions and body velocities; v_j itself is
// solved once, after the last iteration. The iterates are eq. (34)'s, up to rounding. The switch
// waits for islands that run long (Table III's fixed 100 iterations, sliding contacts), where
// the build is paid back many times: switching after 8 iterations instead of 24 cost humanoid.xml
// instructions, since its resting steps end soon after 8 (BENCHMARKS.md, SubADMM's "Tried").
constexpr int kResponseMaxRows = 48;
// A tree's slot of response_storage_: P, then J v_free, then the rows' y.
constexpr int kResponseSlot = kResponseMaxRows * (kResponseMaxRows + 2);

// The solver's per-subsystem and per-body flags are bytes, 64 to a cache line, and islands on
// other threads read their own subsystems' flags in every iteration. Islands therefore store a
// flag only when its value changes (mostly it does not from step to step): a store of the same
// value still takes the line away from the other core, and on hosts where the two CPUs are far
// apart every island's start made the other thread's next reads wait for it. Storing only changes
// made 2-thread runs faster; lines of their own per subsystem instead were slower (each island then
// touches more lines, which move with its thread; docs/benchmarks-history.md, "Flags that islands
// rewrote").
inline void SetIfChanged(char& flag, bool value) {
  if (flag != static_cast<char>(value)) flag = static_cast<char>(value);
}

// Marks on one subsystem's bodies while one island works on it: a bit mask on the stack for
// subsystems of at most kMaskBodies bodies, else `scratch` (indexed by body, cleared over the
// subsystem's bodies here), so that the islands write no shared array for them.
class BodyMarks {
 public:
  static constexpr int kMaskBodies = std::numeric_limits<std::uint64_t>::digits;
  BodyMarks(int body_begin, int body_end, char* scratch)
      : begin_(body_begin), masked_(body_end - body_begin <= kMaskBodies), scratch_(scratch) {
    if (!masked_) std::fill(scratch_ + body_begin, scratch_ + body_end, 0);
  }
  void Mark(int body) {
    if (masked_) {
      mask_ |= Bit(body);
    } else {
      scratch_[body] = 1;
    }
  }
  bool Marked(int body) const { return masked_ ? (mask_ & Bit(body)) != 0 : scratch_[body] != 0; }

 private:
  std::uint64_t Bit(int body) const { return std::uint64_t{1} << (body - begin_); }
  int begin_;
  bool masked_;
  char* scratch_;
  std::uint64_t mask_ = 0;
};

int SubsystemNnzBegin(const Model& m, const Data& d, int j) {
  return d.mass_layout.row_adr[m.subsystem_dof_adr[j]];
}
int SubsystemNnzEnd(const Model& m, const Data& d, int j) {
  const int last = m.subsystem_dof_adr[j] + m.subsystem_dof_num[j] - 1;
  return d.mass_layout.row_adr[last] + d.mass_layout.row_nnz[last];
}

}  // namespace

SubAdmmSolver::SubAdmmSolver(const Model& m)
    : IslandSolver(m),
      body_gram_(m.nbody, Mat6::Zero()),
      body_has_gram_(m.nbody, 0),
      body_marks_(m.nbody, 0),
      penalty_(m),
      body_velocity_(m.nbody, Vec6::Zero()),
      body_force_(m.nbody, Vec6::Zero()),
      inverse_diagonal_(m.nv, 0.0),
      response_slot_(m.nsubsystem, -1),
      response_rows_(m.nsubsystem, 0),
      response_mode_(m.nsubsystem, 0),
      response_scratch_(m.nv, 0.0),
      single_body_(m.nsubsystem, 0),
      single_body_response_(m.nsubsystem, Mat6::Zero()),
      single_body_free_velocity_(m.nsubsystem, Vec6::Zero()),
      single_body_scratch_(m.nv, 0.0),
      single_body_w_(m.nv, Vec6::Zero()),
      velocity_scratch_(m.nv, 0.0),
      dual_force_(m.nv, 0.0),
      subsystem_values_(m.nsubsystem) {
  const int nnz = TreeSparseLayout::FromParents(m.dof_parent).nnz;
  gram_matrix_.resize(nnz);
  system_factor_.resize(nnz);
  const size_t max_constraints = MaxConstraints(m);
  primal_residual_.reserve(max_constraints);
  penalty_scale_.reserve(max_constraints);
  penalty_terms_.reserve(max_constraints);
  impulse_adr_.reserve(max_constraints);
  slack_adr_.reserve(MaxBlocks(m));
  // A constraint has at most 3 x 3 values (LayOutIterates), a tendon row one per joint and its
  // impulse; each island may start a new line.
  const size_t max_iterate = 9 * max_constraints + 2 * static_cast<size_t>(m.nwrap) +
                             kDoublesPerCacheLine * (m.nsubsystem + 1);
  iterate_.Reserve(max_iterate);
  slack_change_.Reserve(max_iterate);
  response_velocity_.Reserve(max_iterate);
  // The constraint-space responses (kResponseMaxRows): a slot per tree, and the rows' places by
  // block and slack value, so that ordinary steps never grow them.
  int trees = 0;
  for (int j = 0; j < m.nsubsystem; ++j) {
    if (m.subsystem_body_num[j] > 1) response_slot_[j] = trees++;
  }
  response_storage_.assign(static_cast<size_t>(trees) * kResponseSlot, 0.0);
  response_row_.resize(static_cast<size_t>(trees) * kResponseMaxRows);
  block_row_.reserve(MaxBlocks(m));
  // w_r per row, indexed by global dof so that trees built in parallel write disjoint entries;
  // a model of single bodies (a pile of balls) has no response to build.
  if (trees > 0) response_w_.assign(static_cast<size_t>(kResponseMaxRows) * m.nv, 0.0);
  // Islands are at most the subsystems; a constraint's iterate has at most 3 x 3 values.
  island_iterate_adr_.reserve(m.nsubsystem);
  island_state_size_.reserve(m.nsubsystem);
  island_storage_offset_.reserve(m.nsubsystem);
  anderson_storage_.reserve(
      9 * max_constraints *
      (2 + AndersonAccelerator::StorageSize(1, SolverOptions{}.subadmm.anderson_memory)));
}

// sum_i J_ij^T J_ij of eq. (40) for subsystem j: per body the 6x6 sum of map^T map (eq. 41 without
// the inertia), combined by the CRBA (composite sums, then S_m^T H^c S_n), plus the joint-space
// blocks' c^2 on the diagonal. Same sparsity as the mass matrix. Needs MarkBodiesWithBlocks.
void SubAdmmSolver::BuildGramMatrix(const Model& m, const Data& d, int j) {
  const ConstraintSet& set = d.constraints;
  const int body_begin = m.subsystem_body_adr[j];
  const int body_end = body_begin + m.subsystem_body_num[j];
  const int dof_begin = m.subsystem_dof_adr[j];
  const int dof_end = dof_begin + m.subsystem_dof_num[j];
  // Each body's first contribution assigns its sum, so only the bodies that get one are written
  // (zeroing all of them first, a 288-byte `rep stos` per body, took a large share of this
  // function; docs/benchmarks-history.md).
  BodyMarks assigned(body_begin, body_end, body_marks_.data());
  auto add = [&](int body, const auto& term) {
    if (assigned.Marked(body)) {
      body_gram_[body].noalias() += term;
    } else {
      body_gram_[body].noalias() = term;
      assigned.Mark(body);
    }
  };
  for (int k = subsystem_blocks_.adr[j]; k < subsystem_blocks_.adr[j + 1]; ++k) {
    const ConstraintBlock& block = set.blocks[subsystem_blocks_.blocks[k]];
    const int dim = set.constraints[block.constraint].dim;
    if (block.body >= 0) {
      const double scale = penalty_scale_[block.constraint];
      if (dim == 3) {  // a contact: the fixed-size product
        add(block.body, scale * (block.map.transpose() * block.map));
      } else if (dim > 3) {  // condim 4/6: plus the derived angular rows' a^T a on the angular part
        Mat6 gram = block.map.transpose() * block.map;
        const auto angular = block.map.topRightCorner(dim - 3, 3);
        gram.topLeftCorner<3, 3>().noalias() += angular.transpose() * angular;
        add(block.body, scale * gram);
      } else {
        add(block.body, scale * (block.map.topRows(dim).transpose() * block.map.topRows(dim)));
      }
    }
  }
  for (int b = body_end - 1; b > body_begin; --b) {
    const int parent = m.body_parent[b];
    if (parent >= body_begin && body_has_gram_[b]) add(parent, body_gram_[b]);
  }
  const TreeSparseLayout& layout = d.mass_layout;
  for (int i = dof_begin; i < dof_end; ++i) {
    double* row = gram_matrix_.data() + layout.row_adr[i];
    const int body = m.dof_body[i];
    if (body_has_gram_[body] && m.jnt_type[m.dof_jnt[i]] == JointType::kFree) {
      const Mat6& gram = body_gram_[body];
      FreeJointRows(
          layout, d.cdof.data(), i, gram.bottomRightCorner<3, 3>(),
          [&gram](const Vec6& s) { return Vec6(gram * s); }, gram_matrix_.data());
      i += 5;
    } else if (body_has_gram_[body]) {
      const Vec6 force = body_gram_[body] * d.cdof[i];
      int k = 0;
      for (int n = i; n >= 0; n = layout.parent[n], ++k) row[k] = d.cdof[n].dot(force);
    } else {
      std::fill(row, row + layout.row_nnz[i], 0.0);
    }
  }
}

// body_has_gram_ of subsystem j's bodies: whether a body-space block sits on the body or below
// it. The J^T gathers and BuildGramMatrix skip the bodies without.
void SubAdmmSolver::MarkBodiesWithBlocks(const Model& m, const Data& d, int j) {
  const int body_begin = m.subsystem_body_adr[j];
  const int body_end = body_begin + m.subsystem_body_num[j];
  BodyMarks marks(body_begin, body_end, body_marks_.data());
  for (int k = subsystem_blocks_.adr[j]; k < subsystem_blocks_.adr[j + 1]; ++k) {
    const ConstraintBlock& block = d.constraints.blocks[subsystem_blocks_.blocks[k]];
    if (block.body >= 0) marks.Mark(block.body);
  }
  for (int b = body_end - 1; b > body_begin; --b) {
    const int parent = m.body_parent[b];
    if (parent >= body_begin && marks.Marked(b)) marks.Mark(parent);
  }
  for (int b = body_begin; b < body_end; ++b) SetIfChanged(body_has_gram_[b], marks.Marked(b));
}

// The joint-space blocks' share of eq. (40): s_i c^2 on their dof's diagonal (needs the penalty
// scales).
void SubAdmmSolver::AddJointGram(const Model& /*m*/, const Data& d, int j) {
  const ConstraintSet& set = d.constraints;
  for (int k = subsystem_blocks_.adr[j]; k < subsystem_blocks_.adr[j + 1]; ++k) {
    const ConstraintBlock& block = set.blocks[subsystem_blocks_.blocks[k]];
    if (block.body >= 0) continue;
    gram_matrix_[d.mass_layout.row_adr[block.dof]] +=
        penalty_scale_[block.constraint] * block.dof_coefficient * block.dof_coefficient;
  }
}

void SubAdmmSolver::Refactor(const Model& m, const Data& d, int j, double beta) {
  const int begin = SubsystemNnzBegin(m, d, j), end = SubsystemNnzEnd(m, d, j);
  for (int k = begin; k < end; ++k) system_factor_[k] = d.qA[k] + beta * gram_matrix_[k];
  const int dof_begin = m.subsystem_dof_adr[j], dof_end = dof_begin + m.subsystem_dof_num[j];
  TreeLdlFactorRange(d.mass_layout, dof_begin, dof_end, system_factor_.data());
  for (int i = dof_begin; i < dof_end; ++i)
    inverse_diagonal_[i] = 1.0 / system_factor_[d.mass_layout.row_adr[i]];
  if (single_body_[j]) PrepareSingleBody(m, d, j);
}

// A subsystem of one body whose constraints all act in body space (a free object, say) skips
// the tree in its velocity steps. With S the body's 6 x n dof subspaces and K its factored
// matrix, eq. (34) gives the body velocity V = S K^{-1} (b_j + S^T F) = V_free + P F for the
// gathered force F, where P = S K^{-1} S^T and V_free = S K^{-1} b_j change only with K.
bool SubAdmmSolver::IsSingleBody(const Model& m, const Data& d, int j) const {
  if (m.subsystem_body_num[j] != 1) return false;
  for (int k = subsystem_blocks_.adr[j]; k < subsystem_blocks_.adr[j + 1]; ++k) {
    if (d.constraints.blocks[subsystem_blocks_.blocks[k]].body < 0) return false;
  }
  return true;
}

// v_j = K^{-1} (b_j + S^T force) into `v` (indexed by global dof).
void SubAdmmSolver::SolveSingleBody(const Model& m, const Data& d, int j, const Vec6& force,
                                    double* v) const {
  const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
  for (int i = begin; i < end; ++i) v[i] = d.solver_rhs[i] + d.cdof[i].dot(force);
  TreeLdlSolveRange(d.mass_layout, begin, end, system_factor_.data(), v);
}

// With K = L^T D L (engine/linalg/tree_ldl.h), K^{-1} = L^{-1} D^{-1} L^{-T}, so
// P = W D^{-1} W^T with W = S L^{-1}, and V_free = W D^{-1} y with y = L^{-T} b_j. W L = S is
// solved column by column from the last dof (each column is final once its descendants have
// pushed their share to it), the same pass as the L^T back-substitution with 6-vectors.
void SubAdmmSolver::PrepareSingleBody(const Model& m, const Data& d, int j) {
  const TreeSparseLayout& layout = d.mass_layout;
  const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
  Vec6* w = single_body_w_.data();
  double* y = single_body_scratch_.data();
  for (int i = begin; i < end; ++i) {
    w[i] = d.cdof[i];
    y[i] = d.solver_rhs[i];
  }
  Mat6 response = Mat6::Zero();
  Vec6 free_velocity = Vec6::Zero();
  for (int i = end - 1; i >= begin; --i) {
    const double* row = system_factor_.data() + layout.row_adr[i];
    const int* column = layout.column.data() + layout.row_adr[i];
    for (int k = 1; k < layout.row_nnz[i]; ++k) {
      w[column[k]] -= row[k] * w[i];
      y[column[k]] -= row[k] * y[i];
    }
    const Vec6 scaled = w[i] * inverse_diagonal_[i];
    response.noalias() += scaled * w[i].transpose();
    free_velocity += scaled * y[i];
  }
  single_body_response_[j] = response;
  single_body_free_velocity_[j] = free_velocity;
}

// Eq. (34) for subsystem j:
//   (A_j + beta sum_i s_i J_ij^T J_ij) v_j = b_j + sum_i J_ij^T (beta s_i z_ij + lambda_i),
// the J^T gather fused with the tree solve (engine/linalg/tree_ldl.h): the blocks' forces are
// summed per body; then one pass from the last body to the first adds each dof's share of its
// body's composite force and back-substitutes L^T and D right away (a dof's value is final once
// its descendants are done), and one pass from the first body forward substitutes L and
// accumulates the body velocities the constraint step reads (TreeVelocityStep). A tree that has
// switched to its constraint-space response takes ResponseVelocityStep instead.
void SubAdmmSolver::VelocityStep(const Model& m, Data& d, int j, double beta) {
  if (response_mode_[j]) {
    ResponseVelocityStep(j, beta);
    return;
  }
  const ConstraintSet& set = d.constraints;
  TreeVelocityStep(m, d, j, [&](int k, auto dim, double* y) {
    const ConstraintBlock& block = set.blocks[k];
    const double penalty = beta * penalty_scale_[block.constraint];
    const double* z = iterate_.data() + slack_adr_[k];
    const double* lambda = iterate_.data() + impulse_adr_[block.constraint];
    for (int r = 0; r < dim; ++r) y[r] = penalty * z[r] + lambda[r];
  });
}

double* SubAdmmSolver::ResponseMatrix(int j) {
  return response_storage_.data() + static_cast<size_t>(response_slot_[j]) * kResponseSlot;
}
double* SubAdmmSolver::ResponseFreeVelocity(int j) {
  return ResponseMatrix(j) + kResponseMaxRows * kResponseMaxRows;
}
double* SubAdmmSolver::ResponseForces(int j) { return ResponseFreeVelocity(j) + kResponseMaxRows; }

// The rows of tree j's response, in subsystem_blocks_ order: block_row_ of its blocks and where
// each row's slack, impulse and constraint are. False, and nothing laid out, when it has more
// than kResponseMaxRows rows.
bool SubAdmmSolver::LayOutResponse(const Data& d, int j) {
  const ConstraintSet& set = d.constraints;
  int rows = 0;
  for (int k = subsystem_blocks_.adr[j]; k < subsystem_blocks_.adr[j + 1]; ++k) {
    rows += set.constraints[set.blocks[subsystem_blocks_.blocks[k]].constraint].dim;
  }
  if (rows == 0 || rows > kResponseMaxRows) return false;
  ResponseRow* row =
      response_row_.data() + static_cast<size_t>(response_slot_[j]) * kResponseMaxRows;
  rows = 0;
  for (int k = subsystem_blocks_.adr[j]; k < subsystem_blocks_.adr[j + 1]; ++k) {
    const int index = subsystem_blocks_.blocks[k];
    const ConstraintBlock& block = set.blocks[index];
    const Constraint& c = set.constraints[block.constraint];
    block_row_[index] = rows;
    for (int q = 0; q < c.dim; ++q)
      row[rows++] = {slack_adr_[index] + q, impulse_adr_[block.constraint] + q, block.constraint};
  }
  response_rows_[j] = rows;
  return true;
}

// P_j and (J v_free)_j of subsystem j at its current factor K = L^T D L (see
// kResponseMaxRows). With w_r = L^{-T} J_r^T per row r, K^{-1} = L^{-1} D^{-1} L^{-T} gives
//   P_rs = sum_i w_r,i w_s,i / D_i   and   (J v_free)_r = sum_i w_r,i u_i / D_i,  u = L^{-T} b_j.
// J_r^T lives on the dofs between the row's body and the root, and L^{-T} keeps it there, so each
// w_r is one substitution along a chain (as the Delassus diagonal of admm_penalty.cc).
void SubAdmmSolver::BuildResponse(const Model& m, Data& d, int j) {
  const ConstraintSet& set = d.constraints;
  const TreeSparseLayout& layout = d.mass_layout;
  const int rows = response_rows_[j];
  double* response = ResponseMatrix(j);
  double* free_velocity = ResponseFreeVelocity(j);
  const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
  const double* factor = system_factor_.data();
  const size_t stride = d.v_hat.size();
  // L^{-T} in place on x, whose entries outside the chain from `last` to the root are zero.
  auto chain_substitution = [&](double* x, int last) {
    for (int i = last; i >= 0; i = layout.parent[i]) ScatterToAncestors(layout, factor, i, x[i], x);
  };
  for (int k = subsystem_blocks_.adr[j]; k < subsystem_blocks_.adr[j + 1]; ++k) {
    const int index = subsystem_blocks_.blocks[k];
    const ConstraintBlock& block = set.blocks[index];
    const int dim = set.constraints[block.constraint].dim;
    const int last = block.body >= 0 ? d.body_last_dof[block.body] : block.dof;
    for (int q = 0; q < dim; ++q) {
      double* w = response_w_.data() + (block_row_[index] + q) * stride;
      std::fill(w + begin, w + end, 0.0);
      if (block.body >= 0) {
        for (int i = last; i >= 0; i = layout.parent[i]) w[i] = BlockRowDot(block, q, d.cdof[i]);
      } else {
        w[block.dof] = block.dof_coefficient;
      }
      chain_substitution(w, last);
    }
  }
  double* u = response_scratch_.data();
  for (int i = begin; i < end; ++i) u[i] = d.solver_rhs[i];
  TreeLdlTransposeSubstituteRange(layout, begin, end, factor, u);
  for (int i = begin; i < end; ++i) u[i] *= inverse_diagonal_[i];
  for (int r = 0; r < rows; ++r) {
    const double* w_r = response_w_.data() + r * stride;
    double sum = 0;
    for (int i = begin; i < end; ++i) sum += w_r[i] * u[i];
    free_velocity[r] = sum;
  }
  double* scaled = response_scratch_.data();  // D^{-1} w_r, in u's place
  for (int r = 0; r < rows; ++r) {
    const double* w_r = response_w_.data() + r * stride;
    for (int i = begin; i < end; ++i) scaled[i] = w_r[i] * inverse_diagonal_[i];
    for (int s2 = 0; s2 <= r; ++s2) {
      const double* w_s = response_w_.data() + s2 * stride;
      double entry = 0;
      for (int i = begin; i < end; ++i) entry += scaled[i] * w_s[i];
      response[r * rows + s2] = entry;
      response[s2 * rows + r] = entry;
    }
  }
}

// Eq. (34) through the response: the rows' y, then J_j v_j = (J v_free)_j + P_j y into
// response_velocity_ for the constraint step. y is kept for the final v_j.
void SubAdmmSolver::ResponseVelocityStep(int j, double beta) {
  const int rows = response_rows_[j];
  const double* __restrict response = ResponseMatrix(j);
  const double* free_velocity = ResponseFreeVelocity(j);
  double* __restrict y = ResponseForces(j);
  const ResponseRow* row =
      response_row_.data() + static_cast<size_t>(response_slot_[j]) * kResponseMaxRows;
  for (int r = 0; r < rows; ++r) {
    y[r] = beta * penalty_scale_[row[r].constraint] * iterate_[row[r].slack] +
           iterate_[row[r].impulse];
  }
  double velocity_rows[kResponseMaxRows];
  double* __restrict velocity = velocity_rows;
  for (int s = 0; s < rows; ++s) velocity[s] = free_velocity[s];
  for (int r = 0; r < rows; ++r) {  // column by column: independent sums, which vectorize
    const double* __restrict column = response + r * rows;
    const double force = y[r];
    for (int s = 0; s < rows; ++s) velocity[s] += column[s] * force;
  }
  for (int r = 0; r < rows; ++r) response_velocity_[row[r].slack] = velocity[r];
}

// VelocityStep's tree solve with the blocks' forces y from block_value(k, dim, y): the current
// beta s_i z_ij + lambda_i, or, after a response's last iteration, the y it used.
template <class BlockValue>
void SubAdmmSolver::TreeVelocityStep(const Model& m, Data& d, int j,
                                     const BlockValue& block_value) {
  const ConstraintSet& set = d.constraints;
  const TreeSparseLayout& layout = d.mass_layout;
  const int body_begin = m.subsystem_body_adr[j];
  const int body_end = body_begin + m.subsystem_body_num[j];
  const int dof_begin = m.subsystem_dof_adr[j];
  const int dof_end = dof_begin + m.subsystem_dof_num[j];
  double* x = d.v_hat.data();
  // A single body's dofs are solved once, after the iterations (SolveSingleBody); its blocks are
  // all body-space, so AddBlockForces writes nothing to x for it.
  if (!single_body_[j]) {
    for (int i = dof_begin; i < dof_end; ++i) x[i] = d.solver_rhs[i];
  }
  AddBlockForces(m, set, subsystem_blocks_, j, block_value, body_has_gram_.data(),
                 body_force_.data(), x);
  if (single_body_[j]) {  // all blocks are on this one body: no tree to solve
    const Vec6& force = body_force_[body_begin];
    subsystem_values_[j].single_body_force = force;
    body_velocity_[body_begin] = single_body_free_velocity_[j] + single_body_response_[j] * force;
    return;
  }
  const double* factor = system_factor_.data();
  // In depth-first order a dof gathers its descendants' L^T terms, kept undivided in y, instead
  // of scattering to its ancestors (engine/linalg/tree_ldl.h): the same operations in the same
  // order.
  const bool gather = layout.subtrees_contiguous();
  double* y = velocity_scratch_.data();
  for (int b = body_end - 1; b >= body_begin; --b) {
    const bool active = body_has_gram_[b] != 0;
    const int first_dof = m.body_dof_adr[b];
    for (int i = first_dof + m.body_dof_num[b] - 1; i >= first_dof; --i) {
      double xi = gather ? GatherFromDescendants(layout, factor, y, i, x[i]) : x[i];
      if (active) xi += d.cdof[i].dot(body_force_[b]);
      if (gather) {
        y[i] = xi;
      } else {
        ScatterToAncestors(layout, factor, i, xi, x);
      }
      x[i] = xi * inverse_diagonal_[i];
    }
    const int parent = m.body_parent[b];
    if (active && parent >= body_begin) body_force_[parent] += body_force_[b];
  }
  for (int b = body_begin; b < body_end; ++b) {
    const int parent = m.body_parent[b];
    Vec6 velocity = parent >= body_begin ? body_velocity_[parent] : Vec6::Zero();
    const int first_dof = m.body_dof_adr[b];
    for (int i = first_dof; i < first_dof + m.body_dof_num[b]; ++i) {
      const double xi = SubtractAncestorTerms(layout, factor, x, i, x[i]);
      x[i] = xi;
      velocity += d.cdof[i] * xi;
    }
    body_velocity_[b] = velocity;
  }
}

// The iterate Anderson acceleration works on: per constraint of the island its slack blocks z_ij
// and its impulse as lambda_i / beta_i, all in m/s, which is the order of the island's values in
// iterate_ (LayOutIterates). visit(value, beta_i) sees each value where it is stored, in that
// order, with (beta_i, 1 / beta_i) for an impulse and (1, 1) for a slack.
template <class Visit>
void SubAdmmSolver::ForEachIterateValue(const Data& d, int island, const Visit& visit) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  double* value = iterate_.data() + island_iterate_adr_[island];
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    const PenaltyTerms& terms = penalty_terms_[i];
    WithConstraintShape(c.block_num, c.dim, [&](auto shape_blocks, auto shape_dim) {
      const int blocks = shape_blocks > 0 ? int{shape_blocks} : c.block_num;
      const int dim = shape_dim > 0 ? int{shape_dim} : c.dim;
      for (int r = 0; r < blocks * dim; ++r) visit(*value++, 1.0, 1.0);
      for (int r = 0; r < dim; ++r) visit(*value++, terms.beta, terms.inverse_beta);
    });
  }
}

void SubAdmmSolver::GatherState(const Data& d, int island, double* state) {
  int n = 0;
  ForEachIterateValue(d, island,
                      [&](double& value, double, double inverse) { state[n++] = value * inverse; });
}

void SubAdmmSolver::ScatterState(const Data& d, int island, const double* state) {
  int n = 0;
  ForEachIterateValue(d, island,
                      [&](double& value, double scale, double) { value = state[n++] * scale; });
}

// Lines 10-11 for constraint i: J_ij v_j per block, the relaxed impulse and slack update, the
// slack change for the dual residual, its max_j ||J_ij v_j - z_ij||^2 into *primal_residual, and
// (when `gather` is set) the constraint's share of the Anderson iterate, as GatherState writes
// it. kBlocks and kDim as for RelaxedConstraintUpdateOfShape.
template <int kBlocks, int kDim>
void SubAdmmSolver::UpdateConstraint(const Data& d, int i, double alpha, double* gather,
                                     double* primal_residual) {
  const ConstraintSet& set = d.constraints;
  const Constraint& c = set.constraints[i];
  const int blocks = kBlocks > 0 ? kBlocks : c.block_num;
  const int dim = kDim > 0 ? kDim : c.dim;
  constexpr int kRoom = kBlocks > 0 ? kBlocks : kMaxConstraintBlocks;
  double block_velocity[kRoom][6];  // ApplyBlock writes the dim values that are read
  if constexpr (kDim == 0) {
    for (int k = 0; k < blocks; ++k) std::fill(block_velocity[k], block_velocity[k] + 6, 0.0);
  } else if constexpr (kDim > 1) {  // a joint-space block (none has 3 rows) writes one value
    for (int k = 0; k < blocks; ++k) std::fill(block_velocity[k], block_velocity[k] + kDim, 0.0);
  }
  double* slack[kRoom];
  double slack_change[kRoom][6];
  for (int k = 0; k < blocks; ++k) {
    const ConstraintBlock& block = set.blocks[c.block_adr + k];
    const int slack_adr = slack_adr_[c.block_adr + k];
    if (response_mode_[block.subsystem]) {
      for (int r = 0; r < dim; ++r) block_velocity[k][r] = response_velocity_[slack_adr + r];
    } else {
      ApplyBlock<kDim>(block, dim, body_velocity_.data(), d.v_hat.data(), block_velocity[k]);
    }
    slack[k] = iterate_.data() + slack_adr;
  }
  double* lambda = iterate_.data() + impulse_adr_[i];
  const PenaltyTerms& terms = penalty_terms_[i];
  *primal_residual = RelaxedConstraintUpdateOfShape<kBlocks, kDim>(
      c, blocks, block_velocity, slack, set.bias.data() + c.row_adr, lambda, terms, alpha,
      slack_change);
  for (int k = 0; k < blocks; ++k) {
    double* change = slack_change_.data() + slack_adr_[c.block_adr + k];
    for (int r = 0; r < dim; ++r) change[r] = slack_change[k][r];
  }
  if (gather != nullptr) {
    double* state = gather + (slack_adr_[c.block_adr] - island_iterate_adr_[c.island]);
    for (int k = 0; k < blocks; ++k) {
      for (int r = 0; r < dim; ++r) *state++ = slack[k][r];
    }
    for (int r = 0; r < dim; ++r) *state++ = lambda[r] * terms.inverse_beta;
  }
}

void SubAdmmSolver::SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                                double deadline_us, int island) {
  ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  const int* subsystems = islands.subsystems.data() + islands.subsystem_adr[island];
  const int num_subsystems = islands.subsystem_adr[island + 1] - islands.subsystem_adr[island];
  const int* constraints = islands.constraints.data() + islands.constraint_adr[island];
  const int num_constraints = islands.constraint_adr[island + 1] - islands.constraint_adr[island];
  double* island_primal = primal_residual_.data() + islands.constraint_adr[island];
  IslandResult result;  // stored once, at the end: neighbouring islands' results share a line

  auto for_subsystems = [&](const auto& body) {
    IslandParallelFor(num_subsystems, kIslandParallelSubsystems, kIslandSubsystemsPerTask,
                      [&](int s) { body(subsystems[s]); });
  };
  auto for_constraints = [&](const auto& body) {
    IslandParallelFor(num_constraints, kIslandParallelConstraints, kIslandConstraintsPerTask,
                      [&](int s) { body(constraints[s]); });
  };
  // Lines 4-7: matrices, beta0, factorizations, and z^0 [OURS]. The warm-start impulses are
  // already in lambda; z^0_ij = J_ij v^0 with v^0 = A^{-1} (b + J^T lambda^0), the velocity those
  // impulses give. Then (A + beta sum_i s_i J_ij^T J_ij) v^0 = b_j + sum_i J_ij^T (beta s_i
  // z^0_ij + lambda^0_i): (z^0, lambda^0) is a fixed point of the velocity step (34), so the
  // first one is skipped, and a warm start at the solution stops after one iteration. (From z^0 =
  // J v_k instead, the iteration first has to undo the mismatch: more iterations in long islands,
  // and many where a solved step is solved again; docs/benchmarks-history.md.)
  double beta = penalty_.InitialBeta(m, d, d.islands, island);
  result.beta0 = beta;
  penalty_.Scales(m, d, d.islands, island, beta, options.admm.penalty_scaling,
                  options.subadmm.delassus_refresh_steps, penalty_scale_.data());
  auto update_penalty_terms = [&] {
    for (int s = 0; s < num_constraints; ++s) {
      const int i = constraints[s];
      const Constraint& c = set.constraints[i];
      penalty_terms_[i] = MakePenaltyTerms(c, beta * penalty_scale_[i], c.block_num);
    }
  };
  update_penalty_terms();
  // K_j = A_j + beta sum_i s_i J_ij^T J_ij is first needed by the second iteration's velocity
  // step; an island that stops after one iteration (a warm start at the solution) never builds
  // it. Until then the J^T gathers only need to know which bodies carry blocks.
  bool system_built = false;
  auto build_system = [&] {
    for_subsystems([&](int j) {
      BuildGramMatrix(m, d, j);
      AddJointGram(m, d, j);
      Refactor(m, d, j, beta);
    });
    system_built = true;
  };
  for_subsystems([&](int j) {
    MarkBodiesWithBlocks(m, d, j);
    SetIfChanged(single_body_[j], IsSingleBody(m, d, j));
    SetIfChanged(response_mode_[j], false);
    double* v = d.v_hat.data();  // v^0 of j's dofs, then its body velocities
    GatherSubsystemForces(
        m, d, set, subsystem_blocks_, j,
        [&](int k, auto dim, double* y) {
          const double* lambda =
              set.lambda.data() + set.constraints[set.blocks[k].constraint].row_adr;
          for (int r = 0; r < dim; ++r) y[r] = lambda[r];
        },
        body_has_gram_.data(), body_force_.data(), v);
    const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
    for (int i = begin; i < end; ++i) v[i] += d.solver_rhs[i];
    TreeLdlSolveRange(d.mass_layout, begin, end, d.qA_factor.data(), v);
    SubsystemBodyVelocities(m, d, j, v, body_velocity_.data());
  });
  for_constraints([&](int i) {
    const Constraint& c = set.constraints[i];
    for (int k = 0; k < c.block_num; ++k) {
      ApplyBlock(set.blocks[c.block_adr + k], c.dim, body_velocity_.data(), d.v_hat.data(),
                 iterate_.data() + slack_adr_[c.block_adr + k]);
    }
    std::copy_n(set.lambda.data() + c.row_adr, c.dim, iterate_.data() + impulse_adr_[i]);
  });

  // Anderson acceleration [OURS]: w is the iterate an accelerated pair of iterations starts from,
  // g what the pair made of it.
  const bool accelerate = options.subadmm.anderson_memory > 0 && island_state_size_[island] > 0 &&
                          island_state_size_[island] <= kAndersonMaxState;
  const int state_size = accelerate ? island_state_size_[island] : 0;
  double* state_w =
      accelerate ? anderson_storage_.data() + island_storage_offset_[island] : nullptr;
  double* state_g = accelerate ? state_w + state_size : nullptr;
  AndersonAccelerator anderson(accelerate ? state_g + state_size : nullptr, state_size,
                               options.subadmm.anderson_memory);
  const bool lone_tree = num_subsystems == 1 && !single_body_[subsystems[0]];
  const AndersonSchedule schedule = lone_tree ? kAndersonLoneTree : kAndersonDefault;
  int plain_since_w = -1;  // iterations since state_w was taken; -1 before schedule.start
  const auto velocity_step = [&](int iteration, double penalty) {
    // Line 9, eq. (34): the velocity step. The first one is skipped: its answer is v^0 (above).
    if (iteration == options.subadmm.response_after_iterations + 1 && iteration > 1) {
      for_subsystems([&](int j) {
        if (response_slot_[j] < 0 || single_body_[j] || !LayOutResponse(d, j)) return;
        BuildResponse(m, d, j);
        response_mode_[j] = 1;
      });
    }
    if (iteration > 1) {
      if (!system_built) build_system();
      for_subsystems([&](int j) { VelocityStep(m, d, j, penalty); });
    }
  };
  const auto constraint_step = [&](int iteration) {
    // The Anderson iterate of this iteration is written by the constraint step itself (a second
    // walk over the island's constraints costs as much as the writes).
    double* gather = accelerate && (iteration == schedule.start - 1 ||
                                    (plain_since_w >= 0 && plain_since_w + 1 == schedule.period))
                         ? state_g
                         : nullptr;
    // Lines 10-11, eqs. (35)-(39): impulses and slacks per constraint, with the loops unrolled
    // for the common shapes.
    IslandParallelFor(num_constraints, kIslandParallelConstraints, kIslandConstraintsPerTask,
                      [&](int s) {
                        const int i = constraints[s];
                        const Constraint& c = set.constraints[i];
                        WithConstraintShape(c.block_num, c.dim, [&](auto blocks, auto dim) {
                          UpdateConstraint<decltype(blocks)::value, decltype(dim)::value>(
                              d, i, options.admm.relaxation, gather, &island_primal[s]);
                        });
                      });
    // Eq. (42): theta_p = max ||J_ij v_j - z_ij||.
    double primal = 0;
    for (int s = 0; s < num_constraints; ++s) primal = std::max(primal, island_primal[s]);
    return std::sqrt(primal);  // primal_residual_ holds squares
  };
  const auto dual_residual = [&](double penalty) {
    // Eq. (42): theta_d = beta ||sum_i s_i J_ij^T (z^l - z^{l+1})||.
    for_subsystems([&](int j) {
      GatherSubsystemForces(
          m, d, set, subsystem_blocks_, j,
          [&](int k, auto dim, double* y) {
            const ConstraintBlock& block = set.blocks[k];
            const double scale = penalty_scale_[block.constraint];
            const double* change = slack_change_.data() + slack_adr_[k];
            for (int r = 0; r < dim; ++r) y[r] = scale * change[r];
          },
          body_has_gram_.data(), body_force_.data(), dual_force_.data());
      const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
      double dual2 = 0;
      for (int i = begin; i < end; ++i) dual2 += dual_force_[i] * dual_force_[i];
      subsystem_values_[j].dual = penalty * std::sqrt(dual2);
    });
    double dual = 0;
    for (int s = 0; s < num_subsystems; ++s) {
      dual = std::max(dual, subsystem_values_[subsystems[s]].dual);
    }
    return dual;
  };
  // Line 16, eq. (43) changed beta: lambda (and so u) is kept, z too.
  const auto change_penalty = [&](double /*penalty*/) {
    update_penalty_terms();
    if (system_built) {
      for_subsystems([&](int j) {
        Refactor(m, d, j, beta);
        if (response_mode_[j]) BuildResponse(m, d, j);
      });
    }
    return true;
  };
  // Anderson acceleration between iterations [OURS].
  const auto after_iteration = [&](int iterations, bool penalty_changed) {
    if (!accelerate) return;
    if (penalty_changed) {
      if (iterations >= schedule.start - 1) {  // a new map: start afresh
        anderson.Reset();
        GatherState(d, island, state_w);
        plain_since_w = 0;
      }
    } else if (plain_since_w >= 0 && ++plain_since_w == schedule.period) {
      // No extrapolation where the cap stops the iteration before the next pair ends: its result
      // would be kept without the safeguard's check.
      const bool extrapolate = iterations + schedule.period < options.max_iterations;
      if (anderson.Step(state_w, state_g, extrapolate)) ScatterState(d, island, state_g);
      std::swap(state_w, state_g);  // the next iteration starts from this g
      plain_since_w = 0;
    } else if (iterations == schedule.start - 1) {
      std::swap(state_w, state_g);  // where the first accelerated iteration starts
      plain_since_w = 0;
    }
  };
  IterateAdmmIsland(options, deadline_us, &beta, &result,
                    record_history_ && island == 0 ? &history_ : nullptr, velocity_step,
                    constraint_step, dual_residual, change_penalty, after_iteration);
  if (result.iterations > 1) {  // single bodies' dofs; after one iteration v_hat holds v^0
    for_subsystems([&](int j) {
      if (single_body_[j]) {
        SolveSingleBody(m, d, j, subsystem_values_[j].single_body_force, d.v_hat.data());
      }
      if (!response_mode_[j]) return;
      // v_j of the last velocity step, from the rows' y it used
      const double* y = ResponseForces(j);
      TreeVelocityStep(m, d, j, [&](int k, auto dim, double* out) {
        for (int r = 0; r < dim; ++r) out[r] = y[block_row_[k] + r];
      });
    });
  }
  result.beta = beta;
  island_results_[island] = result;
  for_constraints([&](int i) {  // the impulses, for the warm start and the step's results
    const Constraint& c = set.constraints[i];
    std::copy_n(iterate_.data() + impulse_adr_[i], c.dim, set.lambda.data() + c.row_adr);
  });
}

// Places every island's z and lambda in iterate_ (see there): slack_adr_, impulse_adr_,
// island_iterate_adr_ and island_state_size_, and sizes iterate_, slack_change_ and
// response_velocity_ to match.
void SubAdmmSolver::LayOutIterates(const Data& d) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  if (impulse_adr_.size() < set.constraints.size()) impulse_adr_.resize(set.constraints.size());
  if (slack_adr_.size() < set.blocks.size()) slack_adr_.resize(set.blocks.size());
  island_iterate_adr_.resize(islands.num);
  island_state_size_.resize(islands.num);
  long next = 0;
  for (int k = 0; k < islands.num; ++k) {
    const long island_adr = RoundUpToCacheLine(next);
    int size = 0;
    for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
      const int i = islands.constraints[s];
      const Constraint& c = set.constraints[i];
      for (int b = 0; b < c.block_num; ++b, size += c.dim) {
        slack_adr_[c.block_adr + b] = static_cast<int>(island_adr + size);
      }
      impulse_adr_[i] = static_cast<int>(island_adr + size);
      size += c.dim;
    }
    island_iterate_adr_[k] = static_cast<int>(island_adr);
    island_state_size_[k] = size;
    next = island_adr + size;
  }
  iterate_.Resize(next);
  slack_change_.Resize(next);
  response_velocity_.Resize(next);
}

void SubAdmmSolver::Prepare(const Model& m, Data& d, const SolverOptions& options) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  penalty_.CountBlocks(m, d);
  if (primal_residual_.size() < set.constraints.size()) {
    primal_residual_.resize(set.constraints.size());
    penalty_scale_.resize(set.constraints.size());
    penalty_terms_.resize(set.constraints.size());
  }
  LayOutIterates(d);
  // Anderson storage per island: w, g and the accelerator's history.
  island_storage_offset_.resize(islands.num);
  long storage = 0;
  for (int k = 0; k < islands.num; ++k) {
    island_storage_offset_[k] = storage;
    if (options.subadmm.anderson_memory > 0) {
      const int size = island_state_size_[k];
      storage +=
          2L * size + AndersonAccelerator::StorageSize(size, options.subadmm.anderson_memory);
    }
  }
  if (static_cast<long>(anderson_storage_.size()) < storage) anderson_storage_.resize(storage);
  // Block rows of the responses (kResponseMaxRows), by this step's blocks.
  if (block_row_.size() < set.blocks.size()) block_row_.resize(set.blocks.size());
  if (record_history_) history_.clear();
}

}  // namespace alsim
