// SAP's regularized friction cone for one contact (the SAP paper, Sec. VII, eqs. 16, 18, 29-31
// and App. D; digest seed-001-sap.md 5.1, 6.2, 6.3): with R = diag(R_n, R_t, R_t) in alsim's row
// order (normal, tangent1, tangent2), x = v_c - vhat_c and y = -R^-1 x, the impulse is the
// projection of y onto the friction cone F = {|gamma_t| <= mu gamma_n} in the R-norm,
//   stiction   (y_r <= mu y_n):               gamma = y
//   sliding    (-muhat y_r < y_n < y_r / mu):  gamma_n = (y_n + muhat y_r) / (1 + mutilde^2),
//                                              gamma_t = mu gamma_n y_t / y_r
//   no contact (y_n <= -muhat y_r):            gamma = 0
// with y_r = |y_t|, mutilde = mu sqrt(R_t / R_n), muhat = mu R_t / R_n (eq. 18 with the sliding
// denominator 1 + mutilde^2, the digest's correction). The contact's cost is 1/2 gamma^T R gamma
// (eq. 29), whose derivative in x is -gamma and whose Hessian is G = dgamma/dy R^-1 (eq. 31, the
// sliding block as the digest reconstructs it, checked by finite differences in sap_cone_test).
#pragma once

namespace alsim {

struct SapConeState {
  double impulse[3] = {0, 0, 0};  // gamma (normal, tangent1, tangent2), N s
  double cost = 0;                // 1/2 gamma^T R gamma
  char zone = 0;                  // 0 no contact, 1 stiction, 2 sliding
};

// The state at x (3); `hessian` (3 x 3, column-major), when not null, receives G.
SapConeState SapConeAt(const double* x, double normal_regularization, double tangent_regularization,
                       double mu, double* hessian);

}  // namespace alsim
