/* Greedy generation with a decoder package, from C: a prefill over the prompt with an empty KV
 * cache, then one token per step, the cache that step returned (present_k/present_v) fed back as
 * the next step's past. The package is compiled from examples/generate/export_decoder.py's
 * model with
 *   magnetoc compile model.onnx --name decoder --dynamic seq=1..8 --dynamic past=0..64 --shared
 * and this program linked against its libdecoder.so (or libdecoder.a) and decoder.h.
 *
 *   generate DIMS_FILE PROMPT_FILE TOKENS [THREADS [bind|copy]]
 * DIMS_FILE: "layers heads head_dim vocab max_seq max_past" (export_decoder.py's dims.txt);
 * PROMPT_FILE: the prompt's token ids. Prints the TOKENS generated ids on one line.
 * bind (the default): each cache output is bound to one buffer with room for the longest cache
 * (decoder_bind_kv, docs/ABI.md "KV-cache binding"), so a step writes only its new positions
 * there; copy: a present buffer per step, swapped with the past (the whole cache written again
 * every step). Both print the same tokens. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"

static decoder_model* model;

static void check(decoder_status s, const char* what) {
  if (s == decoder_OK) return;
  fprintf(stderr, "generate: %s failed: %s\n", what, decoder_last_error(model));
  exit(1);
}

static void* alloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "generate: out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: generate DIMS_FILE PROMPT_FILE TOKENS [THREADS]\n");
    return 2;
  }
  long layers, heads, hd, vocab, maxSeq, maxPast;
  FILE* f = fopen(argv[1], "r");
  if (!f || fscanf(f, "%ld %ld %ld %ld %ld %ld", &layers, &heads, &hd, &vocab, &maxSeq, &maxPast) != 6) {
    fprintf(stderr, "generate: cannot read six numbers from %s\n", argv[1]);
    return 1;
  }
  fclose(f);
  int64_t prompt[64];
  int promptLen = 0;
  f = fopen(argv[2], "r");
  if (!f) {
    fprintf(stderr, "generate: cannot open %s\n", argv[2]);
    return 1;
  }
  long t;
  while (promptLen < 64 && fscanf(f, "%ld", &t) == 1) prompt[promptLen++] = t;
  fclose(f);
  const int tokens = atoi(argv[3]);
  if (promptLen < 1 || promptLen > maxSeq || tokens < 1 || promptLen + tokens - 1 > maxPast) {
    fprintf(stderr, "generate: a prompt of 1..%ld tokens and at most %ld positions in all, please\n",
            maxSeq, maxPast);
    return 1;
  }

  check(decoder_create(&model, NULL), "decoder_create");
  check(decoder_set_num_threads(model, argc > 4 ? atoi(argv[4]) : 1), "decoder_set_num_threads");
  const int bind = argc <= 5 || strcmp(argv[5], "copy") != 0;

  /* copy: two buffers per tensor (past and present), each for the longest cache. bind: one per
   * tensor, [layers, 1, heads, capacity, head_dim], bound to output k + 1 (present_k, present_v)
   * and its past input k + 1; the run then reads and writes the cache there. */
  const int64_t capacity = maxPast + maxSeq;
  const size_t cacheFloats = (size_t)layers * heads * capacity * hd;
  float* past[2] = {alloc(cacheFloats * sizeof(float)), alloc(cacheFloats * sizeof(float))};
  float* present[2] = {NULL, NULL};
  for (int k = 0; k < 2; ++k) {
    if (bind) {
      if (decoder_kv_input(k + 1) != k + 1 || decoder_kv_buffer_bytes(model, k + 1, capacity) != cacheFloats * sizeof(float)) {
        fprintf(stderr, "generate: output %d is not a KV-cache output of input %d of this layout: %s\n", k + 1,
                k + 1, decoder_last_error(NULL));
        return 1;
      }
      check(decoder_bind_kv(model, k + 1, k + 1, past[k], capacity), "decoder_bind_kv");
    } else {
      present[k] = alloc(cacheFloats * sizeof(float));
    }
  }
  float* logits = alloc((size_t)maxSeq * vocab * sizeof(float));
  int64_t ids[64];
  memcpy(ids, prompt, sizeof(int64_t) * promptLen);
  int64_t seq = promptLen, pos = 0; /* pos: positions already in the cache */

  for (int step = 0; step < tokens; ++step) {
    const int64_t idsDims[2] = {1, seq};
    const int64_t cacheDims[5] = {layers, 1, heads, pos, hd};
    check(decoder_set_input_dims(model, 0, idsDims, 2), "decoder_set_input_dims(input_ids)");
    check(decoder_set_input_dims(model, 1, cacheDims, 5), "decoder_set_input_dims(past_k)");
    check(decoder_set_input_dims(model, 2, cacheDims, 5), "decoder_set_input_dims(past_v)");
    /* Bound, the cache entries are ignored: the package uses the bound buffers. */
    const void* in[3] = {ids, bind ? NULL : past[0], bind ? NULL : past[1]};
    void* out[3] = {logits, present[0], present[1]};
    check(decoder_run(model, in, out), "decoder_run");
    /* The next token: the largest logit of the last position (the first on ties). */
    const float* last = logits + (size_t)(seq - 1) * vocab;
    int64_t best = 0;
    for (int64_t v = 1; v < vocab; ++v)
      if (last[v] > last[best]) best = v;
    printf("%s%lld", step ? " " : "", (long long)best);
    /* present (pos + seq positions) becomes the next step's past (bound: it is there already). */
    for (int k = 0; k < 2 && !bind; ++k) {
      float* tmp = past[k];
      past[k] = present[k];
      present[k] = tmp;
    }
    pos += seq;
    seq = 1;
    ids[0] = best;
  }
  printf("\n");
  decoder_destroy(model);
  for (int k = 0; k < 2; ++k) free(past[k]), free(present[k]);
  free(logits);
  return 0;
}
