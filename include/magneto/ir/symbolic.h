// Symbolic shape inference (dynamic dimensions, docs/DYNAMIC_SHAPES.md).
//
// Every value keeps its static dims at the reference binding (every symbol at its maximum) and
// may carry a symbolic shape (Value::symDims). The ops' shape inference stays purely numeric: this
// analysis calls each node's InferFn at several probe bindings (operand dims and MgSymbolic values
// evaluated there) and FITS each result dim: first a multilinear polynomial in the symbols the
// operands mention, then a single-symbol floor((a*s+b)/c) form. It then VERIFIES the whole graph
// at checking bindings (every point of the declared ranges when there are at most 4096, else the
// lo/hi corners, the --opt values, the ends of each range and pseudo-random points): a fitted
// expression that differs from inference, an InferFn that fails, or a value whose byte size passes
// its size at the reference binding (the memory plan's) is an error naming the node, op, result,
// dim and binding. It runs after import and after the pass pipeline, so a rewrite that looked only
// at the reference dims can never give a silently wrong library.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "magneto/ir/dim_expr.h"
#include "magneto/ir/graph.h"
#include "magneto/ir/op_schema.h"
#include "magneto/support/status.h"

namespace magneto {

// Whether v's shape, or (for an MgSymbolic result) its value, depends on symbols.
bool dependsOnSymbols(const Value* v);
// The symbols v's shape or value mentions.
std::vector<std::string> symbolsOf(const Value* v);

// Whether a and b have the same shape at every binding as far as their expressions say (a value
// without symbolic dims counts as static). Passes that require equal shapes check this too.
bool sameSymbolicShape(const Value* a, const Value* b);

// The checking bindings of the verification (see above), deterministic.
std::vector<DimBinding> checkingBindings(const std::vector<DimSymbol>& syms);

// "N=3, T=17"
std::string bindingStr(const DimBinding& b);

// Fits f over `mentioned` (the other symbols stay at their maximum): a multilinear polynomial,
// else floor((a*s+b)/c) in a single symbol, checked at a few dozen bindings. An error when neither
// fits or f fails at a probe binding (its message names the binding).
using DimProbeFn = std::function<Expected<int64_t>(const DimBinding&)>;
// `coords` are floor expressions of one symbol each (those the operands' shapes contain): the
// polynomial may be multilinear in them instead of in their symbol (N*floor((T+1)/2)).
Expected<DimExpr> fitDimExpr(const std::vector<DimSymbol>& syms,
                             const std::vector<std::string>& mentioned, const DimProbeFn& f,
                             const std::vector<DimExpr>& coords = {});

// Fits the symbolic shape of every node result from the graph inputs' (and MgSymbolic nodes')
// expressions, then verifies (verifySymbolicShapes). No-op for a graph without symbols.
Status inferSymbolicShapes(Graph& g);
// The floor expressions of one symbol in n's operand shapes and shape data (fitDimExpr's coords).
std::vector<DimExpr> fitCoordinates(const Node& n);
// The fit for one node (its operands' symbolic shapes known): sets its results' symDims.
Status inferSymbolicNode(Graph& g, Node* n);
// n's operand types at binding b, and the values of its constant and MgSymbolic operands (an
// empty Tensor for the others).
Status operandsAtBinding(const Node& n, const DimBinding& b, std::vector<TensorType>* types,
                         std::vector<Tensor>* values);
// The verification alone.
Status verifySymbolicShapes(const Graph& g);

// ---- Data-dependent extents (docs/DYNAMIC_SHAPES.md) ----
// A result dim of n that is a data symbol n produces: the dim's expression is the lone symbol and
// none of n's operands mentions it (the producer is the first node that has it).
struct DataSymbolDim {
  int output = 0;
  int dim = 0;
  std::string symbol;
};
std::vector<DataSymbolDim> producedDataSymbols(const Graph& g, const Node& n);
// Declares one data symbol per group of `dims` (what n's InferFn marked data-dependent), range
// [0, the inferred bound], named after the node, and sets n's results' symbolic dims to it (the
// other dims as inferred; inferSymbolicNode fits those that depend on symbols).
Status declareDataSymbols(Graph& g, Node* n, const std::vector<DataDim>& dims);
// Whether the graph has data symbols.
bool hasDataSymbols(const Graph& g);
// Order constraints no value edge carries: each node touching a value whose shape or shape data
// (MgSymbolic) mentions a data symbol runs after the symbol's producer, which binds it at run
// time. Node -> those producers (empty without data symbols). Every reordering respects them.
std::unordered_map<const Node*, std::vector<const Node*>> dataSymbolPredecessors(const Graph& g);

}  // namespace magneto
