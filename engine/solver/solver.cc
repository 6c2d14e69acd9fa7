#include "engine/solver/solver.h"

#include <cstring>

#include "engine/solver/admm_baselines/admm_nobody_solver.h"
#include "engine/solver/admm_baselines/admm_nosub_solver.h"
#include "engine/solver/canal/canal_solver.h"
#include "engine/solver/hybrid/hybrid_solver.h"
#include "engine/solver/mujoco/mujoco_solver.h"
#include "engine/solver/pgs/pgs_solver.h"
#include "engine/solver/subadmm/subadmm_solver.h"

namespace alsim {
namespace {

struct SolverNameEntry {
  SolverType type;
  const char* name;
};
constexpr SolverNameEntry kSolverNames[] = {
    {SolverType::kSubAdmm, "subadmm"},
    {SolverType::kPgs, "pgs"},
    {SolverType::kAdmmNoSub, "admm-nosub"},
    {SolverType::kAdmmNoBody, "admm-nobody"},
    {SolverType::kCanal, "canal"},
    {SolverType::kCanalTrDogleg, "canal-trdogleg"},
    {SolverType::kCanalDampedSn, "canal-dampedsn"},
    {SolverType::kAuto, "auto"},
    {SolverType::kMujoco, "mujoco"},
};

}  // namespace

const char* SolverName(SolverType type) {
  for (const SolverNameEntry& entry : kSolverNames) {
    if (entry.type == type) return entry.name;
  }
  return "unknown";
}

bool ParseSolverName(const char* name, SolverType* type) {
  for (const SolverNameEntry& entry : kSolverNames) {
    if (std::strcmp(entry.name, name) == 0) {
      *type = entry.type;
      return true;
    }
  }
  return false;
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

namespace {

std::unique_ptr<ConstraintSolver> NewSolver(SolverType type, const Model& m) {
  switch (type) {
    case SolverType::kSubAdmm:
      return std::make_unique<SubAdmmSolver>(m);
    case SolverType::kPgs:
      return std::make_unique<PgsSolver>(m);
    case SolverType::kAdmmNoSub:
      return std::make_unique<AdmmNoSubSolver>(m);
    case SolverType::kAdmmNoBody:
      return std::make_unique<AdmmNoBodySolver>(m);
    case SolverType::kCanal:
    case SolverType::kCanalTrDogleg:
    case SolverType::kCanalDampedSn:
      return std::make_unique<CanalSolver>(m, type);
    case SolverType::kAuto:
      return std::make_unique<HybridSolver>(m);
    case SolverType::kMujoco:
      return std::make_unique<MujocoNewtonSolver>(m);
  }
  return nullptr;
}

void DestroySolver(ConstraintSolver* solver) { delete solver; }

}  // namespace

SolverHandle CreateSolver(SolverType type, const Model& m) {
  return SolverHandle(NewSolver(type, m).release(), SolverDeleter{&DestroySolver});
}

bool SolverSupportsHighCondim(SolverType type) {
  switch (type) {
    case SolverType::kSubAdmm:
    case SolverType::kPgs:
    case SolverType::kAdmmNoSub:
    case SolverType::kAdmmNoBody:
    case SolverType::kAuto:  // islands with condim 4/6 contacts stay with SubADMM (hybrid_solver.h)
    case SolverType::kMujoco:  // a pyramid edge pair per torsional and rolling row, as MuJoCo
      return true;
    // CANAL's proximal projection onto the anisotropic cone (and its derivative, eq. 23) and the
    // Table II baselines' strict-operator Jacobians exist for the isotropic 3-row cone only.
    case SolverType::kCanal:
    case SolverType::kCanalTrDogleg:
    case SolverType::kCanalDampedSn:
      return false;
  }
  return false;
}

ConstraintModel SolverConstraintModel(SolverType type) {
  return type == SolverType::kMujoco ? ConstraintModel::kMujoco : ConstraintModel::kHard;
}

std::string SolverRefusesModel(const Model& m, SolverType type) {
  if (m.high_condim_geom < 0 || SolverSupportsHighCondim(type)) return "";
  const int g = m.high_condim_geom;
  const std::string name =
      m.geom_name[g].empty() ? "geom " + std::to_string(g) : "geom '" + m.geom_name[g] + "'";
  return std::string("solver '") + SolverName(type) + "' cannot express condim 4 or 6 " +
         "(torsional/rolling friction) of " + name +
         "; use solver 'subadmm', 'auto', 'pgs', 'admm-nosub' or 'admm-nobody'";
}

bool EnsureSolver(const Model& m, Data& d, SolverType type) {
  if (d.solver == nullptr || d.solver->type() != type) d.solver = CreateSolver(type, m);
  return d.solver != nullptr;
}

}  // namespace alsim
