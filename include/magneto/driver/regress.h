// `magnetoc regress DIR`: the model-zoo regression that users run in their CI.
//
// Every folder under DIR that holds a model.onnx and at least one test_data_set_* folder (the
// layout of ONNX's backend tests and of models/zoo) is one case. Each case runs as its own
// `magnetoc check` process (all of its data sets at once), so that a crash or a hang in one model
// is that model's failure, not the regression's, and `--jobs N` runs N cases at a time. Output:
// one line per case in folder order, then "N passed, M failed"; optionally JUnit XML.
//
// Tolerances: --rtol/--atol when given; else the case's meta.json "tolerance": {"rtol", "atol"}
// (written by models/export.py); else check's defaults.
#pragma once

#include <string>
#include <vector>

#include "magneto/ir/dim_expr.h"
#include "magneto/support/status.h"

namespace magneto {
namespace driver {

struct RegressOptions {
  std::string dir;
  std::string target = "cpu";
  std::string arch;
  bool emulate = false;
  std::vector<std::string> emulateOrders;  // passed to each check (--emulate-order)
  bool racecheck = false;                  // passed to each check (--racecheck)
  bool parallelOpt = true;
  // --dynamic / --opt, passed to each check (every case's model must have those dim_params).
  std::vector<DimSymbol> dynamic;
  std::string junitPath;  // "" = none
  int jobs = 1;
  int threads = 1;           // threads of each model run
  int timeoutSeconds = 1800;  // per case; 0 = none
  double rtol = -1, atol = -1;  // < 0: from meta.json, else check's defaults
  int verbosity = 1;
};

struct RegressCase {
  std::string name;    // the folder, relative to DIR
  std::string folder;  // absolute
  std::vector<std::string> dataSets;
};

// The cases under `dir`, sorted by folder; folders with a model.onnx but no data set are listed
// in `skipped`.
Expected<std::vector<RegressCase>> findRegressCases(const std::string& dir,
                                                   std::vector<std::string>* skipped);

// Runs the regression; returns true when every case passed (and there was at least one).
Expected<bool> regressModels(const RegressOptions& opts);

}  // namespace driver
}  // namespace magneto
