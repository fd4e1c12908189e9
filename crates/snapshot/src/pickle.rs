//! The part of Python's pickle format a memory snapshot is written in: dicts, lists, tuples,
//! strings, numbers, booleans and None, with the memo that lets one object be referred to many
//! times. Nothing is imported or called: an opcode that would (a class, a reduce) is refused.
//!
//! Written here rather than taken from serde-pickle: a snapshot refers to each stack frame's dict
//! from many events through the memo, and serde-pickle counts those references down as it builds
//! its values, so past a point it takes a frame it meets again for a cycle (an error, or None
//! with `replace_recursive_structures`) — measured on the nanoGPT fixture, 425 of the 3,409
//! events that have frames lost them. Shared values here are shared (`Rc`), as Python's are.

use std::cell::RefCell;
use std::rc::Rc;

/// A value of the pickle.
#[derive(Clone, Debug)]
pub enum Py {
    None,
    Bool(bool),
    /// (128 bits: Python writes an unsigned 64-bit number with a sign byte more)
    Int(i128),
    Float(f64),
    Str(Rc<str>),
    Bytes(Rc<[u8]>),
    List(Rc<RefCell<Vec<Py>>>),
    Tuple(Rc<[Py]>),
    Dict(Rc<RefCell<Vec<(Py, Py)>>>),
}

impl Py {
    /// The value under the string key `key` of a dict.
    pub fn get(&self, key: &str) -> Option<Py> {
        match self {
            Py::Dict(d) => d
                .borrow()
                .iter()
                .find(|(k, _)| matches!(k, Py::Str(s) if &**s == key))
                .map(|(_, v)| v.clone()),
            _ => None,
        }
    }

    /// The items of a list or a tuple.
    pub fn items(&self) -> Option<Vec<Py>> {
        match self {
            Py::List(l) => Some(l.borrow().clone()),
            Py::Tuple(t) => Some(t.to_vec()),
            _ => None,
        }
    }

    pub fn is_dict(&self) -> bool {
        matches!(self, Py::Dict(_))
    }

    pub fn str(&self) -> Option<&str> {
        match self {
            Py::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self) -> Option<i128> {
        match self {
            Py::Int(n) => Some(*n),
            Py::Bool(b) => Some(i128::from(*b)),
            _ => None,
        }
    }

    pub fn bool(&self) -> Option<bool> {
        match self {
            Py::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

/// Why a pickle could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PickleError {
    /// The bytes end before the pickle does.
    Truncated,
    /// An opcode this reader does not take (a class, a reduce, an old protocol's text forms).
    Unsupported { opcode: u8, at: usize },
    /// Bytes that do not make a pickle.
    Malformed { at: usize, what: &'static str },
}

impl std::fmt::Display for PickleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PickleError::Truncated => f.write_str("the pickle ends early (a file cut short?)"),
            PickleError::Unsupported { opcode, at } => write!(
                f,
                "the pickle holds Python objects a memory snapshot does not (opcode 0x{opcode:02x} at byte {at})"
            ),
            PickleError::Malformed { at, what } => write!(f, "not a valid pickle at byte {at}: {what}"),
        }
    }
}

/// Reads one pickle from `bytes`.
pub fn parse(bytes: &[u8]) -> Result<Py, PickleError> {
    Reader {
        bytes,
        at: 0,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: Vec::new(),
    }
    .run()
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    stack: Vec<Py>,
    /// Where each open MARK is on the stack.
    marks: Vec<usize>,
    /// By memo id (MEMOIZE numbers them in order; BINPUT may name any).
    memo: Vec<Option<Py>>,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], PickleError> {
        let end = self.at.checked_add(n).ok_or(PickleError::Truncated)?;
        let s = self.bytes.get(self.at..end).ok_or(PickleError::Truncated)?;
        self.at = end;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }

    fn le(&mut self, n: usize) -> Result<u64, PickleError> {
        let mut v = 0u64;
        for (i, b) in self.take(n)?.iter().enumerate() {
            v |= u64::from(*b) << (8 * i);
        }
        Ok(v)
    }

    fn len(&mut self, n: usize) -> Result<usize, PickleError> {
        usize::try_from(self.le(n)?).map_err(|_| PickleError::Truncated)
    }

    fn malformed(&self, what: &'static str) -> PickleError {
        PickleError::Malformed { at: self.at, what }
    }

    fn pop(&mut self) -> Result<Py, PickleError> {
        self.stack
            .pop()
            .ok_or_else(|| self.malformed("the stack is empty"))
    }

    fn top(&self) -> Result<&Py, PickleError> {
        self.stack
            .last()
            .ok_or_else(|| self.malformed("the stack is empty"))
    }

    /// The items pushed since the last MARK, taken off the stack.
    fn since_mark(&mut self) -> Result<Vec<Py>, PickleError> {
        let mark = self.marks.pop().ok_or_else(|| self.malformed("no MARK"))?;
        if mark > self.stack.len() {
            return Err(self.malformed("a MARK past the stack"));
        }
        Ok(self.stack.split_off(mark))
    }

    fn text(&mut self, n: usize) -> Result<Py, PickleError> {
        let at = self.at;
        let s = std::str::from_utf8(self.take(n)?).map_err(|_| PickleError::Malformed {
            at,
            what: "a string that is not UTF-8",
        })?;
        Ok(Py::Str(Rc::from(s)))
    }

    fn put(&mut self, id: usize) -> Result<(), PickleError> {
        let v = self.top()?.clone();
        if self.memo.len() <= id {
            // (ids come in order; a far one is a broken file, not a reason to allocate)
            if id > self.memo.len() + (1 << 20) {
                return Err(self.malformed("a memo id out of range"));
            }
            self.memo.resize(id + 1, None);
        }
        self.memo[id] = Some(v);
        Ok(())
    }

    fn get(&mut self, id: usize) -> Result<(), PickleError> {
        let v = self
            .memo
            .get(id)
            .cloned()
            .flatten()
            .ok_or_else(|| self.malformed("a memo id never stored"))?;
        self.stack.push(v);
        Ok(())
    }

    fn run(mut self) -> Result<Py, PickleError> {
        loop {
            let at = self.at;
            let op = self.byte()?;
            match op {
                0x80 => drop(self.byte()?),                // PROTO
                0x95 => drop(self.le(8)?),                 // FRAME
                b'.' => return self.pop(),                 // STOP
                b'(' => self.marks.push(self.stack.len()), // MARK
                b'N' => self.stack.push(Py::None),
                0x88 => self.stack.push(Py::Bool(true)),
                0x89 => self.stack.push(Py::Bool(false)),
                b'K' => {
                    let n = self.byte()?;
                    self.stack.push(Py::Int(i128::from(n)));
                }
                b'M' => {
                    let n = self.le(2)?;
                    self.stack.push(Py::Int(i128::from(n)));
                }
                b'J' => {
                    let n = self.le(4)? as u32 as i32;
                    self.stack.push(Py::Int(i128::from(n)));
                }
                0x8a => {
                    // LONG1: little-endian two's complement, up to 16 bytes here
                    let n = usize::from(self.byte()?);
                    let b = self.take(n)?.to_vec();
                    if n > 16 {
                        return Err(self.malformed("an integer wider than 128 bits"));
                    }
                    let mut v: i128 = 0;
                    for (i, x) in b.iter().enumerate() {
                        v |= i128::from(*x) << (8 * i);
                    }
                    if n > 0 && n < 16 && b[n - 1] & 0x80 != 0 {
                        v -= 1i128 << (8 * n);
                    }
                    self.stack.push(Py::Int(v));
                }
                b'G' => {
                    let b: [u8; 8] = self
                        .take(8)?
                        .try_into()
                        .map_err(|_| PickleError::Truncated)?;
                    self.stack.push(Py::Float(f64::from_be_bytes(b)));
                }
                0x8c => {
                    let n = usize::from(self.byte()?);
                    let s = self.text(n)?;
                    self.stack.push(s);
                }
                b'X' => {
                    let n = self.len(4)?;
                    let s = self.text(n)?;
                    self.stack.push(s);
                }
                0x8d => {
                    let n = self.len(8)?;
                    let s = self.text(n)?;
                    self.stack.push(s);
                }
                b'C' | b'B' | 0x8e => {
                    let n = match op {
                        b'C' => usize::from(self.byte()?),
                        b'B' => self.len(4)?,
                        _ => self.len(8)?,
                    };
                    let b = Rc::from(self.take(n)?);
                    self.stack.push(Py::Bytes(b));
                }
                b'}' => self.stack.push(Py::Dict(Rc::default())),
                b']' => self.stack.push(Py::List(Rc::default())),
                b')' => self.stack.push(Py::Tuple(Rc::from(Vec::new()))),
                b't' => {
                    let items = self.since_mark()?;
                    self.stack.push(Py::Tuple(Rc::from(items)));
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    if self.stack.len() < n {
                        return Err(self.malformed("a tuple of more items than the stack holds"));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.stack.push(Py::Tuple(Rc::from(items)));
                }
                b'l' => {
                    let items = self.since_mark()?;
                    self.stack.push(Py::List(Rc::new(RefCell::new(items))));
                }
                b'd' => {
                    let items = self.since_mark()?;
                    let pairs = pairs(items)
                        .ok_or_else(|| self.malformed("a dict of an odd number of items"))?;
                    self.stack.push(Py::Dict(Rc::new(RefCell::new(pairs))));
                }
                b'a' => {
                    let v = self.pop()?;
                    match self.top()? {
                        Py::List(l) => l.borrow_mut().push(v),
                        _ => return Err(self.malformed("APPEND to what is not a list")),
                    }
                }
                b'e' => {
                    let items = self.since_mark()?;
                    match self.top()? {
                        Py::List(l) => l.borrow_mut().extend(items),
                        _ => return Err(self.malformed("APPENDS to what is not a list")),
                    }
                }
                b's' => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    match self.top()? {
                        Py::Dict(d) => d.borrow_mut().push((k, v)),
                        _ => return Err(self.malformed("SETITEM on what is not a dict")),
                    }
                }
                b'u' => {
                    let items = self.since_mark()?;
                    let new = pairs(items)
                        .ok_or_else(|| self.malformed("SETITEMS of an odd number of items"))?;
                    match self.top()? {
                        Py::Dict(d) => d.borrow_mut().extend(new),
                        _ => return Err(self.malformed("SETITEMS on what is not a dict")),
                    }
                }
                0x94 => {
                    let id = self.memo.len();
                    self.put(id)?;
                }
                b'q' => {
                    let id = usize::from(self.byte()?);
                    self.put(id)?;
                }
                b'r' => {
                    let id = self.len(4)?;
                    self.put(id)?;
                }
                b'h' => {
                    let id = usize::from(self.byte()?);
                    self.get(id)?;
                }
                b'j' => {
                    let id = self.len(4)?;
                    self.get(id)?;
                }
                b'0' => drop(self.pop()?), // POP
                _ => return Err(PickleError::Unsupported { opcode: op, at }),
            }
        }
    }
}

/// `[k0, v0, k1, v1, …]` as pairs; `None` for an odd count.
fn pairs(items: Vec<Py>) -> Option<Vec<(Py, Py)>> {
    if !items.len().is_multiple_of(2) {
        return None;
    }
    let mut out = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push((k, v));
    }
    Some(out)
}

/// Writes `value` as a pickle of protocol 2, which every Python 3 reads (`pickle.load`), with no
/// memo: each value is written where it stands.
pub fn write(value: &Py) -> Vec<u8> {
    let mut out = vec![0x80, 2];
    put(value, &mut out);
    out.push(b'.');
    out
}

fn put(v: &Py, out: &mut Vec<u8>) {
    match v {
        Py::None => out.push(b'N'),
        Py::Bool(true) => out.push(0x88),
        Py::Bool(false) => out.push(0x89),
        Py::Int(n) => {
            if let Ok(small) = i32::try_from(*n) {
                out.push(b'J');
                out.extend_from_slice(&small.to_le_bytes());
            } else {
                // LONG1: the shortest two's complement that keeps the sign
                let bytes = n.to_le_bytes();
                let mut len = bytes.len();
                while len > 1
                    && ((bytes[len - 1] == 0 && bytes[len - 2] & 0x80 == 0)
                        || (bytes[len - 1] == 0xff && bytes[len - 2] & 0x80 != 0))
                {
                    len -= 1;
                }
                out.push(0x8a);
                out.push(len as u8);
                out.extend_from_slice(&bytes[..len]);
            }
        }
        Py::Float(x) => {
            out.push(b'G');
            out.extend_from_slice(&x.to_be_bytes());
        }
        Py::Str(s) => {
            out.push(b'X');
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Py::Bytes(b) => {
            // (protocol 2 has no bytes opcode; a snapshot has no bytes either)
            put(&Py::Str(Rc::from(String::from_utf8_lossy(b).as_ref())), out);
        }
        Py::List(l) => {
            out.push(b']');
            let items = l.borrow();
            if !items.is_empty() {
                out.push(b'(');
                for i in items.iter() {
                    put(i, out);
                }
                out.push(b'e');
            }
        }
        Py::Tuple(t) => {
            out.push(b'(');
            for i in t.iter() {
                put(i, out);
            }
            out.push(b't');
        }
        Py::Dict(d) => {
            out.push(b'}');
            let items = d.borrow();
            if !items.is_empty() {
                out.push(b'(');
                for (k, v) in items.iter() {
                    put(k, out);
                    put(v, out);
                }
                out.push(b'u');
            }
        }
    }
}

/// A dict of string keys, for writing.
pub fn dict(items: Vec<(&str, Py)>) -> Py {
    Py::Dict(Rc::new(RefCell::new(
        items
            .into_iter()
            .map(|(k, v)| (Py::Str(Rc::from(k)), v))
            .collect(),
    )))
}

/// A list, for writing.
pub fn list(items: Vec<Py>) -> Py {
    Py::List(Rc::new(RefCell::new(items)))
}

/// A tuple, for writing.
pub fn tuple(items: Vec<Py>) -> Py {
    Py::Tuple(Rc::from(items))
}

/// A string, for writing.
pub fn str(s: &str) -> Py {
    Py::Str(Rc::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_python_writes() {
        // pickle.dumps({'a': [1, -2, 70000, 2**40, 1.5, 'x', True, None], 'b': (1,)}, 4)
        let p = b"\x80\x04\x958\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a\x94]\x94(K\x01J\xfe\xff\xff\xffJp\x11\x01\x00\x8a\x06\x00\x00\x00\x00\x00\x01G?\xf8\x00\x00\x00\x00\x00\x00\x8c\x01x\x94\x88Ne\x8c\x01b\x94K\x01\x85\x94u.";
        let v = parse(p).unwrap();
        let a = v.get("a").unwrap().items().unwrap();
        assert_eq!(a[0].int(), Some(1));
        assert_eq!(a[1].int(), Some(-2));
        assert_eq!(a[2].int(), Some(70000));
        assert_eq!(a[3].int(), Some(1 << 40));
        assert!(matches!(a[4], Py::Float(x) if x == 1.5));
        assert_eq!(a[5].str(), Some("x"));
        assert_eq!(a[6].bool(), Some(true));
        assert!(matches!(a[7], Py::None));
        assert_eq!(v.get("b").unwrap().items().unwrap()[0].int(), Some(1));
    }

    #[test]
    fn refuses_what_would_import_and_what_is_cut() {
        // pickle.dumps(OrderedDict(), 4): a class by its module and name
        let p = b"\x80\x04\x95\x22\x00\x00\x00\x00\x00\x00\x00\x8c\x0bcollections\x94\x8c\x0bOrderedDict\x94\x93\x94)R\x94.";
        assert!(matches!(
            parse(p),
            Err(PickleError::Unsupported { opcode: 0x93, .. })
        ));
        assert!(matches!(
            parse(b"\x80\x04}\x94(\x8c\x01a"),
            Err(PickleError::Truncated)
        ));
        assert!(parse(b"\x80\x04e.").is_err());
    }
}
