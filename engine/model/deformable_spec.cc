#include "engine/model/deformable_spec.h"

#include <tinyxml2.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include <Eigen/Geometry>

namespace alsim {
namespace {

// "file:line: message".
std::string At(const std::string& file, int line, const std::string& message) {
  return file + ":" + std::to_string(line) + ": " + message;
}

// A whole token as a finite double.
bool ParseNumber(const std::string& token, double* out) {
  if (token.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size() || errno == ERANGE || !std::isfinite(value)) {
    return false;
  }
  *out = value;
  return true;
}

// A whole token as an int in [0, 2^31).
bool ParseIndex(const std::string& token, long long* out) {
  if (token.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(token.c_str(), &end, 10);
  if (end != token.c_str() + token.size() || errno == ERANGE) return false;
  *out = value;
  return true;
}

std::vector<std::string> Tokens(const std::string& text) {
  std::vector<std::string> tokens;
  std::istringstream in(text);
  std::string token;
  while (in >> token) tokens.push_back(token);
  return tokens;
}

// `count` numbers (or any count > 0 when count is -1) from an attribute's text.
std::string Numbers(const std::string& file, int line, const std::string& attribute,
                    const std::string& text, int count, std::vector<double>* out) {
  out->clear();
  for (const std::string& token : Tokens(text)) {
    double value = 0;
    if (!ParseNumber(token, &value)) {
      return At(file, line, attribute + ": '" + token + "' is not a finite number");
    }
    out->push_back(value);
  }
  if (count >= 0 && static_cast<int>(out->size()) != count) {
    return At(file, line, attribute + " needs " + std::to_string(count) + " numbers");
  }
  if (out->empty()) return At(file, line, attribute + " is empty");
  return "";
}

// Indices in [0, limit) from an attribute's text.
std::string Indices(const std::string& file, int line, const std::string& attribute,
                    const std::string& text, long long limit, const char* what,
                    std::vector<int>* out) {
  out->clear();
  for (const std::string& token : Tokens(text)) {
    long long value = 0;
    if (!ParseIndex(token, &value)) {
      return At(file, line, attribute + ": '" + token + "' is not an index");
    }
    if (value < 0 || value >= limit) {
      return At(file, line,
                attribute + ": " + what + " " + token + " is out of range (the mesh has " +
                    std::to_string(limit) + ")");
    }
    out->push_back(static_cast<int>(value));
  }
  if (out->empty()) return At(file, line, attribute + " is empty");
  return "";
}

// TetGen's lines with comments ('#' to the end) and blank lines dropped: (line number, tokens).
std::vector<std::pair<int, std::vector<std::string>>> TetGenLines(const std::string& text) {
  std::vector<std::pair<int, std::vector<std::string>>> lines;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::vector<std::string> tokens = Tokens(line);
    if (!tokens.empty()) lines.emplace_back(number, std::move(tokens));
  }
  return lines;
}

// TetGen's .node: "<points> 3 <attributes> <markers>", then "<index> x y z [attributes] [marker]"
// per point. The first point's index (0 or 1) is the file's base, which .ele's indices share.
std::string ReadNode(const std::string& file, const std::string& text, std::vector<Vec3>* points,
                     int* base) {
  const auto lines = TetGenLines(text);
  if (lines.empty()) return At(file, 1, "empty .node file");
  const auto& header = lines[0].second;
  long long count = 0, dimension = 0, attributes = 0, markers = 0;
  if (header.size() < 2 || !ParseIndex(header[0], &count) || !ParseIndex(header[1], &dimension) ||
      (header.size() > 2 && !ParseIndex(header[2], &attributes)) ||
      (header.size() > 3 && !ParseIndex(header[3], &markers))) {
    return At(file, lines[0].first, "the header is '<points> 3 <attributes> <markers>'");
  }
  if (dimension != 3) return At(file, lines[0].first, "dimension " + header[1] + " (only 3)");
  if (count <= 0 || count > kMaxDeformableVertices || attributes < 0 || markers < 0 ||
      markers > 1) {
    return At(
        file, lines[0].first,
        "bad header (points in 1.." + std::to_string(kMaxDeformableVertices) + ", markers 0 or 1)");
  }
  if (static_cast<long long>(lines.size()) - 1 != count) {
    return At(file, lines.back().first,
              "the header says " + header[0] + " points, the file has " +
                  std::to_string(lines.size() - 1));
  }
  points->resize(count);
  for (long long k = 0; k < count; ++k) {
    const auto& [number, tokens] = lines[k + 1];
    if (static_cast<long long>(tokens.size()) != 4 + attributes + markers) {
      return At(file, number, "a point is '<index> x y z' then its attributes and marker");
    }
    long long index = 0;
    if (!ParseIndex(tokens[0], &index)) return At(file, number, "'" + tokens[0] + "' is no index");
    if (k == 0) {
      if (index != 0 && index != 1) return At(file, number, "the first point is 0 or 1");
      *base = static_cast<int>(index);
    }
    if (index != k + *base) {
      return At(
          file, number,
          "point " + tokens[0] + " out of order (expected " + std::to_string(k + *base) + ")");
    }
    for (int c = 0; c < 3; ++c) {
      if (!ParseNumber(tokens[1 + c], &(*points)[k][c])) {
        return At(file, number, "'" + tokens[1 + c] + "' is not a finite number");
      }
    }
  }
  return "";
}

// TetGen's .ele: "<tets> 4 <attributes>", then "<index> n1 n2 n3 n4 [attributes]" per tet.
std::string ReadEle(const std::string& file, const std::string& text, int base, long long points,
                    std::vector<std::array<int, 4>>* tets) {
  const auto lines = TetGenLines(text);
  if (lines.empty()) return At(file, 1, "empty .ele file");
  const auto& header = lines[0].second;
  long long count = 0, nodes = 0, attributes = 0;
  if (header.size() < 2 || !ParseIndex(header[0], &count) || !ParseIndex(header[1], &nodes) ||
      (header.size() > 2 && !ParseIndex(header[2], &attributes))) {
    return At(file, lines[0].first, "the header is '<tets> 4 <attributes>'");
  }
  if (nodes != 4) return At(file, lines[0].first, header[1] + "-node tets (only 4)");
  if (count <= 0 || count > kMaxDeformableTets || attributes < 0) {
    return At(file, lines[0].first,
              "bad header (tets in 1.." + std::to_string(kMaxDeformableTets) + ")");
  }
  if (static_cast<long long>(lines.size()) - 1 != count) {
    return At(
        file, lines.back().first,
        "the header says " + header[0] + " tets, the file has " + std::to_string(lines.size() - 1));
  }
  tets->resize(count);
  for (long long k = 0; k < count; ++k) {
    const auto& [number, tokens] = lines[k + 1];
    if (static_cast<long long>(tokens.size()) != 5 + attributes) {
      return At(file, number, "a tet is '<index> n1 n2 n3 n4' then its attributes");
    }
    for (int c = 0; c < 4; ++c) {
      long long index = 0;
      if (!ParseIndex(tokens[1 + c], &index) || index < base || index - base >= points) {
        return At(file, number, "vertex '" + tokens[1 + c] + "' is not a point of the .node file");
      }
      (*tets)[k][c] = static_cast<int>(index - base);
    }
  }
  return "";
}

// The signed volume (X1 - X0) . ((X2 - X0) x (X3 - X0)) / 6.
double SignedVolume(const std::vector<Vec3>& x, const std::array<int, 4>& t) {
  const Vec3 a = x[t[1]] - x[t[0]], b = x[t[2]] - x[t[0]], c = x[t[3]] - x[t[0]];
  return a.dot(b.cross(c)) / 6;
}

// The elements and attributes the file may hold.
const std::set<std::string>& DeformableAttributes() {
  static const std::set<std::string> names{"name",      "node",    "ele",     "material",
                                           "young",     "poisson", "density", "friction",
                                           "thickness", "rgba",    "pos",     "scale"};
  return names;
}

std::string ParseOne(const tinyxml2::XMLElement* e, const std::string& file,
                     const DeformableFileLookup& files, DeformableSpec* spec) {
  const int line = e->GetLineNum();
  for (const auto* a = e->FirstAttribute(); a != nullptr; a = a->Next()) {
    if (!DeformableAttributes().count(a->Name())) {
      return At(file, line, "unknown attribute '" + std::string(a->Name()) + "' of <deformable>");
    }
  }
  const auto text = [&](const char* attribute) -> const char* { return e->Attribute(attribute); };
  if (text("name") == nullptr || *text("name") == '\0') {
    return At(file, line, "a <deformable> needs a name");
  }
  spec->name = text("name");
  const std::string element = "deformable '" + spec->name + "'";
  std::vector<double> values;
  const auto number = [&](const char* attribute, double* out) -> std::string {
    if (text(attribute) == nullptr) return "";
    if (std::string error =
            Numbers(file, line, element + " " + attribute, text(attribute), 1, &values);
        !error.empty()) {
      return error;
    }
    *out = values[0];
    return "";
  };
  for (const auto& [attribute, out] : {std::pair{"young", &spec->young},
                                       {"poisson", &spec->poisson},
                                       {"density", &spec->density},
                                       {"friction", &spec->friction},
                                       {"thickness", &spec->thickness}}) {
    if (std::string error = number(attribute, out); !error.empty()) return error;
  }
  if (!(spec->young > 0)) return At(file, line, element + ": young must be > 0 (Pa)");
  if (!(spec->density > 0)) return At(file, line, element + ": density must be > 0 (kg/m^3)");
  if (!(spec->poisson >= 0 && spec->poisson < 0.5)) {
    return At(file, line, element + ": poisson must be in [0, 0.5)");
  }
  if (!(spec->friction >= 0)) return At(file, line, element + ": friction must be >= 0");
  if (!(spec->thickness >= 0)) return At(file, line, element + ": thickness must be >= 0 (m)");
  if (const char* material = text("material"); material != nullptr) {
    const std::string m = material;
    if (m == "linear") {
      spec->material = DeformableMaterial::kLinear;
    } else if (m == "corotated") {
      spec->material = DeformableMaterial::kCorotated;
    } else if (m == "neohookean") {
      spec->material = DeformableMaterial::kNeoHookean;
    } else {
      return At(file, line, element + ": material '" + m + "' (linear, corotated or neohookean)");
    }
  }
  if (text("rgba") != nullptr) {
    if (std::string error = Numbers(file, line, element + " rgba", text("rgba"), 4, &values);
        !error.empty()) {
      return error;
    }
    for (int c = 0; c < 4; ++c) {
      if (!(values[c] >= 0 && values[c] <= 1)) {
        return At(file, line, element + ": rgba values are in [0, 1]");
      }
      spec->rgba[c] = static_cast<float>(values[c]);
    }
  }
  Vec3 pos(0, 0, 0);
  double scale = 1;
  if (text("pos") != nullptr) {
    if (std::string error = Numbers(file, line, element + " pos", text("pos"), 3, &values);
        !error.empty()) {
      return error;
    }
    pos = Vec3(values[0], values[1], values[2]);
  }
  if (std::string error = number("scale", &scale); !error.empty()) return error;
  if (!(scale > 0)) return At(file, line, element + ": scale must be > 0");

  // The mesh: TetGen files or one inline <tetmesh>.
  const tinyxml2::XMLElement* inline_mesh = e->FirstChildElement("tetmesh");
  const bool tetgen = text("node") != nullptr || text("ele") != nullptr;
  if (tetgen == (inline_mesh != nullptr)) {
    return At(file, line, element + ": give node and ele files or one <tetmesh>, not both");
  }
  if (tetgen) {
    if (text("node") == nullptr || text("ele") == nullptr) {
      return At(file, line, element + ": needs both node and ele");
    }
    const std::string node = text("node"), ele = text("ele");
    const std::string* node_bytes = files(node);
    const std::string* ele_bytes = files(ele);
    if (node_bytes == nullptr) return At(file, line, element + ": no file '" + node + "'");
    if (ele_bytes == nullptr) return At(file, line, element + ": no file '" + ele + "'");
    int base = 0;
    if (std::string error = ReadNode(node, *node_bytes, &spec->vertices, &base); !error.empty()) {
      return error;
    }
    if (std::string error = ReadEle(ele, *ele_bytes, base,
                                    static_cast<long long>(spec->vertices.size()), &spec->tets);
        !error.empty()) {
      return error;
    }
  } else {
    const int mesh_line = inline_mesh->GetLineNum();
    for (const auto* a = inline_mesh->FirstAttribute(); a != nullptr; a = a->Next()) {
      const std::string attribute = a->Name();
      if (attribute != "vertices" && attribute != "tets") {
        return At(file, mesh_line, "unknown attribute '" + attribute + "' of <tetmesh>");
      }
    }
    const char* vertex_text = inline_mesh->Attribute("vertices");
    const char* tet_text = inline_mesh->Attribute("tets");
    if (vertex_text == nullptr || tet_text == nullptr) {
      return At(file, mesh_line, element + ": <tetmesh> needs vertices and tets");
    }
    if (std::string error =
            Numbers(file, mesh_line, element + " vertices", vertex_text, -1, &values);
        !error.empty()) {
      return error;
    }
    if (values.size() % 3 != 0 || values.size() / 3 > kMaxDeformableVertices) {
      return At(file, mesh_line,
                element + ": vertices are x y z triples (at most " +
                    std::to_string(kMaxDeformableVertices) + ")");
    }
    spec->vertices.resize(values.size() / 3);
    for (size_t k = 0; k < spec->vertices.size(); ++k) {
      spec->vertices[k] = Vec3(values[3 * k], values[3 * k + 1], values[3 * k + 2]);
    }
    std::vector<int> indices;
    if (std::string error =
            Indices(file, mesh_line, element + " tets", tet_text,
                    static_cast<long long>(spec->vertices.size()), "vertex", &indices);
        !error.empty()) {
      return error;
    }
    if (indices.size() % 4 != 0 || indices.size() / 4 > kMaxDeformableTets) {
      return At(file, mesh_line,
                element + ": tets are 4 vertex indices each (at most " +
                    std::to_string(kMaxDeformableTets) + ")");
    }
    spec->tets.resize(indices.size() / 4);
    for (size_t k = 0; k < spec->tets.size(); ++k) {
      for (int c = 0; c < 4; ++c) spec->tets[k][c] = indices[4 * k + c];
    }
  }
  for (Vec3& x : spec->vertices) x = pos + scale * x;
  std::vector<char> used(spec->vertices.size(), 0);
  for (size_t k = 0; k < spec->tets.size(); ++k) {
    const double volume = SignedVolume(spec->vertices, spec->tets[k]);
    if (!(volume > 0)) {
      return At(file, line,
                element + ": tet " + std::to_string(k) +
                    (volume < 0 ? " is inverted (negative volume)" : " is degenerate (no volume)"));
    }
    for (const int v : spec->tets[k]) used[v] = 1;
  }
  for (size_t v = 0; v < used.size(); ++v) {
    if (!used[v]) {
      return At(file, line, element + ": vertex " + std::to_string(v) + " belongs to no tet");
    }
  }

  // Pins, attachments, activations.
  const long long num_vertices = static_cast<long long>(spec->vertices.size());
  std::vector<char> held(spec->vertices.size(), 0);
  std::set<std::string> activation_names;
  std::vector<char> activated(spec->tets.size(), 0);
  for (const auto* child = e->FirstChildElement(); child != nullptr;
       child = child->NextSiblingElement()) {
    const std::string kind = child->Name();
    const int child_line = child->GetLineNum();
    if (kind == "tetmesh") continue;
    std::vector<int> indices;
    const auto only = [&](std::initializer_list<const char*> allowed) -> std::string {
      for (const auto* a = child->FirstAttribute(); a != nullptr; a = a->Next()) {
        bool ok = false;
        for (const char* name : allowed) ok = ok || std::strcmp(name, a->Name()) == 0;
        if (!ok) {
          return At(file, child_line,
                    "unknown attribute '" + std::string(a->Name()) + "' of <" + kind + ">");
        }
      }
      return "";
    };
    if (kind == "pin" || kind == "attach") {
      if (std::string error = kind == "pin" ? only({"vertices"}) : only({"vertices", "body"});
          !error.empty()) {
        return error;
      }
      const char* vertices = child->Attribute("vertices");
      if (vertices == nullptr) return At(file, child_line, "<" + kind + "> needs vertices");
      if (std::string error = Indices(file, child_line, element + " " + kind + " vertices",
                                      vertices, num_vertices, "vertex", &indices);
          !error.empty()) {
        return error;
      }
      for (const int v : indices) {
        if (held[v]) {
          return At(file, child_line,
                    element + ": vertex " + std::to_string(v) + " is pinned or attached twice");
        }
        held[v] = 1;
      }
      if (kind == "pin") {
        spec->pinned.insert(spec->pinned.end(), indices.begin(), indices.end());
      } else {
        const char* body = child->Attribute("body");
        if (body == nullptr || *body == '\0') {
          return At(file, child_line, "<attach> needs a body");
        }
        spec->attachments.push_back({body, indices});
      }
    } else if (kind == "activation") {
      if (std::string error = only({"name", "tets", "range"}); !error.empty()) return error;
      DeformableSpec::Activation activation;
      const char* name = child->Attribute("name");
      const char* tets = child->Attribute("tets");
      if (name == nullptr || *name == '\0' || tets == nullptr) {
        return At(file, child_line, "<activation> needs a name and tets");
      }
      activation.name = name;
      if (!activation_names.insert(activation.name).second) {
        return At(file, child_line, element + ": two activations named '" + activation.name + "'");
      }
      if (std::string error =
              Indices(file, child_line, element + " activation tets", tets,
                      static_cast<long long>(spec->tets.size()), "tet", &activation.tets);
          !error.empty()) {
        return error;
      }
      for (const int t : activation.tets) {
        if (activated[t]) {
          return At(file, child_line,
                    element + ": tet " + std::to_string(t) +
                        " is in two activations (or twice in one); a tet grows by one activation");
        }
        activated[t] = 1;
      }
      if (const char* range = child->Attribute("range"); range != nullptr) {
        if (std::string error =
                Numbers(file, child_line, element + " activation range", range, 2, &values);
            !error.empty()) {
          return error;
        }
        if (!(values[0] < values[1])) {
          return At(file, child_line, element + ": an activation's range is lower < upper");
        }
        if (!(values[0] > -1)) {
          return At(file, child_line,
                    element + ": an activation's lower bound must be above -1 (its tets' rest " +
                        "shape scales by 1 + a, which must stay positive)");
        }
        activation.lower = values[0];
        activation.upper = values[1];
      }
      spec->activations.push_back(std::move(activation));
    } else {
      return At(file, child_line,
                "unknown element <" + kind +
                    "> in a <deformable> (tetmesh, pin, attach, "
                    "activation)");
    }
  }
  return "";
}

// Little-endian fixed-width fields for the byte string.
class Writer {
 public:
  void Raw(const void* data, size_t size) { bytes_.append(static_cast<const char*>(data), size); }
  void U64(std::uint64_t v) { Raw(&v, sizeof v); }
  void F64(double v) { Raw(&v, sizeof v); }
  void I32(std::int32_t v) { Raw(&v, sizeof v); }
  void String(const std::string& s) {
    U64(s.size());
    Raw(s.data(), s.size());
  }
  void Ints(const std::vector<int>& v) {
    U64(v.size());
    for (const int x : v) I32(x);
  }
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  bool Raw(void* data, size_t size) {
    if (bytes_.size() - at_ < size) return false;
    std::memcpy(data, bytes_.data() + at_, size);
    at_ += size;
    return true;
  }
  bool U64(std::uint64_t* v) { return Raw(v, sizeof *v); }
  bool F64(double* v) { return Raw(v, sizeof *v); }
  bool I32(std::int32_t* v) { return Raw(v, sizeof *v); }
  // A count no larger than the bytes left could hold at `unit` bytes each.
  bool Count(std::uint64_t* n, size_t unit) {
    return U64(n) && *n <= (bytes_.size() - at_) / (unit > 0 ? unit : 1);
  }
  bool String(std::string* s) {
    std::uint64_t n = 0;
    if (!Count(&n, 1)) return false;
    s->assign(bytes_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool Ints(std::vector<int>* v) {
    std::uint64_t n = 0;
    if (!Count(&n, sizeof(std::int32_t))) return false;
    v->resize(n);
    for (auto& x : *v) {
      std::int32_t value = 0;
      if (!I32(&value)) return false;
      x = value;
    }
    return true;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const std::string& bytes_;
  size_t at_ = 0;
};

constexpr std::uint64_t kSerialVersion = 1;

}  // namespace

std::string ParseDeformables(const std::string& text, const std::string& name,
                             const DeformableFileLookup& files, std::vector<DeformableSpec>* out) {
  out->clear();
  tinyxml2::XMLDocument document;
  if (document.Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS) {
    return At(name, document.ErrorLineNum(), std::string("not XML: ") + document.ErrorName());
  }
  const tinyxml2::XMLElement* root = document.RootElement();
  if (root == nullptr || std::strcmp(root->Name(), "deformables") != 0) {
    return At(name, root != nullptr ? root->GetLineNum() : 1, "the root element is <deformables>");
  }
  std::set<std::string> names;
  long long vertices = 0, tets = 0;
  for (const auto* e = root->FirstChildElement(); e != nullptr; e = e->NextSiblingElement()) {
    if (std::strcmp(e->Name(), "deformable") != 0) {
      return At(name, e->GetLineNum(),
                "unknown element <" + std::string(e->Name()) + "> (only <deformable>)");
    }
    if (static_cast<int>(out->size()) == kMaxDeformables) {
      return At(name, e->GetLineNum(),
                "more than " + std::to_string(kMaxDeformables) + " deformables");
    }
    DeformableSpec spec;
    if (std::string error = ParseOne(e, name, files, &spec); !error.empty()) {
      out->clear();
      return error;
    }
    if (!names.insert(spec.name).second) {
      out->clear();
      return At(name, e->GetLineNum(), "two deformables named '" + spec.name + "'");
    }
    vertices += static_cast<long long>(spec.vertices.size());
    tets += static_cast<long long>(spec.tets.size());
    if (vertices > kMaxDeformableVertices || tets > kMaxDeformableTets) {
      out->clear();
      return At(name, e->GetLineNum(),
                "the deformables exceed " + std::to_string(kMaxDeformableVertices) +
                    " vertices or " + std::to_string(kMaxDeformableTets) + " tets");
    }
    out->push_back(std::move(spec));
  }
  if (out->empty()) return At(name, root->GetLineNum(), "no <deformable>");
  return "";
}

std::string SerializeDeformables(const std::vector<DeformableSpec>& specs) {
  Writer w;
  w.U64(kSerialVersion);
  w.U64(specs.size());
  for (const DeformableSpec& s : specs) {
    w.String(s.name);
    w.U64(static_cast<std::uint64_t>(s.material));
    for (const double v : {s.young, s.poisson, s.density, s.friction, s.thickness}) w.F64(v);
    for (const float c : s.rgba) w.F64(c);
    w.U64(s.vertices.size());
    for (const Vec3& x : s.vertices) {
      for (int c = 0; c < 3; ++c) w.F64(x[c]);
    }
    w.U64(s.tets.size());
    for (const auto& t : s.tets) {
      for (const int v : t) w.I32(v);
    }
    w.Ints(s.pinned);
    w.U64(s.attachments.size());
    for (const auto& a : s.attachments) {
      w.String(a.body);
      w.Ints(a.vertices);
    }
    w.U64(s.activations.size());
    for (const auto& a : s.activations) {
      w.String(a.name);
      w.Ints(a.tets);
      w.F64(a.lower);
      w.F64(a.upper);
    }
  }
  return w.bytes_;
}

bool DeserializeDeformables(const std::string& bytes, std::vector<DeformableSpec>* out) {
  out->clear();
  Reader r(bytes);
  std::uint64_t version = 0, count = 0;
  if (!r.U64(&version) || version != kSerialVersion || !r.Count(&count, 8)) return false;
  if (count > static_cast<std::uint64_t>(kMaxDeformables)) return false;
  const auto fail = [&] {
    out->clear();
    return false;
  };
  for (std::uint64_t k = 0; k < count; ++k) {
    DeformableSpec s;
    std::uint64_t material = 0, n = 0;
    if (!r.String(&s.name) || !r.U64(&material) || material > 2) return fail();
    s.material = static_cast<DeformableMaterial>(material);
    for (double* v : {&s.young, &s.poisson, &s.density, &s.friction, &s.thickness}) {
      if (!r.F64(v)) return fail();
    }
    for (float& c : s.rgba) {
      double v = 0;
      if (!r.F64(&v)) return fail();
      c = static_cast<float>(v);
    }
    if (!r.Count(&n, 24) || n > static_cast<std::uint64_t>(kMaxDeformableVertices)) return fail();
    s.vertices.resize(n);
    for (Vec3& x : s.vertices) {
      for (int c = 0; c < 3; ++c) {
        if (!r.F64(&x[c])) return fail();
      }
    }
    if (!r.Count(&n, 16) || n > static_cast<std::uint64_t>(kMaxDeformableTets)) return fail();
    s.tets.resize(n);
    for (auto& t : s.tets) {
      for (int& v : t) {
        std::int32_t value = 0;
        if (!r.I32(&value) || value < 0 || value >= static_cast<int>(s.vertices.size())) {
          return fail();
        }
        v = value;
      }
    }
    if (!r.Ints(&s.pinned)) return fail();
    if (!r.Count(&n, 16)) return fail();
    s.attachments.resize(n);
    for (auto& a : s.attachments) {
      if (!r.String(&a.body) || !r.Ints(&a.vertices)) return fail();
    }
    if (!r.Count(&n, 32)) return fail();
    s.activations.resize(n);
    for (auto& a : s.activations) {
      if (!r.String(&a.name) || !r.Ints(&a.tets) || !r.F64(&a.lower) || !r.F64(&a.upper)) {
        return fail();
      }
    }
    // Indices stay inside their mesh whatever the bytes say.
    const int nv = static_cast<int>(s.vertices.size()), nt = static_cast<int>(s.tets.size());
    for (const int v : s.pinned) {
      if (v < 0 || v >= nv) return fail();
    }
    for (const auto& a : s.attachments) {
      for (const int v : a.vertices) {
        if (v < 0 || v >= nv) return fail();
      }
    }
    for (const auto& a : s.activations) {
      for (const int t : a.tets) {
        if (t < 0 || t >= nt) return fail();
      }
    }
    out->push_back(std::move(s));
  }
  if (!r.done()) return fail();
  return true;
}

}  // namespace alsim
