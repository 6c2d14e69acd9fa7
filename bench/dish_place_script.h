// The scripted placement of scenes/dish_place.xml (generate_dish_place.py): the gripper lowers the
// 5 kg pot onto the pile of bowl, bowl and plate, lets go and rises, as the SubADMM/CANAL paper's
// robot places its dishes (Sec. VII-B; digest seed-004-subadmm-canal.md 8.2). Shared by
// bench/dish_place_bench.cc and tests/physics/dish_place_test.cc, so that the test checks the very
// run the bench measures; it lives in bench/ (as icf_scenarios.h, which a test also includes)
// because it is the bench's experiment, and tests/support holds test-only helpers.
//
// The script is a state machine over the simulated time t, which sets Data::ctrl before each step
// [OURS: the paper gives neither its trajectory nor its controller]. With the lift servo's reading
// q (0 at the start; q_rest = z_rest - z_pot(0) where the held pot touches down) and its sag
// s = M g / kp for the mass M it carries (the carriage, the fingers and, while held, the pot):
//   hold     0 <= t < t0                  ctrl = 0 + s_loaded, squeeze;
//   lower    t0 <= t < t1                 ctrl = q_rest (t - t0) / (t1 - t0) + s_loaded, at
//                                         lower_speed, so t1 - t0 = |q_rest| / lower_speed;
//   unload   t1 <= t < t2                 ctrl = q_rest + s, s from s_loaded to s_empty linearly:
//                                         the pile takes the pot's weight from the fingers;
//   open     t2 <= t < t3                 the fingers pull back with `release` N to their stops;
//   retract  t3 <= t < t4                 ctrl = q_rest + retract_speed (t - t3) + s_empty;
//   observe  t4 <= t < t5                 ctrl = q_rest + retract_height + s_empty.
// The servo's force kp (ctrl - q) then balances M g at q = the target. The pot's analytic rest
// height is generate_dish_pile.py's rest_heights() (dish_pile.xml's pot z); the light dishes start
// at theirs, so their rest poses are the scene's qpos0.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/sim/step.h"

namespace alsim::bench {

// The pot's rest height on the plate, m: generate_dish_pile.py's rest_heights(), as dish_pile.xml
// writes it (rounded to 1 um).
inline constexpr double kDishPlacePotRestZ = 0.097643;

struct DishPlacePlan {
  double hold = 0.25;            // s: the grip settles (the loaded servo's 4 / (zeta omega))
  double lower_speed = 0.03;     // m/s
  double unload = 0.25;          // s
  double open = 0.25;            // s: a finger at release / damping = 0.6 m/s opens 3 cm
  double retract_speed = 0.1;    // m/s
  double retract_height = 0.05;  // m above where the pot was let go
  double observe = 1.0;          // s
  double squeeze = 120;          // N per finger (the scene's docstring sizes it)
  double release = 30;           // N per finger, opening
  double jitter_window = 0.5;    // s at the end over which the light dishes' speed is averaged
  // Success: the pot within pot_tolerance of its rest position and its axis within max_tilt of
  // vertical, every light dish within light_tolerance of its rest position.
  double pot_tolerance = 2e-3;    // m
  double max_tilt = 0.0175;       // rad, 1 degree
  double light_tolerance = 1e-3;  // m
};

// Indices into the model of what the script drives and measures.
struct DishPlaceScene {
  int pot = -1;
  std::array<int, 3> light{{-1, -1, -1}};  // bowl_1, bowl_2, plate
  int lift = -1;                           // actuator
  std::array<int, 2> fingers{{-1, -1}};    // actuators
  double lift_rest = 0;                    // q_rest, m
  double sag_loaded = 0, sag_empty = 0;    // m
  std::array<Vec3, 4> rest;                // rest positions: pot, then the light dishes
};

// The phase boundaries t0 .. t5 of the file comment, s.
inline std::array<double, 6> DishPlacePhases(const DishPlaceScene& s, const DishPlacePlan& p) {
  std::array<double, 6> t;
  t[0] = p.hold;
  t[1] = t[0] + std::abs(s.lift_rest) / p.lower_speed;
  t[2] = t[1] + p.unload;
  t[3] = t[2] + p.open;
  t[4] = t[3] + p.retract_height / p.retract_speed;
  t[5] = t[4] + p.observe;
  return t;
}

namespace dish_place_detail {
inline int Find(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}
// The frame origin of a body with a free joint, from qpos (its first three entries).
inline Vec3 FreePosition(const Model& m, const std::vector<double>& qpos, int body) {
  const int a = m.jnt_qpos_adr[m.body_jnt_adr[body]];
  return Vec3(qpos[a], qpos[a + 1], qpos[a + 2]);
}
}  // namespace dish_place_detail

// Finds the scene's bodies and actuators; false (with *error) when one is missing.
inline bool FindDishPlace(const Model& m, DishPlaceScene* s, std::string* error) {
  using dish_place_detail::Find;
  const char* light[3] = {"bowl_1", "bowl_2", "plate"};
  s->pot = Find(m.body_name, "pot");
  for (int k = 0; k < 3; ++k) s->light[k] = Find(m.body_name, light[k]);
  const int carriage = Find(m.body_name, "carriage");
  const int finger_bodies[2] = {Find(m.body_name, "finger_l"), Find(m.body_name, "finger_r")};
  s->lift = Find(m.actuator_name, "lift");
  s->fingers = {Find(m.actuator_name, "finger_l"), Find(m.actuator_name, "finger_r")};
  if (s->pot < 0 || *std::min_element(s->light.begin(), s->light.end()) < 0 || carriage < 0 ||
      std::min(finger_bodies[0], finger_bodies[1]) < 0 || s->lift < 0 ||
      std::min(s->fingers[0], s->fingers[1]) < 0) {
    *error =
        "the scene lacks a body (pot, bowl_1, bowl_2, plate, carriage, finger_l, finger_r)"
        " or an actuator (lift, finger_l, finger_r)";
    return false;
  }
  const double kp = -m.actuator_bias1[s->lift];
  if (!(kp > 0)) {
    *error = "the lift actuator is not a position servo";
    return false;
  }
  const double g = -m.gravity.z();
  const double empty =
      m.body_mass[carriage] + m.body_mass[finger_bodies[0]] + m.body_mass[finger_bodies[1]];
  s->sag_empty = empty * g / kp;
  s->sag_loaded = (empty + m.body_mass[s->pot]) * g / kp;
  const Vec3 start = dish_place_detail::FreePosition(m, m.qpos0, s->pot);
  s->rest[0] = Vec3(start.x(), start.y(), kDishPlacePotRestZ);
  s->lift_rest = kDishPlacePotRestZ - start.z();
  for (int k = 0; k < 3; ++k) {
    s->rest[k + 1] = dish_place_detail::FreePosition(m, m.qpos0, s->light[k]);
  }
  return true;
}

// Sets d.ctrl for simulated time t (the file comment's phases).
inline void DishPlaceControl(const DishPlaceScene& s, const DishPlacePlan& p, double t, Data& d) {
  const std::array<double, 6> phase = DishPlacePhases(s, p);
  double target = 0, sag = s.sag_loaded;
  if (t < phase[0]) {
    target = 0;
  } else if (t < phase[1]) {
    target = s.lift_rest * (t - phase[0]) / (phase[1] - phase[0]);
  } else if (t < phase[3]) {
    target = s.lift_rest;
    const double share = std::min(1.0, (t - phase[1]) / p.unload);
    sag = s.sag_loaded + share * (s.sag_empty - s.sag_loaded);
  } else {
    target = s.lift_rest + std::min(p.retract_height, p.retract_speed * (t - phase[3]));
    sag = s.sag_empty;
  }
  d.ctrl[s.lift] = target + sag;
  const double finger = t < phase[2] ? p.squeeze : -p.release;
  for (const int a : s.fingers) d.ctrl[a] = finger;
}

// What a run of the script gives: sums over its steps and the end state's errors.
struct DishPlaceResult {
  int steps = 0;
  StepStatus status = StepStatus::kOk;
  double deepest = 0;  // largest -dist over every contact of every step, m
  double residual_sum = 0, iterations_sum = 0, solve_seconds_sum = 0;
  double jitter_sum = 0;  // the light dishes' mean speed, summed over the jitter window's steps
  int jitter_steps = 0;
  double pot_dxy = 0, pot_dz = 0, pot_tilt = 0;  // end: m, m (signed), rad
  double light_error = 0;                        // end: the largest light dish offset, m
  bool success = false;
};

// Runs the script from the scene's initial state with `options`; on_step(k, d) is called after
// each successful step k.
template <class OnStep>
DishPlaceResult RunDishPlace(const Model& m, const DishPlaceScene& s, const DishPlacePlan& p,
                             const StepOptions& options, OnStep on_step) {
  using dish_place_detail::FreePosition;
  DishPlaceResult r;
  Data d(m);
  const double end = DishPlacePhases(s, p)[5];
  const int steps = static_cast<int>(std::lround(end / m.timestep));
  const int jitter_from = steps - static_cast<int>(std::lround(p.jitter_window / m.timestep));
  for (int k = 0; k < steps; ++k) {
    DishPlaceControl(s, p, d.time, d);
    r.status = Step(m, d, options);
    if (r.status != StepStatus::kOk) break;
    ++r.steps;
    for (const Contact& c : d.contact) r.deepest = std::max(r.deepest, -c.dist);
    const SolverStatistics& stats = d.solver_statistics;
    r.residual_sum += stats.contact_residual;
    r.iterations_sum += stats.mean_iterations;
    r.solve_seconds_sum += stats.solve_seconds;
    if (k >= jitter_from) {
      double speed = 0;
      for (const int b : s.light) {
        const int v = m.jnt_dof_adr[m.body_jnt_adr[b]];
        speed += Vec3(d.qvel[v], d.qvel[v + 1], d.qvel[v + 2]).norm();
      }
      r.jitter_sum += speed / 3;
      ++r.jitter_steps;
    }
    on_step(k, d);
  }
  const Vec3 pot = FreePosition(m, d.qpos, s.pot) - s.rest[0];
  r.pot_dxy = std::hypot(pot.x(), pot.y());
  r.pot_dz = pot.z();
  // The pot's axis' z component is 1 - 2 (x^2 + y^2) of its unit quaternion (w, x, y, z).
  const int q = m.jnt_qpos_adr[m.body_jnt_adr[s.pot]] + 3;
  const double axis_z = 1 - 2 * (d.qpos[q + 1] * d.qpos[q + 1] + d.qpos[q + 2] * d.qpos[q + 2]);
  r.pot_tilt = std::acos(std::clamp(axis_z, -1.0, 1.0));
  for (int k = 0; k < 3; ++k) {
    r.light_error =
        std::max(r.light_error, (FreePosition(m, d.qpos, s.light[k]) - s.rest[k + 1]).norm());
  }
  r.success = r.status == StepStatus::kOk && r.steps == steps && pot.norm() < p.pot_tolerance &&
              r.pot_tilt < p.max_tilt && r.light_error < p.light_tolerance;
  return r;
}

}  // namespace alsim::bench
