// scenes/dish_place.xml (issue 46; the SubADMM/CANAL paper's dish placing, Sec. VII-B, digest
// seed-004-subadmm-canal.md 8.2): bench/dish_place_script.h's gripper lowers the 5 kg pot onto the
// plate of a bowl-bowl-plate pile, lets go and rises, with SubADMM at its defaults (no budget).
//
// The independent answer is the pile's geometry: generate_dish_pile.py's analytic rest heights,
// where the light dishes start and where the pot's bottom corner rests on the plate's wall. The
// placement must end with the pot within 2 mm of its rest position and upright, the light dishes
// within 1 mm of theirs, and no contact deeper than 1 mm at any step. Along the way the grip must
// hold: friction 2 mu F = 120 N against the pot's 49 N, so the pot keeps its height until the
// carriage moves, and once the fingers have opened and risen, nothing touches them.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "bench/dish_place_script.h"
#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"

namespace alsim {
namespace {

// The script's rest poses are dish_pile.xml's: the pot's analytic height there, and the light
// dishes where both scenes put them (both generators take them from rest_heights()).
TEST(DishPlace, RestPosesAreTheDishPilesAnalyticOnes) {
  const std::string scenes = ALSIM_SCENES_DIR;
  const ModelImport place = ImportModelFromFile(scenes + "/dish_place.xml");
  const ModelImport pile = ImportModelFromFile(scenes + "/dish_pile.xml");
  ASSERT_TRUE(place) << place.error;
  ASSERT_TRUE(pile) << pile.error;
  bench::DishPlaceScene scene;
  std::string error;
  ASSERT_TRUE(bench::FindDishPlace(*place.model, &scene, &error)) << error;
  const char* names[4] = {"pot", "bowl_1", "bowl_2", "plate"};
  for (int k = 0; k < 4; ++k) {
    const Model& m = *pile.model;
    int body = -1;
    for (int b = 0; b < m.nbody; ++b) {
      if (m.body_name[b] == names[k]) body = b;
    }
    ASSERT_GE(body, 0) << names[k];
    const int a = m.jnt_qpos_adr[m.body_jnt_adr[body]];
    EXPECT_EQ(scene.rest[k], Vec3(m.qpos0[a], m.qpos0[a + 1], m.qpos0[a + 2])) << names[k];
  }
}

TEST(DishPlace, SubAdmmPlacesThePotOnThePile) {
  const ModelImport imported =
      ImportModelFromFile(std::string(ALSIM_SCENES_DIR) + "/dish_place.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  bench::DishPlaceScene scene;
  std::string error;
  ASSERT_TRUE(bench::FindDishPlace(m, &scene, &error)) << error;
  const bench::DishPlacePlan plan;
  const std::array<double, 6> phase = bench::DishPlacePhases(scene, plan);
  const int pot_z = m.jnt_qpos_adr[m.body_jnt_adr[scene.pot]] + 2;
  const double start_z = m.qpos0[pot_z];
  int finger_geoms[2] = {-1, -1};
  for (int g = 0; g < m.ngeom; ++g) {
    if (m.geom_name[g] == "finger_l") finger_geoms[0] = g;
    if (m.geom_name[g] == "finger_r") finger_geoms[1] = g;
  }
  ASSERT_GE(std::min(finger_geoms[0], finger_geoms[1]), 0);

  double held_slip = 0;
  int late_finger_contacts = 0;
  StepOptions options;  // SubADMM, its default cap and tolerance, no budget
  bench::DishPlaceResult r;
  RunWithThreads(1, [&] {
    r = bench::RunDishPlace(m, scene, plan, options, [&](int, const Data& d) {
      if (d.time <= phase[0]) held_slip = std::max(held_slip, std::abs(d.qpos[pot_z] - start_z));
      if (d.time < phase[4]) return;
      for (const Contact& c : d.contact) {
        for (const int g : finger_geoms) late_finger_contacts += c.geom1 == g || c.geom2 == g;
      }
    });
  });
  ASSERT_EQ(r.status, StepStatus::kOk);
  EXPECT_LT(held_slip, 1e-4);
  EXPECT_EQ(late_finger_contacts, 0);
  EXPECT_LT(std::hypot(r.pot_dxy, r.pot_dz), plan.pot_tolerance);
  EXPECT_LT(r.pot_tilt, plan.max_tilt);
  EXPECT_LT(r.light_error, plan.light_tolerance);
  EXPECT_LT(r.deepest, 1e-3);
  EXPECT_TRUE(r.success);
}

}  // namespace
}  // namespace alsim
