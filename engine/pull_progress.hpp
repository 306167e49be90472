// The progress of an image pull, aggregated from dockerd's pull stream
// (POST /images/create: one JSON object per line, per layer).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace cosmicac::engine {

// dockerd downloads the layers, then extracts each (in parallel with later
// downloads). While any layer is still downloading the bytes are downloaded
// bytes; after that, extracted bytes (of the same compressed sizes): so a
// large image does not sit at 100 % while it is unpacked.
enum class PullActivity { Downloading, Extracting };

struct PullProgress {
  std::uint64_t bytes_done = 0;   // downloaded or extracted, per `activity`
  std::uint64_t bytes_total = 0;  // sum of the layer sizes known so far
  PullActivity activity = PullActivity::Downloading;
  int layers = 0;
  int layers_done = 0;
  std::string status;  // the last overall status line
};

// Aggregates a pull stream's per-layer progress lines.
class ProgressAggregator {
 public:
  // One JSON line; returns the error text when the line carries error/errorDetail.
  std::string feed(std::string_view line);
  PullProgress snapshot() const;

 private:
  struct Layer {
    std::uint64_t downloaded = 0, extracted = 0, total = 0;
    bool download_done = false;  // "Verifying Checksum", "Download complete", or later
    bool done = false;           // "Pull complete", "Already exists"
  };
  std::map<std::string, Layer> layers_;
  std::string status_;
};

}  // namespace cosmicac::engine
