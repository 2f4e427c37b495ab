// Einsum: the equation parser (shared with shape inference through k_tensor_shared.h) and a plain
// nested-loop reference kernel. Supported: explicit ("ij,jk->ik") and implicit ("ij,jk") outputs,
// repeated labels within an operand (diagonals, "ii->i", traces "ii"), labels summed away, and an
// ellipsis ("...") broadcast numpy-style across operands (size-1 dimensions stretch).
//
// The kernel loops over every combination of label values (output labels outermost), multiplies
// the operands' elements and accumulates into the output element: O(product of all label extents),
// which is the obviously-correct reference, not a fast path.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "k_tensor_shared.h"
#include "k_tensor_util.h"
#include "mg_kernels.h"

namespace mgrt {

using namespace tensor_util;

namespace {

struct Term {
  std::vector<int> letters;  // char codes, -1 marks where the ellipsis sits
  bool ellipsis = false;
};

std::string parseTerm(const std::string& s, Term* t) {
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == '.') {
      if (s.compare(i, 3, "...") != 0 || t->ellipsis) return "malformed ellipsis in '" + s + "'";
      t->ellipsis = true;
      t->letters.push_back(-1);
      i += 2;
    } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
      t->letters.push_back(ch);
    } else {
      return std::string("unexpected character '") + ch + "' in Einsum term '" + s + "'";
    }
  }
  return "";
}

}  // namespace

std::string parseEinsum(const std::string& equation, const std::vector<std::vector<int64_t>>& dims,
                        EinsumSpec* spec) {
  std::string eq;
  for (char ch : equation)
    if (ch != ' ') eq += ch;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  size_t pos = 0;
  for (;;) {
    size_t comma = lhs.find(',', pos);
    Term t;
    std::string err = parseTerm(lhs.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos), &t);
    if (!err.empty()) return err;
    terms.push_back(t);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (terms.size() != dims.size())
    return "equation has " + std::to_string(terms.size()) + " operand terms, got " +
           std::to_string(dims.size()) + " operands";
  // Ellipsis extent: the largest number of dimensions any operand's ellipsis covers.
  int ellRank = 0;
  std::vector<int> ellOf(terms.size(), 0);
  for (size_t k = 0; k < terms.size(); ++k) {
    int named = static_cast<int>(terms[k].letters.size()) - (terms[k].ellipsis ? 1 : 0);
    int rank = static_cast<int>(dims[k].size());
    if (terms[k].ellipsis ? rank < named : rank != named)
      return "operand " + std::to_string(k) + " has rank " + std::to_string(rank) +
             ", the equation gives it " + std::to_string(named) + " labels" +
             (terms[k].ellipsis ? " and an ellipsis" : "");
    ellOf[k] = rank - named;
    ellRank = std::max(ellRank, ellOf[k]);
  }
  // Labels: ellipsis dims first (0..ellRank-1), then letters in order of first appearance.
  std::map<int, int> letterLabel;
  spec->labelSize.assign(static_cast<size_t>(ellRank), 1);
  spec->inputs.assign(terms.size(), {});
  std::vector<int> count;
  for (size_t k = 0; k < terms.size(); ++k) {
    int d = 0;
    for (int ch : terms[k].letters) {
      if (ch == -1) {
        for (int e = 0; e < ellOf[k]; ++e, ++d) {
          int label = ellRank - ellOf[k] + e;
          int64_t n = dims[k][d];
          int64_t& sz = spec->labelSize[label];
          if (sz != n && sz != 1 && n != 1)
            return "ellipsis dimensions do not broadcast (" + std::to_string(sz) + " vs " +
                   std::to_string(n) + ")";
          if (n != 1) sz = n;
          spec->inputs[k].push_back(label);
        }
        continue;
      }
      auto it = letterLabel.find(ch);
      int label;
      if (it == letterLabel.end()) {
        label = static_cast<int>(spec->labelSize.size());
        letterLabel[ch] = label;
        spec->labelSize.push_back(dims[k][d]);
      } else {
        label = it->second;
        int64_t& sz = spec->labelSize[label];
        if (sz != dims[k][d]) {
          if (sz != 1 && dims[k][d] != 1)
            return std::string("label '") + static_cast<char>(ch) + "' has extent " +
                   std::to_string(sz) + " and " + std::to_string(dims[k][d]);
          if (dims[k][d] != 1) sz = dims[k][d];
        }
      }
      if (static_cast<int>(count.size()) <= label) count.resize(label + 1, 0);
      ++count[label];
      spec->inputs[k].push_back(label);
      ++d;
    }
  }
  spec->output.clear();
  if (arrow == std::string::npos) {
    for (int e = 0; e < ellRank; ++e) spec->output.push_back(e);
    for (const auto& [ch, label] : letterLabel)  // std::map: ASCII order, as ONNX/numpy sort
      if (count[label] == 1) spec->output.push_back(label);
  } else {
    Term out;
    std::string err = parseTerm(eq.substr(arrow + 2), &out);
    if (!err.empty()) return err;
    std::vector<bool> seen(spec->labelSize.size(), false);
    for (int ch : out.letters) {
      if (ch == -1) {
        for (int e = 0; e < ellRank; ++e) spec->output.push_back(e);
        continue;
      }
      auto it = letterLabel.find(ch);
      if (it == letterLabel.end())
        return std::string("output label '") + static_cast<char>(ch) + "' appears in no operand";
      if (seen[it->second])
        return std::string("output label '") + static_cast<char>(ch) + "' is repeated";
      seen[it->second] = true;
      spec->output.push_back(it->second);
    }
  }
  return "";
}

MG_TENSOR_KERNEL(kEinsum) {
  std::vector<std::vector<int64_t>> dims(nin);
  for (int k = 0; k < nin; ++k) dims[k].assign(in[k].dims, in[k].dims + in[k].rank);
  EinsumSpec spec;
  std::string err = parseEinsum(a.s("equation", ""), dims, &spec);
  if (!err.empty()) return ctx.fail("Einsum: %s", err.c_str());
  size_t nl = spec.labelSize.size();
  // Per operand, per label: the stride to step that label (summed for repeated labels: diagonal;
  // 0 for a broadcast size-1 dimension).
  std::vector<std::vector<int64_t>> stride(nin, std::vector<int64_t>(nl, 0));
  for (int k = 0; k < nin; ++k) {
    int64_t s[kMaxRank];
    stridesOf(in[k], s);
    for (int d = 0; d < in[k].rank; ++d)
      if (in[k].dims[d] != 1 || spec.labelSize[spec.inputs[k][d]] == 1)
        stride[k][spec.inputs[k][d]] += s[d];
  }
  std::vector<int64_t> outStride(nl, 0);
  int64_t s = 1;
  for (int d = static_cast<int>(spec.output.size()) - 1; d >= 0; --d) {
    if (out[0].dims[d] != spec.labelSize[spec.output[d]]) return ctx.fail("Einsum: result shape mismatch");
    outStride[spec.output[d]] = s;
    s *= spec.labelSize[spec.output[d]];
  }
  // Loop order: output labels, then the summed ones.
  std::vector<int> order = spec.output;
  for (size_t l = 0; l < nl; ++l)
    if (std::find(order.begin(), order.end(), static_cast<int>(l)) == order.end())
      order.push_back(static_cast<int>(l));
  int64_t total = out[0].numel();
  std::vector<double> acc(static_cast<size_t>(total), 0.0);
  bool empty = false;
  for (size_t l = 0; l < nl; ++l) empty |= spec.labelSize[l] == 0;
  // Odometer over the labels in `order`, with every operand's offset (and the output's) updated
  // incrementally as a label steps or wraps.
  std::vector<int64_t> idx(nl, 0), off(nin, 0);
  int64_t o = 0;
  while (!empty) {
    double prod = 1;
    for (int k = 0; k < nin; ++k) prod *= readF(in[k], off[k]);
    acc[o] += prod;
    int d = static_cast<int>(order.size()) - 1;
    for (; d >= 0; --d) {
      int l = order[d];
      if (++idx[l] < spec.labelSize[l]) {
        for (int k = 0; k < nin; ++k) off[k] += stride[k][l];
        o += outStride[l];
        break;
      }
      int64_t back = spec.labelSize[l] - 1;
      idx[l] = 0;
      for (int k = 0; k < nin; ++k) off[k] -= back * stride[k][l];
      o -= back * outStride[l];
    }
    if (d < 0) break;
  }
  for (int64_t i = 0; i < total; ++i) writeF(out[0], i, acc[i]);
  return 0;
}

}  // namespace mgrt
