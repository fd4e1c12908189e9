//! One component per file.

pub mod app;
pub mod choice_field;
pub mod config_export;
pub mod ddp_summary;
pub mod embed_dialog;
pub mod embed_page;
pub mod fix_list;
pub mod gpu_picker;
pub mod header;
pub mod lang_picker;
pub mod link_field;
pub mod memory_bar;
pub mod model_presets;
pub mod nanochat_ranks;
pub mod notices;
pub mod number_field;
pub mod page_field;
pub mod paste_panel;
pub mod program_inputs;
pub mod program_picker;
pub mod run_summary;
pub mod sticky_summary;
pub mod timeline_chart;
pub mod toggle_field;
pub mod verdict_panel;
pub mod vocab_field;
