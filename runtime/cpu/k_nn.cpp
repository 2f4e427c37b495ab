// Reference kernels of the NN family: the one kernel table (the kernels live in k_nn_conv.cpp,
// k_nn_pool.cpp, k_nn_norm.cpp and here), and Gemm and MatMul as plain triple loops with double
// accumulation: the numeric oracle for the optimized f_* kernels.
#include <algorithm>
#include <vector>

#include "k_nn_internal.h"

namespace mgrt {
namespace nn {
namespace {

template <typename T>
int gemmT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "Gemm";
  const Tensor& A = in[0];
  const Tensor& B = in[1];
  if (A.rank != 2 || B.rank != 2 || B.dtype != A.dtype)
    return ctx.fail("%s: A and B must be matrices of one element type", op);
  bool ta = a.i("transA", 0) != 0, tb = a.i("transB", 0) != 0;
  int64_t M = ta ? A.dims[1] : A.dims[0], K = ta ? A.dims[0] : A.dims[1];
  int64_t kb = tb ? B.dims[1] : B.dims[0], N = tb ? B.dims[0] : B.dims[1];
  if (K != kb) return ctx.fail("%s: inner dimensions differ (%lld vs %lld)", op,
                               static_cast<long long>(K), static_cast<long long>(kb));
  if (checkDims(op, out[0], {M, N}, ctx)) return 1;
  double alpha = a.f("alpha", 1.f), beta = a.f("beta", 1.f);
  const T* c = nullptr;
  int64_t cRowStride = 0, cColStride = 0;
  if (present(in, nin, 2)) {
    const Tensor& Ct = in[2];
    if (Ct.dtype != A.dtype || Ct.rank > 2) return ctx.fail("%s: C must be a matrix, vector or scalar of A's type", op);
    int64_t cm = Ct.rank == 2 ? Ct.dims[0] : 1, cn = Ct.rank >= 1 ? Ct.dims[Ct.rank - 1] : 1;
    if ((cm != 1 && cm != M) || (cn != 1 && cn != N))
      return ctx.fail("%s: C does not broadcast to [%lld,%lld]", op, static_cast<long long>(M),
                      static_cast<long long>(N));
    c = Ct.as<T>();
    cRowStride = cm == 1 ? 0 : cn;
    cColStride = cn == 1 ? 0 : 1;
  }
  Epilogue ep = Epilogue::fromAttrs(a);
  const T* pa = A.as<T>();
  const T* pb = B.as<T>();
  T* y = out[0].as<T>();
  const int64_t lda = A.dims[1], ldb = B.dims[1];
  parallelFor(ctx.pool, M, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          double av = static_cast<double>(ta ? pa[k * lda + i] : pa[i * lda + k]);
          double bv = static_cast<double>(tb ? pb[j * ldb + k] : pb[k * ldb + j]);
          acc += av * bv;
        }
        double v = alpha * acc;
        if (c) v += beta * static_cast<double>(c[i * cRowStride + j * cColStride]);
        y[i * N + j] = epilogue<T>(ep, v);
      }
  });
  return 0;
}

template <typename T>
int matMulT(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  const char* op = "MatMul";
  const Tensor& A = in[0];
  const Tensor& B = in[1];
  if (A.rank < 1 || B.rank < 1 || B.dtype != A.dtype)
    return ctx.fail("%s: operands must have rank >= 1 and one element type", op);
  std::vector<int64_t> ad = dimsOf(A), bd = dimsOf(B);
  bool va = ad.size() == 1, vb = bd.size() == 1;
  if (va) ad.insert(ad.begin(), 1);
  if (vb) bd.push_back(1);
  int64_t M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
  if (bd[bd.size() - 2] != K) return ctx.fail("%s: inner dimensions differ", op);
  // Broadcast batch dims, right-aligned.
  size_t ra = ad.size() - 2, rb = bd.size() - 2, r = std::max(ra, rb);
  std::vector<int64_t> batch(r), sa(r, 0), sb(r, 0);
  for (int64_t i = static_cast<int64_t>(r) - 1, stA = M * K, stB = K * N; i >= 0; --i) {
    int64_t da = i >= int64_t(r - ra) ? ad[i - (r - ra)] : 1;
    int64_t db = i >= int64_t(r - rb) ? bd[i - (r - rb)] : 1;
    if (da != db && da != 1 && db != 1) return ctx.fail("%s: batch dimensions do not broadcast", op);
    batch[i] = std::max(da, db);
    if (da == 0 || db == 0) batch[i] = 0;
    sa[i] = da == 1 ? 0 : stA;
    sb[i] = db == 1 ? 0 : stB;
    stA *= da;
    stB *= db;
  }
  std::vector<int64_t> outDims = batch;
  if (!va) outDims.push_back(M);
  if (!vb) outDims.push_back(N);
  if (checkDims(op, out[0], outDims, ctx)) return 1;
  Epilogue ep = Epilogue::fromAttrs(a);
  const T* pa = A.as<T>();
  const T* pb = B.as<T>();
  T* y = out[0].as<T>();
  int64_t nb = product(batch);
  parallelFor(ctx.pool, nb, 1, [&](int64_t b, int64_t e) {
    std::vector<int64_t> coord(r);
    for (int64_t bi = b; bi < e; ++bi) {
      unravel(bi, batch, coord.data());
      int64_t oa = 0, ob = 0;
      for (size_t d = 0; d < r; ++d) {
        oa += coord[d] * sa[d];
        ob += coord[d] * sb[d];
      }
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += static_cast<double>(pa[oa + i * K + k]) * static_cast<double>(pb[ob + k * N + j]);
          y[(bi * M + i) * N + j] = epilogue<T>(ep, acc);
        }
    }
  });
  return 0;
}

}  // namespace

int kGemm(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("Gemm", nin, 2, in, nout, 1, ctx)) return 1;
  return byFloatType(in[0].dtype, "Gemm", ctx, [&](auto tag) {
    return gemmT<decltype(tag)>(a, in, nin, out, nout, ctx);
  });
}

int kMatMul(const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout, Ctx& ctx) {
  if (checkArity("MatMul", nin, 2, in, nout, 1, ctx)) return 1;
  return byFloatType(in[0].dtype, "MatMul", ctx, [&](auto tag) {
    return matMulT<decltype(tag)>(a, in, nin, out, nout, ctx);
  });
}

}  // namespace nn

const KernelEntry* nnKernels() {
  static const KernelEntry kTable[] = {
      {"Conv", nn::kConv},
      {"ConvTranspose", nn::kConvTranspose},
      {"Col2Im", nn::kCol2Im},
      {"DeformConv", nn::kDeformConv},
      {"Gemm", nn::kGemm},
      {"MatMul", nn::kMatMul},
      {"MaxPool", nn::kMaxPool},
      {"AveragePool", nn::kAveragePool},
      {"LpPool", nn::kLpPool},
      {"GlobalAveragePool", nn::kGlobalAveragePool},
      {"GlobalMaxPool", nn::kGlobalMaxPool},
      {"GlobalLpPool", nn::kGlobalLpPool},
      {"MaxRoiPool", nn::kMaxRoiPool},
      {"BatchNormalization", nn::kBatchNormalization},
      {"InstanceNormalization", nn::kInstanceNormalization},
      {"LayerNormalization", nn::kLayerNormalization},
      {"GroupNormalization", nn::kGroupNormalization},
      {"LpNormalization", nn::kLpNormalization},
      {"MeanVarianceNormalization", nn::kMeanVarianceNormalization},
      {"LRN", nn::kLRN},
      {"RMSNormalization", nn::kRMSNormalization},
      {"RotaryEmbedding", nn::kRotaryEmbedding},
      {"Attention", nn::kAttention},
      {nullptr, nullptr},
  };
  return kTable;
}

}  // namespace mgrt
