/* One decode step (one new token) of a KV-cache decoder package named `dstep` (tools/bench/
 * decode_kv.sh compiles tools/bench/decode_kv_export.py's model so), timed at a given past length.
 *
 *   decode_kv_step PAST copy|bind RUNS THREADS
 *
 * copy: the step reads past_k/past_v from their buffers and writes present_k/present_v (past + 1
 * positions) into two others: the package's Concat, Gather and stack copy the whole cache.
 * bind: present_k/present_v are bound to one buffer each with capacity PAST + 1 (dstep_bind_kv):
 * the step reads the past there and writes only the new position.
 * The cache holds the same seeded values in both modes, so the logits must be equal bit for bit:
 * their FNV-1a hash is printed (`logits_fnv=`). After 3 warm-up runs, RUNS timed runs (each the
 * same step: the bound step writes the same position again); the last line is `median_ms=X`. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dstep.h"

static dstep_model* model;

static void check(dstep_status s, const char* what) {
  if (s == dstep_OK) return;
  fprintf(stderr, "decode_kv_step: %s failed: %s\n", what, dstep_last_error(model));
  exit(1);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc != 5 || (strcmp(argv[2], "copy") != 0 && strcmp(argv[2], "bind") != 0)) {
    fprintf(stderr, "usage: decode_kv_step PAST copy|bind RUNS THREADS\n");
    return 2;
  }
  const int64_t past = atoll(argv[1]);
  const int bind = strcmp(argv[2], "bind") == 0, runs = atoi(argv[3]);
  check(dstep_create(&model, NULL), "dstep_create");
  check(dstep_set_num_threads(model, atoi(argv[4])), "dstep_set_num_threads");
  const int64_t* maxDims = dstep_input_dims(1); /* [layers, 1, heads, max past, head_dim] */
  const int64_t layers = maxDims[0], heads = maxDims[2], hd = maxDims[4];
  const int64_t vocab = dstep_output_dims(0)[2];
  const int64_t ids[1] = {7}, idsDims[2] = {1, 1}, cacheDims[5] = {layers, 1, heads, past, hd};
  check(dstep_set_input_dims(model, 0, idsDims, 2), "set_input_dims(input_ids)");
  check(dstep_set_input_dims(model, 1, cacheDims, 5), "set_input_dims(past_k)");
  check(dstep_set_input_dims(model, 2, cacheDims, 5), "set_input_dims(past_v)");
  const int64_t cap = past + 1, outer = layers * heads;
  float* cache[2];
  float* present[2] = {NULL, NULL};
  unsigned seed = 12345;
  for (int k = 0; k < 2; ++k) {
    /* copy: [layers, 1, heads, past, hd] densely; bind: the same values at capacity past + 1 */
    const int64_t rows = bind ? cap : past;
    cache[k] = calloc((size_t)(outer * rows * hd) + 1, sizeof(float));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < past * hd; ++i) {
        seed = seed * 1103515245u + 12345u;
        cache[k][o * rows * hd + i] = (float)((int)(seed >> 16 & 0x7fff) - 16384) / 16384.0f;
      }
    if (bind) check(dstep_bind_kv(model, k + 1, k + 1, cache[k], cap), "dstep_bind_kv");
    else present[k] = malloc((size_t)(outer * cap * hd) * sizeof(float));
  }
  float* logits = malloc((size_t)vocab * sizeof(float));
  const void* in[3] = {ids, bind ? NULL : cache[0], bind ? NULL : cache[1]};
  void* out[3] = {logits, present[0], present[1]};
  for (int i = 0; i < 3; ++i) check(dstep_run(model, in, out), "dstep_run");
  double* ms = malloc(sizeof(double) * (size_t)(runs > 0 ? runs : 1));
  for (int i = 0; i < runs; ++i) {
    const double t0 = now_ms();
    check(dstep_run(model, in, out), "dstep_run");
    ms[i] = now_ms() - t0;
  }
  qsort(ms, (size_t)runs, sizeof(double), cmp);
  uint64_t h = 0xcbf29ce484222325ull;
  const unsigned char* b = (const unsigned char*)logits;
  for (size_t i = 0; i < (size_t)vocab * sizeof(float); ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  printf("past=%lld mode=%s runs=%d min_ms=%.4f logits_fnv=%016llx\n", (long long)past, argv[2], runs, ms[0],
         (unsigned long long)h);
  printf("median_ms=%.4f\n", runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2);
  dstep_destroy(model);
  return 0;
}
