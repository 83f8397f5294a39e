//! Integer arguments from Python (actions, seeds, counts, limits), read whole
//! so that every one is checked like any other bad input: a value out of
//! range raises `ValueError` naming the argument and its bounds, whatever
//! its size, and a bool or a non-integer raises `TypeError`.
//!
//! pyo3's own conversion to `i64` raises `OverflowError` for an int past
//! 2^63 and takes a bool for 0 or 1 (`bool` is a subclass of `int`), so
//! `play_action(True)` played action 1 and `Game().play_action(2**64)`
//! raised OverflowError.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};
use std::fmt;

/// Largest size of a too-large integer written out in full in a message;
/// past it the message gives its size in bits (a million-digit int would
/// otherwise fill the message, and Python refuses to print past 4300 digits).
const MAX_SHOWN_BITS: u64 = 256;

/// An integer argument as Python gave it: an `int` or anything with
/// `__index__` (NumPy's integers), at any size. Bools and other types are
/// kept too, so that the check, which knows the argument's name, can refuse
/// them with a message naming it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Int {
    /// A value of `i64` or `u64`.
    Fits(i128),
    /// Past both: its digits (or its size when very large) and its sign.
    Huge { text: String, negative: bool },
    /// `True` or `False` (Python's or NumPy's): refused.
    Bool(bool),
    /// Not an integer at all: its type's name.
    Other(String),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Int {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Int> {
        let py = obj.py();
        // Plain ints first: the common case costs one conversion.
        if !obj.is_exact_instance_of::<PyInt>() {
            if let Ok(b) = obj.cast::<PyBool>() {
                return Ok(Int::Bool(b.is_true()));
            }
            // NumPy's bool has `__index__` (deprecated), so pyo3 would take it.
            let ty = obj.get_type();
            if ty.name()?.to_cow()? == "bool" && ty.module()?.to_cow()? == "numpy" {
                return Ok(Int::Bool(obj.is_truthy()?));
            }
        }
        match obj.extract::<i64>() {
            Ok(v) => return Ok(Int::Fits(v.into())),
            Err(e) if e.is_instance_of::<PyOverflowError>(py) => {}
            Err(e) if e.is_instance_of::<PyTypeError>(py) => {
                return Ok(Int::Other(obj.get_type().name()?.to_cow()?.into_owned()));
            }
            Err(e) => return Err(e),
        }
        // Past i64: read the int whole.
        let index = py.import("operator")?.getattr("index")?.call1((obj,))?;
        if let Ok(v) = index.extract::<u64>() {
            return Ok(Int::Fits(v.into()));
        }
        let negative = index.lt(0)?;
        let bits: u64 = index.call_method0("bit_length")?.extract()?;
        let text = if bits <= MAX_SHOWN_BITS {
            index.str()?.to_cow()?.into_owned()
        } else {
            format!(
                "{}(an integer of {bits} bits)",
                if negative { "-" } else { "" }
            )
        };
        Ok(Int::Huge { text, negative })
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Int::Fits(v) => write!(f, "{v}"),
            Int::Huge { text, .. } => f.write_str(text),
            Int::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Int::Other(type_name) => write!(f, "a {type_name}"),
        }
    }
}

impl From<i64> for Int {
    fn from(v: i64) -> Int {
        Int::Fits(v.into())
    }
}

impl Int {
    /// The value when it is an integer of `i64` or `u64`, None for a larger
    /// one; TypeError naming `name` for a bool or a non-integer.
    pub(crate) fn integer(&self, name: &str) -> PyResult<Option<i128>> {
        match self {
            Int::Fits(v) => Ok(Some(*v)),
            Int::Huge { .. } => Ok(None),
            Int::Bool(b) => Err(PyTypeError::new_err(format!(
                "{name} = {}: must be an integer, not a bool",
                if *b { "True" } else { "False" }
            ))),
            Int::Other(type_name) => Err(PyTypeError::new_err(format!(
                "{name} must be an integer, not {type_name}"
            ))),
        }
    }

    /// Whether the value is a negative integer (of any size).
    fn is_negative(&self) -> bool {
        match self {
            Int::Fits(v) => *v < 0,
            Int::Huge { negative, .. } => *negative,
            Int::Bool(_) | Int::Other(_) => false,
        }
    }

    /// The value as an index below `len` (an action, a game), or None when
    /// it is an integer out of that range; TypeError for a non-integer.
    pub(crate) fn index_below(&self, name: &str, len: usize) -> PyResult<Option<usize>> {
        Ok(self
            .integer(name)?
            .and_then(|v| usize::try_from(v).ok())
            .filter(|&i| i < len))
    }

    /// The value in `lo..=hi`; ValueError "`name = v: must be from lo to
    /// hi`" (then `unit`) otherwise.
    pub(crate) fn in_range(&self, name: &str, lo: u64, hi: u64, unit: &str) -> PyResult<u64> {
        self.integer(name)?
            .filter(|v| (i128::from(lo)..=i128::from(hi)).contains(v))
            .map(|v| v as u64)
            .ok_or_else(|| {
                PyValueError::new_err(format!("{name} = {self}: must be from {lo} to {hi}{unit}"))
            })
    }

    /// A seed or count: any `u64`. ValueError "`name = v: must be 0 or
    /// more`" for a negative one, "must be at most 2^64 - 1" for a larger.
    pub(crate) fn non_negative(&self, name: &str) -> PyResult<u64> {
        let value = self.integer(name)?;
        if self.is_negative() {
            return Err(PyValueError::new_err(format!(
                "{name} = {self}: must be 0 or more"
            )));
        }
        value.and_then(|v| u64::try_from(v).ok()).ok_or_else(|| {
            PyValueError::new_err(format!(
                "{name} = {self}: must be at most {} (2^64 - 1)",
                u64::MAX
            ))
        })
    }
}
