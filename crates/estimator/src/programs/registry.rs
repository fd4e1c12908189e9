//! The registry macro: from one line per program — `Variant(field) => path::Type` — it writes
//! [`Program`](super::Program) and every dispatch over it, each arm calling the line's
//! [`TrainingProgram`](super::TrainingProgram). No arm is written by hand, so none falls through
//! with `_`, and a program that misses a part of the seam does not compile.

macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($field:ident) => $ty:ty),+ $(,)?) => {
        use crate::programs::seam::TrainingProgram as __Seam;

        /// A training script vramfit knows.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Program {
            $($(#[$doc])* $variant),+
        }

        impl Program {
            /// Every program, in the registry's order (`program as usize` indexes it).
            pub const ALL: [Program; [$(stringify!($variant)),+].len()] = [$(Program::$variant),+];
            /// The ids `--program=` and `?program=` take, in [`Program::ALL`]'s order.
            pub const NAMES: &'static [&'static str] = &[$(<$ty as __Seam>::ID),+];

            pub fn id(self) -> &'static str {
                match self {
                    $(Program::$variant => <$ty as __Seam>::ID),+
                }
            }

            /// Its name as the page's picker and headings show it, in every language (the
            /// project's name and the script's file: `nanoGPT train.py`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Program::$variant => <$ty as __Seam>::NAME),+
                }
            }

            /// The script as its repository names it.
            pub fn script(self) -> &'static str {
                match self {
                    $(Program::$variant => <$ty as __Seam>::SCRIPT),+
                }
            }

            /// The launch-line words that run it (file names and `-m` modules).
            pub fn launch_words(self) -> &'static [&'static str] {
                match self {
                    $(Program::$variant => <$ty as __Seam>::LAUNCH_WORDS),+
                }
            }

            /// Its own setting for the processes `torchrun` starts.
            pub fn processes_key(self) -> &'static str {
                match self {
                    $(Program::$variant => <$ty as __Seam>::PROCESSES_KEY),+
                }
            }

            /// Whether it trains on several GPUs.
            pub fn multi_gpu(self) -> bool {
                match self {
                    $(Program::$variant => <$ty as __Seam>::MULTI_GPU),+
                }
            }

            /// Its setting for DDP on one GPU, and what launches it, where that matters.
            pub fn one_gpu_ddp(self) -> Option<crate::programs::seam::OneGpuDdp> {
                match self {
                    $(Program::$variant => <$ty as __Seam>::ONE_GPU_DDP),+
                }
            }

            /// Its section of the language files.
            pub fn words(self) -> &'static str {
                match self {
                    $(Program::$variant => <$ty as __Seam>::WORDS),+
                }
            }

            /// The settings with a hint in its section.
            pub fn hinted(self) -> &'static [&'static str] {
                match self {
                    $(Program::$variant => <$ty as __Seam>::HINTED),+
                }
            }

            /// The settings an embed shows, with their slider steps.
            /// Whether its speed estimate takes a model FLOPs utilisation.
            pub fn speed_from_mfu(self) -> bool {
                match self {
                    $(Program::$variant => <$ty as __Seam>::SPEED_FROM_MFU),+
                }
            }

            /// Its settings as the page lays them out.
            pub fn inputs(self) -> &'static [crate::programs::inputs::Group] {
                match self {
                    $(Program::$variant => <$ty as __Seam>::INPUTS),+
                }
            }

            pub fn embed_settings(self) -> &'static [(&'static str, &'static [f64])] {
                match self {
                    $(Program::$variant => <$ty as __Seam>::EMBED_SETTINGS),+
                }
            }

            /// The names of its report's words (its section of the command line's language files).
            pub fn report_words(self) -> &'static [&'static str] {
                match self {
                    $(Program::$variant => <$ty as __Seam>::REPORT_WORDS),+
                }
            }

            /// The words only its own views say (`{section}.own.{name}`).
            pub fn own_words(self) -> &'static [&'static str] {
                match self {
                    $(Program::$variant => <$ty as __Seam>::OWN_WORDS),+
                }
            }

            /// Its fix kinds' ids.
            pub fn fix_kinds(self) -> &'static [&'static str] {
                match self {
                    $(Program::$variant => <$ty as __Seam>::FIX_KINDS),+
                }
            }

            /// The name under which a setting's hint is found in its section.
            pub fn hint_name(self, key: &str) -> String {
                match self {
                    $(Program::$variant => <$ty as __Seam>::hint_name(key)),+
                }
            }

            /// How the page labels a setting's input.
            pub fn field_label(self, key: &str) -> String {
                match self {
                    $(Program::$variant => <$ty as __Seam>::field_label(key)),+
                }
            }

            /// Its config from its own flags, with every check the script makes.
            #[inline(never)] // reached from several readers: one copy (the page's wasm size)
            pub fn config_from_flags(self, flags: &[String]) -> Result<ProgramConfig, ConfigError> {
                Ok(match self {
                    $(Program::$variant => {
                        ProgramConfig::$variant(<$ty as __Seam>::config_from_flags(flags)?)
                    }),+
                })
            }

            /// Whether a command-line word names one of its config files.
            pub fn names_config_file(self, word: &str) -> bool {
                match self {
                    $(Program::$variant => <$ty as __Seam>::names_config_file(word)),+
                }
            }

            /// Whether its command line's words that are not flags are config files.
            pub fn config_files(self) -> bool {
                match self {
                    $(Program::$variant => <$ty as __Seam>::CONFIG_FILES),+
                }
            }

            /// Its config from a command line's words, and what was read but not applied.
            pub fn config_from_args(
                self,
                args: &[crate::programs::seam::ScriptArg],
            ) -> Result<(ProgramConfig, Vec<String>), ConfigError> {
                Ok(match self {
                    $(Program::$variant => {
                        let (c, skipped) = <$ty as __Seam>::config_from_args(args)?;
                        (ProgramConfig::$variant(c), skipped)
                    }),+
                })
            }

            /// Refuses script arguments the script does not take.
            pub fn check_script_args(self, args: &[String]) -> Result<(), ConfigError> {
                match self {
                    $(Program::$variant => <$ty as __Seam>::check_script_args(args)),+
                }
            }

            /// One JSON setting as the program's flag (`None`: a switch that is off).
            pub fn json_flag(
                self,
                key: &str,
                value: &crate::input::json_config::Setting,
            ) -> Result<Option<String>, ConfigError> {
                match self {
                    $(Program::$variant => <$ty as __Seam>::json_flag(key, value)),+
                }
            }
        }

        /// One program's settings, checked as the program itself checks them.
        #[derive(Clone, Debug, PartialEq)]
        pub enum ProgramConfig {
            $($(#[$doc])* $variant(<$ty as __Seam>::Config)),+
        }

        impl ProgramConfig {
            pub fn program(&self) -> Program {
                match self {
                    $(ProgramConfig::$variant(_) => Program::$variant),+
                }
            }

            /// Every setting under the JSON's names (the answer's `config`).
            pub fn settings(&self) -> ProgramSettings {
                match self {
                    $(ProgramConfig::$variant(c) => {
                        ProgramSettings::$variant(<$ty as __Seam>::settings(c))
                    }),+
                }
            }

            /// Replays the config for the card.
            pub fn analyze(&self, budget: &Budget) -> Result<ProgramAnalysis, ConfigError> {
                Ok(match self {
                    $(ProgramConfig::$variant(c) => {
                        ProgramAnalysis::$variant(<$ty as __Seam>::analyze(c, budget)?)
                    }),+
                })
            }

            /// The fixes for the config on the card, each replayed, best first.
            pub fn rank_fixes(&self, budget: &Budget, mfu: f64) -> Option<ProgramFixes> {
                match self {
                    $(ProgramConfig::$variant(c) => {
                        <$ty as __Seam>::rank_fixes(c, budget, mfu).map(ProgramFixes::$variant)
                    }),+
                }
            }

            /// The fixes as every front-end shows them (`freed`: what other processes hold).
            pub fn fixes_view(
                &self,
                fixes: &ProgramFixes,
                freed: u128,
            ) -> Option<crate::programs::fix_view::FixesView> {
                match (self, fixes) {
                    $((ProgramConfig::$variant(c), ProgramFixes::$variant(f)) => {
                        Some(<$ty as __Seam>::fixes_view(f, c, freed))
                    })+
                    _ => None,
                }
            }

            /// Which tensor a pasted out-of-memory message's request was in this run.
            pub fn diagnose(&self, message: &crate::oom::OomMessage) -> Option<crate::oom::Diagnosis> {
                match self {
                    $(ProgramConfig::$variant(c) => <$ty as __Seam>::diagnose(c, message)),+
                }
            }
        }

        /// One program's full answer: the replayed run (what every view shows, through `Deref`)
        /// and what only that program has.
        #[derive(Clone, Debug, PartialEq)]
        pub enum ProgramAnalysis {
            $($(#[$doc])* $variant(<$ty as __Seam>::Analysis)),+
        }

        impl std::ops::Deref for ProgramAnalysis {
            type Target = Run;

            /// The replayed run: peaks, components, verdict, where it runs out.
            fn deref(&self) -> &Run {
                match self {
                    $(ProgramAnalysis::$variant(a) => <$ty as __Seam>::run(a)),+
                }
            }
        }

        impl ProgramAnalysis {
            pub fn program(&self) -> Program {
                match self {
                    $(ProgramAnalysis::$variant(_) => Program::$variant),+
                }
            }

            /// The program's own analysis, where it is a `T` (a view of one program's answer,
            /// such as nanochat's ranks, asks for its type; `None` for any other program's).
            pub fn own<T: 'static>(&self) -> Option<&T> {
                match self {
                    $(ProgramAnalysis::$variant(a) => (a as &dyn std::any::Any).downcast_ref::<T>()),+
                }
            }

            /// Parameters as the script prints them.
            pub fn params_reported(&self) -> u64 {
                match self {
                    $(ProgramAnalysis::$variant(a) => <$ty as __Seam>::params_reported(a)),+
                }
            }

            /// What the report says beyond the run (`fixes`: this analysis's, where searched).
            pub fn report(
                &self,
                fixes: Option<&ProgramFixes>,
                budget: &Budget,
                mfu: f64,
            ) -> crate::programs::report::Report {
                match self {
                    $(ProgramAnalysis::$variant(a) => {
                        let fixes = match fixes {
                            Some(ProgramFixes::$variant(f)) => Some(f),
                            _ => None,
                        };
                        <$ty as __Seam>::report(a, fixes, budget, mfu)
                    }),+
                }
            }

            /// The program's own part of the JSON answer.
            pub fn answer(
                &self,
                fixes: Option<&ProgramFixes>,
                budget: &Budget,
                mfu: f64,
            ) -> ProgramAnswer {
                match self {
                    $(ProgramAnalysis::$variant(a) => {
                        let fixes = match fixes {
                            Some(ProgramFixes::$variant(f)) => Some(f),
                            _ => None,
                        };
                        ProgramAnswer::$variant(<$ty as __Seam>::answer(a, fixes, budget, mfu))
                    }),+
                }
            }

            /// The program's own fields of each of `fixes` (none: fixes of another program).
            pub fn fix_answers(&self, fixes: &ProgramFixes, budget: &Budget) -> Vec<ProgramFixAnswer> {
                match (self, fixes) {
                    $((ProgramAnalysis::$variant(a), ProgramFixes::$variant(f)) => {
                        <$ty as __Seam>::fix_answers(a, f, budget)
                            .into_iter()
                            .map(ProgramFixAnswer::$variant)
                            .collect()
                    })+
                    _ => Vec::new(),
                }
            }

            /// What the numbers assume, by the names of the program's notes.
            pub fn notes(&self) -> Vec<&'static str> {
                match self {
                    $(ProgramAnalysis::$variant(a) => <$ty as __Seam>::notes(a)),+
                }
            }

            /// The card as the verdict counted it (`asked`: the card asked about).
            pub fn card<'a>(&'a self, asked: &'a Budget) -> &'a Budget {
                match self {
                    $(ProgramAnalysis::$variant(a) => <$ty as __Seam>::card(a, asked)),+
                }
            }

            /// One tensor family's formula at the peak, with this config's numbers.
            pub fn formula(
                &self,
                term: crate::engine::terms::Term,
                bytes: u128,
            ) -> crate::programs::seam::Formula {
                match self {
                    $(ProgramAnalysis::$variant(a) => <$ty as __Seam>::formula(a, term, bytes)),+
                }
            }
        }

        /// One program's settings as the JSON answer's `config` has them.
        #[derive(Clone, Debug, PartialEq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize), serde(untagged))]
        pub enum ProgramSettings {
            $($(#[$doc])* $variant(<$ty as __Seam>::Settings)),+
        }

        /// One program's own part of the JSON answer: its keys, beside every program's.
        #[derive(Clone, Debug, PartialEq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize), serde(untagged))]
        pub enum ProgramAnswer {
            $($(#[$doc])* $variant(<$ty as __Seam>::Answer)),+
        }

        /// One program's own fields of a fix in the JSON answer.
        #[derive(Clone, Debug, PartialEq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize), serde(untagged))]
        pub enum ProgramFixAnswer {
            $($(#[$doc])* $variant(<$ty as __Seam>::FixAnswer)),+
        }

        /// One program's ranked fixes.
        #[derive(Clone, Debug, PartialEq)]
        pub enum ProgramFixes {
            $($(#[$doc])* $variant(<$ty as __Seam>::Fixes)),+
        }

        impl ProgramFixes {
            pub fn program(&self) -> Program {
                match self {
                    $(ProgramFixes::$variant(_) => Program::$variant),+
                }
            }

            /// The fixes as every front-end shows them, from the settings they were ranked for
            /// (`freed`: what other processes hold on the card).
            pub fn view(&self, configs: &Configs, freed: u128) -> crate::programs::fix_view::FixesView {
                match self {
                    $(ProgramFixes::$variant(f) => <$ty as __Seam>::fixes_view(f, &configs.$field, freed)),+
                }
            }
        }

        /// Every program's settings, one config each: the page keeps them all, so switching to
        /// another program and back finds them again.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Configs {
            $($(#[$doc])* pub $field: <$ty as __Seam>::Config),+
        }

        impl Default for Configs {
            fn default() -> Self {
                Configs {
                    $($field: <$ty as __Seam>::default_config()),+
                }
            }
        }

        impl Configs {
            /// `program`'s settings as a [`ProgramConfig`].
            pub fn of(&self, program: Program) -> ProgramConfig {
                match program {
                    $(Program::$variant => ProgramConfig::$variant(self.$field.clone())),+
                }
            }

            /// Puts `config` in its program's place.
            pub fn put(&mut self, config: ProgramConfig) {
                match config {
                    $(ProgramConfig::$variant(c) => self.$field = c),+
                }
            }

            /// Whether `config` is already its program's settings here.
            pub fn holds(&self, config: &ProgramConfig) -> bool {
                match config {
                    $(ProgramConfig::$variant(c) => self.$field == *c),+
                }
            }

            /// Whether `program`'s settings are all the script's defaults.
            pub fn is_default(&self, program: Program) -> bool {
                match program {
                    $(Program::$variant => self.$field == <$ty as __Seam>::default_config()),+
                }
            }

            pub fn analyze(
                &self,
                program: Program,
                budget: &Budget,
            ) -> Result<ProgramAnalysis, ConfigError> {
                Ok(match program {
                    $(Program::$variant => ProgramAnalysis::$variant(
                        <$ty as __Seam>::analyze(&self.$field, budget)?,
                    )),+
                })
            }

            /// `program`'s settings back out as what to paste.
            pub fn export(&self, program: Program) -> Vec<(crate::programs::seam::Paste, String)> {
                match program {
                    $(Program::$variant => <$ty as __Seam>::export(&self.$field)),+
                }
            }

            /// `program`'s batch as the run's summary states it.
            pub fn batch(&self, program: Program) -> crate::programs::seam::Batch {
                match program {
                    $(Program::$variant => <$ty as __Seam>::batch(&self.$field)),+
                }
            }

            /// Which tensor a pasted out-of-memory message's request was in `program`'s run.
            pub fn diagnose(
                &self,
                program: Program,
                message: &crate::oom::OomMessage,
            ) -> Option<crate::oom::Diagnosis> {
                match program {
                    $(Program::$variant => <$ty as __Seam>::diagnose(&self.$field, message)),+
                }
            }

            /// A pasted launch line of `program` (`line`, read as `launch`) read over its
            /// settings, which it replaces; what was not applied.
            pub fn read_launch(
                &mut self,
                program: Program,
                launch: &crate::input::command_line::Launch,
                line: &str,
            ) -> Result<crate::programs::seam::Read<()>, ConfigError> {
                match program {
                    $(Program::$variant => {
                        let read = <$ty as __Seam>::config_from_launch(&self.$field, launch, line)?;
                        Ok(read.map(|c| self.$field = c))
                    }),+
                }
            }

            /// Pasted text of `program`'s own, read over its settings (`on_page`: whether the
            /// page shows it); `None` where not one line is its.
            pub fn read_text(
                &self,
                program: Program,
                on_page: bool,
                text: &str,
            ) -> Option<Result<crate::programs::seam::Read<ProgramConfig>, ConfigError>> {
                match program {
                    $(Program::$variant => <$ty as __Seam>::config_from_text(&self.$field, on_page, text)
                        .map(|r| r.map(|read| read.map(ProgramConfig::$variant)))),+
                }
            }

            /// Whether the page asks `program`'s run for the link between its GPUs.
            pub fn asks_link(&self, program: Program) -> bool {
                match program {
                    $(Program::$variant => <$ty as __Seam>::asks_link(&self.$field)),+
                }
            }

            /// [`Configs::analyze`]'s run alone (what the first bar paints).
            pub fn replay(&self, program: Program, budget: &Budget) -> Result<Run, ConfigError> {
                match program {
                    $(Program::$variant => <$ty as __Seam>::replay(&self.$field, budget)),+
                }
            }

            pub fn rank_fixes(
                &self,
                program: Program,
                budget: &Budget,
                mfu: f64,
            ) -> Option<ProgramFixes> {
                match program {
                    $(Program::$variant => {
                        <$ty as __Seam>::rank_fixes(&self.$field, budget, mfu)
                            .map(ProgramFixes::$variant)
                    }),+
                }
            }

            /// A setting of `program` as its input shows it (`None`: not one of its keys).
            pub fn get(&self, program: Program, key: &str) -> Option<String> {
                match program {
                    $(Program::$variant => <$ty as __Seam>::get(&self.$field, key)),+
                }
            }

            /// Sets one of `program`'s settings from its text; unchanged on error.
            pub fn set(&mut self, program: Program, key: &str, raw: &str) -> Result<(), ConfigError> {
                match program {
                    $(Program::$variant => <$ty as __Seam>::set(&mut self.$field, key, raw)),+
                }
            }

            /// `program`'s checks across settings.
            pub fn validate(&self, program: Program) -> Result<(), ConfigError> {
                match program {
                    $(Program::$variant => <$ty as __Seam>::validate(&self.$field)),+
                }
            }

            /// `(key, value)` of each of `program`'s settings that differs from the defaults.
            pub fn changed(&self, program: Program) -> Vec<(String, String)> {
                match program {
                    $(Program::$variant => <$ty as __Seam>::changed(&self.$field)),+
                }
            }

            /// `program`'s checks across settings after a URL: the settings involved back to
            /// their defaults where they fail; what was refused.
            pub fn repair(&mut self, program: Program) -> Vec<ConfigError> {
                match program {
                    $(Program::$variant => <$ty as __Seam>::repair(&mut self.$field)),+
                }
            }
        }
    };
}

pub(crate) use registry;
