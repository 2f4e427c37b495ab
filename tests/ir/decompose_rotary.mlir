// RUN: magneto-opt %s --passes=decompose-attention --check-equivalence | FileCheck %s
// Case 1: 4-D [B,H,S,D], halves, position_ids into a [6,3] cache, partial rotary (6 of 8 dims):
// the cache rows are gathered and broadcast over the heads ([2,1,4,3]), the first 6 dims rotate,
// the last 2 are copied after them.
// CHECK-LABEL: graph @rope
// CHECK: f32[2,4,3] = Gather(%cos, %pos) {axis = 0}
// CHECK: f32[2,4,3] = Gather(%sin, %pos) {axis = 0}
// CHECK: f32[2,1,4,3] = Reshape(
// CHECK: f32[2,3,4,6] = Slice(%x,
// CHECK: Sub(
// CHECK: f32[2,3,4,6] = Concat({{.*}}) {axis = 3}
// CHECK: %y : f32[2,3,4,8] = Concat({{.*}}) {axis = 3}
// Case 2: 3-D with num_heads 2, interleaved, caches [B,S,D/2] as given: the even and odd
// elements are strided Slices; the rotated pairs are interleaved back by a Concat on a new last
// axis and a Reshape.
// CHECK: f32[2,4,2,6] = Reshape(%x3,
// CHECK: f32[2,4,1,3] = Reshape(%c3,
// CHECK: f32[2,4,2,3] = Slice(
// CHECK: f32[2,4,2,3,2] = Concat({{.*}}) {axis = 4}
// CHECK: %yi : f32[2,4,12] = Reshape(
// CHECK-NOT: RotaryEmbedding(
graph @rope {
  input %x : f32[2,3,4,8]
  input %x3 : f32[2,4,12]
  const %cos : f32[6,3] = random<1>
  const %sin : f32[6,3] = random<2>
  const %pos : i64[2,4] = dense<[0, 1, 2, 3, 5, 4, 3, 0]>
  input %c3 : f32[2,4,3]
  input %s3 : f32[2,4,3]
  %y = RotaryEmbedding(%x, %cos, %sin, %pos) {rotary_embedding_dim = 6} loc("rope")
  %yi = RotaryEmbedding(%x3, %c3, %s3) {interleaved = 1, num_heads = 2} loc("rope_i")
  output %y, %yi
}
