// The constraints of one step in the split form of the SubADMM paper (Sec. III-B and VI-A).
//
// Every constraint i has `dim` rows, an impulse lambda_i (dim) and a bias e_i (dim), and acts on
// one or two *slack blocks* z_ij (eqs. 30-31): the part of J_i that one body (body-space block)
// or one dof (joint-space block) contributes. Two-body constraints keep one block per body even
// when both bodies belong to one subsystem (the row stacking of eq. 31), so the subsystem matrix
// A_j + beta sum_i J_ij^T J_ij keeps the sparsity of the mass matrix (eq. 40).
//
// Body-space block: J_ij v_j = G V_b, with V_b the body's spatial velocity (angular, linear at the
// tree's reference point; see engine/data/data.h) and G the dim x 6 map below. Joint-space block:
// J_ij v_j = c v[dof].
//
// Row conventions. Contact rows are (normal, tangent1, tangent2): the columns of Contact::frame,
// measuring the velocity of geom2 relative to geom1, so the normal row is the separating speed.
// (The paper orders them (t1, t2, n); only the order differs.) A contact of condim 4 adds a
// torsional row and one of condim 6 also two rolling rows, MuJoCo's order:
//   (normal, tangent1, tangent2, torsion, rolling1, rolling2)
// where torsion = n . (w2 - w1) and rolling_k = t_k . (w2 - w1), the relative angular velocity
// about the normal and the two tangents.
//
// Condim 4/6 storage. The extra rows are purely angular and their coefficients are the frame's
// columns, which a contact block's map already holds in its linear part: map row r is
// sign [ (r x f_r)^T  f_r^T ] (f_r the frame column, sign +1 for geom2's body, -1 for geom1's), so
// angular row 3 + r is sign [ f_r^T  0 ] = [ map(r, 3:6)  0 ]. The map therefore stays 3 x 6 for
// every constraint, and the rows 3 .. dim-1 of a contact are derived from it (BlockRowDot and
// AddBlockRowTranspose below). The condim-3 paths (dim == 3, fixed-size products) never read the
// derived rows, so they keep their code and their bits; only the run-time-dim paths call the
// helpers.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "engine/math/types.h"
#include "engine/model/model.h"

namespace alsim {

enum class ConstraintType : std::uint8_t {
  kContact,   // eq. (5): 3 rows, Signorini-Coulomb with the elliptic cone ||lambda_t|| <= mu
              // lambda_n; 4 or 6 rows with torsional / rolling friction (condim 4, 6), the cone
              // sum_j (lambda_j / mu_j)^2 <= lambda_n^2 over the rows j >= 1 with
              // mu = (mu, mu, mu_torsion, mu_rolling, mu_rolling) (MuJoCo's elliptic cone)
  kLimit,     // eq. (3): 1 row, 0 <= lambda  perp  J v_hat + e >= 0 (joint and tendon limits)
  kSoft,      // eq. (4): 1 row, lambda = -k e - b J v_hat, clamped to [lambda_lower, lambda_upper]
  kEquality,  // eq. (3) with equality: 3 rows, J v_hat + e = 0, lambda free (connect; weld as
              // a position and a rotation constraint)
  kFriction,  // 1 row, dry joint friction (MJCF frictionloss f on a dof, J = e_dof, e = 0): the
              // impulse in the box [lambda_lower, lambda_upper] = [-f h, f h] that maximizes the
              // dissipation: J v_hat = 0 inside the box, else lambda at the bound opposing J v_hat;
              // i.e. lambda = clamp(lambda - r (J v_hat + e), box) for any r > 0 (MuJoCo's
              // bounded friction row, here hard)
};

// Where a constraint came from, to carry its impulse over to the next step (warm start).
// ConstraintKey::kind, in the order BuildConstraints appends the constraints (each kind sorted by
// (a, b), so saved keys are sorted and a warm start can binary-search them).
inline constexpr int kKindContact = 0;
inline constexpr int kKindEquality = 1;
inline constexpr int kKindLimit = 2;     // a joint's
inline constexpr int kKindSoft = 3;      // a servo's eq. (4) row
inline constexpr int kKindFriction = 4;  // frictionloss
inline constexpr int kKindTendonLimit = 5;
inline constexpr int kKindFoundation = 6;  // an elastic foundation's element

struct ConstraintKey {
  int kind = 0;  // kKind* above
  int a = -1;    // contact: geom1; limit: joint or tendon; soft: actuator; equality: its index;
                 // friction: the dof; foundation: the element (Model::foundation_site)
  int b =
      -1;  // contact: geom2; equality: 0 position rows, 1 rotation rows; limit: 0 lower, 1 upper
  friend bool operator==(const ConstraintKey& x, const ConstraintKey& y) {
    return x.kind == y.kind && x.a == y.a && x.b == y.b;
  }
};

// The order of keys: by kind, then a, then b. A ConstraintSet lists its constraints in this order
// (see below), so the warm start saved from it is sorted and the next step finds a constraint's
// predecessor by binary search; a restored state snapshot must keep it.
inline bool ConstraintKeyLess(const ConstraintKey& x, const ConstraintKey& y) {
  if (x.kind != y.kind) return x.kind < y.kind;
  if (x.a != y.a) return x.a < y.a;
  return x.b < y.b;
}

struct Constraint {
  // User-provided, so that emplace_back runs only the initializers below: a value-initialized
  // aggregate is zeroed first, by a `rep stos` slower than the rest of a joint limit's assembly.
  Constraint() noexcept {}
  ConstraintType type = ConstraintType::kContact;
  int dim = 0;        // rows
  int row_adr = 0;    // first row in ConstraintSet::lambda and ::bias
  int block_adr = 0;  // first block in ConstraintSet::blocks
  int block_num = 0;  // |Z_i|: 1 or 2, up to kMaxConstraintBlocks for a tendon's rows
  int island = -1;    // island it belongs to (engine/island)
  ConstraintKey key;
  int contact = -1;             // index into Data::contact for contacts
  double friction = 0;          // contacts: mu
  double friction_torsion = 0;  // contacts of dim 4 and 6: mu_torsion (the torsional row)
  double friction_rolling = 0;  // contacts of dim 6: mu_rolling (both rolling rows)
  double soft_bias = 0;         // soft: k_i e_i of eq. (4), N s
  double soft_damping = 0;      // soft: b_i of eq. (4), N s per unit of J v_hat
  double lambda_lower = 0;      // soft, friction: impulse range, N s (force range times the step)
  double lambda_upper = 0;
  // The ADMM penalty scales' Delassus trace, sum over the rows r of its blocks of
  // J_r A^{-1} J_r^T (engine/solver/admm/admm_penalty.h), carried from step to step with the warm
  // start: negative until a solver computes it; delassus_age steps since it was computed.
  double delassus_trace = -1;
  int delassus_age = 0;
};

// The most slack blocks of one constraint: a contact or equality has 1 or 2 (one per body), a
// tendon's limit or servo row one per joint of the tendon.
constexpr int kMaxConstraintBlocks = kMaxTendonJoints;
static_assert(kMaxConstraintBlocks >= 2, "two-body constraints need two blocks");

// One slack block z_ij: the part of constraint i acting on subsystem j through one body or dof.
struct ConstraintBlock {
  ConstraintBlock() noexcept {}  // as Constraint's
  int constraint = -1;
  int subsystem = -1;
  int body = -1;  // body-space block: the body whose velocity `map` reads; -1 for joint-space
  int dof = -1;   // joint-space block: the dof; -1 for body-space
  double dof_coefficient = 0;  // joint-space: J_ij = c e_dof^T
  // Body-space: rows 0 .. dim-1 map the body's spatial velocity to constraint space (eq. 44 with
  // alsim's (angular, linear) order and the tree's reference point). Unused rows are zero.
  Eigen::Matrix<double, 3, 6> map = Eigen::Matrix<double, 3, 6>::Zero();
};

// The largest dim of any constraint (a condim-6 contact).
inline constexpr int kMaxConstraintDim = 6;

// Row r (< dim) of a body-space block applied to a spatial velocity (angular, linear): map row r
// for r < 3, else the derived angular row of a condim 4/6 contact (see the file comment).
inline double BlockRowDot(const ConstraintBlock& block, int r, const Vec6& velocity) {
  if (r < 3) return block.map.row(r).dot(velocity);
  return block.map.row(r - 3).tail<3>().dot(velocity.head<3>());
}

// Row r (< dim) of a body-space block as a spatial vector (BlockRowDot's left factor).
inline Vec6 BlockRow(const ConstraintBlock& block, int r) {
  if (r < 3) return block.map.row(r).transpose();
  Vec6 row;
  row << block.map.row(r - 3).tail<3>().transpose(), 0.0, 0.0, 0.0;
  return row;
}

// force += (row r of a body-space block)^T y: the transpose of BlockRowDot.
inline void AddBlockRowTranspose(const ConstraintBlock& block, int r, double y, Vec6& force) {
  if (r < 3) {
    force += block.map.row(r).transpose() * y;
  } else {
    force.head<3>() += block.map.row(r - 3).tail<3>().transpose() * y;
  }
}

// All constraints of one step of one instance, in a deterministic order that is also their keys'
// order (ConstraintKeyLess): contacts (in Data::contact order, which is by geom pair), then
// equalities (by index, position before rotation), then joint limits (by joint, lower before
// upper), then soft servos (by actuator), then dry joint friction (by dof), then tendon limits (by
// tendon, lower before upper). Equality rows are world axes. Storage is reused from step to step
// and only grows.
struct ConstraintSet {
  std::vector<Constraint> constraints;
  std::vector<ConstraintBlock> blocks;
  std::vector<double> bias;    // e_i per row (eqs. 3-5), m/s (or rad/s); in MuJoCo's model the
                               // soft row's e (soft_rows.h): a contact's tangent row k holds the
                               // reference part of its edges, e_edge = e_0 +- mu_k e_k
  std::vector<double> lambda;  // impulse per row, N s; the warm start on entry to the solver
  // The part of bias that removes an error (a penetration, a limit violation, an equality's
  // error), per row; zero for gaps, servos and friction rows (ConstraintOptions, "Recovery").
  std::vector<double> correction;
  // MuJoCo's model (ConstraintModel::kMujoco, engine/constraint/soft_rows.h): each row's
  // regularization R, the impulse being lambda = -(J v + e) / R inside the row's set (for a
  // pyramidal contact, row 0 holds the R that all its edges share); 0 in the hard model.
  std::vector<double> regularization;
  // Per row: its correction exceeds its kept speed, so its island solves twice (Islands::split,
  // engine/sim/step.cc); `split` when any row does.
  std::vector<char> split_row;
  bool split = false;
  int num_rows = 0;
  int num_contacts = 0;
  // Contacts that inherited an impulse from last step's (ConstraintOptions::warm_start_radius). A
  // contact that keeps moving farther than that starts cold and costs the solver iterations.
  int num_warm_started_contacts = 0;

  void Clear() {
    constraints.clear();
    blocks.clear();
    bias.clear();
    lambda.clear();
    correction.clear();
    regularization.clear();
    split_row.clear();
    split = false;
    num_rows = 0;
    num_contacts = 0;
    num_warm_started_contacts = 0;
  }
};

}  // namespace alsim
