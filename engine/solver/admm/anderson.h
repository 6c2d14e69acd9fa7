// Type-II Anderson acceleration of a fixed-point iteration w <- G(w) (Walker and Ni, SIAM J.
// Numer. Anal. 2011; applied to ADMM by Zhang, Peng, Wang et al., "Accelerating ADMM for
// efficient simulation and optimization", ACM TOG 2019) [OURS: not in the SubADMM paper].
//
// Given the last plain iterate g = G(w), the extrapolation is g - dG gamma, where the columns of
// dG and dF hold the last `memory` differences of g and of f = g - w, and gamma minimizes
// ||f - dF gamma||. Safeguard: when ||f|| grows from one call to the next (the previous
// extrapolation made things worse), the small least-squares problem is ill-posed, or the
// extrapolation would move more than 1000 plain steps ||f|| from g, the history is dropped and
// the plain iterate is kept, so the iteration never does worse than plain ADMM for long.
//
// The accelerator is a view on caller-owned storage (StorageSize doubles), so islands solved in
// parallel each use their own slice of one buffer and a step allocates nothing.
//
// Cost per call, n values and m columns: one fused pass that forms f and the new differences,
// m + 1 dot products (the new row of dF^T dF and the new entry of dF^T f; the older entries of
// dF^T f follow from the new row, since f - f_prev is the new column of dF), m axpys and the
// length of the extrapolation's move.
#pragma once

namespace alsim {

class AndersonAccelerator {
 public:
  static constexpr int kMaxMemory = 8;

  // Doubles of storage for states of `size` values with history `memory` (<= kMaxMemory).
  static long StorageSize(int size, int memory) {
    return static_cast<long>(size) * (2 * memory + 2);
  }

  AndersonAccelerator(double* storage, int size, int memory);

  // Forgets the history (call when G changes, e.g. with the ADMM penalty).
  void Reset();

  // w: the state G was applied to; g: G(w), both `size` values. Returns true when g has been
  // overwritten by the extrapolated state, false when the plain iterate g is to be used. With
  // extrapolate false (the caller could not check the result) only the history and the
  // safeguard are updated.
  bool Step(const double* w, double* g, bool extrapolate = true);

 private:
  double* column_g(int k) { return storage_ + static_cast<long>(k) * size_; }
  double* column_f(int k) { return storage_ + static_cast<long>(memory_ + k) * size_; }

  double* storage_;
  int size_;
  int memory_;
  double* previous_g_;  // g and f of the last call (of this call once it has begun)
  double* previous_f_;
  int columns_ = 0;  // history columns in use
  int next_ = 0;     // ring position of the next column
  bool has_previous_ = false;
  double previous_norm_ = 0;
  double gram_[kMaxMemory][kMaxMemory] = {};  // dF^T dF by ring position
  double projection_[kMaxMemory] = {};        // dF^T f by ring position, f of the last call
};

}  // namespace alsim
