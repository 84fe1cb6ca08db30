//! `report.html`: one self-contained page (inline CSS) linking the figures by relative path
//! (`<img src="clap/fig-speedup.svg">`), with the tables, the configuration files and the
//! date.

use crate::{HtmlTable, Section};
use std::fmt::Write;

/// Escape text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const STYLE: &str = "
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1400px; padding: 0 1em;
       color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 2px solid #4E79A7; padding-bottom: 0.2em;
       margin-top: 2em; }
.meta { color: #666; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { color: #444; font-size: 0.95em; margin-top: 0.3em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
caption { text-align: left; font-weight: 600; padding: 0.3em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; white-space: nowrap; }
th { background: #f0f3f7; } td:first-child, th:first-child { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
.scroll { overflow-x: auto; max-height: 32em; overflow-y: auto; }
details { margin: 0.5em 0 1em; } summary { cursor: pointer; color: #335; }
pre { background: #f6f8fa; border: 1px solid #ddd; padding: 0.8em; overflow-x: auto;
      font-size: 0.85em; }
.note { color: #8a4b00; }
";

fn table(t: &HtmlTable) -> String {
    let mut s = String::new();
    let _ = write!(s, "<div class=\"scroll\"><table>");
    if !t.folded {
        let _ = write!(s, "<caption>{}</caption>", escape(&t.caption));
    }
    s.push_str("<thead><tr>");
    for h in &t.header {
        let _ = write!(s, "<th>{}</th>", escape(h));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td>{}</td>", escape(c));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    if t.folded {
        format!(
            "<details><summary>{} ({} rows)</summary>\n{s}</details>\n",
            escape(&t.caption),
            t.rows.len()
        )
    } else {
        s
    }
}

fn anchor(title: &str) -> String {
    title
        .split(':')
        .next()
        .unwrap_or(title)
        .to_lowercase()
        .replace(' ', "-")
}

/// The whole page.
pub fn page(sections: &[Section], configs: &[(String, String)], date: &str) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>mcmvm report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>mcmvm: GPU virtual-memory co-simulation</h1>\n\
         <p class=\"meta\">Report generated {} by <code>mcmvm report</code> from the files \
         the studies wrote (no simulation was run for it).</p>\n<nav><ul>\n",
        escape(date)
    );
    for sec in sections {
        let _ = writeln!(
            s,
            "<li><a href=\"#{}\">{}</a></li>",
            anchor(&sec.title),
            escape(&sec.title)
        );
    }
    s.push_str("<li><a href=\"#configuration\">Configuration files</a></li>\n</ul></nav>\n");
    for sec in sections {
        let _ = writeln!(
            s,
            "<h2 id=\"{}\">{}</h2>",
            anchor(&sec.title),
            escape(&sec.title)
        );
        for n in &sec.notes {
            let _ = writeln!(s, "<p class=\"note\">{}</p>", escape(n));
        }
        for f in &sec.figures {
            let _ = writeln!(
                s,
                "<figure><img src=\"{}\" alt=\"{}\">\n<figcaption>{} \
                 (<a href=\"{0}\">{0}</a>)</figcaption></figure>",
                escape(&f.rel),
                escape(&f.caption),
                escape(&f.caption)
            );
        }
        for t in &sec.tables {
            s.push_str(&table(t));
        }
    }
    s.push_str("<h2 id=\"configuration\">Configuration files</h2>\n");
    if configs.is_empty() {
        s.push_str("<p class=\"note\">No configuration file was found.</p>\n");
    }
    for (name, text) in configs {
        let _ = writeln!(
            s,
            "<h3><code>{}</code></h3>\n<pre>{}</pre>",
            escape(name),
            escape(text)
        );
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// Now, as `YYYY-MM-DD HH:MM UTC`.
pub fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format_utc(secs)
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM UTC` (proleptic Gregorian calendar).
pub fn format_utc(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let (h, m) = ((secs % 86400) / 3600, (secs % 3600) / 60);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02} UTC")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(format_utc(1_735_689_599), "2024-12-31 23:59 UTC");
    }

    #[test]
    fn escapes() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
