graph @heads {
  input %x : f32[1,6,5,5]
  const %head_a_wide_w : f32[24,6,1,1] = blob<0xe1f0f40ccd977c82>
  const %head_a_wide_b : f32[24] = blob<0x015fee98de8bcfd5>
  parallel #0 "wide" "3 Convs on %x merged into one 1x1 Conv of 24 channels" {
    %head_a_wide : f32[1,24,5,5] = Conv(%x, %head_a_wide_w, %head_a_wide_b) {mg_act = "Relu"} loc("head_a_wide")
  }
  %a_1 : f32[1,8,5,5] = MgChannelSlice(%head_a_wide) {begin = 0, end = 8} loc("head_a")
  %b_2 : f32[1,4,5,5] = MgChannelSlice(%head_a_wide) {begin = 8, end = 12} loc("head_b")
  %c_3 : f32[1,12,5,5] = MgChannelSlice(%head_a_wide) {begin = 12, end = 24} loc("head_c")
  %ta : f32[1,8,5,5] = Tanh(%a_1)
  %tc : f32[1,12,5,5] = Sigmoid(%c_3)
  output %ta, %b_2, %tc
}
