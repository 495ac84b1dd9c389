// Softmax over each row of X (ROWS rows of 128 fp32 values) on the default core:
//   y[r][c] = exp(x[r][c] - max_c x[r][c]) * (1 / sum_c exp(x[r][c] - max_c x[r][c]))
// One vreg holds 8 rows. Per vreg: rmax (reduce unit: tree max of each row, broadcast along the
// row), vsub, eexp (EUP), rsum (tree sum), ercp (EUP reciprocal), vmul. Two vregs are in flight
// per iteration, so one vreg's reductions overlap the other's EUP work.
// X is generated in-program: X[r][c] = f(r*128 + c) * 8, values in [-8, 8), with f the hash of
// examples/matmul.s. Results: Y in vector memory rows Y_V ..; tests/examples checks them bit for
// bit against numerics::tree_max/tree_sum/eup_exp/eup_rcp.

.const ROWS 256
.const PAIRS 16         // ROWS / 16: two vregs of 8 rows per iteration
.const X_V 0            // X: vector memory rows X_V .. X_V + ROWS - 1
.const Y_V 256          // Y: rows Y_V .. Y_V + ROWS - 1

// ---- generate X -------------------------------------------------------------------------
  vsublaneid v0 ;; vlaneid v1 ;; sli s1, X_V ;; sli s2, PAIRS
  vbcasti v2, 128 ;; vbcasti v3, 0x9E3779B1
  vmul.s32 v0, v0, v2 ;; vbcasti v4, 0x85EBCA6B
  vadd.s32 v8, v0, v1 ;; vbcasti v5, 15               // v8[s][l] = s*128 + l: the word index
  vbcasti v6, 13 ;; vbcasti v7, 0x31800000            // v7 = 2^-28: f * 8
  vbcasti v14, 1024 ;; vbcasti v2, 2048
  vadd.s32 v13, v8, v14
gen:
  vmul.s32 v9, v8, v3 ;; vmul.s32 v11, v13, v3
  vshr v10, v9, v5 ;; vshr v12, v11, v5
  vxor v9, v9, v10 ;; vxor v11, v11, v12
  vmul.s32 v9, v9, v4 ;; vmul.s32 v11, v11, v4
  vshr v10, v9, v6 ;; vshr v12, v11, v6
  vxor v9, v9, v10 ;; vxor v11, v11, v12
  vcvt.s32.f32 v9, v9 ;; vcvt.s32.f32 v11, v11
  vmul.f32 v9, v9, v7 ;; vmul.f32 v11, v11, v7
  vadd.s32 v8, v8, v2 ;; vadd.s32 v13, v13, v2 ;; vst v9, [s1+0]
  vst v11, [s1+8] ;; saddi s1, s1, 16 ;; loop s2, gen

// ---- softmax, two vregs (a, b) per iteration ---------------------------------------------
  sli s1, X_V ;; sli s2, Y_V
  sli s3, PAIRS
sm:
  vld v1, [s1+0]
  vld v11, [s1+8] ;; rmax v1 ;; saddi s1, s1, 16
  rmax v11
  rpop v2                                              // a: row max
  vsub.f32 v3, v1, v2 ;; rpop v12                      // b: row max
  vsub.f32 v13, v11, v12 ;; eexp v3
  eexp v13
  epop v4                                              // a: e = exp(x - max)
  rsum v4 ;; epop v14                                  // b: e
  rsum v14
  rpop v5                                              // a: sum of e
  ercp v5 ;; rpop v15                                  // b: sum of e
  ercp v15
  epop v6                                              // a: 1 / sum
  vmul.f32 v7, v4, v6 ;; epop v16                      // b: 1 / sum
  vmul.f32 v17, v14, v16
  vst v7, [s2+0]
  vst v17, [s2+8] ;; saddi s2, s2, 16 ;; loop s3, sm
  halt
