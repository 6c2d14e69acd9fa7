#include "engine/solver/canal/canal_solver.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/core/parallel.h"
#include "engine/solver/canal/cone_operators.h"
#include "engine/solver/island_schedule.h"
#include "engine/solver/newton/newton_loop.h"

namespace alsim {

// The Table II baselines factor their dr/dv dense: H is for CANAL's exact Newton alone.
CanalSolver::CanalSolver(const Model& m, SolverType type)
    : IslandSolver(m), hessian_(type == SolverType::kCanal), type_(type), penalty_(m) {
  const size_t max_constraints = MaxConstraints(m);
  jacobian_.Reserve(m, max_constraints);
  hessian_.Reserve(m, max_constraints);
  velocity_.reserve(m.nv);
  rhs_.reserve(m.nv);
  newton_residual_.reserve(m.nv);
  product_.reserve(m.nv);
  for (std::vector<double>* rows : {&argument_, &impulse_, &outer_impulse_, &shifted_bias_,
                                    &row_velocity_, &row_direction_, &rounding_}) {
    rows->reserve(3 * max_constraints);
  }
  derivative_.reserve(9 * max_constraints);
  penalty_scale_.reserve(max_constraints);
  dense_.reserve(m.nsubsystem);
  island_stats_.reserve(m.nsubsystem);
  stalled_islands_.reserve(m.nsubsystem);
}

namespace {

// The De Saxce update's damping (SolveIsland): after this many outer iterations in a row whose
// De Saxce change grew, omega is halved, down to kMinDesaxceDamping [OURS].
constexpr int kDesaxceGrowthsBeforeDamping = 3;
constexpr double kMinDesaxceDamping = 0.125;

// Narrows the piece [*left, *right] around alpha to exclude a kink at `root`.
void ExcludeKink(double root, double alpha, double* left, double* right) {
  if (root > alpha) {
    *right = std::min(*right, root);
  } else if (root < alpha) {
    *left = std::max(*left, root);
  } else {
    *left = *right = alpha;
  }
}

// The roots t of a t^2 + b t + c = 0 at which a contact's argument x(t) = x0 - t w meets the
// boundary of a case (see ContactKinks), given to `keep` (which checks the sign condition).
template <class Keep>
void QuadraticRoots(double a, double b, double c, const Keep& keep) {
  const double scale = std::abs(a) + std::abs(b) + std::abs(c);
  if (!(scale > 0)) return;
  if (std::abs(a) <= 1e-14 * scale) {  // linear
    if (b != 0) keep(-c / b);
    return;
  }
  const double discriminant = b * b - 4 * a * c;
  if (discriminant < 0) return;
  // The cancellation-free pair: q = -(b + sign(b) sqrt(disc)) / 2, roots q / a and c / q.
  const double q = -0.5 * (b + std::copysign(std::sqrt(discriminant), b));
  keep(q / a);
  if (q != 0) keep(c / q);
}

// The kinks of a contact's proximal projection along x(t) = x0 - t w (alsim's order: normal,
// t1, t2; s(t) = ||x_t(t)||): the stick boundary s = mu x_n (x_n >= 0) and the open boundary
// mu s = -x_n (x_n <= 0), i.e. the roots of the quadratics mu^2 x_n^2 - s^2 and x_n^2 - mu^2 s^2
// with that sign of x_n(t).
void ContactKinks(const double* x0, const double* w, double mu, double alpha, double* left,
                  double* right) {
  const double mu2 = mu * mu;
  const double wn2 = w[0] * w[0], wt2 = w[1] * w[1] + w[2] * w[2];
  const double xw_n = x0[0] * w[0], xw_t = x0[1] * w[1] + x0[2] * w[2];
  const double xn2 = x0[0] * x0[0], xt2 = x0[1] * x0[1] + x0[2] * x0[2];
  auto normal_at = [&](double t) { return x0[0] - t * w[0]; };
  QuadraticRoots(mu2 * wn2 - wt2, -2 * (mu2 * xw_n - xw_t), mu2 * xn2 - xt2, [&](double t) {
    if (normal_at(t) >= 0) ExcludeKink(t, alpha, left, right);
  });
  QuadraticRoots(wn2 - mu2 * wt2, -2 * (xw_n - mu2 * xw_t), xn2 - mu2 * xt2, [&](double t) {
    if (normal_at(t) <= 0) ExcludeKink(t, alpha, left, right);
  });
}

// phi'(alpha), phi''(alpha) of eq. (26) from v_hat, d, A d and J d (digest 5.6):
//   phi'  = d^T A v + alpha d^T A d - d^T b - sum_i (J_i d)^T T_i(x_i - alpha beta_i J_i d)
//   phi'' = d^T A d + sum_i beta_i (J_i d)^T D_i(alpha) (J_i d)
// and the piece around alpha (exact_line_search.h): every row's kinks along x_i(t) = x_i -
// t beta_i J_i d (a limit's x = 0, a soft row's clamp ends, a contact's ContactKinks); phi' is
// affine there unless a contact slips (its T_i is then not linear in t); a friction row's box
// ends are kinks too. The rounding bound is
// a few unit round-offs of the summed magnitudes of phi''s terms, a row's being |J_i d| times
// those of x_i (T_i is 1-Lipschitz, so x_i's rounding passes into lambda_i).
struct Phi final : LineSearchFunction {
  const ConstraintSet* set;
  const int* constraints;
  int num_constraints;
  const double* argument;
  const double* row_direction;
  const AlIsland* island;  // beta_i
  double d_a_v, d_a_d, d_b;
  void Evaluate(double alpha, LineSearchSample* sample) const override {
    double slope = d_a_v + alpha * d_a_d - d_b;
    double curvature = d_a_d;
    double magnitude = std::abs(d_a_v) + std::abs(alpha * d_a_d) + std::abs(d_b);
    double left = -std::numeric_limits<double>::infinity();
    double right = std::numeric_limits<double>::infinity();
    bool affine = true;
    for (int s = 0; s < num_constraints; ++s) {
      const Constraint& c = set->constraints[constraints[s]];
      const double beta = island->Penalty(constraints[s]);
      const int row = c.row_adr;
      const double* x0 = argument + row;
      const double* jd = row_direction + row;
      double x[3], w[3], lambda[3], D[9];
      for (int r = 0; r < c.dim; ++r) {
        w[r] = beta * jd[r];
        x[r] = x0[r] - alpha * w[r];
      }
      CanalConstraintImpulse(c, beta, x, lambda, D);
      for (int r = 0; r < c.dim; ++r) {
        slope -= jd[r] * lambda[r];
        // lambda carries the rounding of x's terms (x0 and alpha w), which may cancel.
        magnitude += std::abs(jd[r]) * (std::abs(x0[r]) + std::abs(alpha * w[r]));
        double dj = 0;
        for (int k = 0; k < c.dim; ++k) dj += D[c.dim * r + k] * jd[k];
        curvature += beta * jd[r] * dj;
      }
      switch (c.type) {
        case ConstraintType::kContact: {
          ContactKinks(x0, w, c.friction, alpha, &left, &right);
          // Slip: D is neither I nor 0 (ProximalConeProjection's cases).
          const double s_t = std::sqrt(x[1] * x[1] + x[2] * x[2]);
          if (!(s_t <= c.friction * x[0]) && !(c.friction * s_t <= -x[0])) affine = false;
          break;
        }
        case ConstraintType::kLimit:
          if (w[0] != 0) ExcludeKink(x0[0] / w[0], alpha, &left, &right);
          break;
        case ConstraintType::kSoft: {
          // g(x) = D x - offset meets lambda_lower or lambda_upper at x = (bound + offset) / D.
          const double D_soft = c.soft_damping / (c.soft_damping + beta);
          const double offset = beta * c.soft_bias / (c.soft_damping + beta);
          if (D_soft > 0 && w[0] != 0) {
            for (const double bound : {c.lambda_lower, c.lambda_upper}) {
              if (std::isfinite(bound)) {
                ExcludeKink((x0[0] - (bound + offset) / D_soft) / w[0], alpha, &left, &right);
              }
            }
          }
          break;
        }
        case ConstraintType::kFriction:  // x(t) meets the box's ends at t = (x0 - bound) / w
          if (w[0] != 0) {
            for (const double bound : {c.lambda_lower, c.lambda_upper}) {
              ExcludeKink((x0[0] - bound) / w[0], alpha, &left, &right);
            }
          }
          break;
        case ConstraintType::kEquality:
          break;
      }
    }
    sample->first = slope;
    sample->second = curvature;
    sample->left = std::min(left, alpha);
    sample->right = std::max(right, alpha);
    sample->affine = affine;
    sample->rounding = 8 * std::numeric_limits<double>::epsilon() * magnitude;
  }
};

}  // namespace

InnerSolveResult CanalSolver::ExactNewton(AlIsland& problem, const SolverOptions& options,
                                          double deadline_us, int island,
                                          DenseNewtonWorkspace* dense,
                                          CanalIslandStatistics* stats) {
  const ConstraintSet& set = *problem.set;
  const CanalParameters& parameters = options.canal;
  const int n = problem.n;
  const int dof0 = hessian_.pattern().dof_adr(island);
  double* velocity = velocity_.data() + dof0;
  double* residual = newton_residual_.data() + dof0;
  double* product = product_.data() + dof0;
  const double* rhs = problem.rhs;

  // H = A + sum_i beta_i J_i^T D_i J_i (eq. 24): each constraint's block in parallel, then the sum
  // in constraint order (island_hessian.h) and the numeric factorization.
  auto factor_hessian = [&] {
    if (dense != nullptr) {  // H dense (AssembleResidualJacobian: for CANAL's T it is H)
      AssembleResidualJacobian(problem, dense->factors.data());
      ++stats->factorizations;
      return DenseLuFactor(dense->factors.data(), n, dense->pivot.data());
    }
    problem.ForConstraints([&](int c) {
      const Constraint& constraint = set.constraints[c];
      const int dim = constraint.dim;
      const double* D = derivative_.data() + 3 * constraint.row_adr;
      const double beta = problem.Penalty(c);
      double* pair = hessian_.pair_values(c);
      const int first = jacobian_.entry_adr[c], last = first + jacobian_.entry_num[c];
      for (int b = first; b < last; ++b) {
        double w[3] = {0, 0, 0};  // beta_i D J_b
        for (int r = 0; r < dim; ++r) {
          for (int k = 0; k < dim; ++k) w[r] += D[dim * r + k] * jacobian_.value[b][k];
          w[r] *= beta;
        }
        for (int a = first; a <= b; ++a) {
          double sum = 0;
          for (int r = 0; r < dim; ++r) sum += jacobian_.value[a][r] * w[r];
          *pair++ = sum;
        }
      }
    });
    hessian_.AssembleBlocks(island, problem.constraints, problem.num_constraints);
    ++stats->factorizations;
    return hessian_.Factor(island);
  };

  Phi phi;
  phi.set = &set;
  phi.constraints = problem.constraints;
  phi.num_constraints = problem.num_constraints;
  phi.argument = argument_.data();
  phi.row_direction = row_direction_.data();
  phi.island = &problem;

  // The Newton loop (newton_loop.h) with CANAL's pieces: the stop on ||r|| (the inner
  // tolerance), d and phi along it, the step and r at the new v_hat.
  InnerSolveResult result;
  auto evaluate = [&] {
    problem.Evaluate(velocity, /*with_derivative=*/true);
    result.residual = problem.Residual(velocity, residual, product);
  };
  auto converged = [&] { return result.residual < problem.Tolerance(); };
  auto newton_direction = [&](double* slope) {
    if (!factor_hessian()) {
      ++stats->failed_factorizations;
      return false;
    }
    // d = -H^{-1} r (eq. 25), kept in `residual`; -r kept in `product` for phi'(0) = r^T d.
    for (int k = 0; k < n; ++k) residual[k] = product[k] = -residual[k];
    if (dense != nullptr) {
      DenseLuSolve(dense->factors.data(), dense->pivot.data(), n, residual);
    } else {
      hessian_.Solve(island, residual);
    }
    const double* direction = residual;
    // phi'(0) = grad h . d = r^T d (= -d^T H d < 0), from r itself rather than an evaluation of
    // phi' at 0, whose sum cancels the large terms d^T A v and d^T b.
    double slope0 = 0;
    for (int k = 0; k < n; ++k) slope0 -= product[k] * direction[k];
    problem.MultiplyMass(direction, product);
    double d_a_v = 0, d_a_d = 0, d_b = 0;
    // A is symmetric: d^T A v = v^T A d.
    for (int k = 0; k < n; ++k) {
      d_a_v += velocity[k] * product[k];
      d_a_d += direction[k] * product[k];
      d_b += direction[k] * rhs[k];
    }
    problem.ForConstraints([&](int c) {
      problem.Apply(c, direction, row_direction_.data() + set.constraints[c].row_adr);
    });
    phi.d_a_v = d_a_v;
    phi.d_a_d = d_a_d;
    phi.d_b = d_b;
    *slope = slope0;
    return true;
  };
  auto take_step = [&](double alpha) {
    for (int k = 0; k < n; ++k) velocity[k] += alpha * residual[k];  // `residual` holds d
    evaluate();
  };
  evaluate();
  const NewtonLoopResult loop =
      NewtonLoop(converged, newton_direction, phi, take_step, parameters.max_newton_steps,
                 parameters.line_search, options, deadline_us);
  result.steps = loop.steps;
  result.out_of_time = loop.out_of_time;
  result.broken = loop.broken;
  stats->newton_steps += loop.steps;
  stats->line_search_iterations += loop.line_search_evaluations;
  result.tolerance = problem.Tolerance();
  return result;
}

void CanalSolver::SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                              double deadline_us, int island) {
  ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  IslandSolveResult& result = island_results_[island];
  CanalIslandStatistics& stats = island_stats_[island];
  result = IslandSolveResult{};
  stats = CanalIslandStatistics{};
  const CanalParameters& parameters = options.canal;
  const bool strict = type_ != SolverType::kCanal;  // a Table II baseline: eq. (19), strict T
  const int* constraints = islands.constraints.data() + islands.constraint_adr[island];
  const int num_constraints = islands.constraint_adr[island + 1] - islands.constraint_adr[island];
  const IslandSparsePattern& pattern = hessian_.pattern();  // H's, built below
  const int n = pattern.dofs(island);
  const int subsystem_begin = islands.subsystem_adr[island];
  const int subsystem_end = islands.subsystem_adr[island + 1];
  double* velocity = velocity_.data() + pattern.dof_adr(island);
  double* rhs = rhs_.data() + pattern.dof_adr(island);
  double* residual = newton_residual_.data() + pattern.dof_adr(island);
  const int* global_dofs = pattern.global_dofs(island);
  const int* local_dof = pattern.local_dofs();  // numbered by hessian_.Build, below
  const bool record = record_history_ && island == 0;
  if (record) {
    history_.clear();
    jacobian_history_.clear();
  }

  // Each island dof i of the island's subsystems, in order: visit(global dof, local dof).
  auto for_dofs = [&](const auto& visit) {
    for (int s = subsystem_begin; s < subsystem_end; ++s) {
      const int j = islands.subsystems[s];
      for (int i = m.subsystem_dof_adr[j]; i < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j];
           ++i) {
        visit(i, local_dof[i]);
      }
    }
  };

  // Setup: Jacobian rows, the local dofs and H's pattern (symbolic analysis only if it changed).

  AlIsland problem;
  problem.set = &set;
  problem.jacobian = &jacobian_;
  problem.local_dof = local_dof;
  problem.constraints = constraints;
  problem.num_constraints = num_constraints;
  problem.n = n;
  problem.column_start = pattern.column_start(island);
  problem.row_index = pattern.row_index(island);
  problem.mass = pattern.mass(island);
  problem.rhs = rhs;
  problem.outer_impulse = outer_impulse_.data();
  problem.shifted_bias = shifted_bias_.data();
  problem.argument = argument_.data();
  problem.impulse = impulse_.data();
  problem.row_velocity = row_velocity_.data();
  problem.derivative = derivative_.data();
  problem.rounding = rounding_.data();
  problem.penalty_scale = penalty_scale_.data();

  problem.ForConstraints([&](int c) { jacobian_.Fill(m, d, c); });
  hessian_.Build(m, d, islands, jacobian_, island);
  // s_i: 1, or the effective mass dim_i / trace(J_i A^{-1} J_i^T) from A's tree factor, computed
  // afresh every step (admm_penalty.h's kDelassus scale with beta0 = 1).
  if (parameters.penalty == CanalPenalty::kEffectiveMass) {
    penalty_.Scales(m, d, islands, island, 1.0, PenaltyScaling::kDelassus, 1,
                    penalty_scale_.data());
  } else {
    for (int s = 0; s < num_constraints; ++s) penalty_scale_[constraints[s]] = 1.0;
  }

  for_dofs([&](int i, int k) { rhs[k] = d.solver_rhs[i]; });
  problem.newton_threshold = parameters.newton_tolerance * std::max(1.0, IslandNorm(rhs, n));
  DenseNewtonWorkspace* dense = nullptr;
  if (strict) {
    dense = dense_[island].get();
    dense->Resize(n);
  }

  // One AL loop (Algorithm 1) with the strict T and the baseline's inner solve (`strict_loop`),
  // or CANAL's; into `result` and `stats`. It ends at line 16, at a broken input (a non-finite
  // J_r or H), or, for a baseline with CanalParameters::baselines.canal_fallback, at an inner
  // failure (before that outer iteration's multiplier update).
  long num_rows = 0;  // the island's constraint rows
  for (int s = 0; s < num_constraints; ++s) num_rows += set.constraints[constraints[s]].dim;
  enum class LoopEnd { kDone, kBroken, kInnerFailure };
  const bool fallback = strict && parameters.baselines.canal_fallback;
  auto run_loop = [&](bool strict_loop) {
    problem.strict = strict_loop;
    result = IslandSolveResult{};
    const bool uniform = parameters.penalty == CanalPenalty::kUniform;
    const double beta_max = uniform ? parameters.beta_max : parameters.relative_beta_max;
    double beta = uniform ? parameters.beta0 : parameters.relative_beta0;
    result.beta0 = beta;

    // lambda^0: the warm start (u^0 = -lambda^0). z^0 = J v_k [OURS, as SubADMM's], which sets
    // the first De Saxce term (CANAL only: the baselines' strict T needs none, e~ = e);
    // v_hat^0 = v_free, or v_k (CanalParameters).
    for_dofs([&](int i, int k) { velocity[k] = d.qvel[i]; });
    problem.ForConstraints([&](int c) {
      const Constraint& constraint = set.constraints[c];
      const int row = constraint.row_adr;
      for (int r = 0; r < constraint.dim; ++r) {
        outer_impulse_[row + r] = set.lambda[row + r];
        shifted_bias_[row + r] = constraint.type == ConstraintType::kSoft ? 0.0 : set.bias[row + r];
      }
      if (constraint.type == ConstraintType::kContact && !strict_loop) {
        double z[3];
        problem.Apply(c, velocity, z);
        shifted_bias_[row] += constraint.friction * std::sqrt(z[1] * z[1] + z[2] * z[2]);
      }
    });
    if (!parameters.start_from_previous_velocity) {
      for_dofs([&](int i, int k) { velocity[k] = d.v_free[i]; });
    }

    int outer = 0;
    double previous_al = 0;
    // The De Saxce update's damping omega and the outer iterations in a row whose change grew.
    double omega = 1, previous_lag = 0;
    int growths = 0;
    // The outer iterate (lambda^l, e~^l) gathered over the island's rows into `state` (w) and,
    // after the iteration, its image (g); the accelerator extrapolates g from past pairs.
    const int memory = parameters.anderson_memory;
    const long state_size =
        (anderson_offset_[island + 1] - anderson_offset_[island]) > 0 ? 2L * num_rows : 0;
    double* state = anderson_storage_.data() + anderson_offset_[island];
    double* image = state + state_size;
    AndersonAccelerator anderson(image + state_size, static_cast<int>(state_size), memory);
    const bool accelerate = memory > 0 && state_size > 0 && !strict_loop;
    auto gather = [&](double* out) {
      long k = 0;
      for (int s = 0; s < num_constraints; ++s) {
        const Constraint& constraint = set.constraints[constraints[s]];
        for (int r = 0; r < constraint.dim; ++r) {
          out[k] = outer_impulse_[constraint.row_adr + r];
          out[num_rows + k++] = shifted_bias_[constraint.row_adr + r];
        }
      }
    };
    auto scatter = [&](const double* in) {
      long k = 0;
      for (int s = 0; s < num_constraints; ++s) {
        const Constraint& constraint = set.constraints[constraints[s]];
        for (int r = 0; r < constraint.dim; ++r) {
          outer_impulse_[constraint.row_adr + r] = in[k];
          shifted_bias_[constraint.row_adr + r] = in[num_rows + k++];
        }
      }
    };
    double beta_of_history = beta;
    // The stall test (CanalParameters::stall_window): the last residual that halved the one before
    // it, and its outer iteration.
    const bool stall_stop =
        !strict_loop && type_ == SolverType::kCanal && parameters.subadmm_fallback_iterations > 0;
    double reference = std::numeric_limits<double>::infinity();
    int reference_at = 0;
    while (true) {
      // The inner solve (Alg. 1 lines 6-14), from the last outer iterate.
      problem.beta = beta;
      if (accelerate) gather(state);
      InnerSolveResult inner;
      if (strict_loop) {
        NewtonBaselineCounts counts;
        std::vector<NewtonJacobianRecord>* records = record ? &jacobian_history_ : nullptr;
        inner =
            type_ == SolverType::kCanalTrDogleg
                ? TrustRegionDoglegSolve(problem, velocity, residual, parameters, options,
                                         deadline_us, *dense, &counts, global_dofs, records)
                : DampedSemismoothNewtonSolve(problem, velocity, residual, parameters, options,
                                              deadline_us, *dense, &counts, global_dofs, records);
        stats.newton_steps += inner.steps;
        stats.factorizations += counts.factorizations;
        stats.rejected_steps += counts.rejected_steps;
        stats.line_search_iterations += counts.evaluations;
        stats.gradient_steps += counts.gradient_steps;
        if (inner.broken) ++stats.failed_factorizations;
      } else {
        inner = ExactNewton(problem, options, deadline_us, island, dense, &stats);
      }
      const bool inner_failure = !inner.converged() && !inner.out_of_time;
      if (inner_failure) ++stats.inner_failures;
      if (inner.broken) return LoopEnd::kBroken;
      if (inner_failure && strict_loop && fallback) return LoopEnd::kInnerFailure;
      const double newton_residual = inner.residual;

      // Eq. (12) with u = -lambda: z_i = J_i v + (lambda^{l+1}_i - lambda^l_i) / beta_i, the AL
      // residual ||J v - z|| over every row, and the next De Saxce term p from z_t.
      // [OURS] The stop test adds ||p^{l+1} - p^l||: at a slipping contact the converged
      // surrogate leaves a normal velocity error of p^{l+1} - p^l (C* boundary: z_n + e_n + p^l
      // = p^{l+1}), which ||J v - z|| (an impulse change over beta) understates by beta over the
      // effective mass. The baselines' strict T carries no De Saxce term: p = 0 throughout.
      // [OURS] The cascade p^{l+1} = mu ||z_t(p^l)|| is a fixed-point iteration that contracts
      // at mu^2 / (1 + mu^2) for one contact, but contacts coupled through a body (a robot's
      // feet) can give it an oscillating mode of gain above 1, along which ||p^{l+1} - p^l||
      // grows at every outer iteration until the cap. After kDesaxceGrowthsBeforeDamping
      // iterations in a row whose change grew, the update is damped,
      // p^{l+1} = p^l + omega (mu ||z_t|| - p^l), omega halved each time down to
      // kMinDesaxceDamping: that scales the mode's eigenvalues towards 1 - omega + omega lambda,
      // inside the unit circle for a mode with Re lambda < 1; the fixed point is unchanged.
      double change2 = 0, lag2 = 0;
      for (int s = 0; s < num_constraints; ++s) {
        const Constraint& constraint = set.constraints[constraints[s]];
        const int row = constraint.row_adr;
        const double beta_i = problem.Penalty(constraints[s]);
        double z[3] = {0, 0, 0};
        for (int r = 0; r < constraint.dim; ++r) {
          const double change = (impulse_[row + r] - outer_impulse_[row + r]) / beta_i;
          change2 += change * change;
          if (r < 3) z[r] = row_velocity_[row + r] + change;
          outer_impulse_[row + r] = impulse_[row + r];
        }
        if (constraint.type == ConstraintType::kContact && !strict_loop) {
          const double desaxce =
              set.bias[row] + constraint.friction * std::sqrt(z[1] * z[1] + z[2] * z[2]);
          lag2 += (desaxce - shifted_bias_[row]) * (desaxce - shifted_bias_[row]);
          shifted_bias_[row] += omega * (desaxce - shifted_bias_[row]);
        }
      }
      const double al_residual = std::sqrt(change2);
      const double lag = std::sqrt(lag2);
      growths = outer > 0 && lag > previous_lag ? growths + 1 : 0;
      if (growths >= kDesaxceGrowthsBeforeDamping) {
        omega = std::max(0.5 * omega, kMinDesaxceDamping);
        growths = 0;
      }
      previous_lag = lag;
      ++outer;
      ++stats.outer_iterations;
      stats.al_residual = al_residual;
      stats.desaxce_change = lag;
      stats.newton_residual = newton_residual;
      if (record) {
        history_.push_back({al_residual, lag, newton_residual, inner.steps, inner_failure, beta});
      }
      result.primal_residual = al_residual + lag;
      result.dual_residual = newton_residual;
      // Alg. 1 line 16 and the shared caps (stop_test.h).
      if (CountIterationAndCheckStop(al_residual + lag, options, deadline_us, &result)) break;
      if (al_residual + lag < 0.5 * reference) {
        reference = al_residual + lag;
        reference_at = outer;
      } else if (stall_stop && beta >= beta_max &&
                 outer - reference_at >= parameters.stall_window) {
        stats.stalled = true;
        break;
      }
      // Alg. 1 line 19 and eq. (27): raise beta when the AL residual did not fall by zeta.
      if (outer > 1 && al_residual > parameters.zeta * previous_al) {
        beta = std::min(parameters.kappa * beta, beta_max);
      }
      previous_al = al_residual;
      // A new beta changes the map: the history is dropped.
      if (accelerate) {
        if (beta != beta_of_history) {
          anderson.Reset();
          beta_of_history = beta;
        }
        gather(image);
        if (anderson.Step(state, image)) scatter(image);
      }
    }
    result.beta = beta;
    stats.beta = beta;
    return LoopEnd::kDone;
  };

  LoopEnd end = run_loop(strict);
  // [OURS] A baseline's inner failure would leave an iterate with a momentum residual r != 0
  // (see the file comment): the island is solved by CANAL instead, from the same start.
  if (end == LoopEnd::kInnerFailure) {
    ++stats.canal_fallbacks;
    end = run_loop(false);
  }
  stats.converged = result.converged;

  if (end ==
      LoopEnd::kBroken) {  // a broken input (NaN): keep v_free and the warm start, unconverged
    for_dofs([&](int i, int) { d.v_hat[i] = d.v_free[i]; });
    result.converged = false;
    stats.converged = false;
    return;
  }
  for_dofs([&](int i, int k) { d.v_hat[i] = velocity[k]; });
  for (int s = 0; s < num_constraints; ++s) {
    const Constraint& constraint = set.constraints[constraints[s]];
    for (int r = 0; r < constraint.dim; ++r) {
      set.lambda[constraint.row_adr + r] = outer_impulse_[constraint.row_adr + r];
    }
  }
}

void CanalSolver::Prepare(const Model& m, Data& d, const SolverOptions& options) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  jacobian_.Layout(m, d);

  // Storage (sequential): per row, per island dof, and H's (island_hessian.h).
  const size_t rows = static_cast<size_t>(set.num_rows);
  if (argument_.size() < rows) {
    for (std::vector<double>* values : {&argument_, &impulse_, &outer_impulse_, &shifted_bias_,
                                        &row_velocity_, &row_direction_, &rounding_}) {
      values->resize(rows);
    }
    derivative_.resize(3 * rows);
  }
  if (type_ != SolverType::kCanal) {
    while (dense_.size() < static_cast<size_t>(islands.num)) {
      dense_.push_back(std::make_unique<DenseNewtonWorkspace>());
    }
  }
  hessian_.LayOut(m, d, islands, jacobian_);
  const int total_dofs = hessian_.pattern().total_dofs();
  if (velocity_.size() < static_cast<size_t>(total_dofs)) {
    for (std::vector<double>* values : {&velocity_, &rhs_, &newton_residual_, &product_}) {
      values->resize(total_dofs);
    }
  }
  island_stats_.resize(islands.num);
  if (penalty_scale_.size() < set.constraints.size()) {
    penalty_scale_.resize(set.constraints.size());
  }
  if (options.canal.penalty == CanalPenalty::kEffectiveMass) penalty_.CountBlocks(m, d);
  anderson_offset_.resize(islands.num + 1);
  anderson_offset_[0] = 0;
  for (int k = 0; k < islands.num; ++k) {
    long island_rows = 0;
    for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
      island_rows += set.constraints[islands.constraints[s]].dim;
    }
    const int memory = options.canal.anderson_memory;
    const long size =
        memory > 0 ? 4 * island_rows + AndersonAccelerator::StorageSize(2 * island_rows, memory)
                   : 0;
    anderson_offset_[k + 1] = anderson_offset_[k] + size;
  }
  if (static_cast<long>(anderson_storage_.size()) < anderson_offset_[islands.num]) {
    anderson_storage_.resize(anderson_offset_[islands.num]);
  }
}

void CanalSolver::SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                               double deadline_us) {
  IslandSolver::SolveIslands(m, d, options, deadline_us);
  const Islands& islands = d.islands;

  // SubADMM finishes the stalled islands from CANAL's impulses (the warm start it reads from
  // ConstraintSet::lambda), its iterations added to the island's outer iterations.
  stalled_islands_.clear();
  for (int k = 0; k < islands.num; ++k) {
    if (island_stats_[k].stalled) stalled_islands_.push_back(k);
  }
  if (!stalled_islands_.empty()) {
    SolverOptions admm = options;
    admm.max_iterations = options.canal.subadmm_fallback_iterations;
    if (fallback_ == nullptr) fallback_ = std::make_unique<SubAdmmSolver>(m);
    fallback_->BeginSolve(m, d, admm);
    IslandsFor(static_cast<int>(stalled_islands_.size()), [&](int s) {
      const int k = stalled_islands_[s];
      fallback_->SolveOneIsland(m, d, admm, deadline_us, k);
      const int canal_iterations = island_results_[k].iterations;
      island_results_[k] = fallback_->island_results()[k];
      island_stats_[k].subadmm_iterations = island_results_[k].iterations;
      island_stats_[k].converged = island_results_[k].converged;
      island_results_[k].iterations += canal_iterations;
      if (options.compute_residual) {
        island_results_[k].residual_squares =
            IslandResidualSquares(m, d, subsystem_blocks_, k, residual_);
      }
    });
  }

  CanalStatistics& total = statistics_;
  total = CanalStatistics{};
  total.islands = islands.num;
  for (int k = 0; k < islands.num; ++k) {
    const CanalIslandStatistics& s = island_stats_[k];
    total.outer_iterations += s.outer_iterations;
    total.max_outer_iterations = std::max(total.max_outer_iterations, s.outer_iterations);
    total.newton_steps += s.newton_steps;
    total.inner_failures += s.inner_failures;
    total.rejected_steps += s.rejected_steps;
    total.gradient_steps += s.gradient_steps;
    total.canal_fallbacks += s.canal_fallbacks;
    total.subadmm_fallbacks += s.stalled ? 1 : 0;
    total.line_search_iterations += s.line_search_iterations;
    total.factorizations += s.factorizations;
    total.failed_factorizations += s.failed_factorizations;
    total.al_residual = std::max(total.al_residual, s.al_residual);
    total.desaxce_change = std::max(total.desaxce_change, s.desaxce_change);
    total.newton_residual = std::max(total.newton_residual, s.newton_residual);
  }
}

void CanalSolver::AddFigures(SolverStatistics* stats) const {
  const CanalStatistics& total = statistics_;
  // At most SolverStatistics::kMaxFigures (9) per solver.
  stats->AddFigure("outer_iterations", total.outer_iterations);
  stats->AddFigure("newton_steps", total.newton_steps);
  stats->AddFigure("inner_failures", total.inner_failures);
  if (type_ == SolverType::kCanalTrDogleg) {
    stats->AddFigure("rejected_steps", total.rejected_steps);
  } else {
    // CANAL: evaluations of phi'; DampedSN: of the merit in its backtracking.
    stats->AddFigure("line_search_iterations", total.line_search_iterations);
  }
  if (type_ == SolverType::kCanalDampedSn) {
    stats->AddFigure("gradient_steps", total.gradient_steps);
  }
  if (type_ != SolverType::kCanal) stats->AddFigure("canal_fallbacks", total.canal_fallbacks);
  if (type_ == SolverType::kCanal) stats->AddFigure("subadmm_fallbacks", total.subadmm_fallbacks);
  stats->AddFigure("factorizations", total.factorizations);
  stats->AddFigure("al_residual", total.al_residual);
  stats->AddFigure("newton_residual", total.newton_residual);
}

}  // namespace alsim
