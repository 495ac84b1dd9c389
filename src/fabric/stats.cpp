#include "fabric/stats.h"

namespace tessera::fabric {

nlohmann::ordered_json FabricStats::to_json() const {
  nlohmann::ordered_json j;
  j["end_ps"] = end_ps;
  j["events"] = events;
  j["packets"] = packets;
  j["transfers"] = transfers;
  auto& links_json = j["links"] = nlohmann::ordered_json::array();
  for (const LinkStats& l : links)
    links_json.push_back({{"from", l.from_chip},
                          {"to", l.to_chip},
                          {"wire_bytes", l.wire_bytes},
                          {"payload_bytes", l.payload_bytes},
                          {"packets", l.packets},
                          {"retransmissions", l.retransmissions},
                          {"dropped", l.dropped},
                          {"refused", l.refused},
                          {"busy_ps", l.busy_ps},
                          {"utilisation", l.utilisation},
                          {"max_queue", l.max_queue},
                          {"mean_queue", l.mean_queue}});
  auto& chips_json = j["chips"] = nlohmann::ordered_json::array();
  for (size_t c = 0; c < chips.size(); ++c) {
    const ChipStats& s = chips[c];
    chips_json.push_back({{"chip", c},
                          {"transfers_sent", s.transfers_sent},
                          {"transfers_received", s.transfers_received},
                          {"bytes_sent", s.bytes_sent},
                          {"bytes_received", s.bytes_received},
                          {"packets_injected", s.packets_injected},
                          {"packets_forwarded", s.packets_forwarded},
                          {"packets_delivered", s.packets_delivered},
                          {"duplicates", s.duplicates},
                          {"xoff_count", s.xoff_count},
                          {"xoff_ps", s.xoff_ps}});
  }
  return j;
}

}  // namespace tessera::fabric
