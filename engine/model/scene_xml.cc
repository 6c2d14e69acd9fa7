#include "engine/model/scene_xml.h"

#include <strings.h>
#include <tinyxml2.h>

namespace alsim {

const std::string* SceneXmlElement::Attribute(const std::string& attribute) const {
  for (const auto& [key, value] : attributes) {
    if (key == attribute) return &value;
  }
  return nullptr;
}

std::vector<SceneXmlElement> ReadSceneXml(const std::string& xml) {
  std::vector<SceneXmlElement> elements;
  tinyxml2::XMLDocument document;
  if (document.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS) return elements;
  // Depth first with an explicit stack: each element's children pushed last to first.
  std::vector<const tinyxml2::XMLElement*> stack;
  for (const auto* e = document.LastChildElement(); e != nullptr; e = e->PreviousSiblingElement()) {
    stack.push_back(e);
  }
  while (!stack.empty()) {
    const tinyxml2::XMLElement* element = stack.back();
    stack.pop_back();
    SceneXmlElement& out = elements.emplace_back();
    out.name = element->Name();
    for (const auto* a = element->FirstAttribute(); a != nullptr; a = a->Next()) {
      out.attributes.emplace_back(a->Name(), a->Value());
    }
    for (const auto* e = element->LastChildElement(); e != nullptr;
         e = e->PreviousSiblingElement()) {
      stack.push_back(e);
    }
  }
  return elements;
}

bool IsIncludeElement(const SceneXmlElement& element) {
  return strcasecmp(element.name.c_str(), "include") == 0;
}

bool IsUrdfRoot(const SceneXmlElement& element) {
  return strcasecmp(element.name.c_str(), "robot") == 0;
}

}  // namespace alsim
