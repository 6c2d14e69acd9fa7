#include "engine/model/model.h"

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

}  // namespace alsim
