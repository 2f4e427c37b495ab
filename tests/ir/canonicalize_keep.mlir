// RUN: magneto-opt %s --passes=canonicalize | FileCheck %s

// An Identity from a graph input straight to a graph output must stay: the library gives each
// output its own buffer. A Dropout whose mask is used stays too.
// CHECK-LABEL: graph @keep
// CHECK: Identity(%x)
// CHECK: Dropout(%x)
graph @keep {
  input %x : f32[4]
  %y = Identity(%x)
  %d, %m = Dropout(%x)
  output %y, %m
}
