#include "engine/model/model.h"

#include <algorithm>
#include <cctype>

namespace alsim {

int JointQposSize(JointType type) {
  switch (type) {
    case JointType::kFree:
      return 7;
    case JointType::kBall:
      return 4;
    case JointType::kSlide:
    case JointType::kHinge:
      return 1;
  }
  return 0;
}

int JointDofSize(JointType type) {
  switch (type) {
    case JointType::kFree:
      return 6;
    case JointType::kBall:
      return 3;
    case JointType::kSlide:
    case JointType::kHinge:
      return 1;
  }
  return 0;
}

int KeyframeId(const Model& m, const std::string& name) {
  if (name.empty()) return -1;
  for (int k = 0; k < m.nkey; ++k) {
    if (m.key_name[static_cast<std::size_t>(k)] == name) return k;
  }
  return -1;
}

std::string FindKeyframe(const Model& m, const std::string& spec, int* key) {
  if (const int id = KeyframeId(m, spec); id >= 0) {
    *key = id;
    return "";
  }
  const bool is_index = !spec.empty() && std::all_of(spec.begin(), spec.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  if (is_index && spec.size() <= 9) {  // larger ones are out of range, and overflow an int
    const int index = std::stoi(spec);
    if (index < m.nkey) {
      *key = index;
      return "";
    }
  }
  const std::string what = is_index ? "keyframe index " + spec + " is out of range"
                                    : "no keyframe is named '" + spec + "'";
  return what + "; the scene's keyframes: " + DescribeKeyframes(m);
}

std::string DescribeKeyframes(const Model& m) {
  if (m.nkey == 0) return "none";
  std::string text;
  for (int k = 0; k < m.nkey; ++k) {
    const std::string& name = m.key_name[static_cast<std::size_t>(k)];
    text += (k == 0 ? "" : ", ") + std::to_string(k) + " " +
            (name.empty() ? std::string("(unnamed)") : "'" + name + "'");
  }
  return text;
}

}  // namespace alsim
