// Assembler (algorithm in assembler.h). Operands are parsed by kind from the opcode table's
// signatures; there is no per-opcode code here.
#include "isa/assembler.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "isa/lexer.h"
#include "isa/operands.h"

namespace tessera::isa {
namespace {

// What a numeric operand is, for its range and its error messages.
enum class ValueKind { Imm32, Flag, Address, Target };

struct Line {
  std::vector<Token> tokens;
  std::optional<Error> lex_error;  // raised when pass 2 reaches the End token of this line
};

struct Definition {
  int64_t value;
  int line;
  int column = 0;
};

std::string_view trim_cr(std::string_view s) {
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

class Assembler {
 public:
  Assembler(std::string_view text, const std::string& file, const AsmOptions& opt)
      : m_file(file), m_opt(opt) {
    TESSERA_CHECK(opt.scalar_regs >= 1 && opt.scalar_regs <= 64 && opt.vector_regs >= 1 &&
                      opt.vector_regs <= 64 && opt.mask_regs >= 1 && opt.mask_regs <= 64,
                  "register counts must be 1..64");
    TESSERA_CHECK(opt.mxus >= 1 && opt.mxus <= kRegFieldMax + 1, "MXU count must be 1..64");
    split_and_lex(text);
  }

  Program run() {
    collect_labels();
    if (m_opt.whole_program && m_bundle_count == 0)
      throw Error(source_location(m_file, 1, 1),
                  "the program has no bundles (a program ends with 'halt')");
    for (size_t i = 0; i < m_lines.size(); ++i) assemble_line(static_cast<int>(i) + 1);
    if (m_opt.whole_program) check_last_bundle();
    std::erase_if(m_prog.data, [](const DataSegment& s) { return s.words.empty(); });
    if (m_opt.debug_info) {
      m_prog.debug.source = m_file;
    } else {
      m_prog.debug = {};
    }
    return std::move(m_prog);
  }

 private:
  // ---- pass 1 ------------------------------------------------------------------------------
  void split_and_lex(std::string_view text) {
    size_t pos = 0;
    int line_no = 1;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      Line line;
      line.tokens =
          lex_line(trim_cr(text.substr(pos, nl - pos)), m_file, line_no++, &line.lex_error);
      m_lines.push_back(std::move(line));
      pos = nl + 1;
    }
  }

  static bool is_label_def(const std::vector<Token>& t, size_t i) {
    return t[i].kind == TokenKind::Ident && i + 1 < t.size() && t[i + 1].kind == TokenKind::Colon;
  }

  // Records every label with the index of the bundle it precedes (first definition wins).
  void collect_labels() {
    uint32_t bundle = 0;
    for (size_t n = 0; n < m_lines.size(); ++n) {
      const auto& t = m_lines[n].tokens;
      size_t i = 0;
      for (; is_label_def(t, i); i += 2) {
        std::string name(t[i].text);
        if (!m_labels.count(name)) m_labels[name] = {bundle, static_cast<int>(n) + 1, t[i].column};
      }
      if (t[i].kind != TokenKind::End && t[i].kind != TokenKind::Directive) ++bundle;
    }
    m_bundle_count = bundle;
  }

  // A whole program must not run past its last bundle: it ends with halt or an unconditional
  // jump (conditional branches and loops fall through when not taken).
  void check_last_bundle() const {
    for (const Instr& in : m_prog.code.back().slot)
      if (in.op == Opcode::HALT || in.op == Opcode::JMP) return;
    throw Error(source_location(m_file, static_cast<int>(m_prog.debug.lines.back()), m_last_column),
                "the program can run past its last bundle (end it with 'halt' or 'jmp')");
  }

  // A branch target of a whole program must be one of its bundles; `at` is the label or the
  // bundle index that names it.
  void check_target(const Token& at, int64_t target) const {
    if (!m_opt.whole_program || target < m_bundle_count) return;
    const std::string what = at.kind == TokenKind::Ident
                                 ? fmt::format("label '{}'", excerpt(at.text))
                                 : fmt::format("bundle index {}", target);
    fail(at, fmt::format("{} is past the last bundle (the program has {} bundle{}, 0..{})", what,
                         m_bundle_count, m_bundle_count == 1 ? "" : "s", m_bundle_count - 1));
  }

  // ---- pass 2 ------------------------------------------------------------------------------
  void assemble_line(int line_no) {
    m_line_no = line_no;
    m_cur = &m_lines[line_no - 1];
    m_pos = 0;
    while (is_label_def(m_cur->tokens, m_pos)) define_label(next());
    const Token& t = peek();
    if (t.kind == TokenKind::End) return;
    if (t.kind == TokenKind::Directive) {
      directive();
    } else {
      bundle();
    }
  }

  void define_label(const Token& name) {
    next();  // the colon
    const Definition& d = m_labels.at(std::string(name.text));
    if (d.line != m_line_no || d.column != name.column)
      fail(name,
           fmt::format("label '{}' is already defined on line {}", excerpt(name.text), d.line));
    m_prog.debug.symbols.push_back({std::string(name.text), static_cast<uint32_t>(d.value)});
  }

  // ---- directives --------------------------------------------------------------------------
  void directive() {
    const Token& d = next();
    if (d.text == ".const") {
      define_constant();
    } else if (d.text == ".smem" || d.text == ".hbm" || d.text == ".vmem") {
      Space space = d.text == ".smem" ? Space::Smem : d.text == ".hbm" ? Space::Hbm : Space::Vmem;
      int64_t address = parse_value(ValueKind::Address);
      m_prog.data.push_back({space, static_cast<uint64_t>(address), {}});
      m_in_segment = true;
    } else if (d.text == ".word" || d.text == ".float") {
      if (!m_in_segment)
        fail(d, fmt::format("'{}' needs a preceding .smem, .hbm or .vmem directive", d.text));
      bool is_float = d.text == ".float";
      do {
        int64_t v = is_float ? parse_float_data() : parse_value(ValueKind::Imm32);
        m_prog.data.back().words.push_back(static_cast<uint32_t>(v));
      } while (accept(TokenKind::Comma));
    } else {
      fail(d, fmt::format(
                  "unknown directive '{}' (expected .const, .smem, .hbm, .vmem, .word or .float)",
                  excerpt(d.text)));
    }
    expect_end(d);
  }

  void define_constant() {
    const Token& name = next();
    if (name.kind != TokenKind::Ident)
      fail(name, "expected a constant name, got " + describe(name));
    std::string key(name.text);
    if (auto it = m_consts.find(key); it != m_consts.end()) {
      fail(name, fmt::format("constant '{}' is already defined on line {}", excerpt(key),
                             it->second.line));
    }
    int64_t v = parse_value(ValueKind::Imm32);
    m_consts[key] = {v, m_line_no};
  }

  void expect_end(const Token& what) {
    const Token& t = peek();
    if (t.kind != TokenKind::End)
      fail(t,
           fmt::format("expected end of line after '{}', got {}", excerpt(what.text), describe(t)));
  }

  // ---- bundles -----------------------------------------------------------------------------
  struct BundleState {
    Bundle bundle;
    std::array<bool, kNumSlots> used{};
    std::vector<RegRef> written;
  };

  void bundle() {
    m_last_column = peek().column;
    BundleState st;
    for (;;) {
      parse_op(st);
      const Token& t = peek();
      if (t.kind == TokenKind::End) break;
      next();  // parse_op leaves only ;; or End
    }
    m_prog.code.push_back(st.bundle);
    m_prog.debug.lines.push_back(static_cast<uint32_t>(m_line_no));
  }

  void parse_op(BundleState& st) {
    const Token& mn = next();
    if (mn.kind != TokenKind::Ident) fail(mn, "expected a mnemonic, got " + describe(mn));
    std::optional<Opcode> op = opcode_from_mnemonic(mn.text);
    if (!op) fail(mn, fmt::format("unknown mnemonic '{}'", excerpt(mn.text)));
    const OpInfo& info = op_info(*op);
    auto sig = signature(*op);
    Instr in;
    in.op = *op;
    std::array<int, 8> column{};
    for (size_t i = 0; i < sig.size(); ++i) {
      const TokenKind k = peek().kind;
      if (sig[i].kind == OperandKind::Mxu && (k == TokenKind::End || k == TokenKind::SlotSep))
        break;  // the optional MXU index, left out: MXU 0
      if (i > 0) expect_comma(info, i);
      column[i] = peek().column;
      parse_operand(sig[i], in);
    }
    const Token& after = peek();
    if (after.kind != TokenKind::End && after.kind != TokenKind::SlotSep) {
      if (sig.empty())
        fail(after, fmt::format("'{}' takes no operands, got {}", info.mnemonic, describe(after)));
      fail(after, fmt::format("'{}' takes {} operand{} ({}); expected ';;' or end of line, got {}",
                              info.mnemonic, sig.size(), sig.size() == 1 ? "" : "s", info.operands,
                              describe(after)));
    }
    if (in.op == Opcode::NOP) return;
    place(st, in, mn);
    check_writes(st, in, column);
  }

  void expect_comma(const OpInfo& info, size_t given) {
    const Token& t = peek();
    if (t.kind == TokenKind::Comma) {
      next();
      return;
    }
    size_t n = signature(info.op).size();
    if (t.kind == TokenKind::End || t.kind == TokenKind::SlotSep) {
      fail(t, fmt::format("'{}' takes {} operands ({}), got {}", info.mnemonic, n, info.operands,
                          given));
    }
    fail(t, "expected ',' between operands, got " + describe(t));
  }

  void place(BundleState& st, Instr in, const Token& mn) {
    SlotClass cls = op_info(in.op).slot;
    int capacity = 0;
    for (int s = 0; s < kNumSlots; ++s) {
      if (kSlotClass[s] != cls) continue;
      ++capacity;
      if (!st.used[s]) {
        st.used[s] = true;
        st.bundle.slot[s] = in;
        return;
      }
    }
    fail(mn, fmt::format("too many {} ops in one bundle (at most {})", to_string(cls), capacity));
  }

  void check_writes(BundleState& st, const Instr& in, const std::array<int, 8>& column) {
    auto sig = signature(in.op);
    for (const RegRef& r : written_registers(in)) {
      if (std::find(st.written.begin(), st.written.end(), r) == st.written.end()) {
        st.written.push_back(r);
        continue;
      }
      int col = column[0];
      for (size_t i = 0; i < sig.size(); ++i) {
        if (is_register(sig[i].kind) && reg_file(sig[i].kind) == r.file &&
            field_value(in, sig[i].field) == r.index) {
          col = column[i];
          break;
        }
      }
      throw Error(source_location(m_file, m_line_no, col),
                  fmt::format("{}{} is written twice in one bundle", reg_prefix(r.file), r.index));
    }
  }

  // ---- operands ----------------------------------------------------------------------------
  void parse_operand(const Operand& o, Instr& in) {
    switch (o.kind) {
      case OperandKind::SReg:
      case OperandKind::VReg:
      case OperandKind::MReg:
        set_field(in, o.field, parse_register(reg_file(o.kind)));
        break;
      case OperandKind::Imm:
        in.imm = static_cast<int32_t>(static_cast<uint32_t>(parse_value(ValueKind::Imm32)));
        break;
      case OperandKind::Label:
        in.imm = static_cast<int32_t>(parse_label());
        break;
      case OperandKind::Mem:
        parse_memory(o, in);
        break;
      case OperandKind::Special:
        in.imm = parse_special();
        break;
      case OperandKind::Flag:
        set_field(in, o.field, static_cast<uint8_t>(parse_value(ValueKind::Flag)));
        break;
      case OperandKind::Mxu:
        set_field(in, o.field, parse_mxu());
        break;
    }
  }

  // `mxuN`, N < the core's MXU count.
  uint8_t parse_mxu() {
    const Token& t = next();
    if (t.kind == TokenKind::Ident && t.text.size() >= 4 && t.text.size() <= 5 &&
        t.text.substr(0, 3) == "mxu" && !(t.text.size() == 5 && t.text[3] == '0')) {
      int v = 0;
      auto [end, ec] = std::from_chars(t.text.data() + 3, t.text.data() + t.text.size(), v);
      if (ec == std::errc() && end == t.text.data() + t.text.size() && v < m_opt.mxus)
        return static_cast<uint8_t>(v);
    }
    fail(t, fmt::format("expected an MXU index (mxu0..mxu{}: the core has {} MXU{}), got {}",
                        m_opt.mxus - 1, m_opt.mxus, m_opt.mxus == 1 ? "" : "s", describe(t)));
  }

  int register_count(RegFile f) const {
    switch (f) {
      case RegFile::Scalar:
        return m_opt.scalar_regs;
      case RegFile::Vector:
        return m_opt.vector_regs;
      case RegFile::Mask:
        return m_opt.mask_regs;
    }
    return 0;
  }

  static std::string_view file_name(RegFile f) {
    switch (f) {
      case RegFile::Scalar:
        return "scalar";
      case RegFile::Vector:
        return "vector";
      case RegFile::Mask:
        return "mask";
    }
    return "?";
  }

  uint8_t parse_register(RegFile f) {
    const Token& t = next();
    std::string_view p = reg_prefix(f);
    int count = register_count(f);
    if (t.kind == TokenKind::Ident && t.text.size() >= 2 && t.text.size() <= 3 &&
        t.text[0] == p[0] && !(t.text.size() == 3 && t.text[1] == '0')) {
      int v = 0;
      auto [end, ec] = std::from_chars(t.text.data() + 1, t.text.data() + t.text.size(), v);
      if (ec == std::errc() && end == t.text.data() + t.text.size() && v < count)
        return static_cast<uint8_t>(v);
    }
    fail(t, fmt::format("expected a {} register ({}0..{}{}), got {}", file_name(f), p, p, count - 1,
                        describe(t)));
  }

  int64_t parse_label() {
    const Token& t = peek();
    if (t.kind == TokenKind::Ident) {
      next();
      auto it = m_labels.find(std::string(t.text));
      if (it == m_labels.end()) fail(t, fmt::format("undefined label '{}'", excerpt(t.text)));
      check_target(t, it->second.value);
      return it->second.value;
    }
    if (t.kind == TokenKind::Int) {
      const int64_t target = parse_value(ValueKind::Target);
      check_target(t, target);
      return target;
    }
    next();
    fail(t, "expected a label or a bundle index, got " + describe(t));
  }

  void parse_memory(const Operand& o, Instr& in) {
    const Token& open = next();
    if (open.kind != TokenKind::LBracket)
      fail(open, "expected a memory operand like [s3+16], got " + describe(open));
    set_field(in, o.field, parse_register(RegFile::Scalar));
    const Token& t = peek();
    if (t.kind == TokenKind::Plus || t.kind == TokenKind::Minus) {
      in.imm = static_cast<int32_t>(static_cast<uint32_t>(parse_value(ValueKind::Imm32)));
    } else if (t.kind != TokenKind::RBracket) {
      fail(t, "expected '+', '-' or ']' in a memory operand, got " + describe(t));
    }
    const Token& close = next();
    if (close.kind != TokenKind::RBracket)
      fail(close, "expected ']' to close the memory operand, got " + describe(close));
  }

  int32_t parse_special() {
    const Token& t = next();
    for (int i = 0; i < kNumSpecialRegs; ++i) {
      if (t.kind == TokenKind::Special && t.text == kSpecialRegName[i]) return i;
    }
    fail(t, "expected a special register (%cycle_lo, %cycle_hi, %pid, %nproc), got " + describe(t));
  }

  // [+|-] (integer | float literal with f | constant). Floats only for Imm32.
  int64_t parse_value(ValueKind kind) {
    bool negative = false;
    const Token* sign = nullptr;
    if (peek().kind == TokenKind::Plus || peek().kind == TokenKind::Minus) {
      sign = &next();
      negative = sign->kind == TokenKind::Minus;
    }
    const Token& t = next();
    const Token& at = sign ? *sign : t;
    int64_t v;
    if (t.kind == TokenKind::Int) {
      std::optional<int64_t> parsed = parse_int(t.text);
      if (!parsed)
        fail(at, range_message(kind, fmt::format("{}{}", negative ? "-" : "", excerpt(t.text))));
      v = negative ? -*parsed : *parsed;
    } else if (t.kind == TokenKind::Float && kind == ValueKind::Imm32) {
      if (t.text.back() != 'f')
        fail(t, fmt::format("a float immediate needs an 'f' suffix ({}f), got '{}'",
                            excerpt(t.text), excerpt(t.text)));
      uint32_t bits = float_bits(parse_float(t, t.text.substr(0, t.text.size() - 1)));
      return negative ? bits ^ 0x80000000u : bits;
    } else if (t.kind == TokenKind::Ident && kind != ValueKind::Target) {
      auto it = m_consts.find(std::string(t.text));
      if (it == m_consts.end()) fail(t, fmt::format("undefined constant '{}'", excerpt(t.text)));
      v = negative ? -it->second.value : it->second.value;
    } else {
      fail(t, fmt::format("expected {}, got {}", expected_value(kind), describe(t)));
    }
    if (!in_range(kind, v)) fail(at, range_message(kind, std::to_string(v)));
    return v;
  }

  static std::optional<int64_t> parse_int(std::string_view s) {
    int base = 10;
    if (s.size() > 2 && (s[1] == 'x' || s[1] == 'X')) {
      base = 16;
      s.remove_prefix(2);
    }
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
  }

  static bool in_range(ValueKind kind, int64_t v) {
    switch (kind) {
      case ValueKind::Imm32:
        return v >= std::numeric_limits<int32_t>::min() &&
               v <= std::numeric_limits<uint32_t>::max();
      case ValueKind::Flag:
        return v >= 0 && v <= kMaxFlagId;
      case ValueKind::Address:
        return v >= 0;
      case ValueKind::Target:
        return v >= 0 && v <= std::numeric_limits<int32_t>::max();
    }
    return false;
  }

  static std::string range_message(ValueKind kind, const std::string& v) {
    switch (kind) {
      case ValueKind::Imm32:
        return fmt::format("immediate {} does not fit in 32 bits", v);
      case ValueKind::Flag:
        return fmt::format("flag id {} is out of range 0..{}", v, kMaxFlagId);
      case ValueKind::Address:
        return fmt::format("address {} is out of range 0..{}", v,
                           std::numeric_limits<int64_t>::max());
      case ValueKind::Target:
        return fmt::format("bundle index {} is out of range 0..{}", v,
                           std::numeric_limits<int32_t>::max());
    }
    return "";
  }

  static std::string_view expected_value(ValueKind kind) {
    switch (kind) {
      case ValueKind::Imm32:
        return "an immediate (a number, a float literal like 1.5f, or a .const name)";
      case ValueKind::Flag:
        return "a flag id (0..63)";
      case ValueKind::Address:
        return "an address (a number or a .const name)";
      case ValueKind::Target:
        return "a bundle index";
    }
    return "";
  }

  // .float data: [+|-] (decimal integer | float literal, f suffix optional | inf | nan).
  int64_t parse_float_data() {
    bool negative = false;
    if (peek().kind == TokenKind::Plus || peek().kind == TokenKind::Minus)
      negative = next().kind == TokenKind::Minus;
    const Token& t = next();
    float f;
    bool decimal_int =
        t.kind == TokenKind::Int && t.text.find_first_of("xX") == std::string_view::npos;
    if (t.kind == TokenKind::Float || decimal_int) {
      std::string_view body = t.text.back() == 'f' ? t.text.substr(0, t.text.size() - 1) : t.text;
      f = parse_float(t, body);
    } else if (t.kind == TokenKind::Ident && (t.text == "inf" || t.text == "nan")) {
      f = t.text == "inf" ? std::numeric_limits<float>::infinity()
                          : std::numeric_limits<float>::quiet_NaN();
    } else {
      fail(t, "expected a float literal (like 1.0, -2.5, 3e-4, inf, nan), got " + describe(t));
    }
    uint32_t bits = float_bits(f);
    return negative ? bits ^ 0x80000000u : bits;
  }

  float parse_float(const Token& t, std::string_view body) {
    std::string s(body);
    errno = 0;
    float f = std::strtof(s.c_str(), nullptr);
    if (errno == ERANGE && std::isinf(f))
      fail(t, fmt::format("float literal '{}' is out of range for fp32", excerpt(t.text)));
    return f;
  }

  // ---- token cursor ------------------------------------------------------------------------
  const Token& peek() {
    const Token& t = m_cur->tokens[m_pos];
    if (t.kind == TokenKind::End && m_cur->lex_error) throw *m_cur->lex_error;
    return t;
  }
  const Token& next() {
    const Token& t = peek();
    if (t.kind != TokenKind::End) ++m_pos;
    return t;
  }
  bool accept(TokenKind k) {
    if (peek().kind != k) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(const Token& t, const std::string& why) const {
    throw Error(source_location(m_file, m_line_no, t.column), why);
  }

  const std::string& m_file;
  AsmOptions m_opt;
  std::vector<Line> m_lines;
  std::unordered_map<std::string, Definition> m_labels;
  std::unordered_map<std::string, Definition> m_consts;
  Program m_prog;
  bool m_in_segment = false;
  int64_t m_bundle_count = 0;
  int m_last_column = 1;  // column of the last bundle's first op
  int m_line_no = 0;
  Line* m_cur = nullptr;
  size_t m_pos = 0;
};

}  // namespace

Program assemble(std::string_view text, const std::string& file, const AsmOptions& options) {
  return Assembler(text, file, options).run();
}

namespace {

Program assemble_whole(const std::vector<uint8_t>& bytes, const std::string& path,
                       AsmOptions options) {
  options.whole_program = true;
  return assemble(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path,
                  options);
}

}  // namespace

Program assemble_file(const std::string& path, const AsmOptions& options) {
  return assemble_whole(read_file_bytes(path), path, options);
}

Program load_program(const std::string& path, const AsmOptions& options) {
  std::vector<uint8_t> bytes = read_file_bytes(path);
  if (looks_like_image(bytes)) return read_image(bytes, path);
  return assemble_whole(bytes, path, options);
}

}  // namespace tessera::isa
