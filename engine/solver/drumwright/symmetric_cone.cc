#include "engine/solver/drumwright/symmetric_cone.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace alsim {
namespace {

double Dot(const double* u, const double* v, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += u[i] * v[i];
  return sum;
}

}  // namespace

int ConeDimensions::rows() const {
  int rows = linear;
  for (int m : second_order) rows += m;
  return rows;
}

int ConeDimensions::degree() const { return linear + static_cast<int>(second_order.size()); }

double ConeJNorm(const double* u, int m) {
  const double tail = std::sqrt(Dot(u + 1, u + 1, m - 1));
  const double lower = u[0] - tail;
  if (!(lower > 0)) return 0;
  return std::sqrt(lower * (u[0] + tail));
}

void JordanProduct(const ConeDimensions& cones, const double* u, const double* v, double* out) {
  for (int i = 0; i < cones.linear; ++i) out[i] = u[i] * v[i];
  int offset = cones.linear;
  for (int m : cones.second_order) {
    const double* a = u + offset;
    const double* b = v + offset;
    double* o = out + offset;
    o[0] = Dot(a, b, m);
    for (int i = 1; i < m; ++i) o[i] = a[0] * b[i] + b[0] * a[i];
    offset += m;
  }
}

void JordanDivide(const ConeDimensions& cones, const double* u, const double* v, double* out) {
  for (int i = 0; i < cones.linear; ++i) out[i] = v[i] / u[i];
  int offset = cones.linear;
  for (int m : cones.second_order) {
    const double* a = u + offset;
    const double* b = v + offset;
    double* o = out + offset;
    const double tail = std::sqrt(Dot(a + 1, a + 1, m - 1));
    const double det = (a[0] - tail) * (a[0] + tail);
    const double x0 = (a[0] * b[0] - Dot(a + 1, b + 1, m - 1)) / det;
    for (int i = 1; i < m; ++i) o[i] = (b[i] - x0 * a[i]) / a[0];
    o[0] = x0;
    offset += m;
  }
}

void AddIdentity(const ConeDimensions& cones, double a, double* x) {
  for (int i = 0; i < cones.linear; ++i) x[i] += a;
  int offset = cones.linear;
  for (int m : cones.second_order) {
    x[offset] += a;
    offset += m;
  }
}

double IdentityShift(const ConeDimensions& cones, const double* x) {
  double shift = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < cones.linear; ++i) shift = std::max(shift, -x[i]);
  int offset = cones.linear;
  for (int m : cones.second_order) {
    const double* u = x + offset;
    shift = std::max(shift, std::sqrt(Dot(u + 1, u + 1, m - 1)) - u[0]);
    offset += m;
  }
  return shift;
}

double MaxStep(const ConeDimensions& cones, const double* x, const double* d) {
  double worst = 0;  // max over blocks of -lambda_min(x^-1/2 d x^-1/2), floored at 0
  for (int i = 0; i < cones.linear; ++i) worst = std::max(worst, -d[i] / x[i]);
  int offset = cones.linear;
  for (int m : cones.second_order) {
    const double* u = x + offset;
    const double* w = d + offset;
    const double norm = ConeJNorm(u, m);
    // xbar = u / norm; rho_0 = (xbar_0 d_0 - xbar_1^T d_1) / norm;
    // rho_1 = d_1 / norm - ((rho_0 + d_0 / norm) / (xbar_0 + 1)) xbar_1.
    const double xbar0 = u[0] / norm;
    const double rho0 = (xbar0 * w[0] - Dot(u + 1, w + 1, m - 1) / norm) / norm;
    const double factor = (rho0 + w[0] / norm) / (xbar0 + 1);
    double rho1_squared = 0;
    for (int i = 1; i < m; ++i) {
      const double r = w[i] / norm - factor * u[i] / norm;
      rho1_squared += r * r;
    }
    worst = std::max(worst, std::sqrt(rho1_squared) - rho0);
    offset += m;
  }
  return worst > 0 ? 1 / worst : std::numeric_limits<double>::infinity();
}

}  // namespace alsim
