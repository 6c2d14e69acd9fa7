// One contact of Irrotational Contact Fields (seed 000; digest seed-000-icf.md sections 3-6): the
// convex cost l(v_c) of the contact velocity v_c = (v_n, v_t) in alsim's row order (normal,
// tangent1, tangent2; v_n > 0 separating), its impulse gamma = -dl/dv_c and its Hessian
// G = -dgamma/dv_c, for the Newton kit (engine/solver/newton).
//
// Normal law: linear elasticity with Hunt & Crossley dissipation, f_n = k (-phi)_+ (1 - d v_n)_+
// (eq. 22), phi = phi0 + dt v_n, so that the impulse
//   n(v_n) = dt k (-phi0 - dt v_n)_+ (1 - d v_n)_+
// vanishes from vhat = min(-phi0 / dt, 1 / d) on (eq. 23); its antiderivative
//   N+(v) = dt k [-v (phi0 + dt v / 2) + d v^2 / 2 (phi0 + 2 dt v / 3)],  N(v) = N+(min(v, vhat))
// gives the normal cost -N (continuous, convex; the paper's N+(min(v_n, vhat); f0) reads phi0).
// Friction: the soft norm |x|_s = sqrt(|x|^2 + eps^2) - eps (Appendix A) with its gradient
// t_s = v_t / (|v_t|_s + eps) and Hessian P_perp(t_s) / (|v_t|_s + eps), P_perp(t) = I - t t^T.
//   Lagged (eq. 18):  l = -N(v_n) + mu gamma_n0 |v_t|_s,  gamma = (n(v_n), -mu gamma_n0 t_s),
//                     G = diag(-n'(v_n), mu gamma_n0 P_perp(t_s) / (|v_t|_s + eps))
//   Similar (19-21):  z = v_n - mu |v_t|_s,  l = -N(z),  gamma = (n(z), -mu n(z) t_s),
//                     G_nn = -n'(z), G_tn = mu n'(z) t_s,
//                     G_tt = -mu^2 n'(z) t_s t_s^T + mu n(z) P_perp(t_s) / (|v_t|_s + eps)
// (the paper prints -mu for the t_s t_s^T term's coefficient; -mu^2 is the derivative, digest 6.4).
#pragma once

#include "engine/solver/icf/icf_parameters.h"

namespace alsim {

struct Model;

// A contact's stiffness k (N/m), dissipation d (s/m) and stiction speed v_s (m/s).
struct IcfCompliance {
  double stiffness = 0;
  double dissipation = 0;
  double stiction = 0;
};

// The compliance of a contact between geoms g1 and g2: the pair's own values where the scene
// sets them (Model::contact_pair_*), else the geoms' (Model::geom_contact_*). A geom's stiffness
// is its own compliant layer, and a geom without one is rigid: two layers combine as springs in
// series, k = k1 k2 / (k1 + k2), d = (k2 d1 + k1 d2) / (k1 + k2) (Drake's rule); one layer
// against a rigid geom is that layer's (k1, d1); neither is the options' contact (k, and the
// larger d a geom sets, else the option's). A geom's unset d is the option's; v_s is the larger
// of the two geoms' (each its own or the option's).
IcfCompliance ContactCompliance(const Model& m, const IcfParameters& parameters, int g1, int g2);

// A contact's invariants over one solve (digest 10.1): fixed during the Newton iterations, so
// that the cost is one convex function of v.
struct IcfContact {
  IcfModel model = IcfModel::kLagged;
  double dt = 0;
  double stiffness = 0;    // k, N/m
  double dissipation = 0;  // d, s/m
  double mu = 0;
  double phi0 = 0;              // signed distance at the step's start, m (negative: overlap)
  double vhat = 0;              // min(-phi0 / dt, 1 / d): n vanishes from there on
  double friction_impulse = 0;  // Lagged: gamma_n0 = dt k (-phi0)_+ (1 - d v_n0)_+, N s
  double stiction = 0;          // epsilon_s, m/s
};

// The invariants of a contact at signed distance phi0 whose normal velocity was v_n0 at the
// step's start; w is the diagonal estimate of its Delassus operator (1/kg) for the regularized
// Lagged model's epsilon_s = max(v_s, sigma w mu gamma_n0) (eq. 26).
IcfContact MakeIcfContact(IcfModel model, const IcfParameters& parameters, double dt,
                          double stiffness, double dissipation, double mu, double phi0,
                          double normal_velocity0, double w);

// n(v_n), N(v_n) and n'(v_n) of the normal law (the file comment).
double IcfNormalImpulse(const IcfContact& c, double vn);
double IcfNormalAntiderivative(const IcfContact& c, double vn);
double IcfNormalImpulseDerivative(const IcfContact& c, double vn);

struct IcfContactState {
  double impulse[3] = {0, 0, 0};  // gamma (normal, tangent1, tangent2), N s
  double cost = 0;                // l(v_c)
  bool acts = false;              // G != 0
};

// The state at v_c (3); `hessian` (3 x 3, column-major), when not null, receives G.
IcfContactState IcfContactAt(const IcfContact& c, const double* vc, double* hessian);

}  // namespace alsim
