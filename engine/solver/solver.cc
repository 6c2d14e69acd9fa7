#include "engine/solver/solver.h"

#include <cstring>
#include <string>
#include <vector>

#include "engine/solver/admm_baselines/admm_nobody_solver.h"
#include "engine/solver/admm_baselines/admm_nosub_solver.h"
#include "engine/solver/canal/canal_solver.h"
#include "engine/solver/drumwright/drumwright_solver.h"
#include "engine/solver/hybrid/hybrid_solver.h"
#include "engine/solver/newton/newton_solver.h"
#include "engine/solver/nsn/nsn_solver.h"
#include "engine/solver/pgs/pgs_solver.h"
#include "engine/solver/subadmm/subadmm_solver.h"

namespace alsim {
namespace {

template <class Solver>
std::unique_ptr<ConstraintSolver> Make(const Model& m) {
  return std::make_unique<Solver>(m);
}
template <SolverType kType>
std::unique_ptr<ConstraintSolver> MakeCanal(const Model& m) {
  return std::make_unique<CanalSolver>(m, kType);
}
template <SolverType kType>
std::unique_ptr<ConstraintSolver> MakeNewton(const Model& m) {
  return std::make_unique<NewtonSolver>(m, kType);
}

// The one table of solvers: every list of solvers (names, `--solver`'s choices, the refusal
// messages, README's table, the tests' lists) derives from it. A new solver is a folder and a
// row here.
struct SolverRegistration {
  SolverType type;
  const char* name;
  std::unique_ptr<ConstraintSolver> (*make)(const Model&);
  // Torsional and rolling friction rows (condim 4 and 6); without them the solver refuses such
  // a scene (SolverRefusesModel).
  bool high_condim;
  // Rows whose impulse is clamped to a box: dry joint friction (frictionloss) and force-limited
  // servos; without them the solver refuses such a scene.
  bool box_rows;
  ConstraintModel model;  // the contact model it solves (BuildConstraints builds its rows)
  const char* summary;    // one line, README's solver table says more
};
constexpr SolverRegistration kSolvers[] = {
    {SolverType::kSubAdmm, "subadmm", &Make<SubAdmmSolver>, true, true, ConstraintModel::kHard,
     "subsystem- and body-split ADMM per island (SubADMM paper, Algorithm 2): the default"},
    {SolverType::kPgs, "pgs", &Make<PgsSolver>, true, true, ConstraintModel::kHard,
     "projected Gauss-Seidel on the Delassus operator, the paper's baseline"},
    {SolverType::kAdmmNoSub, "admm-nosub", &Make<AdmmNoSubSolver>, true, true,
     ConstraintModel::kHard, "ADMM on one global system factored by CHOLMOD (Table III, No Sub)"},
    {SolverType::kAdmmNoBody, "admm-nobody", &Make<AdmmNoBodySolver>, true, true,
     ConstraintModel::kHard, "the subsystem split without the body split (Table III, No Body)"},
    // CANAL's proximal projection onto the anisotropic cone (and its derivative, eq. 23) and the
    // Table II baselines' strict-operator Jacobians exist for the isotropic 3-row cone only.
    {SolverType::kCanal, "canal", &MakeCanal<SolverType::kCanal>, false, true,
     ConstraintModel::kHard, "cascaded Newton-based augmented Lagrangian (CANAL, Algorithm 1)"},
    {SolverType::kCanalTrDogleg, "canal-trdogleg", &MakeCanal<SolverType::kCanalTrDogleg>, false,
     true, ConstraintModel::kHard,
     "CANAL's AL loop with a trust-region dogleg (Table II ablation)"},
    {SolverType::kCanalDampedSn, "canal-dampedsn", &MakeCanal<SolverType::kCanalDampedSn>, false,
     true, ConstraintModel::kHard,
     "CANAL's AL loop with a damped semismooth Newton (Table II ablation)"},
    // Islands with condim 4/6 contacts stay with SubADMM (hybrid_solver.h).
    {SolverType::kAuto, "auto", &Make<HybridSolver>, true, true, ConstraintModel::kHard,
     "SubADMM, then CANAL for the islands SubADMM has not finished"},
    {SolverType::kMujoco, "mujoco", &MakeNewton<SolverType::kMujoco>, true, true,
     ConstraintModel::kMujoco,
     "MuJoCo's soft contact model (solref, solimp, pyramidal or elliptic cone) by primal Newton"},
    // SAP's cone (sap_cone.h) is the 3-row isotropic one.
    {SolverType::kSap, "sap", &MakeNewton<SolverType::kSap>, false, true, ConstraintModel::kSap,
     "SAP: compliant contact with physical stiffness and dissipation, by primal Newton"},
    // ICF's contact (icf_contact.h) is the 3-row isotropic one; the other rows are SAP's.
    {SolverType::kIcfLagged, "icf-lagged", &MakeNewton<SolverType::kIcfLagged>, false, true,
     ConstraintModel::kSap,
     "Irrotational Contact Fields, Lagged: Hunt & Crossley contact without gliding, by primal "
     "Newton"},
    {SolverType::kIcfSimilar, "icf-similar", &MakeNewton<SolverType::kIcfSimilar>, false, true,
     ConstraintModel::kSap,
     "Irrotational Contact Fields, Similar: normal and friction strongly coupled, by primal "
     "Newton"},
    // Every row a spring-damper: contacts, limits, equalities and servos have a spring law; dry
    // friction and force limits have none. The cone (first_order_step.h) is the 3-row one.
    {SolverType::kDrumwright, "drumwright", &Make<DrumwrightSolver>, false, false,
     ConstraintModel::kSap,
     "Drumwright's first-order solver: every constraint a stiff spring, one convex program per "
     "island"},
    // Hard rows by NCP functions in one Newton system per island (nsn_solver.h); the friction
    // NCP is the 3-row isotropic cone's, and a box row has no NCP form there.
    {SolverType::kNsn, "nsn", &Make<NsnSolver>, false, false, ConstraintModel::kSap,
     "non-smooth Newton (Macklin et al.): hard contact and friction as NCP functions, rows "
     "re-evaluated at every Newton iterate"},
};

const SolverRegistration* FindRegistration(SolverType type) {
  for (const SolverRegistration& entry : kSolvers) {
    if (entry.type == type) return &entry;
  }
  return nullptr;
}

// "a, b or c" over the registered names that pass `keep`, each quoted when `quote`.
template <class Keep>
std::string JoinNames(const Keep& keep, bool quote, const char* last_separator) {
  std::vector<std::string> names;
  for (const SolverRegistration& entry : kSolvers) {
    if (keep(entry)) names.push_back(quote ? "'" + std::string(entry.name) + "'" : entry.name);
  }
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? last_separator : ", ";
    text += names[i];
  }
  return text;
}

}  // namespace

const char* SolverName(SolverType type) {
  const SolverRegistration* entry = FindRegistration(type);
  return entry != nullptr ? entry->name : "unknown";
}

bool ParseSolverName(const char* name, SolverType* type) {
  for (const SolverRegistration& entry : kSolvers) {
    if (std::strcmp(entry.name, name) == 0) {
      *type = entry.type;
      return true;
    }
  }
  return false;
}

const char* SolverNameChoices() {
  static const std::string choices =
      JoinNames([](const SolverRegistration&) { return true; }, false, ", ");
  return choices.c_str();
}

std::vector<SolverType> RegisteredSolvers() {
  std::vector<SolverType> types;
  for (const SolverRegistration& entry : kSolvers) types.push_back(entry.type);
  return types;
}

const char* SolverSummary(SolverType type) {
  const SolverRegistration* entry = FindRegistration(type);
  return entry != nullptr ? entry->summary : "";
}

const char* PenaltyScalingName(PenaltyScaling scaling) {
  return scaling == PenaltyScaling::kDelassus ? "delassus" : "pseudo-density";
}

bool ParsePenaltyScalingName(const char* name, PenaltyScaling* scaling) {
  for (const PenaltyScaling candidate :
       {PenaltyScaling::kDelassus, PenaltyScaling::kPseudoDensity}) {
    if (std::strcmp(PenaltyScalingName(candidate), name) == 0) {
      *scaling = candidate;
      return true;
    }
  }
  return false;
}

const char* CanalPenaltyName(CanalPenalty penalty) {
  return penalty == CanalPenalty::kUniform ? "uniform" : "effective-mass";
}

bool ParseCanalPenaltyName(const char* name, CanalPenalty* penalty) {
  for (const CanalPenalty candidate : {CanalPenalty::kUniform, CanalPenalty::kEffectiveMass}) {
    if (std::strcmp(CanalPenaltyName(candidate), name) == 0) {
      *penalty = candidate;
      return true;
    }
  }
  return false;
}

const char* IntegratorName(Integrator integrator) {
  switch (integrator) {
    case Integrator::kEuler:
      return "euler";
    case Integrator::kImplicitEuler:
      return "implicit-euler";
    case Integrator::kMidpoint:
      return "midpoint";
  }
  return "";
}

bool ParseIntegratorName(const char* name, Integrator* integrator) {
  for (const Integrator candidate :
       {Integrator::kEuler, Integrator::kImplicitEuler, Integrator::kMidpoint}) {
    if (std::strcmp(IntegratorName(candidate), name) == 0) {
      *integrator = candidate;
      return true;
    }
  }
  return false;
}

namespace {

void DestroySolver(ConstraintSolver* solver) { delete solver; }

}  // namespace

SolverHandle CreateSolver(SolverType type, const Model& m) {
  const SolverRegistration* entry = FindRegistration(type);
  return SolverHandle(entry != nullptr ? entry->make(m).release() : nullptr,
                      SolverDeleter{&DestroySolver});
}

bool SolverSupportsHighCondim(SolverType type) {
  const SolverRegistration* entry = FindRegistration(type);
  return entry != nullptr && entry->high_condim;
}

ConstraintModel SolverConstraintModel(SolverType type) {
  const SolverRegistration* entry = FindRegistration(type);
  return entry != nullptr ? entry->model : ConstraintModel::kHard;
}

std::string SolverRefusesModel(const Model& m, SolverType type) {
  const SolverRegistration* entry = FindRegistration(type);
  if (entry != nullptr && !entry->box_rows) {
    const auto with_box_rows = [](const SolverRegistration& e) { return e.box_rows; };
    const std::string others = "; use solver " + JoinNames(with_box_rows, true, " or ");
    for (int dof = 0; dof < m.nv && m.frictionloss_enabled; ++dof) {
      if (!(m.dof_frictionloss[dof] > 0)) continue;
      const int joint = m.dof_jnt[dof];
      const std::string name = m.jnt_name[joint].empty() ? "joint " + std::to_string(joint)
                                                         : "joint '" + m.jnt_name[joint] + "'";
      return std::string("solver '") + entry->name + "' has no law for the dry friction " +
             "(frictionloss) of " + name + others;
    }
    for (int a = 0; a < m.nu; ++a) {
      if (!m.actuator_servo_shaped[a] || !m.actuator_force_limited[a]) continue;
      const std::string name = m.actuator_name[a].empty() ? "actuator " + std::to_string(a)
                                                          : "actuator '" + m.actuator_name[a] + "'";
      return std::string("solver '") + entry->name + "' has no law for the force " +
             "limits (forcerange) of the servo " + name + others;
    }
  }
  // Only nsn moves deformables (Step leaves other solvers' vertices where they are); a deformable
  // pinned at every vertex never moves and is served by any.
  for (int v = 0; v < m.nvert && type != SolverType::kNsn; ++v) {
    if (m.vert_body[v] == 0) continue;
    return std::string("solver '") + SolverName(type) + "' cannot move the deformable '" +
           m.deform_name[m.vert_deform[v]] + "'; use solver 'nsn'";
  }
  if (m.high_condim_geom < 0 || SolverSupportsHighCondim(type)) return "";
  const int g = m.high_condim_geom;
  const std::string name =
      m.geom_name[g].empty() ? "geom " + std::to_string(g) : "geom '" + m.geom_name[g] + "'";
  return std::string("solver '") + SolverName(type) + "' cannot express condim 4 or 6 " +
         "(torsional/rolling friction) of " + name + "; use solver " +
         JoinNames([](const SolverRegistration& e) { return e.high_condim; }, true, " or ");
}

bool EnsureSolver(const Model& m, Data& d, SolverType type) {
  if (d.solver == nullptr || d.solver->type() != type) d.solver = CreateSolver(type, m);
  return d.solver != nullptr;
}

}  // namespace alsim
