//! The on-disk kernel cache: warm loads skip the compiler (also in a new process), corrupt
//! entries are detected and rebuilt. One test per binary run order, so the process-wide compiler
//! counter is not disturbed by other tests.

mod common;

use common::*;
use fx::{Arg, DType, Graph};
use inductor::testing::VecHost;
use inductor::{cache, compile, Options};

fn graph() -> Graph {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[16, 24]);
    let s = call(&mut g, m("tanh"), vec![n(x)], vec![]);
    let r = call(
        &mut g,
        f("operator.mul"),
        vec![n(s), Arg::Float(3.0)],
        vec![],
    );
    let t = call(&mut g, f("torch.softmax"), vec![n(r), Arg::Int(-1)], vec![]);
    g.output(vec![n(t)]);
    g
}

fn run_and_check(c: &inductor::CompiledGraph, g: &Graph) {
    let mut host = VecHost::new();
    let ins = inputs_for(&mut host, g, 5);
    let got = c.run(&mut host, &ins).unwrap();
    let want = inductor::interp::run(c.ir(), &mut host, &ins).unwrap();
    assert_close(&got[0].to_f64(), &want[0].to_f64(), c);
}

fn entry(dir: &std::path::Path, ext: &str) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == ext))
        .unwrap()
}

/// Run by `disk_cache_round_trip` in a child process with `TORCHFERRO_CACHE_DIR` set.
#[test]
#[ignore]
fn child_loads_warm_entry() {
    if std::env::var_os("TORCHFERRO_CACHE_DIR").is_none() {
        return;
    }
    let g = graph();
    let c = compile(&g, &Options::default()).unwrap();
    assert!(
        !c.compiler_ran(),
        "a warm entry in a new process must not run cc"
    );
    assert_eq!(cache::compiler_invocations(), 0);
    run_and_check(&c, &g);
}

#[test]
fn disk_cache_round_trip() {
    let dir = std::env::temp_dir().join(format!("torchferro-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = Options {
        cache_dir: dir.clone(),
        ..Options::default()
    };
    let g = graph();

    let before = cache::compiler_invocations();
    let c = compile(&g, &opts).unwrap();
    assert!(c.compiler_ran());
    assert_eq!(cache::compiler_invocations(), before + 1);
    run_and_check(&c, &g);
    // Same process, library still loaded: no disk access needed, certainly no cc.
    let c2 = compile(&g, &opts).unwrap();
    assert!(!c2.compiler_ran());
    drop((c, c2));
    // Same process, library unloaded: loaded from disk.
    let c3 = compile(&g, &opts).unwrap();
    assert!(!c3.compiler_ran());
    assert_eq!(cache::compiler_invocations(), before + 1);
    drop(c3);

    // A new process finds the entry through TORCHFERRO_CACHE_DIR.
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_loads_warm_entry",
            "--nocapture",
        ])
        .env("TORCHFERRO_CACHE_DIR", &dir)
        .status()
        .unwrap();
    assert!(status.success(), "child process failed");

    // Truncated library: detected, rebuilt, still right.
    let so = entry(&dir, "so");
    let bytes = std::fs::read(&so).unwrap();
    std::fs::write(&so, &bytes[..bytes.len() / 2]).unwrap();
    let c4 = compile(&g, &opts).unwrap();
    assert!(c4.compiler_ran(), "a truncated entry must be rebuilt");
    run_and_check(&c4, &g);
    drop(c4);

    // Same length, flipped bytes: the checksum catches it.
    let mut bytes = std::fs::read(&so).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid..mid + 64].iter_mut().for_each(|b| *b ^= 0xff);
    std::fs::write(&so, &bytes).unwrap();
    let c5 = compile(&g, &opts).unwrap();
    assert!(c5.compiler_ran(), "a corrupt entry must be rebuilt");
    run_and_check(&c5, &g);
    drop(c5);

    // Missing metadata (a crash between writing the library and its checksum): rebuilt.
    std::fs::remove_file(entry(&dir, "meta")).unwrap();
    let c6 = compile(&g, &opts).unwrap();
    assert!(c6.compiler_ran());
    run_and_check(&c6, &g);
    assert_eq!(cache::compiler_invocations(), before + 4);
    let _ = std::fs::remove_dir_all(&dir);
}
