#include "core/term_layer_width.h"

#include <charconv>

#include "numerics/term_pe/term_pe.h"

namespace tessera::core {

std::string parse_layer_acc_widths(const std::string& text, std::vector<LayerAccWidth>& out) {
  out.clear();
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return "'" + item + "' is not LAYER=WIDTH";
    LayerAccWidth w{item.substr(0, eq), 0};
    const char* first = item.data() + eq + 1;
    const char* last = item.data() + item.size();
    const auto [ptr, ec] = std::from_chars(first, last, w.bits);
    if (ec != std::errc{} || ptr != last || first == last)
      return "'" + item + "': the width is not an integer";
    if (w.bits < numerics::kMinAccFractionBits || w.bits > numerics::kMaxAccFractionBits)
      return "'" + item + "': the width must be in [" +
             std::to_string(numerics::kMinAccFractionBits) + ", " +
             std::to_string(numerics::kMaxAccFractionBits) + "]";
    for (const LayerAccWidth& o : out)
      if (o.layer == w.layer) return "layer '" + w.layer + "' is given twice";
    out.push_back(w);
    at = end + 1;
  }
  return "";
}

std::string format_layer_acc_widths(const std::vector<LayerAccWidth>& widths) {
  std::string s;
  for (const LayerAccWidth& w : widths)
    s += (s.empty() ? "" : ",") + w.layer + "=" + std::to_string(w.bits);
  return s;
}

int layer_acc_width(const std::vector<LayerAccWidth>& widths, const std::string& layer,
                    int fallback) {
  for (const LayerAccWidth& w : widths)
    if (w.layer == layer) return w.bits;
  return fallback;
}

}  // namespace tessera::core
