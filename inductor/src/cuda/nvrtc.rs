//! NVRTC through cudarc: finding the library and compiling one source to a cubin.
//!
//! cudarc loads NVRTC by name (`libnvrtc.so`, ..., `libnvrtc.so.13`) from the library path,
//! which torch's CUDA wheel is not on (it ships `nvidia/cu13/lib/libnvrtc.so.13` inside
//! site-packages and loads it by its own RPATH). So the library is found here first and opened
//! by its full path; the dynamic loader then hands cudarc that same library when it asks for
//! the soname `libnvrtc.so.13` (glibc matches an already loaded object's soname). The same goes
//! for the builtins library NVRTC opens by soname when it compiles. The unsafe calls of this crate's CUDA support are
//! all in this file.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cudarc::nvrtc::{result, sys};

use crate::InductorError;

/// The soname torch's cu130 wheels ship.
const SONAME: &str = "libnvrtc.so.13";
/// The library NVRTC opens by name when it compiles (the builtin headers), shipped beside it.
const BUILTINS: &str = "libnvrtc-builtins.so.13.0";

/// Where NVRTC was loaded from and its version, once per process.
#[derive(Clone, Debug)]
pub struct Nvrtc {
    /// The file opened, or the soname when it came from the library path.
    pub path: PathBuf,
    pub version: (i32, i32),
}

/// Candidate files, in order: `$TORCHFERRO_NVRTC`, then `nvidia/cu13/lib/` under each of
/// `site_dirs` (the Python process's `sys.path`) and under `$VIRTUAL_ENV`'s site-packages.
fn candidates(site_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os("TORCHFERRO_NVRTC").filter(|p| !p.is_empty()) {
        out.push(PathBuf::from(p));
    }
    let mut dirs: Vec<PathBuf> = site_dirs.to_vec();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        if let Ok(rd) = std::fs::read_dir(Path::new(&venv).join("lib")) {
            dirs.extend(rd.flatten().map(|e| e.path().join("site-packages")));
        }
    }
    for d in dirs {
        out.push(d.join("nvidia").join("cu13").join("lib").join(SONAME));
    }
    out
}

/// Loads NVRTC (once per process; later calls return the first answer, whatever `site_dirs`).
pub fn load(site_dirs: &[PathBuf]) -> Result<&'static Nvrtc, InductorError> {
    static LOADED: OnceLock<Result<Nvrtc, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| load_uncached(site_dirs))
        .as_ref()
        .map_err(|e| InductorError::NoNvrtc(e.clone()))
}

fn load_uncached(site_dirs: &[PathBuf]) -> Result<Nvrtc, String> {
    let tried = candidates(site_dirs);
    let mut found = None;
    for c in &tried {
        if !c.is_file() {
            continue;
        }
        // NVRTC opens its builtins by soname, which is not on the library path either: opened
        // here by full path first, the loader finds it loaded. A missing one shows as
        // NVRTC's own error when it compiles.
        let builtins = c.with_file_name(BUILTINS);
        if builtins.is_file() {
            // SAFETY: as below; the builtins library only holds NVRTC's header data.
            if let Ok(lib) = unsafe { libloading::Library::new(&builtins) } {
                std::mem::forget(lib);
            }
        }
        // SAFETY: libnvrtc's initializers only set up its own state. The handle is leaked on
        // purpose: cudarc's handle (by soname) then refers to this mapping, which must stay.
        match unsafe { libloading::Library::new(c) } {
            Ok(lib) => {
                std::mem::forget(lib);
                found = Some(c.clone());
                break;
            }
            Err(e) => tracing::debug!(target: "torchferro::inductor", "{}: {e}", c.display()),
        }
    }
    // SAFETY: probing opens the library by name and closes it again; no symbol is called.
    if found.is_none() && !unsafe { sys::is_culib_present() } {
        return Err(format!(
            "looked for {SONAME} in {:?} and on the library path",
            tried
        ));
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (above), and nvrtcVersion writes two ints through the pointers.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcVersion failed: {status:?}"));
    }
    Ok(Nvrtc {
        path: found.unwrap_or_else(|| PathBuf::from(SONAME)),
        version: (major, minor),
    })
}

/// A compiled cubin and how long NVRTC took.
pub struct Compiled {
    pub cubin: Vec<u8>,
    pub time: Duration,
}

/// Compiles `source` with `options` (NVRTC must be [`load`]ed) and returns the cubin.
/// NVRTC compiles started in this process ([`compile`] calls; cache hits are not counted).
static COMPILES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many sources this process has handed to NVRTC (tests count one compile for every size
/// of a graph with symbolic sizes).
pub fn compiles() -> u64 {
    COMPILES.load(std::sync::atomic::Ordering::Relaxed)
}

pub fn compile(source: &str, options: &[String]) -> Result<Compiled, InductorError> {
    COMPILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let started = Instant::now();
    let src = CString::new(source).map_err(|_| InductorError::Nvrtc {
        status: "source has a NUL byte".into(),
        log: String::new(),
    })?;
    let err = |status: String, log: String| InductorError::Nvrtc { status, log };
    let prog = result::create_program(&src, Some(c"torchferro.cu"))
        .map_err(|e| err(format!("{e:?}"), String::new()))?;
    // SAFETY: `prog` was created above and is destroyed once, below, after its last use; `src`
    // outlives it.
    let out = unsafe {
        let compiled = result::compile_program(prog, options);
        let log = result::get_program_log(prog)
            .map(|l| {
                let bytes: Vec<u8> = l.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .unwrap_or_default();
        let cubin = match compiled {
            Err(e) => Err(err(format!("{e:?}"), log)),
            Ok(()) => cubin_of(prog).map_err(|s| err(s, log)),
        };
        let _ = result::destroy_program(prog);
        cubin
    }?;
    Ok(Compiled {
        cubin: out,
        time: started.elapsed(),
    })
}

/// The cubin of a compiled program.
///
/// # Safety
/// `prog` is a live, successfully compiled program.
unsafe fn cubin_of(prog: sys::nvrtcProgram) -> Result<Vec<u8>, String> {
    let mut size = 0usize;
    // SAFETY: the caller's contract; the size is written through the pointer.
    let s = unsafe { sys::nvrtcGetCUBINSize(prog, &mut size) };
    if s != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcGetCUBINSize: {s:?}"));
    }
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` holds the `size` bytes NVRTC reported for this program's cubin.
    let s = unsafe { sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr().cast()) };
    if s != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcGetCUBIN: {s:?}"));
    }
    Ok(buf)
}
