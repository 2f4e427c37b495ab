// Every pass's factory and the plain functions behind them (tests call the functions directly).
#pragma once

#include <memory>

#include "magneto/passes/pass.h"

namespace magneto {

Expected<bool> eliminateDeadCode(Graph& g);
Expected<bool> foldConstants(Graph& g);
// Folds one node if it can; erases it when none of its results is still used.
Expected<bool> foldNode(Graph& g, Node* n);

Expected<bool> canonicalize(Graph& g);
Expected<bool> foldBatchNorm(Graph& g);
Expected<bool> fuseEpilogues(Graph& g);
Expected<bool> fuseElementwise(Graph& g);
Expected<bool> foldPads(Graph& g);

std::unique_ptr<Pass> makeDcePass();
std::unique_ptr<Pass> makeCanonicalizePass();
std::unique_ptr<Pass> makeFoldBatchNormPass();
std::unique_ptr<Pass> makeFuseEpiloguePass();
std::unique_ptr<Pass> makeFuseElementwisePass();
std::unique_ptr<Pass> makeFoldPadPass();
std::unique_ptr<Pass> makePrintParallelGroupsPass();
std::unique_ptr<Pass> makeFoldPass();

}  // namespace magneto
