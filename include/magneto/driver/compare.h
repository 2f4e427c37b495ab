// Comparing a computed tensor with an expected one, as `magnetoc check` does.
//
// An element passes when |got - expected| <= atol + rtol * |expected|. NaN equals NaN; an
// infinity equals only the same infinity. Integer and bool tensors must match exactly. The
// relative error is reported over elements whose |expected| > atol (elsewhere it means nothing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "magneto/ir/tensor.h"

namespace magneto {
namespace driver {

struct Comparison {
  bool ok = true;
  std::string problem;    // dtype or shape mismatch (then no error numbers)
  double maxAbsErr = 0;
  double maxRelErr = 0;
  int64_t mismatches = 0;
  int64_t firstBad = -1;  // index of the first element out of tolerance
  double firstGot = 0, firstExpected = 0;
};

Comparison compareTensors(const Tensor& got, const Tensor& expected, double rtol, double atol);

// Rows matched out of order (`check --unordered-rows`): the tensors of one group share axis 0,
// and row r of the group is the tuple of their slices r. A detector's outputs (boxes, scores,
// labels) are sorted by score, and detections whose scores differ in the 7th digit swap places
// under any float reordering, PyTorch's own included; compared as a multiset of rows they match.
// Returns perm with got row perm[r] paired with expected row r: each expected row takes the same
// got row when that one is within tolerance on every tensor of the group, else the first unused
// got row that is; rows left unpaired keep the remaining got rows in order (so that the element
// comparison after reordering reports them). *moved counts the rows paired out of place. Empty
// when the group's tensors disagree on their row count (the element comparison reports that).
std::vector<int64_t> matchRows(const std::vector<const Tensor*>& got,
                               const std::vector<const Tensor*>& expected,
                               const std::vector<double>& rtol, const std::vector<double>& atol,
                               int64_t* moved);
// `t` with its rows (axis 0) in the order perm gives: row r of the result is row perm[r] of t.
Tensor permuteRows(const Tensor& t, const std::vector<int64_t>& perm);

// Element i of a float tensor of any float type (f16 and bf16 included), as double.
double floatElement(const Tensor& t, int64_t i);

}  // namespace driver
}  // namespace magneto
