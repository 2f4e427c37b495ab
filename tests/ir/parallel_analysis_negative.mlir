// RUN: magneto-opt %s --passes=print-parallel-groups | FileCheck %s

// Two consumers of %x where one depends on the other (b reads a's result) are not siblings:
// the reachability check must reject the pair, and a chain has no groups at all.
// CHECK: // no sibling groups
graph @chain {
  input %x : f32[1,4,16,16]
  const %w : f32[4,4,1,1] = random<1>
  %a = Conv(%x, %w) loc("a")
  %b = Mul(%a, %x) loc("b")
  output %b
}
