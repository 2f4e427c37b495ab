// Drives one generated package (any model) the ways docs/ABI.md promises are safe, and the ways
// it promises are caught, for scripts/sanitize.sh, which builds it with the package's sources
// under ThreadSanitizer or AddressSanitizer+UBSan:
//
//   threads_test threads [WEIGHTS|-]   several handles created and run concurrently from several
//                                      threads (each with its own thread pool), every output
//                                      byte-identical to a single-threaded reference run; then
//                                      three threads hammer ONE handle: each call must either
//                                      run correctly or be refused as busy, with a message.
//   threads_test leak [WEIGHTS|-]      create/run/destroy in a loop (LeakSanitizer reports leaks
//                                      at exit).
//   threads_test misuse WEIGHTS        null pointers, bad indices, bad thread counts, use after
//                                      destroy, double destroy, and weights files that are
//                                      missing, a folder, truncated, too long or corrupt: each
//                                      must give its status and a message, never a crash.
//
// The package is chosen at compile time: -DPKG=tiny -include tiny.h. Inputs are seeded
// pseudo-random values of each input's element type.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#ifndef PKG
#error "compile with -DPKG=<package name> -include <package name>.h"
#endif
#define MG_CAT2(a, b) a##b
#define MG_CAT(a, b) MG_CAT2(a, b)
#define API(f) MG_CAT(PKG, MG_CAT(_, f))
#define STATUS(s) MG_CAT(PKG, MG_CAT(_, s))
using Model = API(model);
using Status = API(status);

namespace {

int failures = 0;

#define EXPECT(cond)                                                             \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "threads_test: line %d: %s\n", __LINE__, #cond);      \
      ++failures;                                                                \
    }                                                                            \
  } while (0)

// The call failed with `want` and left a non-empty message (on the handle, or on the thread).
#define EXPECT_REFUSED(call, want, handle)                                          \
  do {                                                                              \
    Status s_ = (call);                                                             \
    const char* msg_ = API(last_error)(handle);                                     \
    if (s_ != (want) || !msg_ || !*msg_) {                                          \
      std::fprintf(stderr, "threads_test: line %d: %s gave %d (%s), expected %d\n", \
                   __LINE__, #call, static_cast<int>(s_), msg_ ? msg_ : "(null)",  \
                   static_cast<int>(want));                                         \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

struct Buffers {
  std::vector<std::vector<unsigned char>> in, out;
  std::vector<const void*> inPtr;
  std::vector<void*> outPtr;

  Buffers() {
    for (int i = 0; i < API(num_inputs)(); ++i) in.emplace_back(API(input_bytes)(i));
    for (int i = 0; i < API(num_outputs)(); ++i) out.emplace_back(API(output_bytes)(i), 0xAB);
    for (auto& b : in) inPtr.push_back(b.data());
    for (auto& b : out) outPtr.push_back(b.data());
  }
  // Seeded values that are valid for the element type (small integers, booleans 0/1).
  void fill(uint32_t seed) {
    for (int i = 0; i < API(num_inputs)(); ++i) {
      uint32_t x = seed * 2654435761u + static_cast<uint32_t>(i) + 1;
      auto next = [&x] { return x = x * 1664525u + 1013904223u; };
      unsigned char* p = in[i].data();
      size_t bytes = in[i].size();
      switch (API(input_dtype)(i)) {
        case 1:
          for (size_t k = 0; k + 4 <= bytes; k += 4) {
            float v = static_cast<float>(next() >> 8) / 16777216.0f * 2.0f - 1.0f;
            std::memcpy(p + k, &v, 4);
          }
          break;
        case 6:
          for (size_t k = 0; k + 4 <= bytes; k += 4) {
            int32_t v = static_cast<int32_t>(next() >> 29);
            std::memcpy(p + k, &v, 4);
          }
          break;
        case 7:
          for (size_t k = 0; k + 8 <= bytes; k += 8) {
            int64_t v = static_cast<int64_t>(next() >> 29);
            std::memcpy(p + k, &v, 8);
          }
          break;
        case 9:
          for (size_t k = 0; k < bytes; ++k) p[k] = static_cast<unsigned char>(next() >> 31);
          break;
        default:
          for (size_t k = 0; k < bytes; ++k) p[k] = static_cast<unsigned char>(next() >> 28);
      }
    }
  }
  bool same(const Buffers& o) const { return out == o.out; }
};

const char* weightsArg(int argc, char** argv) {
  return argc > 2 && std::strcmp(argv[2], "-") != 0 ? argv[2] : nullptr;
}

Model* create(const char* weights) {
  Model* m = nullptr;
  Status s = API(create)(&m, weights);
  if (s != STATUS(OK)) {
    std::fprintf(stderr, "threads_test: create failed: %s\n", API(last_error)(nullptr));
    std::exit(2);
  }
  return m;
}

// kSeeds input sets; the reference outputs come from one handle on one thread.
constexpr int kSeeds = 3;
constexpr int kHandles = 4;  // concurrent handles, one thread each
constexpr int kRunsPerThread = 6;

int runThreads(const char* weights) {
  std::vector<Buffers> ref(kSeeds);
  Model* m = create(weights);
  EXPECT(API(set_num_threads)(m, 1) == STATUS(OK));
  for (int s = 0; s < kSeeds; ++s) {
    ref[s].fill(s);
    EXPECT(API(run)(m, ref[s].inPtr.data(), ref[s].outPtr.data()) == STATUS(OK));
  }
  API(destroy)(m);

  // Several handles, created and used on their own threads, each with a pool of 2 workers.
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kHandles; ++t)
    threads.emplace_back([&, t] {
      Model* h = nullptr;
      if (API(create)(&h, weights) != STATUS(OK) || API(set_num_threads)(h, 2) != STATUS(OK)) {
        ++errors;
        return;
      }
      Buffers b;
      for (int r = 0; r < kRunsPerThread; ++r) {
        int s = (t + r) % kSeeds;
        b.fill(s);
        if (API(run)(h, b.inPtr.data(), b.outPtr.data()) != STATUS(OK)) ++errors;
        else if (!b.same(ref[s])) ++mismatches;
      }
      API(destroy)(h);
    });
  for (auto& th : threads) th.join();
  EXPECT(errors == 0);
  EXPECT(mismatches == 0);

  // Handles created on the main thread, each handed to another thread.
  std::vector<Model*> handles;
  for (int t = 0; t < kHandles; ++t) handles.push_back(create(weights));
  threads.clear();
  for (int t = 0; t < kHandles; ++t)
    threads.emplace_back([&, t] {
      Buffers b;
      b.fill(t % kSeeds);
      if (API(run)(handles[t], b.inPtr.data(), b.outPtr.data()) != STATUS(OK)) ++errors;
      else if (!b.same(ref[t % kSeeds])) ++mismatches;
    });
  for (auto& th : threads) th.join();
  for (Model* h : handles) API(destroy)(h);
  EXPECT(errors == 0);
  EXPECT(mismatches == 0);

  // One handle, three threads at once: misuse the ABI detects. Every call runs correctly or is
  // refused as busy with a message; at least one runs.
  Model* shared = create(weights);
  std::atomic<int> ran{0}, refused{0}, wrong{0};
  threads.clear();
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      Buffers b;
      b.fill(t % kSeeds);
      for (int r = 0; r < 20; ++r) {
        Status s = API(run)(shared, b.inPtr.data(), b.outPtr.data());
        if (s == STATUS(OK)) {
          ++ran;
          if (!b.same(ref[t % kSeeds])) ++wrong;
        } else {
          const char* msg = API(last_error)(nullptr);
          if (s == STATUS(ERR_INVALID_ARGUMENT) && msg && std::strstr(msg, "another thread"))
            ++refused;
          else
            ++wrong;
        }
      }
    });
  for (auto& th : threads) th.join();
  API(destroy)(shared);
  EXPECT(ran > 0);
  EXPECT(wrong == 0);
  std::printf("threads_test threads: %d handles x %d runs on their own threads, %d handed over, "
              "shared handle: %d runs, %d refused as busy; %s\n",
              kHandles, kRunsPerThread, kHandles, ran.load(), refused.load(),
              failures ? "FAILED" : "outputs identical");
  return failures ? 1 : 0;
}

int runLeak(const char* weights) {
  Buffers ref, b;
  ref.fill(1);
  b.fill(1);
  const int kLoops = 40;
  for (int i = 0; i < kLoops; ++i) {
    Model* m = create(weights);
    EXPECT(API(set_num_threads)(m, 1 + i % 2) == STATUS(OK));
    EXPECT(API(run)(m, b.inPtr.data(), b.outPtr.data()) == STATUS(OK));
    if (i == 0) ref.out = b.out;
    EXPECT(b.same(ref));
    API(destroy)(m);
  }
  std::printf("threads_test leak: %d create/run/destroy cycles%s\n", kLoops,
              failures ? " FAILED" : "");
  return failures ? 1 : 0;
}

std::string readFile(const char* path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void writeFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

int runMisuse(const char* weights) {
  const Status kBad = STATUS(ERR_INVALID_ARGUMENT), kWeights = STATUS(ERR_WEIGHTS);
  Buffers b;
  b.fill(0);
  // Introspection with bad indices.
  EXPECT(API(input_name)(-1) == nullptr && API(input_dims)(API(num_inputs)()) == nullptr);
  EXPECT(API(output_rank)(99) == -1 && API(output_bytes)(-3) == 0 && API(input_dtype)(1000) == -1);
  EXPECT(std::strstr(API(last_error)(nullptr), "out of range") != nullptr);
  // Null pointers.
  EXPECT_REFUSED(API(create)(nullptr, weights), kBad, nullptr);
  EXPECT_REFUSED(API(run)(nullptr, b.inPtr.data(), b.outPtr.data()), kBad, nullptr);
  EXPECT_REFUSED(API(set_num_threads)(nullptr, 2), kBad, nullptr);
  Model* m = create(weights);
  if (API(num_inputs)() > 0) {
    EXPECT_REFUSED(API(run)(m, nullptr, b.outPtr.data()), kBad, m);
    std::vector<const void*> nullIn(b.inPtr.size(), nullptr);
    if (API(input_bytes)(0) > 0)
      EXPECT_REFUSED(API(run)(m, nullIn.data(), b.outPtr.data()), kBad, m);
  }
  if (API(num_outputs)() > 0) {
    EXPECT_REFUSED(API(run)(m, b.inPtr.data(), nullptr), kBad, m);
    std::vector<void*> nullOut(b.outPtr.size(), nullptr);
    if (API(output_bytes)(0) > 0)
      EXPECT_REFUSED(API(run)(m, b.inPtr.data(), nullOut.data()), kBad, m);
  }
  EXPECT_REFUSED(API(set_num_threads)(m, 0), kBad, m);
  EXPECT_REFUSED(API(set_num_threads)(m, -4), kBad, m);
  // The handle still works after refused calls.
  EXPECT(API(run)(m, b.inPtr.data(), b.outPtr.data()) == STATUS(OK));
  // Use after destroy and double destroy are detected (the registry of live handles).
  API(destroy)(m);
  EXPECT_REFUSED(API(run)(m, b.inPtr.data(), b.outPtr.data()), kBad, nullptr);
  EXPECT_REFUSED(API(set_num_threads)(m, 1), kBad, nullptr);
  EXPECT(API(last_error)(m) != nullptr);
  API(destroy)(m);
  EXPECT(std::strstr(API(last_error)(nullptr), "not a live handle") != nullptr);
  API(destroy)(nullptr);

  // Weights files: missing, a folder, truncated, one byte too long, one byte flipped.
  if (weights) {
    std::string data = readFile(weights), tmp = std::string(weights) + ".threads_test";
    Model* w = nullptr;
    EXPECT_REFUSED(API(create)(&w, (tmp + ".missing").c_str()), kWeights, nullptr);
    EXPECT(w == nullptr);
    EXPECT_REFUSED(API(create)(&w, "."), kWeights, nullptr);
    if (!data.empty()) {
      writeFile(tmp, data.substr(0, data.size() / 2));
      EXPECT_REFUSED(API(create)(&w, tmp.c_str()), kWeights, nullptr);
      writeFile(tmp, data + "x");
      EXPECT_REFUSED(API(create)(&w, tmp.c_str()), kWeights, nullptr);
      std::string flipped = data;
      flipped[flipped.size() / 2] ^= 0x10;
      writeFile(tmp, flipped);
      EXPECT_REFUSED(API(create)(&w, tmp.c_str()), kWeights, nullptr);
      EXPECT(std::strstr(API(last_error)(nullptr), "checksum") != nullptr);
      writeFile(tmp, "");
      EXPECT_REFUSED(API(create)(&w, tmp.c_str()), kWeights, nullptr);
    }
    std::remove(tmp.c_str());
    EXPECT(w == nullptr);
    // The intact file still loads.
    Model* ok = create(weights);
    EXPECT(API(run)(ok, b.inPtr.data(), b.outPtr.data()) == STATUS(OK));
    API(destroy)(ok);
  }
  std::printf("threads_test misuse: %s\n",
              failures ? "FAILED" : "every misuse refused with a message");
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "threads") return runThreads(weightsArg(argc, argv));
  if (mode == "leak") return runLeak(weightsArg(argc, argv));
  if (mode == "misuse" && argc > 2) return runMisuse(argv[2]);
  std::fprintf(stderr, "usage: threads_test threads|leak [WEIGHTS|-] | misuse WEIGHTS\n");
  return 2;
}
