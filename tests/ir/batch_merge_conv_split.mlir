// RUN: magneto-opt %s --passes=batch-merge-conv,dce --check-equivalence | FileCheck %s
// RUN: magneto-opt %s --passes=batch-merge-conv --debug-only=batch-merge-conv 2>&1 >/dev/null | FileCheck %s --check-prefix=LOG

// Conv towers on the parts of a Split along the channels (torch.split/chunk export; issue #16):
// the parts tile %x in order, so the grouped conv reads %x itself: no Concat is built, and the
// Split, read by nobody else, dies. Its cost is counted against the members (sequential and
// joint), which is what makes the grouped conv win over one joint kernel of four convs on the
// host profile. Only the Concat of the results stays (their slices are views).
// CHECK-LABEL: graph @split_conv_towers
// CHECK-NOT: Split(
// CHECK: parallel #0 "batch" "4 Convs 4x2x3x3 (group 1) on different inputs -> one grouped Conv (group 4); {{.*}}inputs already stacked
// CHECK-NEXT: = Conv(%x, %t0_batch_w) {group = 4, pads = [1, 1, 1, 1]} loc("t0_batch")
// CHECK: MgChannelSlice(%t0_batch) {begin = 0, end = 4} loc("t0")
// CHECK: MgChannelSlice(%t0_batch) {begin = 12, end = 16} loc("t3")
// CHECK-NOT: Split(
// LOG: [batch-merge-conv] #0 merge [t0, t1, t2, t3]: {{.*}}inputs already stacked
graph @split_conv_towers {
  input %x : f32[1,8,16,16]
  const %sizes : i64[4] = dense<[2, 2, 2, 2]>
  const %w0 : f32[4,2,3,3] = random<1>
  const %w1 : f32[4,2,3,3] = random<2>
  const %w2 : f32[4,2,3,3] = random<3>
  const %w3 : f32[4,2,3,3] = random<4>
  %p0, %p1, %p2, %p3 = Split(%x, %sizes) {axis = 1} loc("split")
  %y0 = Conv(%p0, %w0) {pads = [1, 1, 1, 1]} loc("t0")
  %y1 = Conv(%p1, %w1) {pads = [1, 1, 1, 1]} loc("t1")
  %y2 = Conv(%p2, %w2) {pads = [1, 1, 1, 1]} loc("t2")
  %y3 = Conv(%p3, %w3) {pads = [1, 1, 1, 1]} loc("t3")
  %c = Concat(%y0, %y1, %y2, %y3) {axis = 1} loc("join")
  output %c
}
