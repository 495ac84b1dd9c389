// Training checkpoints: one file holds everything a training run needs to continue bit for bit.
//
// File format (version 1; all integers little-endian):
//   offset 0   8 bytes   magic "TSRCKPT\0"
//          8   u32       format version (kCheckpointVersion)
//         12   u32       H = header length in bytes
//         16   H bytes   header: UTF-8 JSON object
//                          "identity": what must match to resume (model, config name and hash,
//                                      optimizer and its hyper-parameters, batch, seed, ...);
//                          "progress": the training run's position and accumulators (opaque here;
//                                      runtime/training_run.h documents it);
//                          "params", "state": arrays of tensor sizes in words, in the order of
//                                      ChipTrainer::params() / optimizer_state()
//     16 + H   payload   every params tensor, then every state tensor, as raw fp32 words
//     end - 4  u32       CRC-32 (zlib's crc32, polynomial 0xEDB88320) of every byte before it
// Reading checks, in order: size >= 20, magic, version, header length within the file, header
// JSON, payload size == sum of tensor sizes, then the CRC: a truncated, extended or bit-flipped
// file is refused with an error naming the file and the reason, never used.
//
// Writing is atomic: the bytes go to "<dir>/.<name>.tmp", which is fsync'ed, renamed over
// "<dir>/<name>", and the directory is fsync'ed; a crash leaves either the old set of checkpoints
// or the new one, plus at most a temp file that readers ignore (only names matching
// checkpoint_file_name's pattern are considered). A failed write (a full disk) removes the temp
// file before throwing, naming it and the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::runtime {

// 2: the per-layer counters carry cycles and HBM bytes, and the progress keeps per-step loss and
// cycles; a version-1 file is refused by version, not read with the counts missing.
inline constexpr uint32_t kCheckpointVersion = 2;

struct Checkpoint {
  nlohmann::ordered_json identity = nlohmann::ordered_json::object();
  nlohmann::ordered_json progress = nlohmann::ordered_json::object();
  std::vector<std::vector<float>> params, state;
};

// The file's bytes as described above.
std::string encode_checkpoint(const Checkpoint& c);
// Parses and verifies `bytes`; errors are tessera::Error(`path`, reason).
Checkpoint decode_checkpoint(const std::string& bytes, const std::string& path);

// Atomic write to `path` (see above); creates no directories.
void write_checkpoint(const std::string& path, const Checkpoint& c);
Checkpoint read_checkpoint(const std::string& path);

// Refuses (tessera::Error naming `path`) a checkpoint whose identity differs from `expected`:
// the first key whose value differs, or that is missing, is named with both values; `batch` is
// compared first (the sample counts follow from it), then every key in `expected`'s order.
void check_identity(const std::string& path, const nlohmann::ordered_json& stored,
                    const nlohmann::ordered_json& expected);

// "ckpt-<step, 10 digits>.tsck": names sort by step.
std::string checkpoint_file_name(int64_t step);
// The checkpoint files in `dir` (names matching checkpoint_file_name's pattern), oldest first.
std::vector<std::string> list_checkpoints(const std::string& dir);
std::optional<std::string> newest_checkpoint(const std::string& dir);
// Deletes all but the newest `keep` checkpoints in `dir`.
void prune_checkpoints(const std::string& dir, int keep);

// What a training loop does with these (TrainingRun, DataParallelRun):
// the newest checkpoint of `dir`, its path in *path (Error naming `dir` when there is none);
Checkpoint read_newest_checkpoint(const std::string& dir, std::string* path);
// Error naming `dir` when it already holds checkpoints (a fresh run must not mix with them);
void refuse_existing_checkpoints(const std::string& dir);
// before training, creates `dir` if needed and checks that a file can be created in it (Error
// naming `dir`: a file, not creatable, not writable, with the reason);
void prepare_checkpoint_dir(const std::string& dir);
// creates `dir` if needed, writes `c` as checkpoint_file_name(step) and prunes to `keep`.
void save_checkpoint(const std::string& dir, int64_t step, const Checkpoint& c, int keep);

}  // namespace tessera::runtime
