// Drumwright's first-order solver (seed 003, "An Unconditionally Stable First-Order Constraint
// Solver for Multibody Systems"; digest seed-003-drumwright.md), `--solver drumwright`: every
// constraint row is a spring-damper evaluated at t0 and integrated by implicit Euler through the
// island's inertia, so an island's step is one linear solve (bilateral rows only) or one strictly
// convex program (the master problem (181)-(189)), with no Newton iteration and no
// regularization of redundant rows (first_order_step.h has the equations).
//
// Rows (BuildConstraints with ConstraintModel::kSap: each bias holds the row's phi0):
//   contact (condim 3)   class n + r, s, only at phi0 = dist <= 0 (the paper has no speculative
//                        rows): K_n, B_n from the geoms' alsim:contact stiffness / damping (a
//                        pair's text wins; two geoms' springs in series, 1/K = 1/K1 + 1/K2, and
//                        the same for B), else DrumwrightParameters; with `hertz` E* Hertz's
//                        f(d) = E* sqrt(r d^3) (121) as the row linearized at the step's start:
//                        K_n = f'(d0) = (3/2) E* sqrt(r d0) on phi_n = -f(d0) / f'(d0) =
//                        -(2/3) d0, G_n the unit normal: Hertz's force to first order in the
//                        step, in newtons, with its own stiffness (the paper's K_n = E* sqrt(r)
//                        on phi_n = -d^(3/2) (122)-(123) has the stiffness E* sqrt(r) along a
//                        unit normal and leaves a landing's overlap for many steps:
//                        bench/drumwright_hertz.h); K_r = K_s = 0, B_r = B_s =
//                        friction_damping / h; mu 0 is a frictionless unilateral row
//   joint, tendon limit  class u at phi0 = the gap <= 0: alsim:joint / alsim:tendon springs
//   equality             class b, phi0 = the error: alsim:equality springs
//   servo (eq. 4)        class b: its impulse lambda = -k e - b J v is the spring law (53) with
//                        K = 1 / h, phi0 = k e, B = b / h - 1 (h K phi0 = k e, h^2 K + h B = b)
// Dry joint friction and force-limited servos have no spring law and are refused
// (SolverRefusesModel), as are condim 4/6 contacts.
//
// Per island: A (the step's M with the integrator's implicit terms, dense over the island's dofs)
// and G (dense rows over them, from JointSpaceJacobian); v0 = v_free and f = 0 (v_free = v_k +
// h A^-1 f already holds the smooth forces), so v_hat = v1 = v_c + h A_eff^-1 G*^T lam*, and each
// row's impulse is h lam. A failed program leaves the island at v_free and counts in the
// statistics. Islands are independent and each is solved by one deterministic dense
// factorization and interior point, so the result is the same for any thread count.
//
// With `velocity_product` each row's Gd v0 enters through Mhat (first_order_step.h; the rows
// row_acceleration.h computes, 0 for the others, contacts among them).
//
// Memory: each island slot keeps a FirstOrderStepSolver and its row lists in grow-only storage,
// so once the slots have seen the islands' sizes a step allocates nothing.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "engine/solver/drumwright/drumwright_parameters.h"
#include "engine/solver/drumwright/first_order_step.h"
#include "engine/solver/island_solver.h"
#include "engine/solver/joint_space_jacobian.h"

namespace alsim {

// A contact's spring from the scene (the file comment's pair rule) or the parameters.
struct DrumwrightContactSpring {
  double stiffness = 0;  // K_n, N/m (linear) or N/m^(3/2) (Hertz: E* sqrt(r), before linearizing)
  double damping = 0;    // B_n, N s/m
  bool hertz = false;    // phi_n = -d^(3/2)
};
DrumwrightContactSpring ContactSpring(const Model& m, const DrumwrightParameters& parameters,
                                      int geom1, int geom2);

class DrumwrightSolver final : public IslandSolver {
 public:
  explicit DrumwrightSolver(const Model& m);
  SolverType type() const override { return SolverType::kDrumwright; }
  // The last step's, over its islands in island order.
  const DrumwrightStatistics& statistics() const { return statistics_; }

 private:
  void Prepare(const Model& m, Data& d, const SolverOptions& options) override;
  void SolveIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   int island) override;
  void AddFigures(SolverStatistics* stats) const override;

  // One island's storage, grown to the largest island the slot has held.
  struct IslandWork {
    FirstOrderStepSolver step;
    std::vector<int> global;  // island dof -> dof
    std::vector<SpringRow> springs;
    std::vector<int> source, constraint_of;  // per row: its row and constraint in the set
    std::vector<char> physical, keep;
    std::array<double, kMaxConstraintDim> acceleration{};  // one constraint's Gd v0
  };

  JointSpaceJacobian jacobian_;
  std::vector<int> local_dof_;                     // nv: the dof's index in its island
  std::vector<std::unique_ptr<IslandWork>> work_;  // per island slot
  std::vector<DrumwrightStatistics> island_statistics_;
  mutable DrumwrightStatistics statistics_;
};

}  // namespace alsim
