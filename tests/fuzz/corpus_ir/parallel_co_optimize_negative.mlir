graph @big_gemms {
  input %x : f32[256,512]
  const %wa : f32[512,512] = random<1>
  const %wb : f32[512,512] = random<2>
  %a = MatMul(%x, %wa) loc("mm_a")
  %ra = Relu(%a) loc("relu_a")
  %b = MatMul(%x, %wb) loc("mm_b")
  %s = Add(%ra, %b) loc("join")
  output %s
}
