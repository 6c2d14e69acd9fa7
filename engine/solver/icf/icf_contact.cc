#include "engine/solver/icf/icf_contact.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

IcfContactState IcfContactAt(const IcfContact& c, const double* vc, double* hessian) {
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
