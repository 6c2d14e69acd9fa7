// Scene text (MJCF, URDF) read as libmujoco 2.2.2 reads it, for the checks that run before
// MuJoCo's compiler and for the clients that send a scene's files.
//
// tinyxml2 is the XML parser libmujoco links, so entities are decoded, comments and CDATA skipped
// and a '>' inside a quoted value stays in the value, exactly as MuJoCo will see them. Text
// scanners got each of these wrong (scene_import_fuzzer's findings).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace alsim {

struct SceneXmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // in document order, decoded

  // The value of attribute `attribute` (exact name), or null when absent.
  const std::string* Attribute(const std::string& attribute) const;
};

// Every element of the text in document order (the root first), or none when the text does not
// parse (MuJoCo then refuses it with its own message).
std::vector<SceneXmlElement> ReadSceneXml(const std::string& xml);

// MuJoCo matches <include> in any case (<INCLUDE>, <inClude>), unlike the schema's other elements,
// and takes a <robot> root in any case as URDF.
bool IsIncludeElement(const SceneXmlElement& element);
bool IsUrdfRoot(const SceneXmlElement& element);

}  // namespace alsim
