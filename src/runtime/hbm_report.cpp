#include "runtime/hbm_report.h"

#include <fmt/format.h>

namespace tessera::runtime {

namespace {

nlohmann::ordered_json traffic_json(const core::HbmTraffic& t) {
  nlohmann::ordered_json j;
  j["requests"] = t.requests;
  j["raw_bytes"] = t.raw_bytes;
  j["encoded_bytes"] = t.encoded_bytes;
  j["compression_ratio"] =
      t.encoded_bytes > 0 ? static_cast<double>(t.raw_bytes) / static_cast<double>(t.encoded_bytes)
                          : 1.0;
  return j;
}

}  // namespace

nlohmann::ordered_json hbm_encoding_json(const core::HbmEncodingSpec& spec,
                                         const core::HbmTrafficByKind& traffic) {
  nlohmann::ordered_json j;
  j["on"] = spec.on;
  if (!spec.on) return j;
  j["group_size"] = spec.codec.group_size;
  j["delta_bits"] = spec.codec.delta_bits;
  core::HbmTraffic total;
  for (int k = 0; k < core::kNumHbmKinds; ++k) {
    const core::HbmTraffic& t = traffic[static_cast<size_t>(k)];
    j["kinds"][core::to_string(static_cast<core::HbmKind>(k))] = traffic_json(t);
    total += t;
  }
  j["total"] = traffic_json(total);
  return j;
}

std::string hbm_encoding_line(const nlohmann::ordered_json& e) {
  if (!e.value("on", false)) return "";
  std::string line = "HBM encoding (raw / encoded bytes):";
  for (const auto& [kind, t] : e["kinds"].items())
    line += fmt::format(" {} {:.3f}x", kind, t["compression_ratio"].get<double>());
  return line + fmt::format(", total {:.3f}x", e["total"]["compression_ratio"].get<double>());
}

}  // namespace tessera::runtime
