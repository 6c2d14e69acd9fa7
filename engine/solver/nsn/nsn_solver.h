// The non-smooth Newton solver of Macklin et al. 2019 (seed 002, "Non-Smooth Newton Methods for
// Deformable Multi-Body Dynamics"; digest seed-002-nsn.md sections 4-7 and 12), `--solver nsn`,
// on alsim's islands of articulated trees in reduced coordinates (the paper's Sec 9.5 remark:
// "applicable with appropriate M, G, J") and its tetrahedral deformables. Backward Euler on
// positions: per system (an island, or a group of deformables with the islands and trees they
// touch), from u^0 = 0 and lambda^0 = 0 ((67)-(68)), every Newton iteration n
//   places the system's trees at q^n = q- (+) h u^n (IslandKinematics: Step's own position
//     update, so the last iterate is where Step puts the bodies; digest 13: q-, not q^n-1) and
//     its vertices at x^n = x- + h u^n,
//   evaluates the rows there (contacts, equalities, elements through the iterate, the rest below),
//   g = H (u^n - u~) - h J^T lambda^n                                                     (57)
//   h-vector = [(1/h) E (c + lambda) for elements; (1/h) C_b; (1/h) phi_n; phi_f; servos]  (58)
//   [J H^-1 J^T + C + eps I] dlambda = (1/h) (J H^-1 g - h-vector)                  (59), (8.4)
//   du = H^-1 (h J^T dlambda - g)                                                          (60)
//   lambda += t dlambda,  u += t du                                                   (61)-(62)
// and the trees' v_hat is the last u (so q+ = q- (+) h u), the vertices' velocity likewise
// (Step moves them by h u), the rows' impulses h lambda. H is block diagonal: over the trees'
// dofs the step matrix A (M + h D with the integrator's implicit damping; M~ of (40) in reduced
// coordinates, taken at q- as the paper takes M), dense per system, with u~ = v_free (the smooth
// forces, gyroscopic ones included, explicit), hinge and slide springs implicit in A (+ h^2 K) or
// as rows (NsnParameters::spring_rows); over a vertex's 3 dofs its lumped mass, with
// u~ = v- + h g. lambda are forces (N), as in the paper.
//
// Rows (BuildConstraints with ConstraintModel::kSap: each bias holds the row's position value at
// q-), each with its J the one in the momentum equation, so the system is symmetric:
//   contact normal   a = C_n(q^n) = n . (c2(q^n) - c1(q^n)) - r1 - r2, n fixed for the step and
//                    each side's point fixed on its body at q- (digest 6, step 1): [OURS] its
//                    centre of curvature (a sphere's centre, a capsule's axis point; r its radius)
//                    or, on flat geoms (r = 0), the closest surface point itself. The paper's
//                    surface points on a turning sphere leave the contact along their cycloid
//                    within a step: the sphere sank by the chord's sag and its normal force gained
//                    a lever arm of about v h (a ball rolling down a slope 1.6% fast, one rolling
//                    on the floor at omega h = 0.5 spun up without bound). Each body's rows are
//                    taken at its own surface point c -+ r n, so n . J u is the gap's exact rate;
//                    phi_n = NCP(a, r lambda_n) (FB (93)-(95) or min-map (96)-(98)), J = alpha
//                    times the geometric row, C = beta r / h^2 (54); speculative contacts
//                    (C_n > 0 at q-) are rows too, and stay at lambda_n = 0 unless the step closes
//                    them. A vertex's contact with a geom (DeformableCollision) likewise:
//                    C_n = n . (x_v - p) - thickness with p the geom's closest point fixed on its
//                    body; a geom's point against a triangle n . (p - sum w_i x_i) - r -
//                    thickness, a vertex against another deformable's triangle
//                    n . (x_v - sum w_i x_i) - thickness_v - thickness_t (weights fixed)
//   contact tangents J_f u + W lambda_f (36), W from (104) or (105) with the current lambda (and
//                    NsnParameters::friction_memory), J_f the tangent rows at q^n, C = W / h;
//                    inactive (mu lambda_n <= 0): J_f rows zero, W = 1 (106)
//   equality         C_b(q^n) = the connect or weld error at the iterate (EqualityErrors), hard:
//                    E = 0, C = 0, J at q^n; a vertex attached to a body: x_v - p_b(q^n) = 0,
//                    3 hard rows (two-way: the paper's joints as bilateral rows)
//   joint, tendon    a = phi0 + h J u^n with J at q- (exact for hinges, slides and fixed
//   limits           tendons; a spatial tendon's is its first-order value), as contacts
//   servo (eq. 4)    the impulse h lambda = -k e - b J u as the compliant velocity row
//                    J u + (h lambda + k e) / b = 0, C = 1 / b (a drive as a compliant row,
//                    Sec 9.5)
//   tet elements     the generalized compliance rows of engine/deformable/tet_material.h (linear,
//                    corotated: 6 rows, E = (V_e K_e)^-1; stable Neo-Hookean: [OURS] 9 rows in
//                    F, J exact, E the projected inverse Hessian (EvaluateNeoHookeanGradientTet:
//                    the paper's 3 rows in principal stretches leave out the shear stiffness and
//                    Newton does not converge on them)), E_e (c_e + lambda_e) = 0, C = E_e / h^2
//                    (a block per tet)
//   joint springs    with NsnParameters::spring_rows, a hinge's or slide's spring K toward
//                    q_spring: s = q- + h u^n - q_spring (exact: N = I), c = K s, E = 1 / K,
//                    E (c + lambda) = s + E lambda = 0, C = E / h^2 (the paper's compliant joints:
//                    the beam's bending stiffness); its explicit impulse leaves b and
//                    implicit-euler's h^2 K leaves A. Off (the default), h^2 K is in A whatever
//                    the integrator: the same step, the row eliminated. A tree with such a spring
//                    and no other row is a system of its own (with no row at all: u = u~ exactly)
// Pinned vertices are not unknowns. Dry joint friction, force-limited servos and condim 4/6
// contacts are refused (SolverRefusesModel). r (66): h^2 [J H^-1 J^T]_nn for normal rows,
// h (d_t1 + d_t2) / 2 for a contact's tangents, from the rows at q- (once per step: the roots do
// not depend on r).
//
// The Schur matrix is never formed: H^-1 is dense over a system's tree dofs (its LLT, then the
// inverse: islands are robots and piles of tens to hundreds of dofs) and 1 / m_v on vertices, J
// sparse rows (CSR over the system's dofs, the rigid rows from the JointSpaceJacobian), and the
// linear solver (NsnParameters::linear_solver) applies J (H^-1 (J^T x)) + C x + eps x. Geometric
// stiffness (Sec 8.3, NsnParameters::geometric_stiffness) shifts the vertex dofs' H only, as the
// paper does (Sec 11: particles, not articulations).
//
// Systems are independent and each is solved in a fixed order of sums, so the result is the same
// for any thread count. Each system slot keeps grow-only storage: once the slots have seen the
// systems' sizes a step allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/deformable/tet_material.h"
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
  // The last step's, over its systems.
  const NsnStatistics& statistics() const { return statistics_; }
  // Deformables and joint springs are solved whether or not the step has constraints.
  bool SolvesWithoutConstraints() const override { return solves_always_; }

  // The residuals at every Newton iterate of the last step, per system (islands first, then the
  // deformables' groups), when recording (off by default; for the experiments' convergence plots:
  // recording allocates).
  struct Iterate {
    double momentum_residual = 0;  // |g|_inf, N s
    double row_residual = 0;       // weighted |h-vector|_inf, m/s
    int linear_iterations = 0;     // of the linear solve that followed (0 after the last)
    double linear_residual = 0;    // its final preconditioned residual over its initial one
  };
  void set_record_history(bool record) { record_history_ = record; }
  const std::vector<Iterate>& history(int system) const { return work_[system]->history; }

  // The last step's normal impulse of each of d.vertex_contact's and d.triangle_contact's
  // contacts, N s.
  const std::vector<double>& vertex_contact_impulse() const { return vertex_contact_impulse_; }
  const std::vector<double>& triangle_contact_impulse() const { return triangle_contact_impulse_; }
  // Likewise for d.vertex_triangle_contact (deformable against deformable).
  const std::vector<double>& vertex_triangle_impulse() const { return vertex_triangle_impulse_; }

 private:
  void Prepare(const Model& m, Data& d, const SolverOptions& options) override;
  void SolveIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   int island) override;
  void SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                    double deadline_us) override;
  void AddFigures(SolverStatistics* stats) const override;

  enum class RowKind : std::uint8_t { kNormal, kTangent, kBilateral, kServo, kElement };
  // Where a row comes from: the constraint set, a vertex contact, a vertex's attachment, a tet.
  enum Origin : std::uint8_t {
    kSet,
    kVertexContact,
    kTriangleContact,
    kVertexTriangle,
    kAttachment,
    kTet,
    kJointSpring
  };

  // What one system holds: islands [island_adr, + island_num) of system_island_, free trees
  // (subsystems in no island) and deformables likewise.
  struct System {
    int island_adr = 0, island_num = 0;
    int tree_adr = 0, tree_num = 0;
    int deform_adr = 0, deform_num = 0;
  };

  // One system's storage, grown to the largest system the slot has held.
  struct SystemWork {
    std::vector<int> global;  // tree dofs: local dof -> dof
    std::vector<int> vertex;  // vertex dofs 3 k .. 3 k + 2 after the tree dofs: the vertex
    int trees = 0;            // tree dofs
    // Per row, in order: the islands' constraints, then per deformable its contacts, attachments
    // and tets.
    std::vector<int> source;      // the row in the constraint set, or -1
    std::vector<int> constraint;  // its constraint in the set, its vertex contact, or its tet
    std::vector<int> row;         // its row within that
    std::vector<RowKind> kind;
    std::vector<std::uint8_t> origin;  // Origin
    std::vector<int> normal;           // tangent rows: their contact's normal row
    std::vector<double> start;         // the set's bias: the row's value at q-
    std::vector<double> value;         // normal rows: C(q^n); bilateral rows: C_b(q^n)
    std::vector<double> velocity;      // J u^n of the raw row
    std::vector<double> scale;         // the row of J in the system: scale times the raw row
    std::vector<double> compliance;    // C's diagonal (element rows: their block's diagonal)
    std::vector<double> factor;        // r of (66)
    std::vector<double> weight;        // the stopping test's weight (nsn_parameters.h)
    std::vector<double> previous_w;    // a contact's first tangent row: its last W
    // A contact's first tangent row: bit 0 once its W fell this step, bit 1 once it rose again
    // after (a cycle: NsnParameters::friction_memory applies from then on).
    std::vector<std::uint8_t> friction_cycle;
    std::vector<double> weight_factor;  // a contact's first tangent row: r by effective mass
    std::vector<double> raw_diagonal, residual, lambda, dlambda, diagonal, rhs;
    // The raw rows' entries (CSR over local dofs), rebuilt at every iterate.
    std::vector<int> row_adr, entry_dof;
    std::vector<double> entry_value;
    // Element rows: per tet of the system its first row, row count and compliance block (k x k,
    // row-major, at 81 per tet: a Neo-Hookean tet's 9 rows).
    std::vector<int> element_row, element_rows;
    std::vector<double> element_compliance;
    // Per local dof.
    std::vector<double> u, g, du, work, work2, free_velocity, mass;
    // H~ on the vertex dofs (the mass plus the geometric stiffness's shift, NsnParameters::
    // geometric_stiffness) and the constraint force -h J^T lambda at the last iterate's rows.
    std::vector<double> stiff_mass, constraint_force;
    // H u~ over the tree dofs: b = A v_free with the joint springs' explicit impulse taken out
    // (their rows carry it).
    std::vector<double> momentum;
    std::vector<double> a, factorization, inverse;  // trees x trees, column-major: A, LLT, A^-1
    std::vector<Vec3> position;                     // per vertex dof: x^n
    std::vector<int> path;                          // BodyPathDofs' scratch (nv)
    std::vector<double> row_scratch;                // Gauss-Seidel's row products
    std::vector<double> schur;                      // kLdlt: rows x rows, column-major
    KrylovWorkspace krylov;
    std::vector<Iterate> history;
  };

  // Solves system `s` (islands, trees and deformables) into d; `result` and `stats` its outcome.
  void SolveSystem(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   const System& system, SystemWork& work, IslandSolveResult& result,
                   NsnStatistics& stats);
  // Rows' values, Jacobians and the system's C and h-vector at its current u.
  void Evaluate(const Model& m, const Data& d, const NsnParameters& p, const System& system,
                SystemWork& work, bool first);
  // y = J x (rows) and y = J^T x (dofs) with the rows' scales; y = H^-1 x; y += C x.
  static void ApplyJ(const SystemWork& work, const double* x, double* y);
  static void ApplyJT(const SystemWork& work, const double* x, double* y);
  static void ApplyInverse(const SystemWork& work, const double* x, double* y);
  // NsnLinearSolver::kLdlt: the Schur system by a dense L D L^T (work.schur), into work.dlambda.
  template <class Apply>
  static KrylovResult DenseLdlt(const Apply& apply, int rows, SystemWork& work);
  // The rows' [J H^-1 J^T]_kk into raw_diagonal (H~ on the vertex dofs).
  static void RowDiagonals(SystemWork& work);
  static void AddCompliance(const SystemWork& work, double regularization, const double* x,
                            double* y);
  // Appends the raw entries of a point's velocity on `body` (at the trial kinematics) along
  // `direction` times `sign` to the current row.
  void AddPointEntries(const Model& m, int body, const Vec3& point, const Vec3& direction,
                       double sign, SystemWork& work) const;
  // A contact's row r direction: its normal (r = 0) or tangent r (TangentBasis).
  static Vec3 RowDirection(const Vec3& normal, int r);
  // The point of triangle `tri` with barycentric `weights` at the system's iterate.
  Vec3 TrianglePoint(const Data& d, const SystemWork& work, const std::array<int, 3>& tri,
                     const Vec3& weights) const;
  // Appends weight times `direction` on vertex dof block `local` (none for a pinned vertex, -1),
  // and -w_a times it on each vertex of `tri`, to the current row.
  static void AddVertexEntries(int trees, int local, double weight, const Vec3& direction,
                               SystemWork& work);
  void AddTriangleEntries(int trees, const std::array<int, 3>& tri, const Vec3& weights,
                          const Vec3& direction, SystemWork& work) const;
  // The position of vertex v at the system's iterate (a pinned one's never moves).
  static const Vec3& VertexPosition(const Data& d, const SystemWork& work, int local, int v) {
    return local >= 0 ? work.position[local] : d.vert_xpos[v];
  }

  IslandKinematics kinematics_;
  JointSpaceJacobian jacobian_;
  std::vector<int> local_dof_;           // nv: the dof's index in its system
  std::vector<double> trial_velocity_;   // nv: each system's tree u^n, read by IslandKinematics
  std::vector<Vec3> anchor1_, anchor2_;  // per constraint: a contact's points in body frames
  std::vector<int> local_vertex_;        // nvert: the vertex's index among its system's vertices
  // Deformables: each tet's rest data and each deformable's materials (from the model).
  std::vector<TetRest> tet_rest_;   // this step's: activated tets' rest shapes grown
  std::vector<TetRest> tet_rest0_;  // the model's
  std::vector<LinearMaterial> deform_linear_;
  std::vector<NeoHookeanMaterial> deform_neo_hookean_;
  std::vector<int> contact_adr_;   // per deformable: its first vertex contact (ndeform + 1)
  std::vector<int> triangle_adr_;  // per deformable: its first triangle contact (ndeform + 1)
  std::vector<int> pair_adr_;  // per deformable: its first vertex-triangle contact (ndeform + 1)
  std::vector<double> vertex_triangle_impulse_;
  std::vector<double> vertex_contact_impulse_, triangle_contact_impulse_;
  // The step's systems: islands not touched by a deformable, each on its own, then the groups.
  std::vector<System> systems_;
  std::vector<int> system_island_, system_tree_, system_deform_;
  std::vector<int> group_root_;  // union-find over islands, deformables and free trees
  // Joint springs as compliance rows: per dof its hinge or slide joint with a spring (-1: none);
  // per subsystem whether it has one, and this step's subsystems already in a system.
  std::vector<int> spring_joint_;
  std::vector<char> tree_has_spring_, tree_in_system_;
  bool solves_always_ = false;                     // deformables or joint springs
  std::vector<std::unique_ptr<SystemWork>> work_;  // per system slot
  std::vector<NsnStatistics> system_statistics_;
  std::vector<IslandSolveResult> system_results_;
  mutable NsnStatistics statistics_;
  bool record_history_ = false;
};

}  // namespace alsim
