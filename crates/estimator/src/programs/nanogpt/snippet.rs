//! A config back out: the nanoGPT config-file lines, the train.py command line and the
//! environment a run needs, holding only what differs from train.py's defaults.

use crate::config::{Allocator, Attention, TrainConfig, FIELDS_JSON_ORDER};

/// Keys vramfit knows that are not train.py settings (they come from the data, PyTorch or the
/// environment), so they never appear in a config file or on train.py's command line.
const NOT_TRAIN_PY: &[&str] = &[
    "vocab_size",
    "attention",
    "allocator",
    "world_size",
    "torchrun",
];

/// `(key, value)` of each train.py setting where `cfg` differs from `base`, as Python literals.
pub fn differing(cfg: &TrainConfig, base: &TrainConfig) -> Vec<(&'static str, String)> {
    FIELDS_JSON_ORDER
        .iter()
        .filter(|k| !NOT_TRAIN_PY.contains(k))
        .filter_map(|k| {
            let (v, b) = (cfg.get(k)?, base.get(k)?);
            (v != b).then(|| (*k, v.to_string()))
        })
        .collect()
}

/// nanoGPT config-file lines for `cfg`: the settings that differ from train.py's defaults, with a
/// comment on each line `changed_from` changes (`# was 16`).
pub fn config_file(cfg: &TrainConfig, changed_from: Option<&TrainConfig>) -> String {
    let defaults = TrainConfig::default();
    let mut out = String::new();
    for (k, v) in differing(cfg, &defaults) {
        let was = changed_from
            .and_then(|c| c.get(k))
            .filter(|old| old.to_string() != v)
            .map(|old| format!("  # was {old}"))
            .unwrap_or_default();
        out += &format!("{k} = {v}{was}\n");
    }
    if cfg.vocab_size != defaults.vocab_size {
        out += &format!(
            "# vocab_size {} comes from the dataset's meta.pkl (data/<dataset>/meta.pkl)\n",
            cfg.vocab_size
        );
    }
    if cfg.attention == Attention::Manual {
        out += "# attention: model.py's manual path (PyTorch < 2.0 has no scaled_dot_product_attention)\n";
    }
    out
}

/// Config-file lines for what `cfg` changes relative to `from`, each with `# was …`.
pub fn changes(cfg: &TrainConfig, from: &TrainConfig) -> String {
    differing(cfg, from)
        .into_iter()
        .map(|(k, v)| {
            let was = from.get(k).map(|o| o.to_string()).unwrap_or_default();
            format!("{k} = {v}  # was {was}\n")
        })
        .collect()
}

/// The code a patch-only fix needs, as it would be pasted into nanoGPT.
pub fn patch_code(patches: &crate::physics::Patches) -> Option<&'static str> {
    if patches.checkpoint_blocks {
        return Some(CHECKPOINT_PATCH);
    }
    if patches.chunked_loss {
        return Some(CHUNKED_LOSS_PATCH);
    }
    if patches.shard_optimizer {
        return Some(ZERO1_PATCH);
    }
    patches.eval_batch_size.map(|_| EVAL_BATCH_PATCH)
}

const ZERO1_PATCH: &str = "# train.py, in place of `optimizer = model.configure_optimizers(...)`: AdamW's state
# sharded over the DDP ranks (ZeRO-1)
from torch.distributed.optim import ZeroRedundancyOptimizer
groups = [{'params': g['params'], 'weight_decay': g['weight_decay']} for g in
          model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type).param_groups]
optimizer = ZeroRedundancyOptimizer(groups, optimizer_class=torch.optim.AdamW,
                                    lr=learning_rate, betas=(beta1, beta2), fused=True)
# before saving a checkpoint: gather the optimizer state on rank 0
optimizer.consolidate_state_dict(to=0)
";

const CHECKPOINT_PATCH: &str = "# model.py, GPT.forward: recompute each block in the backward
from torch.utils.checkpoint import checkpoint
for block in self.transformer.h:
    x = checkpoint(block, x, use_reentrant=False) if self.training else block(x)
";

const CHUNKED_LOSS_PATCH: &str =
    "# model.py, GPT.forward, when targets is given: the loss in 8 slices,
# lm_head recomputed in the backward, so the full logits never exist
from torch.utils.checkpoint import checkpoint
def _chunk_loss(xs, ts):
    return F.cross_entropy(self.lm_head(xs), ts, ignore_index=-1, reduction='sum')
xf, tf = x.view(-1, x.size(-1)), targets.view(-1)
loss = sum(checkpoint(_chunk_loss, a, b, use_reentrant=False)
           for a, b in zip(xf.chunk(8), tf.chunk(8))) / (tf != -1).sum()
logits = None
";

const EVAL_BATCH_PATCH: &str = "# train.py: evaluate at a smaller batch than training
def get_batch(split, bs=None):
    bs = bs or batch_size
    ...  # unchanged, but sample bs rows: torch.randint(len(data) - block_size, (bs,))
# in estimate_loss():
X, Y = get_batch(split, eval_batch_size)
";

/// The environment line a run needs, if any.
pub fn env_line(cfg: &TrainConfig) -> Option<String> {
    (cfg.allocator == Allocator::ExpandableSegments)
        .then(|| "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".to_string())
}

/// `python train.py --key=value …` with the settings that differ from `base` (train.py's
/// defaults when `None`), prefixed with the environment variable where one is needed.
pub fn command_line(cfg: &TrainConfig, base: Option<&TrainConfig>) -> String {
    let defaults = TrainConfig::default();
    let flags: Vec<String> = differing(cfg, base.unwrap_or(&defaults))
        .into_iter()
        .map(|(k, v)| {
            // strings are written unquoted: train.py falls back to the raw string
            let v = v.trim_matches('\'').to_string();
            format!("--{k}={v}")
        })
        .collect();
    let env = if cfg.allocator == Allocator::ExpandableSegments
        && base.is_none_or(|b| b.allocator != Allocator::ExpandableSegments)
    {
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
    } else {
        ""
    };
    let mut line = format!("{env}{} train.py", launcher(cfg.world_size, cfg.torchrun));
    for f in flags {
        line.push(' ');
        line += &f;
    }
    line
}

/// How train.py is started for `world_size` processes: python for one (torchrun where the run
/// says so), torchrun for DDP (one node up to 8 GPUs; 8 per node beyond, as nanoGPT's README
/// launches multi-node runs).
pub fn launcher(world_size: u32, torchrun: bool) -> String {
    match world_size {
        0 | 1 if !torchrun => "python".into(),
        n if n <= 8 || n % 8 != 0 => format!("torchrun --standalone --nproc_per_node={n}"),
        n => format!(
            "torchrun --nnodes={} --node_rank=0 --master_addr=HOST --master_port=1234 --nproc_per_node=8",
            n / 8
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dtype;

    #[test]
    fn only_what_differs_from_train_py() {
        assert_eq!(config_file(&TrainConfig::default(), None), "");
        let cfg = TrainConfig {
            batch_size: 8,
            gradient_accumulation_steps: 64,
            compile: false,
            dtype: Dtype::Float16,
            dropout: 0.1,
            ..TrainConfig::default()
        };
        let before = TrainConfig {
            batch_size: 16,
            ..cfg.clone()
        };
        assert_eq!(
            config_file(&cfg, Some(&before)),
            "batch_size = 8  # was 16\ngradient_accumulation_steps = 64\ndropout = 0.1\ndtype = 'float16'\ncompile = False\n"
        );
        assert_eq!(
            command_line(&cfg, None),
            "python train.py --batch_size=8 --gradient_accumulation_steps=64 --dropout=0.1 --dtype=float16 --compile=False"
        );
        assert_eq!(
            command_line(&cfg, Some(&before)),
            "python train.py --batch_size=8"
        );
    }

    #[test]
    fn world_size_is_the_launcher() {
        let cfg = TrainConfig {
            world_size: 4,
            ..TrainConfig::default()
        };
        assert_eq!(config_file(&cfg, None), "");
        assert_eq!(
            command_line(&cfg, None),
            "torchrun --standalone --nproc_per_node=4 train.py"
        );
        assert!(launcher(16, false).starts_with("torchrun --nnodes=2 "));
        // one process started by torchrun stays torchrun: train.py is under DDP then
        let one = TrainConfig {
            torchrun: true,
            ..TrainConfig::default()
        };
        assert_eq!(
            command_line(&one, None),
            "torchrun --standalone --nproc_per_node=1 train.py"
        );
        let read = crate::input::command_line::parse(&command_line(&one, None)).unwrap();
        assert_eq!(read.launcher_flags(), ["--torchrun=True"]);
        let plain = crate::input::command_line::parse("python train.py").unwrap();
        assert!(plain.launcher_flags().is_empty());
    }

    #[test]
    fn allocator_is_an_environment_variable() {
        let cfg = TrainConfig {
            allocator: Allocator::ExpandableSegments,
            ..TrainConfig::default()
        };
        assert_eq!(config_file(&cfg, None), "");
        assert_eq!(
            command_line(&cfg, Some(&TrainConfig::default())),
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py"
        );
        assert!(env_line(&cfg).is_some());
    }
}
