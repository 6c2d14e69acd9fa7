#include "engine/solver/constraint_ops.h"

#include <algorithm>
#include <cmath>

#include "engine/linalg/tree_ldl.h"
#include "engine/solver/impulse_update.h"

namespace alsim {

void SubsystemBlocks::Build(const Model& m, const ConstraintSet& set) {
  adr.assign(m.nsubsystem + 1, 0);
  for (const ConstraintBlock& block : set.blocks) ++adr[block.subsystem + 1];
  for (int j = 0; j < m.nsubsystem; ++j) adr[j + 1] += adr[j];
  blocks.resize(set.blocks.size());
  cursor.assign(adr.begin(), adr.end() - 1);
  const int n = static_cast<int>(set.blocks.size());
  for (int k = 0; k < n; ++k) blocks[cursor[set.blocks[k].subsystem]++] = k;
}

void SubsystemBodyVelocities(const Model& m, const Data& d, int subsystem, const double* v,
                             Vec6* body_velocity) {
  const int body_begin = m.subsystem_body_adr[subsystem];
  const int body_end = body_begin + m.subsystem_body_num[subsystem];
  for (int b = body_begin; b < body_end; ++b) {
    const int parent = m.body_parent[b];
    Vec6 velocity = parent >= body_begin ? body_velocity[parent] : Vec6::Zero();
    for (int k = 0; k < m.body_dof_num[b]; ++k) {
      const int dof = m.body_dof_adr[b] + k;
      velocity += d.cdof[dof] * v[dof];
    }
    body_velocity[b] = velocity;
  }
}

void ResidualWorkspace::Resize(const Model& m) {
  v.resize(m.nv);
  tau.resize(m.nv);
  body_velocity.resize(m.nbody);
  body_force.resize(m.nbody);
}

double IslandResidualSquares(const Model& m, const Data& d, const SubsystemBlocks& subsystem_blocks,
                             int island, ResidualWorkspace& work) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  const double* lambda = set.lambda.data();
  // v_hat = A^{-1} (b + J^T lambda) per subsystem of the island.
  for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
    const int j = islands.subsystems[s];
    GatherSubsystemForces(
        m, d, set, subsystem_blocks, j,
        [&](int k, auto dim, double* y) {
          const double* value = lambda + set.constraints[set.blocks[k].constraint].row_adr;
          for (int r = 0; r < dim; ++r) y[r] = value[r];
        },
        nullptr, work.body_force.data(), work.tau.data());
    const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
    for (int i = begin; i < end; ++i) work.v[i] = d.solver_rhs[i] + work.tau[i];
    TreeLdlSolveRange(d.mass_layout, begin, end, d.qA_factor.data(), work.v.data());
    SubsystemBodyVelocities(m, d, j, work.v.data(), work.body_velocity.data());
  }
  double sum = 0;
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const Constraint& c = set.constraints[islands.constraints[s]];
    double velocity[6] = {0, 0, 0, 0, 0, 0};
    for (int k = 0; k < c.block_num; ++k) {
      double part[6];
      ApplyBlock(set.blocks[c.block_adr + k], c.dim, work.body_velocity.data(), work.v.data(),
                 part);
      for (int r = 0; r < c.dim; ++r) velocity[r] += part[r];
    }
    double projected[6] = {0, 0, 0, 0, 0, 0};
    UpdateImpulse(c, velocity, set.bias.data() + c.row_adr, lambda + c.row_adr, 1.0, 1, projected);
    for (int r = 0; r < c.dim; ++r) {
      const double diff = lambda[c.row_adr + r] - projected[r];
      sum += diff * diff;
    }
  }
  return sum;
}

}  // namespace alsim
