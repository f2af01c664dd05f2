#include "textflag.h"

// func indexPairAVX2(hay []byte, d int, b1, u1, b2, u2 byte) int
//
// The smallest i in [0, len(hay)-d) with hay[i] in {b1, u1} and hay[i+d]
// in {b2, u2}, or -1. Needs len(hay)-d >= 32 and d >= 0. 32 positions per
// step: two unaligned loads d bytes apart, compared with the bytes broadcast.
TEXT ·indexPairAVX2(SB), NOSPLIT, $0-48
	MOVQ    hay_base+0(FP), SI
	MOVQ    hay_len+8(FP), BX
	MOVQ    d+24(FP), DX
	VPBROADCASTB b1+32(FP), Y0
	VPBROADCASTB u1+33(FP), Y1
	VPBROADCASTB b2+34(FP), Y2
	VPBROADCASTB u2+35(FP), Y3
	SUBQ    DX, BX             // BX = number of positions (>= 32)
	LEAQ    -32(SI)(BX*1), R8  // start of the last full vector
	LEAQ    (SI)(BX*1), R10    // end of the positions
	MOVQ    SI, DI

	// 64 positions per step while they last.
	LEAQ    -64(SI)(BX*1), R11 // start of the last double vector

loop2:
	CMPQ DI, R11
	JHI  loop
	VMOVDQU   (DI), Y4
	VMOVDQU   (DI)(DX*1), Y5
	VMOVDQU   32(DI), Y10
	VMOVDQU   32(DI)(DX*1), Y11
	VPCMPEQB  Y0, Y4, Y6
	VPCMPEQB  Y1, Y4, Y7
	VPOR      Y6, Y7, Y6
	VPCMPEQB  Y2, Y5, Y8
	VPCMPEQB  Y3, Y5, Y9
	VPOR      Y8, Y9, Y8
	VPAND     Y6, Y8, Y6
	VPCMPEQB  Y0, Y10, Y12
	VPCMPEQB  Y1, Y10, Y13
	VPOR      Y12, Y13, Y12
	VPCMPEQB  Y2, Y11, Y14
	VPCMPEQB  Y3, Y11, Y15
	VPOR      Y14, Y15, Y14
	VPAND     Y12, Y14, Y12
	VPOR      Y6, Y12, Y13
	VPTEST    Y13, Y13
	JNZ       found2
	ADDQ      $64, DI
	JMP       loop2

found2:
	VPMOVMSKB Y6, R9
	TESTL     R9, R9
	JNZ       found
	VPMOVMSKB Y12, R9
	ADDQ      $32, DI
	JMP       found

loop:
	CMPQ DI, R8
	JLS  body
	// Fewer than 32 positions left: one more vector ending at the last
	// position, overlapping positions already found without a hit.
	CMPQ DI, R10
	JCC  notfound
	MOVQ R8, DI

body:
	VMOVDQU   (DI), Y4
	VMOVDQU   (DI)(DX*1), Y5
	VPCMPEQB  Y0, Y4, Y6
	VPCMPEQB  Y1, Y4, Y7
	VPOR      Y6, Y7, Y6
	VPCMPEQB  Y2, Y5, Y8
	VPCMPEQB  Y3, Y5, Y9
	VPOR      Y8, Y9, Y8
	VPAND     Y6, Y8, Y6
	VPMOVMSKB Y6, R9
	TESTL     R9, R9
	JNZ       found
	ADDQ      $32, DI
	JMP       loop

notfound:
	MOVQ $-1, ret+40(FP)
	VZEROUPPER
	RET

found:
	BSFL R9, R9
	ADDQ DI, R9
	SUBQ SI, R9
	MOVQ R9, ret+40(FP)
	VZEROUPPER
	RET

// indexPair1AVX2 is indexPairAVX2 with b1 == u1 and b2 == u2.
TEXT ·indexPair1AVX2(SB), NOSPLIT, $0-48
	MOVQ    hay_base+0(FP), SI
	MOVQ    hay_len+8(FP), BX
	MOVQ    d+24(FP), DX
	VPBROADCASTB b1+32(FP), Y0
	VPBROADCASTB u1+33(FP), Y1
	VPBROADCASTB b2+34(FP), Y2
	VPBROADCASTB u2+35(FP), Y3
	SUBQ    DX, BX             // BX = number of positions (>= 32)
	LEAQ    -32(SI)(BX*1), R8  // start of the last full vector
	LEAQ    (SI)(BX*1), R10    // end of the positions
	MOVQ    SI, DI

	// 64 positions per step while they last.
	LEAQ    -64(SI)(BX*1), R11 // start of the last double vector

loop2:
	CMPQ DI, R11
	JHI  loop
	VMOVDQU   (DI), Y4
	VMOVDQU   (DI)(DX*1), Y5
	VMOVDQU   32(DI), Y10
	VMOVDQU   32(DI)(DX*1), Y11
	VPCMPEQB  Y0, Y4, Y6
	VPCMPEQB  Y2, Y5, Y8
	VPAND     Y6, Y8, Y6
	VPCMPEQB  Y0, Y10, Y12
	VPCMPEQB  Y2, Y11, Y14
	VPAND     Y12, Y14, Y12
	VPOR      Y6, Y12, Y13
	VPTEST    Y13, Y13
	JNZ       found2
	ADDQ      $64, DI
	JMP       loop2

found2:
	VPMOVMSKB Y6, R9
	TESTL     R9, R9
	JNZ       found
	VPMOVMSKB Y12, R9
	ADDQ      $32, DI
	JMP       found

loop:
	CMPQ DI, R8
	JLS  body
	// Fewer than 32 positions left: one more vector ending at the last
	// position, overlapping positions already found without a hit.
	CMPQ DI, R10
	JCC  notfound
	MOVQ R8, DI

body:
	VMOVDQU   (DI), Y4
	VMOVDQU   (DI)(DX*1), Y5
	VPCMPEQB  Y0, Y4, Y6
	VPCMPEQB  Y2, Y5, Y8
	VPAND     Y6, Y8, Y6
	VPMOVMSKB Y6, R9
	TESTL     R9, R9
	JNZ       found
	ADDQ      $32, DI
	JMP       loop

notfound:
	MOVQ $-1, ret+40(FP)
	VZEROUPPER
	RET

found:
	BSFL R9, R9
	ADDQ DI, R9
	SUBQ SI, R9
	MOVQ R9, ret+40(FP)
	VZEROUPPER
	RET
