#include "isa/shared_image.h"

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::isa {

void SharedImage::set_image(std::vector<uint8_t> image, const std::string& name) {
  if (!looks_like_image(image) || image.size() < kImageHeaderBytes)
    throw Error(name, "not a tessera program image (bad magic or truncated header)");
  m_image = std::move(image);
  m_name = name;
}

void SharedImage::load(int processors) {
  if (processors < 1)
    throw Error(m_name, fmt::format("cannot load onto {} processors", processors));
  m_count = static_cast<size_t>(processors);
  if (m_index.size() < m_count) m_index.resize(m_count);
  for (size_t p = 0; p < m_count; ++p) m_index[p] = static_cast<uint32_t>(p);
}

std::vector<uint8_t> SharedImage::local_image(int p) const {
  if (p < 0 || static_cast<size_t>(p) >= m_count)
    throw Error(m_name, fmt::format("processor {} is not loaded (0..{})", p,
                                    static_cast<int64_t>(m_count) - 1));
  std::vector<uint8_t> out = m_image;
  patch_index(out, m_index[static_cast<size_t>(p)], m_name);
  return out;
}

Program SharedImage::local_program(int p) const {
  return read_image(local_image(p), m_name);
}

}  // namespace tessera::isa
