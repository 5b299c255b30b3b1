//! Kernels of a precompiled cache (`torchferro.compiler.precompile`): a loading process takes
//! every library from the bytes its caller verified against the cache's manifest, and never runs
//! the compiler. A source with no library among them is an error, not a compile.
//!
//! What is opened is exactly what was hashed: the verified bytes are written to a sealed
//! anonymous file (`memfd_create`, sealed against writes and resizes) and the dynamic loader
//! opens that, so a cache file swapped or rewritten between the hash check and the open (a
//! concurrent writer, an attacker) cannot change the code that runs. Where memfd is missing the
//! bytes go to a fresh file in a private (0700) temporary directory, removed once loaded.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::raw::c_char;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use super::{expected_validation, pin_openmp_runtime, Built, Loaded};
use crate::codegen::VALIDATION_SYMBOL;
use crate::InductorError;

/// Kernel libraries of a precompiled cache, by file name (`<source hash>.so`, see
/// [`prebuilt_name`]), holding bytes the caller already checked against the manifest.
#[derive(Default)]
pub struct Prebuilt {
    libs: HashMap<String, Vec<u8>>,
}

impl Prebuilt {
    pub fn new(libs: impl IntoIterator<Item = (String, Vec<u8>)>) -> Prebuilt {
        Prebuilt {
            libs: libs.into_iter().collect(),
        }
    }
}

thread_local! {
    static PREBUILT: RefCell<Option<Rc<Prebuilt>>> = const { RefCell::new(None) };
}

/// Runs `f` with [`super::build`] taking libraries only from `libs`, never running the compiler.
pub fn with_prebuilt<R>(libs: Prebuilt, f: impl FnOnce() -> R) -> R {
    let prev = PREBUILT.with(|p| p.replace(Some(Rc::new(libs))));
    let r = f();
    PREBUILT.with(|p| *p.borrow_mut() = prev);
    r
}

/// The name a library of `source` has in a precompiled cache (see [`with_prebuilt`]).
pub fn prebuilt_name(source: &str) -> String {
    format!("{}.so", expected_validation(source))
}

/// `Some` inside [`with_prebuilt`]: the library for `source` from the verified bytes.
pub(super) fn load(source: &str) -> Option<Result<Built, InductorError>> {
    let pre = PREBUILT.with(|p| p.borrow().clone())?;
    Some(load_from(&pre, source))
}

fn load_error(name: &str, msg: impl Into<String>) -> InductorError {
    InductorError::Load {
        path: PathBuf::from(name),
        msg: msg.into(),
    }
}

fn load_from(pre: &Prebuilt, source: &str) -> Result<Built, InductorError> {
    let want = expected_validation(source);
    let name = format!("{want}.so");
    let Some(bytes) = pre.libs.get(&name) else {
        return Err(load_error(
            &name,
            "the precompiled cache has no kernels for this graph",
        ));
    };
    let (lib, path, keep) = open_bytes(bytes).map_err(|e| load_error(&name, e))?;
    // SAFETY: the symbol is a NUL-terminated char array in the generated source.
    let ok = unsafe {
        lib.get::<*const c_char>(VALIDATION_SYMBOL.as_bytes())
            .ok()
            .is_some_and(|sym| CStr::from_ptr(*sym).to_str().ok() == Some(want.as_str()))
    };
    if !ok {
        return Err(load_error(
            &name,
            "the library was not built from this graph's source",
        ));
    }
    pin_openmp_runtime();
    Ok(Built {
        lib: Arc::new(Loaded {
            lib,
            path,
            _keep: keep,
        }),
        compiled: false,
        key: want,
        compile_time: None,
    })
}

/// Opens `bytes` as a shared library; returns it, the path it was opened by, and the file that
/// must stay open while it is loaded (the dynamic loader recognizes a library it already holds
/// by that path, so `/proc/self/fd/N` must not name another library while this one lives).
fn open_bytes(bytes: &[u8]) -> Result<(libloading::Library, PathBuf, Option<File>), String> {
    if let Some(file) = sealed_memfd(bytes)? {
        let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        // SAFETY: the bytes were verified against the cache's manifest by the caller and can no
        // longer change (sealed); loading runs no constructors of ours.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| e.to_string())?;
        return Ok((lib, path, Some(file)));
    }
    let dir = private_dir()?;
    let path = dir.join("kernels.so");
    let opened = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| e.to_string())?;
        f.write_all(bytes).map_err(|e| e.to_string())?;
        drop(f);
        // SAFETY: as above; the file lies in a directory only this user can enter, written
        // just now from the verified bytes.
        unsafe { libloading::Library::new(&path) }.map_err(|e| e.to_string())
    })();
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(&dir);
    Ok((opened?, path, None))
}

/// The bytes in an anonymous file sealed against any change; `None` where memfd is missing.
fn sealed_memfd(bytes: &[u8]) -> Result<Option<File>, String> {
    let name = CString::new("torchferro-precompiled-kernels").expect("no NUL");
    // SAFETY: `name` is NUL-terminated and outlives the call.
    let fd =
        unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Ok(None);
    }
    // SAFETY: `fd` was just returned by memfd_create; nothing else owns it.
    let mut file = unsafe { File::from_raw_fd(fd) };
    file.write_all(bytes).map_err(|e| e.to_string())?;
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE | libc::F_SEAL_SEAL;
    // SAFETY: `fd` is open (owned by `file`); F_ADD_SEALS takes an int argument.
    if unsafe { libc::fcntl(fd, libc::F_ADD_SEALS, seals) } != 0 {
        return Err(format!(
            "could not seal the kernels' copy: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(Some(file))
}

/// A fresh directory under the temporary directory that only this user can enter.
fn private_dir() -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for i in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!(
            "torchferro-kernels-{}-{nanos}-{i}",
            std::process::id()
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create a private directory: {e}")),
        }
    }
    Err("cannot create a private directory".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_without_its_library_is_an_error_not_a_compile() {
        let r = with_prebuilt(Prebuilt::default(), || {
            super::super::build("int x;", std::path::Path::new("/nonexistent"))
        });
        let Err(InductorError::Load { msg, .. }) = r else {
            panic!("expected a load error")
        };
        assert!(msg.contains("no kernels for this graph"), "{msg}");
    }

    #[test]
    fn memfd_copy_is_sealed() {
        let Some(mut f) = sealed_memfd(b"abc").unwrap() else {
            return; // no memfd here: the private-directory path is used instead
        };
        assert!(
            f.write_all(b"more").is_err(),
            "a sealed copy must refuse writes"
        );
    }
}
