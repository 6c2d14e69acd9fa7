// The sandboxed scene compiler (server/scene_compiler.h) and the reference-counted scene catalog
// (server/scene_catalog.h), with the real alsim-scene-compiler program next to this test.
#include "server/scene_compiler.h"
#include "server/scene_catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "engine/data/contact.h"

namespace alsim::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

const char* kBox = R"(<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
  <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
</worldbody></mujoco>)";

grpc::Status Never() { return grpc::Status::OK; }

// A scene that MuJoCo 2.2.2 takes over a second to compile (the time grows as n squared).
std::string ManyBodies(int n) {
  std::string bodies;
  for (int i = 0; i < n; ++i) {
    bodies += "<body pos=\"" + std::to_string(i) + " 0 1\"><freejoint/><geom size=\".1\"/></body>";
  }
  return "<mujoco><worldbody><geom type=\"plane\" size=\"100 100 .1\"/>" + bodies +
         "</worldbody></mujoco>";
}

SceneCompileRequest Text(const std::string& text, std::vector<ModelAsset> assets = {}) {
  SceneCompileRequest request;
  request.text = text;
  request.name = "scene.xml";
  request.assets = std::move(assets);
  return request;
}

// True when this process has no child left (every compiler was reaped).
bool NoChildren() { return waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD; }

TEST(SceneCompilerTest, CompilesAndMeasuresAScene) {
  SceneCompiler compiler({});
  SceneCompileReply reply;
  const grpc::Status status = compiler.Compile(
      Text(R"(<mujoco><include file="dir/box.xml"/></mujoco>)", {{"box.xml", kBox}}), Never,
      &reply);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(reply.model_bytes, 0u);
  EXPECT_GT(reply.instance_bytes, 0u);
  const ModelImport imported = ImportCompiledScene(reply.scene, "scene.xml");
  ASSERT_TRUE(imported) << imported.error;
  EXPECT_EQ(imported.model->nbody, 2);
  EXPECT_TRUE(NoChildren());
}

TEST(SceneCompilerTest, TheSandboxReadsNoFileOfTheServer) {
  SceneCompiler compiler({});
  for (const char* path : {"/etc/passwd", "/etc/hostname", "/dev/zero", "../../etc/passwd"}) {
    SceneCompileReply reply;
    const grpc::Status status = compiler.Compile(
        Text(std::string("<mujoco><include file=\"") + path + "\"/></mujoco>"), Never, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << path;
    EXPECT_THAT(status.error_message(), Not(HasSubstr("root:"))) << path;
  }
}

// A scene's deformables (engine/model/deformable_spec.h) parse in the sandbox, from the client's
// assets only, and cross back as bytes that import; a mesh file named by a server path is not
// read.
TEST(SceneCompilerTest, DeformablesParseInTheSandboxFromTheAssetsOnly) {
  const std::string scene =
      R"(<mujoco><custom><text name="alsim:deformables" data="soft.xml"/></custom>
  <worldbody><geom type="plane" size="5 5 .1"/></worldbody></mujoco>)";
  const std::string companion =
      "<deformables><deformable name='tet' young='1e5' density='1000' node='t.node' "
      "ele='t.ele'/></deformables>";
  SceneCompiler compiler({});
  SceneCompileReply reply;
  grpc::Status status =
      compiler.Compile(Text(scene, {{"soft.xml", companion},
                                    {"t.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n"},
                                    {"t.ele", "1 4 0\n0 0 1 2 3\n"}}),
                       Never, &reply);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const ModelImport imported = ImportCompiledScene(reply.scene, "scene.xml");
  ASSERT_TRUE(imported) << imported.error;
  EXPECT_EQ(imported.model->ntet, 1);
  EXPECT_NEAR(imported.model->vert_mass[0], 1000.0 / 6 / 4, 1e-12);
  for (const char* path : {"/etc/passwd", "../../etc/passwd"}) {
    const std::string bad =
        "<deformables><deformable name='tet' young='1e5' density='1000' "
        "node='" +
        std::string(path) + "' ele='t.ele'/></deformables>";
    SceneCompileReply refused;
    status = compiler.Compile(Text(scene, {{"soft.xml", bad}}), Never, &refused);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << path;
    EXPECT_THAT(status.error_message(), HasSubstr("no file")) << path;
    EXPECT_THAT(status.error_message(), Not(HasSubstr("root:"))) << path;
  }
  EXPECT_TRUE(NoChildren());
}

TEST(SceneCompilerTest, AStopAbandonsTheCompileAtOnce) {
  SceneCompiler compiler({});
  const auto started = std::chrono::steady_clock::now();
  SceneCompileReply reply;
  const grpc::Status status = compiler.Compile(
      Text(ManyBodies(3000)),
      [&] {
        return std::chrono::steady_clock::now() - started > 100ms
                   ? grpc::Status(grpc::StatusCode::CANCELLED, "client left")
                   : grpc::Status::OK;
      },
      &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 600ms);
  EXPECT_TRUE(NoChildren()) << "the compiler was killed and reaped";
}

TEST(SceneCompilerTest, TimeAndMemoryLimitsAreResourceExhausted) {
  SceneCompilerLimits limits;
  limits.seconds = 0.3;
  SceneCompileReply reply;
  grpc::Status status = SceneCompiler(limits).Compile(Text(ManyBodies(3000)), Never, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max-compile-seconds"));
  limits = SceneCompilerLimits{};
  limits.memory_bytes = 64ull << 20;  // the 3000 bodies need about 250 MB
  status = SceneCompiler(limits).Compile(Text(ManyBodies(3000)), Never, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max-compile-memory"));
  EXPECT_TRUE(NoChildren());
}

TEST(SceneCompilerTest, CompilesBeyondTheConcurrencyWaitAndCanGiveUp) {
  SceneCompilerLimits limits;
  limits.concurrent = 1;
  SceneCompiler compiler(limits);
  std::atomic<bool> first_done{false};
  std::thread first([&] {
    SceneCompileReply reply;
    EXPECT_TRUE(compiler.Compile(Text(ManyBodies(2500)), Never, &reply).ok());
    first_done = true;
  });
  std::this_thread::sleep_for(100ms);
  const auto started = std::chrono::steady_clock::now();
  SceneCompileReply reply;
  const grpc::Status status = compiler.Compile(
      Text(kBox),
      [&] {
        return std::chrono::steady_clock::now() - started > 100ms
                   ? grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "waited too long")
                   : grpc::Status::OK;
      },
      &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_FALSE(first_done) << "it gave up while the slot was taken";
  first.join();
  EXPECT_TRUE(compiler.Compile(Text(kBox), Never, &reply).ok()) << "the slot is free again";
}

class SceneCatalogTest : public ::testing::Test {
 protected:
  SceneSource Box(int variant) {
    SceneSource source;
    source.text = kBox;
    source.text.insert(source.text.find("<worldbody>") + 11,
                       "<site name=\"s" + std::to_string(variant) + "\"/>");
    return source;
  }
  std::shared_ptr<const Model> Load(SceneCatalog& catalog, const SceneSource& source) {
    LoadedScene scene;
    const grpc::Status status = catalog.Load(source, Never, &scene);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return scene.model;
  }

  SceneCompiler compiler_{SceneCompilerLimits{}};
  MemoryBudget budget_{0};
};

TEST_F(SceneCatalogTest, OneModelPerSourceFreedWithItsLastUser) {
  SceneCatalog catalog({ALSIM_SCENES_DIR, 0}, &compiler_, &budget_);
  auto a = Load(catalog, Box(1));
  auto again = Load(catalog, Box(1));
  auto b = Load(catalog, Box(2));
  EXPECT_EQ(a, again);
  EXPECT_NE(a, b);
  EXPECT_EQ(catalog.size(), 2u);
  const std::uint64_t charged = budget_.used();
  EXPECT_GT(charged, 0u);
  a.reset();
  EXPECT_EQ(catalog.size(), 2u) << "`again` still holds it";
  again.reset();
  EXPECT_EQ(catalog.size(), 1u);
  std::weak_ptr<const SceneSource> text;
  {
    LoadedScene scene;
    ASSERT_TRUE(catalog.Load(Box(3), Never, &scene).ok());
    text = scene.source;
  }
  b.reset();
  EXPECT_EQ(catalog.size(), 0u);
  EXPECT_EQ(budget_.used(), 0u) << "every byte returned";
  EXPECT_TRUE(text.expired()) << "the scene text is freed with its model";
}

TEST_F(SceneCatalogTest, TheCacheKeepsTheMostRecentlyUsed) {
  SceneCatalog catalog({ALSIM_SCENES_DIR, 2}, &compiler_, &budget_);
  for (int k = 0; k < 5; ++k) Load(catalog, Box(k));
  EXPECT_EQ(catalog.size(), 2u);
  const Model* kept = Load(catalog, Box(4)).get();
  EXPECT_EQ(Load(catalog, Box(4)).get(), kept) << "a cached scene is not compiled again";
}

TEST_F(SceneCatalogTest, ConcurrentLoadsOfOneSceneCompileItOnce) {
  SceneCatalog catalog({ALSIM_SCENES_DIR, 0}, &compiler_, &budget_);
  SceneSource slow;
  slow.text = ManyBodies(1500);
  std::vector<std::shared_ptr<const Model>> models(4);
  std::vector<std::thread> threads;
  for (auto& model : models) {
    threads.emplace_back([&] { model = Load(catalog, slow); });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& model : models) EXPECT_EQ(model, models.front());
}

TEST_F(SceneCatalogTest, BadScenesAndBudgetsAreErrorsThatLeaveNothing) {
  MemoryBudget tiny(1024);
  SceneCatalog catalog({ALSIM_SCENES_DIR, 4}, &compiler_, &tiny);
  LoadedScene scene;
  SceneSource broken;
  broken.text = "<mujoco><bogus/></mujoco>";
  EXPECT_EQ(catalog.Load(broken, Never, &scene).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(catalog.Load(Box(1), Never, &scene).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  SceneSource unknown;
  unknown.builtin = "no_such_scene";
  EXPECT_EQ(catalog.Load(unknown, Never, &scene).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(catalog.size(), 0u);
  EXPECT_EQ(tiny.used(), 0u);
}

TEST_F(SceneCatalogTest, BuiltinScenesCompileFromTheirFolder) {
  SceneCatalog catalog({ALSIM_SCENES_DIR, 0}, &compiler_, &budget_);
  SceneSource builtin;
  builtin.builtin = "box_stack";
  const auto model = Load(catalog, builtin);
  ASSERT_NE(model, nullptr);
  EXPECT_GT(model->nbody, 2);
}

// The memory estimate is measured (the compiler's heap before and after the Model and one
// instance's Data and solver), so it holds what SDF geoms add: their triangulations in the model
// and the kMaxContactsPerSdfPair slots that Data reserves for their pairs (candidate_contacts and
// contact, 4 pairs per geom). The same pile with its dishes as the plain proxy cylinders must cost
// at least that much less.
TEST_F(SceneCatalogTest, TheEstimateCountsSdfTriangulationsAndContactSlots) {
  SceneCatalog catalog({ALSIM_SCENES_DIR, 0}, &compiler_, &budget_);
  SceneSource dishes;
  dishes.builtin = "dish_pile";
  LoadedScene sdf;
  ASSERT_TRUE(catalog.Load(dishes, Never, &sdf).ok());
  ASSERT_EQ(sdf.model->nsdf, 4);
  std::ifstream file(std::string(ALSIM_SCENES_DIR) + "/dish_pile.xml");
  std::stringstream text;
  text << file.rdbuf();
  SceneSource cylinders;
  cylinders.text = text.str();
  const std::size_t begin = cylinders.text.find("<custom>");
  const std::size_t end = cylinders.text.find("</custom>");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  cylinders.text.erase(begin, end + 9 - begin);
  LoadedScene plain;
  ASSERT_TRUE(catalog.Load(cylinders, Never, &plain).ok());
  ASSERT_EQ(plain.model->nsdf, 0);
  ASSERT_EQ(plain.model->ngeom, sdf.model->ngeom);

  const Model& m = *sdf.model;
  const std::uint64_t triangulations =
      m.sdf_vert.size() * sizeof(Vec3) + m.sdf_face.size() * sizeof(Eigen::Vector3i);
  EXPECT_GE(sdf.model_bytes, plain.model_bytes + triangulations);
  const std::uint64_t slots = 2 * 4 * static_cast<std::uint64_t>(m.nsdf) * kMaxContactsPerSdfPair;
  EXPECT_GE(sdf.instance_bytes, plain.instance_bytes + slots * sizeof(Contact));
}

}  // namespace
}  // namespace alsim::server
