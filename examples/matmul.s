// Tiled matmul C = A x B on the MXU of the default core (configs/tpu-v2-like.json: 8 x 128 vector
// unit, 128 x 128 array): M = 512, K = 384, N = 256, fp32 operands (rounded to bf16 on the way
// into the array), fp32 accumulation along K in the MXU's accumulator blocks.
//
// Phase 1 generates A and B in vector memory and DMAs them to HBM, so the kernel starts with its
// operands in HBM as a compiled layer would. Element values (32-bit wrapping arithmetic):
//   f(i) = float(int32(h)) * 2^-31 in [-1, 1), h = y ^ (y >> 13), y = x * 0x85EBCA6B,
//   x = z ^ (z >> 15), z = i * 0x9E3779B1;   A[m][k] = f(m*K + k), B[k][n] = f(M*K + k*N + n).
//
// Phase 2, the kernel:
//   * every operand tile is requested from HBM up front with 2-D DMAs, in the order of first use;
//     the kernel waits for each just before it needs it, so later transfers overlap the MXU work
//     on earlier tiles (DMAs complete in issue order, so one flag per kind of operand suffices);
//   * weight tiles B(kt, nt) (128 x 128) are visited n-tile-major: (0,0) (1,0) (2,0) (0,1) (1,1)
//     (2,1). A tile multiplies the 64 input blocks (8 rows x 128 k) of A's k-tile kt, in two
//     halves of 32 blocks. The staging buffer is free once the previous tile's inputs have left
//     the array (R + C - 1 cycles, about 32 blocks), so during the second half the rows of the
//     next tile shift in (vld.s + mlw, double buffering) and mflip switches to it at the end;
//   * mmul.st starts the fp32 chain of output block mb in accumulator block mb (kt = 0), mmul.acc
//     continues it (kt = 1), mmul.acc.out finishes it and pushes a copy to the result FIFO
//     (kt = 2). The chain runs over k = 0 .. K-1 ascending: numerics::mxu_matmul_accumulate;
//   * the result FIFO holds 32 blocks (tpu-v2-like.json): the last k-tile pushes its first 32
//     blocks, then pops one block for each block it pushes (pop first, so there is always room);
//     the remaining 32 are popped while the next tile multiplies (or at the end). Popped blocks
//     are stored to C in vector memory and each n-tile of C is DMAed to HBM once complete.
//
// Layouts (row-major): HBM words A at A_HBM (M x K), B at B_HBM (K x N), C at C_HBM (M x N).
// Vector memory rows (128 words): A row m, k-tile kt at A_V + m*KT + kt; B row k, n-tile nt at
// B_V + k*NT + nt; C row m, n-tile nt at C_V + m*NT + nt (KT = 3, NT = 2). DMA addresses vector
// memory in words (row * 128).
// Sync flags: 0 generation, 1 A k-chunks, 2 B tiles, 3 C write-back.
// Registers of the kernel: s20 A block rows, s21 = KT, s22 next tile's B rows, s23 = NT,
// s24/s26 accumulator blocks (even/odd), s25 loop count, s27 C block rows.

.const A_HBM 0
.const B_HBM 196608         // M*K
.const C_HBM 393216
.const GEN_PAIRS 144        // (M*K + K*N) / 2048: two vregs of 1024 words per iteration
.const GEN_WORDS 294912     // M*K + K*N
.const A_V 4096
.const B_V 6144
.const C_V 8192
.const HALF 16              // loop iterations per half tile (2 blocks each)

// 2-D DMA descriptors {count, chunk_words, src_stride, dst_stride} in scalar memory
.smem 0
.word 512, 128, 384, 384    // smem 0: A k-chunk: M rows of 128 words; HBM stride K, vmem stride KT*128
.word 128, 128, 256, 256    // smem 4: B tile: 128 rows of 128 words; HBM stride N, vmem stride NT*128
.word 512, 128, 256, 256    // smem 8: C n-tile: M rows of 128 words; vmem stride NT*128, HBM stride N

// ---- phase 1: generate A then B (one flat index space) at vector memory row 0 ---------------
  vsublaneid v0 ;; vlaneid v1 ;; sli s1, 0 ;; sli s2, GEN_PAIRS
  vbcasti v2, 128 ;; vbcasti v3, 0x9E3779B1
  vmul.s32 v0, v0, v2 ;; vbcasti v4, 0x85EBCA6B
  vadd.s32 v8, v0, v1 ;; vbcasti v5, 15               // v8[s][l] = s*128 + l: the word index
  vbcasti v6, 13 ;; vbcasti v7, 0x30000000            // v7 = 2^-31
  vbcasti v14, 1024 ;; vbcasti v2, 2048
  vadd.s32 v13, v8, v14                                // v13: indices of the second vreg
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

  sli s3, A_HBM ;; sli s4, 0
  sli s5, GEN_WORDS
  dma.vh s3, s4, s5, 0                                 // vmem words [0, M*K + K*N) -> HBM
  wait 0, 1

// ---- phase 2: the kernel -------------------------------------------------------------------
// Request every operand tile, in the order of first use: B(0,0) A0 B(1,0) A1 B(2,0) A2 B(0,1)
// B(1,1) B(2,1). B(kt,nt): HBM B_HBM + kt*128*N + nt*128 -> vmem word (B_V + kt*128*NT + nt)*128.
// A k-chunk kt: HBM A_HBM + kt*128 -> vmem word (A_V + kt)*128.
// Each line issues the request set up by the line before and sets up the next one.
  sli s6, 0 ;; sli s7, 4                                           // descriptor addresses: A, B
  sli s10, 786432 ;; sli s11, 196608                               // set up B(0,0)
  sli s12, 524288 ;; sli s13, 0 ;; dma.hv.2d s10, s11, s7, 2       // B(0,0); set up A0
  sli s10, 819200 ;; sli s11, 229376 ;; dma.hv.2d s12, s13, s6, 1  // A0; B(1,0)
  sli s12, 524416 ;; sli s13, 128 ;; dma.hv.2d s10, s11, s7, 2     // B(1,0); A1
  sli s10, 851968 ;; sli s11, 262144 ;; dma.hv.2d s12, s13, s6, 1  // A1; B(2,0)
  sli s12, 524544 ;; sli s13, 256 ;; dma.hv.2d s10, s11, s7, 2     // B(2,0); A2
  sli s10, 786560 ;; sli s11, 196736 ;; dma.hv.2d s12, s13, s6, 1  // A2; B(0,1)
  sli s12, 819328 ;; sli s13, 229504 ;; dma.hv.2d s10, s11, s7, 2  // B(0,1); B(1,1)
  sli s10, 852096 ;; sli s11, 262272 ;; dma.hv.2d s12, s13, s7, 2  // B(1,1); B(2,1)
  sli s8, 8 ;; sli s21, 3 ;; dma.hv.2d s10, s11, s7, 2             // B(2,1)
  sli s23, 2 ;; sli s27, C_V

// Weights of B(0,0): rows k of n-tile 0 are vmem rows B_V + k*NT; 8 rows per mlw.
  wait 2, 1 ;; sli s22, B_V ;; sli s25, 16
w00:
  vld.s v12, [s22+0], s23 ;; saddi s22, s22, 16
  mlw v12 ;; loop s25, w00
  mflip

// Tile B(0,0) x A k-tile 0: start the chains; stage B(1,0) (rows B_V + 128*NT + k*NT).
  wait 1, 1 ;; sli s20, 4096 ;; sli s22, 6400                      // A_V + 0; B_V + 256 + 0
  sli s24, 0 ;; sli s26, 1
  sli s25, HALF
t00a:
  vld.s v10, [s20+0], s21
  vld.s v11, [s20+24], s21 ;; mmul.st v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  mmul.st v11, s26 ;; saddi s26, s26, 2 ;; loop s25, t00a
  wait 2, 1 ;; sli s25, HALF                                       // B(1,0) is in
t00b:
  vld.s v10, [s20+0], s21
  vld.s v11, [s20+24], s21 ;; mmul.st v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  vld.s v12, [s22+0], s23 ;; mmul.st v11, s26 ;; saddi s22, s22, 16 ;; saddi s26, s26, 2
  mlw v12 ;; loop s25, t00b
  mflip

// Tile B(1,0) x A k-tile 1: continue; stage B(2,0).
  wait 1, 1 ;; sli s20, 4097 ;; sli s22, 6656                      // A_V + 1; B_V + 512 + 0
  sli s24, 0 ;; sli s26, 1
  sli s25, HALF
t10a:
  vld.s v10, [s20+0], s21
  vld.s v11, [s20+24], s21 ;; mmul.acc v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  mmul.acc v11, s26 ;; saddi s26, s26, 2 ;; loop s25, t10a
  wait 2, 1 ;; sli s25, HALF                                       // B(2,0) is in
t10b:
  vld.s v10, [s20+0], s21
  vld.s v11, [s20+24], s21 ;; mmul.acc v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  vld.s v12, [s22+0], s23 ;; mmul.acc v11, s26 ;; saddi s22, s22, 16 ;; saddi s26, s26, 2
  mlw v12 ;; loop s25, t10b
  mflip

// Tile B(2,0) x A k-tile 2: finish n-tile 0 into the result FIFO; stage B(0,1). The second half
// pops blocks 0..31 into C rows C_V + m*NT + 0.
  wait 1, 1 ;; sli s20, 4098 ;; sli s22, 6145                      // A_V + 2; B_V + 0 + 1
  sli s24, 0 ;; sli s26, 1
  sli s25, HALF
t20a:
  vld.s v10, [s20+0], s21
  vld.s v11, [s20+24], s21 ;; mmul.acc.out v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  mmul.acc.out v11, s26 ;; saddi s26, s26, 2 ;; loop s25, t20a
  wait 2, 1 ;; sli s25, HALF                                       // B(0,1) is in
t20b:
  vld.s v10, [s20+0], s21 ;; mpop v13
  vld.s v11, [s20+24], s21 ;; mmul.acc.out v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  vld.s v12, [s22+0], s23 ;; mpop v14 ;; vst.s v13, [s27+0], s23 ;; saddi s22, s22, 16
  mmul.acc.out v11, s26 ;; mlw v12 ;; vst.s v14, [s27+16], s23 ;; saddi s26, s26, 2 ;; saddi s27, s27, 32
  loop s25, t20b
  mflip

// Tile B(0,1) x A k-tile 0: start n-tile 1; stage B(1,1). The first half pops n-tile 0's blocks
// 32..63; then C n-tile 0 is complete and goes to HBM.
  sli s20, 4096 ;; sli s22, 6401                                   // A_V + 0; B_V + 256 + 1
  sli s24, 0 ;; sli s26, 1
  sli s25, HALF
t01a:
  vld.s v10, [s20+0], s21 ;; mpop v13
  vld.s v11, [s20+24], s21 ;; mmul.st v10, s24 ;; mpop v14 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  mmul.st v11, s26 ;; vst.s v13, [s27+0], s23 ;; saddi s26, s26, 2
  vst.s v14, [s27+16], s23 ;; saddi s27, s27, 32 ;; loop s25, t01a
  sli s14, C_HBM ;; sli s15, 1048576                               // C_V * 128
  dma.vh.2d s14, s15, s8, 3 ;; sli s25, HALF                       // C n-tile 0 -> HBM
  wait 2, 1                                                        // B(1,1) is in
t01b:
  vld.s v10, [s20+0], s21
  vld.s v11, [s20+24], s21 ;; mmul.st v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  vld.s v12, [s22+0], s23 ;; mmul.st v11, s26 ;; saddi s22, s22, 16 ;; saddi s26, s26, 2
  mlw v12 ;; loop s25, t01b
  mflip

// Tile B(1,1) x A k-tile 1: continue; stage B(2,1).
  sli s20, 4097 ;; sli s22, 6657                                   // A_V + 1; B_V + 512 + 1
  sli s24, 0 ;; sli s26, 1
  sli s25, HALF
t11a:
  vld.s v10, [s20+0], s21
  vld.s v11, [s20+24], s21 ;; mmul.acc v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  mmul.acc v11, s26 ;; saddi s26, s26, 2 ;; loop s25, t11a
  wait 2, 1 ;; sli s25, HALF                                       // B(2,1) is in
t11b:
  vld.s v10, [s20+0], s21
  vld.s v11, [s20+24], s21 ;; mmul.acc v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  vld.s v12, [s22+0], s23 ;; mmul.acc v11, s26 ;; saddi s22, s22, 16 ;; saddi s26, s26, 2
  mlw v12 ;; loop s25, t11b
  mflip

// Tile B(2,1) x A k-tile 2: finish n-tile 1 (nothing left to stage); the second half pops its
// blocks 0..31 into C rows C_V + m*NT + 1.
  sli s20, 4098 ;; sli s24, 0
  sli s26, 1 ;; sli s25, HALF
t21a:
  vld.s v10, [s20+0], s21
  vld.s v11, [s20+24], s21 ;; mmul.acc.out v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  mmul.acc.out v11, s26 ;; saddi s26, s26, 2 ;; loop s25, t21a
  sli s27, 8193 ;; sli s25, HALF                                   // C_V + 1
t21b:
  vld.s v10, [s20+0], s21 ;; mpop v13
  vld.s v11, [s20+24], s21 ;; mmul.acc.out v10, s24 ;; saddi s20, s20, 48 ;; saddi s24, s24, 2
  mpop v14 ;; vst.s v13, [s27+0], s23
  mmul.acc.out v11, s26 ;; vst.s v14, [s27+16], s23 ;; saddi s26, s26, 2 ;; saddi s27, s27, 32
  loop s25, t21b

// Pop n-tile 1's blocks 32..63, write C n-tile 1 back, wait for both write-backs.
  sli s25, HALF
drain:
  mpop v13
  mpop v14 ;; vst.s v13, [s27+0], s23
  vst.s v14, [s27+16], s23 ;; saddi s27, s27, 32 ;; loop s25, drain
  sli s14, 393344 ;; sli s15, 1048704                              // C_HBM + 128; C_V*128 + 128
  dma.vh.2d s14, s15, s8, 3                                        // C n-tile 1 -> HBM
  wait 3, 2
  halt
