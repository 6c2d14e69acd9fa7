#include "engine/island/islands.h"

#include <algorithm>

namespace alsim {
namespace {

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];  // path halving
    x = parent[x];
  }
  return x;
}

// Union by smaller index: every set's root is its smallest subsystem, whatever the union order.
void Unite(std::vector<int>& parent, int a, int b) {
  a = Find(parent, a);
  b = Find(parent, b);
  if (a == b) return;
  if (a < b) {
    parent[b] = a;
  } else {
    parent[a] = b;
  }
}

}  // namespace

void BuildIslands(const Model& m, ConstraintSet& set, Islands& islands) {
  const int n = m.nsubsystem;
  islands.parent.resize(n);
  islands.subsystem_island.assign(n, -1);
  for (int j = 0; j < n; ++j) islands.parent[j] = j;

  // A subsystem is in an island when a constraint touches it; mark with -2 first.
  for (const Constraint& c : set.constraints) {
    const ConstraintBlock* block = set.blocks.data() + c.block_adr;
    for (int k = 0; k < c.block_num; ++k) islands.subsystem_island[block[k].subsystem] = -2;
    for (int k = 1; k < c.block_num; ++k) {
      Unite(islands.parent, block[0].subsystem, block[k].subsystem);
    }
  }

  // Number islands by their root, which is their smallest subsystem: scanning subsystems in
  // increasing order meets every root before the rest of its island.
  islands.num = 0;
  for (int j = 0; j < n; ++j) {
    if (islands.subsystem_island[j] == -1) continue;
    const int root = Find(islands.parent, j);
    islands.subsystem_island[j] = root == j ? islands.num++ : islands.subsystem_island[root];
  }

  // Counting sort of subsystems and constraints by island (stable, so each list is increasing).
  auto group = [&](std::vector<int>& adr, std::vector<int>& items, int count, auto island_of) {
    adr.assign(islands.num + 1, 0);
    for (int i = 0; i < count; ++i) {
      const int island = island_of(i);
      if (island >= 0) ++adr[island + 1];
    }
    for (int k = 0; k < islands.num; ++k) adr[k + 1] += adr[k];
    items.resize(adr[islands.num]);
    std::vector<int>& cursor = islands.parent;  // reuse: the union-find is done
    cursor.assign(adr.begin(), adr.end() - 1);
    for (int i = 0; i < count; ++i) {
      const int island = island_of(i);
      if (island >= 0) items[cursor[island]++] = i;
    }
  };
  islands.split.clear();
  if (set.split) islands.split.assign(islands.num, false);
  for (Constraint& c : set.constraints) {
    c.island = islands.subsystem_island[set.blocks[c.block_adr].subsystem];
    if (!set.split) continue;
    for (int r = c.row_adr; r < c.row_adr + c.dim; ++r) {
      if (set.split_row[r]) islands.split[c.island] = true;
    }
  }
  group(islands.subsystem_adr, islands.subsystems, n,
        [&](int j) { return islands.subsystem_island[j]; });
  group(islands.constraint_adr, islands.constraints, static_cast<int>(set.constraints.size()),
        [&](int i) { return set.constraints[i].island; });
  islands.parent.resize(n);
}

}  // namespace alsim
