#include "runtime/run_config.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"
#include "common/file_io.h"
#include "common/fnv1a.h"
#include "system/machine_spec.h"

namespace tessera::runtime {

namespace {

const nlohmann::json* lookup(const nlohmann::json& root, const std::string& dotted) {
  const nlohmann::json* node = &root;
  size_t start = 0;
  while (start <= dotted.size()) {
    const size_t dot = std::min(dotted.find('.', start), dotted.size());
    if (!node->is_object()) return nullptr;
    const auto it = node->find(dotted.substr(start, dot - start));
    if (it == node->end()) return nullptr;
    node = &*it;
    start = dot + 1;
  }
  return node;
}

// The value of `d` in its declared type: from the document (already validated by the reader) or
// the default.
nlohmann::ordered_json value_of(const ParamDecl& d, const nlohmann::json* v) {
  if (d.type == "int") return v != nullptr ? v->get<int64_t>() : std::stoll(d.default_value);
  if (d.type == "float") return v != nullptr ? v->get<double>() : std::stod(d.default_value);
  if (d.type == "bool") return v != nullptr ? v->get<bool>() : d.default_value == "true";
  return v != nullptr ? v->get<std::string>() : d.default_value;
}

// "a.b.c" -> "a/b/c" (a JSON pointer's path; keys hold no '/' or '~').
std::string replace_dots(std::string key) {
  std::replace(key.begin(), key.end(), '.', '/');
  return key;
}

}  // namespace

std::string fnv1a64_hex(std::string_view bytes) {
  return fmt::format("{:016x}", fnv1a64(bytes));
}

RunConfig load_run_config(const std::string& path) {
  return load_run_config(path, nlohmann::json::object());
}

RunConfig load_run_config(const std::string& path, const nlohmann::json& overrides) {
  // The file is read once; its text is parsed here (for the overrides) and by the ConfigReader.
  const std::string text = path.empty() ? std::string("{}") : read_file(path, "config file");
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false, true);
  const std::string source = path.empty() ? "<built-in defaults>" : path;
  const bool override =
      !overrides.empty() && !doc.is_discarded();  // a file that does not parse: its own error
  if (override) {
    for (const auto& [key, value] : overrides.items()) {
      try {
        doc[nlohmann::json::json_pointer(std::string("/") + replace_dots(key))] = value;
      } catch (const nlohmann::json::exception&) {
        throw Error(source, "cannot set '" + key + "': a part of it is not an object");
      }
    }
  }
  ConfigReader r = override ? ConfigReader::from_string(doc.dump(), source + " + overrides")
                            : ConfigReader::from_string(text, path.empty() ? source : path);
  RunConfig c;
  system::MachineSpec m = system::read_machine_spec(r);
  c.spec = m.core;
  c.system = std::move(m.system);
  r.finish();
  c.resolved = nlohmann::ordered_json::object();
  for (const ParamDecl& d : r.declarations()) {
    c.resolved[d.key] = value_of(d, lookup(doc, d.key));
  }
  c.hash = fnv1a64_hex(c.resolved.dump());
  return c;
}

}  // namespace tessera::runtime
