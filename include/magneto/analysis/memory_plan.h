// Memory planning for generated packages: where every tensor of a graph lives at run time.
//
//   graph inputs   -> the caller's input buffers (read only)
//   graph outputs  -> the caller's output buffers: the producing step writes there directly
//   constants      -> the weights blob, each tensor at a 64-byte aligned offset
//   intermediates  -> one arena per model handle; offsets chosen by a liveness-based greedy
//                     best-fit planner, 64-byte aligned, so two tensors share bytes only when
//                     their lifetimes (in steps, inclusive) do not overlap
//   views          -> a node with trait kView (Reshape, Flatten, Squeeze, Unsqueeze, Identity)
//                     whose operand is an arena intermediate and whose result is not a graph
//                     output aliases its operand's bytes: no step runs, and the root buffer lives
//                     until the last use of any alias. Views of graph inputs, constants or graph
//                     outputs, and views that are graph outputs, run their (copying) kernel.
//   offset views   -> MgChannelSlice (pass wide-merge) of an arena intermediate with batch 1:
//                     channels [begin, end) are contiguous, so it aliases its operand's bytes at
//                     offset begin * prod(dims[2:]) * element size, under the same rules as views
//                     (the root lives until the last use of any alias; offsets of chained views
//                     add up). Such a view is not 64-byte aligned in general: kernels load
//                     unaligned.
//   concat elision -> an operand of a Concat whose slice of the result is one contiguous byte
//                     range (every dim before the axis is 1) lives INSIDE the Concat's result: its
//                     producer writes straight into its slice, so nothing is copied for it. The
//                     result's buffer lives from the first such producer to the last use of the
//                     result or of any operand placed in it. A Concat with every operand in place
//                     runs no step; one with some runs and copies only the others (the kernels
//                     skip an operand already at its destination). Conditions per operand: an
//                     arena intermediate written by a step (not a view, not a Concat's result),
//                     read once by this Concat and placed in no other, at a 64-byte aligned offset,
//                     of the result's element type; the result an arena intermediate.
//   copies         -> a graph output that is also a graph input, a constant, or listed twice is
//                     copied into the caller's buffer after the last step.
//
// Joint groups: consecutive steps of one parallel group with strategy "joint" count as one step
// for lifetimes, because GPU targets run them as one kernel whose blocks interleave.
// Why inclusive lifetimes: a step's result must never share bytes with one of its own operands
// (kernels are not written to run in place), so a value used by step i is still live at step i.
// Everything here is deterministic: buffers are placed in a fixed order (size, then definition).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "magneto/ir/graph.h"
#include "magneto/support/status.h"

namespace magneto {

constexpr int64_t kTensorAlignment = 64;

enum class StorageKind { kArena, kWeights, kInput, kOutput };

struct Storage {
  StorageKind kind = StorageKind::kArena;
  int64_t offset = 0;  // bytes into the arena or the weights blob
  int index = 0;       // graph input / output index
};

// One arena allocation: a value that owns bytes (aliases point into it).
struct ArenaBuffer {
  const Value* value = nullptr;
  int64_t offset = 0;
  int64_t bytes = 0;  // rounded up to kTensorAlignment
  int first = 0;      // step index that defines it
  int last = 0;       // last step index that reads it (or an alias of it), inclusive
};

struct OutputCopy {
  int output = 0;              // graph output index
  const Value* source = nullptr;
};

// Concat elision decisions (see the storage model above).
struct ConcatElision {
  struct Slot {
    const Node* concat = nullptr;
    int64_t offset = 0;  // bytes into the Concat's result
  };
  std::map<const Value*, Slot> inPlace;  // operand -> where it lives
  std::vector<const Node*> elided;       // Concats with every operand in place: no step

  // Whether operand `v` of `concat` is already at its destination.
  bool isInPlace(const Node* concat, const Value* v) const {
    auto it = inPlace.find(v);
    return it != inPlace.end() && it->second.concat == concat;
  }
  bool isElided(const Node* concat) const {
    return std::find(elided.begin(), elided.end(), concat) != elided.end();
  }
};

// Decides concat elision for a verified graph (planMemory's own decision; the report uses it to
// count what runs).
ConcatElision planConcatElision(const Graph& g);

struct MemoryPlan {
  std::vector<const Node*> steps;                 // nodes that run, in schedule order
  std::vector<const Node*> aliasedViews;          // views that became aliases (no step)
  ConcatElision concats;                          // Concat operands written in place
  std::map<const Value*, Storage> storage;        // every value a step or copy touches
  std::vector<ArenaBuffer> buffers;               // arena allocations, in placement order
  std::vector<const Value*> weights;              // constants in the blob, in offset order
  std::vector<OutputCopy> copies;
  int64_t arenaBytes = 0;
  int64_t weightsBytes = 0;

  const Storage* find(const Value* v) const {
    auto it = storage.find(v);
    return it == storage.end() ? nullptr : &it->second;
  }
};

// Rounds up to kTensorAlignment.
int64_t alignUp(int64_t bytes);

// Plans a verified graph. Errors (bad input): a constant without data, a tensor whose byte size
// overflows, a string tensor.
Expected<MemoryPlan> planMemory(const Graph& g);

}  // namespace magneto
