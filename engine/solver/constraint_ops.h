// Products with the split constraint Jacobian (eqs. 30-31) that every solver needs: J_ij v_j
// block by block, and J^T y gathered per subsystem, both through body spatial velocities and
// forces so that a block costs O(6 dim) and a subsystem O(its dofs x depth) (RBDA's forward
// velocity and backward force passes).
#pragma once

#include <type_traits>
#include <vector>

#include "engine/data/constraint_set.h"
#include "engine/data/data.h"
#include "engine/island/islands.h"
#include "engine/model/model.h"

namespace alsim {

// The blocks of each subsystem: blocks[adr[j] .. adr[j + 1]) in increasing order.
struct SubsystemBlocks {
  std::vector<int> adr;     // (nsubsystem + 1)
  std::vector<int> blocks;  // block indices grouped by subsystem
  std::vector<int> cursor;  // scratch
  void Build(const Model& m, const ConstraintSet& set);
};

// Spatial velocities (Data's convention) of subsystem j's bodies for the joint velocities v (nv;
// only j's dofs are read), into body_velocity (nbody; only j's bodies are written).
void SubsystemBodyVelocities(const Model& m, const Data& d, int subsystem, const double* v,
                             Vec6* body_velocity);

// J_ij v_j of one block (dim values) from the body velocities (body-space) or v (joint-space).
template <int kDim = 0>  // kDim > 0 fixes dim at compile time
inline void ApplyBlock(const ConstraintBlock& block, int dim_at_run_time, const Vec6* body_velocity,
                       const double* v, double* out) {
  const int dim = kDim > 0 ? kDim : dim_at_run_time;
  if (block.body >= 0) {
    const Vec6& velocity = body_velocity[block.body];
    if (kDim > 0 && kDim <= 3) {
      for (int r = 0; r < dim; ++r) out[r] = block.map.row(r).dot(velocity);
    } else {  // a condim 4/6 contact's angular rows are derived (constraint_set.h)
      for (int r = 0; r < dim; ++r) out[r] = BlockRowDot(block, r, velocity);
    }
  } else {
    out[0] = block.dof_coefficient * v[block.dof];
  }
}

// The first half of a J^T gather over subsystem j's blocks k with values y_k (block_value(k, dim,
// y) writes the dim values of block k, k a block index of `set`; dim is
// std::integral_constant<int, 3> for a contact's 3 rows, so that their loops unroll, else the
// int row count): joint-space blocks add
// c y_k to tau at their dof, body-space blocks sum map^T y_k into body_force of their body (zeroed
// first for every body whose subtree has a body-space block: subtree_active[b] != 0, or every
// body when subtree_active is null). tau is added to, not cleared.
template <class BlockValue>
void AddBlockForces(const Model& m, const ConstraintSet& set,
                    const SubsystemBlocks& subsystem_blocks, int subsystem,
                    const BlockValue& block_value, const char* subtree_active, Vec6* body_force,
                    double* tau) {
  const int body_begin = m.subsystem_body_adr[subsystem];
  const int body_end = body_begin + m.subsystem_body_num[subsystem];
  for (int b = body_begin; b < body_end; ++b) {
    if (subtree_active == nullptr || subtree_active[b] != 0) body_force[b].setZero();
  }
  for (int k = subsystem_blocks.adr[subsystem]; k < subsystem_blocks.adr[subsystem + 1]; ++k) {
    const int index = subsystem_blocks.blocks[k];
    const ConstraintBlock& block = set.blocks[index];
    const int dim = set.constraints[block.constraint].dim;
    double y[6];
    // A contact: the fixed-size product, cheaper than the row loop below.
    if (block.body >= 0 && dim == 3) {
      block_value(index, std::integral_constant<int, 3>{}, y);
      body_force[block.body].noalias() += block.map.transpose() * Eigen::Map<const Vec3>(y);
      continue;
    }
    block_value(index, dim, y);
    if (block.body >= 0) {
      for (int r = 0; r < dim; ++r) AddBlockRowTranspose(block, r, y[r], body_force[block.body]);
    } else {
      tau[block.dof] += block.dof_coefficient * y[0];
    }
  }
}

// tau = sum over subsystem j's blocks k of J_k^T y_k, written to j's dofs of tau (nv), with
// block_value and subtree_active as for AddBlockForces (bodies whose subtree has no body-space
// block are skipped). body_force (nbody) is scratch.
template <class BlockValue>
void GatherSubsystemForces(const Model& m, const Data& d, const ConstraintSet& set,
                           const SubsystemBlocks& subsystem_blocks, int subsystem,
                           const BlockValue& block_value, const char* subtree_active,
                           Vec6* body_force, double* tau) {
  const int body_begin = m.subsystem_body_adr[subsystem];
  const int body_end = body_begin + m.subsystem_body_num[subsystem];
  const int dof_begin = m.subsystem_dof_adr[subsystem];
  const int dof_end = dof_begin + m.subsystem_dof_num[subsystem];
  for (int i = dof_begin; i < dof_end; ++i) tau[i] = 0;
  AddBlockForces(m, set, subsystem_blocks, subsystem, block_value, subtree_active, body_force, tau);
  // Backward pass: a body's force acts on every dof between it and the root.
  for (int b = body_end - 1; b >= body_begin; --b) {
    if (subtree_active != nullptr && subtree_active[b] == 0) continue;
    for (int k = 0; k < m.body_dof_num[b]; ++k) {
      const int dof = m.body_dof_adr[b] + k;
      tau[dof] += d.cdof[dof].dot(body_force[b]);
    }
    const int parent = m.body_parent[b];
    if (parent >= body_begin) body_force[parent] += body_force[b];
  }
}

// Scratch for IslandResidualSquares, sized for the model once; islands write disjoint entries.
struct ResidualWorkspace {
  std::vector<double> v;            // nv
  std::vector<double> tau;          // nv
  std::vector<Vec6> body_velocity;  // nbody
  std::vector<Vec6> body_force;     // nbody
  void Resize(const Model& m);
};

// Island k's share of the Sec. VII accuracy metric of the impulses in d.constraints.lambda (see
// SolverStatistics::contact_residual): with v_hat = A^{-1} (b + J^T lambda) for each of its
// subsystems, the sum over its constraint rows of (lambda - T(lambda - (J v_hat + e)))^2. Reads
// and writes only the island's entries of `work`, so islands may run it in parallel.
double IslandResidualSquares(const Model& m, const Data& d, const SubsystemBlocks& subsystem_blocks,
                             int island, ResidualWorkspace& work);

}  // namespace alsim
