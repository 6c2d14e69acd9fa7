#include "client/cli/scene_source.h"

#include <sys/stat.h>

#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace alsim::cli {
namespace {

// Includes nested deeper than this are a loop, not a model.
constexpr int kMaxIncludeDepth = 16;

struct XmlTag {
  std::string element;
  std::map<std::string, std::string> attributes;
};

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' ||
         c == ':';
}

// The start tags of an XML text with their attributes (comments, CDATA, processing instructions
// and declarations skipped). Lenient: enough to find file references, not a validator.
std::vector<XmlTag> StartTags(const std::string& xml) {
  std::vector<XmlTag> tags;
  std::size_t at = 0;
  while ((at = xml.find('<', at)) != std::string::npos) {
    if (xml.compare(at, 4, "<!--") == 0) {
      const std::size_t end = xml.find("-->", at + 4);
      if (end == std::string::npos) break;
      at = end + 3;
      continue;
    }
    if (xml.compare(at, 9, "<![CDATA[") == 0) {
      const std::size_t end = xml.find("]]>", at + 9);
      if (end == std::string::npos) break;
      at = end + 3;
      continue;
    }
    std::size_t i = at + 1;
    if (i >= xml.size() || xml[i] == '/' || xml[i] == '?' || xml[i] == '!') {
      at = i;
      continue;
    }
    XmlTag tag;
    while (i < xml.size() && IsNameChar(xml[i])) tag.element += xml[i++];
    // Attributes: name = "value" | 'value', until '>' (values may hold '>').
    while (i < xml.size() && xml[i] != '>') {
      if (!IsNameChar(xml[i])) {
        ++i;
        continue;
      }
      std::string name;
      while (i < xml.size() && IsNameChar(xml[i])) name += xml[i++];
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i])) != 0) ++i;
      if (i >= xml.size() || xml[i] != '=') continue;
      ++i;
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i])) != 0) ++i;
      if (i >= xml.size() || (xml[i] != '"' && xml[i] != '\'')) continue;
      const char quote = xml[i];
      const std::size_t end = xml.find(quote, i + 1);
      if (end == std::string::npos) {
        i = xml.size();
        break;
      }
      tag.attributes[name] = xml.substr(i + 1, end - i - 1);
      i = end + 1;
    }
    if (!tag.element.empty()) tags.push_back(std::move(tag));
    at = i;
  }
  return tags;
}

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
  void ReadCompiler(const std::vector<XmlTag>& tags) {
    for (const XmlTag& tag : tags) {
      if (tag.element != "compiler") continue;
      const auto attribute = [&](const char* name) {
        const auto found = tag.attributes.find(name);
        return found == tag.attributes.end() ? std::string() : found->second;
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
    const std::vector<XmlTag> tags = StartTags(xml);
    ReadCompiler(tags);
    for (const XmlTag& tag : tags) {
      for (const auto& [name, value] : tag.attributes) {
        if (value.empty()) continue;
        const bool texture_face = tag.element == "texture" && name.rfind("file", 0) == 0;
        if (name == "file" || texture_face) {
          std::string directory;
          if (tag.element == "mesh" || tag.element == "hfield" || tag.element == "skin") {
            directory = meshdir;
          } else if (tag.element == "texture") {
            directory = texturedir;
          }
          const std::string relative = Join(directory, value);
          if (!Add(relative, referrer) || tag.element != "include") continue;
          if (depth >= kMaxIncludeDepth || !visited_includes.insert(relative).second) continue;
          Collect((*assets)[relative], "'" + relative + "'", depth + 1);
        } else if (name == "filename" && tag.element == "mesh") {
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
