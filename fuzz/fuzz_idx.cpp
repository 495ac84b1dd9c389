// libFuzzer target: arbitrary bytes as an IDX file, plain and gzip-compressed (runtime/idx.h),
// and an image file that reads as a dataset checked against the mlp model's input.
// Properties: read_idx, load_idx_dataset and check_fits_model end normally or with a
// tessera::Error (fuzz_support.h); an array read has as many data bytes as its dimensions say.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "graph/model.h"
#include "runtime/dataset.h"
#include "runtime/idx.h"

namespace {

using namespace tessera;

void read(const std::string& path) {
  runtime::IdxArray a;
  if (!fuzz::survives([&] { a = runtime::read_idx(path); })) return;
  int64_t count = 1;
  for (const int64_t d : a.dims) count *= d;
  fuzz::check(count == static_cast<int64_t>(a.data.size()));
  if (a.dims.size() != 3) return;
  // Labels that match the image count, so the pair reaches the dataset checks.
  const std::string labels = fuzz::scratch_file("labels");
  runtime::write_idx(labels, {a.dims[0]}, std::vector<uint8_t>(static_cast<size_t>(a.dims[0]), 0),
                     false);
  fuzz::survives([&] {
    const runtime::Dataset d = runtime::load_idx_dataset(path, labels, 10);
    runtime::check_fits_model(d, graph::zoo_spec("mlp"));
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string plain = fuzz::scratch_file("plain");
  fuzz::write_scratch(plain, fuzz::as_text(data, size));
  read(plain);
  const std::string gz = fuzz::scratch_file("gz");
  gzFile f = gzopen(gz.c_str(), "wb");
  fuzz::check(f != nullptr);
  if (size > 0)
    fuzz::check(gzwrite(f, data, static_cast<unsigned>(size)) == static_cast<int>(size));
  fuzz::check(gzclose(f) == Z_OK);
  read(gz);
  return 0;
}
