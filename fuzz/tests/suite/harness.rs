//! The harness catches what it claims to: a panic, memory beyond the bound, a rejection
//! that spans lines or does not name its file.

use mcmvm_fuzz::runner::{check_one, FailureKind};
use mcmvm_fuzz::targets::{rejection, Outcome, Target, Verdict};
use mcmvm_fuzz::Input;
use rand_chacha::ChaCha8Rng;
use std::path::Path;

/// A target whose behaviour is chosen by its input's first byte.
struct Misbehaving;

impl Target for Misbehaving {
    fn name(&self) -> &'static str {
        "misbehaving"
    }
    fn generate(&self, _: &mut ChaCha8Rng) -> Input {
        Input::single("input", b"p".to_vec())
    }
    fn run(&self, dir: &Path) -> Outcome {
        let path = dir.join("input");
        let bytes = std::fs::read(&path).expect("the input was written");
        match bytes[0] {
            b'p' => panic!("a parser bug"),
            b'm' => {
                // 64 MiB for a one-byte input: past 256 x 1 + 16 MiB.
                let v = vec![1u8; 64 << 20];
                std::hint::black_box(&v);
                Ok(Verdict::Accepted)
            }
            b'n' => rejection(&format!("{}:1: two\nlines", path.display()), &path, Some(1)),
            b'f' => rejection("no file named", &path, None),
            b'l' => rejection(&format!("{}: no line", path.display()), &path, Some(3)),
            _ => rejection(&format!("{}:3: fine", path.display()), &path, Some(3)),
        }
    }
}

fn kind_of(first: u8) -> Result<Verdict, FailureKind> {
    let dir =
        std::env::temp_dir().join(format!("mcmvm-fuzz-harness-{}-{first}", std::process::id()));
    let (outcome, _) = check_one(&Misbehaving, &dir, &Input::single("input", vec![first]));
    let _ = std::fs::remove_dir_all(&dir);
    outcome.map_err(|(k, _)| k)
}

#[test]
fn the_harness_reports_panics_memory_and_bad_messages() {
    assert_eq!(kind_of(b'p'), Err(FailureKind::Panic));
    assert_eq!(kind_of(b'm'), Err(FailureKind::Memory));
    assert_eq!(kind_of(b'n'), Err(FailureKind::Message));
    assert_eq!(kind_of(b'f'), Err(FailureKind::Message));
    assert_eq!(kind_of(b'l'), Err(FailureKind::Message));
    assert_eq!(kind_of(b'o'), Ok(Verdict::Rejected));
}
