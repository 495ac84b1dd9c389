#include "suite/row.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "common/error.h"

namespace tessera::suite {

namespace {

struct KindName {
  RowKind kind;
  const char* prefix;  // the name up to its numbers
  size_t dims;         // how many numbers follow, 'x'-separated
  const char* form;
};

// ResNet's depth follows its prefix without a separator (then, optionally, image size and width).
constexpr std::array<KindName, 7> kKinds{{
    {RowKind::kGemm, "gemm_", 1, "gemm_N"},
    {RowKind::kConv, "conv_", 8, "conv_BxHxWxCinxCoutxKxSxP"},
    {RowKind::kLayerNorm, "layernorm_", 2, "layernorm_RxD"},
    {RowKind::kSoftmax, "softmax_", 2, "softmax_RxC"},
    {RowKind::kAttention, "attention_", 3, "attention_HxSxD"},
    {RowKind::kResNet, "resnet", 1, "resnet18 | resnet50 | resnetDEPTHxIMAGExWIDTH"},
    {RowKind::kBert, "bert_", 1, "bert_D"},
}};

const KindName& kind_name(RowKind k) {
  for (const KindName& n : kKinds)
    if (n.kind == k) return n;
  throw Error("suite", "unknown row kind");
}

std::string forms() {
  std::string s;
  for (const KindName& n : kKinds) s += (s.empty() ? "" : ", ") + std::string(n.form);
  return s;
}

// "12x512x64" -> {12, 512, 64}; empty when it is not `count` non-negative numbers.
std::vector<int> numbers(std::string_view text, size_t count) {
  std::vector<int> out;
  while (out.size() < count) {
    int v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || v < 0) return {};
    out.push_back(v);
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    if (out.size() < count) {
      if (text.empty() || text.front() != 'x') return {};
      text.remove_prefix(1);
    }
  }
  return text.empty() ? out : std::vector<int>{};
}

// A convolution {B, H, W, Cin, Cout, K, S, P} whose K x K window fits the padded input.
bool window_fits(const std::vector<int>& d) {
  return d[5] <= d[1] + 2 * d[7] && d[5] <= d[2] + 2 * d[7];
}

}  // namespace

std::string Row::name() const {
  std::string s = kind_name(kind).prefix;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += 'x';
    s += std::to_string(dims[i]);
  }
  return s;
}

Row parse_row(const std::string& name) {
  for (const KindName& n : kKinds) {
    if (!name.starts_with(n.prefix)) continue;
    const std::string_view text = std::string_view(name).substr(std::string_view(n.prefix).size());
    Row r{n.kind, numbers(text, n.dims)};
    if (r.kind == RowKind::kResNet && r.dims.empty()) r.dims = numbers(text, 3);
    if (r.dims.empty()) break;
    // Every number is positive but a convolution's padding, which may be 0.
    const size_t positive = r.kind == RowKind::kConv ? 7 : r.dims.size();
    if (std::any_of(r.dims.begin(), r.dims.begin() + static_cast<long>(positive),
                    [](int v) { return v < 1; }))
      break;
    if (r.kind == RowKind::kResNet &&
        ((r.dims[0] != 18 && r.dims[0] != 50) || (r.dims.size() == 3 && r.dims[1] < 32)))
      break;
    if (r.kind == RowKind::kConv && !window_fits(r.dims)) break;
    return r;
  }
  throw Error("suite", "unknown row '" + name + "' (rows are " + forms() +
                           "; every number a positive integer, a padding P >= 0)");
}

std::vector<Row> standard_rows() {
  std::vector<Row> rows;
  for (int n : {256, 512, 1024, 2048}) rows.push_back({RowKind::kGemm, {n}});
  for (int b : {1, 64})
    for (const auto& [hw, c] : {std::pair{56, 64}, {28, 128}, {14, 256}, {7, 512}})
      rows.push_back({RowKind::kConv, {b, hw, hw, c, c, 3, 1, 1}});
  for (int r : {512, 2048, 8192}) rows.push_back({RowKind::kLayerNorm, {r, 768}});
  for (int r : {512, 2048, 8192}) rows.push_back({RowKind::kSoftmax, {r, r}});
  for (int h : {12, 16, 32}) rows.push_back({RowKind::kAttention, {h, 512, 64}});
  for (int depth : {18, 50}) rows.push_back({RowKind::kResNet, {depth}});
  for (int d : {768, 1024, 2048}) rows.push_back({RowKind::kBert, {d}});
  return rows;
}

}  // namespace tessera::suite
