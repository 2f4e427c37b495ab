// The package core: the C interface of a generated CPU package (create, run, threads, errors,
// introspection), implemented once here for every model. A package's NAME.cpp holds only what is
// the model's own: its tables (slots, steps, regions, ports; below) in one Program, and one-line
// extern "C" functions NAME_create, NAME_run, ... that hand that Program to these functions.
//
// How a program runs: every tensor has a slot (element type, shape, and where its bytes live:
// the arena, the weights blob, or one of the caller's buffers). The step table lists the kernels
// to call in order; create() resolves each step's kernel once (the optimized one when the runtime
// has it, else the reference one) and parses its attributes; run() calls them in order.
// Reshape-like views of intermediates share their operand's bytes and have no step. The steps of
// a joint group (a region) run as one parallel region of the thread pool: each member is a work
// item that one thread runs whole, biggest first; with one thread they run in order.
//
// What every target's packages share (status codes, slot and port tables, handle registry,
// weights loading, messages) is runtime/common/mg_abi.h (its plain tables: mg_abi_tables.h);
// this file adds the CPU's step loop.
// Handles of one package passed to another package's functions are refused.
#pragma once

#include <cstddef>
#include <cstdint>

// Only the plain tables: a package's NAME.cpp includes this header, and nothing of the standard
// library, so that it compiles in a fraction of a second.
#include "mg_abi_tables.h"

namespace mgrt {
namespace pkg {

// The tables and status codes every target shares (runtime/common/mg_abi.h).
using abi::CopyDesc;
using abi::DynEntry;
using abi::kArena;
using abi::kErrInvalidArgument;
using abi::kErrOutOfMemory;
using abi::kErrRuntime;
using abi::kErrWeights;
using abi::kInput;
using abi::kOk;
using abi::kOutput;
using abi::kWeights;
using abi::PortDesc;
using abi::SlotDesc;
using abi::StorageKind;
using abi::SymbolDesc;

struct StepDesc {
  const char* op;
  const char* node;   // ONNX node name, for error messages
  const char* attrs;  // runtime attribute text (mg_runtime.h, class Attrs)
  int32_t io;         // first entry in stepIo: nin operand slots (-1: absent), then nout results
  int32_t nin;
  int32_t nout;
  // The most threads the step's work keeps busy (the compiler's cost model: a chunk of at least
  // a few microseconds per thread, docs/COST_MODEL.md); 0: as many as the pool has. A step of 1
  // runs on the calling thread alone: splitting it would cost more in the pool's fork and join,
  // and in its data moving between cores, than the second core gives back.
  int32_t threads = 0;
  // The step's work at its compiled shapes, for the profile's roofline columns (the cost model's
  // counts, docs/COST_MODEL.md: a multiply-add is 2 FLOPs; every operand and result once); -1:
  // shapes known only at run time.
  double flops = -1;
  double bytes = -1;
};

// Steps [first, first + count) are the members of one joint group, mutually independent, and the
// memory plan keeps every byte they read or write apart. order: where in regionOrder the members
// are listed biggest first (the order threads pick them up in). Or the layers of one wavefront
// group, listed in layer order: layer k waits step by step on layer k-1 (Ctx::upstream).
struct RegionDesc {
  int32_t first;
  int32_t count;
  int32_t order;
};

// KV-cache outputs (the compiler's findKvCaches; docs/ABI.md, "KV-cache binding"). Output
// `output` is input `input` with new rows appended along `axis`; kvPieces[firstPiece, +numPieces)
// are the Concat steps that append (one per slab of the buffer's dim 0 for a stacked per-layer
// cache, one for a direct Concat), kvSkips[firstSkip, +numSkips) the steps a bound run leaves out.
struct KvDesc {
  int32_t output;
  int32_t input;
  int32_t axis;
  int32_t firstPiece;
  int32_t numPieces;
  int32_t firstSkip;
  int32_t numSkips;
  const char* node;  // the output's producing node, for messages
};
struct KvPieceDesc {
  int32_t kv;     // its KvDesc
  int32_t step;   // the Concat step
  int32_t fresh;  // slot of the new rows
  int32_t full;   // slot of past + new: bound, a pitched view of the buffer
  int32_t axis;   // the cache axis of `full`
  int64_t slab;   // index along the buffer's dim 0 (0: the Concat is the output itself)
  int32_t dense;  // 1: `full` is also read through aliased views: written into the arena too
};

// Everything a package knows about its model. Tables end with a sentinel row; the counts exclude it.
struct Program {
  const char* name;  // the package name: prefixes messages ("NAME_run: ...") and the profile
  int64_t arenaBytes;
  uint64_t weightsBytes;
  uint64_t weightsChecksum;  // FNV-1a 64 of the weights blob
  // The blob linked into the library (NAME_weights.S), or null: compiled with --weights-file.
  const unsigned char* embeddedWeights;
  const unsigned char* embeddedWeightsEnd;
  const SlotDesc* slots;
  int numSlots;
  const PortDesc* inputs;
  int numInputs;
  const PortDesc* outputs;
  int numOutputs;
  const int32_t* stepIo;
  const StepDesc* steps;
  int numSteps;
  const RegionDesc* regions;
  int numRegions;
  const int32_t* regionOrder;
  const CopyDesc* copies;  // graph outputs no step writes (an input or constant returned as is)
  int numCopies;
  // Dynamic dimensions (mg_abi_tables.h); null and 0 in a static package, whose NAME.cpp leaves
  // them out of its initializer.
  const SymbolDesc* symbols = nullptr;
  int numSymbols = 0;
  const int64_t* dimCode = nullptr;
  const DynEntry* dyn = nullptr;
  int numDyn = 0;
  // KV-cache outputs; null and 0 when the model has none.
  const KvDesc* kvs = nullptr;
  int numKv = 0;
  const KvPieceDesc* kvPieces = nullptr;
  const int32_t* kvSkips = nullptr;
};

// A handle: NAME_model in the package's header is this type under the package's name.
struct Model;

// The C interface, one function per NAME_* function of NAME.h (see there for the contracts).
int create(const Program& p, Model** model, const char* weightsPath);
int setNumThreads(const Program& p, Model* model, int n);
int run(const Program& p, Model* model, const void* const* inputs, void* const* outputs);
void destroy(const Program& p, Model* model);
const char* lastError(const Program& p, const Model* model);

// Introspection of the inputs (output = false) or outputs; an index out of range gives
// nullptr / -1 / 0 and a message for NAME_last_error(NULL).
const char* portName(const Program& p, bool output, int i);
int portRank(const Program& p, bool output, int i);
const int64_t* portDims(const Program& p, bool output, int i);
int portDtype(const Program& p, bool output, int i);
size_t portBytes(const Program& p, bool output, int i);

// Dynamic dimensions (NAME.h documents the contracts). setInputDims validates input `input`'s
// dims (rank; static dims equal to the table's; each symbolic dim within its symbol's range; one
// symbol given one value by every dim naming it, in this call and by the other inputs set since
// the last run; every derived shape computable and within what the arena was planned for), then
// binds the symbols and re-evaluates every DynEntry; a refusal is kErrInvalidArgument with a
// message and changes nothing. A static package accepts exactly its dims.
int setInputDims(const Program& p, Model* model, int input, const int64_t* dims, int rank);
// The current dims / byte size of an input or output of a handle (for a static port: the table's).
const int64_t* modelPortDims(const Program& p, const Model* model, bool output, int i);
size_t modelPortBytes(const Program& p, const Model* model, bool output, int i);
// KV-cache binding (NAME.h documents the contracts).
int bindKv(const Program& p, Model* model, int output, int input, void* buffer, int64_t capacity);
int unbindKv(const Program& p, Model* model, int output);
int kvInput(const Program& p, int output);
int kvAxis(const Program& p, int output);
size_t kvBufferBytes(const Program& p, const Model* model, int output, int64_t capacity);
int numSymbols(const Program& p);
const char* symbolName(const Program& p, int k);
int symbolRange(const Program& p, int k, int64_t* lo, int64_t* hi);

}  // namespace pkg
}  // namespace mgrt
