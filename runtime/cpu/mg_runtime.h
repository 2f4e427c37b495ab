// Magneto CPU runtime: what every generated CPU package carries with it, and what the compiler's
// reference interpreter runs. Plain C++17, no dependency beyond the standard library.
//
// A kernel is a function
//     int kernel(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx)
// returning 0 on success, or non-zero with a message in ctx (data-dependent errors only, such as
// an index out of range in Gather: shapes were checked by the compiler).
//   - in[i].data == nullptr marks an absent optional operand.
//   - Attributes are the ONNX node's, encoded as text (see Attrs) by the code generator.
//   - Output buffers are allocated by the caller with the statically inferred shapes.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace mgrt {

// ONNX TensorProto.DataType numbering.
enum DType : int32_t {
  kF32 = 1, kU8 = 2, kI8 = 3, kU16 = 4, kI16 = 5, kI32 = 6, kI64 = 7, kStr = 8, kBool = 9,
  kF16 = 10, kF64 = 11, kU32 = 12, kU64 = 13, kBF16 = 16,
};
size_t dtypeSize(int32_t dtype);

constexpr int kMaxRank = 8;

struct Tensor {
  void* data = nullptr;
  int32_t dtype = kF32;
  int32_t rank = 0;
  int64_t dims[kMaxRank] = {0};
  // A pitched tensor (a bound KV-cache buffer, docs/ABI.md "KV-cache binding"): its storage holds
  // `pitch` (>= dims[pitchAxis]) positions along pitchAxis, of which the first dims[pitchAxis] are
  // the tensor; every other dim is packed as usual. -1: densely packed (every kernel's default).
  // Only the kernels `readsPitched` names receive pitched operands; the package core gives any
  // other a dense copy (densify).
  int32_t pitchAxis = -1;
  int64_t pitch = 0;

  bool pitched() const { return pitchAxis >= 0; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
  template <typename T>
  T* as() const { return static_cast<T*>(data); }
  bool present() const { return data != nullptr; }
};

// Attribute text: entries "name=T:value" separated by ';' where T is
//   i (int64 list, comma separated: "i:2,2"), f (float list "f:0.5"), s (one string, to the next
//   ';' or the end), S (string list separated by '|').
// Example: "group=i:1;pads=i:3,3,3,3;strides=i:2,2;mg_act=s:Relu".
// Parsed once when a model handle is created; lookups are linear (a handful of entries).
class Attrs {
 public:
  Attrs() = default;
  explicit Attrs(const char* spec);
  bool has(const char* name) const;
  int64_t i(const char* name, int64_t def) const;
  float f(const char* name, float def) const;
  std::string s(const char* name, const char* def) const;
  std::vector<int64_t> ints(const char* name) const;  // empty when absent
  std::vector<float> floats(const char* name) const;
  std::vector<std::string> strings(const char* name) const;

 private:
  struct Entry {
    std::string name;
    char type;
    std::vector<int64_t> iv;
    std::vector<float> fv;
    std::vector<std::string> sv;
  };
  const Entry* find(const char* name) const;
  std::vector<Entry> entries_;
};

class ThreadPool;

// Runs fn(begin, end) over [0, n) split into chunks on the pool (or inline when pool is null or
// has one thread). fn must be safe to call concurrently on disjoint ranges.
void parallelFor(ThreadPool* pool, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& fn);
// Like parallelFor, but thread t always gets the t-th of `threads` equal ranges of [0, n): for
// loops run again and again over the same data (a recurrent step's weights), so that each core
// finds its share in its own cache.
void parallelForStatic(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn);

// What a kernel may keep between runs of one step of one model handle (weights repacked into the
// kernel's own layout, say). Owned by the handle, freed with it; null where the caller keeps none
// (the interpreter). Only derived from operands marked constant in Ctx::constInputs, whose bytes
// never change while the handle lives.
struct StepState {
  void* data = nullptr;
  void (*release)(void*) = nullptr;
  StepState() = default;
  StepState(const StepState&) = delete;
  StepState& operator=(const StepState&) = delete;
  ~StepState() { reset(); }
  void reset() {
    if (release && data) release(data);
    data = nullptr;
    release = nullptr;
  }
  // The state as T, created by `make()` on first use (T must be default-destructible).
  template <typename T, typename Make>
  T* getOr(Make make) {
    if (!data) {
      data = make();
      release = [](void* q) { delete static_cast<T*>(q); };
    }
    return static_cast<T*>(data);
  }
};

struct Ctx {
  ThreadPool* pool = nullptr;
  StepState* state = nullptr;  // this step's state, or null (keep nothing)
  uint32_t constInputs = 0;    // bit i: operand i is a weight, constant while state lives
  // Inside a parallel region (the package's runRegion), this member's progress counter and the
  // previous member's; both null elsewhere. A pipelined member (a wavefront layer, f_recurrent.cpp)
  // publishes its completed steps with release and waits on `upstream` with acquire; whatever the
  // kernel, the runner sets a member's counter to kProgressDone when it returns.
  std::atomic<int64_t>* progress = nullptr;
  const std::atomic<int64_t>* upstream = nullptr;
  static constexpr int64_t kProgressDone = INT64_MAX;
  // The step produces data-dependent extents (docs/DYNAMIC_SHAPES.md, "Data-dependent extents"):
  // those result dims arrive at their capacity (what memory holds), and the kernel writes its
  // results compactly at the actual extent and sets the dims to it (setDataExtent), which the
  // package then binds to the data symbol. Otherwise the dims are exact and must be met.
  bool dataExtents = false;
  char error[256] = {0};
  int fail(const char* fmt, ...);  // formats into error, returns 1
  // Result t's dim `d` holds `n`: sets it when dataExtents and n fits the capacity; false when n
  // passes the capacity, or differs from the exact dim (the kernel then fails, saying why).
  bool setDataExtent(Tensor& t, int d, int64_t n) const {
    if (d < 0 || d >= t.rank || n < 0 || n > t.dims[d] || (!dataExtents && n != t.dims[d])) return false;
    t.dims[d] = n;
    return true;
  }
  bool constant(int input) const { return state && input < 32 && (constInputs >> input & 1u); }
};

using KernelFn = int (*)(const Attrs&, const Tensor*, int, Tensor*, int, Ctx&);

// Pitched operands (Tensor::pitchAxis): the element strides of t's dims through its pitch (the
// packed strides when t is not pitched).
void pitchedStrides(const Tensor& t, int64_t* strides);
// Whether the optimized kernel of `op` reads operand `operand` as the pitched tensor t (MatMul: an
// f32 operand of rank >= 3 pitched along its rows, rank - 2; Transpose: any pitch). The package
// core densifies every other pitched operand before the kernel runs.
bool readsPitched(const char* op, int operand, const Tensor& t);
// A densely packed copy of pitched t in `buf` (t itself when it is not pitched).
Tensor densify(const Tensor& t, std::vector<unsigned char>& buf);

// Reference kernels, one per op kind, by ONNX op name (and Magneto's internal ops). Null when the
// op has no kernel. The generated code calls kernels by symbol; this table serves the interpreter.
KernelFn findKernel(const char* op);
struct KernelEntry {
  const char* op;
  KernelFn fn;
};
// All registered kernels (static table), terminated by {nullptr, nullptr}.
const KernelEntry* kernelTable();

}  // namespace mgrt
