// The input encoding of the scene fuzzers (scene_import_fuzzer, and the seeds that make_corpus
// writes for it): the scene text, then any number of assets, each introduced by a line
// "@@asset NAME" and ending where the next one starts:
//
//   <mujoco>...<include file="part.xml"/>...</mujoco>
//   @@asset part.xml
//   <mujoco>...</mujoco>
//
// The assets' bytes are everything up to the next "\n@@asset " (or the end), so a binary mesh
// may hold any byte but that separator.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model_import.h"
#include "engine/model/scene_xml.h"

namespace alsim::fuzz {

inline constexpr std::string_view kAssetSeparator = "\n@@asset ";

struct SceneInput {
  std::string text;
  std::vector<ModelAsset> assets;
};

inline SceneInput DecodeSceneInput(std::string_view input) {
  SceneInput scene;
  std::size_t at = input.find(kAssetSeparator);
  scene.text = std::string(input.substr(0, at));
  while (at != std::string_view::npos) {
    const std::size_t name_at = at + kAssetSeparator.size();
    const std::size_t next = input.find(kAssetSeparator, name_at);
    const std::string_view part = input.substr(name_at, next - name_at);
    const std::size_t newline = part.find('\n');
    ModelAsset asset;
    asset.name = std::string(part.substr(0, newline));
    if (newline != std::string_view::npos) asset.bytes = std::string(part.substr(newline + 1));
    scene.assets.push_back(std::move(asset));
    at = next;
  }
  return scene;
}

inline std::string EncodeSceneInput(const SceneInput& scene) {
  std::string input = scene.text;
  for (const ModelAsset& asset : scene.assets) {
    input += kAssetSeparator;
    input += asset.name;
    input += '\n';
    input += asset.bytes;
  }
  return input;
}

// True for URDF text (a <robot> root, in any case, as MuJoCo takes it) with a <joint> whose type
// MuJoCo's URDF parser does not know. Read as MuJoCo reads it (scene_xml.h), so that a '>' in a
// quoted value or an entity cannot hide the type from this check.
inline bool UrdfJointOfUnknownType(const std::string& text) {
  const std::vector<SceneXmlElement> elements = ReadSceneXml(text);
  if (elements.empty() || !IsUrdfRoot(elements.front())) return false;
  for (const SceneXmlElement& element : elements) {
    const std::string* type = element.name == "joint" ? element.Attribute("type") : nullptr;
    if (type != nullptr && *type != "revolute" && *type != "continuous" && *type != "prismatic" &&
        *type != "fixed" && *type != "floating" && *type != "planar") {
      return true;
    }
  }
  return false;
}

// Scenes that hit known, reported bugs (README "Fuzzing", findings): the fuzz targets skip them so
// that fuzzing goes on past them. Their reproducers are in tests/fuzz/regressions/
// scene_import_fuzzer/; drop a rule once its bug is fixed (or, for libmujoco's, once alsim refuses
// such scenes before MuJoCo sees them).
//   - An OBJ mesh: MuJoCo reads vertices at the faces' indices without checking them against the
//     vertex count (heap over-read, or SEGV for a large index). Any asset named *.obj.
//   - A file attribute (file, filename, fileright, ...) of fewer than 3 characters: MuJoCo takes
//     the name's last 3 characters as its type with std::string::substr, which throws
//     std::out_of_range through MuJoCo's C API, and the process ends in std::terminate. Counted
//     loosely (values under 4 characters, an XML character reference as one character).
//   - A URDF joint whose type MuJoCo does not know (not revolute, continuous, prismatic, fixed,
//     floating or planar): MuJoCo's URDF parser writes through a null pointer (SEGV).
inline bool KnownBug(const SceneInput& scene) {
  for (const ModelAsset& asset : scene.assets) {
    std::string lower;
    for (const char c : asset.name)
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.size() >= 4 && lower.compare(lower.size() - 4, 4, ".obj") == 0) return true;
  }
  const std::string& text = scene.text;
  if (UrdfJointOfUnknownType(text)) return true;
  auto short_file_name = [](const std::string& xml) {
    for (std::size_t at = xml.find("file"); at != std::string::npos;
         at = xml.find("file", at + 1)) {
      std::size_t k = at + 4;
      while (k < xml.size() && std::isalpha(static_cast<unsigned char>(xml[k]))) ++k;
      while (k < xml.size() && std::isspace(static_cast<unsigned char>(xml[k]))) ++k;
      if (k >= xml.size() || xml[k] != '=') continue;
      ++k;
      while (k < xml.size() && std::isspace(static_cast<unsigned char>(xml[k]))) ++k;
      if (k >= xml.size() || (xml[k] != '"' && xml[k] != '\'')) continue;
      const std::size_t end = xml.find(xml[k], k + 1);
      if (end == std::string::npos) continue;
      std::size_t characters = 0;
      for (std::size_t c = k + 1; c < end; ++c, ++characters) {
        if (xml[c] == '&') {
          const std::size_t semicolon = xml.find(';', c);
          if (semicolon != std::string::npos && semicolon < end) c = semicolon;
        }
      }
      if (characters < 4) return true;
    }
    return false;
  };
  if (short_file_name(text)) return true;
  for (const ModelAsset& asset : scene.assets) {
    if (short_file_name(asset.bytes)) return true;  // an included MJCF file
  }
  return false;
}

}  // namespace alsim::fuzz
