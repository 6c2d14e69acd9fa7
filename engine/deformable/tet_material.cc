#include "engine/deformable/tet_material.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/SVD>

namespace alsim {
namespace {

// The 6 x 12 Jacobian of VoigtStrain(M F) with M fixed: d(M F)_jk / dx_{a,i} = M_ji b_a[k].
void VoigtStrainJacobian(const Mat3& m, const Eigen::Matrix<double, 3, 4>& b,
                         Eigen::Matrix<double, 6, 12>* jacobian) {
  for (int a = 0; a < 4; ++a) {
    for (int i = 0; i < 3; ++i) {
      const int col = 3 * a + i;
      (*jacobian)(0, col) = m(0, i) * b(0, a);
      (*jacobian)(1, col) = m(1, i) * b(1, a);
      (*jacobian)(2, col) = m(2, i) * b(2, a);
      (*jacobian)(3, col) = m(1, i) * b(2, a) + m(2, i) * b(1, a);
      (*jacobian)(4, col) = m(0, i) * b(2, a) + m(2, i) * b(0, a);
      (*jacobian)(5, col) = m(0, i) * b(1, a) + m(1, i) * b(0, a);
    }
  }
}

void LinearRows(const TetRest& rest, const LinearMaterial& material, const Vec6& strain,
                TetRows<6>* rows) {
  rows->strain = strain;
  rows->value.noalias() = rest.volume * (material.stiffness * strain);
  rows->compliance = material.compliance / rest.volume;
  rows->energy = 0.5 * strain.dot(rows->value);
}

}  // namespace

bool MakeTetRest(const TetVertices& rest, TetRest* out) {
  if (!rest.allFinite()) return false;
  Mat3 dm;
  for (int k = 0; k < 3; ++k) dm.col(k) = rest.col(k + 1) - rest.col(0);
  double edge = 0;
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) edge = std::max(edge, (rest.col(b) - rest.col(a)).norm());
  }
  const double det = dm.determinant();
  if (!(det > 1e-14 * edge * edge * edge)) return false;
  out->dm_inverse = dm.inverse();
  for (int k = 0; k < 3; ++k) out->shape_gradients.col(k + 1) = out->dm_inverse.row(k).transpose();
  out->shape_gradients.col(0) =
      -(out->shape_gradients.col(1) + out->shape_gradients.col(2) + out->shape_gradients.col(3));
  out->volume = det / 6;
  return true;
}

Mat3 DeformationGradient(const TetRest& rest, const TetVertices& x) {
  Mat3 f;
  f.noalias() = x * rest.shape_gradients.transpose();
  return f;
}

LameParameters LameFromYoungPoisson(double young, double poisson) {
  LameParameters lame;
  lame.lambda = young * poisson / ((1 + poisson) * (1 - 2 * poisson));
  lame.mu = young / (2 * (1 + poisson));
  return lame;
}

LinearMaterial LinearMaterialFromYoungPoisson(double young, double poisson) {
  const LameParameters lame = LameFromYoungPoisson(young, poisson);
  LinearMaterial material;
  for (int j = 0; j < 3; ++j) {
    for (int k = 0; k < 3; ++k) {
      material.stiffness(j, k) = lame.lambda + (j == k ? 2 * lame.mu : 0);
      material.compliance(j, k) = (j == k ? 1 : -poisson) / young;
    }
    material.stiffness(3 + j, 3 + j) = lame.mu;
    material.compliance(3 + j, 3 + j) = 1 / lame.mu;
  }
  return material;
}

Vec6 VoigtStrain(const Mat3& g) {
  Vec6 s;
  s << g(0, 0) - 1, g(1, 1) - 1, g(2, 2) - 1, g(1, 2) + g(2, 1), g(0, 2) + g(2, 0),
      g(0, 1) + g(1, 0);
  return s;
}

// JacobiSVD leaves its singular values unset for a non-finite F (the early return GCC 12 sees as
// "maybe-uninitialized" reads below); such an F is answered before it, with NaN.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
SignedSvd ComputeSignedSvd(const Mat3& f) {
  SignedSvd out;
  if (!f.allFinite()) {
    out.sigma.setConstant(std::numeric_limits<double>::quiet_NaN());
    return out;
  }
  const Eigen::JacobiSVD<Mat3> svd(f, Eigen::ComputeFullU | Eigen::ComputeFullV);
  out.u = svd.matrixU();
  out.v = svd.matrixV();
  out.sigma = svd.singularValues();
  if (out.u.determinant() < 0) {
    out.u.col(2) = -out.u.col(2);
    out.sigma(2) = -out.sigma(2);
  }
  if (out.v.determinant() < 0) {
    out.v.col(2) = -out.v.col(2);
    out.sigma(2) = -out.sigma(2);
  }
  return out;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void EvaluateLinearTet(const TetRest& rest, const LinearMaterial& material, const TetVertices& x,
                       TetRows<6>* rows) {
  LinearRows(rest, material, VoigtStrain(DeformationGradient(rest, x)), rows);
  VoigtStrainJacobian(Mat3::Identity(), rest.shape_gradients, &rows->jacobian);
}

void EvaluateCorotatedTet(const TetRest& rest, const LinearMaterial& material, const TetVertices& x,
                          TetRows<6>* rows, Mat3* rotation) {
  const Mat3 f = DeformationGradient(rest, x);
  const SignedSvd svd = ComputeSignedSvd(f);
  Mat3 r;
  r.noalias() = svd.u * svd.v.transpose();
  Mat3 rf;
  rf.noalias() = r.transpose() * f;
  LinearRows(rest, material, VoigtStrain(rf), rows);
  VoigtStrainJacobian(r.transpose(), rest.shape_gradients, &rows->jacobian);
  if (rotation != nullptr) *rotation = r;
}

NeoHookeanMaterial NeoHookeanFromCoefficients(double c1, double d1) {
  NeoHookeanMaterial material;
  material.c1 = c1;
  material.d1 = d1;
  material.alpha = 1 + c1 / d1;
  material.hessian_floor = 1e-4 * 2 * c1;
  return material;
}

NeoHookeanMaterial NeoHookeanFromYoungPoisson(double young, double poisson) {
  const LameParameters lame = LameFromYoungPoisson(young, poisson);
  return NeoHookeanFromCoefficients(lame.mu / 2, (lame.lambda + lame.mu) / 2);
}

double NeoHookeanEnergyDensity(const NeoHookeanMaterial& material, const Vec3& s) {
  const double j = s(0) * s(1) * s(2);
  return material.c1 * (s.squaredNorm() - 3) +
         material.d1 * (j - material.alpha) * (j - material.alpha);
}

Vec3 NeoHookeanStress(const NeoHookeanMaterial& material, const Vec3& s) {
  const double j = s(0) * s(1) * s(2);
  const Vec3 dj(s(1) * s(2), s(0) * s(2), s(0) * s(1));
  return 2 * material.c1 * s + 2 * material.d1 * (j - material.alpha) * dj;
}

Mat3 NeoHookeanHessian(const NeoHookeanMaterial& material, const Vec3& s) {
  const double c1 = material.c1;
  const double d1 = material.d1;
  const double k0 = 2 * s(0) * s(1) * s(2) - material.alpha;
  const double k1 = d1 * s(2) * k0;
  const double k2 = d1 * s(1) * k0;
  const double k3 = d1 * s(0) * k0;
  Mat3 h;
  h << d1 * s(1) * s(1) * s(2) * s(2) + c1, k1, k2,  //
      k1, d1 * s(0) * s(0) * s(2) * s(2) + c1, k3,   //
      k2, k3, d1 * s(0) * s(0) * s(1) * s(1) + c1;
  return 2 * h;
}

Mat3 ProjectedInverse(const Mat3& h, double volume, double floor) {
  const Eigen::SelfAdjointEigenSolver<Mat3> eigen(h);
  Vec3 inverse;
  for (int i = 0; i < 3; ++i) inverse(i) = 1 / (volume * std::max(eigen.eigenvalues()(i), floor));
  Mat3 e;
  e.noalias() = eigen.eigenvectors() * inverse.asDiagonal() * eigen.eigenvectors().transpose();
  return 0.5 * (e + e.transpose());
}

void EvaluateNeoHookeanTet(const TetRest& rest, const NeoHookeanMaterial& material,
                           const TetVertices& x, TetRows<3>* rows, SignedSvd* svd_out) {
  const SignedSvd svd = ComputeSignedSvd(DeformationGradient(rest, x));
  const Vec3& s = svd.sigma;
  rows->strain = s;
  rows->value = rest.volume * NeoHookeanStress(material, s);
  rows->energy = rest.volume * NeoHookeanEnergyDensity(material, s);
  rows->compliance =
      ProjectedInverse(NeoHookeanHessian(material, s), rest.volume, material.hessian_floor);
  // ds_r / dx_{a,i} = U_ir (v_r . b_a).
  Eigen::Matrix<double, 3, 4> vb;
  vb.noalias() = svd.v.transpose() * rest.shape_gradients;
  for (int a = 0; a < 4; ++a) {
    for (int i = 0; i < 3; ++i) {
      for (int r = 0; r < 3; ++r) rows->jacobian(r, 3 * a + i) = svd.u(i, r) * vb(r, a);
    }
  }
  if (svd_out != nullptr) *svd_out = svd;
}

namespace {

// [a]x: the matrix of b -> a x b.
Mat3 Cross(const Vec3& a) {
  Mat3 m;
  m << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return m;
}

}  // namespace

void EvaluateNeoHookeanGradientTet(const TetRest& rest, const NeoHookeanMaterial& material,
                                   const TetVertices& x, TetRows<9>* rows) {
  using Mat9 = Eigen::Matrix<double, 9, 9>;
  using Vec9 = Eigen::Matrix<double, 9, 1>;
  const Mat3 f = DeformationGradient(rest, x);
  const Vec3 f0 = f.col(0), f1 = f.col(1), f2 = f.col(2);
  Mat3 cofactor;
  cofactor.col(0) = f1.cross(f2);
  cofactor.col(1) = f2.cross(f0);
  cofactor.col(2) = f0.cross(f1);
  const double j = f0.dot(cofactor.col(0));
  const double c1 = material.c1, d1 = material.d1, alpha = material.alpha;
  const Vec9 vec_f = Eigen::Map<const Vec9>(f.data());
  const Vec9 g = Eigen::Map<const Vec9>(cofactor.data());
  rows->strain = vec_f;
  rows->value = rest.volume * (2 * c1 * vec_f + 2 * d1 * (j - alpha) * g);
  rows->energy = rest.volume * (c1 * (f.squaredNorm() - 3) + d1 * (j - alpha) * (j - alpha));
  // d2J/dF2 in 3 x 3 blocks (p, q) = d cof_p / d f_q: d(f1 x f2)/df1 = -[f2]x, /df2 = [f1]x, ...
  Mat9 hj = Mat9::Zero();
  hj.block<3, 3>(0, 3) = -Cross(f2);
  hj.block<3, 3>(0, 6) = Cross(f1);
  hj.block<3, 3>(3, 0) = Cross(f2);
  hj.block<3, 3>(3, 6) = -Cross(f0);
  hj.block<3, 3>(6, 0) = -Cross(f1);
  hj.block<3, 3>(6, 3) = Cross(f0);
  Mat9 hessian = 2 * d1 * (j - alpha) * hj;
  hessian.noalias() += 2 * d1 * g * g.transpose();
  hessian.diagonal().array() += 2 * c1;
  const Eigen::SelfAdjointEigenSolver<Mat9> eigen(0.5 * (hessian + hessian.transpose()));
  Vec9 inverse;
  for (int i = 0; i < 9; ++i) {
    inverse(i) =
        1 / (rest.volume * std::max(std::abs(eigen.eigenvalues()(i)), material.hessian_floor));
  }
  Mat9 e;
  e.noalias() = eigen.eigenvectors() * inverse.asDiagonal() * eigen.eigenvectors().transpose();
  rows->compliance = 0.5 * (e + e.transpose());
  // dF_ij / dx_{a,k} = delta_ik b_a[j].
  rows->jacobian.setZero();
  for (int a = 0; a < 4; ++a) {
    for (int col = 0; col < 3; ++col) {
      for (int i = 0; i < 3; ++i)
        rows->jacobian(3 * col + i, 3 * a + i) = rest.shape_gradients(col, a);
    }
  }
}

}  // namespace alsim
