#include "engine/solver/nsn/particle_newton.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include <Eigen/Geometry>

#include "engine/solver/nsn/tet_rows.h"

namespace alsim {
namespace {

// Rows of a tet of the material.
int TetRowCount(DeformableMaterial material) {
  return material == DeformableMaterial::kNeoHookean ? 3 : 6;
}

double MaxAbs(const std::vector<double>& v, int n) {
  double m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::abs(v[i]));
  return m;
}

}  // namespace

void ParticleNewtonStep::SetSystem(std::vector<double> mass, std::vector<char> pinned,
                                   std::vector<ParticleTet> tets,
                                   std::vector<ParticlePlane> planes) {
  mass_ = std::move(mass);
  pinned_ = std::move(pinned);
  tets_ = std::move(tets);
  planes_ = std::move(planes);
  // Each plane's tangent basis: d1 orthogonal to n and to the axis least aligned with n, d2 = n x
  // d1.
  plane_tangent_.clear();
  for (const ParticlePlane& plane : planes_) {
    const Vec3 n = plane.normal.normalized();
    int axis = 0;
    for (int c = 1; c < 3; ++c) {
      if (std::abs(n[c]) < std::abs(n[axis])) axis = c;
    }
    const Vec3 d1 = n.cross(Vec3::Unit(axis)).normalized();
    plane_tangent_.push_back(d1);
    plane_tangent_.push_back(n.cross(d1));
  }
  n_ = static_cast<int>(mass_.size());
  inverse_mass_.assign(n_, 0);
  for (int v = 0; v < n_; ++v) inverse_mass_[v] = pinned_[v] || !(mass_[v] > 0) ? 0 : 1 / mass_[v];
  tet_row_adr_.assign(tets_.size(), 0);
  tet_frame_.assign(tets_.size(), Mat3::Identity());
  element_rows_ = 0;
  for (size_t e = 0; e < tets_.size(); ++e) {
    tet_row_adr_[e] = element_rows_;
    element_rows_ += TetRowCount(tets_[e].material);
  }
}

void ParticleNewtonStep::Evaluate(double h, const ParticleNewtonParameters& parameters) {
  // q = q- + h u.
  for (int i = 0; i < 3 * n_; ++i) q_[i] = start_[i] + h * u_[i];
  // Elements: J = ds/dx, E_e, and h_e = (1/h) E_e (c_e + lambda_e).
  for (size_t e = 0; e < tets_.size(); ++e) {
    const ParticleTet& tet = tets_[e];
    TetVertices x;
    for (int a = 0; a < 4; ++a) {
      for (int c = 0; c < 3; ++c) x(c, a) = q_[3 * tet.vertices[a] + c];
    }
    const int adr = tet_row_adr_[e];
    const auto store = [&](const auto& rows) {
      constexpr int k = std::decay_t<decltype(rows.value)>::RowsAtCompileTime;
      for (int r = 0; r < k; ++r) {
        for (int col = 0; col < 12; ++col) jacobian_[12 * (adr + r) + col] = rows.jacobian(r, col);
        double sum = 0;
        for (int j = 0; j < k; ++j) {
          sum += rows.compliance(r, j) * (rows.value[j] + lambda_[adr + j]);
        }
        residual_h_[adr + r] = sum / h;
      }
      for (int r = 0; r < k; ++r) {
        for (int j = 0; j < k; ++j)
          compliance_[static_cast<size_t>(adr) * 6 + r * k + j] = rows.compliance(r, j);
      }
    };
    if (tet.material == DeformableMaterial::kNeoHookean) {
      TetRows<3> rows;
      SignedSvd svd;
      EvaluateNeoHookeanTet(tet.rest, tet.neo_hookean, x, &rows, &svd);
      OrderNeoHookeanRows(svd, &tet_frame_[e], &rows);  // tet_rows.h
      store(rows);
    } else {
      TetRows<6> rows;
      if (tet.material == DeformableMaterial::kLinear) {
        EvaluateLinearTet(tet.rest, tet.linear, x, &rows);
      } else {
        EvaluateCorotatedTet(tet.rest, tet.linear, x, &rows);
      }
      store(rows);
    }
  }
  // Contacts: C_n = n . q_v - offset - thickness, phi_n(C_n, r lambda_n), J = alpha n^T,
  // S = dphi/dlambda (C = S / h^2), h_n = phi / h.
  for (size_t k = 0; k < contact_vertex_.size(); ++k) {
    const int v = contact_vertex_[k], row = element_rows_ + static_cast<int>(k);
    const ParticlePlane& plane = planes_[contact_plane_[k]];
    const Vec3 p(q_[3 * v], q_[3 * v + 1], q_[3 * v + 2]);
    const double gap = plane.normal.dot(p) - plane.offset - plane.thickness;
    const double r = NormalComplementarityFactor(parameters.scaling, h, inverse_mass_[v]);
    const NcpEvaluation ncp = EvaluateNcp(parameters.ncp, gap, lambda_[row], r);
    for (int c = 0; c < 3; ++c) jacobian_[12 * row + c] = ncp.dphi_da * plane.normal[c];
    point_c_[k] = ncp.dphi_db / (h * h);
    residual_h_[row] = ncp.phi / h;
  }
  // Friction (36), (104)-(106): slip s = |D^T u_v|, m = mu lambda_n, W from the current iterate;
  // active: J_f = D^T, C = W / h, h_f = D^T u_v + W lambda_f; inactive: J_f = 0, W = 1.
  for (size_t k = 0; k < contact_vertex_.size(); ++k) {
    const int row = contact_friction_row_[k];
    if (row < 0) continue;
    const int v = contact_vertex_[k], plane = contact_plane_[k];
    const Vec3 u(u_[3 * v], u_[3 * v + 1], u_[3 * v + 2]);
    const Vec3& d1 = plane_tangent_[2 * plane];
    const Vec3& d2 = plane_tangent_[2 * plane + 1];
    const double slip1 = d1.dot(u), slip2 = d2.dot(u);
    const double slip = std::hypot(slip1, slip2);
    const double lambda_n = lambda_[element_rows_ + static_cast<int>(k)];
    const double friction_norm = std::hypot(lambda_[row], lambda_[row + 1]);
    const double r =
        FrictionComplementarityFactor(parameters.scaling, h, inverse_mass_[v], inverse_mass_[v]);
    const FrictionCompliance w = EvaluateFrictionCompliance(
        parameters.ncp, slip, planes_[plane].friction * lambda_n, friction_norm, r);
    const double active = w.active ? 1 : 0;
    for (int c = 0; c < 3; ++c) {
      jacobian_[12 * row + c] = active * d1[c];
      jacobian_[12 * (row + 1) + c] = active * d2[c];
    }
    const int point = row - element_rows_;
    point_c_[point] = point_c_[point + 1] = w.w / h;
    residual_h_[row] = active * slip1 + w.w * lambda_[row];
    residual_h_[row + 1] = active * slip2 + w.w * lambda_[row + 1];
    // The stopping test's weight on these rows (header): r / (r + W), r when inactive.
    point_scale_[point] = point_scale_[point + 1] = w.active ? r / (r + w.w) : r;
  }
  // g = M (u - u~) - h J^T lambda.
  for (int i = 0; i < 3 * n_; ++i) g_[i] = mass_[i / 3] * (u_[i] - free_velocity_[i]);
  for (size_t e = 0; e < tets_.size(); ++e) {
    const int adr = tet_row_adr_[e], k = TetRowCount(tets_[e].material);
    for (int r = 0; r < k; ++r) {
      for (int a = 0; a < 4; ++a) {
        for (int c = 0; c < 3; ++c) {
          g_[3 * tets_[e].vertices[a] + c] -=
              h * jacobian_[12 * (adr + r) + 3 * a + c] * lambda_[adr + r];
        }
      }
    }
  }
  for (int row = element_rows_; row < rows_; ++row) {
    const int v = point_row_vertex_[row - element_rows_];
    for (int c = 0; c < 3; ++c) g_[3 * v + c] -= h * jacobian_[12 * row + c] * lambda_[row];
  }
  // Pinned particles do not move: their momentum rows carry no residual.
  for (int v = 0; v < n_; ++v) {
    if (inverse_mass_[v] == 0) g_[3 * v] = g_[3 * v + 1] = g_[3 * v + 2] = 0;
  }
  // A's diagonal: [J H^-1 J^T]_ii + C_ii + eps.
  for (size_t e = 0; e < tets_.size(); ++e) {
    const int adr = tet_row_adr_[e], k = TetRowCount(tets_[e].material);
    for (int r = 0; r < k; ++r) {
      double sum = 0;
      for (int a = 0; a < 4; ++a) {
        for (int c = 0; c < 3; ++c) {
          const double j = jacobian_[12 * (adr + r) + 3 * a + c];
          sum += j * j * inverse_h_[3 * tets_[e].vertices[a] + c];
        }
      }
      diagonal_[adr + r] =
          sum + compliance_[static_cast<size_t>(adr) * 6 + r * k + r] / (h * h) + regularization_;
    }
  }
  for (int row = element_rows_; row < rows_; ++row) {
    const int point = row - element_rows_;
    const int v = point_row_vertex_[point];
    double sum = 0;
    if (geometric_stiffness_) {
      for (int c = 0; c < 3; ++c) {
        sum += jacobian_[12 * row + c] * jacobian_[12 * row + c] * inverse_h_[3 * v + c];
      }
    } else {
      for (int c = 0; c < 3; ++c) sum += jacobian_[12 * row + c] * jacobian_[12 * row + c];
      sum *= inverse_mass_[v];
    }
    diagonal_[row] = sum + point_c_[point] + regularization_;
  }
}

void ParticleNewtonStep::ConstraintForce(double* out) const {
  for (int i = 0; i < 3 * n_; ++i) out[i] = 0;
  for (size_t e = 0; e < tets_.size(); ++e) {
    const int adr = tet_row_adr_[e], k = TetRowCount(tets_[e].material);
    for (int r = 0; r < k; ++r) {
      for (int a = 0; a < 4; ++a) {
        for (int c = 0; c < 3; ++c) {
          out[3 * tets_[e].vertices[a] + c] -=
              h_ * jacobian_[12 * (adr + r) + 3 * a + c] * lambda_[adr + r];
        }
      }
    }
  }
  for (int row = element_rows_; row < rows_; ++row) {
    const int v = point_row_vertex_[row - element_rows_];
    for (int c = 0; c < 3; ++c) out[3 * v + c] -= h_ * jacobian_[12 * row + c] * lambda_[row];
  }
}

void ParticleNewtonStep::Apply(const double* x, double* y) {
  const double h = h_;
  // w = H^-1 J^T x.
  std::fill(work_n_.begin(), work_n_.begin() + 3 * n_, 0.0);
  for (size_t e = 0; e < tets_.size(); ++e) {
    const int adr = tet_row_adr_[e], k = TetRowCount(tets_[e].material);
    for (int r = 0; r < k; ++r) {
      for (int a = 0; a < 4; ++a) {
        for (int c = 0; c < 3; ++c) {
          work_n_[3 * tets_[e].vertices[a] + c] +=
              jacobian_[12 * (adr + r) + 3 * a + c] * x[adr + r];
        }
      }
    }
  }
  for (int row = element_rows_; row < rows_; ++row) {
    const int v = point_row_vertex_[row - element_rows_];
    for (int c = 0; c < 3; ++c) work_n_[3 * v + c] += jacobian_[12 * row + c] * x[row];
  }
  for (int i = 0; i < 3 * n_; ++i) work_n_[i] *= inverse_h_[i];
  // y = J w + C x + eps x.
  for (size_t e = 0; e < tets_.size(); ++e) {
    const int adr = tet_row_adr_[e], k = TetRowCount(tets_[e].material);
    for (int r = 0; r < k; ++r) {
      double sum = 0;
      for (int a = 0; a < 4; ++a) {
        for (int c = 0; c < 3; ++c) {
          sum += jacobian_[12 * (adr + r) + 3 * a + c] * work_n_[3 * tets_[e].vertices[a] + c];
        }
      }
      double compliance = 0;
      for (int j = 0; j < k; ++j) {
        compliance += compliance_[static_cast<size_t>(adr) * 6 + r * k + j] * x[adr + j];
      }
      y[adr + r] = sum + compliance / (h * h) + regularization_ * x[adr + r];
    }
  }
  for (int row = element_rows_; row < rows_; ++row) {
    const int point = row - element_rows_, v = point_row_vertex_[point];
    double sum = 0;
    for (int c = 0; c < 3; ++c) sum += jacobian_[12 * row + c] * work_n_[3 * v + c];
    y[row] = sum + point_c_[point] * x[row] + regularization_ * x[row];
  }
}

ParticleNewtonStatistics ParticleNewtonStep::Step(double h, const ParticleNewtonParameters& p,
                                                  const double* f, double margin, double* x,
                                                  double* v) {
  ParticleNewtonStatistics stats;
  h_ = h;
  regularization_ = p.regularization;
  const int n3 = 3 * n_;
  start_.assign(x, x + n3);
  free_velocity_.resize(n3);
  for (int i = 0; i < n3; ++i) free_velocity_[i] = v[i] + h * inverse_mass_[i / 3] * f[i];
  // Contact candidates: within margin plus the free motion's reach of a plane.
  contact_vertex_.clear();
  contact_plane_.clear();
  for (int vertex = 0; vertex < n_; ++vertex) {
    if (inverse_mass_[vertex] == 0) continue;
    for (size_t k = 0; k < planes_.size(); ++k) {
      const ParticlePlane& plane = planes_[k];
      const Vec3 p0(x[3 * vertex], x[3 * vertex + 1], x[3 * vertex + 2]);
      const Vec3 vf(free_velocity_[3 * vertex], free_velocity_[3 * vertex + 1],
                    free_velocity_[3 * vertex + 2]);
      const double gap = plane.normal.dot(p0) - plane.offset - plane.thickness;
      const double approach = std::max(0.0, -h * plane.normal.dot(vf));
      if (gap <= margin + approach) {
        contact_vertex_.push_back(vertex);
        contact_plane_.push_back(static_cast<int>(k));
      }
    }
  }
  // Rows on particles: the normals in contact order, then the frictional contacts' tangent pairs.
  point_row_vertex_.assign(contact_vertex_.begin(), contact_vertex_.end());
  contact_friction_row_.assign(contact_vertex_.size(), -1);
  for (size_t k = 0; k < contact_vertex_.size(); ++k) {
    if (!(planes_[contact_plane_[k]].friction > 0)) continue;
    contact_friction_row_[k] = element_rows_ + static_cast<int>(point_row_vertex_.size());
    point_row_vertex_.push_back(contact_vertex_[k]);
    point_row_vertex_.push_back(contact_vertex_[k]);
  }
  rows_ = element_rows_ + static_cast<int>(point_row_vertex_.size());
  std::fill(tet_frame_.begin(), tet_frame_.end(), Mat3::Identity());
  u_.assign(n3, 0.0);          // (67)
  lambda_.assign(rows_, 0.0);  // (68)
  q_.resize(n3);
  jacobian_.assign(static_cast<size_t>(12) * rows_, 0.0);
  compliance_.assign(static_cast<size_t>(6) * element_rows_, 0.0);
  point_c_.assign(point_row_vertex_.size(), 0.0);
  point_scale_.assign(point_row_vertex_.size(), 1.0);
  for (std::vector<double>* w : {&residual_h_, &diagonal_, &rhs_, &dlambda_, &work_rows_}) {
    w->assign(rows_, 0.0);
  }
  for (std::vector<double>* w : {&g_, &du_, &work_n_}) w->assign(n3, 0.0);
  double momentum_scale = 1;
  for (int i = 0; i < n3; ++i) {
    momentum_scale = std::max(momentum_scale, std::abs(mass_[i / 3] * free_velocity_[i]));
  }

  geometric_stiffness_ = p.geometric_stiffness;
  inverse_h_.resize(n3);
  for (int i = 0; i < n3; ++i) inverse_h_[i] = inverse_mass_[i / 3];
  if (geometric_stiffness_) {
    constraint_force_.assign(n3, 0.0);
    work_force_.assign(n3, 0.0);
  }

  const auto apply = [this](const double* in, double* out) { Apply(in, out); };
  for (int iteration = 0;; ++iteration) {
    Evaluate(h, p);
    if (geometric_stiffness_ && iteration > 0) {
      // c_k = -(gc(u^{n+1}) - gc(u^n))_k / du_k with the same lambda (digest 5.4's sign of (73));
      // H~_kk = M_kk - min(0, c_k) (74). Dofs that hardly moved keep their previous shift.
      ConstraintForce(work_force_.data());
      double largest = 0;
      for (int i = 0; i < n3; ++i) largest = std::max(largest, std::abs(du_[i]));
      for (int i = 0; i < n3; ++i) {
        const double step = p.step_fraction * du_[i];
        if (inverse_mass_[i / 3] == 0 || !(std::abs(step) > 1e-12 * p.step_fraction * largest)) {
          continue;
        }
        const double c = -(work_force_[i] - constraint_force_[i]) / step;
        inverse_h_[i] = 1 / (mass_[i / 3] - std::min(0.0, c));
      }
      Evaluate(h, p);  // A's diagonal with the new H~
    }
    stats.momentum_residual = MaxAbs(g_, n3);
    stats.row_residual = MaxAbs(residual_h_, element_rows_ + num_contacts());
    for (int row = element_rows_ + num_contacts(); row < rows_; ++row) {
      stats.row_residual = std::max(stats.row_residual,
                                    std::abs(residual_h_[row]) * point_scale_[row - element_rows_]);
    }
    if (p.newton_tolerance > 0 && stats.momentum_residual <= p.newton_tolerance * momentum_scale &&
        stats.row_residual <= p.newton_tolerance / h) {
      stats.converged = true;
      break;
    }
    if (iteration == p.newton_iterations) break;
    // b = (1/h) (J H^-1 g - h-vector).
    for (int i = 0; i < n3; ++i) work_n_[i] = inverse_h_[i] * g_[i];
    for (size_t e = 0; e < tets_.size(); ++e) {
      const int adr = tet_row_adr_[e], k = TetRowCount(tets_[e].material);
      for (int r = 0; r < k; ++r) {
        double sum = 0;
        for (int a = 0; a < 4; ++a) {
          for (int c = 0; c < 3; ++c) {
            sum += jacobian_[12 * (adr + r) + 3 * a + c] * work_n_[3 * tets_[e].vertices[a] + c];
          }
        }
        rhs_[adr + r] = (sum - residual_h_[adr + r]) / h;
      }
    }
    for (int row = element_rows_; row < rows_; ++row) {
      const int vertex = point_row_vertex_[row - element_rows_];
      double sum = 0;
      for (int c = 0; c < 3; ++c) sum += jacobian_[12 * row + c] * work_n_[3 * vertex + c];
      rhs_[row] = (sum - residual_h_[row]) / h;
    }
    std::fill(dlambda_.begin(), dlambda_.end(), 0.0);
    const KrylovResult solve = JacobiConjugateResidual(apply, diagonal_.data(), rhs_.data(), rows_,
                                                       p.krylov, &krylov_, dlambda_.data());
    stats.krylov_iterations += solve.iterations;
    // du = H^-1 (h J^T dlambda - g).
    for (int i = 0; i < n3; ++i) du_[i] = -g_[i];
    for (size_t e = 0; e < tets_.size(); ++e) {
      const int adr = tet_row_adr_[e], k = TetRowCount(tets_[e].material);
      for (int r = 0; r < k; ++r) {
        for (int a = 0; a < 4; ++a) {
          for (int c = 0; c < 3; ++c) {
            du_[3 * tets_[e].vertices[a] + c] +=
                h * jacobian_[12 * (adr + r) + 3 * a + c] * dlambda_[adr + r];
          }
        }
      }
    }
    for (int row = element_rows_; row < rows_; ++row) {
      const int vertex = point_row_vertex_[row - element_rows_];
      for (int c = 0; c < 3; ++c)
        du_[3 * vertex + c] += h * jacobian_[12 * row + c] * dlambda_[row];
    }
    for (int i = 0; i < n3; ++i) du_[i] *= inverse_h_[i];
    for (int i = 0; i < rows_; ++i) lambda_[i] += p.step_fraction * dlambda_[i];
    for (int i = 0; i < n3; ++i) u_[i] += p.step_fraction * du_[i];
    // Geometric stiffness (71)-(74): the constraint force -h J^T lambda with the new lambda at the
    // old configuration; the next Evaluate gives it at the new one.
    if (geometric_stiffness_) ConstraintForce(constraint_force_.data());
    stats.newton_iterations = iteration + 1;
  }
  for (int i = 0; i < n3; ++i) {
    v[i] = u_[i];
    x[i] = start_[i] + h * u_[i];
  }
  return stats;
}

}  // namespace alsim
