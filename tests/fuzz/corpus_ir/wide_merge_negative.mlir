graph @negative {
  input %x : f32[1,4,6,6]
  input %dw : f32[4,4,1,1]
  input %y0 : f32[1,4,6,6]
  const %w1 : f32[4,4,1,1] = random<1>
  const %w2 : f32[4,4,1,1] = random<2>
  const %ws : f32[4,4,1,1] = random<3>
  const %wg : f32[4,2,1,1] = random<4>
  const %w5 : f32[4,4,5,5] = random<5>
  const %b0 : f32[4] = random<6>
  %r = Conv(%x, %w1) loc("ref")
  %s = Conv(%x, %ws) {strides = [2, 2]} loc("strided")
  %a = Conv(%x, %w1) {mg_act = "Relu"} loc("act")
  %g = Conv(%x, %wg) {group = 2} loc("grouped")
  %q = Conv(%x, %w1, %b0, %y0) loc("resid")
  %d = Conv(%x, %dw) loc("dynw")
  %f = Conv(%x, %w5) {pads = [2, 2, 2, 2]} loc("big5")
  %ok = Conv(%x, %w2) loc("ok")
  output %r, %s, %a, %g, %q, %d, %f, %ok
}
