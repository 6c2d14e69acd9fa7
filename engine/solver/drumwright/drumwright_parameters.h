// The parameters of Drumwright's first-order solver (seed 003; digest seed-003-drumwright.md
// sections 4-8), with their defaults. Every constraint row is a spring-damper of stiffness K and
// damping B (digest 7): these are the values for rows whose scene sets none (scene keys:
// docs/engine.md, "Drumwright's springs"), and the numerical choices the paper fixes per
// experiment.
#pragma once

#include "engine/solver/drumwright/conic_qp.h"

namespace alsim {

struct DrumwrightParameters {
  // Contact normal K_n, N/m, and B_n, N s/m (law (137)-(138)). [OURS] 1e8 N/m: a 40 kg robot on
  // two feet sinks 2 um at rest and omega h = sqrt(K / m) h is well above 1 at robot masses and
  // steps, where implicit Euler makes the impact dead (restitution (1 + (omega h)^2)^(-N/2),
  // N = pi / atan(omega h), digest 9.3); B_n 0 leaves the dissipation to implicit Euler.
  double contact_stiffness = 1e8;
  double contact_damping = 0;
  // Joint and tendon limits (class u, law (135)-(136)): N/m for slides and tendons of length,
  // N m/rad for hinges; and equality constraints (class b, law (53)): connect and weld positions
  // N/m, weld rotations N m/rad. [OURS] as contacts.
  double limit_stiffness = 1e8;
  double limit_damping = 0;
  double equality_stiffness = 1e8;
  double equality_damping = 0;
  // The tangent rows' damper B_r = B_s = friction_damping / h, N s/m, with K_r = K_s = 0
  // (memoryless Coulomb): the paper's 1e6 / h (Sec. 6.4), "as large as possible" so that mu, not
  // the damper, limits the force; a stuck contact pushed with F creeps at F / B_r.
  double friction_damping = 1e6;
  // The weight of lam_n and lam_u in the master problem's objective (124), zeta = zeta_h / h:
  // the paper's 1 / h.
  double zeta_h = 1;
  // Hertz contacts (a geom's `hertz` key): K_n = E* sqrt(r) before linearizing
  // (drumwright_solver.h), r the pair's effective radius 1 / (1 / r1 + 1 / r2) over its spheres'
  // and capsules' radii, or this radius, m, when neither has one (planes, boxes, meshes).
  double hertz_radius = 0.01;
  // [OURS] The program (83)-(85) is a minimum-norm one, not complementary: where rows couple,
  // one whose own spring ends the step extended (phi1 > 0) may still push (lam > its law) when
  // that lowers the norm, and add energy (a humanoid's joint limits separating at 47 rad/s kept
  // 745 N m each; its kinetic energy rose 35 -> 182 J in one step). With this on, such rows (a
  // contact's with its tangents) are dropped and the program solved again, up to 8 times; off
  // is the paper's program alone.
  bool complementary = true;
  // Each row's Gd v0 (its phi'' at zero acceleration) in the laws with Mhat (53), (141), through
  // a minimum-norm solve per class (digest 4, option (b); first_order_step.h), for the rows
  // row_acceleration.h computes; off, the term is omitted (option (a)), which shifts a row's phi
  // by K^-1 Mhat Gd v0 (a pendulum's rod stretches by its centripetal force over K).
  bool velocity_product = false;
  // The interior-point method of each island's program (conic_qp.h); its tolerances follow the
  // conditioning O(h B) of the spring laws (digest 8). [OURS] An iterate that double precision
  // cannot improve is kept once its KKT residual is below 1e-6 (the reference's 1e-9 rejects
  // resting contacts whose tangent dampers B_r h = 1e6 leave ~1e-8): an island whose program
  // failed gets no constraint force at all, which drops a resting body through the ground.
  ConicQpParameters program = [] {
    ConicQpParameters p;
    p.acceptable_kkt_residual = 1e-6;
    return p;
  }();
};

// What the solver did in one step, over all islands (SolverStatistics figures).
struct DrumwrightStatistics {
  int programs = 0;                 // islands solved by the conic program (any unilateral row)
  int program_iterations = 0;       // interior-point iterations, summed
  int failed_programs = 0;          // programs that did not solve: their islands got v_free
  int admm_programs = 0;            // programs the interior point failed and ADMM solved
  int dropped_rows = 0;             // programs solved again without rows pushing while extended
  double max_kkt_residual = 0;      // of the solved programs (ConicQpStatistics::kkt_residual)
  double max_violation = 0;         // max |phi0| over the rows that act, m (or rad)
  double max_normal_inflation = 0;  // max lam_n over its spring-law bound (test H's inflation)
  double max_stiction_slip = 0;     // max tangential speed of a contact inside its cone, m/s
  double spring_energy = 0;         // sum 1/2 K phi1^2 over the acting rows, J
};

}  // namespace alsim
