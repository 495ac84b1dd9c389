// Transposes a 128 x 128 matrix of 32-bit words with the transpose unit of the default core:
// 16 xpush of 8-row slices fill the unit; 16 xpop return the transposed matrix, 8 rows (that is,
// 8 columns of the input) at a time.
// The input is generated in-program: IN[i][j] = i*128 + j (int32), at vector memory rows
// IN_V .. IN_V + 127; the result goes to rows OUT_V .., so OUT[j][i] = i*128 + j.

.const IN_V 0
.const OUT_V 128
.const SLICES 16        // 128 rows / 8 sublanes

// ---- generate IN ------------------------------------------------------------------------
  vsublaneid v0 ;; vlaneid v1 ;; sli s1, IN_V ;; sli s3, SLICES
  vbcasti v2, 128 ;; vbcasti v3, 1024
  vmul.s32 v0, v0, v2
  vadd.s32 v4, v0, v1                                  // v4[s][l] = s*128 + l: slice 0
gen:
  vst v4, [s1+0] ;; vadd.s32 v4, v4, v3 ;; saddi s1, s1, 8 ;; loop s3, gen

// ---- push the 16 slices of IN, then pop the 16 slices of its transpose -------------------
  sli s1, IN_V ;; sli s3, SLICES
push:
  vld v5, [s1+0] ;; saddi s1, s1, 8
  xpush v5 ;; loop s3, push
  sli s2, OUT_V ;; sli s3, SLICES
pop:
  xpop v6
  vst v6, [s2+0] ;; saddi s2, s2, 8 ;; loop s3, pop
  halt
