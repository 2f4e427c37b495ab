// Reference kernels of the reduction family: Reduce* (axes as attribute or operand 1), ArgMax /
// ArgMin, Softmax / LogSoftmax / Hardmax (opset-13 semantics plus the frontend's mg_coerce_2d for
// older models), CumSum and TopK.
//
// Reduce* kernels list, once, the input offsets of one reduced group and the base offset of every
// output element, then fold each group with a small reducer: plain loops, easy to check by eye.
// Float sums accumulate in double; integer sums wrap.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "k_elementwise_impl.h"
#include "k_tensor_util.h"

namespace mgrt {
namespace {

using ew::Compute;
using ew::convert;
using ew::dtypeLabel;
using ew::load;
using ew::store;
using ew::visitType;

// Types the reductions accept: every numeric type, 16-bit floats computing in float.
using ReduceTypes = ew::NumericTypes;
using SoftmaxTypes = ew::FloatTypes;

// Normalizes possibly negative axes; false (with ctx's message) on out-of-range or duplicates.
bool normalizeAxes(std::vector<int64_t>& axes, int rank, const char* op, Ctx& ctx) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) {
      ctx.fail("%s: axis %lld is out of range for rank %d", op, static_cast<long long>(a), rank);
      return false;
    }
    if (a < 0) a += rank;
    if (seen[a]) {
      ctx.fail("%s: axis %lld is repeated", op, static_cast<long long>(a));
      return false;
    }
    seen[a] = true;
  }
  return true;
}

using tensor_util::AxisSplit;
using tensor_util::splitAt;

// ---- Reduce* -------------------------------------------------------------------------------

// Reducers see one group's values through `at(j)` for j in [0, count) and return the result in
// the compute type C (double for float sums).
template <typename C>
using Acc = std::conditional_t<std::is_floating_point<C>::value, double, C>;

template <typename C>
C wrapAdd(C a, C b) {
  if constexpr (std::is_integral<C>::value) return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return a + b;
}
template <typename C>
C wrapMul(C a, C b) {
  if constexpr (std::is_integral<C>::value) return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return a * b;
}

struct SumR {
  static constexpr const char* kName = "ReduceSum";
  template <typename C, typename F>
  static C run(int64_t count, F at) {
    Acc<C> s = 0;
    for (int64_t j = 0; j < count; ++j) s = wrapAdd<Acc<C>>(s, at(j));
    return static_cast<C>(s);
  }
};
struct MeanR {
  static constexpr const char* kName = "ReduceMean";
  template <typename C, typename F>
  static C run(int64_t count, F at) {
    Acc<C> s = 0;
    for (int64_t j = 0; j < count; ++j) s = wrapAdd<Acc<C>>(s, at(j));
    if constexpr (std::is_signed<C>::value && std::is_integral<C>::value)
      return count ? static_cast<C>(static_cast<int64_t>(s) / count) : C(0);
    else if constexpr (std::is_integral<C>::value)
      return count ? static_cast<C>(static_cast<uint64_t>(s) / static_cast<uint64_t>(count)) : C(0);
    else return static_cast<C>(s / static_cast<double>(count));  // empty: NaN, as numpy
  }
};
struct ProdR {
  static constexpr const char* kName = "ReduceProd";
  template <typename C, typename F>
  static C run(int64_t count, F at) {
    Acc<C> s = 1;
    for (int64_t j = 0; j < count; ++j) s = wrapMul<Acc<C>>(s, at(j));
    return static_cast<C>(s);
  }
};
// Max/Min of an empty group are the identity (lowest / highest value), as ONNX 18 specifies.
struct MaxR {
  static constexpr const char* kName = "ReduceMax";
  template <typename C, typename F>
  static C run(int64_t count, F at) {
    C m = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                               : std::numeric_limits<C>::lowest();
    for (int64_t j = 0; j < count; ++j) {
      C v = at(j);
      if constexpr (std::is_floating_point<C>::value)
        if (std::isnan(v)) return v;
      if (v > m) m = v;
    }
    return m;
  }
};
struct MinR {
  static constexpr const char* kName = "ReduceMin";
  template <typename C, typename F>
  static C run(int64_t count, F at) {
    C m = std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity()
                                               : std::numeric_limits<C>::max();
    for (int64_t j = 0; j < count; ++j) {
      C v = at(j);
      if constexpr (std::is_floating_point<C>::value)
        if (std::isnan(v)) return v;
      if (v < m) m = v;
    }
    return m;
  }
};
struct L1R {
  static constexpr const char* kName = "ReduceL1";
  template <typename C, typename F>
  static C run(int64_t count, F at) {
    Acc<C> s = 0;
    for (int64_t j = 0; j < count; ++j) {
      C v = at(j);
      if constexpr (std::is_signed<C>::value && std::is_integral<C>::value)
        v = v < C(0) ? static_cast<C>(uint64_t{0} - static_cast<uint64_t>(v)) : v;
      else if constexpr (std::is_floating_point<C>::value)
        v = std::fabs(v);
      s = wrapAdd<Acc<C>>(s, v);
    }
    return static_cast<C>(s);
  }
};
struct SumSquareR {
  static constexpr const char* kName = "ReduceSumSquare";
  template <typename C, typename F>
  static C run(int64_t count, F at) {
    Acc<C> s = 0;
    for (int64_t j = 0; j < count; ++j) {
      Acc<C> v = at(j);
      s = wrapAdd<Acc<C>>(s, wrapMul<Acc<C>>(v, v));
    }
    return static_cast<C>(s);
  }
};
// L2, LogSum and LogSumExp compute in double whatever the type, then convert back.
struct L2R {
  static constexpr const char* kName = "ReduceL2";
  template <typename C, typename F>
  static C run(int64_t count, F at) {
    double s = 0;
    for (int64_t j = 0; j < count; ++j) {
      double v = static_cast<double>(at(j));
      s += v * v;
    }
    return convert<C>(std::sqrt(s));
  }
};
struct LogSumR {
  static constexpr const char* kName = "ReduceLogSum";
  template <typename C, typename F>
  static C run(int64_t count, F at) {
    double s = 0;
    for (int64_t j = 0; j < count; ++j) s += static_cast<double>(at(j));
    return convert<C>(std::log(s));
  }
};
struct LogSumExpR {
  static constexpr const char* kName = "ReduceLogSumExp";
  template <typename C, typename F>
  static C run(int64_t count, F at) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < count; ++j) m = std::max(m, static_cast<double>(at(j)));
    if (std::isinf(m)) return convert<C>(m);  // empty group or only -inf / +inf present
    double s = 0;
    for (int64_t j = 0; j < count; ++j) s += std::exp(static_cast<double>(at(j)) - m);
    return convert<C>(std::log(s) + m);
  }
};

// The types each reducer accepts: every numeric type; ReduceMax/ReduceMin also bool (opset 20:
// max is "any", min is "all", which the generic comparison computes with false < true).
template <typename R>
struct ReduceTypesOf {
  using type = ReduceTypes;
};
template <>
struct ReduceTypesOf<MaxR> {
  using type = ew::AllTypes;
};
template <>
struct ReduceTypesOf<MinR> {
  using type = ew::AllTypes;
};

// The axes to reduce: operand 1 when present, else the `axes` attribute. Empty means all axes,
// unless noop_with_empty_axes (then the op is the identity).
template <typename R>
int reduceKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = ew::needInputs(in, nin, 1, R::kName, ctx)) return rc;
  if (int rc = ew::needOutputs(nout, 1, R::kName, ctx)) return rc;
  const Tensor& x = in[0];
  if (out[0].dtype != x.dtype) return ctx.fail("%s: result type differs from the operand's", R::kName);
  std::vector<int64_t> axes;
  if (nin > 1 && in[1].present()) {
    if (!ew::isIntegerDType(in[1].dtype))
      return ctx.fail("%s: axes operand has type %s, expected an integer type", R::kName, dtypeLabel(in[1].dtype));
    axes = ew::readInts(in[1]);
  } else {
    axes = a.ints("axes");
  }
  if (!normalizeAxes(axes, x.rank, R::kName, ctx)) return 1;
  bool reduced[kMaxRank] = {false};
  if (axes.empty()) {
    if (a.i("noop_with_empty_axes", 0) == 0)
      for (int d = 0; d < x.rank; ++d) reduced[d] = true;
  }
  for (int64_t ax : axes) reduced[ax] = true;

  // Offsets of one group (the reduced dims) and the base offset of each output element (the
  // kept dims), both in row-major order.
  int64_t strides[kMaxRank];
  stridesOf(x, strides);
  std::vector<int64_t> groupOffs{0}, baseOffs{0};
  for (int d = 0; d < x.rank; ++d) {
    std::vector<int64_t>& v = reduced[d] ? groupOffs : baseOffs;
    std::vector<int64_t> next;
    next.reserve(v.size() * static_cast<size_t>(x.dims[d]));
    for (int64_t o : v)
      for (int64_t i = 0; i < x.dims[d]; ++i) next.push_back(o + i * strides[d]);
    v.swap(next);
  }
  if (static_cast<int64_t>(baseOffs.size()) != out[0].numel())
    return ctx.fail("%s: result has %lld elements, expected %lld", R::kName,
                    static_cast<long long>(out[0].numel()), static_cast<long long>(baseOffs.size()));
  return visitType(typename ReduceTypesOf<R>::type{}, x.dtype, ctx, R::kName, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    const T* xs = x.as<T>();
    T* y = out[0].as<T>();
    int64_t count = static_cast<int64_t>(groupOffs.size());
    for (size_t o = 0; o < baseOffs.size(); ++o) {
      const T* base = xs + baseOffs[o];
      y[o] = store<T>(R::template run<C>(count, [&](int64_t j) { return load(base[groupOffs[j]]); }));
    }
    return 0;
  });
}

// ---- ArgMax / ArgMin -----------------------------------------------------------------------

template <bool kMax>
int argKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* name = kMax ? "ArgMax" : "ArgMin";
  if (int rc = ew::needInputs(in, nin, 1, name, ctx)) return rc;
  if (int rc = ew::needOutputs(nout, 1, name, ctx)) return rc;
  if (out[0].dtype != kI64) return ctx.fail("%s: result must be i64", name);
  const Tensor& x = in[0];
  std::vector<int64_t> axis{a.i("axis", 0)};
  if (!normalizeAxes(axis, std::max(x.rank, 1), name, ctx)) return 1;
  AxisSplit s = splitAt(x, static_cast<int>(axis[0]));
  if (out[0].numel() != s.outer * s.inner) return ctx.fail("%s: result has the wrong size", name);
  if (s.n == 0 && s.outer * s.inner > 0) return ctx.fail("%s: the reduced axis is empty", name);
  bool last = a.i("select_last_index", 0) != 0;
  return visitType(ReduceTypes{}, x.dtype, ctx, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xs = x.as<T>();
    int64_t* y = out[0].as<int64_t>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        const T* p = xs + o * s.n * s.inner + i;
        int64_t best = 0;
        auto bv = load(p[0]);
        for (int64_t j = 1; j < s.n; ++j) {
          auto v = load(p[j * s.inner]);
          bool better = kMax ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv);
          if (better) {
            best = j;
            bv = v;
          }
        }
        y[o * s.inner + i] = best;
      }
    return 0;
  });
}

// ---- Softmax / LogSoftmax / Hardmax --------------------------------------------------------

enum class SoftKind { kSoftmax, kLogSoftmax, kHardmax };

template <SoftKind K>
int softmaxKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* name = K == SoftKind::kSoftmax ? "Softmax" : K == SoftKind::kLogSoftmax ? "LogSoftmax" : "Hardmax";
  if (int rc = ew::needInputs(in, nin, 1, name, ctx)) return rc;
  if (int rc = ew::needOutputs(nout, 1, name, ctx)) return rc;
  const Tensor& x = in[0];
  if (out[0].dtype != x.dtype || out[0].numel() != x.numel())
    return ctx.fail("%s: result does not match the operand", name);
  if (x.rank == 0) return ctx.fail("%s: operand must have rank 1 or more", name);
  std::vector<int64_t> axis{a.i("axis", -1)};
  if (!normalizeAxes(axis, x.rank, name, ctx)) return 1;
  AxisSplit s = splitAt(x, static_cast<int>(axis[0]));
  if (a.i("mg_coerce_2d", 0) != 0) {  // opset < 13: [prod(dims[:axis]), prod(dims[axis:])]
    s.n *= s.inner;
    s.inner = 1;
  }
  return visitType(SoftmaxTypes{}, x.dtype, ctx, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    const T* xs = x.as<T>();
    T* y = out[0].as<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t base = o * s.n * s.inner + i;
        auto at = [&](int64_t j) { return load(xs[base + j * s.inner]); };
        auto put = [&](int64_t j, C v) { y[base + j * s.inner] = store<T>(v); };
        if (s.n == 0) continue;
        int64_t arg = 0;
        C m = at(0);
        for (int64_t j = 1; j < s.n; ++j)
          if (at(j) > m) {
            m = at(j);
            arg = j;
          }
        if (K == SoftKind::kHardmax) {
          for (int64_t j = 0; j < s.n; ++j) put(j, j == arg ? C(1) : C(0));
          continue;
        }
        C sum = 0;
        for (int64_t j = 0; j < s.n; ++j) sum += std::exp(at(j) - m);
        if (K == SoftKind::kSoftmax) {
          for (int64_t j = 0; j < s.n; ++j) put(j, std::exp(at(j) - m) / sum);
        } else {
          C ls = std::log(sum);
          for (int64_t j = 0; j < s.n; ++j) put(j, at(j) - m - ls);
        }
      }
    return 0;
  });
}

// ---- CumSum(x, axis) -----------------------------------------------------------------------

int cumSumKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = ew::needInputs(in, nin, 2, "CumSum", ctx)) return rc;
  if (int rc = ew::needOutputs(nout, 1, "CumSum", ctx)) return rc;
  const Tensor& x = in[0];
  if (out[0].dtype != x.dtype || out[0].numel() != x.numel())
    return ctx.fail("CumSum: result does not match the operand");
  if (!ew::isIntegerDType(in[1].dtype) || in[1].numel() != 1)
    return ctx.fail("CumSum: axis must be one integer");
  std::vector<int64_t> axis = ew::readInts(in[1]);
  if (x.rank == 0) return ctx.fail("CumSum: operand must have rank 1 or more");
  if (!normalizeAxes(axis, x.rank, "CumSum", ctx)) return 1;
  AxisSplit s = splitAt(x, static_cast<int>(axis[0]));
  bool exclusive = a.i("exclusive", 0) != 0, reverse = a.i("reverse", 0) != 0;
  return visitType(ReduceTypes{}, x.dtype, ctx, "CumSum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    const T* xs = x.as<T>();
    T* y = out[0].as<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t base = o * s.n * s.inner + i;
        C acc = 0;
        for (int64_t k = 0; k < s.n; ++k) {
          int64_t j = reverse ? s.n - 1 - k : k;
          C v = load(xs[base + j * s.inner]);
          if (exclusive) {
            y[base + j * s.inner] = store<T>(acc);
            acc = wrapAdd(acc, v);
          } else {
            acc = wrapAdd(acc, v);
            y[base + j * s.inner] = store<T>(acc);
          }
        }
      }
    return 0;
  });
}

// ---- TopK(x, K) -> values, indices ----------------------------------------------------------

// A strict total order: NaN above every number (numpy's sort order), ties by index. `largest`
// reverses the value order but never the index tie-break, so equal values keep smaller indices
// first. A total order also keeps std::sort away from undefined behaviour on NaN.
template <typename C>
bool valueLess(C a, C b) {
  if constexpr (std::is_floating_point<C>::value) {
    bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return !na && nb;
  }
  return a < b;
}

int topKKernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (int rc = ew::needInputs(in, nin, 2, "TopK", ctx)) return rc;
  if (int rc = ew::needOutputs(nout, 2, "TopK", ctx)) return rc;
  const Tensor& x = in[0];
  if (!ew::isIntegerDType(in[1].dtype) || in[1].numel() != 1)
    return ctx.fail("TopK: K must be one integer");
  int64_t k = ew::readInts(in[1])[0];
  if (x.rank == 0) return ctx.fail("TopK: operand must have rank 1 or more");
  std::vector<int64_t> axis{a.i("axis", -1)};
  if (!normalizeAxes(axis, x.rank, "TopK", ctx)) return 1;
  AxisSplit s = splitAt(x, static_cast<int>(axis[0]));
  if (k < 0 || k > s.n)
    return ctx.fail("TopK: K = %lld, expected 0..%lld", static_cast<long long>(k), static_cast<long long>(s.n));
  // A run-time K (a data-dependent extent): the results arrive at their capacity along axis.
  if (ctx.dataExtents &&
      (!ctx.setDataExtent(out[0], static_cast<int>(axis[0]), k) ||
       !ctx.setDataExtent(out[1], static_cast<int>(axis[0]), k)))
    return ctx.fail("TopK: K = %lld passes the results' capacity along axis %lld",
                    static_cast<long long>(k), static_cast<long long>(axis[0]));
  if (out[0].dtype != x.dtype || out[1].dtype != kI64 || out[0].numel() != s.outer * k * s.inner ||
      out[1].numel() != s.outer * k * s.inner)
    return ctx.fail("TopK: results do not match the operand and K");
  bool largest = a.i("largest", 1) != 0;
  return visitType(ReduceTypes{}, x.dtype, ctx, "TopK", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    const T* xs = x.as<T>();
    T* vals = out[0].as<T>();
    int64_t* idx = out[1].as<int64_t>();
    std::vector<int64_t> order(static_cast<size_t>(s.n));
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t base = o * s.n * s.inner + i;
        auto at = [&](int64_t j) -> C { return load(xs[base + j * s.inner]); };
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
          C vp = at(p), vq = at(q);
          if (largest ? valueLess(vq, vp) : valueLess(vp, vq)) return true;
          if (largest ? valueLess(vp, vq) : valueLess(vq, vp)) return false;
          return p < q;
        });
        int64_t obase = o * k * s.inner + i;
        for (int64_t j = 0; j < k; ++j) {
          vals[obase + j * s.inner] = xs[base + order[j] * s.inner];
          idx[obase + j * s.inner] = order[j];
        }
      }
    return 0;
  });
}

const KernelEntry kTable[] = {
    {"ReduceSum", reduceKernel<SumR>},
    {"ReduceMean", reduceKernel<MeanR>},
    {"ReduceMax", reduceKernel<MaxR>},
    {"ReduceMin", reduceKernel<MinR>},
    {"ReduceProd", reduceKernel<ProdR>},
    {"ReduceL1", reduceKernel<L1R>},
    {"ReduceL2", reduceKernel<L2R>},
    {"ReduceLogSum", reduceKernel<LogSumR>},
    {"ReduceLogSumExp", reduceKernel<LogSumExpR>},
    {"ReduceSumSquare", reduceKernel<SumSquareR>},
    {"ArgMax", argKernel<true>},
    {"ArgMin", argKernel<false>},
    {"Softmax", softmaxKernel<SoftKind::kSoftmax>},
    {"LogSoftmax", softmaxKernel<SoftKind::kLogSoftmax>},
    {"Hardmax", softmaxKernel<SoftKind::kHardmax>},
    {"CumSum", cumSumKernel},
    {"TopK", topKKernel},
    {nullptr, nullptr},
};

}  // namespace

const KernelEntry* reductionKernels() { return kTable; }

}  // namespace mgrt
