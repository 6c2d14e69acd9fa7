#include "engine/solver/admm_penalty.h"

#include <algorithm>
#include <cmath>

namespace alsim {
namespace {

// beta stays within these factors of beta0 (a safety net; not in the paper).
constexpr double kBetaRange = 1e3;

}  // namespace

AdmmPenalty::AdmmPenalty(const Model& m)
    : body_block_count_(m.nbody, 0), dof_block_count_(m.nv, 0) {}

void AdmmPenalty::CountBlocks(const Model& /*m*/, const Data& d) {
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

double AdmmPenalty::InitialBeta(const Model& m, const Data& d, int island) const {
  const Islands& islands = d.islands;
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

void AdmmPenalty::Scales(const Data& d, int island, double beta0, double* scale) const {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int i = islands.constraints[s];
    const ConstraintBlock& block = set.blocks[set.constraints[i].block_adr];
    double value = 1.0;
    if (block.body < 0) {
      const double diagonal = d.qA[d.mass_layout.row_adr[block.dof]];
      const double c2 = block.dof_coefficient * block.dof_coefficient;
      if (diagonal > 0 && c2 > 0) value = diagonal / (c2 * dof_block_count_[block.dof]) / beta0;
    }
    scale[i] = value;
  }
}

double AdaptedBeta(double beta, double beta0, double primal, double dual, int iteration,
                   const SolverOptions& options) {
  if (!options.adaptive_beta) return beta;
  if (options.beta_update_interval > 1 && iteration % options.beta_update_interval != 0)
    return beta;
  if (primal <= 0 || dual <= 0) return beta;
  if (primal <= options.beta_gamma * dual && dual <= options.beta_gamma * primal) return beta;
  return std::clamp(beta * std::sqrt(primal / dual), beta0 / kBetaRange, beta0 * kBetaRange);
}

}  // namespace alsim
