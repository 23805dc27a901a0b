/* SPDX-License-Identifier: GPL-2.0 */
/* bits.bpf.h: integer log2 for log2 histograms (BPF side). */
#ifndef __BITS_BPF_H
#define __BITS_BPF_H

static __always_inline unsigned long long log2_u32(unsigned int v)
{
	unsigned int r, shift;

	r = (v > 0xFFFF) << 4; v >>= r;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

/* floor(log2(v)), 0 for v == 0: slot i holds [2^i, 2^(i+1)). */
static __always_inline unsigned long long log2l(unsigned long long v)
{
	unsigned int hi = v >> 32;

	if (hi)
		return log2_u32(hi) + 32;
	return log2_u32(v);
}

#endif /* __BITS_BPF_H */
