//! Running an inlined comprehension (`interp::comprehension::Region`) as a whole in the
//! transformed code of a graph break: its own bytecode, copied with its cleanup handlers.

use bytecode::{Assembler, RawCode};

use crate::code::CodeInfo;
use crate::error::TraceError;
use crate::interp::comprehension::Region;

use super::asm_err;

/// Appends region `r` of `info`'s code. The cleanup blocks go first, jumped over (each ends in
/// `RERAISE`), so the region's last instruction falls through to whatever is emitted next.
/// `shift` moves the exception-table depths (the copy runs over another stack), and `local`
/// maps an original local slot to the transformed code's slot for it. With `protected`, the
/// caller's exception range around the copy stands for the enclosing block's handler.
pub(super) fn emit(
    asm: &mut Assembler,
    info: &CodeInfo,
    r: &Region,
    shift: i64,
    protected: bool,
    local: impl Fn(u32) -> u32,
) -> Result<(), TraceError> {
    let raw = RawCode {
        code: &info.co_code,
        exception_table: &info.exception_table,
        line_table: &info.line_table,
        first_lineno: info.firstlineno as i32,
    };
    let over = asm.new_label();
    if !r.cleanups.is_empty() {
        asm.emit_jump("JUMP_FORWARD", over).map_err(asm_err)?;
    }
    let mut segments = r.cleanups.clone();
    segments.push(r.start..r.end);
    let base = asm.instructions().len();
    let labels = asm
        .append_code_segments(raw, &segments, shift, protected)
        .map_err(asm_err)?;
    if !r.cleanups.is_empty() {
        asm.bind_to(over, labels[r.start]).map_err(asm_err)?;
    }
    asm.map_args(base, |op, arg| {
        if matches!(
            op.name(),
            "LOAD_FAST" | "LOAD_FAST_CHECK" | "LOAD_FAST_AND_CLEAR" | "STORE_FAST" | "DELETE_FAST"
        ) {
            local(arg)
        } else {
            arg
        }
    });
    Ok(())
}
