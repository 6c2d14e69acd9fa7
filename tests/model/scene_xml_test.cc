#include "engine/model/scene_xml.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace alsim {
namespace {

std::vector<std::string> Names(const std::vector<SceneXmlElement>& elements) {
  std::vector<std::string> names;
  for (const auto& element : elements) names.push_back(element.name);
  return names;
}

TEST(SceneXmlTest, ElementsComeInDocumentOrderRootFirst) {
  const auto elements = ReadSceneXml(
      "<mujoco><worldbody><body><geom/></body><site/></worldbody><actuator/></mujoco>");
  EXPECT_EQ(Names(elements),
            (std::vector<std::string>{"mujoco", "worldbody", "body", "geom", "site", "actuator"}));
}

// What text scanners got wrong: the values are MuJoCo's, comments and CDATA hold no elements.
TEST(SceneXmlTest, ValuesAndCommentsAreReadAsMujocoReadsThem) {
  const auto elements = ReadSceneXml(
      R"(<mujoco><!-- <include file="hidden.xml"/> --><![CDATA[<include file="x.xml"/>]]>)"
      R"(<include file="a>b/&#47;&amp;.xml" other='q"uote'/></mujoco>)");
  ASSERT_EQ(Names(elements), (std::vector<std::string>{"mujoco", "include"}));
  ASSERT_NE(elements[1].Attribute("file"), nullptr);
  EXPECT_EQ(*elements[1].Attribute("file"), "a>b//&.xml");
  EXPECT_EQ(*elements[1].Attribute("other"), "q\"uote");
  EXPECT_EQ(elements[1].Attribute("File"), nullptr);  // attribute names are exact, as MuJoCo's
}

TEST(SceneXmlTest, TextThatDoesNotParseHasNoElements) {
  EXPECT_TRUE(ReadSceneXml("<mujoco><worldbody></mujoco>").empty());
  EXPECT_TRUE(ReadSceneXml("").empty());
  EXPECT_TRUE(ReadSceneXml("not xml").empty());
}

TEST(SceneXmlTest, IncludeAndUrdfRootMatchInAnyCase) {
  for (const std::string name : {"include", "INCLUDE", "inClude"}) {
    EXPECT_TRUE(IsIncludeElement({name, {}})) << name;
  }
  EXPECT_FALSE(IsIncludeElement({"includes", {}}));
  EXPECT_TRUE(IsUrdfRoot({"Robot", {}}));
  EXPECT_FALSE(IsUrdfRoot({"mujoco", {}}));
}

}  // namespace
}  // namespace alsim
