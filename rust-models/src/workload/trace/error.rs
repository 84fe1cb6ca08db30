//! What is wrong in a trace's text, without where: [`WorkloadError::Trace`] adds the file
//! and line (`file:line: message`), [`WorkloadError::TraceFile`] the file alone. Every
//! message says what was expected, so that one line is enough to fix the trace.
//!
//! [`WorkloadError::Trace`]: crate::workload::WorkloadError::Trace
//! [`WorkloadError::TraceFile`]: crate::workload::WorkloadError::TraceFile

/// One malformed line (or file) of a trace, in any of the supported formats.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// A field or line that is not what its position calls for.
    #[error("expected {expected}, found `{found}`")]
    Expected { expected: String, found: String },
    /// A line that does not have the shape of its record.
    #[error("expected `{form}`")]
    Form { form: &'static str },
    /// A line (or file) that stops before what its record requires.
    #[error("{what}: expected {expected}")]
    Short {
        what: &'static str,
        expected: String,
    },
    /// A number above its field's maximum.
    #[error("{what} {value} is larger than {max}")]
    TooLarge {
        what: &'static str,
        value: u64,
        max: u64,
    },
    /// A well-formed line that breaks a rule of the format: a thread block outside the
    /// grid, a warp that appears twice, records out of order. The message names the rule.
    #[error("{0}")]
    Rule(String),
}

impl LineError {
    /// `expected {expected}, found `{found}``.
    pub(crate) fn expected(expected: impl Into<String>, found: impl Into<String>) -> LineError {
        LineError::Expected {
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// A broken rule, in the words of `message`.
    pub(crate) fn rule(message: impl Into<String>) -> LineError {
        LineError::Rule(message.into())
    }

    /// `too few fields: expected `{form}``.
    pub(crate) fn too_few_fields(form: &str) -> LineError {
        LineError::Short {
            what: "too few fields",
            expected: format!("`{form}`"),
        }
    }
}
