//! Every visible string of vramfit, per language, and the number formats that go with them —
//! shared by the page and the command line. English is compiled in from `i18n/en.txt`; the other
//! languages are the files beside it, which the page fetches when chosen. A test checks that every
//! language file has exactly English's keys and placeholders, so a missing translation cannot
//! ship. nanoGPT keys and code stay as they are in every language.
//!
//! Templates hold `{name}` placeholders filled by [`fill`].

use estimator::programs::Program;
use estimator::{Component, Risk, Term, Verdict};

#[macro_use]
mod table;
pub mod fix_text;
pub mod format;
pub mod plan_text;
pub use table::{parse, ParseError, Table};

strings! {
    /// The page's strings in one language (`i18n/LANG.txt`); the command line says these too.
    Strings {
    /// BCP 47 tag for `<html lang>`.
    lang,
    /// The language's own name, for the picker.
    name,
    title,
    /// The program choice at the top of the page.
    program_label,
    section_attention,
    /// Each program's section (`nanochat.tagline = …`): its tagline, chart title, evaluation's
    /// names, largest-batch line, a hint per setting and each fix's title and sentence of why —
    /// keys from the registry ([`PROGRAM_WORD_KEYS`]), read through [`Strings::program`].
    program_words[keys PROGRAM_WORD_KEYS],
    section_model,
    section_batch,
    section_precision,
    section_eval,
    section_gpu,
    settings_label,
    result_label,
    preset_label,
    preset_custom,
    vocab_label,
    vocab_gpt2,
    vocab_char,
    vocab_custom,
    attention_flash,
    attention_manual,
    allocator_default,
    allocator_expandable,
    gpu_label,
    gpu_custom,
    vram_label,
    context_label,
    context_hint,
    other_label,
    other_hint,
    drives_display_label,
    drives_display_hint,
    /// `{value}`: the value still in use beside a field's refused text.
    field_not_applied,
    /// `{n}` parameters as train.py prints them.
    params_count,
    effective_batch,
    tokens_per_iter,
    peak_label,
    /// Component names, keyed by [`Component::IDS`].
    components[by Component::IDS],
    /// What each component is, keyed by [`Component::IDS`].
    component_help[by Component::IDS],
    /// Term names, keyed by [`Term::IDS`].
    terms[by Term::IDS],
    phase_first_iter,
    phase_steady,
    /// `{phase}`, `{moment}`.
    peak_at,
    micro_step,
    bar_caption,
    usable_marker,
    reserved_outside,
    verdict_fits,
    verdict_tight,
    verdict_oom,
    /// `{need}`, `{usable}`, `{card}`.
    verdict_detail,
    /// `{gib}`.
    headroom,
    /// `{gib}`.
    shortfall,
    /// `{peak}`, `{frag}`.
    segment_hint,
    cache_legend,
    cache_title,
    need_explained,
    verdict_waiting,
    verdict_beyond,
    /// A run the script itself would stop (the error says why: `--fp8` on a card without FP8
    /// matmuls).
    verdict_cannot_run,
    beyond_margin,
    /// `{total} {requested} {allocated} {fragmented} {free}`.
    verdict_message_facts,
    copy_link,
    copied,
    theme_toggle,
    notice_heading,
    /// `{key}`.
    notice_unknown,
    /// `{message}`.
    notice_invalid,
    dismiss,
    formula,
    eval_iters_note,
    fixes_heading,
    already_fits,
    /// `{s}` seconds.
    time_now,
    mfu_label,
    mfu_hint,
    /// `{eff}`, `{old_eff}`: said when the effective batch could not be kept exactly.
    effective_not_kept,
    /// What a fix changes in training, keyed by [`estimator::fixes::Impact::IDS`].
    impacts[by estimator::fixes::Impact::IDS],
    col_peak,
    col_saving,
    /// `{gib}`: a "saving" that adds memory instead.
    saving_cost,
    col_fits,
    col_batch,
    col_tokens,
    col_time,
    col_impact,
    yes,
    no,
    top_fix,
    snippet_config,
    snippet_cli,
    snippet_env,
    snippet_patch,
    copy,
    copied_short,
    not_a_fix_heading,
    /// Stage names, keyed by [`estimator::sequence::Stage::IDS`].
    stages[by estimator::sequence::Stage::IDS],
    model_load,
    /// `{where} {requested} {tensor} {allocated} {fragmented} {largest}`.
    oom_explained,
    chart_allocated,
    chart_reserved,
    chart_budget,
    chart_oom,
    /// Caption of the table that gives the chart's numbers to screen readers.
    chart_table,
    chart_col_stage,
    chart_col_allocated,
    chart_col_reserved,
    snapshot_heading,
    snapshot_intro,
    snapshot_choose,
    snapshot_export,
    snapshot_export_help,
    snapshot_exporting,
    /// `{file} {size}`: the exported snapshot.
    snapshot_exported,
    /// `{file} {stage}`: one of the `snapshot_stage_*` words.
    snapshot_progress,
    snapshot_stage_load,
    snapshot_stage_read,
    snapshot_stage_follow,
    snapshot_stage_explain,
    /// `{file} {why}`: the reader's own reason (English, as the CLI prints it).
    snapshot_refused,
    /// `{file}`.
    snapshot_empty,
    /// `{file} {why}`: the browser's error.
    snapshot_crashed,
    /// `{file} {size} {limit}`.
    snapshot_too_large,
    /// `{file} {events}`.
    snapshot_whole,
    /// `{file} {events}`.
    snapshot_cut,
    snapshot_peak_allocated,
    snapshot_peak_reserved,
    /// `{requested} {allocated} {reserved} {free} {largest}`.
    snapshot_oom,
    snapshot_chart_title,
    snapshot_peak,
    snapshot_live_peak,
    snapshot_live_oom,
    snapshot_before,
    snapshot_allocated_by,
    /// `{segments}`.
    snapshot_cache_title,
    snapshot_col_segment,
    snapshot_col_total,
    snapshot_col_allocated,
    snapshot_col_internal,
    snapshot_col_free,
    /// `{n} {bytes}`.
    snapshot_cache_more,
    snapshot_compare_title,
    snapshot_col_measured,
    snapshot_col_predicted,
    snapshot_col_difference,
    /// `{component} {difference}`.
    snapshot_largest_difference,
    /// `{script} {program}`.
    snapshot_other_program,
    snapshot_unknown_script,
    /// `{script}`.
    snapshot_same_program,
    /// The program picker's way to the plan view, and back.
    plan_open,
    plan_back,
    plan_heading,
    plan_intro,
    plan_gpus,
    plan_script_label,
    /// The button that puts runs/speedrun.sh's stages back in the script field.
    plan_speedrun,
    plan_col_line,
    plan_col_stage,
    plan_col_written,
    plan_col_planned,
    plan_col_change,
    plan_col_memory,
    plan_fits,
    plan_oom,
    /// `{short}`: by how much a stage does not fit.
    plan_short,
    /// `{time}`: base_train.py's training time as planned.
    plan_time,
    plan_all_fit,
    plan_not_all_fit,
    /// A stage's flags could not be read (its row says which).
    plan_not_planned,
    /// `{core} {prompt}`: the data-dependent sizes the plan assumed.
    plan_assumed,
    plan_rewritten,
    plan_no_stage,
    /// Said while the plan worker plans (the first time, while its module is fetched too).
    plan_busy,
    /// `{why}`: the plan worker could not run (its module not fetched offline, or it died).
    plan_failed,
    plan_why_one_gpu,
    /// `{gpus}`.
    plan_why_gpus,
    /// `{sm}`.
    plan_why_fp8,
    /// `{micro}`: micro-steps per optimizer step on each GPU.
    plan_why_batch,
    plan_why_batch_eval,
    /// `{from} {to}`: depths.
    plan_why_depth,
    plan_dropped,
    plan_unchanged,
    jump_to_paste,
    paste_heading,
    paste_placeholder,
    paste_button,
    paste_nothing,
    /// `{card} {requested} {allocated} {fragmented} {others}`.
    paste_message,
    /// `{gib}`.
    paste_others,
    /// `{tensor} {where}`.
    paste_diagnosis,
    paste_reproduced,
    /// `{requested}`.
    paste_no_match,
    /// `{n}`: processes of a torchrun line.
    paste_command,
    paste_config,
    paste_json,
    /// `{line} {text}`.
    paste_skip_not_understood,
    /// `{line} {key}`.
    paste_skip_unknown,
    /// `{line} {message}`.
    paste_skip_invalid,
    /// `{files}`.
    paste_unknown_files,
    /// `{message}`.
    paste_error,
    paste_truncated,
    paste_budget_set,
    /// `{total} {like} {chosen}`.
    paste_card_other,
    /// `{card}`.
    paste_card_like,
    paste_use_card,
    paste_needs_settings,
    paste_config_unchanged,
    /// `{n}`.
    paste_skip_more,
    /// `{program}`: the program's name as the picker shows it.
    export_heading,
    export_config,
    export_defaults,
    embed_button,
    embed_heading,
    embed_hint,
    embed_open,
    embed_frame_title,
    update_text,
    update_button,
    close,
    /// `{a} {b}`: two items of a list (a place in the run: phase, stage, micro-step).
    list_pair,
    page_title,
    manifest_description,
    lang_label,
    /// Number formatting: the decimal separator and the thousands separator.
    decimal_sep,
    group_sep,
    /// The allocator-rounding term's formula, in words.
    formula_rounding,
    /// Invalid input. `{key} {value}` plus `{min} {max}`, `{expected}`, `{choices}`,
    /// `{divisor_key} {divisor}`.
    err_out_of_range,
    err_wrong_type,
    err_not_one_of,
    err_not_divisible,
    err_unknown_key,
    err_unreadable,
    err_beyond_any_card,
    expected_integer,
    expected_number,
    expected_bool,
    expected_processes,
    expected_gib,
    no_limit,
    /// `{x}`: the open upper end of a range (dropout < 1).
    err_below,
    /// The checkbox beside "copy link".
    link_with_lang,
    link_label,
    link_hint,
    /// Link presets, in [`estimator::speed::LINKS`] order.
    links[5],
    link_gbps_label,
    ddp_per_gpu,
    lang_loading,
    lang_failed,
}
}

strings! {
    /// The words of the one-line answer — the verdict, its margin and the number formats — read
    /// from a page language file by the first bar (`crates/first-bar`), which leaves the rest of
    /// the file (and the weight of [`Strings`]) to the page.
    BarWords {
    decimal_sep,
    group_sep,
    verdict_fits,
    verdict_tight,
    verdict_oom,
    headroom,
    shortfall,
    verdict_beyond,
    /// `{ceiling}`: a run past it fits no card (`Problem::BeyondAnyCard`).
    beyond_margin,
    }
}

impl Strings {
    /// This language's [`BarWords`].
    pub fn bar_words(&self) -> BarWords {
        BarWords {
            decimal_sep: self.decimal_sep,
            group_sep: self.group_sep,
            verdict_fits: self.verdict_fits,
            verdict_tight: self.verdict_tight,
            verdict_oom: self.verdict_oom,
            headroom: self.headroom,
            shortfall: self.shortfall,
            verdict_beyond: self.verdict_beyond,
            beyond_margin: self.beyond_margin,
        }
    }
}

/// Every program's report words, by whole key (`{section}.{name}`: the section is the program's
/// [`Program::words`], the names its [`Program::report_words`]), in the registry's order.
pub const REPORT_WORD_KEYS: table::Keys = table::Keys {
    count: || report_word_keys().len(),
    key: |i| report_word_keys().swap_remove(i),
    find: |key| report_word_keys().iter().position(|k| k == key),
};

fn report_word_keys() -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for p in Program::ALL {
        for name in p.report_words() {
            let key = format!("{}.{name}", p.words());
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys
}

strings! {
    /// The command line's own strings in one language (`crates/i18n/cli/LANG.txt`): its text
    /// report's head, verdict, diagnosis and notes. Apart from the page's, which never needs them.
    CliStrings {
    /// The row labels of the head (padded to one width).
    row_model,
    row_batch,
    row_settings,
    row_ddp,
    row_snapshot,
    row_peak_allocated,
    row_peak_reserved,
    row_oom,
    /// `{file} {events}`: a snapshot that recorded the whole run.
    snapshot_whole,
    /// `{file} {events}`: one that kept only the last events.
    snapshot_cut,
    /// `{requested} {allocated} {reserved} {free} {largest}`: the cache at the failed request.
    snapshot_oom,
    /// `{bytes}`: after [`CliStrings::snapshot_oom`], the allocated blocks' bytes beyond their
    /// requests.
    snapshot_internal,
    snapshot_estimated,
    snapshot_empty,
    row_live_peak,
    row_live_oom,
    row_allocated_by,
    /// `{bytes}`: what a snapshot cut short counts that none of its events allocated.
    snapshot_before,
    row_cache,
    /// `{segments} {reserved} {allocated} {internal} {free} {most} {of}`: the cache at the dump,
    /// and the segment with the most free bytes (`{most}` of its `{of}`).
    snapshot_cache,
    row_recorded_from,
    /// `{script} {program}`: the script the frames name, the program vramfit models it as.
    snapshot_script,
    row_predicted,
    /// `{allocated} {off} {reserved} {off_reserved}`: vramfit's prediction for the snapshot's run.
    snapshot_predicted,
    /// `{word}`: a config file or launch line given with `--snapshot`.
    snapshot_files,
    /// `{file} {events} {peak}`: vramfit's run written as a snapshot.
    snapshot_written,
    /// `{bytes} {place}`.
    peak,
    /// `{list}`.
    phases,
    reserved,
    /// `{here}`: on a card the run fills, what it reserves there (the cache released and retried).
    reserved_here,
    /// `{word} {card} {need} {usable} {margin}`: one plain sentence.
    verdict,
    /// `{need} {peak} {frag} {total} {context} {other}`: what the need and the usable are made of.
    verdict_parts,
    not_oom_message,
    /// `{requested}`.
    no_match,
    /// `{requested} {tensor} {size} {where} {fragmented} {how}`.
    diagnosis,
    /// `{bytes}`.
    diagnosis_fragmented,
    diagnosis_reproduced,
    diagnosis_elsewhere,
    /// `{card}`: no card was named and nvidia-smi found none.
    assumed_gpu,
    col_change,
    /// `{text}`: a note under the report.
    note,
    /// `{text}`: a heading that introduces a list.
    heading,
    /// `{text} {time}`.
    heading_time,
    /// Each program's report words, by whole key ([`REPORT_WORD_KEYS`]), read through
    /// [`CliStrings::report_word`].
    report_words[keys REPORT_WORD_KEYS],
    /// `{script} {gpus} {card}`: `vramfit plan`'s head.
    plan_head,
    /// `{core} {prompt}`: the data-dependent sizes the plan assumed.
    plan_assumed,
    /// `{line} {module} {written} {planned}`: one stage, as written and as planned (its verdict
    /// words and the summary are the page's: `Strings::plan_fits`, …).
    plan_stage,
    /// `{gpus} {card}`: above the rewritten script.
    plan_script,
    /// `vramfit --help`: usage, each program's settings and every option, as printed.
    help,
}
}

impl CliStrings {
    /// `program`'s report word `name` (one of its [`Program::report_words`]); empty for a name
    /// it does not list, which the tests of each program's report catch.
    pub fn report_word(&self, program: Program, name: &str) -> &'static str {
        let key = format!("{}.{name}", program.words());
        let at = report_word_keys().iter().position(|k| *k == key);
        debug_assert!(at.is_some(), "no report word {key}");
        at.and_then(|i| self.report_words.get(i).copied())
            .unwrap_or("")
    }
}

impl Strings {
    // Arrays of strings follow the declaration order of the estimator's enums (a test below
    // checks that every variant has its string).

    pub fn component(&self, c: Component) -> &'static str {
        self.components[c as usize]
    }

    pub fn component_help(&self, c: Component) -> &'static str {
        self.component_help[c as usize]
    }

    pub fn term(&self, t: Term) -> &'static str {
        self.terms.get(t as usize).copied().unwrap_or("")
    }

    pub fn stage(&self, st: estimator::sequence::Stage) -> &'static str {
        self.stages.get(st as usize).copied().unwrap_or("")
    }

    pub fn impact(&self, i: estimator::fixes::Impact) -> &'static str {
        self.impacts[i as usize]
    }

    /// A phase's name in `program`'s words (nanochat evaluates with `evaluate_bpb()`).
    pub fn phase_for(&self, program: Program, p: estimator::Phase) -> &'static str {
        match p {
            estimator::Phase::TrainFirstIter => self.phase_first_iter,
            estimator::Phase::TrainSteady => self.phase_steady,
            estimator::Phase::Eval => self.program(program).phase_eval(),
            estimator::Phase::EvalAfterStep => self.program(program).phase_eval_later(),
            estimator::Phase::Core => self.program(program).own("phase_core"),
            estimator::Phase::Load => self.program(program).own("phase_load"),
            estimator::Phase::Generate => self.program(program).own("phase_generate"),
        }
    }

    /// `program`'s words: its section of the language file.
    pub fn program(&self, program: Program) -> ProgramWords<'_> {
        ProgramWords {
            program,
            words: &self.program_words,
        }
    }
}

/// What each program's section of a language file holds besides its hints and fixes' words.
const SECTION_WORDS: [&str; 6] = [
    "tagline",
    "chart_title",
    "phase_eval",
    "phase_eval_later",
    "largest",
    "largest_none",
];

/// The keys of every program's section, in the registry's order: `{section}.{word}` for
/// [`SECTION_WORDS`], `{section}.hints.{name}` for each hinted setting of the programs the section
/// serves, `{section}.fix_titles.{kind}` and `{section}.fix_why.{kind}` for each fix kind, and
/// `{section}.own.{name}` for the words only its own views say. A new program's words are its
/// section of each file: nothing here changes.
pub const PROGRAM_WORD_KEYS: table::Keys = table::Keys {
    count: || sections().map(section_len).sum(),
    key: program_word_key,
    find: |key| {
        let (section, name) = key.split_once('.')?;
        word_index(section, name)
    },
};

/// The sections, each once, in the registry's order.
fn sections() -> impl Iterator<Item = &'static str> {
    Program::ALL
        .into_iter()
        .enumerate()
        .filter(|&(i, p)| Program::ALL[..i].iter().all(|q| q.words() != p.words()))
        .map(|(_, p)| p.words())
}

/// A section's names of one part (`hints`, `fix_titles`, `fix_why`, `own`): those of every program it
/// serves, each once.
#[inline(never)] // called through PROGRAM_WORD_KEYS and by name: one copy (wasm size)
fn part_names(section: &str, part: &str) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for p in Program::ALL.into_iter().filter(|p| p.words() == section) {
        let listed = match part {
            "hints" => p.hinted(),
            "own" => p.own_words(),
            _ => p.fix_kinds(),
        };
        for n in listed {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    names
}

const PARTS: [&str; 4] = ["hints", "fix_titles", "fix_why", "own"];

#[inline(never)] // called through PROGRAM_WORD_KEYS and by name: one copy (wasm size)
fn section_len(section: &str) -> usize {
    SECTION_WORDS.len()
        + PARTS
            .iter()
            .map(|p| part_names(section, p).len())
            .sum::<usize>()
}

/// The item of `{section}.{name}` among every section's words.
#[inline(never)] // called through PROGRAM_WORD_KEYS and by name: one copy (wasm size)
fn word_index(section: &str, name: &str) -> Option<usize> {
    let base: usize = sections()
        .take_while(|s| *s != section)
        .map(section_len)
        .sum();
    sections().find(|s| *s == section)?;
    if let Some(i) = SECTION_WORDS.iter().position(|w| *w == name) {
        return Some(base + i);
    }
    let (part, item) = name.split_once('.')?;
    let mut at = base + SECTION_WORDS.len();
    for p in PARTS {
        let names = part_names(section, p);
        if p == part {
            return names.iter().position(|n| *n == item).map(|i| at + i);
        }
        at += names.len();
    }
    None
}

/// The `i`th key of [`PROGRAM_WORD_KEYS`].
#[inline(never)] // called through PROGRAM_WORD_KEYS and by name: one copy (wasm size)
fn program_word_key(mut i: usize) -> String {
    for s in sections() {
        if i < SECTION_WORDS.len() {
            return format!("{s}.{}", SECTION_WORDS[i]);
        }
        i -= SECTION_WORDS.len();
        for p in PARTS {
            let names = part_names(s, p);
            if i < names.len() {
                return format!("{s}.{p}.{}", names[i]);
            }
            i -= names.len();
        }
    }
    String::new()
}

/// One program's words ([`Strings::program`]), looked up by name in its section.
#[derive(Clone, Copy)]
pub struct ProgramWords<'a> {
    program: Program,
    words: &'a [&'static str],
}

impl ProgramWords<'_> {
    /// The word `{section}.{name}`; empty where the section has none (a language file missing
    /// it fails the files' test, so only a name no program lists gets here).
    fn word(&self, name: &str) -> &'static str {
        word_index(self.program.words(), name)
            .and_then(|i| self.words.get(i).copied())
            .unwrap_or("")
    }

    /// Under the page's heading: what the page answers for this program.
    pub fn tagline(&self) -> &'static str {
        self.word("tagline")
    }

    /// The memory-over-the-run chart's title.
    pub fn chart_title(&self) -> &'static str {
        self.word("chart_title")
    }

    /// Its first evaluation's name.
    pub fn phase_eval(&self) -> &'static str {
        self.word("phase_eval")
    }

    /// Its evaluations after a training step.
    pub fn phase_eval_later(&self) -> &'static str {
        self.word("phase_eval_later")
    }

    /// The largest batch that fits (`{n}` and what else the program's line takes).
    pub fn largest(&self) -> &'static str {
        self.word("largest")
    }

    /// No batch fits.
    pub fn largest_none(&self) -> &'static str {
        self.word("largest_none")
    }

    /// The hint under a setting (`key` as the page names it).
    pub fn hint(&self, key: &str) -> &'static str {
        self.word(&format!("hints.{}", self.program.hint_name(key)))
    }

    /// A fix's title (`kind`: its id), with placeholders for [`crate::fill`].
    pub fn fix_title(&self, kind: &str) -> &'static str {
        self.word(&format!("fix_titles.{kind}"))
    }

    /// A fix's sentence of why, with placeholders.
    pub fn fix_why(&self, kind: &str) -> &'static str {
        self.word(&format!("fix_why.{kind}"))
    }

    /// One of the words only the program's own views say (its `OWN_WORDS`).
    pub fn own(&self, name: &str) -> &'static str {
        self.word(&format!("own.{name}"))
    }
}

/// The languages of the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    En,
    ZhHans,
    ZhHant,
    Ja,
    De,
}

/// Every language's tag, in [`Lang::ALL`] order.
pub const TAGS: [&str; 5] = ["en", "zh-Hans", "zh-Hant", "ja", "de"];

impl Lang {
    pub const ALL: [Lang; 5] = [Lang::En, Lang::ZhHans, Lang::ZhHant, Lang::Ja, Lang::De];

    /// BCP 47 tag: `<html lang>`, `?lang=`, the stored choice and the file name `i18n/{tag}.txt`.
    pub fn tag(self) -> &'static str {
        TAGS[self as usize]
    }

    /// The language's name in itself, for the picker (shown before its file is loaded).
    pub fn native_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::ZhHans => "简体中文",
            Lang::ZhHant => "繁體中文",
            Lang::Ja => "日本語",
            Lang::De => "Deutsch",
        }
    }

    /// The language a tag asks for, as browsers and people write tags: `de-AT` → German,
    /// `zh-TW`/`zh-HK`/`zh-Hant-*` → Traditional Chinese, other `zh` → Simplified. Case-insensitive.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let tag = tag.trim().to_ascii_lowercase().replace('_', "-");
        let mut parts = tag.split('-');
        match parts.next()? {
            "en" => Some(Lang::En),
            "ja" => Some(Lang::Ja),
            "de" => Some(Lang::De),
            "zh" => {
                let rest: Vec<&str> = parts.collect();
                let traditional = rest
                    .iter()
                    .any(|p| matches!(*p, "hant" | "tw" | "hk" | "mo"))
                    && !rest.contains(&"hans");
                Some(if traditional {
                    Lang::ZhHant
                } else {
                    Lang::ZhHans
                })
            }
            _ => None,
        }
    }

    /// The first of the browser's preferred languages vramfit speaks; English otherwise.
    pub fn negotiate<'a>(preferred: impl IntoIterator<Item = &'a str>) -> Lang {
        preferred
            .into_iter()
            .find_map(Lang::from_tag)
            .unwrap_or(Lang::En)
    }

    /// The language a page opens in when its URL names none (or none vramfit speaks): the one
    /// stored under [`Lang::STORAGE_KEY`], else [`Lang::negotiate`] over the browser's languages.
    /// (The page and the first bar decide alike, so the first bar speaks the page's language.)
    pub fn unchosen<'a>(
        stored: Option<&str>,
        preferred: impl IntoIterator<Item = &'a str>,
    ) -> Lang {
        stored
            .and_then(Lang::from_tag)
            .unwrap_or_else(|| Lang::negotiate(preferred))
    }

    /// Where the page keeps the reader's choice of language (localStorage).
    pub const STORAGE_KEY: &str = "vramfit-lang";

    /// The strings of this language: English until its file has been loaded.
    pub fn strings(self) -> &'static Strings {
        match self {
            Lang::En => en(),
            other => LOADED
                .with(|l| l.borrow()[other as usize])
                .unwrap_or_else(en),
        }
    }

    /// Whether [`Lang::strings`] returns this language's own strings.
    pub fn is_ready(self) -> bool {
        self == Lang::En || LOADED.with(|l| l.borrow()[self as usize].is_some())
    }

    /// This language compiled in, for programs that carry every language (the command line;
    /// the page fetches its files instead, and the linker drops this when nothing calls it).
    pub fn bundled(self) -> &'static Strings {
        static BUNDLED: [std::sync::OnceLock<Strings>; 5] =
            [const { std::sync::OnceLock::new() }; 5];
        let text = match self {
            Lang::En => return en(),
            Lang::ZhHans => include_str!("../../../i18n/zh-Hans.txt"),
            Lang::ZhHant => include_str!("../../../i18n/zh-Hant.txt"),
            Lang::Ja => include_str!("../../../i18n/ja.txt"),
            Lang::De => include_str!("../../../i18n/de.txt"),
        };
        BUNDLED[self as usize].get_or_init(|| parse(text, Some(en())).0)
    }

    /// What the command line says in this language: both tables, compiled in.
    pub fn cli(self) -> CliLang {
        static BUNDLED: [std::sync::OnceLock<CliStrings>; 5] =
            [const { std::sync::OnceLock::new() }; 5];
        let text = match self {
            Lang::En => return CliLang::en(),
            Lang::ZhHans => include_str!("../cli/zh-Hans.txt"),
            Lang::ZhHant => include_str!("../cli/zh-Hant.txt"),
            Lang::Ja => include_str!("../cli/ja.txt"),
            Lang::De => include_str!("../cli/de.txt"),
        };
        CliLang {
            page: self.bundled(),
            cli: BUNDLED[self as usize].get_or_init(|| parse(text, Some(cli_en())).0),
        }
    }

    /// The language a POSIX locale names (`de_DE.UTF-8`, `zh_TW`, `ja_JP.eucJP@x`); `C`,
    /// `POSIX` and languages vramfit does not speak give `None`.
    pub fn from_locale(locale: &str) -> Option<Lang> {
        let name = locale.split(['.', '@']).next().unwrap_or("");
        Lang::from_tag(name)
    }

    /// Keeps a parsed language for the rest of the session.
    pub fn store(self, strings: Strings) {
        let leaked: &'static Strings = Box::leak(Box::new(strings));
        LOADED.with(|l| l.borrow_mut()[self as usize] = Some(leaked));
    }
}

thread_local! {
    /// Languages loaded so far, by `Lang as usize`.
    static LOADED: std::cell::RefCell<[Option<&'static Strings>; 5]> =
        const { std::cell::RefCell::new([None; 5]) };
}

/// The command line's own strings in English, compiled in.
pub fn cli_en() -> &'static CliStrings {
    static EN: std::sync::OnceLock<CliStrings> = std::sync::OnceLock::new();
    EN.get_or_init(|| parse(include_str!("../cli/en.txt"), None).0)
}

/// The command line's language: its own strings, and the page's for all that both say (terms,
/// phases, fix titles, verdict words), which `tr.term(…)` and the like reach through `Deref`.
#[derive(Clone, Copy, Debug)]
pub struct CliLang {
    pub page: &'static Strings,
    pub cli: &'static CliStrings,
}

impl CliLang {
    pub fn en() -> CliLang {
        CliLang {
            page: en(),
            cli: cli_en(),
        }
    }
}

impl std::ops::Deref for CliLang {
    type Target = Strings;

    fn deref(&self) -> &Strings {
        self.page
    }
}

/// Replaces each `{name}` in a template.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

/// The verdict's word, its CSS class (`style/main.css`) and the headroom or shortfall:
/// "Out of memory", "3.65 GiB short".
pub fn verdict_words(words: &BarWords, v: &Verdict) -> (&'static str, &'static str, String) {
    let (word, class) = match v.risk {
        Risk::Fits => (words.verdict_fits, "verdict--fits"),
        Risk::Tight => (words.verdict_tight, "verdict--tight"),
        Risk::Oom => (words.verdict_oom, "verdict--oom"),
    };
    let template = if v.headroom_bytes >= 0 {
        words.headroom
    } else {
        words.shortfall
    };
    let margin = fill(template, &[("gib", &format::gib_abs(v.headroom_bytes))]);
    (word, class, margin)
}

/// English, compiled in: the language every other is checked against.
pub fn en() -> &'static Strings {
    static EN: std::sync::OnceLock<Strings> = std::sync::OnceLock::new();
    EN.get_or_init(|| parse(include_str!("../../../i18n/en.txt"), None).0)
}

/// A refused input in the language being rendered (the estimator's own `Display` is English).
pub fn error(tr: &Strings, e: &estimator::ConfigError) -> String {
    use estimator::Problem;
    let (key, value) = (
        estimator::error::echo(&e.key),
        estimator::error::echo(&e.value),
    );
    let base = [("key", key.as_ref()), ("value", value.as_ref())];
    match &e.problem {
        Problem::OutOfRange { min, max } => {
            let max = match max.strip_prefix("below ") {
                Some(x) => fill(tr.err_below, &[("x", x)]),
                None if max.is_empty() => tr.no_limit.to_string(),
                None => max.clone(),
            };
            fill(
                tr.err_out_of_range,
                &[base[0], base[1], ("min", min), ("max", &max)],
            )
        }
        Problem::WrongType { expected } => {
            let expected = match *expected {
                "an integer" => tr.expected_integer,
                "a number" => tr.expected_number,
                "True or False" => tr.expected_bool,
                "a whole number of processes" => tr.expected_processes,
                "a number of GiB" => tr.expected_gib,
                other => other,
            };
            fill(
                tr.err_wrong_type,
                &[base[0], base[1], ("expected", expected)],
            )
        }
        Problem::NotOneOf { choices } => fill(
            tr.err_not_one_of,
            &[base[0], base[1], ("choices", &choices.join(", "))],
        ),
        Problem::NotDivisibleBy {
            divisor_key,
            divisor,
        } => fill(
            tr.err_not_divisible,
            &[
                base[0],
                base[1],
                ("divisor_key", divisor_key),
                ("divisor", &divisor.to_string()),
            ],
        ),
        Problem::UnknownKey => fill(tr.err_unknown_key, &base),
        Problem::Unreadable { .. } => fill(tr.err_unreadable, &base),
        // the script's own words (an assert or argparse), as the script prints them in any language
        Problem::Assertion { .. } => e.to_string(),
        Problem::BeyondAnyCard { beyond } => fill(
            tr.err_beyond_any_card,
            &[
                ("ceiling", &estimator::engine::events::ceiling_text()),
                ("requested", &format::bytes(beyond.requested)),
                ("tensor", tr.term(beyond.term)),
            ],
        ),
    }
}

/// Where in the run something happens: "steady training, backward, micro-step 2" (an eval's
/// stage is the eval itself, so it is not said twice).
pub fn place(
    tr: &Strings,
    program: Program,
    phase: Option<estimator::Phase>,
    stage: estimator::sequence::Stage,
    micro_step: u32,
) -> String {
    let mut place = phase
        .map_or(tr.model_load, |p| tr.phase_for(program, p))
        .to_string();
    if stage != estimator::sequence::Stage::Eval {
        place = fill(tr.list_pair, &[("a", &place), ("b", tr.stage(stage))]);
    }
    if micro_step > 0 {
        let step = fill(tr.micro_step, &[("n", &micro_step.to_string())]);
        place = fill(tr.list_pair, &[("a", &place), ("b", &step)]);
    }
    place
}

/// Which tensor of `program`'s run an out-of-memory message's failed request is, and where in
/// the run: the command line's sentence (and, in English, the JSON's `explanation`).
pub fn diagnosis_sentence(
    tr: &CliLang,
    program: Program,
    m: &estimator::oom::OomMessage,
    d: &estimator::oom::Diagnosis,
) -> String {
    let fragmented = m
        .reserved_unallocated_bytes
        .map(|r| fill(tr.cli.diagnosis_fragmented, &[("bytes", &format::bytes(r))]))
        .unwrap_or_default();
    let how = if d.reproduced {
        tr.cli.diagnosis_reproduced
    } else {
        tr.cli.diagnosis_elsewhere
    };
    fill(
        tr.cli.diagnosis,
        &[
            (
                "requested",
                &format::bytes(m.tried_to_allocate_bytes.unwrap_or(0)),
            ),
            ("tensor", tr.term(d.term)),
            ("size", &format::bytes(d.tensor_bytes)),
            ("where", &place(tr, program, d.phase, d.stage, d.micro_step)),
            ("fragmented", &fragmented),
            ("how", how),
        ],
    )
}

/// A query or field value that was not applied, in the language being rendered.
pub fn issue(tr: &Strings, i: &estimator::query::QueryIssue) -> String {
    match &i.problem {
        estimator::query::IssueKind::UnknownKey => fill(tr.err_unknown_key, &[("key", &i.key)]),
        estimator::query::IssueKind::Invalid(e) => error(tr, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every program's section has its words, a hint for each setting it hints and the words of
    /// each fix kind, found by name; and `program as usize` indexes the programs' names.
    #[test]
    fn every_program_has_its_words_by_name() {
        for p in Program::ALL {
            let words = en().program(p);
            for w in [
                words.tagline(),
                words.chart_title(),
                words.phase_eval(),
                words.phase_eval_later(),
                words.largest(),
                words.largest_none(),
            ] {
                assert!(!w.is_empty(), "{p:?}");
            }
            for k in p.hinted() {
                assert!(!words.hint(k).is_empty(), "{p:?} {k}");
            }
            for k in p.fix_kinds() {
                assert!(!words.fix_title(k).is_empty() && !words.fix_why(k).is_empty());
            }
            // a name no program lists has no words
            assert_eq!(words.fix_title("no_such_fix"), "");
        }
        // no section's keys can be taken for a field's
        assert!((PROGRAM_WORD_KEYS.count)() <= table::MAX_KEYS);
        for k in (0..(PROGRAM_WORD_KEYS.count)()).map(PROGRAM_WORD_KEYS.key) {
            assert_eq!(
                (PROGRAM_WORD_KEYS.find)(&k).map(PROGRAM_WORD_KEYS.key),
                Some(k.clone())
            );
            let first = k.split('.').next().unwrap_or_default();
            assert!(!<Strings as Table>::NAMES.contains(&first), "{k}");
        }
        for (i, p) in Program::ALL.into_iter().enumerate() {
            assert_eq!((p as usize, p.id()), (i, Program::NAMES[i]));
            assert!(!p.name().is_empty());
        }
    }

    fn placeholders(s: &str) -> Vec<&str> {
        let mut out: Vec<&str> = s
            .match_indices('{')
            .filter_map(|(i, _)| {
                let rest = &s[i + 1..];
                let end = rest.find('}')?;
                let name = &rest[..end];
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_')
                    .then_some(name)
            })
            .collect();
        out.sort_unstable();
        out
    }

    fn code_spans(s: &str) -> Vec<&str> {
        let mut out: Vec<&str> = s.split('`').skip(1).step_by(2).collect();
        out.sort_unstable();
        out
    }

    /// Three or more plain English words (code like `exp_avg + exp_avg_sq` is not prose).
    fn is_prose(s: &str) -> bool {
        s.split_whitespace()
            .filter(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_lowercase()))
            .count()
            >= 3
    }

    /// The page's language file.
    fn language_file(lang: Lang) -> &'static str {
        read(&format!("../../i18n/{}.txt", lang.tag()))
    }

    /// The command line's language file.
    fn cli_language_file(lang: Lang) -> &'static str {
        read(&format!("cli/{}.txt", lang.tag()))
    }

    fn read(relative: &str) -> &'static str {
        let path = format!("{}/{relative}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        Box::leak(text.into_boxed_str())
    }

    #[test]
    fn bundled_languages_are_their_files_and_locales_name_them() {
        for lang in Lang::ALL {
            assert_eq!(lang.bundled().lang, lang.tag());
            assert_eq!(lang.bundled().title, {
                let (s, _) = parse::<Strings>(language_file(lang), None);
                s.title
            });
            assert_eq!(lang.cli().cli.row_model, {
                let (s, _) = parse::<CliStrings>(cli_language_file(lang), None);
                s.row_model
            });
            assert_eq!(lang.cli().lang, lang.tag());
        }
        for (locale, lang) in [
            ("de_DE.UTF-8", Some(Lang::De)),
            ("de_AT", Some(Lang::De)),
            ("zh_TW.UTF-8", Some(Lang::ZhHant)),
            ("zh_CN.GB18030", Some(Lang::ZhHans)),
            ("ja_JP.eucJP@euro", Some(Lang::Ja)),
            ("en_GB.UTF-8", Some(Lang::En)),
            ("C.UTF-8", None),
            ("POSIX", None),
            ("", None),
            ("fr_FR.UTF-8", None),
        ] {
            assert_eq!(Lang::from_locale(locale), lang, "{locale}");
        }
    }

    #[test]
    fn nanochat_hints_follow_its_keys() {
        let en = en();
        let hint = |k| en.program(Program::Nanochat).hint(k);
        assert!(hint("window_pattern").contains("window"));
        assert!(hint("device_batch_size").contains("sequences"));
        assert!(hint("total_batch_size").contains("optimizer step"));
        assert!(hint("eval_tokens").contains("evaluation"));
        assert!(hint("core_max_tokens").contains("CORE"));
        assert!(hint("nproc_per_node").contains("torchrun"));
        // chat_sft.py shares the section, with its own flag's hint
        let sft = en.program(Program::NanochatSft);
        assert!(sft.hint("load_optimizer").contains("optimizer state"));
        assert_eq!(sft.hint("depth"), hint("depth"));
    }

    #[test]
    fn english_file_fills_every_field() {
        let (_, problems) = parse::<Strings>(include_str!("../../../i18n/en.txt"), None);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(en().entries().iter().all(|(_, v)| !v.is_empty()));
        let (_, problems) = parse::<CliStrings>(include_str!("../cli/en.txt"), None);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(cli_en().entries().iter().all(|(_, v)| !v.is_empty()));
    }

    /// Each language's file of table `T` against English's: a missing or extra key, a lost
    /// `{placeholder}` or an altered code span fails; so does English prose left untranslated
    /// (a language whose long strings equal English is a fallback).
    fn same_keys_as_english<T: Table>(english: &T, file: fn(Lang) -> &'static str) -> Vec<T> {
        let english = english.entries();
        let mut tables = Vec::new();
        for lang in Lang::ALL {
            let (strings, problems) = parse::<T>(file(lang), None);
            assert!(problems.is_empty(), "{}: {problems:?}", lang.tag());
            let entries = strings.entries();
            for ((key, en_value), (_, value)) in english.iter().zip(&entries) {
                assert!(!value.trim().is_empty(), "{}: {key} is empty", lang.tag());
                assert_eq!(
                    placeholders(en_value),
                    placeholders(value),
                    "{}: placeholders of {key}",
                    lang.tag()
                );
                assert_eq!(
                    code_spans(en_value),
                    code_spans(value),
                    "{}: code in {key}",
                    lang.tag()
                );
            }
            if lang != Lang::En {
                let same: Vec<&String> = english
                    .iter()
                    .zip(&entries)
                    .filter(|((_, en_value), (_, value))| en_value == value && is_prose(en_value))
                    .map(|((key, _), _)| key)
                    .collect();
                assert!(same.is_empty(), "{}: untranslated {same:?}", lang.tag());
            }
            tables.push(strings);
        }
        tables
    }

    #[test]
    fn every_language_has_every_key_with_the_same_placeholders() {
        let pages = same_keys_as_english(en(), language_file);
        for (lang, strings) in Lang::ALL.into_iter().zip(pages) {
            assert_eq!(strings.lang, lang.tag());
            assert_eq!(strings.name, lang.native_name());
            assert_eq!(strings.decimal_sep.chars().count(), 1, "{}", lang.tag());
            assert_eq!(strings.group_sep.chars().count(), 1, "{}", lang.tag());
        }
        same_keys_as_english(cli_en(), cli_language_file);
    }

    /// The arrays keyed by the estimator's enums: every variant has its string (the keys are
    /// checked against each enum's ids when a language file is read).
    #[test]
    fn every_enum_variant_has_its_string() {
        let en = en();
        for t in estimator::terms::ALL_TERMS {
            assert!(!en.term(t).is_empty(), "{t:?}");
        }
        for c in Component::ALL {
            assert!(
                !en.component(c).is_empty() && !en.component_help(c).is_empty(),
                "{c:?}"
            );
        }
        for st in estimator::sequence::Stage::ALL {
            assert!(!en.stage(st).is_empty(), "{st:?}");
        }

        for i in estimator::fixes::Impact::ALL {
            assert!(!en.impact(i).is_empty(), "{i:?}");
        }
        // the accessors index by `variant as usize`: each ALL is in declaration order
        assert!(Component::ALL
            .iter()
            .enumerate()
            .all(|(i, c)| *c as usize == i));
        assert!(estimator::terms::ALL_TERMS
            .iter()
            .enumerate()
            .all(|(i, t)| *t as usize == i));
        assert!((estimator::sequence::Stage::ALL.iter().enumerate()).all(|(i, s)| *s as usize == i));
        assert!((estimator::fixes::Impact::ALL.iter().enumerate()).all(|(i, m)| *m as usize == i));
        // the order is the declaration order: spot checks against the English names
        assert_eq!(en.term(Term::Logits), "logits");
        assert_eq!(
            en.stage(estimator::sequence::Stage::Eval),
            "estimate_loss()"
        );
        assert_eq!(
            en.program(Program::NanoGpt).fix_title("compile_on"),
            "compile=True"
        );
    }

    #[test]
    fn tags_are_negotiated_as_browsers_write_them() {
        assert_eq!(Lang::from_tag("de-AT"), Some(Lang::De));
        assert_eq!(Lang::from_tag("zh-TW"), Some(Lang::ZhHant));
        assert_eq!(Lang::from_tag("zh-Hant-HK"), Some(Lang::ZhHant));
        assert_eq!(Lang::from_tag("zh-CN"), Some(Lang::ZhHans));
        assert_eq!(Lang::from_tag("zh"), Some(Lang::ZhHans));
        assert_eq!(Lang::from_tag("JA_jp"), Some(Lang::Ja));
        assert_eq!(Lang::from_tag("fr"), None);
        assert_eq!(Lang::negotiate(["fr-FR", "ja", "en"]), Lang::Ja);
        assert_eq!(Lang::negotiate(["fr-FR"]), Lang::En);
        for lang in Lang::ALL {
            assert_eq!(Lang::from_tag(lang.tag()), Some(lang));
        }
    }

    #[test]
    fn places_are_joined_as_the_language_joins_lists() {
        use estimator::sequence::Stage;
        let steady = Some(estimator::Phase::TrainSteady);
        assert_eq!(
            place(en(), Program::NanoGpt, steady, Stage::Backward, 2),
            "steady training, backward, micro-step 2"
        );
        assert_eq!(
            place(
                en(),
                Program::NanoGpt,
                Some(estimator::Phase::Eval),
                Stage::Eval,
                0
            ),
            "estimate_loss()"
        );
        let (ja, _) = parse::<Strings>("list_pair = {a}、{b}\n", Some(en()));
        assert_eq!(
            place(&ja, Program::NanoGpt, steady, Stage::Backward, 2),
            "steady training、backward、micro-step 2"
        );
    }

    #[test]
    fn errors_are_worded_per_language() {
        let e = estimator::TrainConfig {
            n_head: 5,
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        let (de, _) = parse::<Strings>(
            "err_not_divisible = {key}={value} muss durch {divisor_key}={divisor} teilbar sein\n",
            Some(en()),
        );
        assert_eq!(
            error(&de, &e),
            "n_embd=768 muss durch n_head=5 teilbar sein"
        );
        assert_eq!(error(en(), &e), e.to_string());
    }
}
