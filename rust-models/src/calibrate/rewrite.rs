//! `mcmvm calibrate --write`: the fitted values written into the config file in place.
//! Only the fitted keys' lines change; each gets a provenance comment on the line above
//! (replacing an earlier one, so rewriting is idempotent); every other byte — comments,
//! blank lines, other keys, their order — stays. A key the file does not have yet (an
//! optional one, such as `l2_tlb.lookups_per_cycle`) is added after its section's last
//! key. The new text is read back (parsed, validated, the fitted values compared) before
//! it replaces the file, and it replaces it atomically (temp file + rename).

use super::fit::current_values;
use super::params::Param;
use super::CalibrateError;
use crate::gpu::GpuConfig;
use std::path::Path;

/// The start of every provenance comment this module writes.
pub const PROVENANCE: &str = "# calibrated by `mcmvm calibrate`";

/// The section a `[header]` line opens (None for any other line).
fn header(line: &str) -> Option<&str> {
    let t = line.trim();
    let t = t.split('#').next().unwrap_or("").trim();
    t.strip_prefix('[')?.strip_suffix(']').map(str::trim)
}

/// Whether `line` assigns `name` (`name = …`, any spacing).
fn assigns(line: &str, name: &str) -> bool {
    line.trim_start()
        .strip_prefix(name)
        .is_some_and(|rest| rest.trim_start().starts_with('='))
}

/// A line that assigns some key (not blank, not a comment, not a header).
fn is_assignment(line: &str) -> bool {
    let t = line.trim_start();
    !t.is_empty() && !t.starts_with('#') && !t.starts_with('[') && t.contains('=')
}

/// The provenance comment of one fitted key. `fitted_on` names the targets (and scale).
pub fn provenance(p: &Param, fitted_on: &str) -> String {
    format!(
        "{PROVENANCE} on {fitted_on}: range [{}, {}]; source: {}",
        p.format(p.low),
        p.format(p.high),
        p.source.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// `text` (the config read from `path`) with each `(param, value)` written, and read back.
pub fn rewrite(
    text: &str,
    path: &Path,
    fitted: &[(Param, f64)],
    fitted_on: &str,
) -> Result<String, CalibrateError> {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    if lines.last().is_some_and(|l| !l.ends_with('\n')) {
        // Give the last line its newline so inserted lines after it stay separate lines.
        lines.last_mut().expect("non-empty").push('\n');
    }
    for (p, value) in fitted {
        let (section, name) = p.section_and_name();
        let at = locate(&lines, section, name).ok_or_else(|| CalibrateError::NoSection {
            path: path.to_path_buf(),
            section: section.to_string(),
            key: p.key.to_string(),
        })?;
        let comment = provenance(p, fitted_on) + "\n";
        match at.found {
            Some(k) => {
                let indent: String = lines[k].chars().take_while(|c| c.is_whitespace()).collect();
                let trailing = lines[k]
                    .split_once('#')
                    .map(|(_, c)| format!(" #{}", c.trim_end()))
                    .unwrap_or_default();
                lines[k] = format!("{indent}{name} = {}{trailing}\n", p.format(*value));
                if k > 0 && lines[k - 1].trim_start().starts_with(PROVENANCE) {
                    lines[k - 1] = comment;
                } else {
                    lines.insert(k, comment);
                }
            }
            None => {
                let at = at.last_key.unwrap_or(at.opened) + 1;
                lines.insert(at, format!("{name} = {}\n", p.format(*value)));
                lines.insert(at, comment);
            }
        }
    }
    let out: String = lines.concat();
    read_back(&out, path, fitted)?;
    Ok(out)
}

/// Where a key sits in a config's lines.
struct KeyAt {
    /// The section's header line.
    opened: usize,
    /// The key's assignment, if the section has one.
    found: Option<usize>,
    /// The section's last assignment before the key (or to its end).
    last_key: Option<usize>,
}

/// The first `[section]` of `lines` and `name`'s place in it (None: no such section).
fn locate(lines: &[String], section: &str, name: &str) -> Option<KeyAt> {
    let mut current: Option<&str> = None;
    let mut opened = None;
    let mut found = None;
    let mut last_key = None;
    for (k, line) in lines.iter().enumerate() {
        if let Some(h) = header(line) {
            if opened.is_some() {
                break;
            }
            current = Some(h);
            if h == section {
                opened = Some(k);
            }
            continue;
        }
        if current == Some(section) {
            if assigns(line, name) {
                found = Some(k);
                break;
            }
            if is_assignment(line) {
                last_key = Some(k);
            }
        }
    }
    Some(KeyAt {
        opened: opened?,
        found,
        last_key,
    })
}

/// Parse and validate the new text and check each fitted key holds its value.
fn read_back(text: &str, path: &Path, fitted: &[(Param, f64)]) -> Result<(), CalibrateError> {
    let cfg = GpuConfig::parse(text, path)?;
    let params: Vec<Param> = fitted.iter().map(|(p, _)| *p).collect();
    for ((p, want), got) in fitted.iter().zip(current_values(&cfg, &params)) {
        if got.map(|g| p.format(g)) != Some(p.format(*want)) {
            return Err(CalibrateError::ReadBack {
                path: path.to_path_buf(),
                key: p.key.to_string(),
                found: got.map_or("nothing".into(), |g| p.format(g)),
                expected: p.format(*want),
            });
        }
    }
    Ok(())
}

/// Replace `path` with `text` atomically: a temp file beside it, flushed, then renamed.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".calibrate-tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
