// The selection ops' computations (NonMaxSuppression, Unique, Compress, TfIdfVectorizer), written
// once for the compiler and the CPU runtime. Three of the ops have outputs whose extents depend on
// operand values: the compiler's shape inference (src/ops/selection_ops.cpp) runs these functions
// on the constant operands to get the exact extents, and the reference kernels
// (runtime/cpu/k_select.cpp) run the same functions at run time to fill the results, so the two
// can never disagree. TfIdfVectorizer's extent is static; its attribute checks are shared.
// Header-only, plain C++17 with the standard library (generated packages carry it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mgrt {
namespace selection {

// ---- NonMaxSuppression ------------------------------------------------------------------------
// boxes [B, N, 4], scores [B, C, N]. Per batch b and class c, in that order: the boxes whose score
// is strictly greater than the score threshold (all of them without one), taken by descending
// score (ties: lower box index first); a box is kept unless its IOU with a box kept before it for
// the same (b, c) is greater than iouThreshold; at most maxPerClass are kept. Corner boxes are
// [y1, x1, y2, x2] with either corner first; center boxes (centerPointBox) [xc, yc, w, h].
// Computed in float, as onnxruntime does. Appends (b, c, box) triples to `selected`.

struct NmsParams {
  int64_t batches = 0, classes = 0, boxes = 0;
  int64_t maxPerClass = 0;  // <= 0: nothing is selected (ONNX's default is 0)
  float iouThreshold = 0;
  bool hasScoreThreshold = false;
  float scoreThreshold = 0;
  bool centerPointBox = false;
};

// The box's extent on its two axes: lo[0], hi[0] on the first, lo[1], hi[1] on the second.
inline void nmsExtent(const float* b, bool center, float lo[2], float hi[2]) {
  for (int a = 0; a < 2; ++a) {
    if (center) {
      const float half = b[a + 2] / 2;
      lo[a] = b[a] - half;
      hi[a] = b[a] + half;
    } else {
      lo[a] = std::min(b[a], b[a + 2]);
      hi[a] = std::max(b[a], b[a + 2]);
    }
  }
}

// Whether box p suppresses box q: their IOU is greater than the threshold. Boxes of no area and
// boxes that do not overlap never suppress.
inline bool nmsSuppresses(const float* p, const float* q, bool center, float threshold) {
  float plo[2], phi[2], qlo[2], qhi[2], inter = 1;
  nmsExtent(p, center, plo, phi);
  nmsExtent(q, center, qlo, qhi);
  for (int a = 0; a < 2; ++a) {
    const float lo = std::max(plo[a], qlo[a]), hi = std::min(phi[a], qhi[a]);
    if (hi <= lo) return false;
    inter *= hi - lo;
  }
  const float areaP = (phi[0] - plo[0]) * (phi[1] - plo[1]);
  const float areaQ = (qhi[0] - qlo[0]) * (qhi[1] - qlo[1]);
  const float uni = areaP + areaQ - inter;
  if (inter <= 0 || areaP <= 0 || areaQ <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

inline void nmsSelect(const float* boxes, const float* scores, const NmsParams& p,
                      std::vector<int64_t>* selected) {
  if (p.maxPerClass <= 0) return;
  std::vector<int64_t> order, kept;
  for (int64_t b = 0; b < p.batches; ++b)
    for (int64_t c = 0; c < p.classes; ++c) {
      const float* s = scores + (b * p.classes + c) * p.boxes;
      const float* bx = boxes + b * p.boxes * 4;
      order.clear();
      for (int64_t i = 0; i < p.boxes; ++i)
        if (!p.hasScoreThreshold || s[i] > p.scoreThreshold) order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [s](int64_t i, int64_t j) { return s[i] > s[j]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= p.maxPerClass) break;
        bool keep = true;
        for (int64_t k : kept)
          if (nmsSuppresses(bx + k * 4, bx + i * 4, p.centerPointBox, p.iouThreshold)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        kept.push_back(i);
        selected->insert(selected->end(), {b, c, i});
      }
    }
}

// ---- Unique -----------------------------------------------------------------------------------
// x seen as [outer, n, inner]: slice j is x[:, j, :] (without axis: outer = inner = 1, n = numel).
// Slices compare lexicographically in row-major order, as numpy.unique does (NaN after every
// number and equal to NaN). `first` lists each unique slice's first occurrence, in ascending
// slice order when sorted, else in order of first occurrence; inverse[j] is slice j's position in
// that list, counts its number of occurrences.

struct UniqueResult {
  std::vector<int64_t> first, inverse, counts;
};

template <typename T>
int uniqueCompare(T a, T b) {
  const bool an = a != a, bn = b != b;  // NaN (never true for integers)
  if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
  return a < b ? -1 : (b < a ? 1 : 0);
}

template <typename T>
UniqueResult uniqueSlices(const T* x, int64_t outer, int64_t n, int64_t inner, bool sorted) {
  auto cmp = [&](int64_t p, int64_t q) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        if (int r = uniqueCompare(x[(o * n + p) * inner + i], x[(o * n + q) * inner + i])) return r;
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return cmp(p, q) < 0; });
  // Groups of equal slices in ascending order; stability puts each group's first occurrence first.
  UniqueResult r;
  r.inverse.assign(static_cast<size_t>(n), 0);
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || cmp(order[k - 1], order[k]) != 0) {
      r.first.push_back(order[k]);
      r.counts.push_back(0);
    }
    r.inverse[order[k]] = static_cast<int64_t>(r.first.size()) - 1;
    ++r.counts.back();
  }
  if (!sorted) {  // renumber the groups by first occurrence
    const size_t u = r.first.size();
    std::vector<int64_t> byFirst(u), rank(u);
    for (size_t g = 0; g < u; ++g) byFirst[g] = static_cast<int64_t>(g);
    std::sort(byFirst.begin(), byFirst.end(),
              [&](int64_t a, int64_t b) { return r.first[a] < r.first[b]; });
    UniqueResult s;
    for (size_t k = 0; k < u; ++k) {
      rank[byFirst[k]] = static_cast<int64_t>(k);
      s.first.push_back(r.first[byFirst[k]]);
      s.counts.push_back(r.counts[byFirst[k]]);
    }
    for (int64_t g : r.inverse) s.inverse.push_back(rank[g]);
    return s;
  }
  return r;
}

// ---- Compress ---------------------------------------------------------------------------------
// The indices along the axis (or the flattened input) that condition[0..len) selects. A condition
// shorter than the extent drops what it does not reach; one longer may only hold false there
// (numpy.compress): returns "" or what is wrong.
inline std::string compressSelected(const uint8_t* cond, int64_t len, int64_t extent,
                                    std::vector<int64_t>* idx) {
  for (int64_t i = 0; i < len; ++i) {
    if (!cond[i]) continue;
    if (i >= extent)
      return "condition[" + std::to_string(i) + "] is true but the selected extent is only " +
             std::to_string(extent);
    idx->push_back(i);
  }
  return "";
}

// ---- TfIdfVectorizer --------------------------------------------------------------------------
// Attributes (int64 pool only): the pool's n-grams of lengths min..max with their ordinals (the
// position among all n-grams of the pool, which ngram_indexes maps to an output column), checked.

enum class TfIdfMode { kTF, kIDF, kTFIDF };

struct TfIdfSpec {
  TfIdfMode mode = TfIdfMode::kTF;
  int64_t minGram = 1, maxGram = 1, maxSkip = 0;
  std::map<std::vector<int64_t>, int64_t> pool;  // n-gram -> ordinal
  std::vector<int64_t> indexes;                  // ordinal -> output column
  std::vector<float> weights;                    // per output column; empty: all ones
  int64_t outSize = 0;                           // max(ngram_indexes) + 1
};

// Returns "" or what is wrong with the attributes.
inline std::string tfidfSpec(const std::string& mode, int64_t minGram, int64_t maxGram,
                             int64_t maxSkip, const std::vector<int64_t>& counts,
                             const std::vector<int64_t>& indexes, const std::vector<int64_t>& pool,
                             const std::vector<float>& weights, TfIdfSpec* s) {
  if (mode == "TF") s->mode = TfIdfMode::kTF;
  else if (mode == "IDF") s->mode = TfIdfMode::kIDF;
  else if (mode == "TFIDF") s->mode = TfIdfMode::kTFIDF;
  else return "mode must be TF, IDF or TFIDF, got '" + mode + "'";
  if (minGram < 1 || maxGram < minGram)
    return "expected 1 <= min_gram_length <= max_gram_length, got " + std::to_string(minGram) +
           " and " + std::to_string(maxGram);
  if (maxSkip < 0) return "max_skip_count must be >= 0, got " + std::to_string(maxSkip);
  if (static_cast<int64_t>(counts.size()) < maxGram)
    return "ngram_counts has " + std::to_string(counts.size()) +
           " entries, expected one per n-gram length up to max_gram_length " +
           std::to_string(maxGram);
  if (indexes.empty()) return "ngram_indexes is empty";
  const int64_t total = static_cast<int64_t>(pool.size());
  int64_t ordinal = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t n = static_cast<int64_t>(k) + 1, begin = counts[k];
    const int64_t end = k + 1 < counts.size() ? counts[k + 1] : total;
    if (begin < 0 || end < begin || end > total)
      return "ngram_counts[" + std::to_string(k) + "] = " + std::to_string(begin) +
             " does not start the " + std::to_string(n) +
             "-grams within pool_int64s of " + std::to_string(total) + " entries";
    if ((end - begin) % n != 0)
      return "pool_int64s[" + std::to_string(begin) + ".." + std::to_string(end) +
             ") is not a whole number of " + std::to_string(n) + "-grams";
    for (int64_t at = begin; at < end; at += n, ++ordinal) {
      if (n < minGram || n > maxGram) continue;
      std::vector<int64_t> gram(pool.begin() + at, pool.begin() + at + n);
      if (!s->pool.emplace(std::move(gram), ordinal).second)
        return "pool_int64s holds a " + std::to_string(n) + "-gram twice (at " +
               std::to_string(at) + ")";
    }
  }
  if (static_cast<int64_t>(indexes.size()) < ordinal)
    return "ngram_indexes has " + std::to_string(indexes.size()) + " entries, the pool " +
           std::to_string(ordinal) + " n-grams";
  for (int64_t i : indexes) {
    if (i < 0) return "ngram_indexes holds the negative index " + std::to_string(i);
    s->outSize = std::max(s->outSize, i + 1);
  }
  if (!weights.empty() && static_cast<int64_t>(weights.size()) < s->outSize)
    return "weights has " + std::to_string(weights.size()) + " entries, expected one per output " +
           "column (" + std::to_string(s->outSize) + ")";
  s->indexes = indexes;
  s->weights = weights;
  s->minGram = minGram;
  s->maxGram = maxGram;
  s->maxSkip = maxSkip;
  return "";
}

// Counts the pool's n-grams in one row of c tokens into freq[outSize] (as onnxruntime counts):
// unigrams once per position; longer n-grams once per start and skip distance d in
// 1..max_skip_count+1, made of the tokens at start, start + d, start + 2d, ...
template <typename T>
void tfidfCountRow(const TfIdfSpec& s, const T* row, int64_t c, std::vector<int64_t>* freq) {
  auto hit = [&](const std::vector<int64_t>& gram) {
    auto it = s.pool.find(gram);
    if (it != s.pool.end()) ++(*freq)[s.indexes[it->second]];
  };
  std::vector<int64_t> gram;
  if (s.minGram == 1)
    for (int64_t i = 0; i < c; ++i) hit({static_cast<int64_t>(row[i])});
  const int64_t from = std::max<int64_t>(s.minGram, 2);
  if (from > s.maxGram) return;
  for (int64_t d = 1; d <= s.maxSkip + 1 && d < c; ++d)  // d >= c fits no 2-gram
    for (int64_t start = 0; start + d * (from - 1) < c; ++start) {
      gram.clear();
      for (int64_t n = 1, at = start; n <= s.maxGram && at < c; ++n, at += d) {
        gram.push_back(static_cast<int64_t>(row[at]));
        if (n >= from) hit(gram);
      }
    }
}

// The output value of column j for a count: TF the count, IDF the weight (1 without weights) where
// the count is positive, TFIDF the count times the weight. Weights index output columns, as
// onnxruntime and ONNX's reference implementation read them.
inline float tfidfValue(const TfIdfSpec& s, int64_t j, int64_t count) {
  const float w = s.weights.empty() ? 1.0f : s.weights[j];
  switch (s.mode) {
    case TfIdfMode::kTF: return static_cast<float>(count);
    case TfIdfMode::kIDF: return count > 0 ? w : 0.0f;
    case TfIdfMode::kTFIDF: return static_cast<float>(count) * w;
  }
  return 0;
}

}  // namespace selection
}  // namespace mgrt
