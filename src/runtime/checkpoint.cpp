#include "runtime/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file_io.h"

namespace tessera::runtime {

namespace {

constexpr char kMagic[8] = {'T', 'S', 'R', 'C', 'K', 'P', 'T', '\0'};
constexpr size_t kFixed = 16;  // magic, version, header length
constexpr size_t kCrc = 4;

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t get_u32(const std::string& in, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(in[at + static_cast<size_t>(i)])) << (8 * i);
  return v;
}

uint32_t crc_of(const std::string& bytes, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  size_t done = 0;
  while (done < n) {
    const size_t chunk = std::min<size_t>(n - done, 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + done), static_cast<uInt>(chunk));
    done += chunk;
  }
  return static_cast<uint32_t>(crc);
}

nlohmann::ordered_json sizes_of(const std::vector<std::vector<float>>& tensors) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& t : tensors) a.push_back(static_cast<int64_t>(t.size()));
  return a;
}

// Tensor sizes from the header's array `key`; nullopt when absent or malformed.
std::optional<std::vector<int64_t>> sizes_from(const nlohmann::ordered_json& h, const char* key) {
  const auto it = h.find(key);
  if (it == h.end() || !it->is_array()) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (int64_t{1} << 40))
      return std::nullopt;
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// The tensors of `sizes` from `at` on; decode_checkpoint has checked that they fit in `bytes`.
std::vector<std::vector<float>> take_tensors(const std::string& bytes, size_t& at,
                                             const std::vector<int64_t>& sizes) {
  std::vector<std::vector<float>> out;
  for (const int64_t n : sizes) {
    TESSERA_CHECK(at + 4 * static_cast<size_t>(n) <= bytes.size(),
                  "checkpoint tensor past the end");
    std::vector<float> t(static_cast<size_t>(n));
    if (!t.empty())
      std::memcpy(t.data(), bytes.data() + at,
                  4 * t.size());  // an empty vector's data() may be null
    at += 4 * t.size();
    out.push_back(std::move(t));
  }
  return out;
}

// The payload bytes of `sizes`, saturating at 2^62: each size is at most 2^40 words, but a header
// may list enough of them to overflow a plain sum (and then seem to describe a short file).
size_t payload_bytes(const std::vector<int64_t>& sizes) {
  constexpr size_t kSaturated = size_t{1} << 62;
  size_t n = 0;
  for (const int64_t s : sizes) n = std::min(kSaturated, n + 4 * static_cast<size_t>(s));
  return n;
}

[[noreturn]] void fail_errno(const std::string& path, const std::string& what) {
  throw Error(path, what + ": " + std::strerror(errno));
}

// Writes `bytes` to `tmp` and syncs it; on any failure removes `tmp` (a full disk must not stay
// full of a half-written checkpoint) and throws naming it.
void write_synced(const std::string& tmp, const std::string& bytes) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno(tmp, "cannot create checkpoint");
  try {
    write_all(fd, bytes, tmp, "checkpoint");
    if (::fsync(fd) != 0) fail_errno(tmp, "cannot sync checkpoint");
  } catch (const Error&) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail_errno(tmp, "cannot close checkpoint");
  }
}

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) fail_errno(dir, "cannot open checkpoint directory to sync it");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) fail_errno(dir, "cannot sync checkpoint directory");
}

const std::regex& name_pattern() {
  static const std::regex re("ckpt-[0-9]{10}\\.tsck");
  return re;
}

}  // namespace

std::string encode_checkpoint(const Checkpoint& c) {
  nlohmann::ordered_json h;
  h["identity"] = c.identity;
  h["progress"] = c.progress;
  h["params"] = sizes_of(c.params);
  h["state"] = sizes_of(c.state);
  const std::string header = h.dump();
  std::string out(kMagic, sizeof kMagic);
  put_u32(out, kCheckpointVersion);
  put_u32(out, static_cast<uint32_t>(header.size()));
  out += header;
  for (const auto* group : {&c.params, &c.state})
    for (const auto& t : *group) out.append(reinterpret_cast<const char*>(t.data()), 4 * t.size());
  put_u32(out, crc_of(out, out.size()));
  return out;
}

Checkpoint decode_checkpoint(const std::string& bytes, const std::string& path) {
  const size_t n = bytes.size();
  if (n < kFixed + kCrc)
    throw Error(path, fmt::format("truncated checkpoint ({} bytes; the fixed fields alone are {})",
                                  n, kFixed + kCrc));
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw Error(path, "not a tessera checkpoint (bad magic)");
  const uint32_t version = get_u32(bytes, 8);
  if (version != kCheckpointVersion)
    throw Error(path,
                fmt::format("checkpoint format version {} is not supported (this build reads {})",
                            version, kCheckpointVersion));
  const size_t header_len = get_u32(bytes, 12);
  if (kFixed + header_len + kCrc > n)
    throw Error(path, fmt::format("truncated checkpoint ({} bytes; its header alone needs {})", n,
                                  kFixed + header_len + kCrc));
  const nlohmann::ordered_json h = nlohmann::ordered_json::parse(
      bytes.begin() + kFixed, bytes.begin() + static_cast<std::ptrdiff_t>(kFixed + header_len),
      nullptr, false);
  std::optional<std::vector<int64_t>> ps, ss;
  if (h.is_object()) {
    ps = sizes_from(h, "params");
    ss = sizes_from(h, "state");
  }
  if (ps && ss) {
    const size_t expected = kFixed + header_len + payload_bytes(*ps) + payload_bytes(*ss) + kCrc;
    if (n < expected)
      throw Error(path, fmt::format("truncated checkpoint ({} bytes, its header describes {})", n,
                                    expected));
    if (n > expected)
      throw Error(
          path, fmt::format("damaged checkpoint ({} bytes, its header describes {})", n, expected));
  }
  const uint32_t stored = get_u32(bytes, n - kCrc), computed = crc_of(bytes, n - kCrc);
  if (stored != computed)
    throw Error(
        path, fmt::format("checksum mismatch (stored {:08x}, computed {:08x}): the file is damaged",
                          stored, computed));
  if (!ps || !ss || !h.contains("identity") || !h.contains("progress"))
    throw Error(path, "corrupt checkpoint header (not the JSON this build writes)");
  Checkpoint c;
  c.identity = h["identity"];
  c.progress = h["progress"];
  size_t at = kFixed + header_len;
  c.params = take_tensors(bytes, at, *ps);
  c.state = take_tensors(bytes, at, *ss);
  return c;
}

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  const std::filesystem::path p(path);
  const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  const std::string tmp =
      (std::filesystem::path(dir) / (std::string(".") + p.filename().string() + ".tmp")).string();
  const std::string bytes = encode_checkpoint(c);
  write_synced(tmp, bytes);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail_errno(path, "cannot rename " + tmp + " to the checkpoint");
  }
  fsync_dir(dir);
}

Checkpoint read_checkpoint(const std::string& path) {
  return decode_checkpoint(read_file(path, "checkpoint", EmptyFile::kAllowed), path);
}

void check_identity(const std::string& path, const nlohmann::ordered_json& stored,
                    const nlohmann::ordered_json& expected) {
  const auto check = [&](const std::string& key, const nlohmann::ordered_json& want) {
    if (!stored.is_object() || !stored.contains(key))
      throw Error(path, fmt::format("checkpoint has no '{}' (this run: {})", key, want.dump()));
    const auto& got = stored[key];
    if (got != want)
      throw Error(path, fmt::format("checkpoint is for {} {}, this run has {} {}", key, got.dump(),
                                    key, want.dump()));
  };
  // The batch first: other keys (the sample counts) follow from it, so a run resumed with another
  // --batch is told about the flag it changed.
  if (expected.is_object() && expected.contains("batch")) check("batch", expected["batch"]);
  for (const auto& [key, want] : expected.items()) check(key, want);
}

std::string checkpoint_file_name(int64_t step) {
  return fmt::format("ckpt-{:010d}.tsck", step);
}

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  // Advanced with increment(ec): operator++ would throw filesystem_error on a failed read.
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && std::regex_match(name, name_pattern()))
      names.push_back(name);
  }
  if (ec) throw Error(dir, "cannot list checkpoint directory: " + ec.message());
  std::sort(names.begin(), names.end());
  std::vector<std::string> out;
  for (const auto& name : names) out.push_back((std::filesystem::path(dir) / name).string());
  return out;
}

std::optional<std::string> newest_checkpoint(const std::string& dir) {
  const std::vector<std::string> all = list_checkpoints(dir);
  if (all.empty()) return std::nullopt;
  return all.back();
}

void prune_checkpoints(const std::string& dir, int keep) {
  const std::vector<std::string> all = list_checkpoints(dir);
  for (size_t i = 0; i + static_cast<size_t>(std::max(keep, 0)) < all.size(); ++i) {
    std::error_code ec;
    std::filesystem::remove(all[i], ec);
    if (ec) throw Error(all[i], "cannot remove old checkpoint: " + ec.message());
  }
}

Checkpoint read_newest_checkpoint(const std::string& dir, std::string* path) {
  std::error_code ec;
  const std::optional<std::string> newest =
      std::filesystem::is_directory(dir, ec) ? newest_checkpoint(dir) : std::nullopt;
  if (!newest) throw Error(dir, "no checkpoint to resume from (looked for ckpt-<step>.tsck)");
  *path = *newest;
  return read_checkpoint(*newest);
}

void refuse_existing_checkpoints(const std::string& dir) {
  std::error_code ec;
  if (!dir.empty() && std::filesystem::is_directory(dir, ec) && !list_checkpoints(dir).empty())
    throw Error(dir,
                "already holds checkpoints (continue with --resume, or use an empty directory)");
}

namespace {

void create_checkpoint_dir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw Error(dir, "is a file, not a checkpoint directory");
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir, "cannot create checkpoint directory: " + ec.message());
}

}  // namespace

void prepare_checkpoint_dir(const std::string& dir) {
  create_checkpoint_dir(dir);
  const std::string probe = (std::filesystem::path(dir) / ".write-check.tmp").string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno(dir, "cannot write checkpoints to this directory");
  ::close(fd);
  ::unlink(probe.c_str());
}

void save_checkpoint(const std::string& dir, int64_t step, const Checkpoint& c, int keep) {
  create_checkpoint_dir(dir);
  write_checkpoint((std::filesystem::path(dir) / checkpoint_file_name(step)).string(), c);
  prune_checkpoints(dir, keep);
}

}  // namespace tessera::runtime
