//! What the tests hand the studies: the repository's configurations as [`Inputs`], the
//! twins as engines, and a [`Console`] that keeps what was printed.

use mcmvm_models::blocks::Hardware;
use mcmvm_models::gpu::GpuConfig;
use mcmvm_models::uvm::UvmConfig;
use mcmvm_models::workload::Scale;
use mcmvm_study::sweep::{Mode, Request, Suite};
use mcmvm_study::{Bar, BoxError, Console, Inputs};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The repository's `configs/NAME.toml` for a path naming NAME (as the CLI's built-ins).
pub struct RepoConfigs;

fn repo_path(path: &Path) -> PathBuf {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../configs")
        .join(format!("{name}.toml"))
}

impl Inputs for RepoConfigs {
    fn config_text(&self, path: &Path) -> Result<(String, PathBuf), BoxError> {
        let file = repo_path(path);
        Ok((std::fs::read_to_string(&file)?, file))
    }

    fn gpu(&self, path: &Path, overrides: &[String]) -> Result<GpuConfig, BoxError> {
        let (text, name) = self.config_text(path)?;
        Ok(GpuConfig::parse_with(&text, &name, overrides)?)
    }

    fn uvm(&self, path: &Path, overrides: &[String]) -> Result<UvmConfig, BoxError> {
        let (text, name) = self.config_text(path)?;
        Ok(UvmConfig::from_text(&text, &name, overrides)?)
    }

    fn engines(&self) -> Result<Hardware, BoxError> {
        Ok(Hardware::default())
    }
}

/// Everything printed, stdout and stderr apart; bars count their items.
#[derive(Default)]
pub struct Recorder {
    pub out: Mutex<String>,
    pub err: Mutex<Vec<String>>,
    pub ticks: Arc<Mutex<u64>>,
}

impl Recorder {
    pub fn out(&self) -> String {
        self.out.lock().unwrap().clone()
    }
}

struct Counter(Arc<Mutex<u64>>);

impl Bar for Counter {
    fn inc(&self) {
        *self.0.lock().unwrap() += 1;
    }
    fn set_message(&self, _: String) {}
    fn log(&self, _: &str) {}
    fn finish(&self) {}
}

impl Console for Recorder {
    fn out(&self, text: &str) {
        self.out.lock().unwrap().push_str(text);
    }
    fn err(&self, line: &str) {
        self.err.lock().unwrap().push(line.to_string());
    }
    fn bar(&self, _: u64, _: &str) -> Arc<dyn Bar> {
        Arc::new(Counter(Arc::clone(&self.ticks)))
    }
}

/// A small CLAP sweep (bfs under s64k and clap at scale 0.01, no extras) into `out`.
pub fn small_clap(out: &Path, mode: Mode) -> Request {
    Request {
        suite: Suite::Clap,
        mode,
        config: None,
        gpu_config: None,
        scale: Scale::Factor(0.01),
        seed: 1,
        out: Some(out.to_path_buf()),
        policies: "s64k,clap".into(),
        workloads: Some("bfs".into()),
        oversub: None,
        curve_scale: None,
        extras: None,
        hw_words: vec!["--hw".into(), "twin".into()],
        robustness: None,
    }
}
