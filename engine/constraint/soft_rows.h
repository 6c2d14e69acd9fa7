// MuJoCo's soft-constraint model for one row (MuJoCo documentation, Computation: "Solver
// parameters"; engine_core_constraint.c of 2.2.2, mj_makeImpedance and mj_referenceConstraint),
// in alsim's velocity form. MuJoCo's row force is f = -D (J a - aref) inside the row's set, with
//   D = 1 / R,  R = (1 - d) / d * diagApprox,  d = d(r) the impedance of solimp at distance r,
//   aref = -B (J v_k) - K d r,
//   standard solref (timeconst, dampratio > 0): K = 1 / (dmax^2 timeconst^2 dampratio^2),
//                                               B = 2 / (dmax timeconst);
//   direct solref (-stiffness, -damping):       K = stiffness / dmax^2,  B = damping / dmax.
// With v = v_k + h a the impulse is lambda = h f = -D (J v + e) with
//   e = -(1 - h B) (J v_k) + h K d r,
// which is what alsim stores per row: ConstraintSet::regularization = R and ::bias = e. Friction
// rows (frictionloss, a contact's tangent rows) have K = 0.
#pragma once

#include "engine/model/model.h"

namespace alsim {

// A row's solref and solimp after MuJoCo's checks (getsolparam): a mixed format falls back to
// the defaults, timeconst is at least 2 h when `refsafe`, dmin, dmax and the midpoint lie in
// [0.0001, 0.9999], the width is at least 0 and the power at least 1.
struct SoftRowParameters {
  SolRef solref{0.02, 1};
  SolImp solimp{0.9, 0.95, 0.001, 0.5, 2};
};
SoftRowParameters CheckedSoftRowParameters(const SolRef& solref, const SolImp& solimp, double h,
                                           bool refsafe);

// The contact's solref and solimp as MuJoCo mixes them: the explicit pair's, else the higher
// priority geom's, else the geoms' mixed by solmix (standard solref and solimp weighted, direct
// solref the smaller).
SoftRowParameters ContactSoftRowParameters(const Model& m, int geom1, int geom2, int explicit_pair);

// MuJoCo's includemargin of a contact's pair, margin - gap (the explicit pair's, else the larger
// of the geoms' each): only a contact closer than this is active.
double ContactIncludeMargin(const Model& m, int geom1, int geom2, int explicit_pair);

// The impedance d(r) of solimp at distance `pos` from `margin` (MuJoCo's getimpedance).
double Impedance(const SolImp& solimp, double pos, double margin);

// K and B of the reference acceleration (the file comment).
struct SoftRowReference {
  double stiffness = 0;  // K
  double damping = 0;    // B
};
SoftRowReference Reference(const SoftRowParameters& p);

// R = max(1e-15, (1 - d) / d * diag_approx).
double Regularization(double impedance, double diag_approx);

// e = -(1 - h B) velocity + h K d (pos - margin): the row's bias (the file comment); `velocity` is
// J v_k. Friction rows pass stiffness 0.
double SoftRowBias(const SoftRowReference& reference, double impedance, double pos, double margin,
                   double velocity, double h);

}  // namespace alsim
