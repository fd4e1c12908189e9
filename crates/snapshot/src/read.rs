//! A snapshot pickle (`torch.cuda.memory._dump_snapshot`) as plain data: its segments at the
//! moment of the dump, the recorded events of the first device, the allocator's settings. A
//! snapshot is dicts, lists, strings and numbers ([`crate::pickle`] reads those and refuses
//! anything that would import or call), and anything else is refused with a message that names it.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::rc::Rc;

use crate::pickle::{self, Py};

/// One frame of the Python stack an event or a block was recorded with. Its words are the
/// pickle's own strings, shared: a snapshot names the same few hundred frames from tens of
/// thousands of events, and a copy per event made a reading take ~50 times its file's size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub filename: Rc<str>,
    pub line: u64,
    pub name: Rc<str>,
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
    /// Of the small pool (`segment_type` `small`: requests up to 1 MiB).
    pub small: bool,
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
    match unpack(bytes, u64::MAX)? {
        Some(data) => read_pickle(&data),
        None => Err(refuse("a gzip file that could not be unpacked")),
    }
}

/// The pickle a file's bytes hold: themselves, or gzip inflated; `None` where it would be more
/// than `limit` bytes (inflated no further than that: a reader with little memory, the page's
/// worker, asks for a limit).
pub fn unpack(bytes: &[u8], limit: u64) -> Result<Option<Cow<'_, [u8]>>, ReadError> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok((bytes.len() as u64 <= limit).then_some(Cow::Borrowed(bytes)));
    }
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .take(limit.saturating_add(1))
        .read_to_end(&mut unzipped)
        .map_err(|e| refuse(format!("a gzip file that could not be unpacked: {e}")))?;
    Ok((unzipped.len() as u64 <= limit).then_some(Cow::Owned(unzipped)))
}

/// Reads a snapshot from its pickle's bytes.
pub fn read_pickle(data: &[u8]) -> Result<Snapshot, ReadError> {
    // a pickle of protocol 2 or later starts with PROTO; `_dump_snapshot` writes 4
    if data.first() != Some(&0x80) {
        return Err(refuse(
            "not a PyTorch memory snapshot: not a pickle (write one with \
             torch.cuda.memory._dump_snapshot(\"snapshot.pickle\"))",
        ));
    }
    let value =
        pickle::parse(data).map_err(|e| refuse(format!("a pickle that could not be read: {e}")))?;
    snapshot(&value)
}

fn snapshot(root: &Py) -> Result<Snapshot, ReadError> {
    if !root.is_dict() {
        return Err(refuse(
            "a pickle, but not a memory snapshot: not a dict of segments and traces",
        ));
    }
    let (Some(segments), Some(traces)) = (root.get("segments"), root.get("device_traces")) else {
        return Err(refuse(
            "a pickle, but not a memory snapshot: it has no 'segments' and 'device_traces'",
        ));
    };
    let segments = segments
        .items()
        .ok_or_else(|| refuse("the snapshot's 'segments' is not a list"))?
        .iter()
        .map(segment)
        .collect::<Result<Vec<_>, _>>()?;
    let traces = traces
        .items()
        .ok_or_else(|| refuse("the snapshot's 'device_traces' is not a list"))?;
    // the first device that recorded anything; a run on one GPU has one
    let first = traces
        .iter()
        .find(|t| t.items().is_some_and(|t| !t.is_empty()));
    let events = match first {
        // taken out of the pickle's tree and converted one by one, each event's values freed
        // once read: the tree and the events are never both whole in memory
        Some(Py::List(list)) => std::mem::take(&mut *list.borrow_mut())
            .into_iter()
            .map(|e| event(&e))
            .collect::<Result<Vec<_>, _>>()?,
        Some(t) => t
            .items()
            .unwrap_or_default()
            .iter()
            .map(event)
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let settings = root.get("allocator_settings").filter(Py::is_dict);
    let alloc_conf = settings
        .as_ref()
        .and_then(|s| s.get("PYTORCH_CUDA_ALLOC_CONF"))
        .and_then(|v| v.str().map(str::to_string));
    let expandable_segments = settings
        .as_ref()
        .and_then(|s| s.get("expandable_segments"))
        .and_then(|v| v.bool())
        .unwrap_or_else(|| segments.iter().any(|s| s.expandable));
    Ok(Snapshot {
        segments,
        events,
        alloc_conf,
        expandable_segments,
    })
}

fn segment(d: &Py) -> Result<Segment, ReadError> {
    if !d.is_dict() {
        return Err(refuse("a segment of the snapshot is not a dict"));
    }
    let blocks = d
        .get("blocks")
        .and_then(|b| b.items())
        .ok_or_else(|| refuse("a segment of the snapshot has no list of blocks"))?
        .iter()
        .map(|b| {
            if !b.is_dict() {
                return Err(refuse("a block of the snapshot is not a dict"));
            }
            Ok(Block {
                address: number(b, "address", "a block")?,
                size: number(b, "size", "a block")?,
                requested_size: b.get("requested_size").and_then(|v| int(&v)).unwrap_or(0),
                state: b
                    .get("state")
                    .and_then(|v| v.str().map(str::to_string))
                    .unwrap_or_default(),
            })
        })
        .collect::<Result<Vec<_>, ReadError>>()?;
    Ok(Segment {
        address: number(d, "address", "a segment")?,
        total_size: number(d, "total_size", "a segment")?,
        expandable: d
            .get("is_expandable")
            .and_then(|v| v.bool())
            .unwrap_or(false),
        small: d.get("segment_type").as_ref().and_then(Py::str) == Some("small"),
        blocks,
    })
}

fn event(d: &Py) -> Result<Event, ReadError> {
    if !d.is_dict() {
        return Err(refuse("an event of the snapshot's trace is not a dict"));
    }
    let action = match d.get("action").as_ref().and_then(Py::str) {
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
    let frames = d
        .get("frames")
        .and_then(|f| f.items())
        .map(|fs| {
            fs.iter()
                .filter(|f| f.is_dict())
                .map(|f| Frame {
                    filename: shared_str(f.get("filename")),
                    line: f.get("line").and_then(|v| int(&v)).unwrap_or(0),
                    name: shared_str(f.get("name")),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Event {
        action,
        // an OOM entry has no address
        addr: d.get("addr").and_then(|v| int(&v)).unwrap_or(0),
        size: d.get("size").and_then(|v| int(&v)).unwrap_or(0),
        frames,
    })
}

/// A string of the pickle, shared with it (empty if it is none).
fn shared_str(v: Option<Py>) -> Rc<str> {
    match v {
        Some(Py::Str(s)) => s,
        _ => Rc::from(""),
    }
}

fn int(v: &Py) -> Option<u64> {
    v.int().and_then(|n| u64::try_from(n).ok())
}

fn number(d: &Py, key: &str, what: &str) -> Result<u64, ReadError> {
    d.get(key)
        .and_then(|v| int(&v))
        .ok_or_else(|| refuse(format!("{what} of the snapshot has no '{key}'")))
}
