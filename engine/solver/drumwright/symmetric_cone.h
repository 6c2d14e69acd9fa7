// The product cone K = R+^l x Q^{m_1} x ... x Q^{m_k} of the conic QP (conic_qp.h) and its
// Jordan algebra, after Vandenberghe, "The CVXOPT linear and quadratic cone program solvers"
// (2010), Sec. 1.3. A vector u of K's rows is stored as the l orthant entries, then each
// second-order block u = (u_0, u_1) of m_j rows, with Q^m = {u : u_0 >= ||u_1||}.
//   identity     e = (1, ..., 1 | 1, 0, ..., 0 | ...)            (one 1 per orthant row and cone)
//   product      orthant: (u o v)_i = u_i v_i;   cone: u o v = (u^T v, u_0 v_1 + v_0 u_1)
//   division     x = u \ v solves u o x = v:  orthant x_i = v_i / u_i;  cone, with
//                det u = u_0^2 - ||u_1||^2:  x_0 = (u_0 v_0 - u_1^T v_1) / det u,
//                x_1 = (v_1 - x_0 u_1) / u_0
//   degree       nu = l + k, so that s^T z / nu is the duality measure mu
// Every function walks the blocks in their stored order, so its sums are in a fixed order.
#pragma once

#include <Eigen/Core>
#include <new>
#include <vector>

namespace alsim {

struct ConeDimensions {
  int linear = 0;                 // l, the orthant rows, first
  std::vector<int> second_order;  // m_1 ... m_k, each >= 1, after the orthant rows

  int rows() const;    // l + sum m_j
  int degree() const;  // nu = l + k
};

// out = u o v (out may alias neither u nor v).
void JordanProduct(const ConeDimensions& cones, const double* u, const double* v, double* out);

// out = u \ v, u in the interior of K (out may alias v, not u).
void JordanDivide(const ConeDimensions& cones, const double* u, const double* v, double* out);

// x += a e.
void AddIdentity(const ConeDimensions& cones, double a, double* x);

// The least t with x + t e in K: max_i(-x_i) over orthant rows and ||x_1|| - x_0 over cones
// (negative when x is in the interior). 0 rows: -inf.
double IdentityShift(const ConeDimensions& cones, const double* x);

// The largest t >= 0 with x + t d in K, x in the interior of K; +inf when every t is. Per block
// 1 / max(0, -lambda_min(x^-1/2 d x^-1/2)): orthant rows -d_i / x_i; a cone block is mapped by
// the hyperbolic reflection V that takes xbar = x / sqrt(x^T J x) to e (V is an automorphism of
// Q), rho = V d / sqrt(x^T J x), and e + t rho is in Q while t (||rho_1|| - rho_0) <= 1.
double MaxStep(const ConeDimensions& cones, const double* x, const double* d);

// The grow-only storage of the conic QP's workspaces (this header is the one they all include):
// Seat(layout) runs layout(arena), which calls Place(&view, rows, cols) per Eigen::Map, twice:
// once to sum the sizes, then, after growing the storage only when that sum exceeds the largest
// seen (its capacity), to re-seat each Map over it by placement new (Eigen's way to re-seat a
// Map). Each view starts a multiple of 64 bytes into the storage, which Eigen's allocator aligns
// as it would a vector or matrix of its own, so that Eigen's kernels (whose peeling follows the
// data's alignment) round exactly as on one. Growing discards the contents; the views are valid
// until the next Seat. The owners hold Maps into it: they move, but do not copy.
// The arena's views: every one starts a multiple of 64 bytes into Eigen-aligned storage, so each
// is declared aligned (Eigen::AlignedMax, the alignment of a VectorXd's or MatrixXd's own
// buffer): Eigen then neither tests the alignment nor peels, and its packets load as from a
// vector of its own. The same packet operations in the same order as the runtime-tested Map, so
// the same bits.
using ArenaVector = Eigen::Map<Eigen::VectorXd, Eigen::AlignedMax>;
using ArenaMatrix = Eigen::Map<Eigen::MatrixXd, Eigen::AlignedMax>;

class GrowOnlyArena {
 public:
  template <typename Layout>
  void Seat(const Layout& layout) {
    measuring_ = true;
    offset_ = 0;
    layout(*this);
    if (offset_ > storage_.size()) storage_.resize(offset_);  // allocates beyond capacity only
    measuring_ = false;
    offset_ = 0;
    layout(*this);
  }
  template <typename View>
  void Place(View* view, Eigen::Index rows, Eigen::Index cols) {
    if (!measuring_) new (view) View(storage_.data() + offset_, rows, cols);
    offset_ += (rows * cols + kAlign - 1) / kAlign * kAlign;
  }
  template <typename View>
  void Place(View* view, Eigen::Index size) {
    if (!measuring_) new (view) View(storage_.data() + offset_, size);
    offset_ += (size + kAlign - 1) / kAlign * kAlign;
  }
  Eigen::Index capacity() const { return storage_.size(); }

 private:
  static constexpr Eigen::Index kAlign = 64 / sizeof(double);
  Eigen::VectorXd storage_;  // Eigen's allocator: aligned to its packets
  Eigen::Index offset_ = 0;
  bool measuring_ = false;
};

// sqrt(u_0^2 - ||u_1||^2) of one cone block of m rows, as sqrt((u_0 - ||u_1||)(u_0 + ||u_1||))
// (no cancellation near the boundary); 0 outside the interior.
double ConeJNorm(const double* u, int m);

}  // namespace alsim
