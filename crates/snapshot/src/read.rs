//! A snapshot pickle (`torch.cuda.memory._dump_snapshot`) as plain data: its segments at the
//! moment of the dump, the recorded events of the first device, the allocator's settings. Read
//! with `serde_pickle`'s `Value`, which never imports or calls anything: a snapshot is dicts,
//! lists, strings and numbers, and anything else is refused with a message that names it.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;

use serde_pickle::{DeOptions, HashableValue, Value};

/// One frame of the Python stack an event or a block was recorded with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub filename: String,
    pub line: u64,
    pub name: String,
}

/// What a trace entry records (`TraceEntry::Action` in c10/cuda/CUDACachingAllocator.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// A block handed out; `size` is the request as made.
    Alloc,
    /// `free` called: the bytes stop counting as allocated (`size`: the request).
    FreeRequested,
    /// The block is back in the cache (its streams done), merged with free neighbours.
    FreeCompleted,
    /// A cudaMalloc of a segment.
    SegmentAlloc,
    /// A segment given back to the driver.
    SegmentFree,
    /// Pages mapped into an expandable segment.
    SegmentMap,
    /// Pages unmapped from an expandable segment.
    SegmentUnmap,
    /// A request that failed: `size` is what was asked of the driver.
    Oom,
    /// A snapshot was taken (or anything newer PyTorch records): changes nothing here.
    Other,
}

/// One recorded event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub action: Action,
    pub addr: u64,
    pub size: u64,
    /// Innermost first, as PyTorch records them.
    pub frames: Vec<Frame>,
}

/// A block of a segment at the moment of the dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub address: u64,
    pub size: u64,
    pub requested_size: u64,
    /// `active_allocated`, `active_pending_free` or `inactive`.
    pub state: String,
}

/// A segment at the moment of the dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub address: u64,
    pub total_size: u64,
    pub expandable: bool,
    pub blocks: Vec<Block>,
}

/// A snapshot, its first device's history.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub segments: Vec<Segment>,
    pub events: Vec<Event>,
    /// `PYTORCH_CUDA_ALLOC_CONF` as the run had it, if the snapshot says.
    pub alloc_conf: Option<String>,
    pub expandable_segments: bool,
}

/// Why a file is not a snapshot vramfit can read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError(pub String);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

fn refuse(why: impl Into<String>) -> ReadError {
    ReadError(why.into())
}

/// Reads a snapshot from the bytes of its file: the pickle itself or the pickle gzipped.
pub fn read(bytes: &[u8]) -> Result<Snapshot, ReadError> {
    let mut unzipped = Vec::new();
    let pickle = if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut unzipped)
            .map_err(|e| refuse(format!("a gzip file that could not be unpacked: {e}")))?;
        &unzipped[..]
    } else {
        bytes
    };
    // a pickle of protocol 2 or later starts with PROTO; `_dump_snapshot` writes 4
    if pickle.first() != Some(&0x80) {
        return Err(refuse(
            "not a PyTorch memory snapshot: not a pickle (write one with \
             torch.cuda.memory._dump_snapshot(\"snapshot.pickle\"))",
        ));
    }
    // (a snapshot shares its frames between events; serde-pickle takes a shared value it meets
    // again while building it for a cycle, which this option lets through as None)
    let value =
        serde_pickle::value_from_slice(pickle, DeOptions::new().replace_recursive_structures())
            .map_err(|e| refuse(format!("a pickle that could not be read to its end: {e}")))?;
    snapshot(&value)
}

fn snapshot(v: &Value) -> Result<Snapshot, ReadError> {
    let root = dict(v).ok_or_else(|| {
        refuse("a pickle, but not a memory snapshot: not a dict of segments and traces")
    })?;
    let (Some(segments), Some(traces)) = (get(root, "segments"), get(root, "device_traces")) else {
        return Err(refuse(
            "a pickle, but not a memory snapshot: it has no 'segments' and 'device_traces'",
        ));
    };
    let segments = list(segments)
        .ok_or_else(|| refuse("the snapshot's 'segments' is not a list"))?
        .iter()
        .map(segment)
        .collect::<Result<Vec<_>, _>>()?;
    let traces =
        list(traces).ok_or_else(|| refuse("the snapshot's 'device_traces' is not a list"))?;
    // the devices that recorded anything; a run on one GPU has one
    let first = traces.iter().filter_map(list).find(|t| !t.is_empty());
    let events = first
        .map(|t| t.iter().map(event).collect::<Result<Vec<_>, _>>())
        .transpose()?
        .unwrap_or_default();
    let settings = get(root, "allocator_settings").and_then(dict);
    let alloc_conf = settings
        .and_then(|s| get(s, "PYTORCH_CUDA_ALLOC_CONF"))
        .and_then(text);
    let expandable_segments = settings
        .and_then(|s| get(s, "expandable_segments"))
        .and_then(boolean)
        .unwrap_or_else(|| segments.iter().any(|s| s.expandable));
    Ok(Snapshot {
        segments,
        events,
        alloc_conf,
        expandable_segments,
    })
}

fn segment(v: &Value) -> Result<Segment, ReadError> {
    let d = dict(v).ok_or_else(|| refuse("a segment of the snapshot is not a dict"))?;
    let blocks = get(d, "blocks")
        .and_then(list)
        .ok_or_else(|| refuse("a segment of the snapshot has no list of blocks"))?
        .iter()
        .map(|b| {
            let b = dict(b).ok_or_else(|| refuse("a block of the snapshot is not a dict"))?;
            Ok(Block {
                address: number(b, "address", "a block")?,
                size: number(b, "size", "a block")?,
                requested_size: get(b, "requested_size").and_then(int).unwrap_or(0),
                state: get(b, "state").and_then(text).unwrap_or_default(),
            })
        })
        .collect::<Result<Vec<_>, ReadError>>()?;
    Ok(Segment {
        address: number(d, "address", "a segment")?,
        total_size: number(d, "total_size", "a segment")?,
        expandable: get(d, "is_expandable").and_then(boolean).unwrap_or(false),
        blocks,
    })
}

fn event(v: &Value) -> Result<Event, ReadError> {
    let d = dict(v).ok_or_else(|| refuse("an event of the snapshot's trace is not a dict"))?;
    let action = match get(d, "action").and_then(text).as_deref() {
        Some("alloc") => Action::Alloc,
        Some("free_requested") => Action::FreeRequested,
        Some("free_completed") => Action::FreeCompleted,
        Some("segment_alloc") => Action::SegmentAlloc,
        Some("segment_free") => Action::SegmentFree,
        Some("segment_map") => Action::SegmentMap,
        Some("segment_unmap") => Action::SegmentUnmap,
        Some("oom") => Action::Oom,
        Some(_) => Action::Other,
        None => return Err(refuse("an event of the snapshot's trace has no action")),
    };
    let frames = get(d, "frames")
        .and_then(list)
        .map(|fs| {
            fs.iter()
                .filter_map(dict)
                .map(|f| Frame {
                    filename: get(f, "filename").and_then(text).unwrap_or_default(),
                    line: get(f, "line").and_then(int).unwrap_or(0),
                    name: get(f, "name").and_then(text).unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Event {
        action,
        // an OOM entry has no address
        addr: get(d, "addr").and_then(int).unwrap_or(0),
        size: get(d, "size").and_then(int).unwrap_or(0),
        frames,
    })
}

fn dict(v: &Value) -> Option<&BTreeMap<HashableValue, Value>> {
    match v {
        Value::Dict(d) => Some(d),
        _ => None,
    }
}

fn list(v: &Value) -> Option<&Vec<Value>> {
    match v {
        Value::List(l) | Value::Tuple(l) => Some(l),
        _ => None,
    }
}

fn get<'a>(d: &'a BTreeMap<HashableValue, Value>, key: &str) -> Option<&'a Value> {
    d.get(&HashableValue::String(key.to_string()))
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn int(v: &Value) -> Option<u64> {
    match v {
        Value::I64(n) => u64::try_from(*n).ok(),
        _ => None,
    }
}

fn boolean(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

fn number(d: &BTreeMap<HashableValue, Value>, key: &str, what: &str) -> Result<u64, ReadError> {
    get(d, key)
        .and_then(int)
        .ok_or_else(|| refuse(format!("{what} of the snapshot has no '{key}'")))
}
