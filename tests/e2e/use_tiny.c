/* Links the generated tiny package into a C program: runs it on x.bin, compares with y.bin, and
 * checks that bad arguments get a status and a message instead of a crash.
 * usage: use_tiny X.bin Y.bin [WEIGHTS_PATH|-] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiny.h"

#define EXPECT(c)                                            \
  do {                                                       \
    if (!(c)) {                                              \
      fprintf(stderr, "use_tiny: line %d: %s\n", __LINE__, #c); \
      return 1;                                              \
    }                                                        \
  } while (0)

static void* readAll(const char* path, size_t n) {
  FILE* f = fopen(path, "rb");
  void* p = malloc(n);
  if (!f || fread(p, 1, n, f) != n) return NULL;
  fclose(f);
  return p;
}

int main(int argc, char** argv) {
  const char* weights = argc > 3 && strcmp(argv[3], "-") != 0 ? argv[3] : NULL;
  EXPECT(argc >= 3);
  EXPECT(tiny_num_inputs() == 1 && tiny_num_outputs() == 1);
  EXPECT(strcmp(tiny_input_name(0), "x") == 0 && strcmp(tiny_output_name(0), "y") == 0);
  EXPECT(tiny_input_rank(0) == 4 && tiny_input_dims(0)[1] == 3 && tiny_input_dtype(0) == 1);
  EXPECT(tiny_output_bytes(0) == 4 * 4 * 8 * 8);
  EXPECT(tiny_input_name(7) == NULL && tiny_input_rank(-1) == -1 && tiny_output_dims(1) == NULL);
  EXPECT(tiny_create(NULL, weights) == tiny_ERR_INVALID_ARGUMENT);

  tiny_model* m = NULL;
  tiny_status s = tiny_create(&m, weights);
  if (s != tiny_OK) {
    fprintf(stderr, "use_tiny: create: %s\n", tiny_last_error(NULL));
    return 2;
  }
  float* x = (float*)readAll(argv[1], tiny_input_bytes(0));
  float* want = (float*)readAll(argv[2], tiny_output_bytes(0));
  EXPECT(x && want);
  float y[4 * 8 * 8];
  const void* in[1] = {x};
  void* out[1] = {y};
  EXPECT(tiny_run(NULL, in, out) == tiny_ERR_INVALID_ARGUMENT);
  EXPECT(tiny_run(m, NULL, out) == tiny_ERR_INVALID_ARGUMENT);
  EXPECT(strlen(tiny_last_error(m)) > 0);
  const void* nullIn[1] = {NULL};
  EXPECT(tiny_run(m, nullIn, out) == tiny_ERR_INVALID_ARGUMENT);
  EXPECT(tiny_set_num_threads(m, 0) == tiny_ERR_INVALID_ARGUMENT);
  EXPECT(tiny_set_num_threads(m, 2) == tiny_OK);
  EXPECT(tiny_run(m, in, out) == tiny_OK);
  for (int i = 0; i < 4 * 8 * 8; ++i)
    if (fabsf(y[i] - want[i]) > 1e-4f + 1e-3f * fabsf(want[i])) {
      fprintf(stderr, "use_tiny: y[%d] = %g, expected %g\n", i, y[i], want[i]);
      return 1;
    }
  /* The dynamic-shape calls on a static package: no symbols, exactly its own dims accepted (the
   * current shapes stay the model's), any other refused with a message naming input and dim. */
  EXPECT(tiny_num_symbols() == 0 && tiny_symbol_name(0) == NULL);
  EXPECT(tiny_symbol_range(0, NULL, NULL) == tiny_ERR_INVALID_ARGUMENT);
  {
    int64_t own[4] = {1, 3, 8, 8}, other[4] = {2, 3, 8, 8};
    EXPECT(tiny_set_input_dims(m, 0, own, 4) == tiny_OK);
    EXPECT(tiny_set_input_dims(m, 0, other, 4) == tiny_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(tiny_last_error(m), "input 0 ('x') dim 0 is static: it must be 1, got 2") != NULL);
    EXPECT(tiny_set_input_dims(m, 0, own, 3) == tiny_ERR_INVALID_ARGUMENT);
    EXPECT(tiny_set_input_dims(m, 1, own, 4) == tiny_ERR_INVALID_ARGUMENT);
    EXPECT(tiny_set_input_dims(m, 0, NULL, 4) == tiny_ERR_INVALID_ARGUMENT);
    EXPECT(tiny_model_output_bytes(m, 0) == tiny_output_bytes(0));
    EXPECT(tiny_model_input_dims(m, 0)[0] == 1 && tiny_model_output_dims(m, 0)[1] == 4);
    EXPECT(tiny_model_input_dims(NULL, 0) == NULL && tiny_model_output_bytes(m, 1) == 0);
    EXPECT(tiny_run(m, in, out) == tiny_OK);
  }
  /* A second handle at the same time, then a destroyed handle is detected, not used. */
  tiny_model* m2 = NULL;
  EXPECT(tiny_create(&m2, weights) == tiny_OK);
  EXPECT(tiny_run(m2, in, out) == tiny_OK);
  tiny_destroy(m2);
  tiny_destroy(m);
  EXPECT(tiny_run(m, in, out) == tiny_ERR_INVALID_ARGUMENT);
  tiny_destroy(m);
  printf("use_tiny: ok\n");
  return 0;
}
