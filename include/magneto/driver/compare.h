// Comparing a computed tensor with an expected one, as `magnetoc check` does.
//
// An element passes when |got - expected| <= atol + rtol * |expected|. NaN equals NaN; an
// infinity equals only the same infinity. Integer and bool tensors must match exactly. The
// relative error is reported over elements whose |expected| > atol (elsewhere it means nothing).
#pragma once

#include <cstdint>
#include <string>

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

// Element i of a float tensor of any float type (f16 and bf16 included), as double.
double floatElement(const Tensor& t, int64_t i);

}  // namespace driver
}  // namespace magneto
