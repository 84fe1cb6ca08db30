//! Why a configuration could not be used, as types: the file, and either toml's message
//! (line, column, key), the rule a key's value breaks ([`InvalidKey`]), or the `--set`
//! override that could not be applied ([`OverrideError`]). Every message is one line that
//! names the file and the key and says what was expected; the CLI prints it and exits 2.

use std::fmt;
use std::path::PathBuf;

/// Why a configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not TOML, or a key or value serde does not take. toml's message names the line, the
    /// column and the key; it is printed on one line (toml's own spans several). Not a
    /// `#[source]`: a chain printer would print it again, on several lines.
    #[error("{path}: {}", one_line(error))]
    Parse {
        path: PathBuf,
        error: Box<toml::de::Error>,
    },
    /// A key's value the models cannot use (boxed: the rules carry keys and values, and
    /// every `Result` of a config would otherwise be that large).
    #[error("{path}: {error}")]
    Invalid {
        path: PathBuf,
        #[source]
        error: Box<InvalidKey>,
    },
    /// A `--set KEY=VALUE` override that cannot be applied to the file's keys.
    #[error("{path}: --set `{text}`: {error}")]
    Override {
        path: PathBuf,
        text: String,
        #[source]
        error: OverrideError,
    },
}

impl ConfigError {
    /// A TOML parse or deserialisation error of `path`.
    pub fn toml(path: &std::path::Path, error: toml::de::Error) -> ConfigError {
        ConfigError::Parse {
            path: path.to_path_buf(),
            error: Box::new(error),
        }
    }

    /// The rule `error` breaks, in `path`.
    pub fn invalid(path: &std::path::Path, error: InvalidKey) -> ConfigError {
        ConfigError::Invalid {
            path: path.to_path_buf(),
            error: Box::new(error),
        }
    }
}

/// toml's multi-line message (with a source excerpt) on one line.
fn one_line(e: &toml::de::Error) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A key's value, as the configuration gave it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(u64),
    Real(f64),
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(n) => write!(f, "{n}"),
            Number::Real(x) => write!(f, "{x}"),
        }
    }
}

impl From<u32> for Number {
    fn from(n: u32) -> Number {
        Number::Int(n.into())
    }
}
impl From<u64> for Number {
    fn from(n: u64) -> Number {
        Number::Int(n)
    }
}
impl From<usize> for Number {
    fn from(n: usize) -> Number {
        Number::Int(n as u64)
    }
}
impl From<f64> for Number {
    fn from(x: f64) -> Number {
        Number::Real(x)
    }
}

/// The legal values of a number: `min..=max`, or `min` and above.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub min: Number,
    pub max: Option<Number>,
}

impl Bounds {
    /// `min..=max`.
    pub fn between(min: impl Into<Number>, max: impl Into<Number>) -> Bounds {
        Bounds {
            min: min.into(),
            max: Some(max.into()),
        }
    }

    /// `min` and above.
    pub fn at_least(min: impl Into<Number>) -> Bounds {
        Bounds {
            min: min.into(),
            max: None,
        }
    }

    /// The bounds after a noun: "in 1..=64", ">= 128".
    fn qualifier(&self) -> String {
        match self.max {
            Some(_) => format!("in {self}"),
            None => self.to_string(),
        }
    }
}

impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.max {
            Some(max) => write!(f, "{}..={max}", self.min),
            None => write!(f, ">= {}", self.min),
        }
    }
}

/// A rule a key's value breaks. `key` is the dotted key as the file spells it
/// (`remote_tracker.entries`, `l1_tlb.entries_4k`).
#[derive(Debug, thiserror::Error)]
pub enum InvalidKey {
    /// A number outside its legal range (a NaN is outside every range).
    #[error("key `{key}`: expected {bounds}, got {value}")]
    OutOfRange {
        key: String,
        value: Number,
        bounds: Bounds,
    },
    /// A rate that must be finite and above zero.
    #[error("key `{key}`: expected a positive number, got {value}")]
    NotPositive { key: String, value: f64 },
    /// A number that must be finite.
    #[error("key `{key}`: expected a finite number, got {value}")]
    NotFinite { key: String, value: f64 },
    /// A count or size that must be a power of two within bounds.
    #[error("key `{key}`: expected a power of two {}, got {value}", .bounds.qualifier())]
    NotPowerOfTwo {
        key: String,
        value: u64,
        bounds: Bounds,
    },
    /// A size that must be a positive multiple of `multiple` bytes.
    #[error("key `{key}`: expected a positive multiple of {}, got {value}", bytes_text(*.multiple))]
    NotMultiple {
        key: String,
        value: u64,
        multiple: u64,
    },
    /// A value the hardware or the model supports only one setting of.
    #[error("key `{key}`: expected {expected} ({reason}), got {value}")]
    Unsupported {
        key: String,
        value: Number,
        expected: Number,
        reason: &'static str,
    },
    /// TLB entries that make no power-of-two number of sets.
    #[error("key `{key}`: {entries} entries do not form a power-of-two number of {ways}-way sets")]
    TlbSets {
        key: String,
        entries: u32,
        ways: u32,
    },
    /// A cache size that makes no power-of-two number of sets of lines.
    #[error(
        "key `{key}`: {bytes} bytes in {ways}-way sets of {line_bytes}-byte lines is not a \
         power-of-two set count"
    )]
    CacheSets {
        key: String,
        bytes: u64,
        ways: u32,
        line_bytes: u64,
    },
    /// A rule between two keys: `key`'s value given `other`'s.
    #[error("key `{key}`: expected {expected} with `{other}` = {other_value}, got {value}")]
    BetweenKeys {
        key: String,
        value: Number,
        other: String,
        other_value: Number,
        /// The rule, in words ("below 2^timer_bits").
        expected: String,
    },
    /// A rule a model states with its own error type (kept as the source).
    #[error("key `{key}`: {source}")]
    Model {
        key: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Every variant of [`InvalidKey`] names its key in a field `key`: one list of them serves
/// both the shared and the mutable accessor (match ergonomics give `&String` or `&mut String`).
macro_rules! the_key {
    ($rule:expr) => {
        match $rule {
            InvalidKey::OutOfRange { key, .. }
            | InvalidKey::NotPositive { key, .. }
            | InvalidKey::NotFinite { key, .. }
            | InvalidKey::NotPowerOfTwo { key, .. }
            | InvalidKey::NotMultiple { key, .. }
            | InvalidKey::Unsupported { key, .. }
            | InvalidKey::TlbSets { key, .. }
            | InvalidKey::CacheSets { key, .. }
            | InvalidKey::BetweenKeys { key, .. }
            | InvalidKey::Model { key, .. } => key,
        }
    };
}

impl InvalidKey {
    /// The key the rule is about.
    pub fn key(&self) -> &str {
        the_key!(self)
    }

    /// The same rule with the keys of section `from` spelled as section `to` (where another
    /// file nests the same parameters under another name).
    pub fn in_section(mut self, from: &str, to: &str) -> InvalidKey {
        let rename = |key: &mut String| {
            if let Some(rest) = key.strip_prefix(from).and_then(|r| r.strip_prefix('.')) {
                *key = format!("{to}.{rest}");
            }
        };
        if let InvalidKey::BetweenKeys { other, .. } = &mut self {
            rename(other);
        }
        rename(self.key_mut());
        self
    }

    fn key_mut(&mut self) -> &mut String {
        the_key!(self)
    }

    /// `value` of `key` outside `bounds`.
    pub fn out_of_range(key: &str, value: impl Into<Number>, bounds: Bounds) -> InvalidKey {
        InvalidKey::OutOfRange {
            key: key.to_string(),
            value: value.into(),
            bounds,
        }
    }
}

/// `bytes` in the largest binary unit that divides it ("2 MB", "128 bytes").
fn bytes_text(bytes: u64) -> String {
    for (shift, unit) in [(30, "GB"), (20, "MB"), (10, "KB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// Why a `--set KEY=VALUE` override cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    #[error("an override is KEY=VALUE, e.g. forest.apd.r2=0.8")]
    NoEquals,
    #[error("the key is empty")]
    EmptyKey,
    /// A dotted key goes through a key that holds a value.
    #[error("`{part}` is a value, not a table")]
    NotATable { part: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn each_rule_names_the_file_the_key_and_what_was_expected() {
        let p = Path::new("gpu.toml");
        let cases = [
            (
                InvalidKey::out_of_range("remote_tracker.entries", 64u32, Bounds::between(1u32, 32u32)),
                "gpu.toml: key `remote_tracker.entries`: expected 1..=32, got 64",
            ),
            (
                InvalidKey::out_of_range("fault.batch_size", 0u32, Bounds::at_least(1u32)),
                "gpu.toml: key `fault.batch_size`: expected >= 1, got 0",
            ),
            (
                InvalidKey::NotPowerOfTwo {
                    key: "gpu.chiplets".into(),
                    value: 3,
                    bounds: Bounds::between(1u32, 64u32),
                },
                "gpu.toml: key `gpu.chiplets`: expected a power of two in 1..=64, got 3",
            ),
            (
                InvalidKey::NotPowerOfTwo {
                    key: "memory.channel_interleave_bytes".into(),
                    value: 100,
                    bounds: Bounds::at_least(128u64),
                },
                "gpu.toml: key `memory.channel_interleave_bytes`: expected a power of two >= 128, got 100",
            ),
            (
                InvalidKey::NotMultiple {
                    key: "memory.bytes_per_chiplet".into(),
                    value: 5,
                    multiple: 2 << 20,
                },
                "gpu.toml: key `memory.bytes_per_chiplet`: expected a positive multiple of 2 MB, got 5",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(ConfigError::invalid(p, error).to_string(), text);
        }
        let o = ConfigError::Override {
            path: p.to_path_buf(),
            text: "a.b".into(),
            error: OverrideError::NoEquals,
        };
        assert_eq!(
            o.to_string(),
            "gpu.toml: --set `a.b`: an override is KEY=VALUE, e.g. forest.apd.r2=0.8"
        );
    }
}
