//! Configuration loading shared by every model. The hardware blocks' parameters and the
//! TOML helpers live in `mcmvm-protocol` (the RTL reads them too); this re-exports them
//! under their historical path.

pub use mcmvm_protocol::config::*;

use std::path::Path;

/// Parse TOML text into `T` after applying `key=value` overrides (see [`apply_override`]);
/// `path` names the text in messages. Validation is the caller's.
pub fn parse_with_overrides<T: serde::de::DeserializeOwned>(
    text: &str,
    path: &Path,
    overrides: &[String],
) -> Result<T, ConfigError> {
    // Straight from the text when nothing overrides it: toml's messages then name the
    // line and column (a tree built in memory has no positions left to name).
    if overrides.is_empty() {
        return parse_toml(text, path);
    }
    let mut tree: toml::Table = parse_toml(text, path)?;
    for o in overrides {
        apply_override(&mut tree, o, path)?;
    }
    toml::Value::Table(tree)
        .try_into()
        .map_err(|e| ConfigError::toml(path, e))
}

/// Set one dotted key (`forest.apd.r2=0.8`, `gpu.loads_in_flight_per_warp=2`) in a TOML
/// tree; the value is read as TOML (number, boolean, quoted string) or else taken as a
/// bare string.
pub fn apply_override(tree: &mut toml::Table, text: &str, path: &Path) -> Result<(), ConfigError> {
    let refuse = |error: OverrideError| ConfigError::Override {
        path: path.to_path_buf(),
        text: text.to_string(),
        error,
    };
    let (key, raw) = text
        .split_once('=')
        .ok_or_else(|| refuse(OverrideError::NoEquals))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(refuse(OverrideError::EmptyKey));
    }
    let value: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {}", raw.trim())) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or(toml::Value::String(raw.trim().into())),
        Err(_) => toml::Value::String(raw.trim().into()),
    };
    let parts: Vec<&str> = key.split('.').collect();
    let (last, parents) = parts
        .split_last()
        .ok_or_else(|| refuse(OverrideError::EmptyKey))?;
    let mut node = tree;
    for p in parents {
        let entry = node
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        node = entry.as_table_mut().ok_or_else(|| {
            refuse(OverrideError::NotATable {
                part: p.to_string(),
            })
        })?;
    }
    node.insert(last.to_string(), value);
    Ok(())
}
