//! base_train.py's compiled backward in bf16, buffer by buffer as Inductor's generated wrapper
//! runs it (PyTorch 2.11; `data/inductor/oc_nc_d4.tgz`, `oc_nc_d16_B8_T512_L.tgz`,
//! `oc_nc_d20_B4_T1024_SSL.tgz`; docs/allocation-order.md §12-§13).
//!
//! Each buffer is written as its own, allocated where its node makes it and freed after the
//! node that reads it last; the graph runs between `begin_graph` and `end_graph`, so
//! `engine::buffer_reuse` hands a dead buffer's storage to the next of its size as the wrapper
//! does. That is what places each layer's gradients among the activations the layer frees,
//! which decides the holes the first optimizer step's buffers find.
//!
//! The two kinds of layer alternate. A layer with a value embedding (the last one among them)
//! computes each weight gradient as its matmul is reached; a plain layer defers all of them to
//! its end, after its whole input-gradient path. Between layers the wrapper hands on:
//! - the gradient at the layer's output that feeds its MLP (`g_out`) and the residual gradient
//!   (`dres`): for the last layer they are one buffer, the final norm's;
//! - storage through the pool: each layer's c_fc output is donated to the backward (relu²'s
//!   backward writes into it, `Builder::donate`), and once c_fc's weight gradient has read it,
//!   it is pooled like the wrapper's own buffers; the next buffer of its size takes it — the
//!   plain layer's d(relu²) at depth 16, a value embedding's gradient where V·C = 4·B·T·C
//!   (§14);
//! - a value-embedding layer's fp32 (B, T, C) partial, read by the plain layer's closing kernel;
//! - the residual gradients x0's gradient still has to sum: the value-embedding layers at
//!   L−5, L−9, … each read the three the layers above them made since the last such sum, in one
//!   kernel, into an accumulator that lives to the embeddings (§13: `buf95`, `buf141`, `buf185`,
//!   made by layers 14, 13 and 12 of 16, read together at layer 11).

use super::{BlockParams, Gen};
use crate::engine::buffer_reuse::Kind;
use crate::engine::events::{Builder, TensorId};
use crate::terms::Term;

/// What one layer's compiled forward keeps for its backward (§4.2), by name.
pub(super) struct Kept {
    pub n1_stat: TensorId,
    pub n1_out: TensorId,
    /// c_q's, c_k's and c_v's bf16 weight copies.
    pub w_qkv: [TensorId; 3],
    /// A value-embedding layer's lookup, ve_gate's weight copy and its logits.
    pub ve: Option<[TensorId; 3]>,
    pub rot_q: TensorId,
    pub rot_k: TensorId,
    /// The QK-norm statistics of q and k.
    pub qk_stats: [TensorId; 2],
    /// SDPA's q, k, v, its log-sum-exp and RNG state.
    pub qkv: [TensorId; 3],
    pub lse: TensorId,
    pub rng: Vec<TensorId>,
    /// SDPA's output, c_proj's input, and c_proj's weight copy.
    pub y: TensorId,
    pub w_aproj: TensorId,
    pub x_mid: TensorId,
    pub n2_stat: TensorId,
    pub n2_out: TensorId,
    pub w_fc: TensorId,
    pub fc_out: TensorId,
    pub relu2: TensorId,
    pub w_mproj: TensorId,
    /// The next layer's input (none for the last layer).
    pub x_out: TensorId,
}

impl Kept {
    /// The tensors in the three groups the eager-shaped backward frees them in: the MLP's, c_proj's
    /// and the rest.
    pub fn groups(self) -> super::LayerSaved {
        let mut rest = vec![self.n1_stat, self.n1_out];
        rest.extend(self.w_qkv);
        rest.extend(self.ve.into_iter().flatten());
        rest.extend([self.rot_q, self.rot_k]);
        rest.extend(self.qk_stats);
        rest.extend(self.qkv);
        rest.push(self.lse);
        rest.extend(self.rng);
        rest.extend([self.n2_stat, self.x_out]);
        super::LayerSaved {
            mlp: vec![
                self.x_mid,
                self.n2_out,
                self.w_fc,
                self.fc_out,
                self.relu2,
                self.w_mproj,
            ],
            proj: vec![self.y, self.w_aproj],
            rest,
        }
    }
}

/// What the forward keeps outside the layers, for the backward's head and tail.
pub(super) struct Outer {
    /// The embedding's output, its norm statistic, the smear gate's inputs and x0.
    pub global: Vec<TensorId>,
    /// The final norm's input (after the backout), its statistic and its output.
    pub last: [TensorId; 3],
    pub lm_w: TensorId,
    pub logits: TensorId,
    /// The sliding windows' additive mask, shared by the masked layers.
    pub mask: TensorId,
}

/// What one layer's backward hands to the layer below.
struct Flow {
    /// The gradient that feeds the layer's MLP.
    g_out: TensorId,
    /// The residual gradient (for the last layer, `g_out` itself).
    dres: TensorId,
    /// The upper value-embedding layer's fp32 partial.
    partial: TensorId,
    /// Residual gradients x0's gradient has yet to sum, and the sum.
    pending: Vec<TensorId>,
    x0_acc: TensorId,
    /// For the layer above the backout layer only: what its closing kernel also reads.
    backout: Option<Backout>,
}

/// The backout (`x - backout_lambda·x_backout` before the final norm) sends a share of the final
/// norm's gradient to the backout layer's output. The closing kernel of the layer above it adds
/// that share, recomputing the final norm's backward from its input, its statistic and lm_head's
/// input gradient, so all three live until then; its gradient for the MLP below is written in
/// place into lm_head's input gradient (the generated code: `buf371 = buf4` at depth 18,
/// `buf421 = buf4` at depth 20; data/inductor/oc_nc_d18_B8_T512_L.tgz, oc_nc_d20_B16_T512_L.tgz).
struct Backout {
    sub: TensorId,
    stat: TensorId,
    dx: TensorId,
}

/// The micro-step's gradients as the graph makes them, each into `fresh` at its parameter's
/// index (the parameters listed once per micro-step: `Shape::params` builds the list).
struct Grads<'a> {
    fresh: &'a mut [TensorId],
    params: Vec<super::super::shape::Param>,
    term: Term,
}

impl Grads<'_> {
    fn make(&mut self, out: &mut Builder, k: usize) {
        let p = &self.params[k];
        let g = out.alloc(p.bytes(), self.term);
        self.fresh[k] = if p.elem_bytes == 4 { out.wide(g) } else { g };
    }
}

/// What a value-embedding layer's closing kernel writes in fp32 (B, T, C) buffers besides its
/// gradients. The lowest sum's writes one where the others past C = 1024 write two (the
/// generated code at depths 18 and 20: `buf772`); layer 1's, where it is not a sum, writes none
/// (depths 4, 16 and 20).
#[derive(Clone, Copy, PartialEq)]
enum Fp32Out {
    /// The partial the plain layer below reads (and past C = 1024 the looped kernel's scratch).
    Partial,
    /// The lowest sum's: the partial, no scratch.
    PartialOnly,
    /// Layer 1's, where it is not a sum: neither.
    Neither,
}

/// What becomes of the residual gradient a layer receives once the layer's closing kernel has
/// read it: the last layer's is the layer's own buffer; a value-embedding layer at L−5, L−9, …
/// sums it into x0's gradient with the ones pending; the one from L−5, L−9, … is done with;
/// the last layer's becomes x0's gradient: the first sum reads it and writes the sum into its
/// storage (the generated code: `buf237 = buf51`, in place, at depths 16 and 20); the rest
/// wait for the next sum (§13).
#[derive(Clone, Copy, PartialEq)]
enum CameIn {
    Own,
    Sum,
    Done,
    Seed,
    Pend,
}

impl Gen<'_> {
    /// The compiled backward of one micro-step, from the loss to wte's gradient, into `fresh`
    /// (indexed as [`super::Shape::params`]).
    pub(super) fn compiled_backward(
        &mut self,
        layers: Vec<Kept>,
        outer: Outer,
        fresh: &mut [TensorId],
        grad_term: Term,
        first_call: bool,
    ) {
        let super::Dims { c, v, bt, e, .. } = self.d;
        let btc = e * bt * c;
        let s = self.s;
        let mut grads = Grads {
            fresh,
            params: s.params(),
            term: grad_term,
        };
        let block_ix = super::block_param_indices(s);
        let lm_ix = super::lm_head_index(s);
        let Outer {
            mut global,
            last: [sub, final_stat, normed],
            lm_w,
            logits,
            mut mask,
        } = outer;
        self.out.begin_graph();
        // Inductor's names for the head's buffers start at buf3 (`buf3`: lm_head's dW)
        self.out.name_from(3);
        // the loss writes d(logits) in place; lm_head's bf16 dW, then its dx, then the fp32 grad.
        // The wrapper allocates dW before its mm runs, and that first backward matmul makes the
        // autograd thread's cuBLAS workspace (data/traces/nc_tr_*: the workspace follows dW)
        self.out.donate(logits);
        let dw_lm = self.out.alloc(2 * v * c, Term::LmHeadGrads);
        self.backward_workspace();
        self.out.free(normed);
        let dx = self.out.alloc(btc, Term::BlockTransient);
        self.out.free(logits);
        self.out.free(lm_w);
        if let Some(ix) = lm_ix {
            grads.make(&mut self.out, ix);
        }
        // a first call autotunes the head's kernels and the first layer's, each once: the later
        // layers run the same kernels (data/traces/nc_tr_exp_cal29: nine flush groups, all in
        // the head and the last layer)
        self.tuning_backward = first_call;
        self.tune(&[]);
        self.out.free(dw_lm);
        // the final norm's backward (it reads the backout's input too): the last layer's gradient
        let dres = self.out.alloc(btc, Term::BlockTransient);
        let l = s.l as usize;
        let mut backout = Some(Backout {
            sub,
            stat: final_stat,
            dx,
        });
        if l / 2 + 1 >= l {
            // the backout layer is the last: the final norm's backward was the last to read them
            let dx = self.close_backout(backout.take());
            self.out.free(dx);
        }
        let mut flow = Flow {
            g_out: dres,
            dres,
            partial: None,
            pending: Vec::new(),
            x0_acc: None,
            backout: None,
        };
        let first_masked = (0..l).find(|&i| self.masked(i));
        // each layer's input is freed by the plain one of the two layers that read it
        let mut x_outs: Vec<TensorId> = layers.iter().map(|k| k.x_out).collect();
        // each layer's buffers are named on from the first, c_proj's dW: buf11 for the last
        // layer, then 49 names a value-embedding layer takes (50 where it sums x0's gradient)
        // and 41 a plain one (the generated code at depths 16 and 20: the same numbers)
        let mut name = 11;
        for (i, kept) in layers.into_iter().enumerate().rev() {
            if i == l / 2 + 1 {
                flow.backout = backout.take();
            }
            let sums = |j: usize| s.ve[j] && j + 5 <= l && (l - 1 - j).is_multiple_of(4);
            let came_in = if i + 1 == l {
                CameIn::Own
            } else if sums(i) {
                CameIn::Sum
            } else if i + 2 == l && l >= 5 {
                // a sum follows at L−5
                CameIn::Seed
            } else if (l - 2 - i).is_multiple_of(4) {
                CameIn::Done
            } else {
                CameIn::Pend
            };
            let incoming = flow.dres;
            let ix = &block_ix[i];
            self.out.name_from(name);
            name += match (s.ve[i], came_in) {
                (true, CameIn::Sum) => 50,
                (true, _) => 49,
                (false, _) => 41,
            };
            flow.dres = if s.ve[i] {
                let fp32_out = if sums(i) && !(0..i).any(sums) {
                    Fp32Out::PartialOnly
                } else if i + 1 < l && !(0..i).any(|j| s.ve[j]) {
                    Fp32Out::Neither
                } else {
                    Fp32Out::Partial
                };
                self.ve_layer(kept, ix, &mut flow, came_in, fp32_out, &mut grads)
            } else {
                let mut inputs = vec![x_outs[i].take()];
                if i > 0 {
                    inputs.push(x_outs[i - 1].take());
                }
                self.plain_layer(kept, ix, &mut flow, came_in, inputs, i == 0, &mut grads)
            };
            self.tuning_backward = false;
            if came_in == CameIn::Pend {
                flow.pending.push(incoming);
            }
            if Some(i) == first_masked {
                self.out.free(mask.take());
            }
        }
        for t in x_outs {
            self.out.free(t);
        }
        // the embeddings: the bottom layer's gradient is the embedding output's; the smear
        // gate's, then wte's scatter into a (V, C) fp32 buffer and its bf16 cast
        self.out.free(flow.dres);
        self.out.free(flow.partial);
        self.out.free_all(&mut flow.pending);
        self.out.free(flow.x0_acc);
        self.scalar_grads(grads.fresh, grads.term);
        let vc = v * c;
        let scatter = self.out.alloc(4 * vc, Term::EmbeddingGradBuffer);
        let scatter = self.out.wide(scatter);
        self.out.free(flow.g_out);
        self.out.free_all(&mut global);
        grads.make(&mut self.out, 0);
        self.out.free(scatter);
        self.out.end_graph();
    }

    /// After a layer's closing kernel: the residual gradient it received, as [`CameIn`] says.
    fn settle(&mut self, came_in: CameIn, incoming: TensorId, flow: &mut Flow) {
        match came_in {
            CameIn::Sum => {
                self.out.free(incoming);
                self.out.free_all(&mut flow.pending);
            }
            CameIn::Done => self.out.free(incoming),
            CameIn::Seed => flow.x0_acc = incoming,
            CameIn::Own | CameIn::Pend => {}
        }
    }

    /// A value-embedding layer (§12's left column); returns the residual gradient it hands down.
    fn ve_layer(
        &mut self,
        k: Kept,
        ix: &BlockParams,
        flow: &mut Flow,
        came_in: CameIn,
        fp32_out: Fp32Out,
        grads: &mut Grads,
    ) -> TensorId {
        let super::Dims { c, v, bt, e, .. } = self.d;
        let btc = e * bt * c;
        let (c8, c2) = (8 * c * c, 2 * c * c);
        let last = came_in == CameIn::Own;
        let incoming = flow.dres;
        // MLP: c_proj's dW, d(relu²), relu²'s backward into this layer's donated c_fc output
        let dw = self.out.alloc(c8, Term::BlockTransient);
        self.out.free(k.relu2);
        let drelu = self.out.alloc(4 * btc, Term::BlockTransient);
        self.out.donate(k.fc_out);
        self.out.free(k.w_mproj);
        grads.make(&mut self.out, ix.mlp[1]);
        // relu²'s backward writes its input in place: timed on a clone of it
        self.tune(&[4 * btc]);
        self.out.free(dw);
        self.out.free(drelu);
        let dw = self.out.alloc(c8, Term::BlockTransient);
        self.out.free(k.n2_out);
        if !last {
            self.out.free(flow.g_out);
        }
        let dmlp = self.out.alloc(btc, Term::BlockTransient);
        // c_fc's two matmuls were its last readers
        self.out.free(k.fc_out);
        self.out.free(k.w_fc);
        grads.make(&mut self.out, ix.mlp[0]);
        self.out.free(dw);
        // norm 2's backward, in place: into the last layer's one incoming gradient, else into dmlp
        let h = if last { incoming } else { dmlp };
        self.out.free(k.x_mid);
        self.out.free(k.n2_stat);
        if last {
            self.out.free(dmlp);
        }
        // attention: c_proj's dW and dy, SDPA's backward
        let dwa = self.out.alloc(c2, Term::BlockTransient);
        let dy = self.out.alloc(btc, Term::BlockTransient);
        self.out.free(k.w_aproj);
        grads.make(&mut self.out, ix.proj);
        self.tune(&[]);
        self.out.free(dwa);
        let [dq, dk, dv] = self.sdpa_backward();
        self.out.free(dy);
        self.out.free(k.y);
        self.free_sdpa_saved(&k);
        self.tune(&[]);
        self.rotary_backward(&k, dq, dk);
        // the value embedding: its fp32 (V, C) scatter buffer, the gate's small gradients
        let scatter = self.out.alloc(4 * v * c, Term::EmbeddingGradBuffer);
        let scatter = self.out.wide(scatter);
        // two kernels timed on a first call: the one that fills the buffer, then the scatter,
        // which writes into it, so each timing copies the buffer where it fits below the peak
        // (data/traces/nc_tr_cal01 and nc_coldcalnr_01: 330 copies of 32 MiB at gpt.py:501;
        // nc_coldcalnr_27: the copy beside the flush buffer is iteration 0's backward peak)
        self.tune(&[]);
        self.tune(&[4 * v * c]);
        if let Some([lookup, gate_w, gate_logits]) = k.ve {
            self.out.free(lookup);
            self.out.free(gate_logits);
            self.out.free(gate_w);
        }
        if let Some(&gate) = ix.qkv.get(3) {
            grads.make(&mut self.out, gate);
        }
        // v, k, q: each dW as its matmul is reached, the input gradients into SDPA's storage
        let dwv = self.out.alloc(c2, Term::BlockTransient);
        let dxv = self.out.alloc(btc, Term::BlockTransient);
        self.out.free(k.w_qkv[2]);
        grads.make(&mut self.out, ix.qkv[2]);
        self.tune(&[]);
        self.out.free(dwv);
        self.out.free(dv);
        let ksum = self.out.alloc(btc, Term::BlockTransient);
        self.free_rot_halves(0);
        let dwk = self.out.alloc(c2, Term::BlockTransient);
        let dxk = self.out.alloc(btc, Term::BlockTransient);
        self.out.free(k.w_qkv[1]);
        grads.make(&mut self.out, ix.qkv[1]);
        self.out.free(dwk);
        self.out.free(ksum);
        let qsum = self.out.alloc(btc, Term::BlockTransient);
        self.free_rot_halves(2);
        let dwq = self.out.alloc(c2, Term::BlockTransient);
        self.out.free(k.n1_out);
        let dxq = self.out.alloc(btc, Term::BlockTransient);
        self.out.free(k.w_qkv[0]);
        grads.make(&mut self.out, ix.qkv[0]);
        self.out.free(dwq);
        // the closing kernel: norm 1's backward, the residual scales, x0's share; it writes the
        // fp32 partial, the gradient for the MLP below (into qsum) and the residual one (into h)
        // Inductor makes a reduction over C persistent up to 1024 elements
        // (`should_use_persistent_reduction`: the INNER threshold); past that the looped kernel
        // also writes a (B, T, C) fp32 scratch buffer of its own, dead once it has run (the
        // generated code: `buf49` beside `buf93` at depths 18 and 20, none at depth 16)
        let scratch = (c > 1024 && fp32_out == Fp32Out::Partial).then(|| {
            let t = self.out.alloc(2 * btc, Term::BlockTransient);
            self.out.wide(t)
        });
        let partial = if fp32_out == Fp32Out::Neither {
            None
        } else {
            let t = self.out.alloc(2 * btc, Term::BlockTransient);
            self.out.wide(t)
        };
        if !self.time_closing_kernel(self.norms_timed.closing_ve) {
            // persistent: one kernel for all layers, timed in the first (the last layer) with
            // nothing copied
            self.tune(&[]);
        }
        self.out.free(scratch.flatten());
        if came_in == CameIn::Sum && flow.x0_acc.is_none() {
            flow.x0_acc = self.out.alloc(btc, Term::BlockTransient);
        }
        self.out.free(k.n1_stat);
        let backout = flow.backout.take();
        let into_dx = backout.is_some();
        let dx = self.close_backout(backout);
        self.out.free(flow.partial.take());
        for t in [dxv, dxk, dxq] {
            self.out.free(t);
        }
        // the gradient for the MLP below: into qsum, or above the backout layer into lm_head's dx
        flow.g_out = if into_dx {
            self.out.free(qsum);
            dx
        } else {
            qsum
        };
        self.settle(came_in, incoming, flow);
        // the value embedding's bf16 gradient, cast from the scatter buffer
        if let Some(ve) = ix.value_embed {
            grads.make(&mut self.out, ve);
        }
        self.out.free(scatter);
        flow.partial = partial;
        h
    }

    /// A plain layer (§12's right column): the input-gradient path first, every weight gradient
    /// at its end. `inputs` are the layer inputs it is the last to read; the bottom layer's
    /// residual gradient ends in its closing kernel. Returns the residual gradient it hands down.
    #[allow(clippy::too_many_arguments)]
    fn plain_layer(
        &mut self,
        k: Kept,
        ix: &BlockParams,
        flow: &mut Flow,
        came_in: CameIn,
        mut inputs: Vec<TensorId>,
        bottom: bool,
        grads: &mut Grads,
    ) -> TensorId {
        let super::Dims { c, bt, e, .. } = self.d;
        let btc = e * bt * c;
        let (c8, c2) = (8 * c * c, 2 * c * c);
        let incoming = flow.dres;
        // d(relu²), freed after relu²'s backward into this layer's donated c_fc output (where
        // sizes allow, the wrapper's pool hands it the storage of the upper layer's)
        let drelu = self.out.alloc(4 * btc, Term::BlockTransient);
        self.out.donate(k.fc_out);
        self.out.free(k.w_mproj);
        self.out.free(drelu);
        let dmlp = self.out.alloc(btc, Term::BlockTransient);
        self.out.free(k.w_fc);
        self.out.free(k.x_mid);
        self.out.free(k.n2_stat);
        let dy = self.out.alloc(btc, Term::BlockTransient);
        self.out.free(k.w_aproj);
        let [dq, dk, dv] = self.sdpa_backward();
        self.out.free(dy);
        self.free_sdpa_saved(&k);
        let dxv = self.out.alloc(btc, Term::BlockTransient);
        self.out.free(k.w_qkv[2]);
        self.rotary_backward(&k, dq, dk);
        let ksum = self.out.alloc(btc, Term::BlockTransient);
        self.free_rot_halves(0);
        let dxk = self.out.alloc(btc, Term::BlockTransient);
        self.out.free(k.w_qkv[1]);
        let qsum = self.out.alloc(btc, Term::BlockTransient);
        self.free_rot_halves(2);
        let dxq = self.out.alloc(btc, Term::BlockTransient);
        self.out.free(k.w_qkv[0]);
        // the closing kernel: the residual gradient into dxv's storage, a new one for the MLP below
        // (above the backout layer, lm_head's dx; the bottom layer has no MLP below, and its
        // gradient goes on in x0's: the generated code at depth 16, `buf731 = buf599`)
        let backout = flow.backout.take();
        let g_below = if backout.is_some() || bottom {
            None
        } else {
            self.out.alloc(btc, Term::BlockTransient)
        };
        self.time_closing_kernel(self.norms_timed.closing_plain);
        self.out.free_all(&mut inputs);
        self.out.free(dxk);
        self.out.free(k.n1_stat);
        let g_below = g_below.or(self.close_backout(backout));
        self.settle(came_in, incoming, flow);
        if bottom {
            self.out.free(dxv);
        }
        self.out.free(dxq);
        self.out.free(flow.partial.take());
        // the deferred weight gradients
        let dw = self.out.alloc(c8, Term::BlockTransient);
        self.out.free(flow.g_out);
        self.out.free(k.relu2);
        grads.make(&mut self.out, ix.mlp[1]);
        self.out.free(dw);
        let dw = self.out.alloc(c8, Term::BlockTransient);
        self.out.free(k.n2_out);
        self.out.free(k.fc_out);
        grads.make(&mut self.out, ix.mlp[0]);
        self.out.free(dw);
        let dwa = self.out.alloc(c2, Term::BlockTransient);
        self.out.free(dmlp);
        self.out.free(k.y);
        grads.make(&mut self.out, ix.proj);
        self.out.free(dwa);
        // v, k, q: each dW's matmul is its input gradient's last reader, before the fp32 cast
        for (j, input_grad) in [(2, dv), (1, ksum), (0, qsum)] {
            let dw = self.out.alloc(c2, Term::BlockTransient);
            self.out.free(input_grad);
            if j == 0 {
                self.out.free(k.n1_out);
            }
            grads.make(&mut self.out, ix.qkv[j]);
            self.out.free(dw);
        }
        flow.g_out = g_below;
        if bottom {
            None
        } else {
            dxv
        }
    }

    /// What the kernel that adds the backout's share was the last to read: the final norm's
    /// input and statistic go; lm_head's input gradient, whose storage the kernel writes its
    /// output into, is returned (none without a backout).
    fn close_backout(&mut self, backout: Option<Backout>) -> TensorId {
        let b = backout?;
        self.out.free(b.sub);
        self.out.free(b.stat);
        b.dx
    }

    /// A kernel's first launch on a cold cache, timed as [`Gen::autotune`] says; `mutated` are
    /// the arguments it writes.
    /// A layer's closing kernel (norm 1's backward with the residual scales) where it is compiled
    /// once per layer and `per_layer` says a first run times it ([`super::looped_norm_timed`]):
    /// timed at this layer's first launch, on a copy of the gradient it writes in place. Whether
    /// it was.
    fn time_closing_kernel(&mut self, per_layer: bool) -> bool {
        let timed = per_layer && self.first_launches;
        if timed {
            let btc = self.d.e * self.d.bt * self.d.c;
            self.autotune(&[btc]);
        }
        timed
    }

    fn tune(&mut self, mutated: &[u128]) {
        if self.tuning_backward {
            self.autotune(mutated);
        }
    }

    /// cuDNN's attention backward: dq, dk, dv, which the op allocates itself.
    fn sdpa_backward(&mut self) -> [TensorId; 3] {
        let btc = self.d.e * self.d.bt * self.d.c;
        std::array::from_fn(|_| self.out.alloc_as(Kind::OpOutput, btc, Term::BlockTransient))
    }

    /// What SDPA's backward was the last to read: its statistics, RNG state, q, k and v.
    fn free_sdpa_saved(&mut self, k: &Kept) {
        self.out.free(k.lse);
        for &t in &k.rng {
            self.out.free(t);
        }
        for t in k.qkv {
            self.out.free(t);
        }
    }

    /// The QK-norm and rotary backward: two (B, T, H, 1) fp32 statistics' gradients and the four
    /// rotary halves (B, T, H, D/2), which the next layer's take over; the rotary q and k and
    /// their statistics go, then dq and dk, whose storage the input gradients take next.
    fn rotary_backward(&mut self, k: &Kept, dq: TensorId, dk: TensorId) {
        let super::Dims { bt, h, e, c, .. } = self.d;
        let mut stats = vec![
            self.out.alloc(4 * bt * h, Term::BlockTransient),
            self.out.alloc(4 * bt * h, Term::BlockTransient),
        ];
        self.rot_halves =
            std::array::from_fn(|_| self.out.alloc(e * bt * c / 2, Term::BlockTransient));
        self.tune(&[]);
        self.out.free(k.rot_q);
        self.out.free(k.rot_k);
        for t in k.qk_stats {
            self.out.free(t);
        }
        self.out.free_all(&mut stats);
        self.out.free(dq);
        self.out.free(dk);
    }

    /// Two of the rotary halves, once the sum that reads them is written.
    fn free_rot_halves(&mut self, from: usize) {
        for i in from..from + 2 {
            let t = self.rot_halves[i].take();
            self.out.free(t);
        }
    }
}
