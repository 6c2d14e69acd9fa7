#include "client/cli/scene_source.h"

#include <sys/stat.h>

#include <fstream>
#include <set>
#include <sstream>

#include "engine/model/scene_xml.h"

namespace alsim::cli {
namespace {

// Includes nested deeper than this are a loop, not a model.
constexpr int kMaxIncludeDepth = 16;

// False unless `path` is a regular file (or a link to one) that can be read.
bool ReadFile(const std::string& path, std::string* text) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return false;
  *text = buffer.str();
  return true;
}

std::string DirectoryOf(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string BaseName(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// `relative` under `directory` ("" or ending in '/'); absolute paths stay as they are.
std::string Join(const std::string& directory, const std::string& relative) {
  if (!relative.empty() && relative[0] == '/') return relative;
  if (directory.empty()) return relative;
  return directory.back() == '/' ? directory + relative : directory + "/" + relative;
}

struct AssetCollector {
  std::string model_directory;  // of the main file, "" or ending in '/'
  std::string meshdir, texturedir;
  google::protobuf::Map<std::string, std::string>* assets;
  std::vector<std::string>* warnings;
  std::set<std::string> visited_includes;

  // Reads the compiler's directories (the first setting of each wins, as in MuJoCo, where one
  // <compiler> is usual).
  void ReadCompiler(const std::vector<SceneXmlElement>& tags) {
    for (const SceneXmlElement& tag : tags) {
      if (tag.name != "compiler") continue;
      const auto attribute = [&](const char* name) {
        const std::string* value = tag.Attribute(name);
        return value == nullptr ? std::string() : *value;
      };
      const std::string assetdir = attribute("assetdir");
      if (meshdir.empty()) meshdir = attribute("meshdir").empty() ? assetdir : attribute("meshdir");
      if (texturedir.empty()) {
        texturedir = attribute("texturedir").empty() ? assetdir : attribute("texturedir");
      }
    }
  }

  // Adds the file at `relative` (to the model's directory); false when it cannot be read.
  bool Add(const std::string& relative, const std::string& referrer) {
    if (assets->count(relative) != 0) return true;
    std::string bytes;
    if (!ReadFile(Join(model_directory, relative), &bytes)) {
      warnings->push_back("cannot read '" + Join(model_directory, relative) + "' (referenced by " +
                          referrer + "); not sent");
      return false;
    }
    (*assets)[relative] = std::move(bytes);
    return true;
  }

  void Collect(const std::string& xml, const std::string& referrer, int depth) {
    const std::vector<SceneXmlElement> tags = ReadSceneXml(xml);
    ReadCompiler(tags);
    for (const SceneXmlElement& tag : tags) {
      for (const auto& [name, value] : tag.attributes) {
        if (value.empty()) continue;
        const bool texture_face = tag.name == "texture" && name.rfind("file", 0) == 0;
        if (name == "file" || texture_face) {
          std::string directory;
          if (tag.name == "mesh" || tag.name == "hfield" || tag.name == "skin") {
            directory = meshdir;
          } else if (tag.name == "texture") {
            directory = texturedir;
          }
          const std::string relative = Join(directory, value);
          if (!Add(relative, referrer) || !IsIncludeElement(tag)) continue;
          if (depth >= kMaxIncludeDepth || !visited_includes.insert(relative).second) continue;
          Collect((*assets)[relative], "'" + relative + "'", depth + 1);
        } else if (name == "data" && tag.name == "text" && tag.Attribute("name") != nullptr &&
                   *tag.Attribute("name") == "alsim:deformables") {
          // The tetrahedral deformables' companion file (docs/engine.md "Deformables") and the
          // TetGen files its deformables name, all next to the model.
          if (!Add(value, referrer)) continue;
          for (const SceneXmlElement& deformable : ReadSceneXml((*assets)[value])) {
            if (deformable.name != "deformable") continue;
            for (const char* file : {"node", "ele"}) {
              const std::string* tetgen = deformable.Attribute(file);
              if (tetgen != nullptr && !tetgen->empty()) Add(*tetgen, "'" + value + "'");
            }
          }
        } else if (name == "filename" && tag.name == "mesh") {
          // URDF: MuJoCo keeps only the file name and looks for it in the compiler's meshdir
          // (<mujoco><compiler meshdir="..."/></mujoco>).
          Add(Join(meshdir, BaseName(value)), referrer);
        }
      }
    }
  }
};

}  // namespace

bool IsBuiltinSceneName(const std::string& scene) {
  return !scene.empty() && scene.find('/') == std::string::npos &&
         scene.find('.') == std::string::npos;
}

std::string LoadSceneSource(const std::string& scene, alsim::v1::SceneSource* source,
                            std::vector<std::string>* warnings) {
  source->Clear();
  if (IsBuiltinSceneName(scene)) {
    source->set_builtin(scene);
    return "";
  }
  alsim::v1::SceneText* text = source->mutable_text();
  if (!ReadFile(scene, text->mutable_text())) return "cannot read the scene file '" + scene + "'";
  text->set_filename(BaseName(scene));
  AssetCollector collector;
  collector.model_directory = DirectoryOf(scene);
  collector.assets = text->mutable_assets();
  collector.warnings = warnings;
  collector.Collect(text->text(), "'" + BaseName(scene) + "'", 0);
  return "";
}

}  // namespace alsim::cli
