#include "engine/solver/canal/cone_operators.h"

#include <algorithm>
#include <cmath>

#include "engine/solver/impulse_update.h"

namespace alsim {

Vec3 ProximalConeProjection(const Vec3& x, double mu, Mat3* jacobian) {
  const double s = std::sqrt(x[1] * x[1] + x[2] * x[2]);
  if (s <= mu * x[0]) {  // stick: x in C
    if (jacobian != nullptr) jacobian->setIdentity();
    return x;
  }
  if (mu * s <= -x[0]) {  // open: x in the polar cone
    if (jacobian != nullptr) jacobian->setZero();
    return Vec3::Zero();
  }
  // Slip (s > 0 here: s = 0 would be stick for x_n >= 0 and open for x_n <= 0). The closest point
  // of the boundary ray through x_t's direction, (1, mu x^_t) / sqrt(1 + mu^2) in (n, t).
  const double inverse = 1.0 / (1.0 + mu * mu);
  const double normal = (x[0] + mu * s) * inverse;
  const double tangent_scale = mu * normal / s;
  if (jacobian != nullptr) {
    const double c = x[1] / s, d = x[2] / s;  // x^_t
    const double ratio = mu * x[0] / s;       // in (-mu^2, 1) in slip
    Mat3& J = *jacobian;
    J(0, 0) = inverse;
    J(0, 1) = J(1, 0) = mu * c * inverse;
    J(0, 2) = J(2, 0) = mu * d * inverse;
    // mu^2 I + ratio (I - x^_t x^_t^T)
    J(1, 1) = (mu * mu + ratio * (1 - c * c)) * inverse;
    J(2, 2) = (mu * mu + ratio * (1 - d * d)) * inverse;
    J(1, 2) = J(2, 1) = -ratio * c * d * inverse;
  }
  return Vec3(normal, tangent_scale * x[1], tangent_scale * x[2]);
}

Mat3 StrictConeJacobian(const Vec3& x, double mu) {
  if (x[0] <= 0) return Mat3::Zero();
  const double s = std::sqrt(x[1] * x[1] + x[2] * x[2]);
  if (s <= mu * x[0]) return Mat3::Identity();
  const double c = x[1] / s, d = x[2] / s;
  const double ratio = mu * x[0] / s;
  Mat3 J = Mat3::Zero();
  J(0, 0) = 1;
  J(1, 0) = mu * c;
  J(2, 0) = mu * d;
  J(1, 1) = ratio * (1 - c * c);
  J(2, 2) = ratio * (1 - d * d);
  J(1, 2) = J(2, 1) = -ratio * c * d;
  return J;
}

namespace {

// The soft row's map before clamping, g(x) = slope x - offset, eq. (15) with u = -lambda^l.
struct SoftMap {
  double slope;   // D = b / (b + beta)
  double offset;  // beta k e / (b + beta)
};

SoftMap MakeSoftMap(const Constraint& c, double beta) {
  const double inverse = 1.0 / (c.soft_damping + beta);
  return {c.soft_damping * inverse, beta * c.soft_bias * inverse};
}

}  // namespace

void CanalConstraintImpulse(const Constraint& c, double beta, const double* x, double* lambda,
                            double* jacobian) {
  switch (c.type) {
    case ConstraintType::kContact: {
      Mat3 D;
      const Vec3 y = ProximalConeProjection(Vec3(x[0], x[1], x[2]), c.friction,
                                            jacobian != nullptr ? &D : nullptr);
      for (int r = 0; r < 3; ++r) lambda[r] = y[r];
      if (jacobian != nullptr) {
        for (int r = 0; r < 3; ++r)
          for (int k = 0; k < 3; ++k) jacobian[3 * r + k] = D(r, k);
      }
      return;
    }
    case ConstraintType::kLimit:
      lambda[0] = std::max(x[0], 0.0);
      if (jacobian != nullptr) jacobian[0] = x[0] > 0 ? 1.0 : 0.0;
      return;
    case ConstraintType::kSoft: {
      const SoftMap map = MakeSoftMap(c, beta);
      const double value = map.slope * x[0] - map.offset;
      const bool clamped = value < c.lambda_lower || value > c.lambda_upper;
      lambda[0] = std::min(c.lambda_upper, std::max(c.lambda_lower, value));
      if (jacobian != nullptr) jacobian[0] = clamped ? 0.0 : map.slope;
      return;
    }
    case ConstraintType::kFriction: {
      const bool clamped = x[0] < c.lambda_lower || x[0] > c.lambda_upper;
      lambda[0] = std::min(c.lambda_upper, std::max(c.lambda_lower, x[0]));
      if (jacobian != nullptr) jacobian[0] = clamped ? 0.0 : 1.0;
      return;
    }
    case ConstraintType::kEquality:
      for (int r = 0; r < c.dim; ++r) lambda[r] = x[r];
      if (jacobian != nullptr) {
        for (int r = 0; r < c.dim; ++r)
          for (int k = 0; k < c.dim; ++k) jacobian[c.dim * r + k] = r == k ? 1.0 : 0.0;
      }
      return;
  }
}

void StrictConstraintImpulse(const Constraint& c, double beta, const double* x, double* lambda,
                             double* jacobian) {
  if (c.type != ConstraintType::kContact) {
    CanalConstraintImpulse(c, beta, x, lambda, jacobian);
    return;
  }
  const Vec3 argument(x[0], x[1], x[2]);
  const Vec3 y = StrictConeProjection(argument, c.friction);
  for (int r = 0; r < 3; ++r) lambda[r] = y[r];
  if (jacobian != nullptr) {
    const Mat3 D = StrictConeJacobian(argument, c.friction);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) jacobian[3 * r + k] = D(r, k);
  }
}

double CanalConstraintPotential(const Constraint& c, double beta, const double* x) {
  switch (c.type) {
    case ConstraintType::kContact:
      return 0.5 * ProximalConeProjection(Vec3(x[0], x[1], x[2]), c.friction).squaredNorm();
    case ConstraintType::kLimit: {
      const double positive = std::max(x[0], 0.0);
      return 0.5 * positive * positive;
    }
    case ConstraintType::kSoft: {
      const SoftMap map = MakeSoftMap(c, beta);
      if (map.slope <= 0) {  // b = 0: a constant impulse, a linear potential
        return std::min(c.lambda_upper, std::max(c.lambda_lower, -map.offset)) * x[0];
      }
      const double value = map.slope * x[0] - map.offset;
      // Inside the range g^2 / (2 D), whose derivative is g; outside, the tangent line at the
      // range's end, so that the potential is C^1 and its derivative is the clamped map.
      if (value > c.lambda_upper) {
        const double end = (c.lambda_upper + map.offset) / map.slope;
        return 0.5 * c.lambda_upper * c.lambda_upper / map.slope + c.lambda_upper * (x[0] - end);
      }
      if (value < c.lambda_lower) {
        const double end = (c.lambda_lower + map.offset) / map.slope;
        return 0.5 * c.lambda_lower * c.lambda_lower / map.slope + c.lambda_lower * (x[0] - end);
      }
      return 0.5 * value * value / map.slope;
    }
    case ConstraintType::kFriction: {
      // The box K = [lower, upper] is convex but not a cone, so 1/2 ||Pi_K(x)||^2 is not the
      // potential; 1/2 x^2 - 1/2 dist(x, K)^2 is, for any closed convex K: its gradient is
      // x - (x - Pi_K(x)) = Pi_K(x). Quadratic inside the box, linear (slope at the bound) outside.
      const double outside = x[0] - std::min(c.lambda_upper, std::max(c.lambda_lower, x[0]));
      return 0.5 * x[0] * x[0] - 0.5 * outside * outside;
    }
    case ConstraintType::kEquality: {
      double sum = 0;
      for (int r = 0; r < c.dim; ++r) sum += x[r] * x[r];
      return 0.5 * sum;
    }
  }
  return 0;
}

}  // namespace alsim
