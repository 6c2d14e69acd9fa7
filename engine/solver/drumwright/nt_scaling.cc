#include "engine/solver/drumwright/nt_scaling.h"

#include <cmath>

namespace alsim {
namespace {

double Dot(const double* u, const double* v, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += u[i] * v[i];
  return sum;
}

// out = scale [w_0, sign w_1^T; sign w_1, I + w_1 w_1^T / (1 + w_0)] u for one cone block:
// sign = +1 gives W / beta, sign = -1 gives beta W^-1.
void ApplyBlock(const double* w, int m, double scale, double sign, const double* u, double* out) {
  const double t = Dot(w + 1, u + 1, m - 1);
  out[0] = scale * (w[0] * u[0] + sign * t);
  const double c = sign * u[0] + t / (1 + w[0]);
  for (int i = 1; i < m; ++i) out[i] = scale * (u[i] + c * w[i]);
}

}  // namespace

void NtScaling::Resize(const ConeDimensions& cones) {
  cones_ = cones;  // the vector's copy keeps its capacity
  const Eigen::Index rows = cones.rows();
  const auto blocks = static_cast<Eigen::Index>(cones.second_order.size());
  arena_.Seat([&](GrowOnlyArena& arena) {
    arena.Place(&orthant_, cones.linear);
    arena.Place(&wbar_, rows);
    arena.Place(&beta_, blocks);
    arena.Place(&lambda_, rows);
  });
}

bool NtScaling::Compute(const double* s, const double* z) {
  for (int i = 0; i < cones_.linear; ++i) {
    if (!(s[i] > 0 && z[i] > 0)) return false;
    orthant_[i] = std::sqrt(s[i] / z[i]);
    lambda_[i] = std::sqrt(s[i] * z[i]);
  }
  int offset = cones_.linear;
  for (size_t k = 0; k < cones_.second_order.size(); ++k) {
    const int m = cones_.second_order[k];
    const double* sk = s + offset;
    const double* zk = z + offset;
    const double a = ConeJNorm(sk, m);
    const double b = ConeJNorm(zk, m);
    if (!(a > 0 && b > 0)) return false;
    const double sz = Dot(sk, zk, m) / (a * b);  // sbar^T zbar >= 1
    const double gamma = std::sqrt((1 + sz) / 2);
    double* w = wbar_.data() + offset;
    w[0] = (sk[0] / a + zk[0] / b) / (2 * gamma);
    for (int i = 1; i < m; ++i) w[i] = (sk[i] / a - zk[i] / b) / (2 * gamma);
    beta_[static_cast<Eigen::Index>(k)] = std::sqrt(a / b);
    double* l = lambda_.data() + offset;
    const double root = std::sqrt(a * b);
    const double s0 = sk[0] / a, z0 = zk[0] / b;
    const double denominator = 2 * gamma + s0 + z0;
    l[0] = root * gamma;
    for (int i = 1; i < m; ++i) {
      l[i] = root * ((gamma + z0) * sk[i] / a + (gamma + s0) * zk[i] / b) / denominator;
    }
    offset += m;
  }
  return true;
}

void NtScaling::Apply(const double* u, double* out) const {
  for (int i = 0; i < cones_.linear; ++i) out[i] = orthant_[i] * u[i];
  int offset = cones_.linear;
  for (size_t k = 0; k < cones_.second_order.size(); ++k) {
    const int m = cones_.second_order[k];
    ApplyBlock(wbar_.data() + offset, m, beta_[static_cast<Eigen::Index>(k)], 1, u + offset,
               out + offset);
    offset += m;
  }
}

void NtScaling::ApplyInverse(const double* u, double* out) const {
  for (int i = 0; i < cones_.linear; ++i) out[i] = u[i] / orthant_[i];
  int offset = cones_.linear;
  for (size_t k = 0; k < cones_.second_order.size(); ++k) {
    const int m = cones_.second_order[k];
    ApplyBlock(wbar_.data() + offset, m, 1 / beta_[static_cast<Eigen::Index>(k)], -1, u + offset,
               out + offset);
    offset += m;
  }
}

}  // namespace alsim
