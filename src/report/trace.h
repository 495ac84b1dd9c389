// Trace events: what each unit did when, for Chrome's trace-event JSON (opens in Perfetto and
// chrome://tracing). The simulator calls a TraceSink; a null sink costs one branch per event.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/file_io.h"

namespace tessera::report {

// One track per unit (scalar, vector, mxu, ...), times in simulated cycles.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // A span of activity on `track` from `start` for `duration` cycles named `name`
  // (e.g. the mnemonic), with optional detail (e.g. the disassembled instruction, the PC).
  virtual void span(std::string_view track, std::string_view name, int64_t start, int64_t duration,
                    std::string_view detail) = 0;
  // A counter sample (e.g. FIFO occupancy) on `track`.
  virtual void counter(std::string_view track, std::string_view name, int64_t time,
                       double value) = 0;
};

// Collects events in memory and writes Chrome trace-event JSON. Cycles are converted to
// microseconds with the clock, so Perfetto shows simulated time; each track is a thread of one
// process named after the core. At most `max_events` events (spans and counter samples) are kept
// (a trace of a long run would not open); the JSON notes how many were dropped.
class ChromeTrace final : public TraceSink {
 public:
  ChromeTrace(std::string process_name, double clock_hz, size_t max_events = 2'000'000);
  void span(std::string_view track, std::string_view name, int64_t start, int64_t duration,
            std::string_view detail) override;
  void counter(std::string_view track, std::string_view name, int64_t time, double value) override;

  nlohmann::json to_json() const;
  // Writes the JSON to `out` and closes it; errors name the file and the reason (file_io.h).
  void write(OutputFile& out) const;
  void write(const std::string& path) const;  // opened as "trace file"
  size_t event_count() const { return m_events.size(); }
  size_t dropped() const { return m_dropped; }

 private:
  int track_id(std::string_view track);
  struct Event {
    int track;
    bool is_counter;
    std::string name, detail;
    int64_t start, duration;
    double value;
  };
  std::string m_process;
  double m_clock_hz;
  size_t m_max_events;
  size_t m_dropped = 0;
  std::vector<std::string> m_tracks;
  std::vector<Event> m_events;
};

}  // namespace tessera::report
