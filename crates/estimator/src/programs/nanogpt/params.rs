//! The exact parameter count nanoGPT's model.py builds (memory-physics.md §1).

use crate::config::TrainConfig;

/// Parameter counts of the GPT that model.py builds for a config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamCounts {
    /// Every parameter, with the tied `wte`/`lm_head` weight counted once: what memory holds.
    pub total: u64,
    /// What train.py prints ("number of parameters: 123.59M"): the total without `wpe`.
    pub reported: u64,
    /// Weights of every `nn.Linear` incl. the tied lm_head: what autocast copies to 16-bit.
    pub linear_weights: u64,
    /// Biases of the Linear layers (autocast copies them too, during eval).
    pub linear_biases: u64,
}

impl ParamCounts {
    pub fn of(cfg: &TrainConfig) -> ParamCounts {
        let (l, c, v) = (
            u64::from(cfg.n_layer),
            u64::from(cfg.n_embd),
            u64::from(cfg.vocab_size),
        );
        let t = u64::from(cfg.block_size);
        let b = u64::from(cfg.bias);
        let wte = v * c;
        let wpe = t * c;
        // ln_1, ln_2 weights (2C), c_attn C→3C, attn c_proj C→C, c_fc C→4C, mlp c_proj 4C→C;
        // with bias: 3C + C + 4C + C linear biases and 2C LayerNorm biases.
        let per_block = 12 * c * c + 2 * c + b * 11 * c;
        let ln_f = c + b * c;
        let total = wte + wpe + l * per_block + ln_f;
        ParamCounts {
            total,
            reported: total - wpe,
            linear_weights: v * c + 12 * l * c * c,
            linear_biases: b * 9 * c * l,
        }
    }
}

/// One parameter tensor of model.py's GPT (fp32 bytes), and whether nanoGPT's
/// `configure_optimizers` puts it in the weight-decay group (every tensor of 2 or more dims).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamTensor {
    pub bytes: u128,
    pub decay: bool,
}

/// A tensor of the model on the GPU: a parameter, or the causal-mask buffer model.py registers
/// in each attention block when it takes the manual path (no SDPA).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelTensor {
    Param(ParamTensor),
    MaskBuffer(u128),
}

impl ModelTensor {
    pub fn bytes(self) -> u128 {
        match self {
            ModelTensor::Param(p) => p.bytes,
            ModelTensor::MaskBuffer(b) => b,
        }
    }
}

/// Every tensor in the order `model.to(device)` moves them: `nn.Module._apply` visits children
/// depth-first, then a module's own parameters, then its buffers — wte, wpe, then per block
/// ln_1, attn.c_attn, attn.c_proj, the attention's mask buffer (manual path only), ln_2,
/// mlp.c_fc, mlp.c_proj (each weight followed by its bias when `bias`), then ln_f. The tied
/// `lm_head.weight` is `wte.weight`, already moved.
pub fn model_tensors(cfg: &TrainConfig) -> Vec<ModelTensor> {
    let (c, v, t) = (
        u128::from(cfg.n_embd),
        u128::from(cfg.vocab_size),
        u128::from(cfg.block_size),
    );
    let matrix = |bytes| ModelTensor::Param(ParamTensor { bytes, decay: true });
    let vector = |bytes| {
        ModelTensor::Param(ParamTensor {
            bytes,
            decay: false,
        })
    };
    let mut out = vec![matrix(4 * v * c), matrix(4 * t * c)];
    let layer_norm = |out: &mut Vec<ModelTensor>| {
        out.push(vector(4 * c));
        if cfg.bias {
            out.push(vector(4 * c));
        }
    };
    let linear = |out: &mut Vec<ModelTensor>, fan_in: u128, fan_out: u128| {
        out.push(matrix(4 * fan_in * fan_out));
        if cfg.bias {
            out.push(vector(4 * fan_out));
        }
    };
    for _ in 0..cfg.n_layer {
        layer_norm(&mut out);
        linear(&mut out, c, 3 * c);
        linear(&mut out, c, c);
        if cfg.attention == crate::config::Attention::Manual {
            out.push(ModelTensor::MaskBuffer(4 * t * t));
        }
        layer_norm(&mut out);
        linear(&mut out, c, 4 * c);
        linear(&mut out, 4 * c, c);
    }
    layer_norm(&mut out);
    out
}

/// Every parameter tensor in `model.parameters()` order (the tied wte/lm_head weight once).
pub fn tensors(cfg: &TrainConfig) -> Vec<ParamTensor> {
    model_tensors(cfg)
        .into_iter()
        .filter_map(|t| match t {
            ModelTensor::Param(p) => Some(p),
            ModelTensor::MaskBuffer(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpt2(bias: bool, vocab: u32) -> TrainConfig {
        TrainConfig {
            bias,
            vocab_size: vocab,
            ..TrainConfig::default()
        }
    }

    #[test]
    fn tensors_hold_every_parameter_once() {
        for bias in [false, true] {
            let cfg = gpt2(bias, 50304);
            let sum: u128 = tensors(&cfg).iter().map(|t| t.bytes).sum();
            assert_eq!(sum, 4 * u128::from(ParamCounts::of(&cfg).total));
        }
    }

    /// Figures from memory-physics.md §1, which checks them against train.py's printout and
    /// nanoGPT's transformer_sizing.ipynb.
    #[test]
    fn matches_nanogpt() {
        assert_eq!(ParamCounts::of(&gpt2(false, 50304)).total, 124_373_760);
        assert_eq!(ParamCounts::of(&gpt2(true, 50304)).total, 124_475_904);
        assert_eq!(ParamCounts::of(&gpt2(false, 50257)).total, 124_337_664);
        assert_eq!(ParamCounts::of(&gpt2(true, 50257)).total, 124_439_808);
        // train.py prints "number of parameters: 123.59M" for its defaults
        assert_eq!(ParamCounts::of(&gpt2(false, 50304)).reported, 123_587_328);
        let narrow = TrainConfig {
            n_embd: 576,
            ..TrainConfig::default()
        };
        assert_eq!(ParamCounts::of(&narrow).total, 77_355_072);
        let narrow_bias = TrainConfig {
            bias: true,
            ..narrow
        };
        assert_eq!(ParamCounts::of(&narrow_bias).total, 77_431_680);
    }

    #[test]
    fn shakespeare_char_baby_gpt() {
        // config/train_shakespeare_char.py: 6 layers, 6 heads, 384 wide, block 256, vocab 65:
        // train.py prints "number of parameters: 10.65M".
        let c = TrainConfig {
            n_layer: 6,
            n_head: 6,
            n_embd: 384,
            block_size: 256,
            vocab_size: 65,
            ..TrainConfig::default()
        };
        let p = ParamCounts::of(&c);
        assert_eq!(p.total, 10_745_088);
        assert_eq!(p.reported, 10_646_784);
    }
}
