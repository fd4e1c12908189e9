/** The training programs vramfit models. */
export type Program = "nanogpt" | "nanochat" | "nanochat-sft" | "build-nanogpt" | "llms-from-scratch-ch05" | "llms-from-scratch-ch05-speed" | "llms-from-scratch-ch06" | "llms-from-scratch-ch07";

/** One setting's value, as JSON writes it. */
export type Setting = number | boolean | string | null;

/**
 * A run's settings by the program's own names: train.py's keys (`batch_size`, `compile`, …),
 * nanochat's flags with underscores (`depth`, `device_batch_size`, …) or train_gpt2.py's
 * constants (`B`, `T`, …); `program` picks the program (default `"nanogpt"`). The CLI's own
 * `--json` answer is accepted too (its `program` and `config` are read). A string is read as
 * such an object's JSON text; an object is read as its JSON text would be (a key set to
 * `undefined` is left out), and refused if JSON could not hold it: a cycle, objects and arrays
 * nested 128 deep, more than 100,000 values, a function, symbol, BigInt, NaN or Infinity, a Map,
 * Date or other non-plain object.
 */
export type Config = ({ program?: Program } & { [key: string]: Setting }) | string;

/**
 * The card: a preset's id or name (`"rtx3060"`), or this object; default an H100. A custom
 * card is `{ gpu: "custom", vram_gib }` (or `vram_gib` without `gpu`).
 */
export interface Card {
  /** A preset's id or name, or `"custom"` (then `vram_gib` is required). */
  gpu?: string;
  /** The card's memory, GiB: a custom card's size, or a preset's memory replaced. */
  vram_gib?: number;
  /** CUDA context outside the allocator, GiB (default 0.45; 0.78 on Hopper). */
  context_gib?: number;
  /** What other processes hold on the card (a desktop), GiB. */
  other_gib?: number;
}

export type Risk = "fits" | "tight" | "oom";
export type Phase = "train_first_iter" | "train_steady" | "eval" | "eval_after_step" | "core";
export type Stage =
  | "model_load" | "forward" | "loss" | "backward" | "optimizer_step" | "zero_grad" | "eval";

/** The bar's segments at the peak; they sum to `peak_bytes.overall`. */
export interface Components {
  params: number; optimizer: number; gradients: number;
  activations: number; logits: number; other: number;
}

export interface Verdict {
  fits: boolean;
  risk: Risk;
  /** What the allocator may reserve minus what the run needs; negative is the shortfall. */
  headroom_bytes: number;
  need_bytes: number;
}

export interface GpuUse {
  id: string; name: string; total_bytes: number; usable_bytes: number;
  context_bytes: number; other_bytes: number; cublas_workspace_bytes: number;
}

/** Where a replay under the card's budget runs out. */
export interface SimulatedOom {
  phase: Phase | null; stage: Stage; micro_step: number; requested_bytes: number;
  tensor: string; allocated_bytes: number; reserved_bytes: number;
  reserved_unallocated_bytes: number; largest_free_block_bytes: number;
}

/** `analyze`'s answer: the CLI's `--json` without the fix searches' keys. */
export interface Analysis {
  program: Program;
  /** The script as its repository names it (`train.py`, `scripts/base_train.py`). */
  script: string;
  config: { [key: string]: Setting };
  params: { total: number; reported: number; scaling?: number };
  peak_bytes: {
    overall: number; train_steady: number | null; train_first_iter: number | null;
    eval: number | null; eval_after_step: number | null; reserved: number;
    eval_first?: number | null; core?: number | null;
    /** nanochat base_train.py: iteration 0 of a second run of the same shapes (train_first_iter is a first run's, on an empty compile cache). */
    train_first_iter_warm?: number | null;
  };
  peak_phase: Phase | null;
  peak_stage: Stage;
  peak_micro_step: number;
  components_bytes: Components;
  /** The tensors alive at the peak, bytes by kind. */
  terms_bytes: { [term: string]: number };
  effective_batch: number;
  tokens_per_iter: number;
  gpu: GpuUse;
  verdict: Verdict;
  simulated_oom: SimulatedOom | null;
  /** nanoGPT under DDP: per-rank memory and time; else null. */
  ddp: object | null;
  /** nanochat under torchrun (`nproc-per-node` > 1): the bound on the steps' collective tensors
   *  NCCL holds that the verdict used, and each run of ranks' peaks (`peak_bytes` is rank 0's,
   *  the fullest); null on one GPU. */
  ranks?: Ranks | null;
  warnings: string[];
  /** nanochat: the model its depth gives. */
  model?: object;
  /** nanoGPT: peaks at the moments of an iteration. */
  moments?: { phase: Phase; moment: string; micro_step: number; bytes: number }[];
  /** nanochat: tokens per optimizer step; build-nanogpt and nanochat: micro-steps per step. */
  total_batch_size?: number;
  grad_accum_steps?: number;
  /** LLMs-from-scratch: optimizer steps per epoch, validation sequences (0: its loader is
   *  empty), and the largest `batch_size` that fits the card. */
  steps_per_epoch?: number;
  val_sequences?: number;
  largest_batch_size_that_fits?: number | null;
  /** LLMs-from-scratch ch06: the parameters it trains (the last block, final_norm, out_head). */
  trainable_params?: number;
  /** What a pasted out-of-memory message says, and which tensor of this run it names (the
   *  CLI's `--oom-message`); always null from this package, which takes no message. */
  oom: OomReading | null;
  diagnosis: object | null;
}

/** nanochat on several GPUs, per rank. */
export interface Ranks {
  world_size: number;
  /** Steps whose gradients and optimizer buffers NCCL holds at once: ⌈watchdog / step⌉ + 1. */
  held_steps: number;
  /** The step time the bound comes from (vramfit's speed model of base_train.py). */
  step_seconds: number;
  watchdog_seconds: number;
  /** Rank 0's peak with one step's tensors held. */
  one_step_held_peak_bytes: number;
  /** NCCL's memory per rank, counted with the context in `gpu`. */
  nccl_bytes: number;
  each: {
    first: number; last: number;
    peak_bytes: {
      overall: number; train_steady: number | null; train_first_iter: number | null;
      eval_first: number | null; eval_after_step: number | null;
    };
  }[];
}

/** One fix, best first; `fits` and `risk` are its verdict on the same card. */
export interface Fix {
  /** The fix's kind, and its title and why in English. */
  kind: string; title: string; why: string;
  /** How much it changes training: nothing, slower, batch, model, … */
  impact: string;
  peak_bytes: number;
  /** Old peak − new peak: negative where the change costs memory. */
  saving_bytes: number;
  fits: boolean;
  risk: Risk;
  tokens_per_iter: number;
  /** nanoGPT and nanochat: the settings it changes. */
  changes?: { [key: string]: Setting };
  /** nanochat: the launch line to paste; nanoGPT: the train.py line, null where the fix is a
   *  code change or freeing the card. */
  command?: string | null;
  /** build-nanogpt: the lines of train_gpt2.py to edit; LLMs-from-scratch: the entries of
   *  gpt_train.py's dicts to edit. */
  edits?: string[];
  /** nanoGPT: the verdict's headroom, the parameters, the effective batch (and whether the
   *  change keeps it) and the iteration's time against today's. */
  headroom_bytes?: number;
  params_reported?: number;
  effective_batch?: number;
  effective_batch_kept?: boolean;
  iter_time_ratio?: number;
  /** nanochat: tokens per optimizer step after the change. */
  total_batch_size?: number;
}

/** What a CUDA out-of-memory message says (null where it says nothing). */
export interface OomReading {
  recognised: boolean;
  tried_to_allocate_bytes: number | null;
  total_capacity_bytes: number | null;
  free_bytes: number | null;
  process_in_use_bytes: number | null;
  allocated_by_pytorch_bytes: number | null;
  reserved_unallocated_bytes: number | null;
  already_allocated_bytes: number | null;
  reserved_total_bytes: number | null;
  allowed_bytes: number | null;
  other_processes: { pid: number; bytes: number }[];
  /** The preset whose capacity the message reports, if one does. */
  gpu: string | null;
}

/** A GPU preset. */
export interface Gpu {
  id: string; name: string; total_bytes: number; compute_capability: [number, number];
  bf16: boolean; tflops_bf16: number; tflops_fp16: number; tflops_fp32: number;
  link_gbps: number; consumer: boolean;
  /** The L2 cache: the size of the flush buffer a first compiled run's autotuning allocates. */
  l2_cache_bytes: number;
  /** Streaming multiprocessors: some compiled kernels' workspaces are sized by them. */
  sm_count: number;
}

/**
 * What every function throws on bad input: the CLI's message, and the setting it is about
 * (`batch_size`, `vram_gib`; `config` or `gpu` for the argument as a whole). An argument of the
 * wrong type (`readOom(12345)`) throws a `TypeError` whose `field` names the parameter.
 */
export interface VramfitError extends Error {
  field: string | null;
}

/**
 * What the memory of a run is, where it goes and whether it fits the card: the CLI's `--json`
 * answer without the fix searches' keys. Throws a {@link VramfitError} on bad input.
 */
export function analyze(config: Config, gpu?: Card | string): Analysis;

/** The ranked fixes, best first: the CLI's `--json` `fixes`. Throws a {@link VramfitError}. */
export function rankFixes(config: Config, gpu?: Card | string): Fix[];
