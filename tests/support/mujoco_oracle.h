// Test support: one scene loaded both by alsim's importer and by libmujoco, random states set in
// both, and norm-relative comparisons.
#pragma once

#include <mujoco/mujoco.h>

#include <memory>
#include <random>
#include <string>

#include <Eigen/Core>

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim::testing {

inline const std::string kMujocoSamples = "/usr/share/mujoco/model/";

// A scene in both engines. Construction fails the current test (and leaves ok() false) if either
// loader refuses the file.
class OracleScene {
 public:
  explicit OracleScene(const std::string& path);
  ~OracleScene();
  OracleScene(const OracleScene&) = delete;
  OracleScene& operator=(const OracleScene&) = delete;

  bool ok() const { return model_ != nullptr && mj_model_ != nullptr; }
  const Model& model() const { return *model_; }
  Data& data() { return *data_; }
  const mjModel* mj_model() const { return mj_model_; }
  mjModel* mutable_mj_model() { return mj_model_; }  // e.g. to change MuJoCo's options
  mjData* mj_data() { return mj_data_; }
  // Turns every constraint off in both engines (MuJoCo's disable flag "constraint").
  void DisableConstraints();

  // Draws a random configuration and velocity and writes them to both engines' data: unit
  // quaternions for free/ball joints, angles within the range (else +-pi) for hinges, offsets
  // within the range (else +-0.5 m) for slides, free positions within +-2 m of qpos0, velocities
  // standard normal (scaled by `speed`).
  void SetRandomState(std::mt19937& rng, double speed = 2.0);

 private:
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Data> data_;
  mjModel* mj_model_ = nullptr;
  mjData* mj_data_ = nullptr;
};

// The directory of this test process's scenes (TempSceneDir, with a trailing '/'): its own, so
// that tests running in parallel never read each other's files (two tests may write different
// scenes under one name); removed when the process exits.
const std::string& TempSceneDir();

// Writes `xml` to the file `name` in TempSceneDir() and returns its path.
std::string WriteTempScene(const std::string& name, const std::string& xml);

// ||a - b|| / max(1, ||b||).
double NormRelativeError(const Eigen::VectorXd& a, const Eigen::VectorXd& b);

// Expects a to match b to `tol` norm-relative, and every entry to |a_i - b_i| <= tol max(1, |b_i|);
// `what` names the quantity in failure messages. Returns the norm-relative error.
double ExpectNear(const Eigen::VectorXd& a, const Eigen::VectorXd& b, double tol,
                  const std::string& what);

}  // namespace alsim::testing
