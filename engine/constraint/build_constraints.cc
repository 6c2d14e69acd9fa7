#include "engine/constraint/build_constraints.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/constraint/soft_rows.h"
#include "engine/math/spatial.h"

namespace alsim {
namespace {

constexpr double kMinFriction = 1e-5;  // MuJoCo's mjMINMU

// Gap-dependent bias of eqs. (3) and (5) for row `row`: a gap may close within the step (phi / h);
// a penetration is removed at the rate `erp` per step, at most at `cap` (a correction;
// ConstraintOptions, "Recovery").
void SetPositionBias(ConstraintSet& set, int row, double phi, double h, double erp, double cap,
                     double kept) {
  if (phi >= 0) {
    set.bias[row] = phi / h;
    return;
  }
  const double correction = std::max(erp * phi / h, -cap);
  set.bias[row] = correction;
  set.correction[row] = correction;
  if (correction < -kept) {
    set.split_row[row] = true;
    set.split = true;
  }
}

// An equality row's bias: its error removed at the rate erp per step, at most at `cap`.
void SetEqualityBias(ConstraintSet& set, int row, double error, double h, double erp, double cap,
                     double kept) {
  const double correction = std::clamp(erp * error / h, -cap, cap);
  set.bias[row] = correction;
  set.correction[row] = correction;
  if (std::abs(correction) > kept) {
    set.split_row[row] = true;
    set.split = true;
  }
}

// Appends a constraint with `dim` rows and zero impulse, bias and blocks to be filled in. (Built
// in place and grown by push_back: a copied Constraint and a resize call per row array cost as
// much as the rest of a joint limit's assembly.)
Constraint& AddConstraint(ConstraintSet& set, ConstraintType type, int dim,
                          const ConstraintKey& key) {
  Constraint& c = set.constraints.emplace_back();
  c.type = type;
  c.dim = dim;
  c.row_adr = set.num_rows;
  c.block_adr = static_cast<int>(set.blocks.size());
  c.key = key;
  set.num_rows += dim;
  for (int r = 0; r < dim; ++r) {
    set.bias.push_back(0.0);
    set.lambda.push_back(0.0);
    set.correction.push_back(0.0);
    set.regularization.push_back(0.0);
    set.split_row.push_back(false);
  }
  return c;
}

// Appends a slack block to the last constraint; the caller fills in where it acts.
ConstraintBlock& AddBlock(ConstraintSet& set) {
  Constraint& c = set.constraints.back();
  ConstraintBlock& block = set.blocks.emplace_back();
  block.constraint = static_cast<int>(set.constraints.size()) - 1;
  ++c.block_num;
  return block;
}

// J_r v_k of row r of constraint c at the current velocities: its blocks' maps applied to their
// bodies' spatial velocities, or their coefficients to their dofs' velocities.
double RowVelocity(const Data& d, const ConstraintSet& set, const Constraint& c, int r) {
  double velocity = 0;
  for (int k = c.block_adr; k < c.block_adr + c.block_num; ++k) {
    const ConstraintBlock& block = set.blocks[k];
    velocity += block.body >= 0 ? BlockRowDot(block, r, d.cvel[block.body])
                                : block.dof_coefficient * d.qvel[block.dof];
  }
  return velocity;
}

// Row `row` as MuJoCo's soft row with regularization R and bias e (soft_rows.h).
void SetSoftRow(ConstraintSet& set, int row, double regularization, double bias) {
  set.regularization[row] = regularization;
  set.bias[row] = bias;
}

// A single soft row of constraint c (a limit, a frictionloss row): R from the impedance at `pos`
// and the element's inverse weight, e from its reference (friction rows: no stiffness).
void SetSingleSoftRow(const Data& d, ConstraintSet& set, const Constraint& c,
                      const SoftRowParameters& p, double pos, double margin, double invweight,
                      bool friction, double h) {
  const double imp = Impedance(p.solimp, pos, margin);
  SoftRowReference reference = Reference(p);
  if (friction) reference.stiffness = 0;
  SetSoftRow(set, c.row_adr, Regularization(imp, invweight),
             SoftRowBias(reference, imp, pos, margin, RowVelocity(d, set, c, 0), h));
}

void AddJointBlock(const Model& m, ConstraintSet& set, int dof, double coefficient) {
  ConstraintBlock& block = AddBlock(set);
  block.subsystem = m.body_subsystem[m.dof_body[dof]];
  block.dof = dof;
  block.dof_coefficient = coefficient;
}

// One joint-space block per joint of fixed tendon t on the last constraint, J = scale c_k e_dof_k.
void AddTendonBlocks(const Model& m, ConstraintSet& set, int t, double scale) {
  for (int k = m.tendon_wrap_adr[t]; k < m.tendon_wrap_adr[t] + m.tendon_wrap_num[t]; ++k) {
    AddJointBlock(m, set, m.wrap_dof[k], scale * m.wrap_coef[k]);
  }
}

// The body-space block of a contact on `body`: sign * R^T [-[r]x  I] with r the contact point
// from the body's reference point, i.e. the frame components of the velocity of the body-fixed
// point at the contact (eq. 44 in alsim's (angular, linear) order).
void FillContactMap(const Model& m, const Data& d, double sign, const Contact& contact,
                    ConstraintBlock& block) {
  SetPointBlockMap(contact.frame.transpose(), contact.pos - SpatialReferencePoint(m, d, block.body),
                   sign, block);
}

// The Delassus trace that constraint c inherits from last step's entry k of the warm start, one
// step older (Constraint::delassus_trace).
void InheritDelassusTrace(const WarmStart& warm, int k, Constraint& c) {
  constexpr std::int32_t kOldest = 1 << 30;  // a trace no solver renews ages no further
  c.delassus_trace = warm.delassus_trace[k];
  c.delassus_age = std::min(warm.delassus_age[k], kOldest - 1) + 1;
}

// Warm start of contact constraint c: the impulse of the nearest of last step's contacts between
// the same geoms (within `radius`), rotated into the new contact frame, and its Delassus trace.
// False when there is none. A condim 4/6 contact's torsional and rolling rows take the angular
// impulse the same way (zero when last step's contact had fewer rows).
bool WarmStartContact(const Data& d, Constraint& c, double radius, double* lambda) {
  const WarmStart& warm = d.warm_start;
  const Contact& contact = d.contact[c.contact];
  double best = radius * radius;
  int found = -1;
  for (auto it = std::lower_bound(warm.key.begin(), warm.key.end(), c.key, ConstraintKeyLess);
       it != warm.key.end() && *it == c.key; ++it) {
    const int k = static_cast<int>(it - warm.key.begin());
    const double distance2 = (warm.position[k] - contact.pos).squaredNorm();
    if (distance2 < best) {
      best = distance2;
      found = k;
    }
  }
  if (found < 0) return false;
  InheritDelassusTrace(warm, found, c);
  const Vec3 local = contact.frame.transpose() * warm.impulse[found];
  lambda[0] = std::max(0.0, local[0]);
  lambda[1] = local[1];
  lambda[2] = local[2];
  if (c.dim > 3) {
    const Vec3 angular = contact.frame.transpose() * warm.angular_impulse[found];
    for (int r = 3; r < c.dim; ++r) lambda[r] = angular[r - 3];
  }
  return true;
}

// A contact's rows in MuJoCo's model (mj_diagApprox, mj_makeImpedance): the impedance at its
// distance from margin - gap, R from the bodies' inverse weights, then the cone's adjustments.
// Pyramidal: every edge shares R_py = 2 mu_r^2 R_0 with R_0 the first edge pair's R and mu_r =
// mu sqrt(1 / impratio) the regularized cone's friction; elliptic: the normal row's R from the
// translational weight, R_1 = R_0 / impratio and R_j mu_j^2 = R_1 mu^2. A frictionless contact
// (condim 1) has its normal row only.
void SetMujocoContactRows(const Model& m, const Data& d, ConstraintSet& set, const Constraint& c,
                          double h) {
  const Contact& contact = d.contact[c.contact];
  const int body1 = m.geom_body[contact.geom1], body2 = m.geom_body[contact.geom2];
  const SoftRowParameters mixed =
      ContactSoftRowParameters(m, contact.geom1, contact.geom2, contact.explicit_pair);
  const SoftRowParameters p = CheckedSoftRowParameters(mixed.solref, mixed.solimp, h, m.refsafe);
  const double margin =
      ContactIncludeMargin(m, contact.geom1, contact.geom2, contact.explicit_pair);
  const double imp = Impedance(p.solimp, contact.dist, margin);
  const SoftRowReference reference = Reference(p);
  const double tran = m.body_invweight0[body1][0] + m.body_invweight0[body2][0];
  const double mu[6] = {
      0, c.friction, c.friction, c.friction_torsion, c.friction_rolling, c.friction_rolling};
  const int row = c.row_adr;
  set.bias[row] = SoftRowBias(reference, imp, contact.dist, margin, RowVelocity(d, set, c, 0), h);
  for (int r = 1; r < c.dim; ++r) {
    set.bias[row + r] = -(1 - h * reference.damping) * RowVelocity(d, set, c, r);
  }
  if (!(c.friction > 0)) {
    set.regularization[row] = Regularization(imp, tran);
    return;
  }
  const double impratio = std::max(1e-15, m.impratio);
  if (m.cone == FrictionCone::kPyramidal) {
    const double r0 = Regularization(imp, tran + mu[1] * mu[1] * tran);
    const double mu_regularized2 = mu[1] * mu[1] / impratio;
    for (int r = 0; r < c.dim; ++r) set.regularization[row + r] = 2 * mu_regularized2 * r0;
    return;
  }
  set.regularization[row] = Regularization(imp, tran);
  const double r1 = set.regularization[row] / impratio;
  for (int r = 1; r < c.dim; ++r) {
    const double mu_r = std::max(kMinFriction, mu[r]);
    set.regularization[row + r] = r1 * mu[1] * mu[1] / (mu_r * mu_r);
  }
}

// Contact constraints in two passes: the layout (which contacts take part, and where their rows
// and blocks go), so that the arrays are sized once, then each contact's bias, Jacobian
// blocks and warm start. Blocks: body2's (+1) before body1's (-1). (Filling the contacts in
// parallel tasks gained nothing on our scenes: docs/benchmarks-history.md.)
void AddContacts(const Model& m, const Data& d, ConstraintSet& set, double h,
                 const ConstraintOptions& o, ConstraintModel model) {
  const int first = static_cast<int>(set.constraints.size());
  for (int k = 0; k < static_cast<int>(d.contact.size()); ++k) {
    const Contact& contact = d.contact[k];
    const int body1 = m.geom_body[contact.geom1], body2 = m.geom_body[contact.geom2];
    if (m.body_subsystem[body1] < 0 && m.body_subsystem[body2] < 0) continue;
    if (model == ConstraintModel::kMujoco &&
        !(contact.dist <
          ContactIncludeMargin(m, contact.geom1, contact.geom2, contact.explicit_pair)))
      continue;  // MuJoCo's exclusion
    const int index = static_cast<int>(set.constraints.size());
    Constraint& c = set.constraints.emplace_back();
    c.type = ConstraintType::kContact;
    c.dim = contact.dim;  // 3, or 4 / 6 with torsional / rolling rows (condim 4, 6)
    c.row_adr = set.num_rows;
    c.block_adr = static_cast<int>(set.blocks.size());
    c.key = {kKindContact, contact.geom1, contact.geom2};
    c.contact = k;
    c.friction = contact.friction;
    c.friction_torsion = contact.friction_torsion;
    c.friction_rolling = contact.friction_rolling;
    for (const int body : {body2, body1}) {
      if (m.body_subsystem[body] < 0) continue;  // the world or a static body: no slack block
      ConstraintBlock& block = set.blocks.emplace_back();
      block.constraint = index;
      block.subsystem = m.body_subsystem[body];
      block.body = body;
      ++c.block_num;
    }
    set.num_rows += c.dim;
    ++set.num_contacts;
  }
  set.bias.resize(set.num_rows, 0.0);
  set.lambda.resize(set.num_rows, 0.0);
  set.correction.resize(set.num_rows, 0.0);
  set.regularization.resize(set.num_rows, 0.0);
  set.split_row.resize(set.num_rows, false);
  for (int i = first; i < static_cast<int>(set.constraints.size()); ++i) {
    Constraint& c = set.constraints[i];
    const Contact& contact = d.contact[c.contact];
    if (model == ConstraintModel::kHard) {
      SetPositionBias(set, c.row_adr, contact.dist, h, o.error_reduction, o.max_correction_speed,
                      o.kept_correction_speed);
    } else if (model == ConstraintModel::kSap) {
      set.bias[c.row_adr] = contact.dist;  // phi0 (the SAP solver makes it -vhat_n)
    }
    for (int k = 0; k < c.block_num; ++k) {
      ConstraintBlock& block = set.blocks[c.block_adr + k];
      const bool on_body2 = k == 0 && m.body_subsystem[m.geom_body[contact.geom2]] >= 0;
      FillContactMap(m, d, on_body2 ? +1.0 : -1.0, contact, block);
    }
    if (model == ConstraintModel::kMujoco) SetMujocoContactRows(m, d, set, c, h);
    if (WarmStartContact(d, c, o.warm_start_radius, set.lambda.data() + c.row_adr)) {
      ++set.num_warm_started_contacts;
    }
  }
}

// A body-space block of world-axis equality rows on `body` with sign +1 (body1) or -1 (body2):
// translational rows read the velocity of the body-fixed point `point`, sign [-[r]x I] with r
// from the body's reference point; rotational rows read omega, sign [I 0].
void AddEqualityBlock(const Model& m, const Data& d, ConstraintSet& set, int body, double sign,
                      bool rotation, const Vec3& point) {
  const int subsystem = m.body_subsystem[body];
  if (subsystem < 0) return;  // the world or a static body
  ConstraintBlock& block = AddBlock(set);
  block.subsystem = subsystem;
  block.body = body;
  if (rotation) {
    block.map.leftCols<3>() = sign * Mat3::Identity();
  } else {
    SetPointBlockMap(Mat3::Identity(), point - SpatialReferencePoint(m, d, body), sign, block);
  }
}

// An equality's rows in MuJoCo's model (mj_instantiateEquality, mj_diagApprox,
// mj_makeImpedance). A weld's rotation error is MuJoCo's: the vector part of q = q2^* q1 relquat
// (about half the rotation angle), and its rows are 0.5 torquescale Im(q2^* (0, w1 - w2) q1
// relquat), which replace alsim's world-axis rows. The impedance is taken at the norm of the
// whole error (a weld's rotation part scaled by torquescale), R from the bodies' translational
// inverse weights, each row's reference at its own error.
void SetMujocoEqualityRows(const Model& m, const Data& d, ConstraintSet& set, const Constraint& c,
                           const EqualityError& error, double h) {
  const int eq = c.key.a;
  const bool rotation = c.key.b == 1;
  const bool weld = m.eq_type[eq] == EqualityType::kWeld;
  const SoftRowParameters p =
      CheckedSoftRowParameters(m.eq_solref[eq], m.eq_solimp[eq], h, m.refsafe);
  Vec3 rotation_error = Vec3::Zero();
  if (weld) {
    const int body1 = m.eq_body1[eq], body2 = m.eq_body2[eq];
    const Quat target = QuatMultiply(d.xquat[body1], m.eq_relquat[eq]);
    const Quat conjugate2 = QuatConjugate(d.xquat[body2]);
    const Quat q = QuatMultiply(conjugate2, target);
    rotation_error = q.tail<3>();
    if (rotation) {
      Mat3 rows;  // column k: the rows applied to w1 - w2 = e_k
      for (int k = 0; k < 3; ++k) {
        const Quat axis(0, k == 0, k == 1, k == 2);
        const Quat product = QuatMultiply(QuatMultiply(conjugate2, axis), target);
        rows.col(k) = 0.5 * m.eq_torquescale[eq] * product.tail<3>();
      }
      for (int k = c.block_adr; k < c.block_adr + c.block_num; ++k) {
        ConstraintBlock& block = set.blocks[k];
        block.map.leftCols<3>() = (block.body == body1 ? 1.0 : -1.0) * rows;
      }
    }
  }
  const double distance =
      weld ? std::sqrt(error.position.squaredNorm() +
                       m.eq_torquescale[eq] * m.eq_torquescale[eq] * rotation_error.squaredNorm())
           : error.position.norm();
  const double imp = Impedance(p.solimp, distance, 0);
  const SoftRowReference reference = Reference(p);
  // Translational weights for every row: MuJoCo 2.2.2's mj_diagApprox resets its weld row counter
  // on every row, so a weld's rotation rows take the translational weights too.
  const double invweight =
      m.body_invweight0[m.eq_body1[eq]][0] + m.body_invweight0[m.eq_body2[eq]][0];
  const Vec3& value = rotation ? rotation_error : error.position;
  for (int r = 0; r < 3; ++r) {
    SetSoftRow(set, c.row_adr + r, Regularization(imp, invweight),
               SoftRowBias(reference, imp, value[r], 0, RowVelocity(d, set, c, r), h));
  }
}

// Connect (3 position rows) and weld (3 position and 3 rotation rows) as hard equalities, eq. (3)
// with J v_hat + e = 0 and e = erp * error / h: like a penetration, an error is removed at the
// rate erp per step rather than at once, which would kick the bodies.
void AddEqualities(const Model& m, const Data& d, ConstraintSet& set, double h,
                   const ConstraintOptions& o, ConstraintModel model) {
  for (int eq = 0; eq < m.neq; ++eq) {
    const int body1 = m.eq_body1[eq], body2 = m.eq_body2[eq];
    if (!m.eq_active[eq] || body1 == body2) continue;
    if (m.body_subsystem[body1] < 0 && m.body_subsystem[body2] < 0) continue;
    const EqualityError error = EqualityErrors(m, d, eq);
    const bool weld = m.eq_type[eq] == EqualityType::kWeld;
    for (int part = 0; part < (weld ? 2 : 1); ++part) {
      const bool rotation = part == 1;
      const Vec3& value = rotation ? error.rotation : error.position;
      const Constraint& c =
          AddConstraint(set, ConstraintType::kEquality, 3, {kKindEquality, eq, part});
      const double cap = rotation ? o.max_correction_angular_speed : o.max_correction_speed;
      const double kept = rotation ? o.kept_correction_angular_speed : o.kept_correction_speed;
      for (int r = 0; r < 3; ++r) {
        if (model == ConstraintModel::kHard) {
          SetEqualityBias(set, c.row_adr + r, value[r], h, o.error_reduction, cap, kept);
        } else if (model == ConstraintModel::kSap) {
          set.bias[c.row_adr + r] = value[r];
        }
      }
      AddEqualityBlock(m, d, set, body1, +1.0, rotation, error.point1);
      AddEqualityBlock(m, d, set, body2, -1.0, rotation, error.point2);
      if (model == ConstraintModel::kMujoco) {
        SetMujocoEqualityRows(m, d, set, set.constraints.back(), error, h);
      }
    }
  }
}

void AddLimit(const Model& m, const Data& d, ConstraintSet& set, int joint, int side, double phi,
              double sign, double h, const ConstraintOptions& o, ConstraintModel model) {
  AddConstraint(set, ConstraintType::kLimit, 1, {kKindLimit, joint, side});
  AddJointBlock(m, set, m.jnt_dof_adr[joint], sign);
  if (model == ConstraintModel::kSap) {
    set.bias[set.num_rows - 1] = phi;
    return;
  }
  if (model == ConstraintModel::kMujoco) {
    const SoftRowParameters p =
        CheckedSoftRowParameters(m.jnt_solref[joint], m.jnt_solimp[joint], h, m.refsafe);
    SetSingleSoftRow(d, set, set.constraints.back(), p, phi, m.jnt_margin[joint],
                     m.dof_invweight0[m.jnt_dof_adr[joint]], false, h);
    return;
  }
  const bool hinge = m.jnt_type[joint] == JointType::kHinge;
  SetPositionBias(set, set.num_rows - 1, phi, h, o.error_reduction,
                  hinge ? o.max_correction_angular_speed : o.max_correction_speed,
                  hinge ? o.kept_correction_angular_speed : o.kept_correction_speed);
}

// Hinge and slide limits, eq. (3): lower q - lower >= 0 with J = e_dof, upper upper - q >= 0 with
// J = -e_dof; a row exists only near a bound.
void AddJointLimits(const Model& m, const Data& d, ConstraintSet& set, const ConstraintOptions& o,
                    double h, ConstraintModel model) {
  for (int j = 0; j < m.njnt; ++j) {
    if (!m.jnt_limited[j]) continue;
    if (m.jnt_type[j] != JointType::kHinge && m.jnt_type[j] != JointType::kSlide) continue;
    if (m.body_subsystem[m.jnt_body[j]] < 0) continue;
    const double q = d.qpos[m.jnt_qpos_adr[j]];
    const double v = d.qvel[m.jnt_dof_adr[j]];
    const double lower_gap = q - m.jnt_range_lower[j];
    const double upper_gap = m.jnt_range_upper[j] - q;
    // MuJoCo's model: a row below the joint's margin, as MuJoCo; the others look ahead.
    const bool mujoco = model == ConstraintModel::kMujoco;
    const bool lower =
        mujoco ? lower_gap < m.jnt_margin[j] : lower_gap + h * std::min(v, 0.0) < o.limit_margin;
    const bool upper =
        mujoco ? upper_gap < m.jnt_margin[j] : upper_gap - h * std::max(v, 0.0) < o.limit_margin;
    if (lower) AddLimit(m, d, set, j, 0, lower_gap, +1.0, h, o, model);
    if (upper) AddLimit(m, d, set, j, 1, upper_gap, -1.0, h, o, model);
  }
}

// A servo's force on its actuator length l = gear q is f = c0 - K l - D dl/dt with c0 = gain ctrl
// + bias0, K = -bias1, D = -bias2. Its impulse over the step with l at the end of the step,
// l + h J v_hat, is lambda = h (c0 - K l) - (h^2 K + h D) J v_hat: eq. (4) with k e = h (K l - c0)
// and b = h^2 K + h D (the digest's k = h K, b = h^2 K + h D), J = gear e_dof. On a fixed tendon
// l = gear L and J = gear c, a block per joint of the tendon.
void AddServos(const Model& m, const Data& d, ConstraintSet& set, const ConstraintOptions& o,
               double h) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (int a = 0; a < m.nu; ++a) {
    if (!IsImplicitServo(m, a, o)) continue;
    const int joint = m.actuator_jnt[a];
    const int tendon = m.actuator_tendon[a];
    if (joint >= 0 && m.body_subsystem[m.jnt_body[joint]] < 0) continue;
    const double stiffness = -m.actuator_bias1[a], damping = -m.actuator_bias2[a];
    double ctrl = d.ctrl[a];
    if (m.actuator_ctrl_limited[a]) {
      ctrl = std::clamp(ctrl, m.actuator_ctrl_lower[a], m.actuator_ctrl_upper[a]);
    }
    const double c0 = m.actuator_gain[a] * ctrl + m.actuator_bias0[a];
    Constraint& c = AddConstraint(set, ConstraintType::kSoft, 1, {kKindSoft, a, 0});
    c.soft_bias = h * (stiffness * d.actuator_length[a] - c0);
    c.soft_damping = h * h * stiffness + h * damping;
    c.lambda_lower = m.actuator_force_limited[a] ? h * m.actuator_force_lower[a] : -kInf;
    c.lambda_upper = m.actuator_force_limited[a] ? h * m.actuator_force_upper[a] : kInf;
    if (tendon >= 0) {
      AddTendonBlocks(m, set, tendon, m.actuator_gear[a]);
    } else {
      AddJointBlock(m, set, m.jnt_dof_adr[joint], m.actuator_gear[a]);
    }
  }
}

// Fixed tendon limits, eq. (3) as for the joints with the tendon's length L = sum c_k q_k: lower
// L - lower >= 0 with J = +c, upper upper - L >= 0 with J = -c, one joint-space block per joint
// of the tendon (the blocks of one row may lie on several trees, which the row joins into one
// island). A row exists only near a bound, by the joints' rule (ConstraintOptions::limit_margin).
// MuJoCo's tendon solref/solimp softness is not used, as for the joints. The correction of a
// violated tendon is capped as a hinge limit's (rad/s) when every joint of the tendon is a hinge,
// so that L is an angle, else as a slide's (m/s).
void AddTendonLimits(const Model& m, const Data& d, ConstraintSet& set, const ConstraintOptions& o,
                     double h, ConstraintModel model) {
  for (int t = 0; t < m.ntendon; ++t) {
    if (!m.tendon_limited[t] || m.tendon_wrap_num[t] == 0) continue;
    bool angle = true;
    for (int k = m.tendon_wrap_adr[t]; k < m.tendon_wrap_adr[t] + m.tendon_wrap_num[t]; ++k) {
      angle = angle && m.jnt_type[m.wrap_jnt[k]] == JointType::kHinge;
    }
    const double length = d.ten_length[t];
    const double v = d.ten_velocity[t];
    const double lower_gap = length - m.tendon_range_lower[t];
    const double upper_gap = m.tendon_range_upper[t] - length;
    for (int side = 0; side < 2; ++side) {
      const double gap = side == 0 ? lower_gap : upper_gap;
      const double closing = side == 0 ? std::min(v, 0.0) : -std::max(v, 0.0);
      const bool mujoco = model == ConstraintModel::kMujoco;
      if (mujoco ? gap >= m.tendon_margin[t] : gap + h * closing >= o.limit_margin) continue;
      AddConstraint(set, ConstraintType::kLimit, 1, {kKindTendonLimit, t, side});
      AddTendonBlocks(m, set, t, side == 0 ? 1.0 : -1.0);
      if (mujoco) {
        const SoftRowParameters p =
            CheckedSoftRowParameters(m.tendon_solref_lim[t], m.tendon_solimp_lim[t], h, m.refsafe);
        SetSingleSoftRow(d, set, set.constraints.back(), p, gap, m.tendon_margin[t],
                         m.tendon_invweight0[t], false, h);
        continue;
      }
      if (model == ConstraintModel::kSap) {
        set.bias[set.num_rows - 1] = gap;
        continue;
      }
      SetPositionBias(set, set.num_rows - 1, gap, h, o.error_reduction,
                      angle ? o.max_correction_angular_speed : o.max_correction_speed,
                      angle ? o.kept_correction_angular_speed : o.kept_correction_speed);
    }
  }
}

// Dry joint friction (MJCF frictionloss f > 0 on a dof, as MuJoCo's friction rows): one row with
// J = e_dof and no bias, whose impulse stays in [-f h, f h] and stops the dof's motion over the
// step if it can (ConstraintType::kFriction). Every dof of every joint type, as MuJoCo.
void AddFrictionLoss(const Model& m, const Data& d, ConstraintSet& set, double h,
                     ConstraintModel model) {
  for (int dof = 0; dof < m.nv; ++dof) {
    const double friction = m.dof_frictionloss[dof];
    if (!(friction > 0)) continue;
    if (m.body_subsystem[m.dof_body[dof]] < 0) continue;
    Constraint& c = AddConstraint(set, ConstraintType::kFriction, 1, {kKindFriction, dof, 0});
    c.lambda_lower = -h * friction;
    c.lambda_upper = h * friction;
    AddJointBlock(m, set, dof, 1.0);
    if (model == ConstraintModel::kMujoco) {
      const SoftRowParameters p =
          CheckedSoftRowParameters(m.dof_solref[dof], m.dof_solimp[dof], h, m.refsafe);
      SetSingleSoftRow(d, set, set.constraints.back(), p, 0, 0, m.dof_invweight0[dof], true, h);
    }
  }
}

// Warm start of the other constraints (contacts have theirs from AddContacts): each takes the
// impulse and the Delassus trace of last step's constraint with the same key.
// Elastic foundation elements (Model::foundation_site), eq. (3) as a contact's normal row: J v the
// normal velocity of the element's body-fixed point, phi its height above the plane; a row once the
// point is within contact_slop of the plane or would reach it within the step (the contacts'
// rule), its bias as a contact's in each model (MuJoCo's: the plane's solref and solimp).
void AddFoundations(const Model& m, const Data& d, ConstraintSet& set, const ConstraintOptions& o,
                    double h, ConstraintModel model) {
  for (size_t e = 0; e < m.foundation_site.size(); ++e) {
    const int site = m.foundation_site[e], plane = m.foundation_geom[e];
    const int body = m.site_body[site];
    const int subsystem = m.body_subsystem[body];
    if (subsystem < 0) continue;
    const Vec3 point = d.xpos[body] + d.xmat[body] * m.site_pos[site];
    const Vec3 normal = d.geom_xmat[plane].col(2);
    const double phi = normal.dot(point - d.geom_xpos[plane]);
    const Vec3 r = point - SpatialReferencePoint(m, d, body);
    Vec6 row;
    row << r.cross(normal), normal;
    if (phi + h * std::min(row.dot(d.cvel[body]), 0.0) >= o.contact_slop) continue;
    const Constraint& c =
        AddConstraint(set, ConstraintType::kLimit, 1, {kKindFoundation, static_cast<int>(e), 0});
    ConstraintBlock& block = AddBlock(set);
    block.subsystem = subsystem;
    block.body = body;
    block.map.row(0) = row.transpose();
    if (model == ConstraintModel::kSap) {
      set.bias[c.row_adr] = phi;
    } else if (model == ConstraintModel::kMujoco) {
      const SoftRowParameters p =
          CheckedSoftRowParameters(m.geom_solref[plane], m.geom_solimp[plane], h, m.refsafe);
      SetSingleSoftRow(d, set, c, p, phi, 0.0, m.body_invweight0[body][0], false, h);
    } else {
      SetPositionBias(set, c.row_adr, phi, h, o.error_reduction, o.max_correction_speed,
                      o.kept_correction_speed);
    }
  }
}

void WarmStartOtherImpulses(const Data& d, ConstraintSet& set, int first) {
  const WarmStart& warm = d.warm_start;
  for (int i = first; i < static_cast<int>(set.constraints.size()); ++i) {
    Constraint& c = set.constraints[i];
    const auto found = std::lower_bound(warm.key.begin(), warm.key.end(), c.key, ConstraintKeyLess);
    if (found == warm.key.end() || !(*found == c.key)) continue;
    InheritDelassusTrace(warm, static_cast<int>(found - warm.key.begin()), c);
    const Vec3& impulse = warm.impulse[found - warm.key.begin()];
    for (int r = 0; r < c.dim; ++r) set.lambda[c.row_adr + r] = impulse[r];
  }
}

}  // namespace

EqualityError EqualityErrors(const Model& m, const Data& d, int eq) {
  const int body1 = m.eq_body1[eq], body2 = m.eq_body2[eq];
  EqualityError error;
  if (m.eq_type[eq] == EqualityType::kConnect) {
    error.point1 = d.xpos[body1] + d.xmat[body1] * m.eq_anchor[eq];
    error.point2 = d.xpos[body2] + d.xmat[body2] * m.eq_anchor2[eq];
  } else {
    error.point1 = d.xpos[body1] + d.xmat[body1] * m.eq_relpos[eq];
    error.point2 = d.xpos[body2] + d.xmat[body2] * m.eq_anchor[eq];
    const Quat target = QuatMultiply(d.xquat[body1], m.eq_relquat[eq]);
    error.rotation = QuatToRotationVector(QuatMultiply(target, QuatConjugate(d.xquat[body2])));
  }
  error.position = error.point1 - error.point2;
  return error;
}

bool IsImplicitServo(const Model& m, int actuator, const ConstraintOptions& options) {
  return options.implicit_servos && m.constraints_enabled && m.actuator_servo_shaped[actuator];
}

void SaveWarmStart(Data& d) {
  const ConstraintSet& set = d.constraints;
  WarmStart& warm = d.warm_start;
  const size_t n = set.constraints.size();
  warm.key.resize(n);
  warm.position.resize(n);
  warm.impulse.resize(n);
  warm.angular_impulse.resize(n);
  warm.delassus_trace.resize(n);
  warm.delassus_age.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Constraint& c = set.constraints[i];
    const double* lambda = set.lambda.data() + c.row_adr;
    warm.key[i] = c.key;
    warm.delassus_trace[i] = c.delassus_trace;
    warm.delassus_age[i] = c.delassus_age;
    if (c.type == ConstraintType::kContact) {
      const Contact& contact = d.contact[c.contact];
      warm.position[i] = contact.pos;
      warm.impulse[i] = contact.frame * Vec3(lambda[0], lambda[1], lambda[2]);
      Vec3 angular = Vec3::Zero();
      for (int r = 3; r < c.dim; ++r) angular[r - 3] = lambda[r];
      warm.angular_impulse[i] = c.dim > 3 ? Vec3(contact.frame * angular) : Vec3::Zero();
    } else {
      warm.angular_impulse[i].setZero();
      warm.position[i].setZero();
      warm.impulse[i].setZero();
      for (int r = 0; r < c.dim; ++r) warm.impulse[i][r] = lambda[r];
    }
  }
}

Mat3 MujocoContactFrame(const Vec3& normal) {
  Vec3 tangent1 = std::abs(normal.y()) < 0.5 ? Vec3::UnitY() : Vec3::UnitZ();
  tangent1 = (tangent1 - normal * normal.dot(tangent1)).normalized();
  Mat3 frame;
  frame << normal, tangent1, normal.cross(tangent1);
  return frame;
}

void BuildConstraints(const Model& m, Data& d, const ConstraintOptions& options, double h,
                      ConstraintModel model) {
  ConstraintSet& set = d.constraints;
  set.Clear();
  const bool mujoco = model == ConstraintModel::kMujoco;
  // MuJoCo's pyramid edges lie along its own tangents: the contacts take its frames.
  if (mujoco) {
    for (Contact& contact : d.contact) contact.frame = MujocoContactFrame(contact.normal);
  }
  AddContacts(m, d, set, h, options, model);
  const int first_other = static_cast<int>(set.constraints.size());
  if (m.equalities_enabled) AddEqualities(m, d, set, h, options, model);
  if (m.limits_enabled) AddJointLimits(m, d, set, options, h, model);
  AddServos(m, d, set, options, h);
  if (m.frictionloss_enabled) AddFrictionLoss(m, d, set, h, model);
  if (m.limits_enabled) AddTendonLimits(m, d, set, options, h, model);
  AddFoundations(m, d, set, options, h, model);
  WarmStartOtherImpulses(d, set, first_other);
}

}  // namespace alsim
