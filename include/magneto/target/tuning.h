// Measured co-tuning (magnetoc tune, compile --tuning): the tile candidates of each GPU launch and
// the record that keeps what a GPU measured.
//
// The cost model ranks tiles; a GPU decides. `tune` compiles the model once per candidate rank
// ("variant" k: every launch takes its k-th candidate), times every launch of every variant on the
// device (NAME_profile_launches: device events between launches), and keeps, per launch, the
// fastest variant's tiles. A launch is named by its members' ONNX node names, which do not depend
// on tiles, so a record made for one compile of a model applies to the next one. `compile
// --tuning RECORD.json` uses a record's tiles where its members match and the tiles are still
// candidates on the device profile; everything else falls back to the cost model.
//
// Record (JSON): {"magneto_tuning": 1, "model": "...", "target": "cuda", "arch": "sm_90",
//   "device": "h200", "emulated": false, "variants": K, "runs": R,
//   "launches": [{"members": ["node", ...], "tiles": [[M, N, K, items, warps], ...],
//                 "chosen": k, "cost_model_us": x, "measured_us": [per variant]}]}
#pragma once

#include <map>
#include <string>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"
#include "magneto/target/cost_model.h"

namespace magneto {

// Up to `k` distinct tile assignments for one launch's members, best modeled first: for a joint
// launch the co-tuned tiles, then the independently tuned ones, then each member's next-best
// tiles; for a single member its best candidates. Empty when the members have no tiles (views).
std::vector<std::vector<TileConfig>> launchTileCandidates(const std::vector<const Node*>& members,
                                                          const DeviceProfile& p, int k);

// The key of a launch in a record: its members' names, one per line.
std::string launchKey(const std::vector<const Node*>& members);

struct TuningRecordEntry {
  std::vector<std::string> members;
  std::vector<TileConfig> tiles;  // per member
  int chosen = 0;
  double costModelUs = 0;
  std::vector<double> measuredUs;  // per variant (negative: not measured)
};

struct TuningRecord {
  std::string model, target, arch, device;
  bool emulated = false;
  int variants = 0, runs = 0;
  std::vector<TuningRecordEntry> launches;
};

// How the GPU emitter picks tiles: variant >= 0 forces every launch's candidate of that rank
// (tune's builds); otherwise a record entry whose key matches, else the cost model.
struct TuningChoice {
  int variant = -1;
  int candidates = 4;  // k of launchTileCandidates
  std::map<std::string, std::vector<TileConfig>> byKey;
};

Status saveTuningRecord(const TuningRecord& r, const std::string& path);
Expected<TuningRecord> loadTuningRecord(const std::string& path);
// The record's entries as the emitter's choice.
TuningChoice tuningChoiceFrom(const TuningRecord& r);

}  // namespace magneto
