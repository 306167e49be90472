#include "engine/pull_progress.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace cosmicac::engine {
namespace {
std::string json_str(nlohmann::json const& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string{};
}
}  // namespace

std::string ProgressAggregator::feed(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return {};
  if (j.contains("errorDetail") || j.contains("error")) {
    std::string msg = json_str(j, "error");
    if (j.contains("errorDetail")) {
      std::string detail = json_str(j["errorDetail"], "message");
      if (!detail.empty()) msg = detail;
    }
    return msg.empty() ? std::string("pull failed (error without a message)") : msg;
  }
  std::string const status = json_str(j, "status");
  std::string const id = json_str(j, "id");
  // Layer lines have an id and a layer status; overall lines ("Pulling from …",
  // "Digest: …", "Status: …") have none or the tag as id.
  bool const layer_status = status == "Pulling fs layer" || status == "Waiting" || status == "Downloading" ||
                            status == "Verifying Checksum" || status == "Download complete" || status == "Extracting" ||
                            status == "Pull complete" || status == "Already exists";
  if (!id.empty() && layer_status) {
    Layer& l = layers_[id];
    bool const downloading = status == "Downloading", extracting = status == "Extracting";
    if ((downloading || extracting) && j.contains("progressDetail") && j["progressDetail"].is_object()) {
      auto const& pd = j["progressDetail"];
      std::uint64_t& current = downloading ? l.downloaded : l.extracted;
      if (pd.contains("current") && pd["current"].is_number_unsigned()) current = pd["current"].get<std::uint64_t>();
      // Extraction reads the same compressed blob: its total only fills a gap.
      if (pd.contains("total") && pd["total"].is_number_unsigned() && (downloading || l.total == 0))
        l.total = pd["total"].get<std::uint64_t>();
    }
    if (status == "Verifying Checksum" || status == "Download complete" || extracting || status == "Pull complete" ||
        status == "Already exists") {
      l.download_done = true;
      if (l.total > 0) l.downloaded = l.total;
    }
    if (status == "Pull complete" || status == "Already exists") {
      l.done = true;
      if (l.total > 0) l.extracted = l.total;
    }
  } else if (!status.empty()) {
    status_ = status;
  }
  return {};
}

PullProgress ProgressAggregator::snapshot() const {
  PullProgress p;
  std::uint64_t downloaded = 0, extracted = 0;
  bool any_downloading = layers_.empty();
  for (auto const& [id, l] : layers_) {
    // A size not announced yet (total 0) does not cap what was counted.
    downloaded += l.total > 0 ? std::min(l.downloaded, l.total) : l.downloaded;
    extracted += l.total > 0 ? std::min(l.extracted, l.total) : l.extracted;
    p.bytes_total += l.total;
    ++p.layers;
    if (l.done) ++p.layers_done;
    if (!l.download_done) any_downloading = true;
  }
  p.activity = any_downloading ? PullActivity::Downloading : PullActivity::Extracting;
  p.bytes_done = any_downloading ? downloaded : extracted;
  p.status = status_;
  return p;
}

}  // namespace cosmicac::engine
