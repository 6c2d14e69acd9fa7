// The element rows of a tet in a Newton system (issue 48): a Neo-Hookean tet's 3 rows belong to
// its principal directions, which the SVD orders by stretch, and that order changes as the tet
// deforms (all stretches are equal at rest). Each row keeps the direction nearest its previous
// one, so that lambda_i stays that direction's multiplier from iterate to iterate.
#pragma once

#include <cmath>

#include "engine/deformable/tet_material.h"

namespace alsim {

// Reorders *rows (from EvaluateNeoHookeanTet with `svd`) to follow *frame, the rows' principal
// directions at the previous iterate (columns), and updates *frame to the new directions.
inline void OrderNeoHookeanRows(const SignedSvd& svd, Mat3* frame, TetRows<3>* rows) {
  static constexpr int kPermutations[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                              {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  int best = 0;
  double best_overlap = -1;
  for (int k = 0; k < 6; ++k) {
    double overlap = 0;
    for (int i = 0; i < 3; ++i) {
      overlap += std::abs(frame->col(i).dot(svd.v.col(kPermutations[k][i])));
    }
    if (overlap > best_overlap) {
      best_overlap = overlap;
      best = k;
    }
  }
  const int* order = kPermutations[best];
  const TetRows<3> given = *rows;
  for (int i = 0; i < 3; ++i) {
    rows->strain[i] = given.strain[order[i]];
    rows->value[i] = given.value[order[i]];
    rows->jacobian.row(i) = given.jacobian.row(order[i]);
    for (int j = 0; j < 3; ++j) rows->compliance(i, j) = given.compliance(order[i], order[j]);
    frame->col(i) = svd.v.col(order[i]);
  }
}

}  // namespace alsim
