//! `vramfit --snapshot FILE`: a PyTorch memory snapshot read back — the peaks the run recorded
//! and, where it ran out of memory, the request and the cache at that moment.

use std::process::ExitCode;

use estimator::Component;
use vramfit_i18n::format::{bytes, grouped};
use vramfit_i18n::{fill, CliLang};
use vramfit_report::snapshot::SITES;
use vramfit_snapshot::{follow, moment, read, segments_at_dump, History, Moment, Snapshot};

use crate::args::{Args, Source};
use crate::report::{head, notes, Text};
use crate::{budget_for, emit, fail, named_program};
use estimator::programs::Program;

/// vramfit's peaks for the run the snapshot recorded, where the command line gives its settings.
struct Predicted {
    allocated: u64,
    reserved: u64,
}

pub fn main(args: &Args, path: &str, tr: &CliLang) -> ExitCode {
    let json = args.json;
    let predicted = match predicted(args, tr) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return fail(format!("--snapshot {path}: {e}")),
    };
    let snap = match read(&bytes) {
        Ok(s) => s,
        Err(e) => return fail(format!("--snapshot {path}: {e}")),
    };
    if snap.events.is_empty() {
        return fail(format!("--snapshot {path}: {}", tr.cli.snapshot_empty));
    }
    let history = follow(&snap);
    let file = std::path::Path::new(path)
        .file_name()
        .map_or(path.to_string(), |f| f.to_string_lossy().into_owned());
    if json {
        let mut answer = vramfit_report::snapshot::to_json(&snap, &history);
        if let Some(p) = &predicted {
            answer["snapshot"]["predicted"] = serde_json::json!({
                "peak_allocated_bytes": p.allocated,
                "peak_reserved_bytes": p.reserved,
            });
        }
        emit(&(answer.to_string() + "\n"))
    } else {
        let at_peak = moment(&snap, &history, history.peak_event, history.peak_allocated);
        let at_oom = history
            .oom
            .map(|o| moment(&snap, &history, o.event, o.allocated));
        let moments = [Some(&at_peak), at_oom.as_ref()];
        emit(&to_text(
            tr,
            &file,
            &history,
            &snap,
            moments,
            predicted.as_ref(),
        ))
    }
}

/// vramfit's peaks beside the run's, each with how far it is off.
fn prediction(tr: &CliLang, p: &Predicted, h: &History) -> String {
    let off = |p: u64, m: u64| format!("{:+.2} %", (p as f64 / m.max(1) as f64 - 1.0) * 100.0);
    fill(
        tr.cli.snapshot_predicted,
        &[
            ("allocated", &bytes(p.allocated.into())),
            ("off", &off(p.allocated, h.peak_allocated)),
            ("reserved", &bytes(p.reserved.into())),
            ("off_reserved", &off(p.reserved, h.peak_reserved)),
        ],
    )
}

/// The program and its flags the command line gives beside `--snapshot` or
/// `--export-snapshot` (`--program` and the script's flags, or train.py's `--key=value`); `None`
/// without any.
fn settings(args: &Args, tr: &CliLang) -> Result<Option<(Program, Vec<String>)>, String> {
    let mut flags = args.script_args.clone();
    for s in &args.sources {
        match s {
            Source::Override(o) => flags.push(o.clone()),
            Source::File(f) => return Err(fill(tr.cli.snapshot_files, &[("word", f)])),
        }
    }
    if let Some(l) = &args.launch {
        return Err(fill(tr.cli.snapshot_files, &[("word", &l.join(" "))]));
    }
    if flags.is_empty() && args.program.is_none() {
        return Ok(None);
    }
    let program = match args.program.as_deref() {
        None => Program::DEFAULT,
        Some(name) => named_program(name)?,
    };
    Ok(Some((program, flags)))
}

/// vramfit's peaks for the settings the command line gives, on its card.
fn predicted(args: &Args, tr: &CliLang) -> Result<Option<Predicted>, String> {
    let Some((program, flags)) = settings(args, tr)? else {
        return Ok(None);
    };
    let budget = budget_for(args, tr, None)?;
    let answer =
        vramfit_report::answer(program, &flags, &budget, false).map_err(|e| e.to_string())?;
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
    let peak = |key: &str| answer["peak_bytes"][key].as_u64().unwrap_or(0);
    Ok(Some(Predicted {
        allocated: peak("overall"),
        reserved: peak("reserved"),
    }))
}

/// `vramfit --export-snapshot FILE …`: vramfit's run for the settings given, on the card, written
/// as a memory snapshot.
pub fn export(args: &Args, path: &str, tr: &CliLang) -> ExitCode {
    let run = || -> Result<(Vec<u8>, usize, u128), String> {
        let (program, flags) = settings(args, tr)?.unwrap_or((Program::DEFAULT, Vec::new()));
        let budget = budget_for(args, tr, None)?;
        let config = estimator::programs::config_from_flags(program, &flags)
            .map_err(|e| crate::config_error(tr, &e))?;
        let mut configs = estimator::programs::Configs::default();
        configs.put(config);
        let run = configs
            .replay(program, &budget)
            .map_err(|e| crate::config_error(tr, &e))?;
        let snap = vramfit_snapshot::export::snapshot(&run, program.script());
        // (the snapshot's own peak, as a reader follows it: a test in crates/snapshot)
        Ok((
            vramfit_snapshot::export::to_pickle(&snap),
            snap.events.len(),
            run.on_card.peak_allocated,
        ))
    };
    let (bytes_out, events, peak) = match run() {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if let Err(e) = std::fs::write(path, bytes_out) {
        return fail(format!("--export-snapshot {path}: {e}"));
    }
    if args.json {
        emit(&(serde_json::json!({"snapshot_written": {"file": path, "events": events, "peak_allocated_bytes": peak}}).to_string() + "\n"))
    } else {
        emit(&format!(
            "{}\n",
            fill(
                tr.cli.snapshot_written,
                &[
                    ("file", path),
                    ("events", &grouped(events as u64)),
                    ("peak", &bytes(peak)),
                ],
            )
        ))
    }
}

/// The report: the recording, the peaks (and vramfit's, given the run's settings), an OOM, and
/// what was live at the peak and at the OOM (`moments`).
fn to_text(
    tr: &CliLang,
    file: &str,
    h: &History,
    snap: &Snapshot,
    moments: [Option<&Moment>; 2],
    predicted: Option<&Predicted>,
) -> String {
    let c = &tr.cli;
    let events_text = grouped(snap.events.len() as u64);
    let recorded = if h.whole_run {
        fill(
            c.snapshot_whole,
            &[("file", file), ("events", &events_text)],
        )
    } else {
        fill(c.snapshot_cut, &[("file", file), ("events", &events_text)])
    };
    let mut rows = vec![
        (c.row_snapshot, recorded),
        (c.row_peak_allocated, bytes(h.peak_allocated.into())),
        (c.row_peak_reserved, bytes(h.peak_reserved.into())),
    ];
    if let Some(o) = h.oom {
        let mut said = fill(
            c.snapshot_oom,
            &[
                ("requested", &bytes(o.requested.into())),
                ("allocated", &bytes(o.allocated.into())),
                ("reserved", &bytes(o.reserved.into())),
                ("free", &bytes(o.cached_free.into())),
                ("largest", &bytes(o.largest_free.into())),
            ],
        );
        if let Some(internal) = o.internal {
            said += &fill(c.snapshot_internal, &[("bytes", &bytes(internal.into()))]);
        }
        rows.push((c.row_oom, said));
    }
    rows.push((c.row_cache, cache(tr, snap)));
    if let Some((program, script)) = vramfit_report::snapshot::recognised(snap) {
        rows.push((
            c.row_recorded_from,
            fill(
                c.snapshot_script,
                &[("script", &script), ("program", program.id())],
            ),
        ));
    }
    if let Some(p) = predicted {
        rows.push((c.row_predicted, prediction(tr, p, h)));
    }
    for (label, m) in [c.row_live_peak, c.row_live_oom].into_iter().zip(moments) {
        if let Some(m) = m {
            rows.push((label, live(tr, m)));
            rows.push((c.row_allocated_by, sites(m)));
        }
    }
    let mut out = Text::default();
    head(&mut out, &rows);
    if !h.exact {
        out.blank();
        notes(&mut out, tr, &[c.snapshot_estimated]);
    }
    out.into_string()
}

/// The components live at a moment, largest first, and what was there before the recording.
fn live(tr: &CliLang, m: &Moment) -> String {
    // (what was there before the recording is counted as other, and said apart)
    let mut parts: Vec<(Component, u64)> = Component::ALL
        .iter()
        .map(|&c| match c {
            Component::Other => (c, m.components[c as usize] - m.before_recording),
            _ => (c, m.components[c as usize]),
        })
        .filter(|&(_, b)| b > 0)
        .collect();
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    let mut words: Vec<String> = parts
        .iter()
        .map(|&(c, b)| format!("{} {}", tr.component(c), bytes(b.into())))
        .collect();
    if m.before_recording > 0 {
        words.push(fill(
            tr.cli.snapshot_before,
            &[("bytes", &bytes(m.before_recording.into()))],
        ));
    }
    words.join(" · ")
}

/// The lines of the user's code that allocated the most of what was live.
fn sites(m: &Moment) -> String {
    m.sites
        .iter()
        .take(SITES)
        .map(|(site, b)| format!("{site} {}", bytes((*b).into())))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The cache at the dump: what its segments hold, and the segment with the most free bytes.
fn cache(tr: &CliLang, snap: &Snapshot) -> String {
    let segments = segments_at_dump(snap);
    let sum = |f: fn(&vramfit_snapshot::SegmentUse) -> u64| -> u64 { segments.iter().map(f).sum() };
    let most = segments.first().map_or((0, 0), |s| (s.free, s.total));
    fill(
        tr.cli.snapshot_cache,
        &[
            ("segments", &grouped(segments.len() as u64)),
            ("reserved", &bytes(sum(|s| s.total).into())),
            ("allocated", &bytes(sum(|s| s.allocated).into())),
            ("internal", &bytes(sum(|s| s.internal).into())),
            ("free", &bytes(sum(|s| s.free).into())),
            ("most", &bytes(most.0.into())),
            ("of", &bytes(most.1.into())),
        ],
    )
}
