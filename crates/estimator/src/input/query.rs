//! The calculator's state as a URL query (`?batch_size=16&compile=False&gpu=rtx3060`,
//! `?program=nanochat&depth=20&device_batch_size=8`), keyed by each program's own names: train.py's
//! config keys, base_train.py's argparse destinations. Decoding never fails: a bad or unknown value
//! falls back to the default for that field and is reported, so a shared link with a typo still
//! opens a working page.

use crate::error::ConfigError;
use crate::gpu::{self, gib_to_bytes, Budget, Gpu};
use crate::programs::{Configs, Program, ProgramConfig};
use crate::pyliteral::PyValue;

/// Everything the page's inputs hold.
#[derive(Clone, Debug, PartialEq)]
pub struct PageState {
    /// Which training program the page models; the other programs' settings are kept as they
    /// are (switching back finds them again) but leave the URL.
    pub program: Program,
    /// Every program's settings, one config each.
    pub configs: Configs,
    /// A preset id, or `custom` (then `vram_gib` is the card's memory).
    pub gpu: String,
    pub vram_gib: f64,
    /// `None`: the card's default CUDA context.
    pub context_gib: Option<f64>,
    pub other_gib: f64,
    /// A cap on the allocator (`set_per_process_memory_fraction`; an OOM message's "allowed").
    pub cap_gib: Option<f64>,
    /// GPU-to-GPU bandwidth per direction, GB/s (`None`: the card's own link). DDP's all-reduce.
    pub link_gbps: Option<f64>,
    /// `view=plan`: the page plans a whole nanochat run script instead of one run.
    pub plan: Option<PlanPage>,
}

/// The plan view's own inputs (`plan_gpus`, `plan_script` in the URL): how many cards, and the
/// run script (`None`: runs/speedrun.sh's stages).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanPage {
    pub gpus: u32,
    pub script: Option<String>,
}

impl Default for PlanPage {
    /// One GPU and the speedrun's stages.
    fn default() -> Self {
        PlanPage {
            gpus: 1,
            script: None,
        }
    }
}

/// The most GPUs a plan is for (torchrun's processes on one node and more).
pub const MAX_PLAN_GPUS: u32 = 1024;

/// The longest script a link carries (encoded): a longer one is planned on the page but left out of its
/// URL (a link of this size still opens everywhere).
pub const MAX_LINKED_SCRIPT: usize = 6000;

/// The card the page starts with: the most common card among the people vramfit is for.
pub const DEFAULT_GPU: &str = "rtx3060";
pub use crate::gpu::{custom_card, DEFAULT_CUSTOM_GIB};

impl Default for PageState {
    fn default() -> Self {
        PageState {
            program: Program::DEFAULT,
            configs: Configs::default(),
            gpu: DEFAULT_GPU.to_string(),
            vram_gib: DEFAULT_CUSTOM_GIB,
            context_gib: None,
            other_gib: 0.0,
            cap_gib: None,
            link_gbps: None,
            plan: None,
        }
    }
}

/// A query value that was not used, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryIssue {
    pub key: String,
    pub value: String,
    pub problem: IssueKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum IssueKind {
    /// Not a key vramfit knows.
    UnknownKey,
    /// The value was refused; the field kept its default.
    Invalid(Box<ConfigError>),
}

impl std::fmt::Display for QueryIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.problem {
            IssueKind::UnknownKey => write!(f, "unknown setting '{}' ignored", self.key),
            IssueKind::Invalid(e) => write!(f, "{e}; using the default"),
        }
    }
}

/// Keys of the page itself (language, embedding, theme…): accepted, not part of `PageState`.
pub const PAGE_KEYS: &[&str] = &["lang", "embed", "bg", "theme"];

/// Longest query the decoder looks at; a longer one is cut (a URL of this size is not a config).
const MAX_QUERY: usize = 8192;

impl PageState {
    /// The card as chosen: a preset, or a custom card of `vram_gib`.
    pub fn card(&self) -> Gpu {
        self.budget().gpu
    }

    /// Whether the chosen program's settings are all its defaults: nothing of a user's run has
    /// been entered (the card aside).
    pub fn has_default_settings(&self) -> bool {
        self.configs.is_default(self.program)
    }

    /// The card with its context and other processes. Never fails: a value the page could not
    /// use leaves the card's own (the fields are checked as they are set).
    pub fn budget(&self) -> Budget {
        let preset = gpu::find(&self.gpu);
        let vram = preset.is_none().then_some(self.vram_gib);
        // a custom card of an out-of-range size: the default custom card
        let mut b =
            Budget::for_card(preset, vram).unwrap_or_else(|_| Budget::for_gpu(&custom_card()));
        if let Some(c) = self.context_gib {
            if let Ok(bytes) = gib_to_bytes("context_gib", c, 0.0, 64.0) {
                b.context_bytes = bytes;
            }
        }
        if let Ok(bytes) = gib_to_bytes("other_gib", self.other_gib, 0.0, 4096.0) {
            b.other_bytes = bytes;
        }
        b.cap_bytes = self.cap_gib.and_then(|c| {
            gib_to_bytes(
                "cap_gib",
                c,
                crate::gpu::MIN_CARD_GIB,
                crate::gpu::MAX_CARD_GIB,
            )
            .ok()
        });
        if let Some(link) = self.link_gbps.filter(|x| x.is_finite() && *x > 0.0) {
            b.gpu.link_gbps = link;
        }
        b
    }

    /// A setting of the chosen program as its input shows it (`None`: not one of its keys).
    pub fn value(&self, key: &str) -> Option<String> {
        self.configs.get(self.program, key)
    }

    /// The chosen program's checks that involve more than one setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.configs.validate(self.program)
    }

    /// Makes `config`'s program the page's, with `config` (from
    /// [`crate::programs::config_from_flags`]) as its settings.
    pub fn set_config(&mut self, config: ProgramConfig) {
        self.program = config.program();
        self.configs.put(config);
    }

    /// Sets one key from its query text; the state is unchanged on error.
    pub fn set(&mut self, key: &str, raw: &str) -> Result<(), QueryIssue> {
        let issue = |e: ConfigError| QueryIssue {
            key: key.to_string(),
            value: raw.to_string(),
            problem: IssueKind::Invalid(Box::new(e)),
        };
        match key {
            "gpu" => {
                let id = raw.trim();
                if id == "custom" {
                    self.gpu = "custom".into();
                } else if let Some(g) = gpu::find(id) {
                    self.gpu = g.id.to_string();
                } else {
                    return Err(issue(ConfigError::new(
                        "gpu",
                        id,
                        crate::error::Problem::NotOneOf {
                            choices: &["a preset id such as rtx3060, rtx4090, a6000", "custom"],
                        },
                    )));
                }
            }
            "vram_gib" => {
                self.vram_gib =
                    gib_field(key, raw, crate::gpu::MIN_CARD_GIB, crate::gpu::MAX_CARD_GIB)
                        .map_err(issue)?
            }
            "context_gib" => {
                self.context_gib = Some(gib_field(key, raw, 0.0, 64.0).map_err(issue)?)
            }
            "other_gib" => self.other_gib = gib_field(key, raw, 0.0, 4096.0).map_err(issue)?,
            "cap_gib" => {
                self.cap_gib = Some(
                    gib_field(key, raw, crate::gpu::MIN_CARD_GIB, crate::gpu::MAX_CARD_GIB)
                        .map_err(issue)?,
                )
            }
            "program" => {
                self.program = Program::parse(raw.trim()).ok_or_else(|| {
                    issue(ConfigError::new(
                        "program",
                        raw.trim(),
                        crate::error::Problem::NotOneOf {
                            choices: Program::NAMES,
                        },
                    ))
                })?;
            }
            "view" => match raw.trim() {
                "plan" => {
                    self.plan.get_or_insert_with(PlanPage::default);
                }
                "calculator" => self.plan = None,
                other => {
                    return Err(issue(ConfigError::new(
                        "view",
                        other,
                        crate::error::Problem::NotOneOf {
                            choices: &["plan", "calculator"],
                        },
                    )))
                }
            },
            "plan_gpus" => {
                let n = number_field(
                    key,
                    raw,
                    "a whole number of GPUs",
                    1.0,
                    f64::from(MAX_PLAN_GPUS),
                )
                .map_err(issue)?;
                if n.fract() != 0.0 {
                    return Err(issue(ConfigError::new(
                        key,
                        raw.trim(),
                        crate::error::Problem::WrongType {
                            expected: "a whole number of GPUs",
                        },
                    )));
                }
                self.plan.get_or_insert_with(PlanPage::default).gpus = n as u32;
            }
            "plan_script" => {
                let plan = self.plan.get_or_insert_with(PlanPage::default);
                plan.script = Some(raw.to_string());
            }
            "link_gbps" => {
                self.link_gbps = Some(
                    number_field(
                        key,
                        raw,
                        "a bandwidth in GB/s",
                        MIN_LINK_GBPS,
                        MAX_LINK_GBPS,
                    )
                    .map_err(issue)?,
                )
            }
            _ => self
                .configs
                .set(self.program, key, raw)
                .map_err(|e| match e.problem {
                    crate::error::Problem::UnknownKey => QueryIssue {
                        key: key.to_string(),
                        value: raw.to_string(),
                        problem: IssueKind::UnknownKey,
                    },
                    _ => issue(e),
                })?,
        }
        Ok(())
    }

    /// Decodes a query string (with or without the leading `?`). Never fails.
    pub fn from_query(query: &str) -> (PageState, Vec<QueryIssue>) {
        let mut state = PageState::default();
        let mut issues = Vec::new();
        let pairs = query_pairs(query);
        // the program first: it decides whose names the other keys are
        let (program, rest): (Vec<_>, Vec<_>) =
            pairs.into_iter().partition(|(k, _)| k == "program");
        for (key, value) in program.into_iter().chain(rest) {
            if PAGE_KEYS.contains(&key.as_str()) {
                continue;
            }
            if let Err(e) = state.set(&key, &value) {
                issues.push(e);
            }
        }
        // the script's checks across settings: the settings involved back to its defaults
        for e in state.configs.repair(state.program) {
            issues.push(QueryIssue {
                key: e.key.clone(),
                value: e.value.clone(),
                problem: IssueKind::Invalid(Box::new(e)),
            });
        }
        (state, issues)
    }

    /// The query for this state: only what differs from the defaults, in a stable order,
    /// booleans written as nanoGPT writes them.
    pub fn to_query(&self) -> String {
        let d = PageState::default();
        let mut pairs: Vec<(String, String)> = Vec::new();
        if self.program != d.program {
            pairs.push(("program".into(), self.program.id().into()));
        }
        pairs.extend(self.configs.changed(self.program));
        if self.gpu != d.gpu {
            pairs.push(("gpu".into(), self.gpu.clone()));
        }
        if self.gpu == "custom" || self.vram_gib != d.vram_gib {
            pairs.push(("vram_gib".into(), format_gib(self.vram_gib)));
        }
        if let Some(c) = self.context_gib {
            pairs.push(("context_gib".into(), format_gib(c)));
        }
        if self.other_gib != 0.0 {
            pairs.push(("other_gib".into(), format_gib(self.other_gib)));
        }
        if let Some(c) = self.cap_gib {
            pairs.push(("cap_gib".into(), format_gib(c)));
        }
        if let Some(l) = self.link_gbps {
            pairs.push(("link_gbps".into(), format_gib(l)));
        }
        if let Some(plan) = &self.plan {
            pairs.push(("view".into(), "plan".into()));
            if plan.gpus != 1 {
                pairs.push(("plan_gpus".into(), plan.gpus.to_string()));
            }
            if let Some(s) = plan
                .script
                .as_ref()
                .filter(|s| encode(s).len() <= MAX_LINKED_SCRIPT)
            {
                pairs.push(("plan_script".into(), s.clone()));
            }
        }
        pairs
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// A number as a URL keeps it: the shortest text that reads back as the same value (`16`, `0.45`).
fn format_gib(x: f64) -> String {
    crate::decimal::shortest(x)
}

/// The range of a typed link bandwidth, GB/s.
pub const MIN_LINK_GBPS: f64 = 0.1;
pub const MAX_LINK_GBPS: f64 = 10_000.0;

/// A plain number within `[min, max]`.
fn number_field(
    key: &str,
    raw: &str,
    expected: &'static str,
    min: f64,
    max: f64,
) -> Result<f64, ConfigError> {
    let x: f64 = crate::decimal::parse(raw.trim())
        .ok_or_else(|| ConfigError::new(key, raw, crate::error::Problem::WrongType { expected }))?;
    if !x.is_finite() || x < min || x > max {
        return Err(ConfigError::new(
            key,
            raw.trim(),
            crate::error::Problem::OutOfRange {
                min: format_gib(min),
                max: format_gib(max),
            },
        ));
    }
    Ok(x)
}

/// A memory size in GiB within `[min, max]` (its message names the text as typed).
fn gib_field(key: &str, raw: &str, min: f64, max: f64) -> Result<f64, ConfigError> {
    number_field(key, raw, "a number of GiB", min, max)
}

/// How a value is written in a query: `True`/`False`, numbers as Python prints them, strings bare.
pub fn query_value(v: &PyValue) -> String {
    match v {
        PyValue::Str(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The longest start of `text` of at most `max_bytes` that ends on a character boundary (what
/// the parsers read of an over-long input).
pub(crate) fn head(text: &str, max_bytes: usize) -> &str {
    let mut end = text.len().min(max_bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A page key of the query (`embed`, `bg`, `theme`, `lang`: not part of the calculator's state),
/// its first value.
pub fn page_param(query: &str, key: &str) -> Option<String> {
    query_pairs(query)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// `application/x-www-form-urlencoded` pairs, percent-decoded (`+` is a space). Malformed
/// escapes are kept as text; invalid UTF-8 is replaced.
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    let q = head(query.strip_prefix('?').unwrap_or(query), MAX_QUERY);
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode(k), decode(v)),
            None => (decode(p), String::new()),
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Percent-encodes a query key or value (unreserved characters stay).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dtype;

    #[test]
    fn reads_nanogpt_keys_and_booleans_both_ways() {
        let (s, issues) = PageState::from_query(
            "?batch_size=16&compile=False&dtype=float16&bias=true&gpu=rtx4090",
        );
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(s.configs.nanogpt.batch_size, 16);
        assert!(!s.configs.nanogpt.compile);
        assert!(s.configs.nanogpt.bias);
        assert_eq!(s.configs.nanogpt.dtype, Dtype::Float16);
        assert_eq!(s.gpu, "rtx4090");
    }

    #[test]
    fn nanochat_state_is_its_argparse_names() {
        // the program first, whatever its place in the query; flags in either spelling
        let (p, issues) =
            PageState::from_query("depth=12&program=nanochat&device-batch-size=8&gpu=rtx4090");
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(p.program, Program::Nanochat);
        assert_eq!(
            (
                p.configs.nanochat.depth,
                p.configs.nanochat.device_batch_size
            ),
            (12, 8)
        );
        assert_eq!(
            p.to_query(),
            "program=nanochat&depth=12&device_batch_size=8&gpu=rtx4090"
        );
        assert_eq!(PageState::from_query(&p.to_query()).0, p);
        // nanoGPT's keys are not nanochat's: named, ignored
        let (p, issues) = PageState::from_query("program=nanochat&batch_size=4&window_pattern=SXL");
        assert_eq!(issues.len(), 2, "{issues:?}");
        assert_eq!(p.configs.nanochat.window_pattern, "SSSL");
        // the script's cross-flag assert: named, the flags involved back to their defaults
        let (p, issues) = PageState::from_query("program=nanochat&depth=4&total_batch_size=1000");
        assert_eq!(issues.len(), 1);
        assert!(p.configs.nanochat.validate().is_ok());
        // an unknown program: named, nanoGPT
        let (p, issues) = PageState::from_query("program=llama");
        assert_eq!((p.program, issues.len()), (Program::NanoGpt, 1));
    }

    #[test]
    fn round_trips_only_non_defaults() {
        let mut s = PageState::default();
        assert_eq!(s.to_query(), "");
        s.configs.nanogpt.batch_size = 8;
        s.configs.nanogpt.compile = false;
        s.configs.nanogpt.dropout = 0.1;
        s.gpu = "custom".into();
        s.vram_gib = 11.25;
        s.other_gib = 0.5;
        let q = s.to_query();
        assert_eq!(
            q,
            "batch_size=8&dropout=0.1&compile=False&gpu=custom&vram_gib=11.25&other_gib=0.5"
        );
        let (back, issues) = PageState::from_query(&q);
        assert!(issues.is_empty());
        assert_eq!(back, s);
    }

    #[test]
    fn bad_values_fall_back_with_a_notice() {
        let (s, issues) = PageState::from_query(
            "batch_size=0&n_layer=lots&dtype=fp8&gpu=voodoo&foo=1&vram_gib=NaN&lang=de&dropout=1e308",
        );
        let keys: Vec<&str> = issues.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "batch_size",
                "n_layer",
                "dtype",
                "gpu",
                "foo",
                "vram_gib",
                "dropout"
            ]
        );
        assert_eq!(s, PageState::default());
        assert_eq!(issues[4].problem, IssueKind::UnknownKey);
    }

    #[test]
    fn heads_that_do_not_divide_the_width_reset_both() {
        let (s, issues) = PageState::from_query("n_head=7&n_layer=6");
        assert_eq!(
            (
                s.configs.nanogpt.n_head,
                s.configs.nanogpt.n_embd,
                s.configs.nanogpt.n_layer
            ),
            (12, 768, 6)
        );
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].key, "n_embd");
    }

    #[test]
    fn decoding_is_total() {
        for q in [
            "%",
            "%%",
            "%zz",
            "a=%E2%82",
            "=",
            "&&&",
            "a==b",
            "\u{1F600}=1",
            "batch_size=%38",
        ] {
            let _ = PageState::from_query(q);
        }
        assert_eq!(query_pairs("a=%41+b")[0].1, "A b");
        let (s, _) = PageState::from_query("batch_size=%38");
        assert_eq!(s.configs.nanogpt.batch_size, 8);
        let long = "a=".to_string() + &"x".repeat(100_000);
        assert_eq!(query_pairs(&long)[0].1.len(), MAX_QUERY - 2);
    }

    #[test]
    fn world_size_and_link_round_trip_and_refuse_what_train_py_would() {
        let (s, issues) =
            PageState::from_query("world_size=4&gradient_accumulation_steps=8&link_gbps=56.25");
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(s.configs.nanogpt.world_size, 4);
        assert_eq!(s.budget().gpu.link_gbps, 56.25);
        assert_eq!(PageState::from_query(&s.to_query()).0, s);
        // 40 accumulation steps cannot be shared by 3 processes: the world size falls back
        let (s, issues) = PageState::from_query("world_size=3");
        assert_eq!(s.configs.nanogpt.world_size, 1);
        assert_eq!(issues.len(), 1);
        assert_eq!(
            issues[0].to_string(),
            "gradient_accumulation_steps=40 must be divisible by world_size=3; using the default"
        );
        for bad in [
            "link_gbps=0",
            "link_gbps=NaN",
            "link_gbps=1e308",
            "world_size=65",
            "world_size=-1",
        ] {
            let (s, issues) = PageState::from_query(bad);
            assert_eq!(issues.len(), 1, "{bad}");
            assert_eq!(s, PageState::default(), "{bad}");
        }
    }
}
