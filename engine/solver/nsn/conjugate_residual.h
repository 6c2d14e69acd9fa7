// The linear solver of each non-smooth Newton iteration (Macklin et al. 2019, seed 002, Sec 8.2,
// issue 48; digest /work/shared/research/seed-002-nsn.md, sections 4.4, 5.3 and 12 item 6): the
// Schur system (59), A x = b with A = J H^-1 J^T + C + eps I, solved inexactly with a fixed
// iteration count, from x0 = 0 (the paper gives no initial guess; 0 is the natural one).
// A is never formed: a solve takes y = A x as a callback (LinearOperatorRef) and A's diagonal,
// P = diag(A), the Jacobi preconditioner, which the caller has computed anyway for the
// complementarity factors (66).
//
// Jacobi-preconditioned Conjugate Residual (the paper's; digest 5.3, Saad's left-preconditioned
// form), one mat-vec and two inner products per iteration:
//   r = b, z = P^-1 r, p = z, Az = A z, Ap = Az, rho = <z, Az>
//   repeat:  y = P^-1 Ap,  alpha = rho / <Ap, y>
//            x += alpha p,  r -= alpha Ap,  z -= alpha y
//            Az = A z,  rho' = <z, Az>,  beta = rho' / rho,  rho = rho'
//            p = z + beta p,  Ap = Az + beta Ap
// This is CR on P^-1 A x = P^-1 b in the inner product <u, v>_P = u^T P v, in which P^-1 A is
// self-adjoint and positive definite when A is SPD: iteration k minimizes the preconditioned
// residual z = P^-1 r in the P-norm, ||z||_P = sqrt(r^T P^-1 r) = ||r||_{P^-1}, over
// x in K_k(P^-1 A, P^-1 b), so ||r_k||_{P^-1} is non-increasing in k (Fong and Saunders 2012; with
// P = I it is MINRES's ||r||_2 and its iterates). That norm is the one every solver here reports
// and stops on, for all four methods alike.
// Early exit ("breakdown"): rho or <Ap, y> not above kKrylovBreakdown rho_0 (a singular or
// indefinite direction, or an exactly converged system), or not finite; x is then the last iterate.
//
// Ablations (digest 12 item 6, Figs 11 and 18), with the same options, norm and history:
//   Jacobi-preconditioned CG:  minimizes the A-norm of the error, so ||r||_{P^-1} need not
//     decrease (Fig 11's erratic residual): r = b, z = P^-1 r, p = z, rz = <r, z>;
//     repeat Ap = A p, alpha = rz / <p, Ap>, x += alpha p, r -= alpha Ap, z = P^-1 r,
//     rz' = <r, z>, p = z + (rz' / rz) p.
//   Jacobi iteration:  x += omega P^-1 (b - A x), omega = KrylovOptions::relaxation (1 by
//     default; the plain method diverges unless A's rows are diagonally dominant enough).
//   Gauss-Seidel:  one forward sweep per iteration, x_i += omega (b_i - (A x)_i) / A_ii for
//     i = 0 .. n-1 in order, with the x updated so far. It needs A's rows one at a time, so it
//     takes a row callback (RowProductRef: (A x)_i = row i of A times x) instead of the mat-vec;
//     a dense matrix is passed as a lambda over its rows. Its residual (history, tolerance, the
//     final value) costs one more pass of n row products.
//   A dense LDL^T of an explicit Schur matrix is not here (a later ablation).
//
// Preconditioner: diagonal == nullptr means P = I (unpreconditioned CR and CG; Jacobi and
// Gauss-Seidel need the diagonal). An entry that is not positive and finite is taken as 1.
//
// Determinism and allocation: every inner product sums in index order, in a plain loop (no
// parallel or vectorized reduction); the callbacks are the caller's to make deterministic.
// Storage is a KrylovWorkspace, grow-only: Resize(n) allocates only when n exceeds its capacity,
// and a solve of size n <= capacity allocates nothing (a solve calls Resize itself, so an unsized
// workspace works, allocating on first use). The callbacks are non-owning references: building
// one from a lambda allocates nothing.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

namespace alsim {

// A non-owning reference to a callable void(const double* x, double* y) computing y = A x for the
// solve's n (x and y never alias). The callable must outlive the reference: pass a named lambda,
// or a temporary directly as a solve's argument.
class LinearOperatorRef {
 public:
  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, LinearOperatorRef>>>
  LinearOperatorRef(F&& f)  // NOLINT(google-explicit-constructor): a callback parameter
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_(&Call<std::remove_reference_t<F>>) {}

  void operator()(const double* x, double* y) const { call_(object_, x, y); }

 private:
  template <typename F>
  static void Call(void* object, const double* x, double* y) {
    (*static_cast<F*>(object))(x, y);
  }

  void* object_;
  void (*call_)(void*, const double*, double*);
};

// A non-owning reference to a callable double(int i, const double* x) returning (A x)_i.
class RowProductRef {
 public:
  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RowProductRef>>>
  RowProductRef(F&& f)  // NOLINT(google-explicit-constructor): a callback parameter
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_(&Call<std::remove_reference_t<F>>) {}

  double operator()(int i, const double* x) const { return call_(object_, i, x); }

 private:
  template <typename F>
  static double Call(void* object, int i, const double* x) {
    return (*static_cast<F*>(object))(i, x);
  }

  void* object_;
  double (*call_)(void*, int, const double*);
};

// rho and <Ap, y> (CR), <p, Ap> and <r, z> (CG) at or under this multiple of the first rho
// (CR) or <r, z> (CG) end the solve.
inline constexpr double kKrylovBreakdown = 1e-30;

struct KrylovOptions {
  int max_iterations = 40;        // M, the paper's fixed count (Figs 16 and 18)
  double relative_tolerance = 0;  // > 0: stop once ||r||_{P^-1} <= tol ||b||_{P^-1}; 0: none
  double relaxation = 1;          // omega of the Jacobi and Gauss-Seidel iterations
};

// Where a solve writes ||r_k||_{P^-1} for k = 0 (r_0 = b) .. iterations, as far as capacity
// allows; size is set to the count written. With P = I these are ||r_k||_2.
struct ResidualHistory {
  double* values = nullptr;
  int capacity = 0;
  int size = 0;
};

struct KrylovResult {
  int iterations = 0;           // updates of x made
  double initial_residual = 0;  // ||b||_{P^-1}
  double residual = 0;          // ||b - A x||_{P^-1} of the returned x, as the method tracks it
  bool converged = false;       // the relative tolerance was met (or b = 0)
  bool breakdown = false;       // ended early on a vanishing rho or curvature (see above)
};

// The grow-only vectors of the solves; one workspace serves every method.
class KrylovWorkspace {
 public:
  KrylovWorkspace() = default;
  KrylovWorkspace(const KrylovWorkspace&) = delete;
  KrylovWorkspace& operator=(const KrylovWorkspace&) = delete;
  KrylovWorkspace(KrylovWorkspace&&) = default;
  KrylovWorkspace& operator=(KrylovWorkspace&&) = default;

  // Makes room for systems of n rows: allocates only when n > capacity().
  void Resize(int n);
  int capacity() const { return capacity_; }

  // Vector k (0 .. kVectors-1) of the current capacity.
  double* vector(int k) { return storage_.data() + static_cast<std::size_t>(k) * capacity_; }

  static constexpr int kVectors = 7;

 private:
  std::vector<double> storage_;
  int capacity_ = 0;
};

// Each solve: x (n entries, the caller's) receives the solution from x0 = 0; b is not modified;
// history may be nullptr. n >= 0.
KrylovResult JacobiConjugateResidual(LinearOperatorRef a, const double* diagonal, const double* b,
                                     int n, const KrylovOptions& options,
                                     KrylovWorkspace* workspace, double* x,
                                     ResidualHistory* history = nullptr);

KrylovResult JacobiConjugateGradient(LinearOperatorRef a, const double* diagonal, const double* b,
                                     int n, const KrylovOptions& options,
                                     KrylovWorkspace* workspace, double* x,
                                     ResidualHistory* history = nullptr);

// diagonal is required (A's diagonal).
KrylovResult JacobiIteration(LinearOperatorRef a, const double* diagonal, const double* b, int n,
                             const KrylovOptions& options, KrylovWorkspace* workspace, double* x,
                             ResidualHistory* history = nullptr);

// diagonal is required (A's diagonal, as the rows give it).
KrylovResult GaussSeidelIteration(RowProductRef rows, const double* diagonal, const double* b,
                                  int n, const KrylovOptions& options, KrylovWorkspace* workspace,
                                  double* x, ResidualHistory* history = nullptr);

}  // namespace alsim
