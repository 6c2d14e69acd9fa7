#include "engine/dynamics/actuation.h"

#include <algorithm>
#include <cmath>

#include "engine/dynamics/jacobian.h"
#include "engine/dynamics/tendon.h"
#include "engine/math/spatial.h"

namespace alsim {
namespace {

Vec3 SitePosition(const Model& m, const Data& d, int site) {
  const int body = m.site_body[site];
  return d.xpos[body] + d.xmat[body] * m.site_pos[site];
}

// A rod of length r joins the crank site c to a slider s that moves along the slider site's z axis
// a. The length is the slider's position along a:
//   length = a.(c - s) - sqrt(r^2 - |(c - s) x a|^2) = av - sqrt(av^2 + r^2 - |v|^2), v = c - s,
// and when the rod is too short to reach the axis (negative root) the crank is "broken" and the
// length is av. Writes d length / d qpos into d.transmission_moment and returns the length.
double SliderCrankLength(const Model& m, Data& d, int actuator) {
  const int crank = m.actuator_crank_site[actuator];
  const int slider = m.actuator_slider_site[actuator];
  const int slider_body = m.site_body[slider];
  const Vec3 crank_pos = SitePosition(m, d, crank);
  const Vec3 slider_pos = SitePosition(m, d, slider);
  const Vec3 axis = d.xmat[slider_body] * QuatToMatrix(m.site_quat[slider]).col(2);
  const Vec3 v = crank_pos - slider_pos;
  const double av = axis.dot(v);
  const double r = m.actuator_crank_length[actuator];
  const double det = av * av + r * r - v.dot(v);

  PointJacobian(m, d, m.site_body[crank], crank_pos, d.crank_jacp, d.unused_jacr);
  PointJacobian(m, d, slider_body, slider_pos, d.slider_jacp, d.slider_jacr);
  // d(av) = a.dv + v.da with da = omega_slider x a, so v.da = (a x v).omega_slider;
  // d(sqrt(det)) = (av d(av) - v.dv) / sqrt(det).
  const Vec3 a_cross_v = axis.cross(v);
  const bool broken = det <= 0;
  const double root = broken ? 0.0 : std::sqrt(det);
  for (int i = 0; i < m.nv; ++i) {
    const Vec3 dv = d.crank_jacp.col(i) - d.slider_jacp.col(i);
    const double d_av = axis.dot(dv) + a_cross_v.dot(d.slider_jacr.col(i));
    d.transmission_moment[i] = broken ? d_av : d_av - (av * d_av - v.dot(dv)) / root;
  }
  return broken ? av : av - root;
}

double Clamp(bool limited, double value, double lower, double upper) {
  return limited ? std::clamp(value, lower, upper) : value;
}

// Actuator i's length, force, and its force on the joints (added to qfrc_actuator). A tendon
// actuator's length is gear L, its velocity gear dL/dt, and it pushes gear c_k force on the dof
// of each joint k of the tendon.
void ApplyActuator(const Model& m, Data& d, int i) {
  const double gear = m.actuator_gear[i];
  const ActuatorTransmission transmission = m.actuator_transmission[i];
  if (transmission == ActuatorTransmission::kActivation) {  // acts on its tets' rest shapes only
    d.actuator_length[i] = 0;
    d.actuator_force[i] = 0;
    return;
  }
  const bool joint = transmission == ActuatorTransmission::kJoint;
  const int dof = joint ? m.jnt_dof_adr[m.actuator_jnt[i]] : -1;
  const int tendon = m.actuator_tendon[i];
  double length = 0, velocity = 0;
  if (joint) {
    length = gear * d.qpos[m.jnt_qpos_adr[m.actuator_jnt[i]]];
    velocity = gear * d.qvel[dof];
  } else if (transmission == ActuatorTransmission::kTendon) {
    length = gear * TendonLength(m, d, tendon);
    velocity = gear * TendonVelocity(m, d, tendon);
  } else {
    length = gear * SliderCrankLength(m, d, i);
    for (int k = 0; k < m.nv; ++k) velocity += gear * d.transmission_moment[k] * d.qvel[k];
  }
  const double ctrl = Clamp(m.actuator_ctrl_limited[i], d.ctrl[i], m.actuator_ctrl_lower[i],
                            m.actuator_ctrl_upper[i]);
  const double force = Clamp(m.actuator_force_limited[i],
                             m.actuator_gain[i] * ctrl + m.actuator_bias0[i] +
                                 m.actuator_bias1[i] * length + m.actuator_bias2[i] * velocity,
                             m.actuator_force_lower[i], m.actuator_force_upper[i]);
  d.actuator_length[i] = length;
  d.actuator_force[i] = force;
  if (joint) {
    d.qfrc_actuator[dof] += gear * force;
  } else if (transmission == ActuatorTransmission::kTendon) {
    for (int k = m.tendon_wrap_adr[tendon];
         k < m.tendon_wrap_adr[tendon] + m.tendon_wrap_num[tendon]; ++k) {
      d.qfrc_actuator[m.wrap_dof[k]] += gear * m.wrap_coef[k] * force;
    }
  } else {
    for (int k = 0; k < m.nv; ++k) d.qfrc_actuator[k] += gear * d.transmission_moment[k] * force;
  }
}

}  // namespace

void ActuatorForces(const Model& m, Data& d) {
  std::fill(d.qfrc_actuator.begin(), d.qfrc_actuator.end(), 0.0);
  for (int i = 0; i < m.nu; ++i) ApplyActuator(m, d, i);
}

void ActuatorForcesOfTrees(const Model& m, Data& d, const TreeRange& trees) {
  std::fill(d.qfrc_actuator.begin() + trees.dof_begin, d.qfrc_actuator.begin() + trees.dof_end,
            0.0);
  ForEachActuatorOfTrees(m, trees, [&](int a) { ApplyActuator(m, d, a); });
}

}  // namespace alsim
