// classify: links a Magneto-generated image classifier into an application.
//
// The package is any model compiled with `magnetoc compile MODEL.onnx --name classifier -o DIR`
// whose first input is an image tensor (N x C x H x W, float) and whose first output holds class
// scores. The program prints what the package expects (the introspection functions), runs it on
// an input file (raw float32, as many bytes as classifier_input_bytes(0)) or on a seeded random
// image, and prints the top-5 classes and the run time.
//
//   classify [INPUT.raw] [--runs N] [--threads N]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "classifier.h"

namespace {

std::string shapeOf(int rank, const int64_t* dims) {
  std::string s;
  for (int i = 0; i < rank; ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return rank == 0 ? "scalar" : s;
}

// Every classifier_* call returns a status; a failure carries a message.
bool ok(classifier_status s, const classifier_model* m, const char* what) {
  if (s == classifier_OK) return true;
  std::fprintf(stderr, "classify: %s failed: %s\n", what, classifier_last_error(m));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const char* inputPath = nullptr;
  int runs = 10, threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else inputPath = argv[i];
  }
  if (runs < 1 || threads < 1) {
    std::fprintf(stderr, "usage: classify [INPUT.raw] [--runs N>=1] [--threads N>=1]\n");
    return 2;
  }

  std::printf("model: %d input(s), %d output(s)\n", classifier_num_inputs(), classifier_num_outputs());
  for (int i = 0; i < classifier_num_inputs(); ++i)
    std::printf("  input  %d: %s %s (ONNX dtype %d)\n", i, classifier_input_name(i),
                shapeOf(classifier_input_rank(i), classifier_input_dims(i)).c_str(),
                classifier_input_dtype(i));
  for (int i = 0; i < classifier_num_outputs(); ++i)
    std::printf("  output %d: %s %s (ONNX dtype %d)\n", i, classifier_output_name(i),
                shapeOf(classifier_output_rank(i), classifier_output_dims(i)).c_str(),
                classifier_output_dtype(i));
  if (classifier_num_inputs() != 1 || classifier_input_dtype(0) != 1 || classifier_output_dtype(0) != 1) {
    std::fprintf(stderr, "classify: expects one float input and a float first output\n");
    return 2;
  }

  // The input: a raw float32 file of exactly the right size, or a seeded random image.
  std::vector<float> image(classifier_input_bytes(0) / sizeof(float));
  if (inputPath) {
    std::FILE* f = std::fopen(inputPath, "rb");
    if (!f) {
      std::fprintf(stderr, "classify: cannot open %s\n", inputPath);
      return 1;
    }
    size_t got = std::fread(image.data(), 1, classifier_input_bytes(0), f);
    bool extra = std::fgetc(f) != EOF;
    std::fclose(f);
    if (got != classifier_input_bytes(0) || extra) {
      std::fprintf(stderr, "classify: %s must hold exactly %zu bytes (float32 %s)\n", inputPath,
                   classifier_input_bytes(0),
                   shapeOf(classifier_input_rank(0), classifier_input_dims(0)).c_str());
      return 1;
    }
  } else {
    std::mt19937 gen(0);
    std::normal_distribution<float> normal;
    for (float& x : image) x = normal(gen);
  }

  classifier_model* model = nullptr;
  if (!ok(classifier_create(&model, nullptr), nullptr, "create")) return 1;
  if (!ok(classifier_set_num_threads(model, threads), model, "set_num_threads")) return 1;

  std::vector<std::vector<uint8_t>> outputs(classifier_num_outputs());
  std::vector<void*> outPtrs;
  for (int i = 0; i < classifier_num_outputs(); ++i) {
    outputs[i].resize(classifier_output_bytes(i));
    outPtrs.push_back(outputs[i].data());
  }
  const void* inPtrs[1] = {image.data()};

  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (!ok(classifier_run(model, inPtrs, outPtrs.data()), model, "run")) {
      classifier_destroy(model);
      return 1;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  classifier_destroy(model);

  // Top-5 of the first output's first row.
  const float* scores = reinterpret_cast<const float*>(outputs[0].data());
  size_t classes = classifier_output_bytes(0) / sizeof(float);
  const int rank = classifier_output_rank(0);
  if (rank >= 2) classes = static_cast<size_t>(classifier_output_dims(0)[rank - 1]);
  std::vector<size_t> idx(classes);
  std::iota(idx.begin(), idx.end(), 0);
  size_t k = std::min<size_t>(5, classes);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                    [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  std::printf("top-%zu:", k);
  for (size_t i = 0; i < k; ++i) std::printf(" %zu (%.4f)", idx[i], scores[idx[i]]);
  std::sort(ms.begin(), ms.end());
  std::printf("\nmedian run: %.3f ms over %d run(s), %d thread(s)\n", ms[ms.size() / 2], runs, threads);
  return 0;
}
