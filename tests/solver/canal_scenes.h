// Scenes shared by the CANAL tests (canal_test.cc), the Table II Newton baselines' tests
// (newton_baselines_test.cc) and the solver baselines' incline tests (solver_baselines_test.cc): a
// box on an incline (digest seed-004 section 11, tests 11-12), the three-point two-box stack (test
// 14), a scene with every row type, and several islands.
#pragma once

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/model/model_import.h"

namespace alsim {
namespace canal_scenes {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kGravity = 9.81;
inline constexpr double kStep = 1.0 / 240.0;

inline std::shared_ptr<const Model> Load(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml);
  if (!imported) throw std::runtime_error(imported.error);
  return imported.model;
}

// A 1 x 1 x 0.2 m box of 1 kg lying exactly on a plane tilted by `degrees` about y (normal
// (sin a, 0, cos a)), four corner contacts of friction `mu` (also solver_baselines_test.cc's).
inline std::string BoxOnIncline(double degrees, double mu) {
  const double a = degrees * kPi / 180;
  const std::string tilt = "euler=\"0 " + std::to_string(degrees) + " 0\"";
  char center[128], timestep[64];
  std::snprintf(center, sizeof(center), "%.17g 0 %.17g", 0.1 * std::sin(a), 0.1 * std::cos(a));
  std::snprintf(timestep, sizeof(timestep), "%.17g", kStep);
  return R"(<mujoco><compiler angle="degree"/><option timestep=")" + std::string(timestep) +
         R"("/><default><geom friction=")" + std::to_string(mu) +
         R"( 0.005 0.0001" condim="3" margin="0" gap="0"/></default><worldbody>
      <geom type="plane" size="3 3 0.1" )" +
         tilt + R"(/>
      <body pos=")" +
         center + "\" " + tilt +
         R"(><freejoint/><geom type="box" size="0.5 0.5 0.1" mass="1"/></body>
    </worldbody></mujoco>)";
}

// A 5 kg box on three sphere feet standing on a 0.1 kg box on three sphere feet on the floor:
// the digest's mass ratio (heavy over light) with three point contacts per interface, so that
// the sliding solution is unique (four coplanar contacts make it non-unique, digest test 14).
inline constexpr char kThreePointStack[] = R"(<mujoco><option timestep="0.0041666666666666667"/>
  <default><geom friction="0.5 0.005 0.0001" condim="3"/></default>
  <worldbody><geom type="plane" size="5 5 0.1"/>
    <body pos="0 0 0.13"><freejoint/>
      <geom type="box" size="0.25 0.25 0.04" mass="0.1"/>
      <geom type="sphere" size="0.04" pos="0.18 0.02 -0.08" mass="0.01"/>
      <geom type="sphere" size="0.04" pos="-0.1 0.15 -0.08" mass="0.01"/>
      <geom type="sphere" size="0.04" pos="-0.08 -0.16 -0.08" mass="0.01"/>
    </body>
    <body pos="0.03 -0.02 0.25"><freejoint/>
      <geom type="box" size="0.12 0.12 0.03" mass="5"/>
      <geom type="sphere" size="0.02" pos="0.09 0.01 -0.05" mass="0.01"/>
      <geom type="sphere" size="0.02" pos="-0.05 0.08 -0.05" mass="0.01"/>
      <geom type="sphere" size="0.02" pos="-0.04 -0.08 -0.05" mass="0.01"/>
    </body>
  </worldbody></mujoco>)";

// A hanging arm whose shoulder rests on its limit (a hard row), held by two PD servos (soft rows,
// one with a force range that clamps), a ball on its upper link (a contact), and a pendulum bob
// hung by a connect equality (three equality rows) swinging into the floor: every row type.
inline constexpr char kEveryRowType[] = R"(<mujoco><compiler angle="degree"/>
  <option timestep="0.0041666666666666667"/>
  <default><geom friction="0.6 0.005 0.0001" condim="3"/></default>
  <worldbody><geom type="plane" size="5 5 0.1"/>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" range="-30 0.2" limited="true"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/>
      <body name="fore" pos="0.5 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04" mass="0.5"/>
        <body name="hand" pos="0 0 -0.4">
          <joint name="wrist" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 -0.3 0 0.3" size="0.02" mass="0.2"/>
        </body>
      </body>
    </body>
    <body name="ball" pos="0.3 0 1.15"><freejoint/><geom type="sphere" size="0.1" mass="0.3"/></body>
    <body name="bob" pos="2 0 0.1"><freejoint/><geom type="sphere" size="0.1" mass="0.5"/></body>
  </worldbody>
  <equality><connect body1="bob" anchor="0 0.3 0.6"/></equality>
  <actuator>
    <general joint="elbow" gainprm="40" biasprm="0 -40 -2" biastype="affine"/>
    <general joint="wrist" gainprm="20" biasprm="0 -20 -1" biastype="affine"
             forcelimited="true" forcerange="-0.05 0.05"/>
  </actuator></mujoco>)";

// Two copies of the three-point stack beside kEveryRowType's arm: at least three islands.
inline std::string SeveralIslands() {
  std::string xml = kEveryRowType;
  const std::string stack = kThreePointStack;
  const std::string body_begin = "<body pos=\"0 0 0.13\">";
  const std::string bodies =
      stack.substr(stack.find(body_begin), stack.rfind("</worldbody>") - stack.find(body_begin));
  std::string shifted;
  for (const double x : {-3.0, -2.0}) {
    std::string copy = bodies;
    for (const std::string& from :
         {std::string("pos=\"0 0 0.13\""), std::string("pos=\"0.03 -0.02 0.25\"")}) {
      const size_t at = copy.find(from);
      char to[64];
      const double x0 = from.find("0.03") != std::string::npos ? 0.03 : 0.0;
      const double y0 = from.find("0.03") != std::string::npos ? -0.02 : 0.0;
      const double z0 = from.find("0.03") != std::string::npos ? 0.25 : 0.13;
      std::snprintf(to, sizeof(to), "pos=\"%g %g %g\"", x + x0, y0, z0);
      copy.replace(at, from.size(), to);
    }
    shifted += copy;
  }
  const std::string anchor = "</worldbody>";
  xml.insert(xml.find(anchor), shifted);
  return xml;
}

}  // namespace canal_scenes
}  // namespace alsim
