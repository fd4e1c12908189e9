//! What users type or paste: Python literals, URL queries, pasted text, JSON configs and CUDA
//! out-of-memory messages.

pub mod command_line;
pub mod json_config;
pub mod oom;
pub mod paste;
pub mod pyliteral;
pub mod query;
pub mod skipped;
