// IDX files (the MNIST container format), plain or gzip-compressed.
//
// Format: 2 zero bytes; a type byte (only 0x08 = unsigned byte is accepted); a byte with the
// number of dimensions d (1..4); d big-endian uint32 sizes; then prod(sizes) data bytes, nothing
// after. gzip is detected by zlib (gzopen reads plain files transparently); the header is read
// through zlib, and a gzip file's data is inflated whole by libdeflate when the file inflates to
// exactly the header and the data it announces (one or more gzip members). Anything else (corrupt,
// truncated, too long) is read again through zlib's stream, whose errors say what is wrong.
// Errors (tessera::Error, where = the path): cannot open or a directory (common/file_io.h),
// truncated header, bad magic, unsupported type, bad dimension count, zero size, truncated data
// ("expected N data bytes, found M"), trailing bytes, corrupt gzip stream. The data array is
// reserved for no more bytes than the file can hold (its size, x 1032 if compressed: deflate's
// largest expansion) and grows past that only as the bytes arrive, so a header that claims more
// than the file holds allocates no more than the file could.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::runtime {

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

IdxArray read_idx(const std::string& path);

// Writes a plain (gzip = false) or gzip-compressed IDX file of unsigned bytes (tests, tools).
void write_idx(const std::string& path, const std::vector<int64_t>& dims,
               const std::vector<uint8_t>& data, bool gzip);

}  // namespace tessera::runtime
