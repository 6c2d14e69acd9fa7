#include "engine/constraint/soft_rows.h"

#include <algorithm>
#include <cmath>

namespace alsim {
namespace {

constexpr double kMinVal = 1e-15;   // mjMINVAL
constexpr double kMinImp = 0.0001;  // mjMINIMP
constexpr double kMaxImp = 0.9999;  // mjMAXIMP

double ClampImpedance(double value) { return std::min(kMaxImp, std::max(kMinImp, value)); }

}  // namespace

SoftRowParameters CheckedSoftRowParameters(const SolRef& solref, const SolImp& solimp, double h,
                                           bool refsafe) {
  SoftRowParameters p;
  if ((solref[0] > 0) == (solref[1] > 0)) p.solref = solref;  // else MuJoCo's defaults
  if (refsafe && p.solref[0] > 0) p.solref[0] = std::max(p.solref[0], 2 * h);
  p.solimp = solimp;
  p.solimp[0] = ClampImpedance(p.solimp[0]);
  p.solimp[1] = ClampImpedance(p.solimp[1]);
  p.solimp[2] = std::max(0.0, p.solimp[2]);
  p.solimp[3] = ClampImpedance(p.solimp[3]);
  p.solimp[4] = std::max(1.0, p.solimp[4]);
  return p;
}

SoftRowParameters ContactSoftRowParameters(const Model& m, int geom1, int geom2,
                                           int explicit_pair) {
  SoftRowParameters p;
  if (explicit_pair >= 0) {
    p.solref = m.pair_solref[explicit_pair];
    p.solimp = m.pair_solimp[explicit_pair];
    return p;
  }
  if (m.geom_priority[geom1] != m.geom_priority[geom2]) {
    const int g = m.geom_priority[geom1] > m.geom_priority[geom2] ? geom1 : geom2;
    p.solref = m.geom_solref[g];
    p.solimp = m.geom_solimp[g];
    return p;
  }
  const double mix1 = m.geom_solmix[geom1], mix2 = m.geom_solmix[geom2];
  double mix = 0.5;
  if (mix1 >= kMinVal && mix2 >= kMinVal) {
    mix = mix1 / (mix1 + mix2);
  } else if (mix1 < kMinVal && mix2 >= kMinVal) {
    mix = 0.0;
  } else if (mix1 >= kMinVal && mix2 < kMinVal) {
    mix = 1.0;
  }
  const SolRef& ref1 = m.geom_solref[geom1];
  const SolRef& ref2 = m.geom_solref[geom2];
  for (int i = 0; i < 2; ++i) {
    p.solref[i] = ref1[0] > 0 && ref2[0] > 0 ? mix * ref1[i] + (1 - mix) * ref2[i]
                                             : std::min(ref1[i], ref2[i]);
  }
  for (int i = 0; i < 5; ++i) {
    p.solimp[i] = mix * m.geom_solimp[geom1][i] + (1 - mix) * m.geom_solimp[geom2][i];
  }
  return p;
}

double ContactIncludeMargin(const Model& m, int geom1, int geom2, int explicit_pair) {
  return explicit_pair >= 0 ? m.pair_margin[explicit_pair] - m.pair_gap[explicit_pair]
                            : std::max(m.geom_margin[geom1], m.geom_margin[geom2]) -
                                  std::max(m.geom_gap[geom1], m.geom_gap[geom2]);
}

double Impedance(const SolImp& solimp, double pos, double margin) {
  const double dmin = solimp[0], dmax = solimp[1], width = solimp[2];
  const double mid = solimp[3], power = solimp[4];
  if (dmin == dmax || width <= kMinVal) return 0.5 * (dmin + dmax);
  const double x = std::abs((pos - margin) / width);
  if (x >= 1) return dmax;
  if (x <= 0) return dmin;
  double y = x;
  if (power != 1) {
    y = x <= mid ? std::pow(x, power) / std::pow(mid, power - 1)
                 : 1 - std::pow(1 - x, power) / std::pow(1 - mid, power - 1);
  }
  return dmin + y * (dmax - dmin);
}

SoftRowReference Reference(const SoftRowParameters& p) {
  const double dmax = p.solimp[1];
  const double timeconst = p.solref[0], dampratio = p.solref[1];
  SoftRowReference r;
  r.stiffness =
      timeconst > 0
          ? 1 / std::max(kMinVal, dmax * dmax * timeconst * timeconst * dampratio * dampratio)
          : -timeconst / std::max(kMinVal, dmax * dmax);
  r.damping = dampratio > 0 ? 2 / std::max(kMinVal, dmax * timeconst)
                            : -dampratio / std::max(kMinVal, dmax);
  return r;
}

double Regularization(double impedance, double diag_approx) {
  return std::max(kMinVal, (1 - impedance) * diag_approx / impedance);
}

double SoftRowBias(const SoftRowReference& reference, double impedance, double pos, double margin,
                   double velocity, double h) {
  return -(1 - h * reference.damping) * velocity +
         h * reference.stiffness * impedance * (pos - margin);
}

}  // namespace alsim
