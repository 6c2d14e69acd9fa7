#include "engine/solver/icf/icf_contact.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/data/contact.h"
#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

IcfCompliance ContactCompliance(const Model& m, const IcfParameters& parameters, int g1, int g2) {
  const auto own = [](const std::vector<double>& values, int g, double fallback) {
    return g >= 0 && g < static_cast<int>(values.size()) && values[g] >= 0 ? values[g] : fallback;
  };
  constexpr double kRigid = std::numeric_limits<double>::infinity();
  const double k1 = own(m.geom_contact_stiffness, g1, kRigid);
  const double k2 = own(m.geom_contact_stiffness, g2, kRigid);
  const double d1 = own(m.geom_contact_dissipation, g1, parameters.dissipation);
  const double d2 = own(m.geom_contact_dissipation, g2, parameters.dissipation);
  IcfCompliance c;
  if (k1 == kRigid && k2 == kRigid) {  // the option's contact
    c.stiffness = parameters.stiffness;
    c.dissipation = std::max(own(m.geom_contact_dissipation, g1, -1.0),
                             own(m.geom_contact_dissipation, g2, -1.0));
    if (c.dissipation < 0) c.dissipation = parameters.dissipation;
  } else if (k1 == kRigid || k2 == kRigid) {  // one compliant layer against a rigid geom
    c.stiffness = std::min(k1, k2);
    c.dissipation = k1 < k2 ? d1 : d2;
  } else {
    c.stiffness = k1 * k2 / (k1 + k2);
    c.dissipation = (k2 * d1 + k1 * d2) / (k1 + k2);
  }
  c.stiction = std::max(own(m.geom_stiction_speed, g1, parameters.stiction_speed),
                        own(m.geom_stiction_speed, g2, parameters.stiction_speed));
  const int lo = std::min(g1, g2), hi = std::max(g1, g2);
  for (size_t p = 0; p < m.contact_pair_geom1.size(); ++p) {
    if (m.contact_pair_geom1[p] != lo || m.contact_pair_geom2[p] != hi) continue;
    if (m.contact_pair_stiffness[p] >= 0) c.stiffness = m.contact_pair_stiffness[p];
    if (m.contact_pair_dissipation[p] >= 0) c.dissipation = m.contact_pair_dissipation[p];
    if (m.contact_pair_stiction_speed[p] >= 0) c.stiction = m.contact_pair_stiction_speed[p];
  }
  return c;
}

IcfFriction AnisotropicFriction(double mu_x, double mu_y, const Mat3& geom, const Mat3& frame) {
  IcfFriction f;
  f.mu = std::max(mu_x, mu_y);
  if (mu_x == mu_y) return f;  // mu I in any basis: the isotropic contact exactly
  const Vec3 n = frame.col(0);
  const Vec3 x = geom.col(0) - geom.col(0).dot(n) * n;
  Vec3 e1;
  if (x.squaredNorm() >= 0.5) {
    e1 = x.normalized();
  } else {  // |y.n|^2 <= 1 - |x.n|^2 < 1/2: the projected y axis is e2
    e1 = (geom.col(1) - geom.col(1).dot(n) * n).normalized().cross(n);
  }
  // e1 = (c, s) in (tangent1, tangent2), e2 = (-s, c) up to sign.
  const double c = e1.dot(frame.col(1)), s = e1.dot(frame.col(2));
  f.anisotropic = true;
  f.tensor[0] = mu_x * c * c + mu_y * s * s;
  f.tensor[1] = (mu_x - mu_y) * c * s;
  f.tensor[2] = mu_x * s * s + mu_y * c * c;
  return f;
}

IcfFriction ContactFriction(const Model& m, const Data& d, const Contact& contact, double mu) {
  IcfFriction isotropic;
  isotropic.mu = mu;
  const int g1 = contact.geom1, g2 = contact.geom2;
  const int ngeom = static_cast<int>(m.geom_friction_x.size());
  if (g1 < 0 || g2 < 0 || g1 >= ngeom || g2 >= ngeom) return isotropic;
  // condim 1 (ContactParametersOfPair's rule: the MuJoCo pair's, the higher priority's, the
  // larger) is frictionless whatever the scene's tensors.
  const bool ranked = m.geom_priority[g1] != m.geom_priority[g2];
  const int higher = m.geom_priority[g1] > m.geom_priority[g2] ? g1 : g2;
  const int condim = contact.explicit_pair >= 0 ? m.pair_condim[contact.explicit_pair]
                     : ranked                   ? m.geom_condim[higher]
                                                : std::max(m.geom_condim[g1], m.geom_condim[g2]);
  if (condim == 1) return isotropic;
  // The tensor's coefficients and the geom whose axes fix its directions.
  int axes = -1;
  double mu_x = 0, mu_y = 0;
  const int lo = std::min(g1, g2), hi = std::max(g1, g2);
  for (size_t p = 0; p < m.contact_pair_friction_x.size(); ++p) {
    if (m.contact_pair_geom1[p] != lo || m.contact_pair_geom2[p] != hi) continue;
    if (m.contact_pair_friction_x[p] < 0) continue;
    axes = m.contact_pair_friction_geom[p];
    mu_x = m.contact_pair_friction_x[p];
    mu_y = m.contact_pair_friction_y[p];
  }
  if (axes < 0) {
    if (contact.explicit_pair >= 0) return isotropic;
    const auto sets = [&](int g) { return m.geom_friction_x[g] >= 0; };
    if (ranked) {
      axes = sets(higher) ? higher : -1;
    } else {
      axes = sets(lo) ? lo : sets(hi) ? hi : -1;
    }
    if (axes < 0) return isotropic;
    mu_x = m.geom_friction_x[axes];
    mu_y = m.geom_friction_y[axes];
  }
  return AnisotropicFriction(mu_x, mu_y, d.geom_xmat[axes], contact.frame);
}

IcfContact MakeIcfContact(IcfModel model, const IcfParameters& parameters, double dt,
                          double stiffness, double dissipation, const IcfFriction& friction,
                          double phi0, double normal_velocity0, double w) {
  IcfContact c = MakeIcfContact(model, parameters, dt, stiffness, dissipation, friction.mu, phi0,
                                normal_velocity0, w);
  c.anisotropic = friction.anisotropic && friction.mu > 0;
  if (c.anisotropic) {
    for (int j = 0; j < 3; ++j) c.friction_tensor[j] = friction.tensor[j];
  }
  return c;
}

IcfContact MakeIcfContact(IcfModel model, const IcfParameters& parameters, double dt,
                          double stiffness, double dissipation, double mu, double phi0,
                          double normal_velocity0, double w) {
  IcfContact c;
  c.model = model;
  c.dt = dt;
  c.stiffness = stiffness;
  c.dissipation = dissipation;
  c.mu = mu;
  c.phi0 = phi0;
  // vhat = min(-phi0 / dt, 1 / d), 1 / d infinite without dissipation.
  c.vhat = dissipation > 0 ? std::min(-phi0 / dt, 1 / dissipation) : -phi0 / dt;
  // gamma_n0 = dt f_n(phi0, v_n0) (eq. 18).
  c.friction_impulse =
      dt * stiffness * std::max(0.0, -phi0) * std::max(0.0, 1 - dissipation * normal_velocity0);
  c.stiction = parameters.stiction_speed;
  if (parameters.regularized) {
    c.stiction = std::max(c.stiction, parameters.sigma * w * mu * c.friction_impulse);
  }
  return c;
}

double IcfNormalImpulse(const IcfContact& c, double vn) {
  if (!(vn < c.vhat)) return 0;
  return c.dt * c.stiffness * (-c.phi0 - c.dt * vn) * (1 - c.dissipation * vn);
}

double IcfNormalAntiderivative(const IcfContact& c, double vn) {
  const double v = std::min(vn, c.vhat);
  return c.dt * c.stiffness *
         (-v * (c.phi0 + 0.5 * c.dt * v) + c.dissipation * 0.5 * v * v * (c.phi0 + c.dt * v / 1.5));
}

double IcfNormalImpulseDerivative(const IcfContact& c, double vn) {
  if (!(vn < c.vhat)) return 0;
  return -c.dt * c.stiffness *
         (c.dt * (1 - c.dissipation * vn) + c.dissipation * (-c.phi0 - c.dt * vn));
}

namespace {

// The anisotropic contact (the header's Appendix B forms): w = M v_t, eps' = mu_max eps.
IcfContactState AnisotropicContactAt(const IcfContact& c, const double* vc, double* hessian) {
  IcfContactState state;
  const double* m = c.friction_tensor;  // [[m0, m1], [m1, m2]]
  const double eps = c.mu * c.stiction;
  const double w1 = m[0] * vc[1] + m[1] * vc[2], w2 = m[1] * vc[1] + m[2] * vc[2];
  const double root = std::sqrt(w1 * w1 + w2 * w2 + eps * eps);  // |w|_s' + eps' > 0
  const double soft = root - eps;
  // u = M w_s, the direction of -gamma_t (eq. 31's M t^(M v_t) as eps' -> 0).
  const double u1 = (m[0] * w1 + m[1] * w2) / root, u2 = (m[1] * w1 + m[2] * w2) / root;
  const bool similar = c.model == IcfModel::kSimilar;
  const double z = similar ? vc[0] - soft : vc[0];
  const double n = IcfNormalImpulse(c, z);
  const double dn = IcfNormalImpulseDerivative(c, z);
  // The tangential impulse's size: the lagged gamma_n0 or the implicit n(z) (mu is in M).
  const double friction = similar ? n : c.friction_impulse;
  state.cost = -IcfNormalAntiderivative(c, z) + (similar ? 0.0 : friction * soft);
  state.impulse[0] = n;
  state.impulse[1] = -friction * u1;
  state.impulse[2] = -friction * u2;
  state.acts = dn != 0 || friction > 0;
  if (hessian == nullptr) return state;
  // G_tt = friction / root^3 M (eps'^2 I + w_perp w_perp^T) M + Similar's -n' u u^T, with
  // M w_perp = (m1 w1 - m0 w2, m2 w1 - m1 w2); G_tn = Similar's n' u.
  const double p1 = m[1] * w1 - m[0] * w2, p2 = m[2] * w1 - m[1] * w2;
  const double scale = friction / (root * root * root), e2 = eps * eps;
  const double along = similar ? -dn : 0.0;
  const double cross = similar ? dn : 0.0;
  double* h = hessian;
  h[0] = -dn;
  h[1] = h[3] = cross * u1;
  h[2] = h[6] = cross * u2;
  h[4] = scale * (e2 * (m[0] * m[0] + m[1] * m[1]) + p1 * p1) + along * u1 * u1;
  h[8] = scale * (e2 * (m[1] * m[1] + m[2] * m[2]) + p2 * p2) + along * u2 * u2;
  h[5] = h[7] = scale * (e2 * (m[0] + m[2]) * m[1] + p1 * p2) + along * u1 * u2;
  return state;
}

}  // namespace

IcfContactState IcfContactAt(const IcfContact& c, const double* vc, double* hessian) {
  if (c.anisotropic) return AnisotropicContactAt(c, vc, hessian);
  IcfContactState state;
  // The soft norm of v_t and its gradient t_s; root = |v_t|_s + eps.
  const double eps = c.stiction;
  const double t1 = vc[1], t2 = vc[2];
  const double root = std::sqrt(t1 * t1 + t2 * t2 + eps * eps);
  const double soft = root - eps;
  const double s1 = root > 0 ? t1 / root : 0.0;
  const double s2 = root > 0 ? t2 / root : 0.0;
  // The normal law's argument: v_n (Lagged) or z = v_n - mu |v_t|_s (Similar).
  const bool similar = c.model == IcfModel::kSimilar;
  const double z = similar ? vc[0] - c.mu * soft : vc[0];
  const double n = IcfNormalImpulse(c, z);
  const double dn = IcfNormalImpulseDerivative(c, z);
  // The tangential impulse's size mu gamma_n: the lagged gamma_n0 or the implicit n(z).
  const double friction = c.mu * (similar ? n : c.friction_impulse);
  state.cost = -IcfNormalAntiderivative(c, z) + (similar ? 0.0 : friction * soft);
  state.impulse[0] = n;
  state.impulse[1] = -friction * s1;
  state.impulse[2] = -friction * s2;
  state.acts = dn != 0 || (friction > 0 && root > 0);
  if (hessian == nullptr) return state;
  // G_tt = friction P_perp(t_s) / root, plus Similar's -mu^2 n' t_s t_s^T; G_tn = mu n' t_s.
  const double perp = root > 0 ? friction / root : 0.0;
  const double along = similar ? -c.mu * c.mu * dn : 0.0;
  const double cross = similar ? c.mu * dn : 0.0;
  double* h = hessian;
  h[0] = -dn;
  h[1] = h[3] = cross * s1;
  h[2] = h[6] = cross * s2;
  h[4] = perp * (1 - s1 * s1) + along * s1 * s1;
  h[8] = perp * (1 - s2 * s2) + along * s2 * s2;
  h[5] = h[7] = -perp * s1 * s2 + along * s1 * s2;
  return state;
}

}  // namespace alsim
