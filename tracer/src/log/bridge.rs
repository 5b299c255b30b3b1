//! The bridge from Rust `tracing` to Python `logging`: the one way Rust code logs.
//!
//! Every crate of the extension logs with `tracing` under a `torchferro::<name>` target; this
//! subscriber, installed once when `torchferro._C` loads, hands each event to
//! `logging.getLogger("torchferro.<name>")`. Python's configuration of the `torchferro` logger
//! tree (levels, handlers, filters, `propagate`, `logging.disable`) then decides everything, as
//! it would for a Python library, and `TORCHFERRO_LOGS`/`set_logs` need no Rust-side state.
//!
//! Cost: events are only emitted while compiling (never on a cache hit). For each one,
//! `enabled` asks `Logger.isEnabledFor`, which Python answers from a per-logger cache, before the
//! message is formatted; so a disabled event costs one Python call and no formatting.

use std::cell::Cell;
use std::fmt::Write as _;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use tracing::field::{Field, Visit};
use tracing::span;
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// Crates of ours whose events are forwarded even when their target is the default module path
/// (`inductor::cache` becomes `torchferro.inductor.cache`).
const OUR_CRATES: &[&str] = &["tracer", "inductor", "fx", "bytecode", "_C"];

/// Installs the bridge as the process-wide `tracing` subscriber. Later calls, or another
/// subscriber already installed (an embedding application's own), leave things as they are.
pub fn install() -> bool {
    tracing::subscriber::set_global_default(PyLoggingBridge).is_ok()
}

/// Python's number for a `tracing` level (`logging.ERROR` … `logging.DEBUG`, and 5 for TRACE,
/// which `logging` has no name for).
pub fn python_level(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        Level::DEBUG => 10,
        Level::TRACE => 5,
    }
}

/// The Python logger name for a target: `torchferro::recompiles` → `torchferro.recompiles`;
/// `None` for targets that are not ours.
pub fn logger_name(target: &str) -> Option<String> {
    let first = target.split("::").next().unwrap_or(target);
    if first == "torchferro" {
        Some(target.replace("::", "."))
    } else if OUR_CRATES.contains(&first) {
        Some(format!("torchferro.{}", target.replace("::", ".")))
    } else {
        None
    }
}

thread_local! {
    /// Set while this thread is inside Python logging on the bridge's behalf: an event raised
    /// from there (a handler that calls compiled code, say) is dropped instead of recursing.
    static FORWARDING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with [`FORWARDING`] set, unless it already is.
fn guarded<R>(f: impl FnOnce() -> R) -> Option<R> {
    if FORWARDING.with(|c| c.replace(true)) {
        return None;
    }
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            FORWARDING.with(|c| c.set(false));
        }
    }
    let _reset = Reset;
    Some(f())
}

fn get_logger<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    static GET_LOGGER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = GET_LOGGER.get_or_try_init(py, || {
        py.import("logging")
            .and_then(|l| l.getattr("getLogger"))
            .map(Bound::unbind)
    })?;
    f.bind(py).call1((name,))
}

/// The `tracing` subscriber that forwards events to Python `logging`. Spans are not recorded:
/// compile phases are reported as events (target `torchferro::perf`).
pub struct PyLoggingBridge;

impl Subscriber for PyLoggingBridge {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if meta.is_event() && logger_name(meta.target()).is_some() {
            // Python's configuration can change at any time: ask on every event.
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        if !meta.is_event() {
            return false;
        }
        let Some(name) = logger_name(meta.target()) else {
            return false;
        };
        let level = python_level(meta.level());
        guarded(|| {
            Python::try_attach(|py| {
                get_logger(py, &name)
                    .and_then(|lg| lg.call_method1(intern!(py, "isEnabledFor"), (level,)))
                    .and_then(|r| r.is_truthy())
                    // A broken logging setup must not break compiling: log nothing. An
                    // interrupt that landed in the logging code is kept for the user.
                    .unwrap_or_else(|e| {
                        crate::mode::keep_interrupt(py, e);
                        false
                    })
            })
            .unwrap_or(false)
        })
        .unwrap_or(false)
    }

    fn new_span(&self, _span: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _span: &span::Id, _values: &span::Record<'_>) {}

    fn record_follows_from(&self, _span: &span::Id, _follows: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let meta = event.metadata();
        let Some(name) = logger_name(meta.target()) else {
            return;
        };
        let mut text = Text::default();
        event.record(&mut text);
        let msg = text.finish();
        let level = python_level(meta.level());
        guarded(|| {
            Python::try_attach(|py| {
                let logger = match get_logger(py, &name) {
                    Ok(l) => l,
                    Err(e) => {
                        if let Some(e) = crate::mode::keep_interrupt(py, e) {
                            e.write_unraisable(py, None);
                        }
                        return;
                    }
                };
                if let Err(e) = logger.call_method1(intern!(py, "log"), (level, msg)) {
                    // A handler raised (the standard ones report their own errors): report it
                    // the way Python reports errors nobody can catch, and carry on compiling;
                    // an interrupt is the user's and is kept for them.
                    if let Some(e) = crate::mode::keep_interrupt(py, e) {
                        e.write_unraisable(py, Some(&logger));
                    }
                }
            })
        });
    }

    fn enter(&self, _span: &span::Id) {}

    fn exit(&self, _span: &span::Id) {}
}

/// An event's text: its `message` field, then any other fields as `name=value`.
#[derive(Default)]
struct Text {
    message: String,
    fields: String,
}

impl Text {
    fn finish(self) -> String {
        if self.fields.is_empty() {
            self.message
        } else if self.message.is_empty() {
            self.fields
        } else {
            format!("{} {}", self.message, self.fields)
        }
    }

    fn field(&mut self, field: &Field, value: std::fmt::Arguments<'_>) {
        if field.name() == "message" {
            let _ = self.message.write_fmt(value);
        } else {
            if !self.fields.is_empty() {
                self.fields.push(' ');
            }
            let _ = write!(self.fields, "{}={}", field.name(), value);
        }
    }
}

impl Visit for Text {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.field(field, format_args!("{value}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.field(field, format_args!("{value:?}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_map_to_the_torchferro_logger_tree() {
        assert_eq!(
            logger_name("torchferro::recompiles").as_deref(),
            Some("torchferro.recompiles")
        );
        assert_eq!(logger_name("torchferro").as_deref(), Some("torchferro"));
        assert_eq!(
            logger_name("inductor::cache").as_deref(),
            Some("torchferro.inductor.cache")
        );
        assert_eq!(logger_name("hyper::client"), None);
        assert_eq!(logger_name("torchferrox"), None);
    }

    #[test]
    fn levels_are_pythons() {
        assert_eq!(
            [
                Level::ERROR,
                Level::WARN,
                Level::INFO,
                Level::DEBUG,
                Level::TRACE
            ]
            .map(|l| python_level(&l)),
            [40, 30, 20, 10, 5]
        );
    }
}
