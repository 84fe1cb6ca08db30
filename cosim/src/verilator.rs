//! The Verilator engine: a block's emitted Verilog, verilated and compiled at run time for
//! exactly the parameters in use into a shared library with a generated `extern "C"` shim
//! (`verilator_shim`), loaded with `libloading` and stepped through this FFI wrapper.
//!
//! A configuration is built once (`verilator_build`, `verilator_cache`): the first use
//! prints what it builds and where it caches it, later uses and later runs load the cached
//! library. Libraries stay loaded for the life of the process, so an entry point never
//! outlives its code.

use crate::error::CosimError;
use crate::verilator_build::{Sources, Tools};
use crate::verilator_cache::{self, Cached};
use crate::verilator_shim::BlockPorts;
use mcmvm_models::config::HwConfig;
use mcmvm_models::protocol::{BlockKind, CycleModel, Ports};
use std::collections::HashMap;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

pub use crate::verilator_cache::{cache_root, CACHE_ENV};

/// A loaded model library and its entry points.
pub(crate) struct Loaded {
    new: unsafe extern "C" fn() -> *mut c_void,
    step: unsafe extern "C" fn(*mut c_void, *const u64, *mut u64),
    step_many: StepMany,
    free: unsafe extern "C" fn(*mut c_void),
    /// The state invariants its harness checks, in bit order (empty: an unchecked model).
    invariants: Vec<LoadedInvariant>,
    /// Where it was loaded from (its cache directory holds the sources and warnings).
    path: PathBuf,
    /// Kept so the entry points stay valid; never unloaded (see [`load`]).
    _library: libloading::Library,
}

/// The shim's `void step_many(void*, uint64_t n, const uint64_t* in, uint64_t* out)`.
type StepMany = unsafe extern "C" fn(*mut c_void, u64, *const u64, *mut u64);

/// A state invariant of a loaded model: its name and whether only a system run's driver
/// guarantees it.
#[derive(Debug, Clone)]
struct LoadedInvariant {
    name: String,
    system_only: bool,
}

/// One entry of the in-process table: filled by whichever thread builds it first.
type Slot = Arc<Mutex<Option<&'static Loaded>>>;

/// Models loaded by this process, by cache root, block, parameters and ports. The table
/// lock is held only to find a slot; the slot's own lock is held while its model is built,
/// so threads asking for the same model wait for one build while other models build
/// alongside.
static LOADED: OnceLock<Mutex<HashMap<String, Slot>>> = OnceLock::new();

/// The model of `block` for `cfg`, from the in-process table, the cache under `root`, or a
/// new build.
pub(crate) fn load(
    block: &BlockPorts,
    cfg: &HwConfig,
    root: &Path,
    tools: &Tools,
    checked: bool,
) -> Result<&'static Loaded, CosimError> {
    let key = format!(
        "{}|{}|{}|{}|checked={checked}",
        root.display(),
        block.module,
        crate::verilator_build::params_of(block, cfg),
        block.signature()
    );
    let slot: Slot = {
        let table = LOADED.get_or_init(Mutex::default);
        // A panic elsewhere cannot leave the map half-updated: take it as it is.
        let mut table = table.lock().unwrap_or_else(|e| e.into_inner());
        table.entry(key.clone()).or_default().clone()
    };
    let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(loaded) = *slot {
        return Ok(loaded);
    }
    // A model this executable loaded before is found without emitting the Verilog again.
    let version = crate::verilator_memo::verilator_version(tools, root, block.module)?;
    let memo_key = crate::verilator_memo::emission_key(&key, &version);
    let remembered = memo_key
        .as_deref()
        .and_then(|k| crate::verilator_memo::library_for(root, k))
        // Served only if its entry checks out; else the cache says why and rebuilds it.
        .filter(|lib| {
            lib.parent()
                .is_some_and(|d| crate::verilator_manifest::verify(d, &version).is_ok())
        });
    let cached = match remembered {
        Some(library) => Cached {
            dir: library
                .parent()
                .map_or_else(|| root.to_path_buf(), Path::to_path_buf),
            library,
            built: false,
            stale: None,
        },
        None => {
            let src = Sources::generate(block, cfg, checked)?;
            let cached = verilator_cache::model(&src, tools, root)?;
            if let Some(k) = &memo_key {
                crate::verilator_memo::remember_library(root, k, &cached.library);
            }
            cached
        }
    };
    let loaded = open(block, &cached)?;
    *slot = Some(loaded);
    Ok(loaded)
}

/// The invariants listed in a model's cache directory (`INVARIANTS_FILE`).
fn read_invariants(dir: &Path) -> Result<Vec<LoadedInvariant>, CosimError> {
    let file = dir.join(crate::verilator_build::INVARIANTS_FILE);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        // Built before models listed their invariants: an unchecked model (a checked one
        // has a harness of its own, so a cache directory of its own, with the list).
        Err(io) if io.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(io) => return Err(CosimError::Cache { path: file, io }),
    };
    Ok(text
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (scope, name) = l.split_once('\t').unwrap_or(("always", l));
            LoadedInvariant {
                name: name.to_string(),
                system_only: scope == "system",
            }
        })
        .collect())
}

/// Load `cached`'s library and look up the shim's entry points.
fn open(block: &BlockPorts, cached: &Cached) -> Result<&'static Loaded, CosimError> {
    let invariants = read_invariants(&cached.dir)?;
    let path = &cached.library;
    let err = |e: libloading::Error| CosimError::Load {
        path: path.clone(),
        reason: e.to_string(),
    };
    // RTLD_NOW: an unresolved symbol fails here, as an error, not at the first step.
    // RTLD_LOCAL: the library's symbols (its own Verilator runtime, `V<module>` classes
    // named alike in every configuration of a block) stay out of the global namespace.
    let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL;
    // SAFETY: the library is one this crate generated and compiled (verilator_build); its
    // static initialisers are Verilator's runtime's, which only set up its own globals.
    let library: libloading::Library =
        unsafe { libloading::os::unix::Library::open(Some(path), flags) }
            .map_err(err)?
            .into();
    let m = block.module;
    // SAFETY: the types are those of the shim's definitions (verilator_shim::cpp_shim):
    // `void* new()`, `void step(void*, const uint64_t*, uint64_t*)`, `void step_many(void*,
    // uint64_t, const uint64_t*, uint64_t*)`, `void free(void*)`. The pointers are copied
    // out of the symbols; they stay valid because the library is never unloaded (it is
    // leaked below).
    let (new, step, step_many, free) = unsafe {
        (
            *library
                .get::<unsafe extern "C" fn() -> *mut c_void>(format!("mcmvm_{m}_new").as_bytes())
                .map_err(err)?,
            *library
                .get::<unsafe extern "C" fn(*mut c_void, *const u64, *mut u64)>(
                    format!("mcmvm_{m}_step").as_bytes(),
                )
                .map_err(err)?,
            *library
                .get::<StepMany>(format!("mcmvm_{m}_step_many").as_bytes())
                .map_err(err)?,
            *library
                .get::<unsafe extern "C" fn(*mut c_void)>(format!("mcmvm_{m}_free").as_bytes())
                .map_err(err)?,
        )
    };
    Ok(Box::leak(Box::new(Loaded {
        new,
        step,
        step_many,
        free,
        invariants,
        path: path.clone(),
        _library: library,
    })))
}

/// A block's Verilator model behind the protocol's `CycleModel`.
pub struct VerilatorModel<I: Ports, O: Ports> {
    handle: *mut c_void,
    loaded: &'static Loaded,
    in_words: Vec<u64>,
    /// The outputs, then (a checked model) the word of broken invariants.
    out_words: Vec<u64>,
    /// A batch's inputs and outputs, `in_words.len()` / `out_words.len()` words a cycle
    /// (`step_batch`; kept to reuse their memory).
    batch_in: Vec<u64>,
    batch_out: Vec<u64>,
    /// Invariant bits that count here (a lockstep on random stimulus leaves out those only
    /// a system's driver guarantees).
    invariant_mask: u64,
    _ports: PhantomData<(I, O)>,
}

// SAFETY: the handle is owned by exactly this model (created in `from_loaded`, freed once
// in Drop) and is never shared, so moving the model moves the only access to it. Verilator's
// model is single-threaded (built without --threads) and keeps no thread-local state
// between calls that ties it to the thread that created it; `&mut self` on `step`
// serialises every use. The library behind `loaded` is immutable and loaded for good.
unsafe impl<I: Ports, O: Ports> Send for VerilatorModel<I, O> {}

impl<I: Ports, O: Ports> VerilatorModel<I, O> {
    /// Instantiate the model of `kind` for `cfg`'s parameters of that block, building it on
    /// first use (minutes at most, printed on stderr) and reusing the cached build after
    /// that. The cache is `$MCMVM_VERILATOR_CACHE`, else `verilator-models/` in the target
    /// directory.
    pub fn new(kind: BlockKind, cfg: &HwConfig) -> Result<Self, CosimError> {
        Self::new_in(kind, cfg, &verilator_cache::cache_root(), &Tools::default())
    }

    /// [`VerilatorModel::new`] with the block's state invariants checked after every cycle
    /// (`verilator_invariants`; read them with `state_violation`). `in_system`: the inputs
    /// come from a system run's driver, so the invariants that rest on its contract count
    /// too.
    pub fn checked(kind: BlockKind, cfg: &HwConfig, in_system: bool) -> Result<Self, CosimError> {
        Self::build(
            kind,
            cfg,
            &verilator_cache::cache_root(),
            &Tools::default(),
            Some(in_system),
        )
    }

    /// [`VerilatorModel::new`] with the cache root and tools given, for tests.
    pub(crate) fn new_in(
        kind: BlockKind,
        cfg: &HwConfig,
        root: &Path,
        tools: &Tools,
    ) -> Result<Self, CosimError> {
        Self::build(kind, cfg, root, tools, None)
    }

    /// `checked`: `None` for a plain model, else whether system-only invariants count.
    pub(crate) fn build(
        kind: BlockKind,
        cfg: &HwConfig,
        root: &Path,
        tools: &Tools,
        checked: Option<bool>,
    ) -> Result<Self, CosimError> {
        let loaded = load(
            &BlockPorts::of::<I, O>(kind),
            cfg,
            root,
            tools,
            checked.is_some(),
        )?;
        Ok(Self::from_loaded(loaded, checked))
    }

    /// The Verilog of `mutant`'s block for `cfg` with the mutant's edits applied, as a plain
    /// model: built on first use, cached by the mutated text's hash like any other.
    pub(crate) fn mutated(
        mutant: &crate::rtl_mutants::RtlMutant,
        cfg: &HwConfig,
    ) -> Result<Self, CosimError> {
        let block = BlockPorts::of::<I, O>(mutant.block);
        let mut src = Sources::generate(&block, cfg, false)?;
        src.verilog = mutant.apply(&src.verilog)?;
        let cached =
            verilator_cache::model(&src, &Tools::default(), &verilator_cache::cache_root())?;
        Ok(Self::from_loaded(open(&block, &cached)?, None))
    }

    /// An instance of `loaded`; `checked` as in [`VerilatorModel::build`].
    fn from_loaded(loaded: &'static Loaded, checked: Option<bool>) -> Self {
        let invariant_mask = loaded
            .invariants
            .iter()
            .enumerate()
            .filter(|(_, inv)| checked == Some(true) || !inv.system_only)
            .fold(0u64, |m, (i, _)| m | (1 << i));
        let extra = usize::from(checked.is_some());
        // SAFETY: `new` is the shim's constructor; it takes no arguments and returns an
        // owned handle that only `free` releases (in Drop).
        let handle = unsafe { (loaded.new)() };
        VerilatorModel {
            handle,
            loaded,
            in_words: vec![0; I::PORTS.len()],
            out_words: vec![0; O::PORTS.len() + extra],
            batch_in: Vec::new(),
            batch_out: Vec::new(),
            invariant_mask,
            _ports: PhantomData,
        }
    }

    /// The shared library this model runs; its directory holds the Verilog, the
    /// generated harness and shim, and Verilator's warnings (`warnings.txt`).
    pub fn library_path(&self) -> &Path {
        &self.loaded.path
    }
}

impl<I: Ports, O: Ports> CycleModel for VerilatorModel<I, O> {
    type In = I;
    type Out = O;
    fn step(&mut self, input: &I) -> O {
        input.write_words(&mut self.in_words);
        // SAFETY: the handle is live (freed only in Drop); the shim was generated from
        // `I::PORTS` and `O::PORTS` (the in-process table is keyed by them), so it reads
        // exactly `in_words.len()` words and writes exactly `out_words.len()`.
        unsafe {
            (self.loaded.step)(
                self.handle,
                self.in_words.as_ptr(),
                self.out_words.as_mut_ptr(),
            )
        };
        O::read_words(&self.out_words)
    }

    fn state_violation(&self) -> Option<String> {
        self.violation(&self.out_words)
    }

    /// The whole batch in one call of the shim's `step_many`.
    fn step_batch(&mut self, inputs: &[I], outputs: &mut Vec<O>) -> Option<(usize, String)> {
        let (iw, ow) = (self.in_words.len(), self.out_words.len());
        self.batch_in.resize(inputs.len() * iw, 0);
        self.batch_out.resize(inputs.len() * ow, 0);
        for (input, words) in inputs.iter().zip(self.batch_in.chunks_exact_mut(iw)) {
            input.write_words(words);
        }
        // SAFETY: the handle is live (freed only in Drop); the shim was generated from
        // `I::PORTS` and `O::PORTS` (plus the invariant word when checked, as `out_words`),
        // so `step_many` reads exactly `inputs.len() * iw` words and writes exactly
        // `inputs.len() * ow`: the lengths both buffers were just given.
        unsafe {
            (self.loaded.step_many)(
                self.handle,
                inputs.len() as u64,
                self.batch_in.as_ptr(),
                self.batch_out.as_mut_ptr(),
            )
        };
        outputs.extend(self.batch_out.chunks_exact(ow).map(O::read_words));
        // `state_violation` after the batch reads its last cycle, as after a `step`.
        if let Some(last) = self.batch_out.rchunks_exact(ow).next() {
            self.out_words.copy_from_slice(last);
        }
        let broken = self
            .batch_out
            .chunks_exact(ow)
            .enumerate()
            .find_map(|(k, words)| self.violation(words).map(|v| (k, v)));
        broken
    }
}

impl<I: Ports, O: Ports> VerilatorModel<I, O> {
    /// The broken invariant one cycle's output words (`out_words`' layout) report, if any.
    fn violation(&self, words: &[u64]) -> Option<String> {
        let failed = words.get(O::PORTS.len())? & self.invariant_mask;
        (failed != 0).then(|| {
            let bit = failed.trailing_zeros() as usize;
            self.loaded
                .invariants
                .get(bit)
                .map_or_else(|| format!("invariant bit {bit}"), |inv| inv.name.clone())
        })
    }
}

impl<I: Ports, O: Ports> Drop for VerilatorModel<I, O> {
    fn drop(&mut self) {
        // SAFETY: the handle came from `new` and is released exactly once.
        unsafe { (self.loaded.free)(self.handle) }
    }
}

#[cfg(test)]
#[path = "verilator_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "verilator_invariant_tests.rs"]
mod invariant_tests;
