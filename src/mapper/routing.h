// Turn-model routing on a processor's 2-D mesh (docs/mapper.md, "Deadlock avoidance").
//
// Directions: E (x+1), W (x-1), N (y-1), S (y+1). A turn is (travel direction in, direction out).
// Every model is minimal (each hop reduces the distance to the destination) and prohibits turns so
// that no cycle of channel dependencies can form:
//   XY             : no turn from a Y direction into an X direction (N->E, N->W, S->E, S->W).
//   west-first     : no turn into W (N->W, S->W); all west hops come first.
//   north-last     : no turn out of N (N->E, N->W); north hops come last.
//   negative-first : negative directions are W and S; no turn from a positive direction into a
//                    negative one (N->W, E->S).
//   odd-even (Chiu): no E->N / E->S turn at a router in an even column; no N->W / S->W turn at a
//                    router in an odd column. Candidates follow Chiu's minimal ROUTE function.
//   free           : any productive direction (minimal adaptive, NOT deadlock-free; for studies).
// Among a model's candidate directions the router picks the one whose outgoing link carries the
// least traffic routed so far (ties: E, W, N, S order), so results depend only on the route order,
// which is the graph's edge order: deterministic.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::mapper {

enum class Dir : uint8_t { kE = 0, kW = 1, kN = 2, kS = 3 };
inline constexpr int kNumDirs = 4;
enum class TurnModel { kXY, kWestFirst, kNorthLast, kNegativeFirst, kOddEven, kFree };

TurnModel parse_turn_model(const std::string& name, const std::string& key);
std::string turn_model_name(TurnModel m);
std::vector<TurnModel> deadlock_free_models();
const char* dir_name(Dir d);

// Whether a packet travelling `in` may leave a router in column x, row y towards `out`.
// Straight on (in == out) is always allowed; a U-turn never.
bool turn_allowed(TurnModel m, int x, int y, Dir in, Dir out);
// Number of (router, turn) pairs the model prohibits on a width x height mesh (the 8 turns of
// every router, counting only routers where both links exist).
int prohibited_turn_count(TurnModel m, int width, int height);

// A route inside one processor: the start core (local index y * width + x) and the hops taken.
struct Route {
  int edge = -1;
  int processor = 0;
  int start = 0;
  std::vector<Dir> hops;
};

// Routes packets on one width x height mesh, remembering link loads for the tie-break.
class MeshRouter {
 public:
  MeshRouter(TurnModel model, int width, int height);
  // Minimal route from local core `src` to `dst` carrying `weight`; adds weight to the link loads.
  std::vector<Dir> route(int src, int dst, double weight);
  // Link load by channel id (local core * 4 + direction).
  const std::vector<double>& loads() const { return m_load; }

 private:
  // Productive directions the model allows from (x, y) after travelling `in` (kNumDirs = none yet)
  // for a packet from column sx to (dx, dy).
  int candidates(int sx, int x, int y, int dx, int dy, int in, std::array<Dir, 4>& out) const;

  TurnModel m_model;
  int m_width;
  int m_height;
  std::vector<double> m_load;
};

// Channel id of the link leaving local core `core` towards `d`.
inline int channel_id(int core, Dir d) {
  return core * kNumDirs + static_cast<int>(d);
}
// Local core reached from `core` by one hop towards d on a mesh of `width` columns.
int step(int core, Dir d, int width);

}  // namespace tessera::mapper
