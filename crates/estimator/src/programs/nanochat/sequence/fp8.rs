//! base_train.py's compiled training forward under `--fp8`, buffer by buffer as Inductor's
//! generated wrapper runs it (PyTorch 2.11; `data/inductor/oc_nc_fp8_d18_B2_T2048_L.tgz` and
//! `oc_nc_fp8_d4_B8_T512_SSL.tgz`, the module with `primals_1` and no `tangents`; the allocator
//! traces `data/traces/nc_fp8tr_*`; docs/allocation-order.md §22).
//!
//! fp8.py's `_Float8Matmul` is traced whole (`allow_in_graph`): each Linear casts its input and
//! its fp32 weight to e4m3 (tensorwise scales: an amax kernel writes a partial, then two four-byte
//! scalars the graph keeps), runs `torch._scaled_mm` into a bf16 output, and frees the casts.
//! What the graph keeps for the backward is not the casts: the partitioner recomputes them there
//! from the bf16 inputs and the fp32 masters, but for one transposed cast per value-embedding
//! layer, made at the graph's end.
//!
//! Its transients are what set where the kept tensors land: a layer's three input casts, its
//! weight casts, the raw q and k before rotary and QK-norm, relu²'s (B, T, 4C) cast and, in a
//! plain layer past the first, the norm's fp32 output from which the three casts are made (a
//! value-embedding layer keeps its bf16 norm output for the gate's backward and casts from that).
//! The trace of depth 18 replayed without them reserves 160 MiB less.

use super::{Dims, Gen, LayerSaved};
use crate::engine::buffer_reuse::Kind;
use crate::engine::events::{Phase, Stage, TensorId};
use crate::terms::Term;

/// What the forward keeps past its layers for lm_head's backward.
pub(super) struct Fp8Head {
    /// The final norm's statistic and its input (the last layer's output, the backout
    /// subtracted in place).
    pub final_norm: [TensorId; 2],
    pub logits: TensorId,
    /// The loss's row maximum and log-sum (fp32 per token).
    pub stats: [TensorId; 2],
    /// The scalars of lm_head's casts.
    pub scales: Vec<TensorId>,
}

impl Gen<'_> {
    /// `n` of the four-byte scalars a cast's amax leaves (its scale and reciprocal), kept for
    /// the backward in `kept`.
    fn scales(&mut self, n: usize, kept: &mut Vec<TensorId>) {
        for _ in 0..n {
            kept.push(self.out.alloc(4, Term::BlockActivations));
        }
    }

    /// One fp8 Linear of the forward: the fp32 weight's e4m3 cast (`w_bytes`) and the bf16
    /// output (`out_bytes`, kept by the caller), then the input's cast `input` and the weight's
    /// cast freed, as the wrapper frees them after `_scaled_mm`.
    fn fp8_linear(&mut self, input: TensorId, w_bytes: u128, out_bytes: u128) -> TensorId {
        let w = self.out.alloc(w_bytes, Term::WeightCopies);
        let out = self.out.alloc(out_bytes, Term::BlockActivations);
        self.out.free(input);
        self.out.free(w);
        out
    }

    /// A cast of an activation to e4m3 (`bytes`: one per element), alive until its matmul.
    fn fp8_cast(&mut self, bytes: u128) -> TensorId {
        self.out.alloc(bytes, Term::BlockTransient)
    }

    /// One layer's compiled forward under `--fp8`, in the wrapper's order (depth 18's: every
    /// layer of one kind past the first allocates alike), into the groups the backward frees.
    pub(super) fn fp8_layer(&mut self, i: usize, mask: &mut TensorId) -> LayerSaved {
        let Dims { c, h, bt, e, .. } = self.d;
        let btc = e * bt * c;
        let a = |g: &mut Gen, bytes: u128| g.out.alloc(bytes, Term::BlockActivations);
        let ve = self.s.ve[i];
        let mut rest = Vec::new();
        // the norm: its statistic, then a value-embedding layer's bf16 output (kept for the
        // gate's backward) or a later plain layer's fp32 one (`x·resid + x0·x0_lambda` normed in
        // fp32), from which the input casts are made: layer 0 casts once for q, k and v, a later
        // layer three times
        rest.push(a(self, 4 * bt));
        let mut normed32 = None;
        if ve {
            rest.push(a(self, btc));
        } else if i > 0 {
            let t = self.out.alloc(4 * bt * c, Term::BlockTransient);
            normed32 = self.out.wide(t);
        }
        self.scales(4, &mut rest);
        let n_casts = if i == 0 { 1 } else { 3 };
        let mut casts: Vec<TensorId> = (0..n_casts).map(|_| self.fp8_cast(bt * c)).collect();
        self.out.free(normed32);
        // the first matmul of the run makes the main thread's cuBLASLt workspace
        self.lt_workspace(0);
        // the input cast a matmul frees after it (the k-th made): layer 0's one cast serves all
        // three and goes with the last
        let mut cast_for = |k: usize, last: bool| -> TensorId {
            if i > 0 {
                casts[k].take()
            } else if last {
                casts[0].take()
            } else {
                None
            }
        };
        // q, k and v in the wrapper's order: a value-embedding layer computes v first, then its
        // gate (ve_gate's bf16 weight copy, the gate's logits and the embedding's lookup, all
        // kept); the j-th output frees the j-th cast
        let order = if ve { [2, 0, 1] } else { [0, 1, 2] };
        let mut qkv: [TensorId; 3] = [None; 3];
        for (n, j) in order.into_iter().enumerate() {
            if n > 0 {
                self.scales(2, &mut rest);
            }
            let cast = cast_for(j, n == 2);
            qkv[j] = self.fp8_linear(cast, c * c, btc);
            if ve && j == 2 {
                rest.push(self.copy(24 * h));
                rest.push(a(self, e * bt * h));
                rest.push(a(self, btc));
            }
        }
        let [q_lin, k_lin, v] = qkv;
        rest.push(v);
        // rotary, then QK-norm: the rotated q and k, their statistics, the normed q and k
        rest.extend([a(self, btc), a(self, btc)]);
        rest.extend([a(self, 4 * bt * h), a(self, 4 * bt * h)]);
        rest.extend([a(self, btc), a(self, btc)]);
        self.out.free(q_lin);
        self.out.free(k_lin);
        self.attention_mask(i, mask);
        // SDPA's RNG state, output and log-sum-exp, which the op allocates itself
        rest.extend(self.sdpa_rng_state());
        let y = self
            .out
            .alloc_as(Kind::OpOutput, btc, Term::BlockActivations);
        rest.push(self.log_sum_exp(i));
        // c_proj, its output the residual's sum in place (x_mid)
        self.scales(4, &mut rest);
        let cast = self.fp8_cast(bt * c);
        rest.push(self.fp8_linear(cast, c * c, btc));
        // norm 2's statistic, c_fc's (B, T, 4C) output
        rest.push(a(self, 4 * bt));
        self.scales(4, &mut rest);
        let cast = self.fp8_cast(bt * c);
        let fc_out = self.fp8_linear(cast, 4 * c * c, 4 * btc);
        // relu²'s e4m3 cast, the MLP's c_proj, its output the layer's (the next layer's input;
        // after the last, the final norm's, with the backout subtracted in place)
        self.scales(4, &mut rest);
        let cast = self.fp8_cast(4 * bt * c);
        rest.push(self.fp8_linear(cast, 4 * c * c, btc));
        LayerSaved {
            mlp: vec![fc_out],
            proj: vec![y],
            rest,
        }
    }

    /// The final norm, lm_head (a Float8Linear too: 32768 × C passes base_train.py's filter) and
    /// the loss, then the transposed input casts the backward of each value-embedding layer's
    /// v reads, made last (from the last layer down), each into that layer's saved tensors.
    pub(super) fn fp8_head_forward(
        &mut self,
        layers: &mut [LayerSaved],
        phase: Phase,
        micro: u32,
    ) -> Fp8Head {
        let Dims { c, v, bt, e, .. } = self.d;
        let stat = self.out.alloc(4 * bt, Term::FinalActivations);
        let input = layers.last_mut().and_then(|l| l.rest.pop()).flatten();
        let mut kept = Vec::new();
        self.scales(4, &mut kept);
        let cast = self.fp8_cast(bt * c);
        let w8 = self.out.alloc(v * c, Term::WeightCopies);
        let logits = self.out.alloc(e * bt * v, Term::Logits);
        self.out.free(cast);
        self.out.free(w8);
        self.out.mark(Some(phase), Stage::Loss, micro);
        let stats = [
            self.out.alloc(4 * bt, Term::Logits),
            self.out.alloc(4 * bt, Term::Logits),
        ];
        self.scales(2, &mut kept);
        for i in (0..layers.len()).rev().filter(|&i| self.s.ve[i]) {
            let t = self.fp8_cast(bt * c);
            layers[i].rest.push(t);
        }
        Fp8Head {
            final_norm: [stat, input],
            logits,
            stats,
            scales: kept,
        }
    }

    /// Closes the fp8 forward graph: what it keeps for the backward is its output, which
    /// Inductor's estimate owes from the graph's start (`Builder::graph_output`).
    pub(super) fn end_fp8_forward(
        &mut self,
        global: &[TensorId],
        layers: &[LayerSaved],
        mask: TensorId,
        head: &Fp8Head,
    ) {
        let layers = layers.iter().flat_map(|l| [&l.mlp, &l.proj, &l.rest]);
        for kept in [
            global,
            &head.final_norm,
            &head.stats,
            &head.scales,
            &[mask, head.logits],
        ]
        .into_iter()
        .chain(layers.map(Vec::as_slice))
        {
            for &t in kept {
                self.out.graph_output(t);
            }
        }
        self.out.end_graph();
    }
}
