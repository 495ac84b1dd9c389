// The format tag every tessera JSON report carries, so a reader can tell a tessera report from any
// other JSON and a current one from an older layout:
//   {"format": "tessera-<kind>", "version": N, ...the report...}
// Kinds: train (`tessera train --report`), stats (`tessera run --stats`), allreduce (`tessera
// bench allreduce --json`), map (`tessera map --out`), map-bench (`tessera map bench --out`),
// suite (`tessera bench suite --json`).
// kReportVersion goes up whenever a kind's layout changes in a way a reader must know about.
#pragma once

#include <string>
#include <string_view>

namespace tessera::report {

inline constexpr int kReportVersion = 1;

// `body` with the format tag first (an existing tag is replaced).
template <class Json>
Json tagged(std::string_view kind, const Json& body) {
  Json j;
  j["format"] = "tessera-" + std::string(kind);
  j["version"] = kReportVersion;
  for (auto it = body.begin(); it != body.end(); ++it)
    if (it.key() != "format" && it.key() != "version") j[it.key()] = it.value();
  return j;
}

}  // namespace tessera::report
