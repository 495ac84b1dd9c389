#include "graph/model_json.h"

#include <limits>
#include <optional>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"
#include "common/json_parse.h"

namespace tessera::graph {

namespace {

using Json = nlohmann::json;

class Reader {
 public:
  explicit Reader(std::string origin) : m_origin(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& entry, const std::string& why) const {
    throw Error(m_origin + (entry.empty() ? "" : ": " + entry), why);
  }

  void only_keys(const Json& obj, const std::string& entry,
                 const std::set<std::string>& allowed) const {
    for (const auto& [key, value] : obj.items())
      if (!allowed.count(key)) {
        std::string list;
        for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(entry, "unknown key '" + key + "' (allowed: " + list + ")");
      }
  }

  int get_int(const Json& obj, const std::string& entry, const std::string& key, int min, int max,
              std::optional<int> fallback) const {
    const std::string at = entry.empty() ? key : entry + "." + key;
    if (!obj.contains(key)) {
      if (fallback) return *fallback;
      fail(at, "missing required key");
    }
    const Json& v = obj.at(key);
    if (!v.is_number_integer()) fail(at, "must be an integer, got " + v.dump());
    const int64_t x = v.get<int64_t>();
    if (x < min || x > max)
      fail(at, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                   std::to_string(x));
    return static_cast<int>(x);
  }

  LayerSpec layer(const Json& j, const std::string& entry) const {
    if (!j.is_object()) fail(entry, "must be an object like {\"op\": \"relu\"}, got " + j.dump());
    if (!j.contains("op")) fail(entry, "missing required key 'op'");
    if (!j.at("op").is_string()) fail(entry + ".op", "must be a string, got " + j.at("op").dump());
    const std::string op = j.at("op").get<std::string>();
    constexpr int kBig = 1 << 20;
    LayerSpec l;
    if (op == "dense") {
      only_keys(j, entry, {"op", "units"});
      l = {LayerKind::kDense, get_int(j, entry, "units", 1, kBig, {}), 0, 1, 0};
    } else if (op == "conv2d") {
      only_keys(j, entry, {"op", "filters", "kernel", "stride", "pad"});
      l = {LayerKind::kConv2D, get_int(j, entry, "filters", 1, kBig, {}),
           get_int(j, entry, "kernel", 1, 64, {}), get_int(j, entry, "stride", 1, 64, 1),
           get_int(j, entry, "pad", 0, 64, 0)};
    } else if (op == "maxpool2d") {
      only_keys(j, entry, {"op", "kernel", "stride"});
      const int k = get_int(j, entry, "kernel", 1, 64, {});
      l = {LayerKind::kMaxPool2D, 0, k, get_int(j, entry, "stride", 1, 64, k), 0};
    } else if (op == "relu" || op == "flatten") {
      only_keys(j, entry, {"op"});
      l.kind = op == "relu" ? LayerKind::kRelu : LayerKind::kFlatten;
    } else {
      fail(entry + ".op",
           "unknown op '" + op + "' (known: dense, conv2d, relu, maxpool2d, flatten)");
    }
    return l;
  }

  ModelSpec model(const Json& j) const {
    if (!j.is_object())
      fail("", "the top level must be an object with name, input, classes, layers");
    only_keys(j, "", {"name", "input", "classes", "layers"});
    ModelSpec spec;
    if (!j.contains("name") || !j.at("name").is_string() || j.at("name").get<std::string>().empty())
      fail("name", "missing or not a non-empty string");
    spec.name = j.at("name").get<std::string>();
    if (!j.contains("input") || !j.at("input").is_array() || j.at("input").empty())
      fail("input", "missing or not a non-empty array of dimensions like [28, 28, 1]");
    for (size_t i = 0; i < j.at("input").size(); ++i) {
      const Json& d = j.at("input")[i];
      if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > (1 << 24))
        fail("input[" + std::to_string(i) + "]",
             "must be an integer in [1, 16777216], got " + d.dump());
      spec.input.push_back(d.get<int64_t>());
    }
    spec.classes = get_int(j, "", "classes", 2, 1 << 20, {});
    if (!j.contains("layers") || !j.at("layers").is_array() || j.at("layers").empty())
      fail("layers", "missing or not a non-empty array");
    for (size_t i = 0; i < j.at("layers").size(); ++i)
      spec.layers.push_back(layer(j.at("layers")[i], "layers[" + std::to_string(i) + "]"));
    return spec;
  }

 private:
  std::string m_origin;
};

}  // namespace

ModelSpec parse_model_json(const std::string& text, const std::string& origin) {
  Json j;
  try {
    j = parse_json(text, origin);
  } catch (const JsonParseError& e) {
    throw Error(origin + ": byte " + std::to_string(e.byte()),
                e.syntax() ? "JSON syntax error" : e.reason());
  }
  return Reader(origin).model(j);
}

ModelSpec read_model_json(const std::string& path) {
  return parse_model_json(read_file(path, "model file"), path);
}

ModelSpec model_spec(const std::string& name_or_path) {
  const std::string_view ext = ".json";
  const bool json = name_or_path.size() >= ext.size() &&
                    name_or_path.compare(name_or_path.size() - ext.size(), ext.size(), ext) == 0;
  return json ? read_model_json(name_or_path) : zoo_spec(name_or_path);
}

}  // namespace tessera::graph
