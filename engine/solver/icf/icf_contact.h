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
//
// Anisotropic friction (Appendix B): a symmetric positive semi-definite friction tensor M in the
// tangent plane replaces mu, the friction cone being the ellipse |M^-1 gamma_t| <= gamma_n. Maximum
// dissipation (eq. 30) gives gamma_t = -M gamma_n t^(M v_t) (eq. 31): the potentials of the
// isotropic models with v_t replaced by w = M v_t and mu folded into M (eq. 32),
//   Lagged:   l = -N(v_n) + gamma_n0 |w|_s',  gamma_t = -gamma_n0 M w_s,
//             G_tt = gamma_n0 M P_perp(w_s) M / (|w|_s' + eps'),
//   Similar:  z = v_n - |w|_s',  l = -N(z),  gamma = (n(z), -n(z) M w_s),  G_nn = -n'(z),
//             G_tn = n'(z) M w_s,
//             G_tt = -n'(z) (M w_s)(M w_s)^T + n(z) M P_perp(w_s) M / (|w|_s' + eps'),
// with w_s = w / (|w|_s' + eps') and |.|_s' the soft norm of eps' = mu_max eps, mu_max the largest
// principal coefficient. The appendix regularizes |M v_t| with eps itself, which for M = mu I puts
// the stick-slip transition at v_s / mu; eps' = mu_max eps makes M = mu I exactly eq. (18) and
// (19)-(21) (|mu v_t|_s' = mu |v_t|_s) and puts the transition at v_s along the strongest
// principal direction, at v_s mu_max / mu_i along the other. In 2-D,
// P_perp(w_s) = (eps'^2 I + w_perp w_perp^T) / (|w|_s' + eps')^2 with w_perp = (-w_2, w_1), which
// G_tt uses: positive semi-definite by construction, no cancellation when |w_s| nears 1.
#pragma once

#include "engine/math/types.h"
#include "engine/solver/icf/icf_parameters.h"

namespace alsim {

struct Model;
struct Data;
struct Contact;

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

// A contact's friction: isotropic mu, or the tensor M of Appendix B in the contact's tangent basis
// (the contact frame's tangent1, tangent2; M = [[xx, xy], [xy, yy]]) with mu its largest principal
// coefficient.
struct IcfFriction {
  bool anisotropic = false;
  double mu = 0;
  double tensor[3] = {0, 0, 0};  // xx, xy, yy (anisotropic only)
};

// The friction tensor M = mu_x e1 e1^T + mu_y e2 e2^T of a geom whose world rotation is `geom`
// (columns: its local axes), for a contact whose frame (columns: normal n, tangent1, tangent2) is
// `frame`. The principal direction e1 is the geom's x axis projected onto the tangent plane and
// e2 is perpendicular to it in that plane. Where the x axis is closer to n than 45 degrees
// (|x.n|^2 > 1/2, e.g. on a box's x faces) its projection says little about the surface: there
// e2 is the projected y axis instead (|y.n|^2 < 1/2 there, as |x.n|^2 + |y.n|^2 <= 1) and e1 is
// perpendicular to it, so that on a box's x faces mu_x acts along the box's z axis. M is the same
// for -e1 and -e2. Equal coefficients are the isotropic friction mu_x exactly (M = mu_x I in any
// basis); both zero is frictionless.
IcfFriction AnisotropicFriction(double mu_x, double mu_y, const Mat3& geom, const Mat3& frame);

// The friction of contact `contact` whose isotropic coefficient is `mu` (Contact::friction, 0 for
// condim 1): anisotropic where the scene sets friction_x and friction_y (Model::geom_friction_x,
// Model::contact_pair_friction_x), with MuJoCo's precedence. condim 1 stays frictionless; a pair's
// alsim:contact:GEOM1:GEOM2 friction (axes of GEOM1, the first named) wins; a MuJoCo <pair> keeps
// its own (isotropic) friction; of two geoms of different priority the higher's friction applies
// (its tensor, or mu); else a geom's tensor wins over the other's isotropic friction (a grooved or
// brushed surface sets the contact's friction, whatever the geom it touches), and of two geoms
// with tensors the lower id's applies (a pair text decides otherwise).
IcfFriction ContactFriction(const Model& m, const Data& d, const Contact& contact, double mu);

// A contact's invariants over one solve (digest 10.1): fixed during the Newton iterations, so
// that the cost is one convex function of v.
struct IcfContact {
  IcfModel model = IcfModel::kLagged;
  double dt = 0;
  double stiffness = 0;    // k, N/m
  double dissipation = 0;  // d, s/m
  double mu = 0;           // anisotropic: the largest principal coefficient, eps' = mu eps
  bool anisotropic = false;
  double friction_tensor[3] = {0, 0, 0};  // M (IcfFriction::tensor), anisotropic only
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
// The same with anisotropic friction (Appendix B): eq. (26) reads mu as the largest principal
// coefficient; an isotropic `friction` is exactly the overload above with mu = friction.mu.
IcfContact MakeIcfContact(IcfModel model, const IcfParameters& parameters, double dt,
                          double stiffness, double dissipation, const IcfFriction& friction,
                          double phi0, double normal_velocity0, double w);

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
