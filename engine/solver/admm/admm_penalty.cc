#include "engine/solver/admm/admm_penalty.h"

#include <algorithm>
#include <cmath>

namespace alsim {
namespace {

// beta stays within these factors of beta0 (a safety net; not in the paper).
constexpr double kBetaRange = 1e3;

}  // namespace

AdmmPenalty::AdmmPenalty(const Model& m)
    : body_block_count_(m.nbody, 0),
      dof_block_count_(m.nv, 0),
      chain_scratch_(3 * static_cast<size_t>(m.nv), 0.0),
      chain_w_(m.nv, Vec6::Zero()),
      chain_response_(m.nv, Mat6::Zero()),
      chain_response_generation_(m.nv, 0) {}

void AdmmPenalty::CountBlocks(const Model& /*m*/, const Data& d) {
  ++generation_;  // from 1: no chain response is valid yet
  std::fill(body_block_count_.begin(), body_block_count_.end(), 0);
  std::fill(dof_block_count_.begin(), dof_block_count_.end(), 0);
  for (const ConstraintBlock& block : d.constraints.blocks) {
    if (block.body >= 0) {
      ++body_block_count_[block.body];
    } else {
      ++dof_block_count_[block.dof];
    }
  }
}

double AdmmPenalty::InitialBeta(const Model& m, const Data& d, const Islands& islands,
                                int island) const {
  double body_log_sum = 0, joint_log_sum = 0;
  int body_count = 0, joint_count = 0;
  for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
    const int j = islands.subsystems[s];
    const int body_begin = m.subsystem_body_adr[j];
    for (int b = body_begin; b < body_begin + m.subsystem_body_num[j]; ++b) {
      if (body_block_count_[b] > 0 && m.body_mass[b] > 0) {
        body_log_sum += std::log(m.body_mass[b] / body_block_count_[b]);
        ++body_count;
      }
    }
    const int dof_begin = m.subsystem_dof_adr[j];
    for (int i = dof_begin; i < dof_begin + m.subsystem_dof_num[j]; ++i) {
      const double diagonal = d.qA[d.mass_layout.row_adr[i]];
      if (dof_block_count_[i] > 0 && diagonal > 0) {
        joint_log_sum += std::log(diagonal / dof_block_count_[i]);
        ++joint_count;
      }
    }
  }
  if (body_count > 0) return std::exp(body_log_sum / body_count);
  return joint_count > 0 ? std::exp(joint_log_sum / joint_count) : 1.0;
}

// M^{-1} = L^{-1} D^{-1} L^{-T} (engine/linalg/tree_ldl.h), so J_r A^{-1} J_r^T =
// sum_i y_i^2 / D_i with y = L^{-T} J_r^T. J_r^T lives on the chain of dofs from the block's
// deepest dof to its root, and the back-substitution of L^T only moves values to ancestors, so y
// stays on that chain. The chain is the column list of the mass layout's row `last` (the dof, its
// parent, ..., the root), and row chain[p] of L holds chain[p + 1], chain[p + 2], ...: y is kept
// compactly along the chain, so that the substitution runs over contiguous entries (the same
// operations in the same order as along the parent links). The kRows rows run side by side
// (y[kRows p + r] is row r's value at chain[p]); the scratch starts at 3 x the tree's root dof, so
// islands in parallel write disjoint parts. A joint-space block has one row, a body-space block
// up to 3 (kRows = 1 or 3: rows beyond dim are zero and add nothing).
template <int kRows>
double AdmmPenalty::ChainDelassusTrace(const Data& d, const ConstraintBlock& block, int last,
                                       int dim) {
  const TreeSparseLayout& layout = d.mass_layout;
  const int length = layout.row_nnz[last];
  const int* chain = layout.column.data() + layout.row_adr[last];
  double* __restrict y = chain_scratch_.data() + 3 * chain[length - 1];
  for (int p = 0; p < length; ++p) {
    for (int r = 0; r < kRows; ++r) {
      y[kRows * p + r] = r >= dim             ? 0.0
                         : block.body >= 0    ? block.map.row(r).dot(d.cdof[chain[p]])
                         : (p == 0 && r == 0) ? block.dof_coefficient
                                              : 0.0;
    }
  }
  double trace = 0;
  for (int p = 0; p < length; ++p) {
    const double* __restrict row = d.qA_factor.data() + layout.row_adr[chain[p]];
    double yp[kRows];
    double square = 0;
    for (int r = 0; r < kRows; ++r) {
      yp[r] = y[kRows * p + r];
      square += yp[r] * yp[r];
    }
    double* target = y + kRows * p;
    for (int k = 1; k < length - p; ++k) {
      for (int r = 0; r < kRows; ++r) target[kRows * k + r] -= row[k] * yp[r];
    }
    trace += square / row[0];
  }
  return trace;
}

// Lambda = S A^{-1} S^T for the chain of dofs from `last` to its root, S its motion subspaces
// (6 x n): the inverse inertia in the tree's frame that every body-space block on a body welded
// to the chain sees, J_r A^{-1} J_r^T = map_r Lambda map_r^T. As in ChainDelassusTrace (and kept
// compactly along the chain the same way), with W^T = L^{-T} S^T (one back-substitution of
// 6-vectors along the chain), Lambda = sum_i w_i w_i^T / D_i. Once per chain and solve, shared
// by the chain's blocks.
const Mat6& AdmmPenalty::ChainResponse(const Data& d, int last) {
  if (chain_response_generation_[last] == generation_) return chain_response_[last];
  const TreeSparseLayout& layout = d.mass_layout;
  const int length = layout.row_nnz[last];
  const int* chain = layout.column.data() + layout.row_adr[last];
  Vec6* w = chain_w_.data() + chain[length - 1];
  for (int p = 0; p < length; ++p) w[p] = d.cdof[chain[p]];
  Mat6 response = Mat6::Zero();
  for (int p = 0; p < length; ++p) {
    const double* row = d.qA_factor.data() + layout.row_adr[chain[p]];
    for (int k = 1; k < length - p; ++k) w[p + k] -= row[k] * w[p];
    response.noalias() += (w[p] / row[0]) * w[p].transpose();
  }
  chain_response_[last] = response;
  chain_response_generation_[last] = generation_;
  return chain_response_[last];
}

// A body with one block takes its rows' chain solves (3 columns), which cost less; a body with
// several shares its chain's ChainResponse (6 columns, once per chain). The mix beat either rule
// alone on humanoid.xml, whose limbs lying on the floor have two contacts each
// (docs/benchmarks-history.md).
double AdmmPenalty::BlockDelassusTrace(const Model& m, const Data& d, const ConstraintBlock& block,
                                       int dim) {
  if (block.body < 0) return ChainDelassusTrace<1>(d, block, block.dof, dim);
  const int weld = m.body_weld[block.body];  // nearest ancestor-or-self with a joint
  if (weld <= 0 || m.body_dof_num[weld] == 0) return 0;
  const int last = m.body_dof_adr[weld] + m.body_dof_num[weld] - 1;
  if (dim > 3) {  // a condim 4/6 contact, with its derived angular rows: the 6-column response
    const Mat6& response = ChainResponse(d, last);
    double trace = 0;
    for (int r = 0; r < dim; ++r) {
      const Vec6 row = BlockRow(block, r);
      trace += row.dot(response * row);
    }
    return trace;
  }
  if (body_block_count_[block.body] < 2) {
    return dim == 1 ? ChainDelassusTrace<1>(d, block, last, dim)
                    : ChainDelassusTrace<3>(d, block, last, dim);
  }
  const Mat6& response = ChainResponse(d, last);
  double trace = 0;
  for (int r = 0; r < dim; ++r) {
    trace += block.map.row(r).dot(response * block.map.row(r).transpose());
  }
  return trace;
}

void AdmmPenalty::Scales(const Model& m, Data& d, const Islands& islands, int island, double beta0,
                         PenaltyScaling scaling, int refresh_steps, double* scale) {
  ConstraintSet& set = d.constraints;
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int i = islands.constraints[s];
    Constraint& c = set.constraints[i];
    const ConstraintBlock& block = set.blocks[c.block_adr];
    double value = 1.0;
    if (scaling == PenaltyScaling::kDelassus) {
      double trace = c.delassus_trace;
      // A single body's trace costs one short chain solve, and it moves with the contact point
      // over the body, so only constraints among trees keep theirs.
      bool keep = trace >= 0 && c.delassus_age < refresh_steps;
      for (int k = 0; k < c.block_num && keep; ++k) {
        const ConstraintBlock& part = set.blocks[c.block_adr + k];
        keep = m.subsystem_body_num[part.subsystem] > 1;
      }
      if (!keep) {
        trace = 0;
        for (int k = 0; k < c.block_num; ++k)
          trace += BlockDelassusTrace(m, d, set.blocks[c.block_adr + k], c.dim);
        c.delassus_trace = trace;
        c.delassus_age = 0;
      }
      if (trace > 0 && beta0 > 0) value = c.dim / (trace * beta0);
    } else if (block.body < 0) {
      const double diagonal = d.qA[d.mass_layout.row_adr[block.dof]];
      const double c2 = block.dof_coefficient * block.dof_coefficient;
      if (diagonal > 0 && c2 > 0) value = diagonal / (c2 * dof_block_count_[block.dof]) / beta0;
    }
    scale[i] = value;
  }
}

double AdaptedBeta(double beta, double beta0, double primal, double dual, int iteration,
                   const SolverOptions& options) {
  if (!options.admm.adaptive_beta) return beta;
  if (!IsBetaCheckIteration(iteration, options)) return beta;
  if (primal <= 0 || dual <= 0) return beta;
  if (primal <= options.admm.beta_gamma * dual && dual <= options.admm.beta_gamma * primal)
    return beta;
  return std::clamp(beta * std::sqrt(primal / dual), beta0 / kBetaRange, beta0 * kBetaRange);
}

}  // namespace alsim
