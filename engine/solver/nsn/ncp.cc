#include "engine/solver/nsn/ncp.h"

#include <cmath>

namespace alsim {

NcpEvaluation FischerBurmeisterNcp(double a, double b, double r) {
  const double rb = r * b;
  NcpEvaluation out;
  if (a == 0 && rb == 0) {  // the kink: (26)-(27)
    out.dphi_db = r;
    return out;
  }
  // |(a, r b)| by hypot: a a + rb rb underflows to 0 for |a|, |rb| below 1e-154 (a limit row at
  // rest whose velocity decays geometrically), and a / q would be 0 / 0.
  const double q = std::hypot(a, rb);
  const double sum = a + rb;
  // (a + rb - q)(a + rb + q) = 2 a rb: no cancellation where a + rb > 0.
  out.phi = sum > 0 ? 2 * a * rb / (sum + q) : sum - q;
  out.dphi_da = 1 - a / q;
  out.dphi_db = (1 - rb / q) * r;
  return out;
}

NcpEvaluation MinimumMapNcp(double a, double b, double r) {
  const double rb = r * b;
  NcpEvaluation out;
  if (a == 0 && rb == 0) {  // the kink: the same convention as Fischer-Burmeister's
    out.dphi_db = r;
    return out;
  }
  if (a <= rb) {
    out.phi = a;
    out.dphi_da = 1;
  } else {
    out.phi = rb;
    out.dphi_db = r;
  }
  return out;
}

NcpEvaluation EvaluateNcp(NcpFunction function, double a, double b, double r) {
  return function == NcpFunction::kMinimumMap ? MinimumMapNcp(a, b, r)
                                              : FischerBurmeisterNcp(a, b, r);
}

FrictionCompliance FischerBurmeisterFrictionCompliance(double slip, double cone_limit,
                                                       double friction_norm, double r) {
  FrictionCompliance out;
  if (!(cone_limit > 0)) return out;  // inactive: rows zeroed, block 1 (106)
  out.active = true;
  const double slack = cone_limit - friction_norm;
  out.psi = FischerBurmeisterNcp(slip, slack, r).phi;
  const double rg = r * slack;
  const double q = std::hypot(slip, rg);
  // s' = q - r g (99)-(100), formed without cancellation.
  const double next_slip = rg > 0 ? slip * slip / (q + rg) : q - rg;
  if (next_slip == 0) {  // sticking; covers the 0/0 corner s = 0, |lambda_f| = 0
    out.w = 0;
    return out;
  }
  // r |lambda_f|' = r |lambda_f| + psi (101) = s + r mu lambda_n - q, (104)'s denominator.
  double denominator = r * friction_norm + out.psi;
  const double floor = kFrictionComplianceFloor * r * cone_limit;
  if (!(denominator >= floor)) {
    denominator = floor;
    out.clamped = true;
  }
  out.w = r * next_slip / denominator;
  return out;
}

FrictionCompliance MinimumMapFrictionCompliance(double slip, double cone_limit,
                                                double friction_norm, double r) {
  FrictionCompliance out;
  if (!(cone_limit > 0)) return out;
  out.active = true;
  const double slack = cone_limit - friction_norm;
  out.psi = MinimumMapNcp(slip, slack, r).phi;
  const double rg = r * slack;
  out.w = slip <= rg ? 0 : (slip - rg) / cone_limit;  // (105)
  return out;
}

FrictionCompliance EvaluateFrictionCompliance(NcpFunction function, double slip, double cone_limit,
                                              double friction_norm, double r) {
  return function == NcpFunction::kMinimumMap
             ? MinimumMapFrictionCompliance(slip, cone_limit, friction_norm, r)
             : FischerBurmeisterFrictionCompliance(slip, cone_limit, friction_norm, r);
}

namespace {

// r = scale d for a positive, finite diagonal d; else the global h^2.
double FromDiagonal(double scale, double h, double diagonal) {
  return diagonal > 0 && std::isfinite(diagonal) ? scale * diagonal : h * h;
}

}  // namespace

double NormalComplementarityFactor(ComplementarityScaling scaling, double h, double diagonal) {
  switch (scaling) {
    case ComplementarityScaling::kIdentity:
      return 1;
    case ComplementarityScaling::kTimeStepSquared:
      return h * h;
    case ComplementarityScaling::kEffectiveMass:
      break;
  }
  return FromDiagonal(h * h, h, diagonal);
}

double FrictionComplementarityFactor(ComplementarityScaling scaling, double h,
                                     double tangent_diagonal_1, double tangent_diagonal_2) {
  switch (scaling) {
    case ComplementarityScaling::kIdentity:
      return 1;
    case ComplementarityScaling::kTimeStepSquared:
      return h * h;
    case ComplementarityScaling::kEffectiveMass:
      break;
  }
  return FromDiagonal(h, h, 0.5 * (tangent_diagonal_1 + tangent_diagonal_2));
}

}  // namespace alsim
