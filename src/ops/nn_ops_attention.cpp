// NN op family, part 4: the transformer ops of opset 23 (RMSNormalization, RotaryEmbedding,
// Attention): schemas and shape inference. The reference kernels are runtime/cpu/k_nn_attention.cpp;
// the default pipeline rewrites all three into plain ops first (passes/decompose_attention.cpp),
// so no target needs a kernel of its own (on cpu, fuse-layernorm then takes RMSNormalization's
// chain back into the op for its fast kernel, runtime/cpu/f_norm.cpp). The checks here are what both rely on: a node that gets
// past inference decomposes.
#include "nn_ops_common.h"

namespace magneto {
namespace {

using namespace nnops;

// RMSNormalization(X, scale): X / sqrt(mean(X^2 over dims [axis, rank)) + epsilon) * scale.
Status inferRMSNorm(InferContext& c) {
  const char* op = "RMSNormalization";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "X"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 1, op, "scale"));
  const Dims& x = c.inputDims(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 1) return badInput("{}: X must have rank >= 1, got a scalar", op);
  MG_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(c.attrs().getInt("axis", -1), rank));
  Dims normShape(x.begin() + axis, x.end());
  const Dims& s = c.inputDims(1);
  bool ok = s.size() <= normShape.size();
  for (size_t i = 0; ok && i < s.size(); ++i)
    ok = s[i] == 1 || s[i] == normShape[normShape.size() - s.size() + i];
  if (!ok)
    return badInput("{}: scale {} does not broadcast to the normalized dims {} (axis {})", op,
                    c.inputType(1).str(), dimsStr(normShape), axis);
  const int64_t stash = c.attrs().getInt("stash_type", 1);
  if (stash != 1)
    return unsupported("{}: stash_type {} is not supported (only 1, float32)", op, stash);
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

// RotaryEmbedding(X, cos_cache, sin_cache, position_ids?). X is [B, H, S, D] or [B, S, H*D]
// (num_heads given); the caches are [max_position, R/2] with position_ids [B, S], else [B, S, R/2];
// R = rotary_embedding_dim (0: D), even and at most D.
Status inferRotary(InferContext& c) {
  const char* op = "RotaryEmbedding";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "X"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 1, op, "cos_cache"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 2, op, "sin_cache"));
  const Dims& x = c.inputDims(0);
  const int64_t heads = c.attrs().getInt("num_heads", 0);
  int64_t B = 0, S = 0, D = 0;
  if (x.size() == 4) {
    B = x[0], S = x[2], D = x[3];
    if (heads != 0 && heads != x[1])
      return badInput("{}: num_heads is {} but X {} has {} heads (dim 1)", op, heads,
                      c.inputType(0).str(), x[1]);
  } else if (x.size() == 3) {
    if (heads <= 0)
      return badInput("{}: a 3-D X [batch, seq, hidden] needs num_heads > 0, got {}", op, heads);
    if (x[2] % heads != 0)
      return badInput("{}: hidden size {} of X {} is not divisible by num_heads {}", op, x[2],
                      c.inputType(0).str(), heads);
    B = x[0], S = x[1], D = x[2] / heads;
  } else {
    return badInput("{}: X must be 3-D [batch, seq, hidden] or 4-D [batch, heads, seq, head], "
                    "got {}", op, c.inputType(0).str());
  }
  int64_t R = c.attrs().getInt("rotary_embedding_dim", 0);
  if (R == 0) R = D;
  if (R < 0 || R > D || R % 2 != 0)
    return badInput("{}: rotary_embedding_dim must be even and at most the head size {}, got {}",
                    op, D, R);
  const Dims& cd = c.inputDims(1);
  if (c.inputDims(2) != cd)
    return badInput("{}: sin_cache {} and cos_cache {} differ in shape", op, c.inputType(2).str(),
                    c.inputType(1).str());
  if (c.hasInput(3)) {
    const DType pt = c.inputDType(3);
    if (pt != DType::kI64 && pt != DType::kI32)
      return badInput("{}: position_ids must be int64 (or int32), got {}", op, dtypeName(pt));
    if (c.inputDims(3) != Dims{B, S})
      return badInput("{}: position_ids must be [{}, {}] (batch, seq), got {}", op, B, S,
                      c.inputType(3).str());
    if (cd.size() != 2 || cd[1] != R / 2)
      return badInput("{}: with position_ids, cos_cache must be [max_position, {}], got {}", op,
                      R / 2, c.inputType(1).str());
    if (const Tensor* p = c.constantInput(3))
      for (int64_t i = 0; i < p->numel(); ++i)
        if (p->intAt(i) < 0 || p->intAt(i) >= cd[0])
          return badInput("{}: position_ids holds {}, outside the cache's [0, {})", op,
                          p->intAt(i), cd[0]);
  } else if (cd != Dims{B, S, R / 2}) {
    return badInput("{}: without position_ids, cos_cache must be [{}, {}, {}] (batch, seq, "
                    "rotary_dim/2), got {}", op, B, S, R / 2, c.inputType(1).str());
  }
  c.setOutput(0, c.inputType(0));
  return Status::success();
}

// Attention(Q, K, V, attn_mask?, past_key?, past_value?) -> Y, present_key?, present_value?,
// qk_matmul_output?. 3-D Q/K/V are [B, S, heads*head] (q_num_heads, kv_num_heads given), 4-D
// [B, heads, S, head]; q heads must be a multiple of kv heads (grouped-query attention).
Status inferAttention(InferContext& c) {
  const char* op = "Attention";
  MG_RETURN_IF_ERROR(requireFloat(c, 0, op, "Q"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 1, op, "K"));
  MG_RETURN_IF_ERROR(requireSameDType(c, 2, op, "V"));
  const Dims& q = c.inputDims(0);
  const Dims& k = c.inputDims(1);
  const Dims& v = c.inputDims(2);
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    return badInput("{}: Q, K and V must all be 3-D or all 4-D, got Q {}, K {}, V {}", op,
                    c.inputType(0).str(), c.inputType(1).str(), c.inputType(2).str());
  const AttrMap& a = c.attrs();
  int64_t qHeads = a.getInt("q_num_heads", 0), kvHeads = a.getInt("kv_num_heads", 0);
  int64_t B = q[0], Sq = 0, Skv = 0, Dh = 0, Dv = 0;
  if (q.size() == 3) {
    if (qHeads <= 0 || kvHeads <= 0)
      return badInput("{}: 3-D Q/K/V need q_num_heads > 0 and kv_num_heads > 0, got {} and {}",
                      op, qHeads, kvHeads);
    if (q[2] % qHeads != 0)
      return badInput("{}: Q's hidden size {} is not divisible by q_num_heads {}", op, q[2], qHeads);
    if (k[2] % kvHeads != 0 || v[2] % kvHeads != 0)
      return badInput("{}: K's hidden size {} and V's {} must be divisible by kv_num_heads {}", op,
                      k[2], v[2], kvHeads);
    Sq = q[1], Skv = k[1], Dh = q[2] / qHeads, Dv = v[2] / kvHeads;
    if (k[2] / kvHeads != Dh)
      return badInput("{}: head size of Q ({} / {} heads = {}) differs from K's ({} / {} = {})", op,
                      q[2], qHeads, Dh, k[2], kvHeads, k[2] / kvHeads);
    if (v[1] != Skv)
      return badInput("{}: K {} and V {} differ in sequence length", op, c.inputType(1).str(),
                      c.inputType(2).str());
  } else {
    if ((qHeads != 0 && qHeads != q[1]) || (kvHeads != 0 && kvHeads != k[1]))
      return badInput("{}: q_num_heads {} / kv_num_heads {} disagree with Q {} and K {} (dim 1)",
                      op, qHeads, kvHeads, c.inputType(0).str(), c.inputType(1).str());
    qHeads = q[1], kvHeads = k[1], Sq = q[2], Skv = k[2], Dh = q[3], Dv = v[3];
    if (k[3] != Dh)
      return badInput("{}: Q {} and K {} differ in head size (dim 3)", op, c.inputType(0).str(),
                      c.inputType(1).str());
    if (v[1] != kvHeads || v[2] != Skv)
      return badInput("{}: V {} must have K's {} heads and sequence length {}", op,
                      c.inputType(2).str(), kvHeads, Skv);
  }
  if (k[0] != B || v[0] != B)
    return badInput("{}: Q, K and V differ in batch size: {}, {}, {}", op, B, k[0], v[0]);
  if (kvHeads <= 0 || qHeads % kvHeads != 0)
    return badInput("{}: q_num_heads {} is not a multiple of kv_num_heads {}", op, qHeads, kvHeads);
  if (c.hasInput(4) != c.hasInput(5))
    return badInput("{}: past_key and past_value must be given together", op);
  int64_t past = 0;
  if (c.hasInput(4)) {
    MG_RETURN_IF_ERROR(requireSameDType(c, 4, op, "past_key"));
    MG_RETURN_IF_ERROR(requireSameDType(c, 5, op, "past_value"));
    const Dims& pk = c.inputDims(4);
    const Dims& pv = c.inputDims(5);
    if (pk.size() != 4 || pk[0] != B || pk[1] != kvHeads || pk[3] != Dh)
      return badInput("{}: past_key must be [{}, {}, past_seq, {}], got {}", op, B, kvHeads, Dh,
                      c.inputType(4).str());
    past = pk[2];
    if (pv != Dims{B, kvHeads, past, Dv})
      return badInput("{}: past_value must be [{}, {}, {}, {}], got {}", op, B, kvHeads, past, Dv,
                      c.inputType(5).str());
  }
  const int64_t L = past + Skv;  // total sequence length
  if (c.hasInput(3)) {
    const DType mt = c.inputDType(3);
    if (mt != DType::kBool && mt != c.inputDType(0))
      return badInput("{}: attn_mask must be bool or {} (Q's type), got {}", op,
                      dtypeName(c.inputDType(0)), dtypeName(mt));
    const Dims& m = c.inputDims(3);
    const Dims full{B, qHeads, Sq, L};
    bool ok = !m.empty() && m.size() <= 4 && m.back() == L;
    for (size_t i = 0; ok && i < m.size(); ++i) {
      int64_t want = full[4 - m.size() + i];
      ok = m[i] == 1 || m[i] == want;
    }
    if (!ok)
      return badInput("{}: attn_mask {} does not broadcast to [batch {}, heads {}, q_seq {}, "
                      "total_seq {}] (its last dim must be the total sequence length {})",
                      op, c.inputType(3).str(), B, qHeads, Sq, L, L);
  }
  const int64_t mode = a.getInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return badInput("{}: qk_matmul_output_mode must be 0 to 3, got {}", op, mode);
  if (a.getFloat("softcap", 0.0) < 0)
    return badInput("{}: softcap must be >= 0, got {}", op, a.getFloat("softcap", 0.0));
  if (a.find("scale") && !(a.getFloat("scale", 1.0) > 0 || a.getFloat("scale", 1.0) < 0))
    return badInput("{}: scale must be nonzero", op);
  const DType t = c.inputDType(0);
  if (q.size() == 3) c.setOutput(0, {t, {B, Sq, qHeads * Dv}});
  else c.setOutput(0, {t, {B, qHeads, Sq, Dv}});
  if (c.numOutputs() > 1) c.setOutput(1, {t, {B, kvHeads, L, Dh}});
  if (c.numOutputs() > 2) c.setOutput(2, {t, {B, kvHeads, L, Dv}});
  if (c.numOutputs() > 3) c.setOutput(3, {t, {B, qHeads, Sq, L}});
  return Status::success();
}

OpSchema schema(const char* name, int minIn, int maxIn, int maxOut, std::vector<AttrSpec> attrs,
                InferFn fn, const char* doc) {
  OpSchema s;
  s.name = name;
  s.minInputs = minIn;
  s.maxInputs = maxIn;
  s.minOutputs = 1;
  s.maxOutputs = maxOut;
  s.attrs = std::move(attrs);
  s.infer = std::move(fn);
  s.doc = doc;
  s.sinceVersion = 23;
  return s;
}

}  // namespace

void registerNNAttentionOps(OpRegistry& r) {
  r.add(schema("RMSNormalization", 2, 2, 1,
               {{"axis", K::kInt}, {"epsilon", K::kFloat}, {"stash_type", K::kInt}},
               inferRMSNorm, "X / sqrt(mean(X^2 over dims [axis, rank)) + epsilon) * scale"));
  r.add(schema("RotaryEmbedding", 3, 4, 1,
               {{"interleaved", K::kInt}, {"num_heads", K::kInt},
                {"rotary_embedding_dim", K::kInt}},
               inferRotary, "rotary position embedding of the first rotary_embedding_dim dims"));
  r.add(schema("Attention", 3, 6, 4,
               {{"is_causal", K::kInt}, {"kv_num_heads", K::kInt}, {"q_num_heads", K::kInt},
                {"qk_matmul_output_mode", K::kInt}, {"scale", K::kFloat},
                {"softcap", K::kFloat}, {"softmax_precision", K::kInt}},
               inferAttention,
               "softmax(Q K^T * scale + mask) V, grouped-query heads, KV cache in and out"));
}

}  // namespace magneto
