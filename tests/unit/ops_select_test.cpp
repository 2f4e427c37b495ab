// Selection op family (NonMaxSuppression, Unique, Compress, TfIdfVectorizer): shape inference
// from the constant operands that decide the extents, the bounds and data-dependent dims of
// run-time ones, attribute errors, the reference kernels against hand-computed values, and the GPU targets'
// refusal by name.
#include <gtest/gtest.h>

#include <string>

#include "gpu_lowering_test_util.h"
#include "magneto/ir/op_schema.h"
#include "magneto/ir/text.h"
#include "magneto/ir/verifier.h"
#include "mg_runtime.h"
#include "op_test_util.h"

namespace magneto {
namespace {

using testing::evalText;
using testing::expectNear;
using testing::inferError;
using testing::values;

// ---- NonMaxSuppression ----
// Three unit boxes in one class: box 1 is box 0 shifted by 0.1 (IOU 0.9 / 1.1 = 0.818), box 2 is
// far away. Scores 0.9, 0.8, 0.7.
std::string nmsGraph(const std::string& boxes, const std::string& operands,
                     const std::string& attrs = "") {
  return "graph @t {\n  const %b : f32[1,3,4] = dense<" + boxes +
         ">\n"
         "  const %s : f32[1,1,3] = dense<[0.9, 0.8, 0.7]>\n"
         "  const %m : i64[1] = dense<[3]>\n"
         "  const %m1 : i64[1] = dense<[1]>\n"
         "  const %iou : f32[1] = dense<[0.5]>\n"
         "  const %iou9 : f32[] = dense<[0.9]>\n"
         "  const %st : f32[1] = dense<[0.7]>\n"
         "  %y = NonMaxSuppression(" +
         operands + ")" + attrs + "\n  output %y\n}\n";
}
const char* kCorners = "[0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 10, 1, 11]";

std::vector<int64_t> nms(const std::string& operands, const std::string& attrs = "",
                         const char* boxes = kCorners) {
  auto r = evalText(nmsGraph(boxes, operands, attrs));
  if (!r.count("y")) return {99};
  EXPECT_EQ(r["y"].dims(), (Dims{r["y"].numel() / 3, 3}));
  return values<int64_t>(r["y"]);
}

TEST(SelectNMS, IouSuppressesAndThresholds) {
  // IOU 0.818 > 0.5: box 1 suppressed by box 0.
  EXPECT_EQ(nms("%b, %s, %m, %iou"), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
  // 0.818 <= 0.9: all three kept, by descending score.
  EXPECT_EQ(nms("%b, %s, %m, %iou9"), (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 0, 0, 2}));
  // At most one per class.
  EXPECT_EQ(nms("%b, %s, %m1, %iou9"), (std::vector<int64_t>{0, 0, 0}));
  // The score threshold is strict: box 2's 0.7 is not above 0.7.
  EXPECT_EQ(nms("%b, %s, %m, %iou9, %st"), (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
  // Flipped corners are the same boxes.
  EXPECT_EQ(nms("%b, %s, %m, %iou", "", "[1, 1, 0, 0, 0, 1.1, 1, 0.1, 1, 11, 0, 10]"),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
  // Center format [xc, yc, w, h] of the same boxes.
  EXPECT_EQ(nms("%b, %s, %m, %iou", " {center_point_box = 1}",
                "[0.5, 0.5, 1, 1, 0.6, 0.5, 1, 1, 10.5, 0.5, 1, 1]"),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
  // Without max_output_boxes_per_class (default 0) nothing is selected: [0, 3].
  EXPECT_EQ(nms("%b, %s"), (std::vector<int64_t>{}));
}

TEST(SelectNMS, BatchesAndClassesInOrder) {
  // Batch 0 class 0 prefers box 1, class 1 box 0; batch 1 = batch 0 with one box per class.
  auto r = evalText(R"(graph @t {
  const %b : f32[2,2,4] = dense<[0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 0, 1, 1, 5, 5, 6, 6]>
  const %s : f32[2,2,2] = dense<[0.1, 0.2, 0.9, 0.3, 0.5, 0.6, 0.4, 0.3]>
  const %m : i64[1] = dense<[2]>
  const %iou : f32[1] = dense<[0.5]>
  %y = NonMaxSuppression(%b, %s, %m, %iou)
  output %y
})");
  EXPECT_EQ(r["y"].dims(), (Dims{6, 3}));
  // (0,0): box 1 then box 0 suppressed; (0,1): box 0, box 1 suppressed; (1,0): box 1, box 0
  // (disjoint); (1,1): box 0, box 1.
  EXPECT_EQ(values<int64_t>(r["y"]),
            (std::vector<int64_t>{0, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1}));
}

// A run-time deciding operand gives the extent's bound and marks the dim data-dependent
// (docs/DYNAMIC_SHAPES.md, "Data-dependent extents"): the importer makes it a data symbol.
struct BoundCase {
  const char* text;
  std::vector<Dims> dims;
  std::vector<DataDim> data;
};

void expectBound(const BoundCase& c) {
  auto g = parseGraph(c.text);
  ASSERT_TRUE(g.ok()) << g.status().message();
  Node* n = (*g)->nodes().back();
  std::vector<DataDim> dd;
  Status st = inferNode(*n, &dd);
  ASSERT_TRUE(st.ok()) << st.message();
  for (size_t i = 0; i < c.dims.size(); ++i) EXPECT_EQ(n->output(i)->dims(), c.dims[i]) << c.text;
  ASSERT_EQ(dd.size(), c.data.size()) << c.text;
  for (size_t i = 0; i < dd.size(); ++i) {
    EXPECT_EQ(dd[i].output, c.data[i].output) << c.text;
    EXPECT_EQ(dd[i].dim, c.data[i].dim) << c.text;
    EXPECT_EQ(dd[i].group, 0) << c.text;
  }
}

TEST(SelectNMS, RunTimeOperandsGiveBoundsAndDataDims) {
  // NMS: [batches * classes * min(max_out, boxes), 3]; no max_out selects nothing.
  expectBound({R"(graph @t {
  input %b : f32[2,5,4]
  input %s : f32[2,3,5]
  const %m : i64[1] = dense<[2]>
  %y = NonMaxSuppression(%b, %s, %m)
  output %y
})", {{12, 3}}, {{0, 0, 0}}});
  expectBound({R"(graph @t {
  input %b : f32[2,5,4]
  input %s : f32[2,3,5]
  input %m : i64[1]
  %y = NonMaxSuppression(%b, %s, %m)
  output %y
})", {{30, 3}}, {{0, 0, 0}}});
  // Unique: Y, indices and counts share one extent; inverse_indices is static.
  expectBound({R"(graph @t {
  input %x : f32[2,3]
  %y, %i, %inv, %c = Unique(%x)
  output %y
})", {{6}, {6}, {6}, {6}}, {{0, 0, 0}, {1, 0, 0}, {3, 0, 0}}});
  expectBound({R"(graph @t {
  input %x : f32[2,3]
  %y, %i, %inv, %c = Unique(%x) {axis = 1}
  output %y
})", {{2, 3}, {3}, {3}, {3}}, {{0, 1, 0}, {1, 0, 0}, {3, 0, 0}}});
  // Compress: min(len(condition), extent).
  expectBound({R"(graph @t {
  input %x : f32[4,3]
  input %c : bool[2]
  %y = Compress(%x, %c) {axis = 0}
  output %y
})", {{2, 3}}, {{0, 0, 0}}});
  expectBound({R"(graph @t {
  input %x : f32[4,3]
  input %c : bool[20]
  %y = Compress(%x, %c)
  output %y
})", {{12}}, {{0, 0, 0}}});
  // NonZero: [rank, numel]; TopK with a run-time K: the axis' size.
  expectBound({R"(graph @t {
  input %x : f32[4,3]
  %y = NonZero(%x)
  output %y
})", {{2, 12}}, {{0, 1, 0}}});
  expectBound({R"(graph @t {
  input %x : f32[4,3]
  input %k : i64[1]
  %v, %i = TopK(%x, %k) {axis = 0}
  output %v
})", {{4, 3}, {4, 3}}, {{0, 0, 0}, {1, 0, 0}}});
  // Constant operands keep the exact extents, with no data dim.
  expectBound({R"(graph @t {
  input %x : f32[4,3]
  const %c : bool[3] = dense<[1, 0, 1]>
  %y = Compress(%x, %c) {axis = 1}
  output %y
})", {{4, 2}}, {}});
  std::string e;
  e = inferError(R"(graph @t {
  input %b : f32[1,3]
  input %s : f32[1,1,3]
  %y = NonMaxSuppression(%b, %s)
  output %y
})");
  EXPECT_NE(e.find("boxes must be [num_batches, spatial_dimension, 4], got f32[1,3]"),
            std::string::npos) << e;
}

// ---- Unique ----

TEST(SelectUnique, FlattenedSortedAndInOrderOfFirstOccurrence) {
  auto r = evalText(R"(graph @t {
  const %x : f32[2,3] = dense<[2, 1, 1, 3, 4, 3]>
  %y, %i, %v, %c = Unique(%x)
  %ys, %is, %vs, %cs = Unique(%x) {sorted = 0}
  output %y, %i, %v, %c, %ys, %is, %vs, %cs
})");
  EXPECT_EQ(r["y"].dims(), (Dims{4}));
  expectNear(values(r["y"]), {1, 2, 3, 4});
  EXPECT_EQ(values<int64_t>(r["i"]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(values<int64_t>(r["v"]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(r["c"]), (std::vector<int64_t>{2, 1, 2, 1}));
  expectNear(values(r["ys"]), {2, 1, 3, 4});
  EXPECT_EQ(values<int64_t>(r["is"]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(r["vs"]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(r["cs"]), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(SelectUnique, SlicesAlongAnAxis) {
  // Rows (1,0), (0,5), (1,0); columns of [[1,0,1],[2,3,2]]: (1,2), (0,3), (1,2).
  auto r = evalText(R"(graph @t {
  const %a : i32[3,2] = dense<[1, 0, 0, 5, 1, 0]>
  const %b : i64[2,3] = dense<[1, 0, 1, 2, 3, 2]>
  %ya, %ia, %va, %ca = Unique(%a) {axis = 0}
  %yb, %ib, %vb, %cb = Unique(%b) {axis = -1}
  output %ya, %ia, %va, %ca, %yb, %ib, %vb, %cb
})");
  EXPECT_EQ(r["ya"].dims(), (Dims{2, 2}));
  EXPECT_EQ(values<int32_t>(r["ya"]), (std::vector<int32_t>{0, 5, 1, 0}));
  EXPECT_EQ(values<int64_t>(r["ia"]), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(values<int64_t>(r["va"]), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(values<int64_t>(r["ca"]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r["yb"].dims(), (Dims{2, 2}));
  EXPECT_EQ(values<int64_t>(r["yb"]), (std::vector<int64_t>{0, 1, 3, 2}));
  EXPECT_EQ(values<int64_t>(r["ib"]), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(values<int64_t>(r["vb"]), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(values<int64_t>(r["cb"]), (std::vector<int64_t>{1, 2}));
}

TEST(SelectUnique, RunTimeInputGetsADataSymbolInTextIR) {
  // An untyped result with a data-dependent extent gets a data symbol, as on import; a typed one
  // at its bound without the symbol is refused by the verifier (the package would take the bound
  // for the extent).
  auto g = parseGraph(R"(graph @t {
  input %x : f32[6]
  %y, %i, %inv, %c = Unique(%x)
  output %y, %i, %inv, %c
})");
  ASSERT_TRUE(g.ok()) << g.status().message();
  const std::string text = printGraph(**g);
  EXPECT_NE(text.find("symbol y_count [0, 6] data"), std::string::npos) << text;
  EXPECT_NE(text.find("%y : f32[6] as [y_count], %i : i64[6] as [y_count], %inv : i64[6], "
                      "%c : i64[6] as [y_count] = Unique(%x)"),
            std::string::npos)
      << text;
  EXPECT_TRUE(verifyGraph(**g).ok()) << verifyGraph(**g).message();
  auto bad = parseGraph(R"(graph @t {
  input %x : f32[6]
  %y : f32[6] = Unique(%x)
  output %y
})");
  ASSERT_TRUE(bad.ok()) << bad.status().message();
  Status st = verifyGraph(**bad);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("result 'y' dim 0 is data-dependent (known only at run time) but is "
                              "not a data symbol the node produces"),
            std::string::npos)
      << st.message();
}

// ---- Compress ----

std::string compressGraph(const std::string& cond, const std::string& attrs) {
  int n = 1;
  for (char ch : cond) n += ch == ',';
  return "graph @t {\n  input %x : f32[3,2]\n  const %c : bool[" + std::to_string(n) +
         "] = dense<" + cond + ">\n  %y = Compress(%x, %c)" + attrs + "\n  output %y\n}\n";
}

Tensor compress(const std::string& cond, const std::string& attrs) {
  Tensor x = Tensor::fromVector<float>(DType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6});
  auto r = evalText(compressGraph(cond, attrs), {{"x", x}});
  return r.count("y") ? r["y"] : Tensor();
}

TEST(SelectCompress, AlongAxisAndFlattened) {
  Tensor y = compress("[0, 1, 1]", " {axis = 0}");
  EXPECT_EQ(y.dims(), (Dims{2, 2}));
  expectNear(values(y), {3, 4, 5, 6});
  y = compress("[0, 1]", " {axis = -1}");
  EXPECT_EQ(y.dims(), (Dims{3, 1}));
  expectNear(values(y), {2, 4, 6});
  y = compress("[0, 1, 0, 0, 1]", "");  // the flattened input
  EXPECT_EQ(y.dims(), (Dims{2}));
  expectNear(values(y), {2, 5});
  y = compress("[1]", " {axis = 0}");  // shorter than the axis: the rest is dropped
  EXPECT_EQ(y.dims(), (Dims{1, 2}));
  expectNear(values(y), {1, 2});
  y = compress("[1, 0, 0]", " {axis = 1}");  // longer, but false past the axis
  EXPECT_EQ(y.dims(), (Dims{3, 1}));
  expectNear(values(y), {1, 3, 5});
  y = compress("[0, 0, 0]", " {axis = 0}");  // nothing kept
  EXPECT_EQ(y.dims(), (Dims{0, 2}));
}

TEST(SelectCompress, Errors) {
  std::string e = inferError(compressGraph("[0, 1, 1]", " {axis = 1}"));
  EXPECT_NE(e.find("condition[2] is true but the selected extent is only 2"), std::string::npos)
      << e;
  e = inferError(R"(graph @t {
  input %x : f32[3,2]
  const %c : i64[3] = dense<[0, 1, 1]>
  %y = Compress(%x, %c) {axis = 0}
  output %y
})");
  EXPECT_NE(e.find("condition must be a 1-D bool tensor, got i64[3]"), std::string::npos) << e;
}

// ---- TfIdfVectorizer ----
// Pool: unigrams 1, 3, 7 (ordinals 0-2), bigrams (1,2), (2,1) (ordinals 3-4). Row [1, 2, 1, 2, 3]:
// unigram counts 2, 1, 0; adjacent bigrams (1,2) twice, (2,1) once.
std::string tfidfGraph(const std::string& type, const std::string& attrs) {
  return "graph @t {\n  input %x : " + type +
         "\n  %y = TfIdfVectorizer(%x) {max_gram_length = 2, ngram_counts = [0, 3], "
         "pool_int64s = [1, 3, 7, 1, 2, 2, 1], " +
         attrs + "}\n  output %y\n}\n";
}

std::vector<double> tfidf(const std::string& attrs,
                          const std::string& defaults = "min_gram_length = 1, max_skip_count = 0, "
                                                        "ngram_indexes = [0, 1, 2, 3, 4]") {
  Tensor x = Tensor::fromVector<int64_t>(DType::kI64, {5}, {1, 2, 1, 2, 3});
  auto r = evalText(tfidfGraph("i64[5]", defaults + ", " + attrs), {{"x", x}});
  if (!r.count("y")) return {};
  EXPECT_EQ(r["y"].dtype(), DType::kF32);
  return values(r["y"]);
}

TEST(SelectTfIdf, ModesWeightsAndIndexes) {
  expectNear(tfidf("mode = \"TF\""), {2, 1, 0, 2, 1});
  expectNear(tfidf("mode = \"IDF\""), {1, 1, 0, 1, 1});
  expectNear(tfidf("mode = \"IDF\", weights = [0.5, 2.0, 3.0, 4.0, 5.0]"), {0.5, 2, 0, 4, 5});
  expectNear(tfidf("mode = \"TFIDF\", weights = [0.5, 2.0, 3.0, 4.0, 5.0]"), {1, 2, 0, 8, 5});
  expectNear(tfidf("mode = \"TFIDF\""), {2, 1, 0, 2, 1});
  // ngram_indexes maps the pool's n-grams to output columns.
  expectNear(tfidf("mode = \"TF\"", "min_gram_length = 1, max_skip_count = 0, "
                                    "ngram_indexes = [4, 3, 2, 1, 0]"),
             {1, 2, 0, 1, 2});
  // Only bigrams.
  expectNear(tfidf("mode = \"TF\"", "min_gram_length = 2, max_skip_count = 0, "
                                    "ngram_indexes = [0, 1, 2, 3, 4]"),
             {0, 0, 0, 2, 1});
  // Skips: distance 2 adds (1,1), (2,2), (1,3), none in the pool; distance 3 adds (1,2) at 0, 3.
  expectNear(tfidf("mode = \"TF\"", "min_gram_length = 1, max_skip_count = 1, "
                                    "ngram_indexes = [0, 1, 2, 3, 4]"),
             {2, 1, 0, 2, 1});
  expectNear(tfidf("mode = \"TF\"", "min_gram_length = 1, max_skip_count = 2, "
                                    "ngram_indexes = [0, 1, 2, 3, 4]"),
             {2, 1, 0, 3, 1});
}

TEST(SelectTfIdf, BatchOfInt32Rows) {
  Tensor x = Tensor::fromVector<int32_t>(DType::kI32, {2, 5}, {1, 2, 1, 2, 3, 3, 3, 7, 0, 0});
  auto r = evalText(tfidfGraph("i32[2,5]", "mode = \"TF\", min_gram_length = 1, "
                                           "max_skip_count = 0, ngram_indexes = [0, 1, 2, 3, 4]"),
                    {{"x", x}});
  EXPECT_EQ(r["y"].dims(), (Dims{2, 5}));
  expectNear(values(r["y"]), {2, 1, 0, 2, 1, 0, 2, 1, 0, 0});
}

TEST(SelectTfIdf, Errors) {
  auto err = [](const std::string& type, const std::string& attrs) {
    return inferError(tfidfGraph(type, "min_gram_length = 1, max_skip_count = 0, " + attrs));
  };
  std::string e = err("i64[5]", "mode = \"BM25\", ngram_indexes = [0, 1, 2, 3, 4]");
  EXPECT_NE(e.find("mode must be TF, IDF or TFIDF, got 'BM25'"), std::string::npos) << e;
  e = err("f32[5]", "mode = \"TF\", ngram_indexes = [0, 1, 2, 3, 4]");
  EXPECT_NE(e.find("input must be i32 or i64 tokens"), std::string::npos) << e;
  e = err("i64[5]", "mode = \"TF\", ngram_indexes = [0, 1, 2]");
  EXPECT_NE(e.find("ngram_indexes has 3 entries, the pool 5 n-grams"), std::string::npos) << e;
  e = err("i64[5]", "mode = \"TFIDF\", ngram_indexes = [0, 1, 2, 3, 4], weights = [1.0, 2.0]");
  EXPECT_NE(e.find("weights has 2 entries"), std::string::npos) << e;
  e = inferError(R"(graph @t {
  input %x : i64[4]
  %y = TfIdfVectorizer(%x) {mode = "TF", min_gram_length = 2, max_gram_length = 2, max_skip_count = 0, ngram_counts = [0, 0], ngram_indexes = [0], pool_int64s = [1, 2, 3]}
  output %y
})");
  EXPECT_NE(e.find("is not a whole number of 2-grams"), std::string::npos) << e;
  e = inferError(R"(graph @t {
  input %x : i64[4]
  %y = TfIdfVectorizer(%x) {mode = "TF", min_gram_length = 1, max_gram_length = 1, max_skip_count = 0, ngram_counts = [0], ngram_indexes = [0], pool_strings = ["a"]}
  output %y
})");
  EXPECT_NE(e.find("pool_strings is not supported (STRING tensors are not supported)"),
            std::string::npos) << e;
}

// ---- Kernels called directly (as generated packages call them) ----

TEST(SelectKernels, EveryOpHasAReferenceKernel) {
  for (const char* op : {"NonMaxSuppression", "Unique", "Compress", "TfIdfVectorizer"}) {
    EXPECT_NE(OpRegistry::instance().find(op), nullptr) << op;
    EXPECT_TRUE(hasReferenceKernel(op)) << op;
  }
}

// A package's operands may differ from the constants the extents were inferred from (weights
// replaced): the kernel fails the step instead of writing past its result.
TEST(SelectKernels, ASelectionOfAnotherExtentFailsTheStep) {
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  uint8_t cond[4] = {1, 1, 1, 0};
  mgrt::Tensor in[2], out[1];
  in[0].data = x; in[0].rank = 1; in[0].dims[0] = 4;
  in[1].data = cond; in[1].dtype = mgrt::kBool; in[1].rank = 1; in[1].dims[0] = 4;
  out[0].data = y; out[0].rank = 1; out[0].dims[0] = 2;  // compiled for two kept elements
  mgrt::Ctx ctx;
  EXPECT_NE(mgrt::findKernel("Compress")(mgrt::Attrs(""), in, 2, out, 1, ctx), 0);
  EXPECT_NE(std::string(ctx.error).find("the condition keeps 3, the result was compiled for 2"),
            std::string::npos) << ctx.error;
  mgrt::Ctx uctx;
  EXPECT_NE(mgrt::findKernel("Unique")(mgrt::Attrs(""), in, 1, out, 1, uctx), 0);
  EXPECT_NE(std::string(uctx.error).find("4 unique elements, the result was compiled for 2"),
            std::string::npos) << uctx.error;
  EXPECT_EQ(y[0], 0.0f);  // nothing written
}

// ---- GPU targets ----

TEST(SelectGpu, RefusedByName) {
  for (const char* node : {"%y = Compress(%x, %c) {axis = 0}",
                           "%y = TfIdfVectorizer(%t) {mode = \"TF\", min_gram_length = 1, "
                           "max_gram_length = 1, max_skip_count = 0, ngram_counts = [0], "
                           "ngram_indexes = [0], pool_int64s = [4]}"}) {
    auto vars = testing::emitGpu(std::string("graph @t {\n  input %x : f32[3,2]\n"
                                             "  input %t : i64[5]\n"
                                             "  const %c : bool[3] = dense<[1, 0, 1]>\n  ") +
                                 node + "\n  output %y\n}\n");
    ASSERT_FALSE(vars.ok()) << node;
    EXPECT_EQ(vars.status().code(), ErrorCode::kUnsupported);
    const std::string op = std::string(node).substr(5, std::string(node).find('(') - 5);
    // Compress lowers only as the producer of a data-dependent extent (lower_select.cpp); one
    // whose extent is static (a constant condition the fold pass did not see) is refused by node.
    const std::string why = op == "Compress"
                                ? "Compress on the cuda/hip targets needs one data-dependent extent"
                                : "no kernel for op '" + op + "'";
    EXPECT_TRUE(testing::contains(vars.status().message(), why)) << vars.status().message();
  }
}

}  // namespace
}  // namespace magneto
