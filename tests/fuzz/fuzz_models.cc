#include "tests/fuzz/fuzz_models.h"

namespace alsim::fuzz {

const char* const kSnapshotModelXml = R"(<mujoco model="snapshot_fuzz">
  <option timestep="0.005"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <body name="box" pos="0 0 0.1">
      <freejoint name="box"/>
      <geom name="box" type="box" size="0.1 0.1 0.1" mass="1"/>
    </body>
    <body name="arm" pos="0.5 0 0.5">
      <joint name="hinge" type="hinge" axis="0 1 0" limited="true" range="-0.5 0.5"/>
      <geom name="arm" type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.5"/>
      <body name="tip" pos="0.3 0 0">
        <joint name="ball" type="ball"/>
        <geom name="tip" type="sphere" size="0.05" pos="0 0 -0.1" mass="0.2"/>
      </body>
    </body>
    <body name="slider" pos="-0.5 0 0.3">
      <joint name="slide" type="slide" axis="0 0 1" limited="true" range="-0.25 0.1"/>
      <geom name="slider" type="sphere" size="0.05" mass="0.3"/>
    </body>
  </worldbody>
  <equality>
    <connect name="link" body1="slider" body2="box" anchor="0 0 0.2"/>
  </equality>
  <actuator>
    <position name="servo" joint="hinge" kp="20" ctrllimited="true" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
)";

}  // namespace alsim::fuzz
