#include "mapper/routing.h"

#include <cstdlib>

#include "common/error.h"

namespace tessera::mapper {
namespace {

bool is_x(Dir d) {
  return d == Dir::kE || d == Dir::kW;
}
Dir opposite(Dir d) {
  switch (d) {
    case Dir::kE:
      return Dir::kW;
    case Dir::kW:
      return Dir::kE;
    case Dir::kN:
      return Dir::kS;
    default:
      return Dir::kN;
  }
}

}  // namespace

TurnModel parse_turn_model(const std::string& name, const std::string& key) {
  if (name == "xy") return TurnModel::kXY;
  if (name == "west-first") return TurnModel::kWestFirst;
  if (name == "north-last") return TurnModel::kNorthLast;
  if (name == "negative-first") return TurnModel::kNegativeFirst;
  if (name == "odd-even") return TurnModel::kOddEven;
  if (name == "free") return TurnModel::kFree;
  throw Error(
      key, fmt::format(
               "unknown routing '{}' (xy, west-first, north-last, negative-first, odd-even, free)",
               name));
}

std::string turn_model_name(TurnModel m) {
  switch (m) {
    case TurnModel::kXY:
      return "xy";
    case TurnModel::kWestFirst:
      return "west-first";
    case TurnModel::kNorthLast:
      return "north-last";
    case TurnModel::kNegativeFirst:
      return "negative-first";
    case TurnModel::kOddEven:
      return "odd-even";
    default:
      return "free";
  }
}

std::vector<TurnModel> deadlock_free_models() {
  return {TurnModel::kXY, TurnModel::kWestFirst, TurnModel::kNorthLast, TurnModel::kNegativeFirst,
          TurnModel::kOddEven};
}

const char* dir_name(Dir d) {
  static const char* kNames[] = {"E", "W", "N", "S"};
  return kNames[static_cast<int>(d)];
}

bool turn_allowed(TurnModel m, int x, int y, Dir in, Dir out) {
  (void)y;
  if (in == out) return true;
  if (out == opposite(in)) return false;
  switch (m) {
    case TurnModel::kXY:
      return !(!is_x(in) && is_x(out));
    case TurnModel::kWestFirst:
      return out != Dir::kW;
    case TurnModel::kNorthLast:
      return in != Dir::kN;
    case TurnModel::kNegativeFirst:
      return !((in == Dir::kN && out == Dir::kW) || (in == Dir::kE && out == Dir::kS));
    case TurnModel::kOddEven:
      if (x % 2 == 0 && in == Dir::kE && !is_x(out)) return false;
      if (x % 2 == 1 && !is_x(in) && out == Dir::kW) return false;
      return true;
    default:
      return true;
  }
}

int prohibited_turn_count(TurnModel m, int width, int height) {
  // A turn in->out happens at a router that has a link arriving from `in` (a neighbour on the
  // opposite side) and a link leaving towards `out`.
  auto has = [&](int x, int y, Dir d) {
    switch (d) {
      case Dir::kE:
        return x + 1 < width;
      case Dir::kW:
        return x > 0;
      case Dir::kN:
        return y > 0;
      default:
        return y + 1 < height;
    }
  };
  int count = 0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int a = 0; a < kNumDirs; ++a)
        for (int b = 0; b < kNumDirs; ++b) {
          Dir in = static_cast<Dir>(a), out = static_cast<Dir>(b);
          if (in == out || out == opposite(in)) continue;
          if (has(x, y, opposite(in)) && has(x, y, out) && !turn_allowed(m, x, y, in, out)) ++count;
        }
  return count;
}

int step(int core, Dir d, int width) {
  switch (d) {
    case Dir::kE:
      return core + 1;
    case Dir::kW:
      return core - 1;
    case Dir::kN:
      return core - width;
    default:
      return core + width;
  }
}

MeshRouter::MeshRouter(TurnModel model, int width, int height)
    : m_model(model),
      m_width(width),
      m_height(height),
      m_load(static_cast<size_t>(width) * height * kNumDirs, 0.0) {}

int MeshRouter::candidates(int sx, int x, int y, int dx, int dy, int in,
                           std::array<Dir, 4>& out) const {
  int n = 0;
  const int ex = dx - x, ey = dy - y;
  const Dir hx = ex > 0 ? Dir::kE : Dir::kW;
  const Dir hy = ey > 0 ? Dir::kS : Dir::kN;
  auto add = [&](Dir d) { out[n++] = d; };
  switch (m_model) {
    case TurnModel::kXY:
      if (ex != 0)
        add(hx);
      else if (ey != 0)
        add(hy);
      break;
    case TurnModel::kWestFirst:
      if (ex < 0) {
        add(Dir::kW);
      } else {
        if (ex > 0) add(Dir::kE);
        if (ey != 0) add(hy);
      }
      break;
    case TurnModel::kNorthLast:
      if (ex != 0) add(hx);
      if (ey > 0 || (ey < 0 && ex == 0)) add(hy);
      break;
    case TurnModel::kNegativeFirst:
      if (ex < 0 || ey > 0) {  // negative hops (W, S) remain: take them first
        if (ex < 0) add(Dir::kW);
        if (ey > 0) add(Dir::kS);
      } else {
        if (ex > 0) add(Dir::kE);
        if (ey < 0) add(Dir::kN);
      }
      break;
    case TurnModel::kOddEven:
      // Chiu's ROUTE: columns are x; "N/S" is whichever Y direction is productive.
      if (ex == 0) {
        if (ey != 0) add(hy);
      } else if (ex > 0) {
        if (ey == 0) {
          add(Dir::kE);
        } else {
          if (x % 2 == 1 || x == sx) add(hy);
          if (dx % 2 == 1 || ex != 1) add(Dir::kE);
        }
      } else {
        add(Dir::kW);
        if (ey != 0 && x % 2 == 0) add(hy);
      }
      break;
    default:
      if (ex != 0) add(hx);
      if (ey != 0) add(hy);
  }
  (void)in;
  return n;
}

std::vector<Dir> MeshRouter::route(int src, int dst, double weight) {
  std::vector<Dir> hops;
  int sx = src % m_width;
  int x = sx, y = src / m_width;
  const int dx = dst % m_width, dy = dst / m_width;
  int in = kNumDirs;
  std::array<Dir, 4> cand{};
  while (x != dx || y != dy) {
    int n = candidates(sx, x, y, dx, dy, in, cand);
    TESSERA_CHECK(n > 0, "turn model left a packet without a productive direction");
    int core = y * m_width + x;
    Dir best = cand[0];
    for (int i = 1; i < n; ++i)
      if (m_load[channel_id(core, cand[i])] < m_load[channel_id(core, best)]) best = cand[i];
    m_load[channel_id(core, best)] += weight;
    hops.push_back(best);
    in = static_cast<int>(best);
    core = step(core, best, m_width);
    x = core % m_width;
    y = core / m_width;
  }
  return hops;
}

}  // namespace tessera::mapper
