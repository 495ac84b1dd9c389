// Program image writer and validating reader (format in image.h).
#include "isa/image.h"

#include <cstring>

#include "common/error.h"
#include "common/file_io.h"
#include "isa/encoding.h"

namespace tessera::isa {
namespace {

constexpr uint32_t kFlagDebug = 1;

class Writer {
 public:
  void u32(uint32_t v) {
    uint8_t b[4];
    store_le32(b, v);
    m_out.insert(m_out.end(), b, b + 4);
  }
  void u64(uint64_t v) {
    uint8_t b[8];
    store_le64(b, v);
    m_out.insert(m_out.end(), b, b + 8);
  }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    m_out.insert(m_out.end(), s.begin(), s.end());
  }
  void bytes(const uint8_t* p, size_t n) { m_out.insert(m_out.end(), p, p + n); }
  std::vector<uint8_t>& out() { return m_out; }

 private:
  std::vector<uint8_t> m_out;
};

// Bounds-checked cursor: every read names what it reads, so truncation errors say where.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const std::string& name) : m_bytes(bytes), m_name(name) {}

  void need(uint64_t n, const char* what) const {
    if (n > m_bytes.size() - m_pos) {
      throw Error(m_name,
                  fmt::format("truncated image: {} needs {} bytes at offset {}, but only {} remain",
                              what, n, m_pos, m_bytes.size() - m_pos));
    }
  }
  uint32_t u32(const char* what) {
    need(4, what);
    uint32_t v = load_le32(m_bytes.data() + m_pos);
    m_pos += 4;
    return v;
  }
  uint64_t u64(const char* what) {
    need(8, what);
    uint64_t v = load_le64(m_bytes.data() + m_pos);
    m_pos += 8;
    return v;
  }
  std::string str(const char* what) {
    uint32_t n = u32(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(m_bytes.data() + m_pos), n);
    m_pos += n;
    return s;
  }
  std::span<const uint8_t> take(uint64_t n, const char* what) {
    need(n, what);
    auto s = m_bytes.subspan(m_pos, n);
    m_pos += n;
    return s;
  }
  size_t pos() const { return m_pos; }
  size_t remaining() const { return m_bytes.size() - m_pos; }
  const std::string& name() const { return m_name; }

 private:
  std::span<const uint8_t> m_bytes;
  const std::string& m_name;
  size_t m_pos = 0;
};

std::vector<uint8_t> debug_section(const DebugInfo& d) {
  Writer w;
  w.str(d.source);
  w.u32(static_cast<uint32_t>(d.lines.size()));
  for (uint32_t line : d.lines) w.u32(line);
  w.u32(static_cast<uint32_t>(d.symbols.size()));
  for (const Symbol& s : d.symbols) {
    w.str(s.name);
    w.u32(s.bundle);
  }
  return std::move(w.out());
}

void read_code(Reader& r, uint32_t count, Program& p) {
  auto code = r.take(static_cast<uint64_t>(count) * kBundleBytes, "the code");
  p.code.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    try {
      p.code.push_back(
          decode_bundle(code.subspan(static_cast<size_t>(i) * kBundleBytes, kBundleBytes)));
    } catch (const Error& e) {
      throw Error(fmt::format("{}: bundle {} {}", r.name(), i, e.where()), e.why());
    }
  }
}

void read_data(Reader& r, uint32_t count, Program& p) {
  for (uint32_t i = 0; i < count; ++i) {
    r.need(16, "a data segment header");
    uint32_t space = r.u32("a data segment header");
    uint32_t n = r.u32("a data segment header");
    uint64_t address = r.u64("a data segment header");
    if (space >= kNumSpaces) {
      throw Error(
          r.name(),
          fmt::format("data segment {} has unknown space {} (0 smem, 1 hbm, 2 vmem)", i, space));
    }
    auto words = r.take(static_cast<uint64_t>(n) * 4, "a data segment's words");
    DataSegment seg{static_cast<Space>(space), address, std::vector<uint32_t>(n)};
    for (uint32_t k = 0; k < n; ++k) seg.words[k] = load_le32(words.data() + 4 * k);
    p.data.push_back(std::move(seg));
  }
}

void read_debug(Reader& r, uint32_t size, Program& p) {
  size_t start = r.pos();
  r.need(size, "the debug section");
  DebugInfo& d = p.debug;
  d.source = r.str("the debug source name");
  uint32_t lines = r.u32("the debug line count");
  if (lines != 0 && lines != p.code.size()) {
    throw Error(r.name(), fmt::format("debug section has {} source lines for {} bundles", lines,
                                      p.code.size()));
  }
  r.need(static_cast<uint64_t>(lines) * 4, "the debug source lines");
  for (uint32_t i = 0; i < lines; ++i) d.lines.push_back(r.u32("the debug source lines"));
  uint32_t symbols = r.u32("the debug symbol count");
  for (uint32_t i = 0; i < symbols; ++i) {
    r.need(8, "a debug symbol");
    std::string name = r.str("a debug symbol");
    d.symbols.push_back({std::move(name), r.u32("a debug symbol")});
  }
  if (r.pos() - start != size) {
    throw Error(r.name(), fmt::format("debug section is {} bytes, but the header says {}",
                                      r.pos() - start, size));
  }
}

}  // namespace

std::string_view to_string(Space s) {
  switch (s) {
    case Space::Smem:
      return "smem";
    case Space::Hbm:
      return "hbm";
    case Space::Vmem:
      return "vmem";
  }
  return "?";
}

Program Program::with_index(uint32_t processor) const {
  Program p = *this;
  p.index = processor;
  return p;
}

Program Program::without_debug() const {
  Program p = *this;
  p.debug = {};
  return p;
}

std::vector<uint8_t> write_image(const Program& p) {
  TESSERA_CHECK(p.debug.lines.empty() || p.debug.lines.size() == p.code.size(),
                "debug info must have no source lines or one per bundle");
  std::vector<uint8_t> debug;
  if (!p.debug.empty()) debug = debug_section(p.debug);
  Writer w;
  w.bytes(reinterpret_cast<const uint8_t*>(kImageMagic), sizeof kImageMagic);
  w.u32(kImageVersion);
  w.u32(p.debug.empty() ? 0 : kFlagDebug);
  w.u32(p.index);
  w.u32(static_cast<uint32_t>(p.code.size()));
  w.u32(static_cast<uint32_t>(p.data.size()));
  w.u32(static_cast<uint32_t>(debug.size()));
  uint8_t buf[kBundleBytes];
  for (const Bundle& b : p.code) {
    encode_bundle(b, buf);
    w.bytes(buf, sizeof buf);
  }
  for (const DataSegment& s : p.data) {
    w.u32(static_cast<uint32_t>(s.space));
    w.u32(static_cast<uint32_t>(s.words.size()));
    w.u64(s.address);
    for (uint32_t v : s.words) w.u32(v);
  }
  w.bytes(debug.data(), debug.size());
  return std::move(w.out());
}

bool looks_like_image(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof kImageMagic &&
         std::memcmp(bytes.data(), kImageMagic, sizeof kImageMagic) == 0;
}

Program read_image(std::span<const uint8_t> bytes, const std::string& name) {
  if (!looks_like_image(bytes)) throw Error(name, "not a tessera program image (bad magic)");
  Reader r(bytes, name);
  r.take(sizeof kImageMagic, "the magic");
  uint32_t version = r.u32("the header");
  if (version != kImageVersion) {
    throw Error(name, fmt::format("unsupported image version {} (this build reads {})", version,
                                  kImageVersion));
  }
  uint32_t flags = r.u32("the header");
  if (flags & ~kFlagDebug)
    throw Error(name, fmt::format("unknown image flags {:#x}", flags & ~kFlagDebug));
  Program p;
  p.index = r.u32("the header");
  uint32_t bundles = r.u32("the header");
  uint32_t segments = r.u32("the header");
  uint32_t debug = r.u32("the header");
  if ((flags & kFlagDebug) == 0 && debug != 0) {
    throw Error(name, fmt::format("debug section size is {} but the debug flag is not set", debug));
  }
  read_code(r, bundles, p);
  read_data(r, segments, p);
  if (flags & kFlagDebug) read_debug(r, debug, p);
  if (r.remaining() != 0) {
    throw Error(
        name,
        fmt::format(
            "{} bytes after the end of the image (the header's counts disagree with its size)",
            r.remaining()));
  }
  return p;
}

void patch_index(std::span<uint8_t> image, uint32_t processor, const std::string& name) {
  if (!looks_like_image(image) || image.size() < kImageHeaderBytes) {
    throw Error(name, "not a tessera program image (bad magic or truncated header)");
  }
  store_le32(image.data() + kImageIndexOffset, processor);
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  const std::string bytes = read_file(path, "file for reading", EmptyFile::kAllowed);
  return {bytes.begin(), bytes.end()};
}

void write_file_bytes(const std::string& path, std::span<const uint8_t> bytes) {
  write_file(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Program read_image_file(const std::string& path) {
  return read_image(read_file_bytes(path), path);
}

void write_image_file(const std::string& path, const Program& p) {
  write_file_bytes(path, write_image(p));
}

}  // namespace tessera::isa
