//! The studies' CSV files: a header and rows of plain fields (names are identifiers, so no
//! quoting), read with the line number of every row kept for error messages.

use crate::ReportError;
use std::path::{Path, PathBuf};

/// One CSV file, parsed.
#[derive(Debug, Clone)]
pub struct Table {
    pub path: PathBuf,
    pub header: Vec<String>,
    pub rows: Vec<Row>,
}

/// One data row and the 1-based line it came from.
#[derive(Debug, Clone)]
pub struct Row {
    pub line: usize,
    pub fields: Vec<String>,
}

impl Table {
    /// Parse `text` (read from `path`): every row must have the header's field count.
    pub fn parse(path: &Path, text: &str) -> Result<Table, ReportError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let Some((_, head)) = lines.next() else {
            return Err(ReportError::parse(
                path,
                1,
                "empty file, expected a CSV header",
            ));
        };
        let header: Vec<String> = head.split(',').map(|h| h.trim().to_string()).collect();
        let mut rows = Vec::new();
        for (i, l) in lines {
            let fields: Vec<String> = l.split(',').map(|f| f.trim().to_string()).collect();
            if fields.len() != header.len() {
                return Err(ReportError::parse(
                    path,
                    i + 1,
                    format!("{} fields, the header has {}", fields.len(), header.len()),
                ));
            }
            rows.push(Row {
                line: i + 1,
                fields,
            });
        }
        Ok(Table {
            path: path.to_path_buf(),
            header,
            rows,
        })
    }

    /// Read and parse a file; `Ok(None)` if it does not exist.
    pub fn load(path: &Path) -> Result<Option<Table>, ReportError> {
        match crate::read_optional(path)? {
            Some(text) => Table::parse(path, &text).map(Some),
            None => Ok(None),
        }
    }

    /// Index of a column the report needs (an error at the header line if it is missing).
    pub fn column(&self, name: &str) -> Result<usize, ReportError> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| ReportError::parse(&self.path, 1, format!("no column `{name}`")))
    }

    /// The text of column `c` in `row`.
    pub fn text<'a>(&self, row: &'a Row, c: usize) -> &'a str {
        &row.fields[c]
    }

    /// Column `c` of `row` as a number.
    pub fn num(&self, row: &Row, c: usize) -> Result<f64, ReportError> {
        let f = &row.fields[c];
        f.parse::<f64>().map_err(|_| {
            ReportError::parse(
                &self.path,
                row.line,
                format!("column `{}`: `{f}` is not a number", self.header[c]),
            )
        })
    }
}

/// Distinct values in first-seen order.
pub fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in items {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_their_line_numbers() {
        let t = Table::parse(Path::new("x.csv"), "a,b\n1,2\n\n3,4\n").unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[1].line, 4);
        assert_eq!(t.num(&t.rows[1], 1).unwrap(), 4.0);
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = Table::parse(Path::new("x.csv"), "a,b\n1,2\n1\n").unwrap_err();
        assert_eq!(e.to_string(), "x.csv:3: 1 fields, the header has 2");
        let t = Table::parse(Path::new("x.csv"), "a,b\n1,zz\n").unwrap();
        let e = t.num(&t.rows[0], 1).unwrap_err();
        assert_eq!(e.to_string(), "x.csv:2: column `b`: `zz` is not a number");
    }
}
