//! The phase times `compile` reports with its result: the C compiler's time only when it ran,
//! the cache lookup and load whenever there were kernels.

mod common;

use common::*;
use fx::{Arg, DType, Graph};
use inductor::{compile, Options};

fn graph(scale: f64) -> Graph {
    let mut g = Graph::new();
    let x = input(&mut g, "x", DType::Float32, &[8, 12]);
    let s = call(&mut g, m("sigmoid"), vec![n(x)], vec![]);
    let r = call(
        &mut g,
        f("operator.mul"),
        vec![n(s), Arg::Float(scale)],
        vec![],
    );
    g.output(vec![n(r)]);
    g
}

fn names(c: &inductor::CompiledGraph) -> Vec<&'static str> {
    c.phase_times()
        .phases()
        .into_iter()
        .map(|(n, _)| n)
        .collect()
}

#[test]
fn cold_then_warm() {
    let dir = std::env::temp_dir().join(format!("torchferro-phases-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = Options {
        cache_dir: dir.clone(),
        ..Options::default()
    };
    // A constant no other test uses: the source, hence the cache key, is new to this process.
    let g = graph(1.0 + f64::from(std::process::id() % 9973) / 16384.0);
    let cold = compile(&g, &opts).unwrap();
    assert!(cold.compiler_ran());
    assert_eq!(
        names(&cold),
        [
            "lowering",
            "scheduling",
            "codegen",
            "c_compile",
            "cache_load"
        ]
    );
    let t = cold.phase_times();
    assert!(t.c_compile.unwrap() > std::time::Duration::ZERO);
    drop(cold);
    // Unloaded, then found on disk: no compiler, a cache load.
    let warm = compile(&g, &opts).unwrap();
    assert!(!warm.compiler_ran());
    assert_eq!(
        names(&warm),
        ["lowering", "scheduling", "codegen", "cache_load"]
    );
    assert!(warm.phase_times().c_compile.is_none());
    drop(warm);
    let _ = std::fs::remove_dir_all(&dir);
}
