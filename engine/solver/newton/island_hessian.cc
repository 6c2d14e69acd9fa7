#include "engine/solver/newton/island_hessian.h"

#include <algorithm>

namespace alsim {

void IslandHessian::Reserve(const Model& m, size_t max_constraints) {
  pattern_.Reserve(m);
  pair_adr_.reserve(max_constraints);
  pair_num_.reserve(max_constraints);
  if (factored_) factors_.reserve(m.nsubsystem);
}

void IslandHessian::LayOut(const Model& m, const Data& d, const Islands& islands,
                           const JointSpaceJacobian& jacobian) {
  pattern_.LayOut(m, d, islands, jacobian);
  const size_t num_constraints = d.constraints.constraints.size();
  if (pair_adr_.size() < num_constraints) {
    pair_adr_.resize(num_constraints);
    pair_num_.resize(num_constraints);
  }
  size_t total_pairs = 0;
  for (size_t c = 0; c < num_constraints; ++c) {
    pair_adr_[c] = total_pairs;
    total_pairs += PairCount(jacobian.capacity[c]);
  }
  if (pair_position_.size() < total_pairs) {
    pair_position_.resize(total_pairs);
    pair_value_.resize(total_pairs);
  }
  if (!factored_) return;
  while (factors_.size() < static_cast<size_t>(islands.num)) {
    factors_.push_back(std::make_unique<CholmodLlt>());
  }
}

void IslandHessian::Build(const Model& m, const Data& d, const Islands& islands,
                          const JointSpaceJacobian& jacobian, int k) {
  pattern_.Build(m, d, islands, jacobian, k);
  const int* local_dof = pattern_.local_dofs();
  for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
    const int c = islands.constraints[s];
    int* position = pair_position_.data() + pair_adr_[c];
    const int first = jacobian.entry_adr[c], last = first + jacobian.entry_num[c];
    for (int b = first; b < last; ++b) {
      const int column = local_dof[jacobian.dof[b]];
      for (int a = first; a <= b; ++a) {
        const int row = local_dof[jacobian.dof[a]];
        *position++ = pattern_.Position(k, std::max(row, column), std::min(row, column));
      }
    }
    pair_num_[c] = PairCount(jacobian.entry_num[c]);
  }
  if (factored_) {
    factors_[k]->SetPattern(pattern_.dofs(k), pattern_.column_start(k), pattern_.row_index(k));
  }
}

void IslandHessian::SetToMass(int k) {
  std::copy(pattern_.mass(k), pattern_.mass(k) + pattern_.nnz(k), factors_[k]->values());
}

void IslandHessian::AssembleBlocks(int k, const int* constraints, int num_constraints) {
  SetToMass(k);
  double* values = factors_[k]->values();
  for (int s = 0; s < num_constraints; ++s) {
    const int c = constraints[s];
    const int* position = pair_position_.data() + pair_adr_[c];
    const double* pair = pair_value_.data() + pair_adr_[c];
    for (size_t p = 0; p < pair_num_[c]; ++p) values[position[p]] += pair[p];
  }
}

}  // namespace alsim
