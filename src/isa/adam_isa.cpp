#include "isa/adam_isa.h"

#include <cctype>
#include <charconv>
#include <map>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::isa {

const AdamOpInfo& adam_op_info(AdamOp op) {
  return kAdamOpTable[static_cast<int>(op) - 1];
}

std::optional<AdamOp> adam_op_from_mnemonic(std::string_view mnemonic) {
  for (const AdamOpInfo& i : kAdamOpTable)
    if (i.mnemonic == mnemonic) return i.op;
  return std::nullopt;
}

uint64_t adam_encode(const AdamInstr& in) {
  return static_cast<uint64_t>(in.op) | (static_cast<uint64_t>(in.a & 15) << 8) |
         (static_cast<uint64_t>(in.b & 15) << 12) | (static_cast<uint64_t>(in.imm) << 32);
}

AdamInstr adam_decode(uint64_t word, int64_t index) {
  const auto fail = [&](const std::string& why) -> AdamInstr {
    throw Error(fmt::format("adam instruction {}", index),
                fmt::format("invalid encoding 0x{:016x}: {}", word, why));
  };
  const int opcode = static_cast<int>(word & 0xff);
  if (opcode == 0 || opcode > kNumAdamOps) return fail(fmt::format("unknown opcode {}", opcode));
  AdamInstr in;
  in.op = static_cast<AdamOp>(opcode);
  in.a = static_cast<uint8_t>((word >> 8) & 15);
  in.b = static_cast<uint8_t>((word >> 12) & 15);
  in.imm = static_cast<uint32_t>(word >> 32);
  if (((word >> 16) & 0xffff) != 0) return fail("bits 16..31 must be zero");
  const std::string_view ops = adam_op_info(in.op).operands;
  const bool uses_a = ops.find('a') != std::string_view::npos;
  const bool uses_b = ops.find('b') != std::string_view::npos;
  const bool uses_imm =
      ops.find("imm") != std::string_view::npos || ops.find("label") != std::string_view::npos;
  if (uses_a ? in.a >= kAdamAddrRegs : in.a != 0) return fail("field a");
  if (uses_b ? in.b >= kAdamAddrRegs : in.b != 0) return fail("field b");
  if (!uses_imm && in.imm != 0) return fail("imm must be zero");
  return in;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_ident(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_' || s[0] == '.'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

std::optional<uint32_t> parse_number(std::string_view t) {
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, t.remove_prefix(2);
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (ec != std::errc() || p != t.data() + t.size() || t.empty() || v > 0xffffffffull)
    return std::nullopt;
  return static_cast<uint32_t>(v);
}

struct Line {
  int number;
  std::string_view text;  // instruction text after any label, trimmed (may be empty)
};

std::vector<std::string_view> split_operands(std::string_view s) {
  std::vector<std::string_view> out;
  if (trim(s).empty()) return out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ',') {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

std::vector<uint64_t> adam_assemble(std::string_view text, const std::string& file) {
  std::vector<Line> lines;
  std::map<std::string, uint32_t, std::less<>> labels;
  int number = 0;
  uint32_t index = 0;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    if (const size_t c = l.find("//"); c != std::string_view::npos) l = l.substr(0, c);
    l = trim(l);
    if (const size_t colon = l.find(':'); colon != std::string_view::npos) {
      const std::string_view name = trim(l.substr(0, colon));
      const std::string where = fmt::format("{}:{}", file, number);
      if (!is_ident(name)) throw Error(where, fmt::format("bad label name '{}'", name));
      if (!labels.emplace(std::string(name), index).second)
        throw Error(where, fmt::format("label '{}' defined twice", name));
      l = trim(l.substr(colon + 1));
    }
    if (l.empty()) continue;
    lines.push_back({number, l});
    ++index;
  }
  std::vector<uint64_t> words;
  for (const Line& ln : lines) {
    const std::string where = fmt::format("{}:{}", file, ln.number);
    const size_t sp = ln.text.find_first_of(" \t");
    const std::string_view mn = ln.text.substr(0, sp);
    const auto op = adam_op_from_mnemonic(mn);
    if (!op) throw Error(where, fmt::format("unknown adam instruction '{}'", mn));
    const AdamOpInfo& info = adam_op_info(*op);
    const auto given =
        split_operands(sp == std::string_view::npos ? std::string_view{} : ln.text.substr(sp));
    const auto sig = split_operands(info.operands);
    if (given.size() != sig.size())
      throw Error(where, fmt::format("'{}' takes {} operand(s) ({}), got {}", mn, sig.size(),
                                     info.operands.empty() ? "none" : info.operands, given.size()));
    AdamInstr in;
    in.op = *op;
    for (size_t i = 0; i < sig.size(); ++i) {
      const std::string_view g = given[i];
      if (sig[i] == "a" || sig[i] == "b") {
        const auto r = g.size() >= 2 && g[0] == 'a' ? parse_number(g.substr(1)) : std::nullopt;
        if (!r || *r >= kAdamAddrRegs)
          throw Error(where, fmt::format("expected an address register a0..a7, got '{}'", g));
        (sig[i] == "a" ? in.a : in.b) = static_cast<uint8_t>(*r);
      } else if (sig[i] == "imm") {
        const auto v = parse_number(g);
        if (!v) throw Error(where, fmt::format("expected an unsigned 32-bit number, got '{}'", g));
        in.imm = *v;
      } else {
        if (const auto it = labels.find(g); it != labels.end()) {
          in.imm = it->second;
        } else if (const auto v = parse_number(g)) {
          in.imm = *v;
        } else {
          throw Error(where, fmt::format("unknown label '{}'", g));
        }
      }
    }
    words.push_back(adam_encode(in));
  }
  return words;
}

std::string adam_disassemble_one(const AdamInstr& in) {
  const AdamOpInfo& info = adam_op_info(in.op);
  std::string out(info.mnemonic);
  const auto sig = split_operands(info.operands);
  for (size_t i = 0; i < sig.size(); ++i) {
    out += i == 0 ? " " : ", ";
    if (sig[i] == "a")
      out += fmt::format("a{}", in.a);
    else if (sig[i] == "b")
      out += fmt::format("a{}", in.b);
    else
      out += fmt::format("{}", in.imm);
  }
  return out;
}

std::string adam_disassemble(const std::vector<uint64_t>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i)
    out += adam_disassemble_one(adam_decode(words[i], static_cast<int64_t>(i))) + "\n";
  return out;
}

}  // namespace tessera::isa
