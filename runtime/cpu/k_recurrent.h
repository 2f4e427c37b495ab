// LSTM, GRU and RNN as one parsed problem: the operands, attributes and results of a node checked
// once (shapes, sequence_lens, activations, clip), shared by the reference kernels
// (k_recurrent.cpp, the equations one element at a time in double) and the fast float32 kernels
// (f_recurrent.cpp, the same equations over GEMMs), so both accept and refuse exactly the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "k_recurrent_act.h"
#include "mg_runtime.h"

namespace mgrt {

enum class RnnCell { kLstm, kGru, kRnn };

template <typename T>
struct RecurrentProblem {
  RnnCell cell = RnnCell::kRnn;
  const char* op = "";
  std::string dir;  // forward, reverse, bidirectional
  int64_t nd = 1, seq = 0, batch = 0, isz = 0, h = 0, gh = 0;  // gh = gates * h
  bool layout1 = false, inputForget = false, linearBeforeReset = false;
  double clip = 0;  // +inf without the attribute
  size_t perDir = 0;  // activations per direction
  std::vector<RnnActFn> acts;
  std::vector<int64_t> lens;  // per batch row
  const T *x = nullptr, *w = nullptr, *r = nullptr, *bias = nullptr;
  const T *h0 = nullptr, *c0 = nullptr, *peep = nullptr;
  T *Y = nullptr, *Yh = nullptr, *Yc = nullptr;  // Y zeroed by the parser

  bool reverse(int64_t d) const { return dir == "reverse" || d == 1; }
  // Row of X (of isz elements) holding time step t of batch row b.
  int64_t xRow(int64_t t, int64_t b) const { return layout1 ? b * seq + t : t * batch + b; }
  int64_t stateIdx(int64_t d, int64_t b) const { return layout1 ? (b * nd + d) * h : (d * batch + b) * h; }
  int64_t yIdx(int64_t t, int64_t d, int64_t b) const {
    return layout1 ? ((b * seq + t) * nd + d) * h : ((t * nd + d) * batch + b) * h;
  }
  double clipv(double v) const { return v < -clip ? -clip : (v > clip ? clip : v); }
};

// Checks and parses a node's operands and attributes; 0, or non-zero with the message in ctx.
template <typename T>
int parseRecurrent(RnnCell cell, const Attrs& a, const Tensor* in, int nin, Tensor* out, int nout,
                   Ctx& ctx, RecurrentProblem<T>* problem);

}  // namespace mgrt
