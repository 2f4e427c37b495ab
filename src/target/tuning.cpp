// Tile candidates per launch and tuning records (see include/magneto/target/tuning.h).
#include "magneto/target/tuning.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace magneto {

namespace {

// A node's candidates, best modeled first (stable: ties keep the candidate order).
std::vector<TileConfig> rankedTiles(const Node& n, const DeviceProfile& p) {
  std::vector<std::pair<double, TileConfig>> scored;
  for (const TileConfig& t : tileCandidates(n, p)) {
    KernelEstimate e = estimateKernel(n, p, t);
    if (e.valid) scored.push_back({e.latencyUs, t});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<TileConfig> out;
  for (auto& s : scored) out.push_back(s.second);
  return out;
}

void addUnique(std::vector<std::vector<TileConfig>>& out, const std::vector<TileConfig>& c) {
  if (c.empty()) return;
  for (const auto& o : out)
    if (o == c) return;
  out.push_back(c);
}

nlohmann::json tileJson(const TileConfig& t) {
  return nlohmann::json::array({t.tileM, t.tileN, t.tileK, t.itemsPerThread, t.warps});
}

}  // namespace

std::vector<std::vector<TileConfig>> launchTileCandidates(const std::vector<const Node*>& members,
                                                          const DeviceProfile& p, int k) {
  std::vector<std::vector<TileConfig>> out;
  if (members.empty() || k < 1) return out;
  std::vector<std::vector<TileConfig>> ranked;
  for (const Node* n : members) {
    ranked.push_back(rankedTiles(*n, p));
    if (ranked.back().empty()) return out;  // a member without tiles: nothing to tune
  }
  if (members.size() > 1) {
    JointEstimate j = coTune(members, p);
    if (j.valid) {
      addUnique(out, j.tiles);
      addUnique(out, j.independentTiles);
    }
  }
  // Then rank r for every member (a member with fewer candidates keeps its last), while the
  // joint launch still fits the device.
  size_t most = 0;
  for (const auto& r : ranked) most = std::max(most, r.size());
  for (size_t r = 0; r < most && static_cast<int>(out.size()) < k; ++r) {
    std::vector<TileConfig> c;
    for (const auto& m : ranked) c.push_back(m[std::min(r, m.size() - 1)]);
    if (members.size() > 1 && !estimateJoint(members, p, c).valid) continue;
    addUnique(out, c);
  }
  if (static_cast<int>(out.size()) > k) out.resize(static_cast<size_t>(k));
  return out;
}

std::string launchKey(const std::vector<const Node*>& members) {
  std::string key;
  for (const Node* n : members) key += (key.empty() ? "" : "\n") + n->name();
  return key;
}

Status saveTuningRecord(const TuningRecord& r, const std::string& path) {
  nlohmann::json j;
  j["magneto_tuning"] = 1;
  j["model"] = r.model;
  j["target"] = r.target;
  j["arch"] = r.arch;
  j["device"] = r.device;
  j["emulated"] = r.emulated;
  j["variants"] = r.variants;
  j["runs"] = r.runs;
  j["launches"] = nlohmann::json::array();
  for (const TuningRecordEntry& e : r.launches) {
    nlohmann::json l;
    l["members"] = e.members;
    l["tiles"] = nlohmann::json::array();
    for (const TileConfig& t : e.tiles) l["tiles"].push_back(tileJson(t));
    l["chosen"] = e.chosen;
    l["cost_model_us"] = e.costModelUs;
    l["measured_us"] = e.measuredUs;
    j["launches"].push_back(l);
  }
  std::ofstream f(path);
  if (!f) return badInput("cannot write the tuning record {}", path);
  f << j.dump(1) << "\n";
  if (!f) return badInput("cannot write the tuning record {}", path);
  return Status::success();
}

Expected<TuningRecord> loadTuningRecord(const std::string& path) {
  std::ifstream f(path);
  if (!f) return badInput("--tuning {}: cannot open the file", path);
  std::stringstream ss;
  ss << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return badInput("--tuning {}: not JSON (a record written by magnetoc tune)", path);
  if (!j.contains("magneto_tuning") || j["magneto_tuning"] != 1)
    return badInput("--tuning {}: not a Magneto tuning record (no \"magneto_tuning\": 1)", path);
  TuningRecord r;
  try {
    r.model = j.value("model", "");
    r.target = j.value("target", "");
    r.arch = j.value("arch", "");
    r.device = j.value("device", "");
    r.emulated = j.value("emulated", false);
    r.variants = j.value("variants", 0);
    r.runs = j.value("runs", 0);
    int index = 0;
    for (const auto& l : j.at("launches")) {
      TuningRecordEntry e;
      e.members = l.at("members").get<std::vector<std::string>>();
      for (const auto& t : l.at("tiles")) {
        std::vector<int> v = t.get<std::vector<int>>();
        if (v.size() != 5)
          return badInput("--tuning {}: launch {}: a tile is [M, N, K, items, warps], got {} numbers",
                          path, index, v.size());
        TileConfig c;
        c.tileM = v[0], c.tileN = v[1], c.tileK = v[2], c.itemsPerThread = v[3], c.warps = v[4];
        e.tiles.push_back(c);
      }
      if (e.tiles.size() != e.members.size())
        return badInput("--tuning {}: launch {}: {} members but {} tiles", path, index,
                        e.members.size(), e.tiles.size());
      e.chosen = l.value("chosen", 0);
      e.costModelUs = l.value("cost_model_us", 0.0);
      if (l.contains("measured_us")) e.measuredUs = l["measured_us"].get<std::vector<double>>();
      r.launches.push_back(std::move(e));
      ++index;
    }
  } catch (const nlohmann::json::exception& ex) {
    return badInput("--tuning {}: malformed record: {}", path, ex.what());
  }
  return r;
}

TuningChoice tuningChoiceFrom(const TuningRecord& r) {
  TuningChoice c;
  for (const TuningRecordEntry& e : r.launches) {
    std::string key;
    for (const std::string& m : e.members) key += (key.empty() ? "" : "\n") + m;
    c.byKey[key] = e.tiles;
  }
  return c;
}

}  // namespace magneto
