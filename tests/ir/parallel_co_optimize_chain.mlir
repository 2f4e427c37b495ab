// RUN: magneto-opt %s --passes=parallel-co-optimize --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=parallel-co-optimize --debug-only=parallel-co-optimize 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG --allow-empty

// A chain has no sibling groups: nothing is decided, nothing moves, no region is printed.
// CHECK-LABEL: graph @chain
// CHECK-NOT: parallel #
// CHECK: loc("c1")
// CHECK-NEXT: loc("r1")
// CHECK-NEXT: loc("c2")
// CHECK-NOT: parallel #
// LOG-NOT: parallel-co-optimize
graph @chain {
  input %x : f32[1,4,16,16]
  const %w : f32[4,4,3,3] = random<1>
  %a = Conv(%x, %w) {pads = [1, 1, 1, 1]} loc("c1")
  %b = Relu(%a) loc("r1")
  %c = Conv(%b, %w) {pads = [1, 1, 1, 1]} loc("c2")
  output %c
}
