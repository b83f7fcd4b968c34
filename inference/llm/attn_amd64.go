package llm

// Go sides of axpyAsm (f32_amd64.s) and the attention kernels
// (attn_amd64.s): length checks, and the pure-Go kernels for the remainders.

//go:noescape
func axpyAsm(y *float32, a float32, x *float32, n int)

func axpyAVX2(y []float32, a float32, x []float32) {
	n := len(y) &^ 7
	if n > 0 {
		_ = x[n-1]
		axpyAsm(&y[0], a, &x[0], n)
	}
	if n < len(y) {
		axpy(y[n:], a, x[n:])
	}
}

//go:noescape
func scoresAsm(out, q, k *float32, stride, np, n int)

//go:noescape
func wsum32Asm(o, w, v *float32, stride, np int)

func scoresAVX2(out, q, k []float32, stride int) {
	n, np := len(q), len(out)&^3
	if n == 0 || n%8 != 0 || np == 0 {
		scoresGo(out, q, k, stride)
		return
	}
	_ = k[(np-1)*stride+n-1]
	scoresAsm(&out[0], &q[0], &k[0], stride, np, n)
	if np < len(out) {
		scoresGo(out[np:], q, k[np*stride:], stride)
	}
}

func wsumAVX2(o, w, v []float32, stride int) {
	n, np := len(o), len(w)
	if np == 0 || n < 32 {
		wsumGo(o, w, v, stride)
		return
	}
	_ = v[(np-1)*stride+n-1]
	c := 0
	for ; c+32 <= n; c += 32 {
		wsum32Asm(&o[c], &w[0], &v[c], stride, np)
	}
	if c < n {
		wsumGo(o[c:], w, v[c:], stride)
	}
}
