// The non-smooth Newton solver of Macklin et al. 2019 (seed 002, "Non-Smooth Newton Methods for
// Deformable Multi-Body Dynamics"; digest seed-002-nsn.md sections 4-6 and 12), `--solver nsn`,
// on alsim's islands of articulated trees in reduced coordinates (the paper's Sec 9.5 remark:
// "applicable with appropriate M, G, J"). Backward Euler on positions: per island, from
// u^0 = 0 and lambda^0 = 0 ((67)-(68)), every Newton iteration n
//   places the island's trees at q^n = q- (+) h u^n (IslandKinematics: Step's own position
//     update, so the last iterate is where Step puts the bodies; digest 13: q-, not q^n-1),
//   evaluates the rows there (contacts and equalities through the kinematics, the rest below),
//   g = A (u^n - v_free) - h J^T lambda^n                                                 (57)
//   h-vector = [(1/h) C_b; (1/h) phi_n; phi_f; servo rows]                                (58)
//   [J A^-1 J^T + C + eps I] dlambda = (1/h) (J A^-1 g - h-vector)                  (59), (8.4)
//   du = A^-1 (h J^T dlambda - g)                                                          (60)
//   lambda += t dlambda,  u += t du                                                   (61)-(62)
// and the island's v_hat is the last u (so q+ = q- (+) h u), its impulses h lambda. A is the
// step matrix over the island's dofs (M + h D with the integrator's implicit damping; M~ of (40)
// in reduced coordinates, taken at q- as the paper takes M), v_free = u~ (the smooth forces,
// gyroscopic ones included, explicit). lambda are forces (N), as in the paper.
//
// Rows (BuildConstraints with ConstraintModel::kSap: each bias holds the row's position value at
// q-), each with its J the one in the momentum equation, so the system is symmetric:
//   contact normal   a = C_n(q^n) = n . (p2(q^n) - p1(q^n)), p1 and p2 the closest surface points
//                    fixed on their bodies at q- and n fixed for the step (digest 6, step 1);
//                    phi_n = NCP(a, r lambda_n) (FB (93)-(95) or min-map (96)-(98)), J = alpha
//                    times the geometric row, C = beta r / h^2 (54); speculative contacts
//                    (C_n > 0 at q-) are rows too, and stay at lambda_n = 0 unless the step closes
//                    them
//   contact tangents J_f u + W lambda_f (36), W from (104) or (105) with the current lambda, J_f
//                    the frame's tangent rows at q^n, C = W / h; inactive (mu lambda_n <= 0): J_f
//                    rows zero, W = 1 (106)
//   equality         C_b(q^n) = the connect or weld error at the iterate (EqualityErrors), hard:
//                    E = 0, C = 0, J at q^n
//   joint, tendon    a = phi0 + h J u^n with J at q- (exact for hinges, slides and fixed
//   limits           tendons; a spatial tendon's is its first-order value), as contacts
//   servo (eq. 4)    the impulse h lambda = -k e - b J u as the compliant velocity row
//                    J u + (h lambda + k e) / b = 0, C = 1 / b (a drive as a compliant row,
//                    Sec 9.5)
// Dry joint friction, force-limited servos and condim 4/6 contacts are refused
// (SolverRefusesModel). r (66): h^2 [J A^-1 J^T]_nn for normal rows, h (d_t1 + d_t2) / 2 for a
// contact's tangents, from the rows at q- (once per step: the roots do not depend on r).
//
// The Schur matrix is never formed: A^-1 is dense per island (its LLT, then the inverse: islands
// are robots and piles of tens to hundreds of dofs), J sparse rows over the island's dofs (the
// JointSpaceJacobian), and the linear solver (NsnParameters::linear_solver) applies
// J (A^-1 (J^T x)) + C x + eps x. No geometric stiffness: the paper applies it to particle dofs
// only (Sec 11).
//
// Islands are independent and each is solved in a fixed order of sums, so the result is the same
// for any thread count. Each island slot keeps grow-only storage: once the slots have seen the
// islands' sizes a step allocates nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/solver/island_kinematics.h"
#include "engine/solver/island_solver.h"
#include "engine/solver/joint_space_jacobian.h"
#include "engine/solver/nsn/conjugate_residual.h"
#include "engine/solver/nsn/nsn_parameters.h"

namespace alsim {

class NsnSolver final : public IslandSolver {
 public:
  explicit NsnSolver(const Model& m);
  SolverType type() const override { return SolverType::kNsn; }
  // The last step's, over its islands in island order.
  const NsnStatistics& statistics() const { return statistics_; }

  // The residuals at every Newton iterate of the last step, per island, when recording (off by
  // default; for the experiments' convergence plots: recording allocates).
  struct Iterate {
    double momentum_residual = 0;  // |g|_inf, N s
    double row_residual = 0;       // weighted |h-vector|_inf, m/s
    int linear_iterations = 0;     // of the linear solve that followed (0 after the last)
    double linear_residual = 0;    // its final preconditioned residual over its initial one
  };
  void set_record_history(bool record) { record_history_ = record; }
  const std::vector<Iterate>& history(int island) const { return work_[island]->history; }

 private:
  void Prepare(const Model& m, Data& d, const SolverOptions& options) override;
  void SolveIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   int island) override;
  void AddFigures(SolverStatistics* stats) const override;

  enum class RowKind : std::uint8_t { kNormal, kTangent, kBilateral, kServo };

  // One island's storage, grown to the largest island the slot has held.
  struct IslandWork {
    std::vector<int> global;  // island dof -> dof
    // Per row, in constraint order.
    std::vector<int> source, constraint, row;  // its row in the set, its constraint, row in it
    std::vector<RowKind> kind;
    std::vector<int> normal;         // tangent rows: their contact's normal row
    std::vector<double> start;       // the set's bias: the row's value at q-
    std::vector<double> value;       // normal rows: C(q^n); bilateral rows: C_b(q^n)
    std::vector<double> velocity;    // J u^n of the raw row
    std::vector<double> scale;       // the row of J in the system: scale times the raw row
    std::vector<double> compliance;  // C's diagonal
    std::vector<double> factor;      // r of (66)
    std::vector<double> weight;      // the stopping test's weight (nsn_parameters.h)
    std::vector<double> previous_w;  // a contact's first tangent row: its last W
    std::vector<double> raw_diagonal, residual, lambda, dlambda, diagonal, rhs;
    // Per island dof.
    std::vector<double> u, g, du, work, work2;
    std::vector<double> a, factorization, inverse;  // n x n, column-major: A, its LLT, A^-1
    KrylovWorkspace krylov;
    std::vector<Iterate> history;
  };

  // Rows' values, Jacobians and the system's C and h-vector at the island's current u.
  void Evaluate(const Model& m, const Data& d, const NsnParameters& p, int island, IslandWork& work,
                bool first);
  // y = J x (rows) and y = J^T x (island dofs) with the rows' scales.
  void ApplyJ(const IslandWork& work, const double* x, double* y) const;
  void ApplyJT(const IslandWork& work, const double* x, double* y) const;
  // y = A^-1 x over the island's dofs.
  static void ApplyInverse(const IslandWork& work, const double* x, double* y);

  IslandKinematics kinematics_;
  JointSpaceJacobian jacobian_;
  std::vector<int> local_dof_;           // nv: the dof's index in its island
  std::vector<double> trial_velocity_;   // nv: each island's u^n, read by IslandKinematics
  std::vector<Vec3> anchor1_, anchor2_;  // per constraint: a contact's points in body frames
  std::vector<std::unique_ptr<IslandWork>> work_;  // per island slot
  std::vector<NsnStatistics> island_statistics_;
  mutable NsnStatistics statistics_;
  bool record_history_ = false;
};

}  // namespace alsim
