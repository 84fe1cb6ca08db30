//! Plan files and task numbers, shared by every sharded study (`mcmvm sweep` and `mcmvm
//! codesign`): a plan is one self-contained shell command per task, in task order, for GNU
//! parallel, a Slurm array or HTCondor; a task is chosen by `--task-id N` or, inside a
//! Slurm array, `$SLURM_ARRAY_TASK_ID`.

use crate::StudyError;
use std::path::Path;

/// Write the plan of `tasks` tasks into `path`: line N+1 is `line(N)` (creating the
/// directory; the file is written whole and renamed, so a reader never sees half a plan).
/// A line that cannot be made (a word `sh` cannot quote) is the error, as it is.
pub fn write_plan<E>(
    path: &Path,
    tasks: usize,
    line: impl FnMut(usize) -> Result<String, E>,
) -> Result<(), StudyError>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let text = (0..tasks)
        .map(line)
        .map(|l| {
            l.map(|l| l + "\n")
                .map_err(|e| StudyError::PlanLine(Box::new(e)))
        })
        .collect::<Result<String, StudyError>>()?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::create_dir(dir)?;
    }
    let write = |source| StudyError::Write {
        path: path.to_path_buf(),
        source,
    };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(write)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        write(e)
    })
}

/// `--task-id` (`flag`), else `$SLURM_ARRAY_TASK_ID` if set (a Slurm array's task).
pub fn task_id(flag: Option<&str>) -> Result<Option<usize>, StudyError> {
    let (what, text) = match (flag, std::env::var("SLURM_ARRAY_TASK_ID")) {
        (Some(t), _) => ("--task-id", t.to_string()),
        (None, Ok(t)) => ("$SLURM_ARRAY_TASK_ID", t),
        (None, Err(_)) => return Ok(None),
    };
    let n = text
        .trim()
        .parse::<usize>()
        .map_err(|_| StudyError::TaskId { what, text })?;
    Ok(Some(n))
}

/// A word for `sh`: as is when it is plain, else in single quotes.
pub fn sh_word(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./,=:+@%".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_when_needed() {
        assert_eq!(sh_word("/a/b-c_d.toml"), "/a/b-c_d.toml");
        assert_eq!(sh_word("a b"), "'a b'");
        assert_eq!(sh_word("it's"), "'it'\\''s'");
        assert_eq!(sh_word(""), "''");
    }
}
