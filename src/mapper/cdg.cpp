#include "mapper/cdg.h"

#include <algorithm>

#include "common/error.h"

namespace tessera::mapper {

std::vector<int> find_cycle(int num_channels, const std::vector<std::vector<int>>& paths) {
  std::vector<std::vector<int>> succ(num_channels);
  for (const auto& p : paths)
    for (size_t i = 0; i + 1 < p.size(); ++i) succ[p[i]].push_back(p[i + 1]);
  for (auto& s : succ) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }
  // Iterative DFS with colours: 0 new, 1 on the stack, 2 done; a back edge closes a cycle.
  std::vector<char> colour(num_channels, 0);
  std::vector<int> parent(num_channels, -1);
  std::vector<std::pair<int, size_t>> stack;
  for (int root = 0; root < num_channels; ++root) {
    if (colour[root] != 0 || succ[root].empty()) continue;
    stack.push_back({root, 0});
    colour[root] = 1;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      if (i == succ[v].size()) {
        colour[v] = 2;
        stack.pop_back();
        continue;
      }
      int w = succ[v][i++];
      if (colour[w] == 1) {
        std::vector<int> cycle{w};
        for (int u = v; u != w; u = parent[u]) cycle.push_back(u);
        std::reverse(cycle.begin() + 1, cycle.end());
        return cycle;
      }
      if (colour[w] == 0) {
        colour[w] = 1;
        parent[w] = v;
        stack.push_back({w, 0});
      }
    }
  }
  return {};
}

std::vector<int> route_channels(const Route& r, const SystemSpec& sys) {
  std::vector<int> ch;
  int core = r.start;
  const int base = r.processor * sys.cores_per_processor() * kNumDirs;
  for (Dir d : r.hops) {
    ch.push_back(base + channel_id(core, d));
    core = step(core, d, sys.width);
  }
  return ch;
}

DeadlockReport check_deadlock(const std::vector<Route>& routes, const SystemSpec& sys) {
  std::vector<std::vector<int>> paths;
  paths.reserve(routes.size());
  for (const Route& r : routes) paths.push_back(route_channels(r, sys));
  DeadlockReport rep;
  rep.cycle = find_cycle(sys.total_cores() * kNumDirs, paths);
  rep.deadlock_free = rep.cycle.empty();
  return rep;
}

std::string describe_cycle(const std::vector<int>& cycle, const SystemSpec& sys) {
  std::string s;
  for (int c : cycle) {
    int core = c / kNumDirs;
    if (!s.empty()) s += " -> ";
    s += fmt::format("p{} ({},{}){}", sys.processor_of(core), sys.x_of(core), sys.y_of(core),
                     dir_name(static_cast<Dir>(c % kNumDirs)));
  }
  return s;
}

}  // namespace tessera::mapper
