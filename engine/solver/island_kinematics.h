// The island driver's hook for solvers that evaluate their rows at trial end-of-step positions
// (the non-smooth Newton solver: every Newton iterate u^n sits at q^n = q- + h G u^n, digest
// seed-002-nsn.md 4.2 and 6 step 4a): a second Data whose configuration and kinematics a solver
// moves island by island, leaving the step's Data at q-.
//
// Begin copies the step's configuration and every body's pose (static bodies and the world stay
// there); Place then puts one island's trees at q = q- (+) h u with the step's own position update
// (IntegrateJointPosition, so the last iterate is exactly where Step puts the bodies) and runs
// their kinematics. Islands own disjoint trees, so Place runs for different islands in parallel.
#pragma once

#include "engine/data/data.h"
#include "engine/island/islands.h"
#include "engine/model/model.h"

namespace alsim {

class IslandKinematics {
 public:
  explicit IslandKinematics(const Model& m);

  // Sequential, before any island: the step's qpos and body poses.
  void Begin(const Model& m, const Data& d);
  // Island `island`'s trees at qpos = d.qpos (+) dt u (u indexed by dof, only the island's read),
  // and their kinematics (KinematicsOfTrees: poses, cdof, inertias).
  void Place(const Model& m, const Data& d, const Islands& islands, int island, const double* u,
             double dt);
  // The same for one tree (subsystem j).
  void PlaceTree(const Model& m, const Data& d, int j, const double* u, double dt);

  // The trial configuration's data: qpos, xpos, xquat, xmat, cdof and the rest of Kinematics'.
  Data& data() { return data_; }
  const Data& data() const { return data_; }

 private:
  Data data_;
};

}  // namespace alsim
