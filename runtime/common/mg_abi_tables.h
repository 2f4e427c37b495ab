// The package ABI's tables: the plain structs a generated package describes its tensors and ports
// with, and the status codes of NAME.h. Split from mg_abi.h (which includes this file) so that a
// CPU package's NAME.cpp, which is only these tables and the C entry points, includes nothing
// but <cstdint>: compiling it then takes a tenth of the time it took with the standard library's
// headers (every `magnetoc check` pays it). Host and device code, C++17.
#pragma once

#include <cstdint>

namespace mgrt {
namespace abi {

// The values of every package's NAME_status enum (NAME.h).
enum Status : int { kOk = 0, kErrInvalidArgument = 1, kErrWeights = 2, kErrRuntime = 3, kErrOutOfMemory = 4 };

enum StorageKind : int32_t { kArena = 0, kWeights = 1, kInput = 2, kOutput = 3 };

constexpr int kMaxDims = 8;

// One tensor of the model.
struct SlotDesc {
  int32_t dtype;    // ONNX numbering
  int32_t rank;
  int32_t storage;  // StorageKind
  int64_t where;    // byte offset (arena, weights) or input/output index
  int64_t bytes;
  int64_t dims[kMaxDims];
};

// A graph input or output: its name and slot.
struct PortDesc {
  const char* name;
  int32_t slot;
};

// A graph output no step writes (an input or a constant returned as is, a repeated output).
struct CopyDesc {
  int32_t output;  // graph output index
  int32_t slot;    // the slot whose bytes it receives
};

// ---- Dynamic dimensions (packages compiled with `--dynamic NAME=LO..HI`) ----
// A static package leaves every table below empty. In a dynamic one, a symbol is a named dimension
// with a declared range, bound at run time from one dimension of one input. A slot's SlotDesc
// holds its largest shape (every symbol at its maximum: what the arena is planned for); the
// DynEntry rows say which of its dims (or, for a small int64/int32 tensor of shape data, which of
// its elements) are expressions of the symbols, evaluated whenever the input dims change.
//
// A data symbol (input == -1) is an extent computed at run time (NonZero's count, Compress's kept
// slices, TopK's run-time K; docs/DYNAMIC_SHAPES.md, "Data-dependent extents"): the step writing
// slot `slot` sets its dim `dim` to the count, and the package binds the symbol to it after that
// step (0 <= count <= hi; the range starts at 0).
struct SymbolDesc {
  const char* name;  // the model's dim_param (or the name given to --dynamic; a data symbol's node)
  int64_t lo;        // declared range, inclusive
  int64_t hi;
  int32_t input;  // bound from inputs[input] (-1: a data symbol) ...
  int32_t dim;    // ... dimension `dim` (of `slot` for a data symbol)
  int32_t slot;   // a data symbol's producing slot (a result of one step); unused otherwise
};

// Dimension expressions are postfix integer programs in one int64 array (Program's dimCode);
// each ends with kDimEnd. kDimConst and kDimSym take the next word as their operand (the value,
// the symbol's index). Division rounds toward minus infinity (kDimFloorDiv, kDimMod) or plus
// infinity (kDimCeilDiv); a division by zero or an overflow makes the shape invalid (refused).
enum DimOp : int64_t {
  kDimEnd = 0,
  kDimConst = 1,
  kDimSym = 2,
  kDimAdd = 3,
  kDimSub = 4,
  kDimMul = 5,
  kDimFloorDiv = 6,
  kDimCeilDiv = 7,
  kDimMod = 8,
  kDimMin = 9,
  kDimMax = 10,
};

enum DynKind : int32_t {
  kDynDim = 0,      // slots[slot].dims[index] = expression
  kDynElement = 1,  // element `index` of slot `slot` (int64 or int32 shape data) = expression
};

// One run-time fact: the expression starting at dimCode[code] gives a slot's dim or element.
struct DynEntry {
  int32_t slot;
  int32_t kind;  // DynKind
  int32_t index;
  int32_t code;
};

}  // namespace abi
}  // namespace mgrt
