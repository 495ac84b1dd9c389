// Program: what the assembler produces and the loader consumes; and its binary image format.
//
// Binary image (all integers little-endian):
//   offset  size  field
//   0       8     magic "TSRIMG\r\n"
//   8       4     version (kImageVersion = 1)
//   12      4     flags: bit 0 = a debug section follows the data; other bits must be 0
//   16      4     index word: the processor index (0 in a fresh image; the loader patches each
//                 processor's copy with patch_index / Program::with_index)
//   20      4     bundle count B
//   24      4     data segment count S
//   28      4     debug section size in bytes (0 unless flag bit 0 is set)
//   32      88*B  code: each bundle kNumSlots 64-bit slot words (instruction.h)
//   ...           S data segments, each: u32 space (0 smem, 1 hbm, 2 vmem), u32 word count W,
//                 u64 address (words for smem/hbm, rows for vmem), W x u32 words
//   ...           debug section (if flag bit 0): u32 source-name length + bytes;
//                 u32 line count L (0 or B) + L x u32 source line of each bundle;
//                 u32 symbol count + per symbol: u32 name length + bytes, u32 bundle index
// The file ends exactly there. read_image rejects anything else (bad magic or version, unknown
// flags, a truncated file, counts that disagree with the size, trailing bytes, invalid slot
// encodings, naming the bundle and slot) with a tessera::Error; it never crashes, on any bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "isa/instruction.h"

namespace tessera::isa {

enum class Space : uint8_t { Smem, Hbm, Vmem };
inline constexpr int kNumSpaces = 3;
std::string_view to_string(Space s);  // "smem", "hbm", "vmem" (also the directive names)

// Initial memory contents: `words` go to `space` from `address` (words for smem/hbm; rows of
// `lanes` words for vmem, i.e. word address * lanes). Segments are loaded in order.
struct DataSegment {
  Space space = Space::Smem;
  uint64_t address = 0;
  std::vector<uint32_t> words;
  friend bool operator==(const DataSegment&, const DataSegment&) = default;
};

struct Symbol {
  std::string name;
  uint32_t bundle = 0;
  friend bool operator==(const Symbol&, const Symbol&) = default;
};

// Optional; never affects execution. lines is empty or has one entry per bundle.
struct DebugInfo {
  std::string source;
  std::vector<uint32_t> lines;
  std::vector<Symbol> symbols;
  bool empty() const { return source.empty() && lines.empty() && symbols.empty(); }
  friend bool operator==(const DebugInfo&, const DebugInfo&) = default;
};

struct Program {
  std::vector<Bundle> code;
  std::vector<DataSegment> data;
  uint32_t index = 0;  // the processor index word
  DebugInfo debug;

  // A copy whose index word is `processor` (what the loader gives each processor).
  Program with_index(uint32_t processor) const;
  // A copy without debug info (code, data and index only).
  Program without_debug() const;
  friend bool operator==(const Program&, const Program&) = default;
};

inline constexpr char kImageMagic[8] = {'T', 'S', 'R', 'I', 'M', 'G', '\r', '\n'};
inline constexpr uint32_t kImageVersion = 1;
inline constexpr size_t kImageHeaderBytes = 32;
inline constexpr size_t kImageIndexOffset = 16;

std::vector<uint8_t> write_image(const Program& p);
// `name` is used as the `where` of errors (e.g. the file path).
Program read_image(std::span<const uint8_t> bytes, const std::string& name = "<image>");
// Patches the index word of an image in place (checks magic and size first).
void patch_index(std::span<uint8_t> image, uint32_t processor, const std::string& name = "<image>");
bool looks_like_image(std::span<const uint8_t> bytes);  // starts with the magic

// File helpers: errors name the path.
std::vector<uint8_t> read_file_bytes(const std::string& path);
void write_file_bytes(const std::string& path, std::span<const uint8_t> bytes);
Program read_image_file(const std::string& path);
void write_image_file(const std::string& path, const Program& p);

}  // namespace tessera::isa
