// `alsim create SCENE`: one Create call.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "client/cli/json_writer.h"
#include "client/cli/remote_commands.h"
#include "client/cli/remote_common.h"
#include "client/cli/scene_source.h"

namespace alsim::cli {

int CreateCommand(client::Client& client, const std::vector<std::string>& args) {
  FlagParser parser("create", args);
  alsim::v1::CreateRequest request;
  request.set_count(1);
  std::string scene;
  bool json = false;
  while (parser.Next()) {
    if (parser.Is("--count")) {
      request.set_count(static_cast<std::uint32_t>(parser.UnsignedValue(1, UINT32_MAX)));
    } else if (parser.Is("--seed")) {
      request.set_seed(parser.UnsignedValue(0, UINT64_MAX));
    } else if (parser.Is("--keyframe")) {
      // A decimal is an index (a keyframe named by digits only is reached by its index).
      const std::string key = parser.Value();
      if (!key.empty() && key.find_first_not_of("0123456789") == std::string::npos) {
        errno = 0;
        const unsigned long long index = std::strtoull(key.c_str(), nullptr, 10);
        if (errno == ERANGE || index > UINT32_MAX) {
          parser.Error("--keyframe index " + key + " is past 4294967295");
        }
        request.set_keyframe_index(static_cast<std::uint32_t>(index));
      } else {
        request.set_keyframe_name(key);
      }
    } else if (parser.Is("--json")) {
      json = true;
    } else if (ParseSolverFlag(parser, request.mutable_solver())) {
    } else if (!parser.IsFlag() && scene.empty()) {
      scene = parser.arg();
    } else {
      parser.Unexpected();
    }
  }
  if (scene.empty()) parser.Error("no scene given (a built-in name or an MJCF/URDF file)");
  std::vector<std::string> notes;
  if (const std::string error = LoadSceneSource(scene, request.mutable_scene(), &notes);
      !error.empty()) {
    parser.Error(error);
  }
  for (const std::string& note : notes) std::cerr << "alsim: create: warning: " << note << "\n";

  alsim::v1::CreateResponse response;
  const grpc::Status status = client.Create(request, &response);
  if (!status.ok()) return ServerError("create", status);

  const alsim::v1::Specs& specs = response.specs();
  if (json) {
    JsonObjectWriter out;
    out.UInt("group_id", response.group_id());
    out.UIntArray("instance_ids", {response.instance_ids().begin(), response.instance_ids().end()});
    out.String("scene", scene);
    out.Int("nq", specs.nq());
    out.Int("nv", specs.nv());
    out.Int("nu", specs.nu());
    out.Int("nvert", specs.nvert());
    out.Double("timestep", specs.timestep());
    out.StringArray("action_names",
                    {specs.action().element_names().begin(), specs.action().element_names().end()});
    out.StringArray("warnings", {response.warnings().begin(), response.warnings().end()});
    std::cout << out.Finish() << "\n";
    return kExitOk;
  }
  std::cout << "group " << response.group_id() << ": " << response.instance_ids_size()
            << (response.instance_ids_size() == 1 ? " instance" : " instances") << " of " << scene
            << "\ninstances";
  for (const std::uint64_t id : response.instance_ids()) std::cout << " " << id;
  std::printf("\nnq %u, nv %u, nu %u, timestep %g s\n", specs.nq(), specs.nv(), specs.nu(),
              specs.timestep());
  if (specs.nvert() > 0) {  // the deformables' names come with the scene (GetScene)
    alsim::v1::GetSceneRequest scene_request;
    scene_request.set_instance_id(response.instance_ids(0));
    alsim::v1::GetSceneResponse described;
    if (client.GetScene(scene_request, &described).ok()) {
      std::cout << "deformables " << described.deformables_size() << " (" << specs.nvert()
                << " vertices):";
      for (const alsim::v1::SceneDeformable& d : described.deformables()) {
        std::cout << " " << d.name();
      }
      std::cout << "\n";
    }
  }
  for (const std::string& warning : response.warnings()) {
    std::cout << "warning: " << warning << "\n";
  }
  return kExitOk;
}

}  // namespace alsim::cli
