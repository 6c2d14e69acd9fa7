// The Newton kit: a primal Newton solve per island of a convex cost with one row per constraint
// row (equality, inequality, box, cone), used by the contact models that have one. First among
// them MuJoCo's contact model, solved by MuJoCo's primal Newton method (MuJoCo documentation,
// Computation: "Newton"; engine_solver.c of 2.2.2), per island, in alsim's velocity form.
//
// The rows are built by BuildConstraints with ConstraintModel::kMujoco (soft_rows.h): row r has
// regularization R_r = 1 / D_r and bias e_r, and with y_r = J_r v its impulse is
//   equality rows (equalities):                         lambda_r = -D_r (y_r + e_r)
//   inequality rows (contact normals or pyramid edges,  lambda_r = max(0, -D_r (y_r + e_r))
//     limits):
//   box rows (frictionloss, implicit servos):           lambda_r = clamp(-D_r y_r - c_r, lo, hi)
// where a pyramidal contact of condim k has 2 (k - 1) edge rows J_n +- mu_j J_j with the shared
// R_py and e_n +- mu_j e_j, and a servo's c = k e and D = b of eq. (4). Each lambda_r is minus the
// derivative of a convex piecewise quadratic s_r(y_r), so v_hat minimizes
//   cost(v) = 1/2 v^T A v - b^T v + sum_r s_r(J_r v)
// (MuJoCo's cost times h^2 with v = v_k + h qacc). Newton:
//   g = A v - b - J^T lambda(v),  H = A + sum_{r quadratic} D_r J_r^T J_r,  d = -H^{-1} g,
//   alpha = argmin cost(v + alpha d) by the exact line search CANAL uses too
//   (exact_line_search.h): s_r is quadratic piecewise, so cost'(alpha) is affine between the
//   rows' kinks, which each evaluation reports, and a Newton iterate inside that piece is the
//   minimizer, returned without another evaluation;
// stopping when the improvement or the gradient, scaled as MuJoCo scales them (its
// acceleration units, divided by the island's mean inertia times max(1, dofs)), falls below
// MujocoNewtonParameters::tolerance, or at SolverOptions::max_iterations: the loop of
// newton_loop.h, which CANAL's inner solve runs too.
// The start is the cheaper of v_free (lambda = 0) and the warm start's v = A^{-1}(b + J^T
// lambda_warm) (MuJoCo's choice between qacc_smooth and qacc_warmstart).
//
// H keeps the mass matrix's tree sparsity when every row of the island lies on one chain of dofs
// from a body to the root (a contact with the world or a static body, a joint's limit, friction or
// servo): J_r^T J_r then adds only entries between a dof and its ancestors, so H is factored by
// the tree LDL^T without fill (engine/linalg/tree_ldl.h), tree by tree. Otherwise (self-contacts
// across branches, contacts between robots, equalities, tendons) H is dense over the island's dofs,
// factored by an in-place Cholesky, or, above kMaxDenseDofs (MuJoCo's own switch to sparse: a
// pile of bodies), sparse over the pattern of A and every constraint's J^T J, the island Hessian
// CANAL uses too (island_hessian.h: each row's terms scattered at its constraint's pair
// positions, in row order), and factored by CHOLMOD, which allocates (cholmod_llt.h). Islands run
// in parallel, each on its own storage, with every sum in a fixed order: bit-identical for any
// thread count. Storage only grows, so a step allocates nothing once an instance has seen its
// largest islands.
//
// Elliptic cones (option/cone="elliptic") are MuJoCo's (mj_constraintUpdate): with U = (mu x_0,
// f_j x_j), N = U_0 and T = |U_1..|, the top zone (N >= mu T) costs nothing, the bottom zone
// (mu N + T <= 0) is quadratic in every row, the middle zone costs 1/2 D_0 / (mu^2 (1 + mu^2))
// (N - mu T)^2 with its dim x dim Hessian, which H takes through its eigenvectors (each a
// combined row); x = J v + e and mu the regularized cone's.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "engine/solver/icf/icf_contact.h"
#include "engine/solver/island_solver.h"
#include "engine/solver/joint_space_jacobian.h"
#include "engine/solver/newton/exact_line_search.h"
#include "engine/solver/newton/island_hessian.h"

namespace alsim {

// A solver row's set (the file comment).
// kCone heads an elliptic contact's dim rows (the others kConeTail), which share one cone cost.
enum class NewtonRowKind : unsigned char { kEquality, kInequality, kBox, kCone, kConeTail };

// What the solver did in one step, summed over islands.
struct NewtonStatistics {
  int newton_iterations = 0;
  int line_search_evaluations = 0;  // evaluations of cost' and cost'' along a direction
  int factorizations = 0;           // factorizations of H (tree LDL^T or dense Cholesky)
  int tree_factorizations = 0;      // of which by the tree LDL^T
  int rank_updates = 0;             // rank-1 updates of a tree factor instead of factorizations
  int warm_starts = 0;              // islands that started from the warm start, not v_free
};

// What a test sees after each Newton direction of island 0 (NewtonSolver::set_probe), to check the
// derivatives against finite differences (digest seed-001-sap.md, T3): v, g = grad cost(v) and
// d = -H^{-1} g over the island's local dofs, the cost (and its gradient) at any v, and phi'
// and phi'' of phi(alpha) = cost(v + alpha d) as the line search sees them.
struct NewtonProbe {
  int dofs = 0;
  const double* velocity = nullptr;
  const double* gradient = nullptr;
  const double* direction = nullptr;
  double scale = 0;  // ||A v||_inf + ||b||_inf: the size of the gradient's terms, for rounding
  std::function<double(const double* v, double* gradient)> cost;  // gradient may be null
  std::function<void(double alpha, LineSearchSample* sample)> line;
};

class NewtonSolver final : public IslandSolver {
 public:
  // Islands with more dofs keep H sparse (the file comment).
  static constexpr int kMaxDenseDofs = 60;

  // `type`: kMujoco (MuJoCo's model), kSap (SAP's, engine/solver/sap), kIcfLagged or
  // kIcfSimilar (Irrotational Contact Fields, engine/solver/icf).
  NewtonSolver(const Model& m, SolverType type);
  SolverType type() const override { return type_; }
  const NewtonStatistics& statistics() const { return statistics_; }
  // Records island 0's cost at its start and after every Newton iteration, in the next solves
  // (allocates while on), for tests of the descent.
  void set_record_history(bool on) { record_history_ = on; }
  const std::vector<double>& cost_history() const { return cost_history_; }
  // Calls `probe` after each Newton direction of island 0 (allocates while set), for tests.
  void set_probe(std::function<void(const NewtonProbe&)> probe) { probe_ = std::move(probe); }

  // The step's linearization, for its gradients (engine/sim/step_gradients.h), on a Data whose
  // constraints and islands are the step's and whose qvel is still v_k (after the solve and
  // before the velocity update, or after PrepareConstraintSolve): at v (nv, every dof) the
  // residual of the optimality condition of the solve's convex cost
  //   g(v) = A v - b - J^T gamma(J v)   (A v - b on the dofs no constraint reaches),
  // zero at the solve's v_hat, into `residual` (nv); with `factor`, each island's Hessian
  // H = dg/dv = A + J^T G J, dense, factored (Cholesky) and inverted, for SolveLinearized. ICF and
  // SAP only, whose cost is C1 with an exact Hessian away from its kinks; false (nothing factored)
  // where an island's H is not positive definite. Allocates as its islands grow.
  bool Linearize(const Model& m, Data& d, const SolverOptions& options, const double* v,
                 double* residual, bool factor);
  // Adds -J^T dgamma/dv_k of the Lagged contacts to `dg_dv` (nv x nv, row-major; columns v_k),
  // after Linearize at v_hat: Lagged's friction is linear in gamma_n0 = dt k (-phi0)_+ (1 -
  // d J_n v_k)_+ (eq. 18), so dgamma_t/dv_k = gamma_t / gamma_n0 (-dt k (-phi0)_+ d) J_n where
  // gamma_n0 > 0. False (nothing added) where a contact's friction is not linear in gamma_n0:
  // the regularized Lagged model's eps_s grows with it (eq. 26).
  bool AddLaggedVelocityTerms(const Data& d, const SolverOptions& options, double* dg_dv) const;
  // x <- H^{-1} x over every dof (nv), after Linearize with `factor` on the same Data: each
  // island's factor, A's on the trees no constraint reaches (both dense).
  void SolveLinearized(const Model& m, const Data& d, double* x);
  // X <- H^{-1} X for X nv x `columns`, row-major, group by group, only the columns with a
  // nonzero in the group's rows:
  // `column_subsystem` (optional, per column) names the one subsystem whose rows a column's
  // nonzeros lie in, or -1 where they may lie anywhere (then its rows are scanned).
  void SolveLinearizedColumns(const Model& m, const Data& d, double* x, int columns,
                              const int* column_subsystem = nullptr);

 private:
  void Prepare(const Model& m, Data& d, const SolverOptions& options) override;
  void SolveIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   int island) override;
  void SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                    double deadline_us) override;
  void AddFigures(SolverStatistics* stats) const override;

  bool Icf() const { return type_ == SolverType::kIcfLagged || type_ == SolverType::kIcfSimilar; }
  // Whether a contact with friction is one cone of its rows (SAP's, ICF's, MuJoCo's elliptic),
  // not a pyramid's edges.
  bool ConeRows(const Model& m) const {
    return type_ == SolverType::kSap || Icf() || m.cone == FrictionCone::kElliptic;
  }
  // The island's rows (kinds, D, offsets, bounds, sparse J over its local dofs).
  void BuildRows(const Model& m, const Data& d, const SolverOptions& options, int island);
  // SAP: constraint i's rows from SAP's parameters and w, the mean of the diagonal of its block
  // of W = J A^-1 J^T (sap_parameters.h; digest 5.2-5.4).
  double DelassusDiagonalMean(const Model& m, const Data& d, int i);
  // Cost at v (local dofs) and, when `gradient` is set, g and the rows' impulses and states.
  double Evaluate(const Model& m, const Data& d, int island, const double* v, double* gradient);
  // The same with A v in product_ and J v in row_y_ already (Evaluate computes them).
  double EvaluateRows(const Data& d, int island, const double* v, double* gradient);
  // y = A x over the island's local dofs: A's tree storage when H keeps the tree sparsity, else
  // the dense copy of A for a small island or the sparse pattern's values.
  void MassProduct(const Model& m, const Data& d, int island, const double* x, double* y);
  // out[r] = J_r x for every row r of the island (x over its local dofs; a condim-3 pyramid's
  // edges from one pass over its contact's rows).
  void RowProducts(const Data& d, int island, const double* x, double* out) const;

  JointSpaceJacobian jacobian_;
  std::vector<int> local_dof_;             // nv: index within its island
  std::vector<int> island_dof_adr_;        // per island: first of its dofs in per-dof arrays
  std::vector<size_t> island_matrix_adr_;  // per island: its n x n block in matrix_ storage
  std::vector<int> island_row_adr_;        // per island: first of its rows in per-row arrays
  std::vector<int> island_row_num_;
  std::vector<size_t> island_entry_adr_;  // per island: first of its rows' entries
  std::vector<int> global_dof_;           // per island dof: the dof
  // Per island dof.
  std::vector<double> velocity_, rhs_, gradient_, direction_, product_, scratch_;
  std::vector<double> permuted_, permuted_product_;  // in the sparse pattern's dof numbering
  std::vector<double> start_;         // nv: the warm start's A^{-1}(b + J^T lambda) in global dofs
  std::vector<double> warm_product_;  // nv: b + J^T lambda, A times the warm start
  // Per island, n x n: A, then H and its factor.
  std::vector<double> mass_, hessian_;
  // Per row.
  std::vector<NewtonRowKind> kind_;
  std::vector<double> row_d_, row_offset_, lower_, upper_;  // D, c (lambda_u = -(D y + c)), box
  std::vector<double> row_y_, row_z_, impulse_;             // J v, J d, lambda
  std::vector<double> saved_y_;  // J v_free while the warm start is evaluated
  std::vector<char>
      quadratic_;               // the row's state: D acts; a cone's head: 0 top, 1 bottom, 2 middle
  std::vector<double> row_mu_;  // elliptic rows: the cone's mu (head), friction (others)
  std::vector<int> cone_dim_;   // a cone's head: its rows
  std::vector<IcfContact> icf_contact_;  // ICF: a cone's head: its contact's invariants
  // A condim-3 pyramid's first edge: its constraint, whose 4 edges H takes together as
  // J_c^T C J_c with C (3 x 3) the sum of the quadratic edges' D u u^T; -1 on other rows.
  std::vector<int> pyramid_constraint_;
  std::vector<int> row_constraint_;   // the row's constraint
  std::vector<double> cone_hessian_;  // a cone's head: its dim x dim Hessian in the middle zone
  std::vector<double> combined_;      // per island dof: a cone Hessian's eigenvector's J row
  std::vector<int> row_entry_adr_, row_entry_num_;
  std::vector<int> entry_dof_;             // per entry: local dof
  std::vector<double> entry_value_;        // per entry: J_r(dof)
  std::vector<int> constraint_first_row_;  // per constraint: its first solver row
  std::vector<char> constraint_on_chain_;  // per constraint: its dofs lie on one chain
  std::vector<double> tree_hessian_;       // H in the mass matrix's layout (global entries)
  std::vector<double> tree_vector_;        // nv: a right-hand side in global dofs
  std::vector<double> tree_product_;       // nv: A times tree_vector_
  std::vector<char> island_tree_;          // per island: H keeps the tree sparsity
  // Large islands off one chain: H sparse (A + sum J^T J's pattern, A's values, CHOLMOD).
  IslandHessian sparse_hessian_;
  std::vector<int> newton_iterations_, line_search_evaluations_, factorizations_, warm_;
  std::vector<int> tree_factorizations_, rank_updates_;
  std::vector<char> factored_state_;  // per row: quadratic_ when the tree factor was last made
  std::vector<double> rank_vector_;   // nv: a row's J_r for a rank-1 update, zero between
  NewtonStatistics statistics_;
  SolverType type_;
  bool record_history_ = false;
  std::vector<double> cost_history_;
  std::function<void(const NewtonProbe&)> probe_;
  // Linearize's groups (the islands, then the trees no constraint reaches): their dofs, their
  // island (or -1 - the tree's subsystem), and their H^{-1}, n x n each in linear_.
  std::vector<int> group_dof_adr_, group_dof_, group_owner_;
  std::vector<size_t> linear_adr_;
  std::vector<double> linear_;
  std::vector<double> inverse_;  // a group's L^{-1} while Linearize forms H^{-1}
  // SolveLinearizedColumns: a group's columns with a nonzero, its rows of them, its dofs.
  std::vector<int> active_;
  std::vector<double> block_;
};

}  // namespace alsim
