// The loader model of one program image for many processors (docs/system.md).
//
// "Corresponding tiles of different processors load identical instructions" and "every tile holds
// a copy of its processor's index" in an index store: so the loader does not make a patched copy of
// the image per processor. It takes the image's bytes once (checked once: magic and header) and
// shares them with every processor, and it gives processor p its index by writing one 32-bit word,
// p, into p's index store (S1120: the index is unique in the computer). The loader keeps the index
// stores of all processors in one contiguous array, so giving n processors their index is a
// contiguous write of n words. Processor p's local program (S1130: "the same image patched with its
// index") is the shared image read with index_store()[p] as its index word: local_image(p) and
// local_program(p) materialise it (they copy; the model itself never does).
//
// A simulated core's index store is its `pid` register (core/loader.h sets it from the index
// word). The timed system (system/system.h) still hands each core its own Program copy made by
// Program::with_index: a host-side convenience of the simulator, not what `bench compile` times.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "isa/image.h"

namespace tessera::isa {

class SharedImage {
 public:
  SharedImage() = default;
  explicit SharedImage(std::vector<uint8_t> image, const std::string& name = "<image>") {
    set_image(std::move(image), name);
  }
  // Takes `image` (write_image bytes) as the one image, keeping the index store; Error(name, ...)
  // when it is not an image (bad magic or a truncated header). The bytes are fully validated by
  // local_program, not here (the loader copies what the compiler wrote).
  void set_image(std::vector<uint8_t> image, const std::string& name = "<image>");

  // S1120-S1130 for processors 0..n-1: index_store()[p] = p. Reuses the array's storage when a
  // later load has no more processors than an earlier one.
  void load(int processors);

  const std::vector<uint8_t>& image() const { return m_image; }
  std::span<const uint32_t> index_store() const { return {m_index.data(), m_count}; }
  int processors() const { return static_cast<int>(m_count); }
  // Processor p's local program: the image's bytes with its index word = index_store()[p]
  // (Error for p outside 0..processors()-1).
  std::vector<uint8_t> local_image(int p) const;
  Program local_program(int p) const;

 private:
  std::vector<uint8_t> m_image;
  std::string m_name;
  std::vector<uint32_t> m_index;
  size_t m_count = 0;
};

}  // namespace tessera::isa
