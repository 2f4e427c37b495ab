// Tensor comparison for `magnetoc check` (see include/magneto/driver/compare.h).
#include "magneto/driver/compare.h"

#include <cmath>
#include <cstring>

namespace magneto {
namespace driver {

namespace {

double halfToDouble(uint16_t h) {
  int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return sign * std::ldexp(man, -24);
  if (exp == 0x1f) return man ? NAN : sign * INFINITY;
  return sign * std::ldexp(man + 1024, exp - 25);
}

double bf16ToDouble(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

double floatElement(const Tensor& t, int64_t i) {
  const uint8_t* p = t.bytes();
  uint16_t h;
  switch (t.dtype()) {
    case DType::kF16:
      std::memcpy(&h, p + 2 * i, 2);
      return halfToDouble(h);
    case DType::kBF16:
      std::memcpy(&h, p + 2 * i, 2);
      return bf16ToDouble(h);
    default:
      return t.floatAt(i);
  }
}

namespace {

// The element rule (compare.h): NaN equals NaN, an infinity only the same infinity, else
// |g - e| <= atol + rtol * |e|.
bool floatsMatch(double g, double e, double rtol, double atol) {
  if (std::isnan(e) || std::isnan(g)) return std::isnan(e) == std::isnan(g);
  if (std::isinf(e) || std::isinf(g)) return g == e;
  return std::fabs(g - e) <= atol + rtol * std::fabs(e);
}

}  // namespace

Comparison compareTensors(const Tensor& got, const Tensor& expectedIn, double rtol, double atol) {
  Comparison c;
  // ONNX's test data stores bfloat16 tensors as uint16 (numpy has no bfloat16): same bits.
  Tensor expected = expectedIn;
  if (got.dtype() == DType::kBF16 && expectedIn.dtype() == DType::kU16 && expectedIn.hasData())
    expected = Tensor(TensorType{DType::kBF16, expectedIn.dims()},
                      std::vector<uint8_t>(expectedIn.bytes(), expectedIn.bytes() + expectedIn.byteSize()));
  if (got.dtype() != expected.dtype()) {
    c.ok = false;
    c.problem = fmt::format("element type {} but expected {}", dtypeName(got.dtype()),
                            dtypeName(expected.dtype()));
    return c;
  }
  if (got.dims() != expected.dims()) {
    c.ok = false;
    c.problem = fmt::format("shape [{}] but expected [{}]", dimsStr(got.dims()),
                            dimsStr(expected.dims()));
    return c;
  }
  if (!got.hasData() || !expected.hasData() || got.byteSize() != expected.byteSize()) {
    c.ok = false;
    c.problem = "missing or truncated data";
    return c;
  }
  int64_t n = expected.numel();
  bool exact = !isFloat(expected.dtype());
  for (int64_t i = 0; i < n; ++i) {
    double g, e;
    bool bad;
    if (exact) {
      int64_t gi = got.intAt(i), ei = expected.intAt(i);
      g = static_cast<double>(gi);
      e = static_cast<double>(ei);
      bad = gi != ei;
      double d = std::fabs(g - e);
      c.maxAbsErr = std::max(c.maxAbsErr, d);
      if (std::fabs(e) > atol) c.maxRelErr = std::max(c.maxRelErr, d / std::fabs(e));
    } else {
      g = floatElement(got, i);
      e = floatElement(expected, i);
      bad = !floatsMatch(g, e, rtol, atol);
      if (std::isnan(e) || std::isnan(g) || std::isinf(e) || std::isinf(g)) {
        if (bad) c.maxAbsErr = c.maxRelErr = INFINITY;
      } else {
        double d = std::fabs(g - e);
        c.maxAbsErr = std::max(c.maxAbsErr, d);
        if (std::fabs(e) > atol) c.maxRelErr = std::max(c.maxRelErr, d / std::fabs(e));
      }
    }
    if (bad) {
      if (c.firstBad < 0) {
        c.firstBad = i;
        c.firstGot = g;
        c.firstExpected = e;
      }
      ++c.mismatches;
      c.ok = false;
    }
  }
  return c;
}

namespace {

// Whether row gr of got is within tolerance of row er of expected (element rule of
// compareTensors).
bool rowMatches(const Tensor& got, int64_t gr, const Tensor& expected, int64_t er, double rtol,
                double atol) {
  const int64_t width = expected.dims().empty() ? 1 : expected.numel() / expected.dims()[0];
  const bool exact = !isFloat(expected.dtype());
  for (int64_t j = 0; j < width; ++j) {
    const int64_t gi = gr * width + j, ei = er * width + j;
    if (exact) {
      if (got.intAt(gi) != expected.intAt(ei)) return false;
      continue;
    }
    if (!floatsMatch(floatElement(got, gi), floatElement(expected, ei), rtol, atol)) return false;
  }
  return true;
}

}  // namespace

std::vector<int64_t> matchRows(const std::vector<const Tensor*>& got,
                               const std::vector<const Tensor*>& expected,
                               const std::vector<double>& rtol, const std::vector<double>& atol,
                               int64_t* moved) {
  *moved = 0;
  if (got.empty() || got.size() != expected.size()) return {};
  int64_t rows = -1;
  for (size_t k = 0; k < got.size(); ++k) {
    const Tensor &g = *got[k], &e = *expected[k];
    if (g.dims().empty() || g.dims() != e.dims() || g.dtype() != e.dtype() || !g.hasData() ||
        !e.hasData())
      return {};
    if (rows >= 0 && g.dims()[0] != rows) return {};
    rows = g.dims()[0];
  }
  auto all = [&](int64_t gr, int64_t er) {
    for (size_t k = 0; k < got.size(); ++k)
      if (!rowMatches(*got[k], gr, *expected[k], er, rtol[k], atol[k])) return false;
    return true;
  };
  std::vector<int64_t> perm(rows, -1);
  std::vector<bool> used(rows, false);
  for (int64_t r = 0; r < rows; ++r)
    if (all(r, r)) {
      perm[r] = r;
      used[r] = true;
    }
  for (int64_t r = 0; r < rows; ++r) {
    if (perm[r] >= 0) continue;
    for (int64_t q = 0; q < rows; ++q)
      if (!used[q] && all(q, r)) {
        perm[r] = q;
        used[q] = true;
        ++*moved;
        break;
      }
  }
  int64_t next = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (perm[r] >= 0) continue;
    while (used[next]) ++next;
    perm[r] = next;
    used[next] = true;
  }
  return perm;
}

Tensor permuteRows(const Tensor& t, const std::vector<int64_t>& perm) {
  const size_t rowBytes = t.dims().empty() || t.dims()[0] == 0 ? 0 : t.byteSize() / t.dims()[0];
  std::vector<uint8_t> bytes(t.byteSize());
  for (size_t r = 0; r < perm.size(); ++r)
    std::memcpy(bytes.data() + r * rowBytes, t.bytes() + perm[r] * rowBytes, rowBytes);
  return Tensor(t.type(), std::move(bytes));
}

}  // namespace driver
}  // namespace magneto
