// The deformables' companion file (engine/model/deformable_spec.h): TetGen and inline meshes,
// defaults, every refusal with its file and line, and the byte string that crosses the sandbox.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/model/deformable_spec.h"

namespace alsim {
namespace {

// One unit tet, positively oriented, as TetGen writes it (1-based, with a marker column).
const char* kNode =
    "# a unit tet\n"
    "4 3 0 1\n"
    "1 0 0 0 1\n"
    "2 1 0 0 1\n"
    "3 0 1 0 1\n"
    "4 0 0 1 1\n";
const char* kEle =
    "1 4 0\n"
    "1 1 2 3 4\n";

struct Files {
  std::map<std::string, std::string> bytes{{"tet.node", kNode}, {"tet.ele", kEle}};
  DeformableFileLookup lookup() const {
    return [this](const std::string& name) -> const std::string* {
      const auto it = bytes.find(name);
      return it == bytes.end() ? nullptr : &it->second;
    };
  }
};

std::string Parse(const std::string& text, std::vector<DeformableSpec>* out,
                  const Files& files = Files()) {
  return ParseDeformables(text, "soft.xml", files.lookup(), out);
}

TEST(DeformableSpecTest, ReadsTetGenFilesWithTheDefaultsAndPlacesTheMesh) {
  std::vector<DeformableSpec> specs;
  ASSERT_EQ(Parse("<deformables>\n  <deformable name='ball' node='tet.node' ele='tet.ele' "
                  "young='1e5' density='1000' pos='1 2 3' scale='2'/>\n</deformables>",
                  &specs),
            "");
  ASSERT_EQ(specs.size(), 1u);
  const DeformableSpec& s = specs[0];
  EXPECT_EQ(s.name, "ball");
  EXPECT_EQ(s.material, DeformableMaterial::kCorotated);
  EXPECT_EQ(s.young, 1e5);
  EXPECT_EQ(s.poisson, 0.3);
  EXPECT_EQ(s.density, 1000);
  EXPECT_EQ(s.friction, 0.5);
  EXPECT_EQ(s.thickness, 0);
  ASSERT_EQ(s.vertices.size(), 4u);
  EXPECT_EQ(s.vertices[0], Vec3(1, 2, 3));
  EXPECT_EQ(s.vertices[1], Vec3(3, 2, 3));  // pos + scale x
  ASSERT_EQ(s.tets.size(), 1u);
  EXPECT_EQ(s.tets[0], (std::array<int, 4>{0, 1, 2, 3}));  // 1-based in the file
}

TEST(DeformableSpecTest, ReadsAnInlineMeshWithPinsAttachmentsAndActivations) {
  std::vector<DeformableSpec> specs;
  ASSERT_EQ(Parse("<deformables><deformable name='finger' material='linear' young='1e7' "
                  "poisson='0.47' density='1200' friction='0.7' thickness='0.001' "
                  "rgba='0.1 0.2 0.3 1'>"
                  "<tetmesh vertices='0 0 0  1 0 0  0 1 0  0 0 1  1 1 1' tets='0 1 2 3  1 2 3 4'/>"
                  "<pin vertices='0'/><attach body='palm' vertices='1 2'/>"
                  "<activation name='curl' tets='1' range='-0.5 2'/>"
                  "</deformable></deformables>",
                  &specs),
            "");
  const DeformableSpec& s = specs.at(0);
  EXPECT_EQ(s.material, DeformableMaterial::kLinear);
  EXPECT_EQ(s.poisson, 0.47);
  EXPECT_FLOAT_EQ(s.rgba[2], 0.3f);
  EXPECT_EQ(s.tets.size(), 2u);
  EXPECT_EQ(s.pinned, std::vector<int>{0});
  ASSERT_EQ(s.attachments.size(), 1u);
  EXPECT_EQ(s.attachments[0].body, "palm");
  EXPECT_EQ(s.attachments[0].vertices, (std::vector<int>{1, 2}));
  ASSERT_EQ(s.activations.size(), 1u);
  EXPECT_EQ(s.activations[0].name, "curl");
  EXPECT_EQ(s.activations[0].tets, std::vector<int>{1});
  EXPECT_EQ(s.activations[0].lower, -0.5);
  EXPECT_EQ(s.activations[0].upper, 2);
}

// Each refusal names the file and the line, and what is wrong.
TEST(DeformableSpecTest, RefusesBadInputNamingTheFileAndLine) {
  const std::string head = "<deformables>\n<deformable name='d' young='1e5' density='1000' ";
  const std::string mesh = "<tetmesh vertices='0 0 0 1 0 0 0 1 0 0 0 1' tets='0 1 2 3'/>";
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases = {
      {"<deformables>", "soft.xml:1: not XML"},
      {"<mujoco/>", "soft.xml:1: the root element is <deformables>"},
      {"<deformables>\n<body/></deformables>", "soft.xml:2: unknown element <body>"},
      {head + "color='red'>" + mesh + "</deformable></deformables>",
       "soft.xml:2: unknown attribute 'color'"},
      {"<deformables>\n<deformable young='1'/></deformables>", "soft.xml:2: a <deformable> needs"},
      {"<deformables>\n<deformable name='d' young='0' density='1'>" + mesh +
           "</deformable></deformables>",
       "young must be > 0"},
      {"<deformables>\n<deformable name='d' young='nan' density='1'>" + mesh +
           "</deformable></deformables>",
       "soft.xml:2: deformable 'd' young: 'nan' is not a finite number"},
      {head + "poisson='0.5'>" + mesh + "</deformable></deformables>",
       "poisson must be in [0, 0.5)"},
      {head + "material='rubber'>" + mesh + "</deformable></deformables>",
       "material 'rubber' (linear, corotated or neohookean)"},
      {head + ">\n<tetmesh vertices='0 0 0 1 0 0 0 1 0 0 0 1' tets='0 1 2 4'/>"
              "</deformable></deformables>",
       "soft.xml:3: deformable 'd' tets: vertex 4 is out of range (the mesh has 4)"},
      {head + ">\n<tetmesh vertices='0 0 0 1 0 0 0 1 0 0 0 1' tets='0 2 1 3'/>"
              "</deformable></deformables>",
       "soft.xml:2: deformable 'd': tet 0 is inverted (negative volume)"},
      {head + ">\n<tetmesh vertices='0 0 0 1 0 0 2 0 0 0 0 1' tets='0 1 2 3'/>"
              "</deformable></deformables>",
       "tet 0 is degenerate (no volume)"},
      {head + ">\n<tetmesh vertices='0 0 0 1 0 0 0 1 0 0 0 1 5 5 5' tets='0 1 2 3'/>"
              "</deformable></deformables>",
       "vertex 4 belongs to no tet"},
      {head + ">" + mesh + "\n<pin vertices='0'/><attach body='b' vertices='0'/>" +
           "</deformable></deformables>",
       "soft.xml:3: deformable 'd': vertex 0 is pinned or attached twice"},
      {head + ">" + mesh + "\n<activation name='a' tets='1'/></deformable></deformables>",
       "soft.xml:3: deformable 'd' activation tets: tet 1 is out of range"},
      {head + ">" + mesh +
           "\n<activation name='a' tets='0' range='-1 1'/></deformable></deformables>",
       "soft.xml:3: deformable 'd': an activation's lower bound must be above -1"},
      {head + ">" + mesh +
           "\n<activation name='a' tets='0'/>\n<activation name='b' tets='0'/>"
           "</deformable></deformables>",
       "soft.xml:4: deformable 'd': tet 0 is in two activations"},
      {head + ">" + mesh + "\n<spring/></deformable></deformables>",
       "soft.xml:3: unknown element <spring>"},
      {head + "node='none.node' ele='tet.ele'/></deformables>", "no file 'none.node'"},
      {head + "node='tet.node' ele='tet.ele'>" + mesh + "</deformable></deformables>",
       "give node and ele files or one <tetmesh>, not both"},
      {head + ">" + mesh + "</deformable>\n<deformable name='d' young='1' density='1'>" + mesh +
           "</deformable></deformables>",
       "soft.xml:3: two deformables named 'd'"},
  };
  for (const Case& c : cases) {
    std::vector<DeformableSpec> specs;
    const std::string error = Parse(c.text, &specs);
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.text << "\n -> " << error;
    EXPECT_TRUE(specs.empty());
  }
}

TEST(DeformableSpecTest, TetGenErrorsNameTheMeshFileAndLine) {
  const std::string text =
      "<deformables><deformable name='d' young='1' density='1' node='tet.node' "
      "ele='tet.ele'/></deformables>";
  struct Case {
    std::string node, ele, expected;
  };
  const std::vector<Case> cases = {
      {"4 2 0 0\n", kEle, "tet.node:1: dimension 2 (only 3)"},
      {"5 3 0 1\n1 0 0 0 1\n", kEle, "the header says 5 points, the file has 1"},
      {"4 3 0 1\n1 0 0 0 1\n2 1 0 0 1\n3 0 1 0 1\n5 0 0 1 1\n", kEle,
       "tet.node:5: point 5 out of order (expected 4)"},
      {"4 3 0 1\n1 0 0 0 1\n2 1 0 x 1\n3 0 1 0 1\n4 0 0 1 1\n", kEle,
       "tet.node:3: 'x' is not a finite number"},
      {kNode, "1 10 0\n1 1 2 3 4 5 6 7 8 9 10\n", "tet.ele:1: 10-node tets (only 4)"},
      {kNode, "1 4 0\n1 1 2 3 5\n", "tet.ele:2: vertex '5' is not a point of the .node file"},
      {kNode, "1 4 0\n\n# comment\n1 0 2 3 4\n", "tet.ele:4: vertex '0' is not a point"},
  };
  for (const Case& c : cases) {
    Files files;
    files.bytes["tet.node"] = c.node;
    files.bytes["tet.ele"] = c.ele;
    std::vector<DeformableSpec> specs;
    const std::string error = Parse(text, &specs, files);
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.expected << "\n -> " << error;
  }
}

TEST(DeformableSpecTest, TheByteStringRoundTripsAndRefusesDamage) {
  std::vector<DeformableSpec> specs;
  ASSERT_EQ(Parse("<deformables><deformable name='a' young='2e6' density='900' "
                  "node='tet.node' ele='tet.ele'><pin vertices='3'/></deformable>"
                  "<deformable name='b' material='corotated' young='1e5' density='1000'>"
                  "<tetmesh vertices='0 0 0 1 0 0 0 1 0 0 0 1' tets='0 1 2 3'/>"
                  "<attach body='hand' vertices='0 1'/><activation name='s' tets='0'/>"
                  "</deformable></deformables>",
                  &specs),
            "");
  const std::string bytes = SerializeDeformables(specs);
  std::vector<DeformableSpec> back;
  ASSERT_TRUE(DeserializeDeformables(bytes, &back));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(SerializeDeformables(back), bytes);
  EXPECT_EQ(back[1].attachments[0].body, "hand");
  EXPECT_EQ(back[0].pinned, std::vector<int>{3});
  // Every truncation, and a byte changed in a count or an index, is refused or stays in range.
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DeserializeDeformables(bytes.substr(0, n), &back)) << n;
    EXPECT_TRUE(back.empty());
  }
  EXPECT_FALSE(DeserializeDeformables(bytes + "x", &back));
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string damaged = bytes;
    damaged[n] = static_cast<char>(damaged[n] ^ 0x5a);
    if (!DeserializeDeformables(damaged, &back)) continue;
    for (const DeformableSpec& s : back) {
      for (const auto& t : s.tets) {
        for (const int v : t) EXPECT_LT(v, static_cast<int>(s.vertices.size()));
      }
    }
  }
}

}  // namespace
}  // namespace alsim
