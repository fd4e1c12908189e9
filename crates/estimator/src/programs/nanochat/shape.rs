//! The model base_train.py builds from its flags (`build_model_meta`, `GPT.__init__`,
//! `init_weights`): widths, heads, value-embedding layers, attention windows, and every parameter
//! with the dtype it is stored in and the optimizer that owns it.

use super::config::NanochatConfig;

/// Which half of MuonAdamW updates a parameter (`GPT.setup_optimizer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    AdamW,
    Muon,
}

/// One parameter tensor as it lives on the GPU after `init_weights`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Rows and columns (a vector is `(n, 1)`).
    pub shape: (u64, u64),
    /// 2 for bf16 (`wte` and value embeddings, cast by `init_weights`), 4 for fp32 masters.
    pub elem_bytes: u64,
    pub owner: Owner,
}

impl Param {
    pub fn numel(&self) -> u64 {
        self.shape.0 * self.shape.1
    }

    pub fn bytes(&self) -> u128 {
        u128::from(self.numel()) * u128::from(self.elem_bytes)
    }
}

/// The shape of one nanochat model.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// n_layer = depth.
    pub l: u64,
    /// model_dim.
    pub c: u64,
    /// Heads (= key/value heads).
    pub h: u64,
    /// Head dimension (model_dim / heads).
    pub d: u64,
    /// Vocabulary padded to a multiple of 64 (`pad_vocab_size_to`).
    pub v: u64,
    /// max_seq_len.
    pub t: u64,
    /// Whether layer i has a value embedding (`has_ve`: alternating, the last layer always).
    pub ve: Vec<bool>,
    /// Each layer's attention window in tokens (the last layer always the full context).
    pub windows: Vec<u64>,
    /// Bytes per element of the compute dtype (2 for bf16, 4 for fp32): the embeddings'
    /// storage, the activations' and the logits'.
    pub e: u64,
}

impl Shape {
    pub fn of(cfg: &NanochatConfig) -> Shape {
        let l = u64::from(cfg.depth);
        let c = cfg.model_dim();
        let h = (c / u64::from(cfg.head_dim)).max(1);
        let t = u64::from(cfg.max_seq_len);
        let pattern: Vec<char> = cfg.window_pattern.chars().collect();
        // gpt.py `_compute_window_sizes`: S is a quarter of the context, ceiled to FA3's 128 tile
        let short = (t / 4).div_ceil(128) * 128;
        let mut windows: Vec<u64> = (0..l as usize)
            .map(|i| match pattern.get(i % pattern.len().max(1)) {
                Some('S') => short,
                _ => t,
            })
            .collect();
        if let Some(last) = windows.last_mut() {
            *last = t;
        }
        Shape {
            l,
            c,
            h,
            d: c / h,
            v: u64::from(cfg.vocab_size).div_ceil(64) * 64,
            t,
            ve: (0..l).map(|i| i % 2 == (l - 1) % 2).collect(),
            windows,
            e: cfg.compute_bytes(),
        }
    }

    /// Layers with a value embedding.
    pub fn n_ve(&self) -> u64 {
        self.ve.iter().filter(|&&x| x).count() as u64
    }

    /// Layers whose window is shorter than the context: with SDPA they attend through an explicit mask.
    pub fn n_masked(&self) -> u64 {
        self.windows.iter().filter(|&&w| w < self.t).count() as u64
    }

    /// Every parameter in registration order (`GPT.__init__`: wte, the blocks, lm_head, the
    /// scalars, the value embeddings).
    pub fn params(&self) -> Vec<Param> {
        let (c, h, v, l) = (self.c, self.h, self.v, self.l);
        let p = |shape, elem_bytes, owner| Param {
            shape,
            elem_bytes,
            owner,
        };
        // the embeddings are cast to the compute dtype by init_weights (a no-op in fp32)
        let mut out = vec![p((v, c), self.e, Owner::AdamW)];
        for i in 0..l as usize {
            for _ in 0..4 {
                out.push(p((c, c), 4, Owner::Muon)); // c_q, c_k, c_v, c_proj
            }
            if self.ve[i] {
                out.push(p((h, 12), 4, Owner::Muon)); // ve_gate: Linear(12, n_kv_head)
            }
            out.push(p((4 * c, c), 4, Owner::Muon)); // mlp.c_fc
            out.push(p((c, 4 * c), 4, Owner::Muon)); // mlp.c_proj
        }
        out.push(p((v, c), 4, Owner::AdamW)); // lm_head, untied, fp32 master
        out.push(p((l, 1), 4, Owner::AdamW)); // resid_lambdas
        out.push(p((l, 1), 4, Owner::AdamW)); // x0_lambdas
        out.push(p((1, 24), 4, Owner::AdamW)); // smear_gate
        out.push(p((1, 1), 4, Owner::AdamW)); // smear_lambda
        out.push(p((1, 1), 4, Owner::AdamW)); // backout_lambda
        for _ in 0..self.n_ve() {
            out.push(p((v, c), self.e, Owner::AdamW)); // value_embeds, kv_dim = C
        }
        out
    }

    /// The AdamW parameters in the order `MuonAdamW.step()` visits them: `setup_optimizer`'s
    /// groups — lm_head, wte, the value embeddings, then the scalars (resid_lambdas, x0_lambdas,
    /// smear_gate, smear_lambda, backout_lambda) — where [`Self::params`] has registration order.
    pub fn adamw_in_step_order(&self) -> Vec<Param> {
        let adamw: Vec<Param> = self
            .params()
            .into_iter()
            .filter(|p| p.owner == Owner::AdamW)
            .collect();
        // registration order: wte, lm_head, five scalars, the value embeddings
        let (wte, lm_head, scalars, value_embeds) =
            (&adamw[0], &adamw[1], &adamw[2..7], &adamw[7..]);
        [lm_head, wte]
            .into_iter()
            .chain(value_embeds)
            .chain(scalars)
            .cloned()
            .collect()
    }

    /// The Muon groups in `setup_optimizer`'s order (one per distinct shape, sorted): (shape, count).
    pub fn muon_groups(&self) -> Vec<((u64, u64), u64)> {
        let mut groups: Vec<((u64, u64), u64)> = Vec::new();
        for p in self.params().iter().filter(|p| p.owner == Owner::Muon) {
            match groups.iter_mut().find(|g| g.0 == p.shape) {
                Some(g) => g.1 += 1,
                None => groups.push((p.shape, 1)),
            }
        }
        groups.sort();
        groups
    }

    /// All parameters, as `num_scaling_params()['total']` counts them.
    pub fn total_params(&self) -> u64 {
        self.params().iter().map(Param::numel).sum()
    }

    /// `transformer_matrices + lm_head`: what base_train.py's scaling rules count.
    pub fn scaling_params(&self) -> u64 {
        let blocks: u64 = self
            .params()
            .iter()
            .filter(|p| p.owner == Owner::Muon)
            .map(Param::numel)
            .sum();
        blocks + self.v * self.c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(args: &[&str]) -> Shape {
        Shape::of(&NanochatConfig::from_args(args).unwrap())
    }

    #[test]
    fn reference_counts() {
        // nanochat-memory.md §1.2: d12 → 286,261,730 parameters; d20 → 896,533,746
        assert_eq!(shape(&["--depth=12"]).total_params(), 286_261_730);
        assert_eq!(shape(&["--depth=20"]).total_params(), 896_533_746);
    }

    #[test]
    fn widths_windows_and_value_embeddings() {
        let s = shape(&["--depth=6", "--max-seq-len=2048", "--window-pattern=SSL"]);
        assert_eq!((s.c, s.h, s.d), (384, 3, 128));
        assert_eq!(s.windows, vec![512, 512, 2048, 512, 512, 2048]);
        assert_eq!(s.ve, vec![false, true, false, true, false, true]);
        assert_eq!(s.n_masked(), 4);
        assert_eq!(
            s.muon_groups(),
            vec![
                ((3, 12), 3),
                ((384, 384), 24),
                ((384, 1536), 6),
                ((1536, 384), 6)
            ]
        );
    }
}
