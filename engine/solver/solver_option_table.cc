#include "engine/solver/solver_option_table.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace alsim {
namespace {

// Counts (iterations, steps) stop here, well inside int.
constexpr double kMaxCount = 1e9;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The shortest text that parses back to x.
std::string FormatNumber(double x) {
  char text[32];
  for (const int digits : {6, 15, 17}) {
    std::snprintf(text, sizeof(text), "%.*g", digits, x);
    if (std::strtod(text, nullptr) == x) break;
  }
  return text;
}

bool ParseDouble(std::string_view text, double* value) {
  const std::string copy(text);
  if (copy.empty() || copy.find_first_of(" \t\n") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtod(copy.c_str(), &end);
  return *end == '\0' && errno != ERANGE && std::isfinite(*value);
}

bool ParseBoolean(std::string_view text, bool* value) {
  if (text == "on" || text == "true" || text == "1") {
    *value = true;
  } else if (text == "off" || text == "false" || text == "0") {
    *value = false;
  } else {
    return false;
  }
  return true;
}

double ParsedDouble(std::string_view text) {
  double value = 0;
  ParseDouble(text, &value);
  return value;
}

bool ParsedBoolean(std::string_view text) {
  bool value = false;
  ParseBoolean(text, &value);
  return value;
}

// The accessors of a numeric or boolean field at `path` below SolverOptions.
#define ALSIM_NUMBER_FIELD(path)                                                    \
  [](const SolverOptions& o) { return FormatNumber(static_cast<double>(o.path)); }, \
      [](SolverOptions* o, std::string_view v) {                                    \
        o->path = static_cast<decltype(o->path)>(ParsedDouble(v));                  \
      },                                                                            \
      [](const SolverOptions& o) { return static_cast<double>(o.path); }
#define ALSIM_BOOLEAN_FIELD(path)                                            \
  [](const SolverOptions& o) { return std::string(o.path ? "on" : "off"); }, \
      [](SolverOptions* o, std::string_view v) { o->path = ParsedBoolean(v); }

std::vector<SolverOptionSpec> MakeTable() {
  using K = SolverOptionKind;
  constexpr const char* kAdmm = "subadmm, admm-nosub, admm-nobody, auto";
  // CANAL's AL loop and inner cap and tolerance, shared with the Table II baselines.
  constexpr const char* kCanalLoop = "canal, canal-trdogleg, canal-dampedsn, auto";
  constexpr const char* kIcf = "icf-lagged, icf-similar";
  std::vector<SolverOptionSpec> table = {
      // ---- shared by every solver
      {"solver", "--solver", "NAME", "all", K::kChoice, 0, 0, false, false, SolverNameChoices(),
       "the contact solver", [](const SolverOptions& o) { return std::string(SolverName(o.type)); },
       [](SolverOptions* o, std::string_view v) {
         ParseSolverName(std::string(v).c_str(), &o->type);
       }},
      {"max_iterations", "--iterations", "N", "all", K::kInteger, 1, kMaxCount, false, false, "",
       "most solver iterations per island and step (PGS: sweeps)",
       ALSIM_NUMBER_FIELD(max_iterations)},
      {"tolerance", "--tolerance", "X", "all", K::kNumber, 0, kInfinity, false, true, "",
       "an island stops once its residual (ADMM: theta_p + theta_d of eq. 42; PGS: the largest "
       "impulse change) is below X",
       ALSIM_NUMBER_FIELD(tolerance)},
      {"time_budget_us", "--budget-us", "U", "all", K::kNumber, 0, kInfinity, false, true, "",
       "wall-time budget of each step's solve in microseconds, 0 for none (results then depend on "
       "the machine); the islands share it by their constraint rows",
       ALSIM_NUMBER_FIELD(time_budget_us)},
      {"compute_residual", "--residual", "on/off", "all", K::kBoolean, 0, 0, false, false, "",
       "compute the Sec. VII contact residual of every step (one extra solve per constrained "
       "subsystem)",
       ALSIM_BOOLEAN_FIELD(compute_residual)},
      {"integrator", "--integrator", "NAME", "all", K::kChoice, 0, 0, false, false,
       "euler, implicit-euler, midpoint",
       "the time stepping of the SAP paper's theta method (Sec. IV): euler (symplectic, damping "
       "implicit, MuJoCo's Euler), implicit-euler, or midpoint (second order); joint springs and "
       "dampers enter A implicitly (nsn: euler or implicit-euler, its hinge and slide springs "
       "implicit under either)",
       [](const SolverOptions& o) { return std::string(IntegratorName(o.integrator)); },
       [](SolverOptions* o, std::string_view v) {
         ParseIntegratorName(std::string(v).c_str(), &o->integrator);
       }},
      // ---- the ADMM family (engine/solver/admm/admm_parameters.h)
      {"relaxation", "--relaxation", "A", kAdmm, K::kNumber, 0, 2, true, true, "",
       "ADMM over-relaxation; 1 is the paper's Algorithm 2", ALSIM_NUMBER_FIELD(admm.relaxation)},
      {"penalty_scaling", "--penalty-scaling", "S", kAdmm, K::kChoice, 0, 0, false, false,
       "delassus, pseudo-density",
       "per-constraint ADMM penalties: each constraint's effective mass (delassus) or the "
       "paper's single beta (pseudo-density)",
       [](const SolverOptions& o) {
         return std::string(PenaltyScalingName(o.admm.penalty_scaling));
       },
       [](SolverOptions* o, std::string_view v) {
         ParsePenaltyScalingName(std::string(v).c_str(), &o->admm.penalty_scaling);
       }},
      {"adaptive_beta", "--adaptive-beta", "on/off", kAdmm, K::kBoolean, 0, 0, false, false, "",
       "rebalance the penalty beta by eq. (43)", ALSIM_BOOLEAN_FIELD(admm.adaptive_beta)},
      {"beta_gamma", "--beta-gamma", "G", kAdmm, K::kNumber, 1, kInfinity, true, true, "",
       "gamma of eq. (43): beta changes once one residual exceeds G times the other",
       ALSIM_NUMBER_FIELD(admm.beta_gamma)},
      {"beta_update_interval", "--beta-interval", "N", kAdmm, K::kInteger, 1, kMaxCount, false,
       false, "", "iterations between checks of eq. (43)",
       ALSIM_NUMBER_FIELD(admm.beta_update_interval)},
      // ---- SubADMM (engine/solver/subadmm/subadmm_parameters.h)
      {"anderson_memory", "--anderson", "M", "subadmm, auto", K::kInteger, 0, 8, false, false, "",
       "Anderson acceleration with M history columns, 0 for none",
       ALSIM_NUMBER_FIELD(subadmm.anderson_memory)},
      {"delassus_refresh_steps", "--delassus-refresh", "N", "subadmm, auto", K::kInteger, 1,
       kMaxCount, false, false, "",
       "with delassus penalties, a constraint that persists keeps its effective mass for N steps "
       "before it is computed again; 1 computes it every step",
       ALSIM_NUMBER_FIELD(subadmm.delassus_refresh_steps)},
      {"response_after_iterations", "--response-after", "N", "subadmm, auto", K::kInteger, 0,
       kMaxCount, false, false, "",
       "an island still iterating after N iterations moves its small trees to their "
       "constraint-space response (same iterates up to rounding); 0 for never",
       ALSIM_NUMBER_FIELD(subadmm.response_after_iterations)},
      // ---- CANAL (engine/solver/canal/canal_parameters.h)
      {"canal_penalty", "--canal-penalty", "P", kCanalLoop, K::kChoice, 0, 0, false, false,
       "effective-mass, uniform",
       "per-constraint penalties beta_i = beta m_i, m_i the constraint's effective mass "
       "(effective-mass), or the paper's single beta in kg (uniform)",
       [](const SolverOptions& o) { return std::string(CanalPenaltyName(o.canal.penalty)); },
       [](SolverOptions* o, std::string_view v) {
         ParseCanalPenaltyName(std::string(v).c_str(), &o->canal.penalty);
       }},
      {"canal_beta0", "--canal-beta0", "B", kCanalLoop, K::kNumber, 0, kInfinity, true, true, "",
       "uniform penalty: the initial beta0 of every step, kg", ALSIM_NUMBER_FIELD(canal.beta0)},
      {"canal_relative_beta0", "--canal-relative-beta0", "B", kCanalLoop, K::kNumber, 0, kInfinity,
       true, true, "",
       "effective-mass penalty: the initial beta of every step, a multiple of each constraint's "
       "effective mass",
       ALSIM_NUMBER_FIELD(canal.relative_beta0)},
      {"canal_kappa", "--canal-kappa", "K", kCanalLoop, K::kNumber, 1, kInfinity, true, true, "",
       "kappa of eq. (27): beta grows by this factor when the AL residual stalls",
       ALSIM_NUMBER_FIELD(canal.kappa)},
      {"canal_beta_max", "--canal-beta-max", "B", kCanalLoop, K::kNumber, 0, kInfinity, true, true,
       "", "uniform penalty: the largest of eq. (27), kg", ALSIM_NUMBER_FIELD(canal.beta_max)},
      {"canal_relative_beta_max", "--canal-relative-beta-max", "B", kCanalLoop, K::kNumber, 0,
       kInfinity, true, true, "",
       "effective-mass penalty: the largest beta of eq. (27), a multiple of the effective mass",
       ALSIM_NUMBER_FIELD(canal.relative_beta_max)},
      {"canal_zeta", "--canal-zeta", "Z", kCanalLoop, K::kNumber, 0, 1, true, true, "",
       "beta grows when an outer iteration cut the AL residual by less than this factor "
       "(Algorithm 1, line 19)",
       ALSIM_NUMBER_FIELD(canal.zeta)},
      {"canal_newton_tolerance", "--canal-newton-tolerance", "X", kCanalLoop, K::kNumber, 0,
       kInfinity, false, true, "",
       "the inner Newton stops once norm(r) < X max(1, norm(b)) (eq. 21, momentum units)",
       ALSIM_NUMBER_FIELD(canal.newton_tolerance)},
      {"canal_max_newton_steps", "--canal-newton-steps", "N", kCanalLoop, K::kInteger, 1, kMaxCount,
       false, false, "", "most Newton steps in one outer iteration",
       ALSIM_NUMBER_FIELD(canal.max_newton_steps)},
      {"canal_anderson_memory", "--canal-anderson", "M", "canal, auto", K::kInteger, 0, 8, false,
       false, "", "Anderson acceleration of CANAL's outer loop with M history columns, 0 for none",
       ALSIM_NUMBER_FIELD(canal.anderson_memory)},
      {"canal_subadmm_fallback_iterations", "--canal-subadmm-fallback", "N", "canal", K::kInteger,
       0, kMaxCount, false, false, "",
       "an island whose De Saxce cascade stalls (no halving of its residual in 20 outer iterations "
       "at the largest penalty) is finished by SubADMM from CANAL's impulses with up to N "
       "iterations; 0 runs CANAL on to its cap",
       ALSIM_NUMBER_FIELD(canal.subadmm_fallback_iterations)},
      {"canal_line_search_tolerance", "--canal-line-search-tolerance", "X", "canal, auto",
       K::kNumber, 0, 1, false, true, "",
       "the exact line search (eq. 26) stops once abs(phi'(alpha)) <= X abs(phi'(0))",
       ALSIM_NUMBER_FIELD(canal.line_search.relative_tolerance)},
      {"canal_line_search_iterations", "--canal-line-search-iterations", "N", "canal, auto",
       K::kInteger, 1, kMaxCount, false, false, "", "most evaluations of phi' in one line search",
       ALSIM_NUMBER_FIELD(canal.line_search.max_iterations)},
      {"canal_start_from_previous_velocity", "--canal-warm-velocity", "on/off", kCanalLoop,
       K::kBoolean, 0, 0, false, false, "",
       "start the first Newton loop from the step's starting velocity instead of v_free",
       ALSIM_BOOLEAN_FIELD(canal.start_from_previous_velocity)},
      // ---- the Newton baselines of Table II (engine/solver/canal/newton_baselines.h)
      {"trdogleg_eta", "--trdogleg-eta", "E", "canal-trdogleg", K::kNumber, 0, 0.25, false, true,
       "",
       "a trust-region step is accepted when the merit (half the squared norm of r, eq. 19) "
       "falls by more than E times the reduction its model predicts",
       ALSIM_NUMBER_FIELD(canal.baselines.trust_region_eta)},
      {"dampedsn_sigma", "--dampedsn-sigma", "S", "canal-dampedsn", K::kNumber, 0, 0.5, true, true,
       "", "Armijo's constant: a step of length t must cut the merit by S t times its slope",
       ALSIM_NUMBER_FIELD(canal.baselines.armijo_sigma)},
      {"dampedsn_max_backtracks", "--dampedsn-backtracks", "N", "canal-dampedsn", K::kInteger, 1,
       kMaxCount, false, false, "", "most halvings of the step length in one backtracking search",
       ALSIM_NUMBER_FIELD(canal.baselines.max_backtracks)},
      // ---- auto (engine/solver/hybrid/hybrid_parameters.h)
      {"auto_switch_after", "--auto-switch-after", "K", "auto", K::kInteger, 1, kMaxCount, false,
       false, "", "an island SubADMM has not finished after K iterations is handed to CANAL",
       ALSIM_NUMBER_FIELD(hybrid.switch_after_iterations)},
      // ---- mujoco (engine/solver/mujoco/mujoco_parameters.h)
      {"mujoco_tolerance", "--mujoco-tolerance", "X", "mujoco", K::kNumber, 0, kInfinity, false,
       true, "",
       "an island stops once its cost improvement or gradient, scaled as MuJoCo's "
       "option/tolerance, is below X",
       ALSIM_NUMBER_FIELD(mujoco.tolerance)},
      {"mujoco_line_search_iterations", "--mujoco-line-search-iterations", "N", "mujoco",
       K::kInteger, 1, kMaxCount, false, false, "",
       "most evaluations of the cost's derivatives in one exact line search",
       ALSIM_NUMBER_FIELD(mujoco.max_line_search)},
      {"mujoco_rank_updates", "--mujoco-rank-updates", "on/off", "mujoco", K::kBoolean, 0, 0, false,
       false, "",
       "update H's tree factor by rank-1 updates for the rows that change state between Newton "
       "iterations, where cheaper than factoring again",
       ALSIM_BOOLEAN_FIELD(mujoco.rank_updates)},
      // ---- sap (engine/solver/sap/sap_parameters.h)
      {"sap_stiffness", "--sap-stiffness", "K", "sap", K::kNumber, 0, kInfinity, false, true, "",
       "contact stiffness k, N/m (R_n^-1 = dt k (dt + tau_d)); 0 for near-rigid contact",
       ALSIM_NUMBER_FIELD(sap.stiffness)},
      {"sap_dissipation_time", "--sap-dissipation-time", "T", "sap", K::kNumber, 0, kInfinity,
       false, true, "",
       "dissipation time scale tau_d, s (vhat_n = -phi0 / (dt + tau_d)); 0 for (beta / pi) dt",
       ALSIM_NUMBER_FIELD(sap.dissipation_time)},
      {"sap_beta", "--sap-beta", "B", "sap", K::kNumber, 0, kInfinity, true, true, "",
       "near-rigid parameter beta of eq. (21): R_n >= beta^2 / (4 pi^2) w",
       ALSIM_NUMBER_FIELD(sap.beta)},
      {"sap_sigma", "--sap-sigma", "S", "sap", K::kNumber, 0, kInfinity, true, true, "",
       "stiction regularization sigma of eq. (22): R_t = sigma w", ALSIM_NUMBER_FIELD(sap.sigma)},
      {"sap_relative_tolerance", "--sap-relative-tolerance", "X", "sap", K::kNumber, 0, kInfinity,
       false, true, "",
       "an island stops once its scaled gradient is below X times its scaled momentum (eq. 20)",
       ALSIM_NUMBER_FIELD(sap.relative_tolerance)},
      {"sap_absolute_tolerance", "--sap-absolute-tolerance", "X", "sap", K::kNumber, 0, kInfinity,
       false, true, "", "the absolute part of eq. (20)'s stop, sqrt(J)",
       ALSIM_NUMBER_FIELD(sap.absolute_tolerance)},
      // ---- icf-lagged, icf-similar (engine/solver/icf/icf_parameters.h)
      {"icf_stiffness", "--icf-stiffness", "K", kIcf, K::kNumber, 0, kInfinity, true, true, "",
       "contact stiffness k, N/m, of the normal law f_n = k (-phi)_+ (1 - d v_n)_+ (eq. 22), "
       "where the scene's geoms set none (docs/engine.md)",
       ALSIM_NUMBER_FIELD(icf.stiffness)},
      {"icf_dissipation", "--icf-dissipation", "D", kIcf, K::kNumber, 0, kInfinity, false, true, "",
       "Hunt & Crossley dissipation d, s/m, of eq. (22), where the scene's geoms set none",
       ALSIM_NUMBER_FIELD(icf.dissipation)},
      {"icf_stiction_speed", "--icf-stiction-speed", "V", kIcf, K::kNumber, 0, kInfinity, true,
       true, "",
       "stiction tolerance v_s, m/s: the slip speed of the stick-slip transition (eq. 9), where "
       "the scene's geoms set none",
       ALSIM_NUMBER_FIELD(icf.stiction_speed)},
      {"icf_regularized", "--icf-regularized", "on/off", kIcf, K::kBoolean, 0, 0, false, false, "",
       "regularized friction of eq. (26): eps_s = max(v_s, sigma w mu gamma_n0), softer in impacts",
       ALSIM_BOOLEAN_FIELD(icf.regularized)},
      {"icf_sigma", "--icf-sigma", "S", kIcf, K::kNumber, 0, kInfinity, true, true, "",
       "sigma of eq. (26)", ALSIM_NUMBER_FIELD(icf.sigma)},
      {"icf_relative_tolerance", "--icf-relative-tolerance", "X", kIcf, K::kNumber, 0, kInfinity,
       false, true, "",
       "an island stops once its scaled gradient is below X times its scaled momentum",
       ALSIM_NUMBER_FIELD(icf.relative_tolerance)},
      {"icf_absolute_tolerance", "--icf-absolute-tolerance", "X", kIcf, K::kNumber, 0, kInfinity,
       false, true, "", "the absolute part of the stop, sqrt(J)",
       ALSIM_NUMBER_FIELD(icf.absolute_tolerance)},
      // ---- drumwright (engine/solver/drumwright/drumwright_parameters.h)
      {"drumwright_contact_stiffness", "--drumwright-contact-stiffness", "K", "drumwright",
       K::kNumber, 0, kInfinity, true, true, "",
       "contact normal stiffness K_n, N/m, where the geoms set none (alsim:contact stiffness)",
       ALSIM_NUMBER_FIELD(drumwright.contact_stiffness)},
      {"drumwright_contact_damping", "--drumwright-contact-damping", "B", "drumwright", K::kNumber,
       0, kInfinity, false, true, "",
       "contact normal damping B_n, N s/m, where the geoms set none (alsim:contact damping)",
       ALSIM_NUMBER_FIELD(drumwright.contact_damping)},
      {"drumwright_limit_stiffness", "--drumwright-limit-stiffness", "K", "drumwright", K::kNumber,
       0, kInfinity, true, true, "",
       "joint and tendon limit stiffness, N/m or N m/rad, where the scene sets none "
       "(alsim:joint, alsim:tendon)",
       ALSIM_NUMBER_FIELD(drumwright.limit_stiffness)},
      {"drumwright_limit_damping", "--drumwright-limit-damping", "B", "drumwright", K::kNumber, 0,
       kInfinity, false, true, "", "joint and tendon limit damping, N s/m or N m s/rad",
       ALSIM_NUMBER_FIELD(drumwright.limit_damping)},
      {"drumwright_equality_stiffness", "--drumwright-equality-stiffness", "K", "drumwright",
       K::kNumber, 0, kInfinity, true, true, "",
       "equality constraint stiffness, N/m or N m/rad, where the scene sets none "
       "(alsim:equality)",
       ALSIM_NUMBER_FIELD(drumwright.equality_stiffness)},
      {"drumwright_equality_damping", "--drumwright-equality-damping", "B", "drumwright",
       K::kNumber, 0, kInfinity, false, true, "", "equality constraint damping, N s/m or N m s/rad",
       ALSIM_NUMBER_FIELD(drumwright.equality_damping)},
      {"drumwright_friction_damping", "--drumwright-friction-damping", "X", "drumwright",
       K::kNumber, 0, kInfinity, true, true, "",
       "the tangent rows' damper times the step, B_r h (the paper's 1e6)",
       ALSIM_NUMBER_FIELD(drumwright.friction_damping)},
      {"drumwright_zeta", "--drumwright-zeta", "X", "drumwright", K::kNumber, 0, kInfinity, true,
       true, "", "zeta h, the weight of normal and unilateral impulses in the program (124)",
       ALSIM_NUMBER_FIELD(drumwright.zeta_h)},
      {"drumwright_hertz_radius", "--drumwright-hertz-radius", "R", "drumwright", K::kNumber, 0,
       kInfinity, true, true, "",
       "Hertz contacts' radius, m, where neither geom is a sphere or capsule",
       ALSIM_NUMBER_FIELD(drumwright.hertz_radius)},
      {"drumwright_complementary", "--drumwright-complementary", "on/off", "drumwright",
       K::kBoolean, 0, 0, false, false, "",
       "drop rows that push while their spring ends the step extended and solve again (ours); "
       "off: the paper's program alone",
       ALSIM_BOOLEAN_FIELD(drumwright.complementary)},
      {"drumwright_velocity_product", "--drumwright-velocity-product", "on/off", "drumwright",
       K::kBoolean, 0, 0, false, false, "",
       "include each row's Gd v0 with Mhat by a minimum-norm solve (all rows but contacts'); "
       "off: omitted, the paper's option (a)",
       ALSIM_BOOLEAN_FIELD(drumwright.velocity_product)},
      {"drumwright_program_iterations", "--drumwright-program-iterations", "N", "drumwright",
       K::kInteger, 1, kMaxCount, false, false, "",
       "most interior-point iterations of an island's program",
       ALSIM_NUMBER_FIELD(drumwright.program.max_iterations)},
      // ---- nsn (engine/solver/nsn/nsn_parameters.h)
      {"nsn_newton_iterations", "--nsn-newton-iterations", "N", "nsn", K::kInteger, 1, kMaxCount,
       false, false, "", "most Newton iterations per step (the paper's fixed count N)",
       ALSIM_NUMBER_FIELD(nsn.newton_iterations)},
      {"nsn_newton_tolerance", "--nsn-newton-tolerance", "TOL", "nsn", K::kNumber, 0, kInfinity,
       false, true, "",
       "stop an island's Newton loop once its momentum and row residuals are below it (0: always "
       "the full count, as the paper)",
       ALSIM_NUMBER_FIELD(nsn.newton_tolerance)},
      {"nsn_step_fraction", "--nsn-step-fraction", "T", "nsn", K::kNumber, 0, 1, true, false, "",
       "damping t of every Newton update (61)-(62)", ALSIM_NUMBER_FIELD(nsn.step_fraction)},
      {"nsn_regularization", "--nsn-regularization", "EPS", "nsn", K::kNumber, 0, kInfinity, false,
       true, "", "eps added to the Schur matrix's diagonal (Sec 8.4)",
       ALSIM_NUMBER_FIELD(nsn.regularization)},
      {"nsn_friction_memory", "--nsn-friction-memory", "X", "nsn", K::kNumber, 0, 1, false, true,
       "",
       "once a contact's friction compliance W cycles within a step (falls, then rises), it is at "
       "least X times its last Newton iteration's (0: the paper's W from the current iterate "
       "alone)",
       ALSIM_NUMBER_FIELD(nsn.friction_memory)},
      {"nsn_contact_rows_at_start", "--nsn-contact-rows-at-start", "on/off", "nsn", K::kBoolean, 0,
       0, false, false, "",
       "keep contacts' Jacobian rows at the step's start while their gaps follow the iterate "
       "(off: rows at the iterate, each body's at its own surface point, the paper's)",
       ALSIM_BOOLEAN_FIELD(nsn.contact_rows_at_start)},
      {"nsn_geometric_stiffness", "--nsn-geometric-stiffness", "on/off", "nsn", K::kBoolean, 0, 0,
       false, false, "",
       "shift the deformables' vertex masses by the paper's diagonal geometric stiffness (Sec 8.3, "
       "(71)-(74)) between Newton iterations (off: the mass; it matters for corotated tets, whose "
       "rows are nonlinear in the vertices)",
       ALSIM_BOOLEAN_FIELD(nsn.geometric_stiffness)},
      {"nsn_spring_rows", "--nsn-spring-rows", "on/off", "nsn", K::kBoolean, 0, 0, false, false, "",
       "take hinge and slide springs as compliance rows of the Schur system (the paper's compliant "
       "joints) rather than as h^2 K in H, the same step solved exactly (off: in H, whatever the "
       "integrator)",
       ALSIM_BOOLEAN_FIELD(nsn.spring_rows)},
      {"nsn_linear_iterations", "--nsn-linear-iterations", "M", "nsn", K::kInteger, 1, kMaxCount,
       false, false, "", "most linear iterations per Newton iteration (the paper's fixed count M)",
       ALSIM_NUMBER_FIELD(nsn.linear_iterations)},
      {"nsn_linear_tolerance", "--nsn-linear-tolerance", "TOL", "nsn", K::kNumber, 0, 1, false,
       true, "",
       "stop a linear solve once its preconditioned residual falls by this factor (0: the full "
       "count)",
       ALSIM_NUMBER_FIELD(nsn.linear_tolerance)},
      {"nsn_linear_solver", "--nsn-linear-solver", "S", "nsn", K::kChoice, 0, 0, false, false,
       "pcr, pcg, jacobi, gauss-seidel, ldlt",
       "the Schur system's solver: Jacobi-preconditioned conjugate residual (the paper's), "
       "conjugate gradient, Jacobi or Gauss-Seidel iteration, or a dense LDL^T direct solve",
       [](const SolverOptions& o) { return std::string(NsnLinearSolverName(o.nsn.linear_solver)); },
       [](SolverOptions* o, std::string_view v) {
         ParseNsnLinearSolverName(std::string(v).c_str(), &o->nsn.linear_solver);
       }},
      {"nsn_ncp", "--nsn-ncp", "F", "nsn", K::kChoice, 0, 0, false, false, "fb, min-map",
       "the NCP function of contact normals and friction: Fischer-Burmeister (fb, the paper's) or "
       "the minimum map",
       [](const SolverOptions& o) { return std::string(NcpFunctionName(o.nsn.ncp)); },
       [](SolverOptions* o, std::string_view v) {
         ParseNcpFunctionName(std::string(v).c_str(), &o->nsn.ncp);
       }},
      {"nsn_scaling", "--nsn-scaling", "R", "nsn", K::kChoice, 0, 0, false, false,
       "effective-mass, identity, h2",
       "the complementarity factors r: each row's effective mass (66), 1, or h^2 (Sec 10.2's "
       "ablations)",
       [](const SolverOptions& o) {
         return std::string(ComplementarityScalingName(o.nsn.scaling));
       },
       [](SolverOptions* o, std::string_view v) {
         ParseComplementarityScalingName(std::string(v).c_str(), &o->nsn.scaling);
       }},
  };
  return table;
}

#undef ALSIM_NUMBER_FIELD
#undef ALSIM_BOOLEAN_FIELD

// Whether `text` is one of the ", "-separated names of `choices`.
bool IsChoice(std::string_view choices, std::string_view text) {
  while (!choices.empty()) {
    const size_t comma = choices.find(", ");
    if (choices.substr(0, comma) == text) return true;
    if (comma == std::string_view::npos) break;
    choices.remove_prefix(comma + 2);
  }
  return false;
}

std::string JoinWithOr(std::string_view choices) {
  std::string text(choices);
  const size_t last = text.rfind(", ");
  if (last != std::string::npos) text.replace(last, 2, " or ");
  return text;
}

// Whether value is inside spec's range (numbers and integers).
bool InRange(const SolverOptionSpec& spec, double value) {
  if (!std::isfinite(value)) return false;
  if (spec.lower_open ? value <= spec.lower : value < spec.lower) return false;
  if (spec.upper_open ? value >= spec.upper : value > spec.upper) return false;
  return spec.kind != SolverOptionKind::kInteger || value == std::floor(value);
}

std::string Check(const SolverOptionSpec& spec, std::string_view text) {
  double number = 0;
  bool boolean = false;
  bool ok = false;
  switch (spec.kind) {
    case SolverOptionKind::kInteger:
    case SolverOptionKind::kNumber:
      ok = ParseDouble(text, &number) && InRange(spec, number);
      break;
    case SolverOptionKind::kBoolean:
      ok = ParseBoolean(text, &boolean);
      break;
    case SolverOptionKind::kChoice:
      ok = IsChoice(spec.choices, text);
      break;
  }
  if (ok) return "";
  // "relaxation must be a number in (0, 2), not '2'"
  const std::string range = SolverOptionRange(spec);
  std::string what;
  switch (spec.kind) {
    case SolverOptionKind::kInteger:
      what = range.find(" to ") != std::string::npos ? "an integer from " + range
                                                     : "an integer, " + range;
      break;
    case SolverOptionKind::kNumber:
      what = range[0] == '(' || range[0] == '[' ? "a number in " + range : "a number, " + range;
      break;
    case SolverOptionKind::kBoolean:
      what = range;
      break;
    case SolverOptionKind::kChoice:
      what = "one of " + range;
      break;
  }
  const std::string message =
      std::string(spec.name) + " must be " + what + ", not '" + std::string(text) + "'";
  return message;
}

}  // namespace

const std::vector<SolverOptionSpec>& SolverOptionTable() {
  static const std::vector<SolverOptionSpec> table = MakeTable();
  return table;
}

const SolverOptionSpec* FindSolverOption(std::string_view name_or_flag) {
  for (const SolverOptionSpec& spec : SolverOptionTable()) {
    if (name_or_flag == spec.name || name_or_flag == spec.flag) return &spec;
  }
  return nullptr;
}

std::string SetSolverOption(const SolverOptionSpec& spec, std::string_view text,
                            SolverOptions* options) {
  if (std::string error = Check(spec, text); !error.empty()) return error;
  spec.set(options, text);
  return "";
}

std::string SolverOptionValue(const SolverOptionSpec& spec, const SolverOptions& options) {
  return spec.get(options);
}

std::string SolverOptionDefault(const SolverOptionSpec& spec) { return spec.get(SolverOptions{}); }

std::string SolverOptionRange(const SolverOptionSpec& spec) {
  switch (spec.kind) {
    case SolverOptionKind::kBoolean:
      return "on or off";
    case SolverOptionKind::kChoice:
      return JoinWithOr(spec.choices);
    case SolverOptionKind::kInteger:
      return spec.upper >= kMaxCount ? "at least " + FormatNumber(spec.lower)
                                     : FormatNumber(spec.lower) + " to " + FormatNumber(spec.upper);
    case SolverOptionKind::kNumber:
      if (spec.upper == kInfinity) {
        return (spec.lower_open ? "more than " : "at least ") + FormatNumber(spec.lower);
      }
      return (spec.lower_open ? "(" : "[") + FormatNumber(spec.lower) + ", " +
             FormatNumber(spec.upper) + (spec.upper_open ? ")" : "]");
  }
  return "";
}

std::string ValidateSolverOptions(const SolverOptions& options) {
  for (const SolverOptionSpec& spec : SolverOptionTable()) {
    // Step validates every call: numbers are checked as numbers, and text is made only for an
    // error or for the choices and booleans (short strings, no allocation).
    if (spec.number != nullptr && InRange(spec, spec.number(options))) continue;
    if (std::string error = Check(spec, spec.get(options)); !error.empty()) return error;
  }
  return "";
}

std::string SolverNameList() { return JoinWithOr(FindSolverOption("solver")->choices); }

}  // namespace alsim
