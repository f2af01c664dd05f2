#include "textflag.h"

// The packed-pair search (see indexPair in pair_amd64.go), 64 positions
// per step while they last, then 32, then one vector overlapping positions
// already searched. SI: hay, DX: d, BX: positions, DI: cursor; Y0..Y3: the
// bytes broadcast; MATCH(a, b, dst, t1, t2) leaves in dst the positions
// whose bytes (a at i, b at i+d) are a pair.

#define SEARCH \
	MOVQ         hay_base+0(FP), SI; \
	MOVQ         hay_len+8(FP), BX; \
	MOVQ         d+24(FP), DX; \
	VPBROADCASTB b1+32(FP), Y0; \ // (from memory: an SSE move into X0 would stall on the AVX state)
	VPBROADCASTB u1+33(FP), Y1; \
	VPBROADCASTB b2+34(FP), Y2; \
	VPBROADCASTB u2+35(FP), Y3; \
	SUBQ         DX, BX; \
	LEAQ         -64(SI)(BX*1), R11; \ // start of the last double vector
	LEAQ         -32(SI)(BX*1), R8; \  // start of the last vector
	LEAQ         (SI)(BX*1), R10; \    // end of the positions
	MOVQ         SI, DI; \
loop64: \
	CMPQ      DI, R11; \
	JHI       loop32; \
	VMOVDQU   (DI), Y4; \
	VMOVDQU   (DI)(DX*1), Y5; \
	VMOVDQU   32(DI), Y10; \
	VMOVDQU   32(DI)(DX*1), Y11; \
	MATCH(Y4, Y5, Y6, Y7, Y8); \
	MATCH(Y10, Y11, Y12, Y13, Y14); \
	VPOR      Y6, Y12, Y13; \
	VPTEST    Y13, Y13; \
	JNZ       found64; \
	ADDQ      $64, DI; \
	JMP       loop64; \
found64: \
	VPMOVMSKB Y6, R9; \
	TESTL     R9, R9; \
	JNZ       found; \
	VPMOVMSKB Y12, R9; \
	ADDQ      $32, DI; \
	JMP       found; \
loop32: \
	CMPQ      DI, R8; \
	JLS       body32; \
	CMPQ      DI, R10; \
	JCC       notfound; \
	MOVQ      R8, DI; \
body32: \
	VMOVDQU   (DI), Y4; \
	VMOVDQU   (DI)(DX*1), Y5; \
	MATCH(Y4, Y5, Y6, Y7, Y8); \
	VPMOVMSKB Y6, R9; \
	TESTL     R9, R9; \
	JNZ       found; \
	ADDQ      $32, DI; \
	JMP       loop32; \
notfound: \
	MOVQ      $-1, ret+40(FP); \
	VZEROUPPER; \
	RET; \
found: \
	BSFL      R9, R9; \
	ADDQ      DI, R9; \
	SUBQ      SI, R9; \
	MOVQ      R9, ret+40(FP); \
	VZEROUPPER; \
	RET

// func indexPairAVX2(hay []byte, d int, b1, u1, b2, u2 byte) int
#define MATCH(a, b, dst, t1, t2) \
	VPCMPEQB Y0, a, dst; \
	VPCMPEQB Y1, a, t1; \
	VPOR     t1, dst, dst; \
	VPCMPEQB Y2, b, t1; \
	VPCMPEQB Y3, b, t2; \
	VPOR     t2, t1, t1; \
	VPAND    t1, dst, dst

TEXT ·indexPairAVX2(SB), NOSPLIT, $0-48
	SEARCH

#undef MATCH

// func indexPair1AVX2(hay []byte, d int, b1, u1, b2, u2 byte) int
// (b1 == u1 and b2 == u2: half the compares)
#define MATCH(a, b, dst, t1, t2) \
	VPCMPEQB Y0, a, dst; \
	VPCMPEQB Y2, b, t1; \
	VPAND    t1, dst, dst

TEXT ·indexPair1AVX2(SB), NOSPLIT, $0-48
	SEARCH
