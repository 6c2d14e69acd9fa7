#include "tests/support/mujoco_oracle.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/math/spatial.h"
#include "engine/model/model_import.h"

namespace alsim::testing {
namespace {

Quat RandomUnitQuat(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  // Drawn w, x, y, z into locals: constructor arguments are evaluated in no set order.
  const double w = normal(rng), x = normal(rng), y = normal(rng), z = normal(rng);
  const Quat q(w, x, y, z);
  return q.normalized();
}

double Uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

}  // namespace

OracleScene::OracleScene(const std::string& path) {
  ModelImport imported = ImportModelFromFile(path);
  if (!imported) {
    ADD_FAILURE() << "alsim import of " << path << " failed: " << imported.error;
    return;
  }
  char error[1000] = "";
  mj_model_ = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
  if (mj_model_ == nullptr) {
    ADD_FAILURE() << "MuJoCo load of " << path << " failed: " << error;
    return;
  }
  mj_data_ = mj_makeData(mj_model_);
  model_ = imported.model;
  data_ = std::make_unique<Data>(*model_);
}

OracleScene::~OracleScene() {
  if (mj_data_ != nullptr) mj_deleteData(mj_data_);
  if (mj_model_ != nullptr) mj_deleteModel(mj_model_);
}

void OracleScene::DisableConstraints() {
  mj_model_->opt.disableflags |= mjDSBL_CONSTRAINT;
  auto model = std::make_shared<Model>(*model_);
  model->constraints_enabled = false;
  model_ = std::move(model);
}

void OracleScene::SetRandomState(std::mt19937& rng, double speed) {
  const Model& m = *model_;
  std::vector<double>& qpos = data_->qpos;
  for (int j = 0; j < m.njnt; ++j) {
    double* q = qpos.data() + m.jnt_qpos_adr[j];
    const double* q0 = m.qpos0.data() + m.jnt_qpos_adr[j];
    switch (m.jnt_type[j]) {
      case JointType::kFree: {
        for (int k = 0; k < 3; ++k) q[k] = q0[k] + Uniform(rng, -2, 2);
        const Quat r = RandomUnitQuat(rng);
        std::copy(r.data(), r.data() + 4, q + 3);
        break;
      }
      case JointType::kBall: {
        const Quat r = RandomUnitQuat(rng);
        std::copy(r.data(), r.data() + 4, q);
        break;
      }
      case JointType::kHinge:
        q[0] = m.jnt_limited[j] ? Uniform(rng, m.jnt_range_lower[j], m.jnt_range_upper[j])
                                : Uniform(rng, -M_PI, M_PI);
        break;
      case JointType::kSlide:
        q[0] = m.jnt_limited[j] ? Uniform(rng, m.jnt_range_lower[j], m.jnt_range_upper[j])
                                : q0[0] + Uniform(rng, -0.5, 0.5);
        break;
    }
  }
  std::normal_distribution<double> normal;
  for (double& v : data_->qvel) v = speed * normal(rng);
  std::copy(qpos.begin(), qpos.end(), mj_data_->qpos);
  std::copy(data_->qvel.begin(), data_->qvel.end(), mj_data_->qvel);
}

const std::string& TempSceneDir() {
  static const struct Directory {
    std::string path = ::testing::TempDir() + "alsim_scenes_" + std::to_string(::getpid()) + "/";
    Directory() { std::filesystem::create_directories(path); }
    ~Directory() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } directory;
  return directory.path;
}

std::string WriteTempScene(const std::string& name, const std::string& xml) {
  const std::string path = TempSceneDir() + name;
  std::ofstream out(path);
  out << xml;
  if (!out.flush()) ADD_FAILURE() << "cannot write " << path;
  return path;
}

double NormRelativeError(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return (a - b).norm() / std::max(1.0, b.norm());
}

double ExpectNear(const Eigen::VectorXd& a, const Eigen::VectorXd& b, double tol,
                  const std::string& what) {
  EXPECT_EQ(a.size(), b.size()) << what;
  if (a.size() != b.size()) return INFINITY;
  const double error = NormRelativeError(a, b);
  EXPECT_LE(error, tol) << what << ": norm-relative error";
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    if (std::abs(a[i] - b[i]) > tol * std::max(1.0, std::abs(b[i]))) {
      ADD_FAILURE() << what << "[" << i << "] = " << a[i] << ", expected " << b[i];
      break;
    }
  }
  return error;
}

}  // namespace alsim::testing
