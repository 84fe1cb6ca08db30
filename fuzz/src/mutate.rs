//! Random corruption of valid-looking text: the mutations every target applies to its
//! generated inputs and to the shipped fixtures.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Numbers at the edges: zero, one, type limits, beyond them, malformed ones.
pub const EDGE_NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "31",
    "32",
    "33",
    "127",
    "128",
    "129",
    "255",
    "256",
    "1023",
    "1024",
    "1025",
    "4095",
    "4096",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1000000000000",
    "99999999999999999999999999",
    "0x0",
    "0xffffffffffffffff",
    "0xfffffffffffff000",
    "0x10000000000000000",
    "0x",
    "-0",
    "+1",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "1.5",
    "0.0",
    "",
    "٣",
    "1_000",
    "0b101",
    "00000000000000001",
];

/// Junk that is not text or not what any parser expects.
const JUNK: &[&[u8]] = &[
    b"\0",
    b"\xff\xfe",
    b"\xc3\x28",
    b"\r",
    b"\r\n",
    b"\t",
    b"#",
    b",",
    b"=",
    b"(",
    b")",
    b"[",
    b"]",
    b"{",
    b"}",
    b"\"",
    b"'",
    b"$",
    b"-",
    b" - ",
    b"\\",
    b"\xe2\x80\xae",
    b"\x1b[2J",
];

pub fn edge_number(rng: &mut ChaCha8Rng) -> String {
    if rng.gen_bool(0.7) {
        EDGE_NUMBERS.choose(rng).expect("not empty").to_string()
    } else {
        // Any number of any width.
        match rng.gen_range(0..4) {
            0 => rng.gen::<u64>().to_string(),
            1 => format!("0x{:x}", rng.gen::<u64>()),
            2 => (rng.gen::<u32>() as u64).to_string(),
            _ => rng.gen_range(0..100u64).to_string(),
        }
    }
}

/// Replace one whitespace-delimited token of `line` that `pick` accepts.
fn replace_token(line: &str, rng: &mut ChaCha8Rng, with: String) -> String {
    let toks: Vec<(usize, &str)> = line
        .split_inclusive(char::is_whitespace)
        .scan(0, |at, t| {
            let start = *at;
            *at += t.len();
            Some((start, t.trim_end()))
        })
        .filter(|(_, t)| !t.is_empty())
        .collect();
    let Some(&(start, tok)) = toks.choose(rng) else {
        return with;
    };
    // Sometimes only the numeric part of `key=value`, `X,Y,Z` or `(X,Y,Z)`.
    let (start, tok) = match tok.rfind(['=', ',', '(']) {
        Some(i) if rng.gen_bool(0.5) => (start + i + 1, &tok[i + 1..]),
        _ => (start, tok),
    };
    let end = start + tok.trim_end_matches(')').len();
    format!("{}{}{}", &line[..start], with, &line[end.min(line.len())..])
}

/// Apply 1 to `max` random mutations to `text`.
pub fn mutate(text: &[u8], rng: &mut ChaCha8Rng, max: usize) -> Vec<u8> {
    let mut bytes = text.to_vec();
    for _ in 0..rng.gen_range(1..=max) {
        bytes = mutate_once(bytes, rng);
    }
    bytes
}

fn lines_of(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn mutate_once(bytes: Vec<u8>, rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut lines = lines_of(&bytes);
    if lines.is_empty() {
        lines.push(Vec::new());
    }
    let i = rng.gen_range(0..lines.len());
    match rng.gen_range(0..14) {
        // Truncation anywhere.
        7 => {
            let cut = rng.gen_range(0..=bytes.len());
            bytes[..cut].to_vec()
        }
        8 | 9 => insert_junk(bytes, rng),
        11 => flip_bit(bytes, rng),
        kind => {
            mutate_line(&mut lines, i, kind, rng);
            lines.concat()
        }
    }
}

/// Junk bytes at a random place.
fn insert_junk(mut b: Vec<u8>, rng: &mut ChaCha8Rng) -> Vec<u8> {
    let at = rng.gen_range(0..=b.len());
    let junk: Vec<u8> = if rng.gen_bool(0.8) {
        JUNK.choose(rng).expect("not empty").to_vec()
    } else {
        (0..rng.gen_range(1..64)).map(|_| rng.gen()).collect()
    };
    b.splice(at..at, junk);
    b
}

/// One bit flipped.
fn flip_bit(mut b: Vec<u8>, rng: &mut ChaCha8Rng) -> Vec<u8> {
    if !b.is_empty() {
        let at = rng.gen_range(0..b.len());
        b[at] ^= 1 << rng.gen_range(0..8);
    }
    b
}

/// The line-level mutations of [`mutate_once`] (its `kind` draw) on line `i`.
fn mutate_line(lines: &mut Vec<Vec<u8>>, i: usize, kind: u32, rng: &mut ChaCha8Rng) {
    match kind {
        // A number, where a number was.
        0..=3 => {
            let line = String::from_utf8_lossy(&lines[i]).into_owned();
            let n = edge_number(rng);
            lines[i] = replace_token(&line, rng, n).into_bytes();
        }
        4 => {
            lines.remove(i);
        }
        5 => {
            let copies = if rng.gen_bool(0.9) {
                1
            } else {
                rng.gen_range(2..200)
            };
            let l = lines[i].clone();
            for _ in 0..copies {
                lines.insert(i, l.clone());
            }
        }
        6 => {
            let j = rng.gen_range(0..lines.len());
            lines.swap(i, j);
        }
        // A token replaced by a word of another line (a wrong key, a wrong record).
        10 => {
            let j = rng.gen_range(0..lines.len());
            let other = String::from_utf8_lossy(&lines[j]).into_owned();
            let word = other
                .split_whitespace()
                .collect::<Vec<_>>()
                .choose(rng)
                .map(|w| w.to_string());
            let line = String::from_utf8_lossy(&lines[i]).into_owned();
            lines[i] = replace_token(&line, rng, word.unwrap_or_default()).into_bytes();
        }
        // A very long line.
        12 => {
            let n = rng.gen_range(1..20_000);
            let word = if rng.gen_bool(0.5) { "9" } else { "a " };
            lines.insert(i, format!("{}\n", word.repeat(n)).into_bytes());
        }
        // A token deleted.
        _ => {
            let line = String::from_utf8_lossy(&lines[i]).into_owned();
            lines[i] = replace_token(&line, rng, String::new()).into_bytes();
        }
    }
}
