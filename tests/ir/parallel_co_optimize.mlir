// RUN: magneto-opt %s --passes=parallel-co-optimize --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=parallel-co-optimize,parallel-co-optimize | FileCheck %s
// RUN: magneto-opt %s --passes=parallel-co-optimize | magneto-opt - --passes=parallel-co-optimize | FileCheck %s
// RUN: magneto-opt %s --passes=parallel-co-optimize --debug-only=parallel-co-optimize 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// An Inception block of small convolutions on the host profile (the default device): each member
// costs about one parallel-region overhead, so one joint region per sibling group wins. The four
// heads become group #0, the second ops of the three longer branches group #1; b1b, b2b, b2c are
// moved after group #0 and b2c after group #1 so that each group is contiguous. Only the schedule
// changes (--check-equivalence). Running the pass twice, or on its own printed output, decides
// nothing again.
// CHECK-LABEL: graph @inception
// CHECK: parallel #0 "joint" "joint {{[0-9.]+}} us vs sequential {{[0-9.]+}} us (-{{[0-9.]+}}%), 1 launch instead of 4" {
// CHECK-NEXT: Conv(%x, %w1) loc("b0")
// CHECK-NEXT: Conv(%x, %w1) loc("b1a")
// CHECK-NEXT: Conv(%x, %w1) loc("b2a")
// CHECK-NEXT: MaxPool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} loc("b3a")
// CHECK-NEXT: }
// CHECK-NEXT: parallel #1 "joint" "joint {{.*}} 1 launch instead of 3" {
// CHECK-NEXT: loc("b1b")
// CHECK-NEXT: loc("b2b")
// CHECK-NEXT: loc("b3b")
// CHECK-NEXT: }
// CHECK-NEXT: loc("b2c")
// CHECK-NEXT: Concat
// CHECK-NOT: parallel #2

// The trace names every candidate, its decision and its reason.
// LOG: [parallel-co-optimize] #0 fork %x step 0 [b0, b1a, b2a, b3a]: joint: joint
// LOG: [parallel-co-optimize] #1 fork %x step 1 [b1b, b2b, b3b]: joint: joint
graph @inception {
  input %x : f32[1,8,8,8]
  const %w1 : f32[4,8,1,1] = random<1>
  const %w3 : f32[4,4,3,3] = random<2>
  const %w5 : f32[4,4,5,5] = random<3>
  %y0 = Conv(%x, %w1) loc("b0")
  %y1a = Conv(%x, %w1) loc("b1a")
  %y1b = Conv(%y1a, %w5) {pads = [2, 2, 2, 2]} loc("b1b")
  %y2a = Conv(%x, %w1) loc("b2a")
  %y2b = Conv(%y2a, %w3) {pads = [1, 1, 1, 1]} loc("b2b")
  %y2c = Conv(%y2b, %w3) {pads = [1, 1, 1, 1]} loc("b2c")
  %y3a = MaxPool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} loc("b3a")
  %y3b = Conv(%y3a, %w1) loc("b3b")
  %c = Concat(%y0, %y1b, %y2c, %y3b) {axis = 1} loc("join")
  output %c
}
