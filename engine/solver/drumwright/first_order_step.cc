#include "engine/solver/drumwright/first_order_step.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Cholesky>
#include <Eigen/LU>

namespace alsim {
namespace {

// SolveConicQpByAdmm's budget: iterations, and its relative stop (first_order_step.h).
constexpr int kAdmmIterations = 20000;
constexpr double kAdmmTolerance = 1e-10;

// Sizes agree, h > 0, and every normal row is followed by exactly two tangent rows (and no
// tangent row stands elsewhere).
bool WellFormed(const FirstOrderProblem& p) {
  const Eigen::Index nv = p.mass.rows();
  if (p.mass.cols() != nv || p.velocity.size() != nv || p.force.size() != nv) return false;
  if (!(p.h > 0) || p.jacobian.cols() != nv) return false;
  if (p.jacobian.rows() != static_cast<Eigen::Index>(p.rows.size())) return false;
  for (size_t i = 0; i < p.rows.size(); ++i) {
    const SpringRowClass type = p.rows[i].type;
    if (type == SpringRowClass::kNormal) {
      if (i + 2 >= p.rows.size()) return false;
      if (p.rows[i + 1].type != SpringRowClass::kTangent ||
          p.rows[i + 2].type != SpringRowClass::kTangent || !(p.rows[i].friction >= 0)) {
        return false;
      }
      i += 2;
    } else if (type == SpringRowClass::kTangent) {
      return false;
    }
  }
  return true;
}

// h^2 K + h B of row i.
double Compliance(const SpringRow& row, double h) {
  return h * h * row.stiffness + h * row.damping;
}

// A problem of unilateral rows only goes through the diagonal-plus-low-rank path of the conic QP
// once it has at least this many rows per dof (the elastic foundation's 100 or 900 rows over 6
// dofs): there an iteration costs O(n nv^2) instead of the dense O(n^3).
constexpr int kLowRankRowsPerDof = 4;

// The QP (83)-(85) of unilateral rows (no bilateral rows, so Lam = M^-1) with (84) divided by W
// (conic_qp.h): min zeta/2 |lam|^2 s.t. (W^-1 + G M^-1 G^T) lam >= W^-1 q, lam >= 0, q = -K phi0
// - (h K + B) G v_c; a = W^-1, U = G M^-1, V = G, so A = diag(a) + U V^T is never formed. The
// same program as the dense path's rows lam_k + W_k (G M^-1 G^T lam)_k >= q_k, each divided by
// W_k > 0. Writes lam and the program's statistics; false when a row has W = 0 (the dense path
// then takes it) or the program failed.
bool SolveUnilateralLowRank(const FirstOrderProblem& p, double zeta,
                            const Eigen::LLT<Eigen::MatrixXd>& factor,
                            const Eigen::VectorXd& free_velocity,
                            const ConicQpParameters& parameters, Eigen::MatrixXd* response,
                            Eigen::VectorXd* impulse, FirstOrderResult* result) {
  const Eigen::Index n = p.jacobian.rows(), nv = p.mass.rows();
  DiagonalLowRankQp qp;
  qp.p = Eigen::VectorXd::Constant(n, zeta);
  qp.c = Eigen::VectorXd::Zero(n);
  qp.a_diagonal.resize(n);
  qp.b.resize(n);
  const Eigen::VectorXd row_velocity = p.jacobian * free_velocity;  // G v_c
  for (Eigen::Index k = 0; k < n; ++k) {
    const SpringRow& row = p.rows[k];
    const double w = Compliance(row, p.h);
    if (!(w > 0)) return false;
    qp.a_diagonal[k] = 1 / w;
    qp.b[k] =
        (-row.stiffness * row.phi0 - (p.h * row.stiffness + row.damping) * row_velocity[k]) / w;
  }
  *response = factor.solve(p.jacobian.transpose());  // M^-1 G^T (nv x n)
  qp.u = response->transpose();
  qp.v = p.jacobian;
  qp.nonnegative = true;
  ConicQpSolver program(parameters);
  program.ResizeDiagonalLowRank(static_cast<int>(n), static_cast<int>(nv), true);
  result->program = program.SolveDiagonalLowRank(qp);
  result->solved_program = true;
  if (result->program.status != ConicQpStatus::kSolved) return false;
  *impulse = program.x();
  return true;
}

}  // namespace

FirstOrderResult SolveFirstOrderStep(const FirstOrderProblem& p,
                                     const ConicQpParameters& parameters) {
  FirstOrderResult result;
  if (!WellFormed(p)) return result;
  const double h = p.h;
  const double zeta = p.zeta > 0 ? p.zeta : 1 / h;
  const int num_rows = static_cast<int>(p.rows.size());

  // Row indices by class: b, and lam* in the order (n, r, s, u) of (162). A contact without
  // friction has no cone and no tangent impulse: its normal acts as a unilateral row of class n.
  std::vector<int> bilateral, normals, first_tangents, second_tangents, unilateral;
  std::vector<int> cone_contacts;  // indices into `normals` of contacts with mu > 0
  for (int i = 0; i < num_rows; ++i) {
    const SpringRow& row = p.rows[i];
    switch (row.type) {
      case SpringRowClass::kBilateral:
        bilateral.push_back(i);
        break;
      case SpringRowClass::kUnilateral:
        unilateral.push_back(i);
        break;
      case SpringRowClass::kNormal:
        if (row.friction > 0) {
          cone_contacts.push_back(static_cast<int>(normals.size()));
          first_tangents.push_back(i + 1);
          second_tangents.push_back(i + 2);
        }
        normals.push_back(i);
        i += 2;
        break;
      case SpringRowClass::kTangent:
        break;
    }
  }
  std::vector<int> star = normals;
  star.insert(star.end(), first_tangents.begin(), first_tangents.end());
  star.insert(star.end(), second_tangents.begin(), second_tangents.end());
  star.insert(star.end(), unilateral.begin(), unilateral.end());
  const int m = static_cast<int>(star.size());

  // M_eff = M + G_b^T W_b G_b and v_c = M_eff^-1 (M v0 + h f - h G_b^T K_b phi0_b).
  const Eigen::Index nv = p.mass.rows();
  Eigen::MatrixXd effective = p.mass;
  Eigen::VectorXd momentum = p.mass * p.velocity + h * p.force;
  for (const int i : bilateral) {
    const SpringRow& row = p.rows[i];
    const auto g = p.jacobian.row(i);
    effective.noalias() += Compliance(row, h) * g.transpose() * g;
    momentum -= h * row.stiffness * row.phi0 * g.transpose();
  }
  const Eigen::LLT<Eigen::MatrixXd> factor(effective);
  if (factor.info() != Eigen::Success) return result;
  const Eigen::VectorXd free_velocity = factor.solve(momentum);  // v_c

  Eigen::VectorXd star_impulse = Eigen::VectorXd::Zero(m);
  Eigen::MatrixXd response(nv, m);  // Lam G*^T
  const bool low_rank = m == num_rows && static_cast<int>(unilateral.size()) == m &&
                        m >= kLowRankRowsPerDof * nv &&
                        std::all_of(p.rows.begin(), p.rows.end(),
                                    [h](const SpringRow& row) { return Compliance(row, h) > 0; });
  // Unilateral rows only, star = 0..n-1 in order: the structured path; where its program fails
  // (the Woodbury solve's rounding, conic_qp.h), the dense path solves the same program.
  result.low_rank = low_rank && SolveUnilateralLowRank(p, zeta, factor, free_velocity, parameters,
                                                       &response, &star_impulse, &result);
  if (!result.low_rank && m > 0) {
    Eigen::MatrixXd g_star(m, nv);
    for (int k = 0; k < m; ++k) g_star.row(k) = p.jacobian.row(star[k]);
    response = factor.solve(g_star.transpose());
    const Eigen::MatrixXd delassus = g_star * response;           // G* Lam G*^T
    const Eigen::VectorXd row_velocity = g_star * free_velocity;  // G* v_c

    // H and g of (183)-(184): diag(zeta, 1, 1, zeta) plus a_k a_k^T per tangent row k, a_k =
    // e_k + W_k (G* Lam G*^T)_k (the row of P_t + E_t), and g = sum_k a_k d_k.
    const int num_normals = static_cast<int>(normals.size());
    const int num_tangents = static_cast<int>(first_tangents.size());
    Eigen::MatrixXd hessian = Eigen::MatrixXd::Zero(m, m);
    Eigen::VectorXd linear = Eigen::VectorXd::Zero(m);
    for (int k = 0; k < m; ++k) {
      const bool tangent = k >= num_normals && k < num_normals + 2 * num_tangents;
      hessian(k, k) += tangent ? 1.0 : zeta;
      if (!tangent) continue;
      const SpringRow& row = p.rows[star[k]];
      Eigen::VectorXd a = Compliance(row, h) * delassus.row(k).transpose();
      a[k] += 1;
      const double d =
          row.stiffness * row.phi0 + (h * row.stiffness + row.damping) * row_velocity[k];
      hessian.noalias() += a * a.transpose();
      linear += d * a;
    }

    // Constraints G x + s = h_vec, s in R+^l x (Q^3)^contacts: the spring laws of the n and u
    // rows (-(e_k + W_k D_k) x <= -q_k), lam_u >= 0, then each cone -(mu x_n, x_r, x_s) + s = 0.
    const int num_unilateral = static_cast<int>(unilateral.size());
    const int num_laws = num_normals + num_unilateral;
    const int num_cones = static_cast<int>(cone_contacts.size());
    const int rows = num_laws + num_unilateral + 3 * num_cones;
    Eigen::MatrixXd g_matrix = Eigen::MatrixXd::Zero(rows, m);
    Eigen::VectorXd h_vector = Eigen::VectorXd::Zero(rows);
    int r = 0;
    for (int k = 0; k < m; ++k) {
      const bool law = k < num_normals || k >= num_normals + 2 * num_tangents;
      if (!law) continue;
      const SpringRow& row = p.rows[star[k]];
      g_matrix.row(r) = -Compliance(row, h) * delassus.row(k);
      g_matrix(r, k) -= 1;
      h_vector[r] = row.stiffness * row.phi0 + (h * row.stiffness + row.damping) * row_velocity[k];
      ++r;
    }
    for (int k = num_normals + 2 * num_tangents; k < m; ++k) g_matrix(r++, k) = -1;
    ConeDimensions cones;
    cones.linear = num_laws + num_unilateral;
    for (int c = 0; c < num_cones; ++c) {
      const int n = cone_contacts[c];
      g_matrix(r, n) = -p.rows[normals[n]].friction;
      g_matrix(r + 1, num_normals + c) = -1;
      g_matrix(r + 2, num_normals + num_tangents + c) = -1;
      r += 3;
      cones.second_order.push_back(3);
    }
    // Equilibrated (header comment): lam* = D y with D = diag(H_kk^-1/2), each cone block of
    // G D divided by its norm.
    const Eigen::VectorXd unit = hessian.diagonal().cwiseSqrt().cwiseInverse();  // D
    hessian = unit.asDiagonal() * hessian * unit.asDiagonal();
    linear = unit.cwiseProduct(linear);
    g_matrix = g_matrix * unit.asDiagonal();
    for (int i = cones.linear; i < rows; i += 3) {
      const double norm = g_matrix.middleRows(i, 3).norm();
      g_matrix.middleRows(i, 3) /= norm;
    }
    ConicQpSolver program(parameters);
    program.Resize(m, cones);
    result.program = program.Solve(hessian, linear, g_matrix, h_vector);
    result.solved_program = true;
    // Should it fail: the second try with every orthant row (the laws and lam_u >= 0) of unit
    // length; the third with y = scale y' as well, scale = max(|h|_inf, |c|_inf), so that the
    // answer is O(1). Stiff rows over light dofs (a joint limit of 1e8 N m/rad on a link of
    // 1e-2 kg m^2: W_k D_k ~ 1e6, impulses of 1e6 N s) leave the first program's Newton systems at
    // the floor of rounding. Both blur what the first resolves (the stopping rule is relative to
    // the smaller rows, and the scaled program's tolerances to O(1) values), so they come after.
    double scale = 1;
    for (int attempt = 1; attempt < 3 && result.program.status != ConicQpStatus::kSolved;
         ++attempt) {
      if (attempt == 1) {
        for (int i = 0; i < cones.linear; ++i) {
          const double norm = g_matrix.row(i).norm();
          g_matrix.row(i) /= norm;
          h_vector[i] /= norm;
        }
      } else {
        scale = std::max(h_vector.lpNorm<Eigen::Infinity>(), linear.lpNorm<Eigen::Infinity>());
        if (!(scale > 0)) scale = 1;
        h_vector /= scale;
        linear /= scale;
      }
      const int iterations = result.program.iterations;
      result.program = program.Solve(hessian, linear, g_matrix, h_vector);
      result.program.iterations += iterations;
      result.retries = attempt;
    }
    if (result.program.status == ConicQpStatus::kSolved) {
      star_impulse = scale * unit.cwiseProduct(program.x());
    } else {  // the last resort: ADMM (SolveConicQpByAdmm)
      Eigen::VectorXd y;
      result.admm = true;
      if (!SolveConicQpByAdmm(hessian, linear, g_matrix, h_vector, cones, kAdmmIterations,
                              kAdmmTolerance, &y, &result.admm_iterations)) {
        return result;
      }
      star_impulse = scale * unit.cwiseProduct(y);
    }
  }

  // v1 = v_c + h Lam G*^T lam*, lam_b = -K_b phi0_b - (h K_b + B_b) G_b v1.
  result.velocity = free_velocity;
  if (m > 0) result.velocity.noalias() += h * response * star_impulse;
  result.lambda = Eigen::VectorXd::Zero(num_rows);
  for (int k = 0; k < m; ++k) result.lambda[star[k]] = star_impulse[k];
  for (const int i : bilateral) {
    const SpringRow& row = p.rows[i];
    result.lambda[i] = -row.stiffness * row.phi0 -
                       (h * row.stiffness + row.damping) * p.jacobian.row(i).dot(result.velocity);
  }
  result.ok = true;
  return result;
}

FirstOrderResult SolveBilateralConstraintSpace(const FirstOrderProblem& p) {
  FirstOrderResult result;
  if (!WellFormed(p)) return result;
  for (const SpringRow& row : p.rows) {
    if (row.type != SpringRowClass::kBilateral) return result;
  }
  const double h = p.h;
  const Eigen::Index n = p.jacobian.rows();
  const Eigen::LLT<Eigen::MatrixXd> mass(p.mass);
  if (mass.info() != Eigen::Success) return result;
  const Eigen::MatrixXd response = mass.solve(p.jacobian.transpose());  // M^-1 G^T
  const Eigen::MatrixXd delassus = p.jacobian * response;               // S
  Eigen::VectorXd compliance(n), stiffness(n), phi0(n), damping(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    compliance[i] = Compliance(p.rows[i], h);
    stiffness[i] = p.rows[i].stiffness;
    damping[i] = p.rows[i].damping;
    phi0[i] = p.rows[i].phi0;
  }
  // (61): (I + S W) phid1 = phid0 - h S K phi0 + h G M^-1 f.
  const Eigen::MatrixXd system =
      Eigen::MatrixXd::Identity(n, n) + delassus * compliance.asDiagonal();
  const Eigen::VectorXd rhs = p.jacobian * p.velocity -
                              h * delassus * stiffness.cwiseProduct(phi0) +
                              h * p.jacobian * mass.solve(p.force);
  const Eigen::VectorXd phid1 = system.partialPivLu().solve(rhs);
  // (62), (53), (37).
  result.lambda = -stiffness.cwiseProduct(phi0 + h * phid1) - damping.cwiseProduct(phid1);
  result.velocity = p.velocity + h * mass.solve(p.jacobian.transpose() * result.lambda + p.force);
  result.ok = true;
  return result;
}

}  // namespace alsim
