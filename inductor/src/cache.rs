//! Building generated C into a shared object, with a content-addressed on-disk cache.
//!
//! Key: sha256 of the C source, the compiler flags, the compiler's identity (resolved path, size
//! and mtime of the driver binary: no process is spawned to ask its version) and the CPU's feature
//! flags (`-march=native` output is only valid on a CPU like this one). A warm entry loads in
//! a new process without running the compiler.
//!
//! An entry is `<key>.so` plus `<key>.meta` (the .so's length and sha256), written to temporary
//! names and renamed into place, meta last. Before loading, the .so must match its meta; after
//! loading, it must export [`crate::codegen::VALIDATION_SYMBOL`] naming the source hash. Any
//! mismatch (truncation, corruption, a foreign file) discards the entry and rebuilds it.

use std::collections::HashMap;
use std::ffi::CStr;
use std::os::raw::c_char;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use sha2::{Digest, Sha256};

use crate::codegen::VALIDATION_SYMBOL;
use crate::InductorError;

/// Flags for every build. `-ffp-contract=off` keeps `a * b + c` as two roundings, as eager
/// torch computes it.
pub const CFLAGS: &[&str] = &[
    "-O3",
    "-march=native",
    "-fopenmp",
    "-shared",
    "-fPIC",
    "-ffp-contract=off",
    "-fno-math-errno",
    // gcc would merge sin(x) and cos(x) into one sincos call, which has no SIMD version.
    "-fno-builtin-sin",
    "-fno-builtin-cos",
    "-fno-builtin-sinf",
    "-fno-builtin-cosf",
    // gcc copies a loop whose stride is a run-time value into a second version for stride 1.
    // Only kernels over symbolic sizes have such strides, mostly products of sizes that are
    // each at least 2, so the copy rarely or never runs (where a stride is 1 the general loop
    // runs, correct), and it was a third of the code of the dynamic `avg_pool2d`'s column
    // pieces (session 23). Static kernels compile to the same code (checked on 18 sources).
    "-fno-version-loops-for-strides",
];

static CC_INVOCATIONS: AtomicUsize = AtomicUsize::new(0);

/// How many times this process has run the C compiler (tests check warm loads run it zero times).
pub fn compiler_invocations() -> usize {
    CC_INVOCATIONS.load(Ordering::SeqCst)
}

/// `$TORCHFERRO_CACHE_DIR`, else `~/.cache/torchferro`. An empty value counts as unset: as a
/// path it would be the working directory, which would fill with kernel files.
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("TORCHFERRO_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".cache").join("torchferro")
}

fn compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// The compiler's identity without running it.
fn compiler_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let cc = compiler();
        let path = if cc.contains('/') {
            Some(PathBuf::from(&cc))
        } else {
            std::env::var_os("PATH").and_then(|p| {
                std::env::split_paths(&p)
                    .map(|d| d.join(&cc))
                    .find(|c| c.is_file())
            })
        };
        let Some(path) = path else { return cc };
        let real = std::fs::canonicalize(&path).unwrap_or(path);
        let meta = std::fs::metadata(&real).ok();
        let mtime = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs())
            .unwrap_or(0);
        format!(
            "{} {} {}",
            real.display(),
            meta.map(|m| m.len()).unwrap_or(0),
            mtime
        )
    })
}

fn cpu_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("flags"))
                    .map(str::to_string)
            })
            .unwrap_or_default()
    })
}

pub fn sha256_hex(data: &[u8]) -> String {
    let d = Sha256::digest(data);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// A loaded kernel library; kernels stay valid while it lives.
pub struct Loaded {
    pub lib: libloading::Library,
    pub path: PathBuf,
    /// A precompiled library's sealed copy, open while the library is (see `prebuilt`).
    pub(crate) _keep: Option<std::fs::File>,
}

/// Result of [`build`]: the library and whether the compiler ran.
pub struct Built {
    pub lib: Arc<Loaded>,
    pub compiled: bool,
    pub key: String,
    /// How long the C compiler ran (`None`: it did not, the library came from the cache).
    pub compile_time: Option<std::time::Duration>,
}

/// Libraries loaded by this process, by key (a live one is reused without touching the disk; the
/// dynamic loader would hand back the old mapping for the same path anyway).
fn live() -> &'static Mutex<HashMap<String, Weak<Loaded>>> {
    static LIVE: OnceLock<Mutex<HashMap<String, Weak<Loaded>>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Appends the validation symbol to `code` (its value: the hash of the code before it).
pub fn finish_source(code: &str) -> String {
    let h = sha256_hex(code.as_bytes());
    format!("{code}\nconst char {VALIDATION_SYMBOL}[] = \"{h}\";\n")
}

pub(crate) fn expected_validation(source: &str) -> String {
    let cut = source
        .rfind(&format!("\nconst char {VALIDATION_SYMBOL}"))
        .unwrap_or(source.len());
    sha256_hex(&source.as_bytes()[..cut])
}

mod prebuilt;

pub use prebuilt::{prebuilt_name, with_prebuilt, Prebuilt};

/// Compiles (or loads from the cache) `source`, which must come from [`finish_source`].
pub fn build(source: &str, dir: &Path) -> Result<Built, InductorError> {
    if let Some(built) = prebuilt::load(source) {
        return built;
    }
    let mut h = Sha256::new();
    h.update(source.as_bytes());
    h.update(CFLAGS.join(" ").as_bytes());
    h.update(compiler_id().as_bytes());
    h.update(cpu_id().as_bytes());
    let key: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let key = key[..40].to_string();
    let cached = live()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .and_then(Weak::upgrade);
    if let Some(l) = cached {
        return Ok(Built {
            lib: l,
            compiled: false,
            key,
            compile_time: None,
        });
    }
    std::fs::create_dir_all(dir).map_err(|e| InductorError::io(dir, e))?;
    let so = dir.join(format!("{key}.so"));
    let meta = dir.join(format!("{key}.meta"));
    let want = expected_validation(source);
    if let Some(l) = try_load(&so, &meta, &want) {
        let l = Arc::new(l);
        remember(&key, &l);
        return Ok(Built {
            lib: l,
            compiled: false,
            key,
            compile_time: None,
        });
    }
    tracing::debug!(target: "torchferro::inductor", "cache miss {key}: compiling");
    let started = std::time::Instant::now();
    compile(source, dir, &key, &so, &meta)?;
    let compile_time = Some(started.elapsed());
    let l = try_load(&so, &meta, &want).ok_or_else(|| InductorError::Load {
        path: so.clone(),
        msg: "freshly built library failed validation".into(),
    })?;
    let l = Arc::new(l);
    remember(&key, &l);
    Ok(Built {
        lib: l,
        compiled: true,
        key,
        compile_time,
    })
}

fn remember(key: &str, l: &Arc<Loaded>) {
    live()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key.to_string(), Arc::downgrade(l));
}

/// Loads a cache entry if it is complete and intact.
fn try_load(so: &Path, meta: &Path, want: &str) -> Option<Loaded> {
    let m = std::fs::read_to_string(meta).ok()?;
    let (len, hash) = m.trim().split_once(' ')?;
    let bytes = std::fs::read(so).ok()?;
    if bytes.len().to_string() != len || sha256_hex(&bytes) != hash {
        tracing::warn!(target: "torchferro::inductor", "discarding corrupt cache entry {}", so.display());
        return None;
    }
    // SAFETY: the file is one we built (its checksum matches what we recorded); loading runs no
    // constructors of ours.
    let lib = unsafe { libloading::Library::new(so) }.ok()?;
    // SAFETY: the symbol is a NUL-terminated char array in the generated source.
    let ok = unsafe {
        let sym: libloading::Symbol<*const c_char> = lib.get(VALIDATION_SYMBOL.as_bytes()).ok()?;
        CStr::from_ptr(*sym).to_str().ok() == Some(want)
    };
    if ok {
        pin_openmp_runtime();
    }
    ok.then(|| Loaded {
        lib,
        path: so.to_path_buf(),
        _keep: None,
    })
}

/// Keeps the OpenMP runtime a kernel library brought in loaded for the rest of the process.
///
/// The runtime's worker threads outlive the parallel region that started them and sleep inside
/// the runtime's code. When the last kernel library that linked the runtime is unloaded (its
/// compiled graph dropped) and nothing else holds the runtime (a process without torch, such as
/// the Rust tests), `dlclose` unmaps it under those threads, which then crash. Marking the
/// runtime `RTLD_NODELETE` once, as soon as one is loaded, keeps kernels unloadable while the
/// runtime stays.
pub(crate) fn pin_openmp_runtime() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static PINNED: AtomicBool = AtomicBool::new(false);
    if PINNED.load(Ordering::Relaxed) {
        return;
    }
    // glibc's values (dlfcn.h); libloading exports only the portable flags.
    const RTLD_NOLOAD: std::os::raw::c_int = 0x4;
    const RTLD_NODELETE: std::os::raw::c_int = 0x1000;
    let flags = libloading::os::unix::RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE;
    for name in ["libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so"] {
        // SAFETY: RTLD_NOLOAD only looks up a library that is already loaded (no constructors
        // run); RTLD_NODELETE then marks it never to be unloaded. Dropping the handle only
        // decrements the reference count.
        if unsafe { libloading::os::unix::Library::open(Some(name), flags) }.is_ok() {
            PINNED.store(true, Ordering::Relaxed);
        }
    }
}

/// Whether the compiler can link glibc's vector math library (probed once per process).
fn has_mvec() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        let dir = std::env::temp_dir();
        let unique = format!("tf_mvec_probe_{}", std::process::id());
        let src = dir.join(format!("{unique}.c"));
        let so = dir.join(format!("{unique}.so"));
        let ok = std::fs::write(
            &src,
            "#pragma omp declare simd notinbranch\nextern float expf(float);\n\
             void f(float *a) { for (int i = 0; i < 64; i++) a[i] = expf(a[i]); }\n",
        )
        .is_ok()
            && Command::new(compiler())
                .args(CFLAGS)
                .arg("-o")
                .arg(&so)
                .arg(&src)
                .arg("-lmvec")
                .arg("-lm")
                .output()
                .is_ok_and(|o| o.status.success());
        let _ = std::fs::remove_file(&src);
        let _ = std::fs::remove_file(&so);
        ok
    })
}

fn compile(
    source: &str,
    dir: &Path,
    key: &str,
    so: &Path,
    meta: &Path,
) -> Result<(), InductorError> {
    let unique = format!(
        "{}.{:?}.{}",
        std::process::id(),
        std::thread::current().id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    )
    .replace(|c: char| !c.is_ascii_alphanumeric() && c != '.', "");
    let src = dir.join(format!("{key}.c"));
    let tmp_src = dir.join(format!("{key}.{unique}.c"));
    std::fs::write(&tmp_src, source).map_err(|e| InductorError::io(&tmp_src, e))?;
    let tmp_so = dir.join(format!("{key}.{unique}.so.tmp"));
    let run = |mvec: bool| -> Result<(Command, std::process::Output), InductorError> {
        let mut cmd = Command::new(compiler());
        cmd.args(CFLAGS);
        if !mvec {
            cmd.arg("-DTF_NO_MVEC");
        }
        cmd.arg("-o").arg(&tmp_so).arg(&tmp_src);
        if mvec {
            cmd.arg("-lmvec");
        }
        cmd.arg("-lm");
        CC_INVOCATIONS.fetch_add(1, Ordering::SeqCst);
        let out = cmd.output().map_err(|e| InductorError::io(compiler(), e))?;
        Ok((cmd, out))
    };
    // Without glibc's libmvec (another libc, an old glibc) the kernels call scalar libm.
    let (cmd, out) = match run(true)? {
        (_, out) if !out.status.success() && !has_mvec() => run(false)?,
        r => r,
    };
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp_so);
        let _ = std::fs::remove_file(&tmp_src);
        return Err(InductorError::Compile {
            cmd: format!("{cmd:?}"),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    let bytes = std::fs::read(&tmp_so).map_err(|e| InductorError::io(&tmp_so, e))?;
    let tmp_meta = dir.join(format!("{key}.{unique}.meta.tmp"));
    std::fs::write(
        &tmp_meta,
        format!("{} {}\n", bytes.len(), sha256_hex(&bytes)),
    )
    .map_err(|e| InductorError::io(&tmp_meta, e))?;
    // The source is kept beside the entry for people reading generated code.
    std::fs::rename(&tmp_src, &src).map_err(|e| InductorError::io(&src, e))?;
    std::fs::rename(&tmp_so, so).map_err(|e| InductorError::io(so, e))?;
    std::fs::rename(&tmp_meta, meta).map_err(|e| InductorError::io(meta, e))?;
    Ok(())
}
