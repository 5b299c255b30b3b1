//! The instructions the symbolic interpreter runs: decoded bytecode with each opcode mapped to
//! the operation it performs, so one interpreter serves 3.11 and 3.12.

use pyo3::prelude::*;

use crate::error::TraceError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Nop,
    LoadFast,
    LoadFastAndClear,
    StoreFast,
    DeleteFast,
    LoadDeref,
    LoadClosure,
    MakeCell,
    MakeFunction,
    StoreDeref,
    LoadConst,
    ReturnConst,
    LoadGlobal,
    LoadAttr,
    LoadMethod,
    PushNull,
    PopTop,
    Copy,
    Swap,
    KwNames,
    Precall,
    Call,
    CallFunctionEx,
    BinaryOp,
    CompareOp,
    IsOp,
    ContainsOp,
    UnaryNegative,
    UnaryPositive,
    UnaryInvert,
    UnaryNot,
    BinarySubscr,
    StoreSubscr,
    BinarySlice,
    /// 3.12: `container[start:stop] = value`.
    StoreSlice,
    /// 3.12: `super().name` / `super(cls, obj).name` in one instruction.
    LoadSuperAttr,
    BuildSlice,
    BuildTuple,
    BuildList,
    BuildMap,
    BuildConstKeyMap,
    ListAppend,
    ListExtend,
    ListToTuple,
    DictUpdate,
    DictMerge,
    UnpackSequence,
    UnpackEx,
    GetIter,
    ForIter,
    EndFor,
    Jump,
    PopJumpIfTrue,
    PopJumpIfFalse,
    PopJumpIfNone,
    PopJumpIfNotNone,
    JumpIfTrueOrPop,
    JumpIfFalseOrPop,
    ReturnValue,
    FormatValue,
    BeforeWith,
    BuildString,
    ImportName,
    ImportFrom,
    BuildSet,
    SetAdd,
    SetUpdate,
    MapAdd,
    ReturnGenerator,
    YieldValue,
    /// Anything else: tracing stops here with the instruction's name as the reason.
    Unsupported,
}

#[derive(Clone, Debug)]
pub struct Ins {
    pub op: Op,
    pub name: String,
    pub arg: u32,
    /// Byte offset in `co_code`.
    pub offset: usize,
    /// Index of the jump target in the instruction list.
    pub target: Option<usize>,
    pub line: Option<u32>,
    /// The `co_names` index the instruction names, its version's flag bits removed
    /// (`LOAD_GLOBAL`, `LOAD_ATTR`, `LOAD_SUPER_ATTR`, ...).
    pub name_index: Option<u32>,
    /// It pushes the two call slots (a NULL or a method under the value): `LOAD_GLOBAL` with
    /// its flag, a method load (`LOAD_METHOD`, or `LOAD_ATTR` with its flag on 3.12).
    pub pushes_null: bool,
    /// A `COMPARE_OP`'s comparison.
    pub comparison: Option<bytecode::Comparison>,
    /// A `FOR_ITER`'s continuation once the iterator is exhausted (3.12 skips the `END_FOR`
    /// its jump lands on).
    pub loop_exit: Option<usize>,
}

fn op_of(ins: &bytecode::Instruction) -> Op {
    use bytecode::Intrinsic1;
    // One-argument intrinsics: their own opcodes on 3.11, `CALL_INTRINSIC_1 n` on 3.12.
    match ins.intrinsic_1() {
        Some(Intrinsic1::UnaryPositive) => return Op::UnaryPositive,
        Some(Intrinsic1::ListToTuple) => return Op::ListToTuple,
        Some(_) => return Op::Unsupported,
        None => {}
    }
    match ins.opcode.name() {
        "NOP" | "RESUME" | "CACHE" | "COPY_FREE_VARS" | "EXTENDED_ARG" => Op::Nop,
        "MAKE_CELL" => Op::MakeCell,
        "MAKE_FUNCTION" => Op::MakeFunction,
        "LOAD_FAST" | "LOAD_FAST_CHECK" => Op::LoadFast,
        "LOAD_FAST_AND_CLEAR" => Op::LoadFastAndClear,
        "STORE_FAST" => Op::StoreFast,
        "DELETE_FAST" => Op::DeleteFast,
        "LOAD_DEREF" => Op::LoadDeref,
        "LOAD_CLOSURE" => Op::LoadClosure,
        "STORE_DEREF" => Op::StoreDeref,
        "LOAD_CONST" => Op::LoadConst,
        "RETURN_CONST" => Op::ReturnConst,
        "LOAD_GLOBAL" => Op::LoadGlobal,
        "LOAD_ATTR" => Op::LoadAttr,
        "LOAD_METHOD" => Op::LoadMethod,
        "PUSH_NULL" => Op::PushNull,
        "POP_TOP" => Op::PopTop,
        "COPY" => Op::Copy,
        "SWAP" => Op::Swap,
        "KW_NAMES" => Op::KwNames,
        "PRECALL" => Op::Precall,
        "CALL" => Op::Call,
        "CALL_FUNCTION_EX" => Op::CallFunctionEx,
        "BINARY_OP" => Op::BinaryOp,
        "COMPARE_OP" => Op::CompareOp,
        "IS_OP" => Op::IsOp,
        "CONTAINS_OP" => Op::ContainsOp,
        "UNARY_NEGATIVE" => Op::UnaryNegative,
        "UNARY_POSITIVE" => Op::UnaryPositive,
        "UNARY_INVERT" => Op::UnaryInvert,
        "UNARY_NOT" => Op::UnaryNot,
        "BINARY_SUBSCR" => Op::BinarySubscr,
        "STORE_SUBSCR" => Op::StoreSubscr,
        "BINARY_SLICE" => Op::BinarySlice,
        "STORE_SLICE" => Op::StoreSlice,
        "LOAD_SUPER_ATTR" => Op::LoadSuperAttr,
        "BUILD_SLICE" => Op::BuildSlice,
        "BUILD_TUPLE" => Op::BuildTuple,
        "BUILD_LIST" => Op::BuildList,
        "BUILD_MAP" => Op::BuildMap,
        "BUILD_CONST_KEY_MAP" => Op::BuildConstKeyMap,
        "LIST_APPEND" => Op::ListAppend,
        "LIST_EXTEND" => Op::ListExtend,
        "LIST_TO_TUPLE" => Op::ListToTuple,
        "DICT_UPDATE" => Op::DictUpdate,
        "DICT_MERGE" => Op::DictMerge,
        "UNPACK_SEQUENCE" => Op::UnpackSequence,
        "UNPACK_EX" => Op::UnpackEx,
        "GET_ITER" => Op::GetIter,
        "FOR_ITER" => Op::ForIter,
        "END_FOR" => Op::EndFor,
        "JUMP_FORWARD" | "JUMP_BACKWARD" | "JUMP_BACKWARD_NO_INTERRUPT" | "JUMP" => Op::Jump,
        "POP_JUMP_FORWARD_IF_TRUE" | "POP_JUMP_BACKWARD_IF_TRUE" | "POP_JUMP_IF_TRUE" => {
            Op::PopJumpIfTrue
        }
        "POP_JUMP_FORWARD_IF_FALSE" | "POP_JUMP_BACKWARD_IF_FALSE" | "POP_JUMP_IF_FALSE" => {
            Op::PopJumpIfFalse
        }
        "POP_JUMP_FORWARD_IF_NONE" | "POP_JUMP_BACKWARD_IF_NONE" | "POP_JUMP_IF_NONE" => {
            Op::PopJumpIfNone
        }
        "POP_JUMP_FORWARD_IF_NOT_NONE"
        | "POP_JUMP_BACKWARD_IF_NOT_NONE"
        | "POP_JUMP_IF_NOT_NONE" => Op::PopJumpIfNotNone,
        "JUMP_IF_TRUE_OR_POP" => Op::JumpIfTrueOrPop,
        "JUMP_IF_FALSE_OR_POP" => Op::JumpIfFalseOrPop,
        "RETURN_VALUE" => Op::ReturnValue,
        "FORMAT_VALUE" => Op::FormatValue,
        "BEFORE_WITH" => Op::BeforeWith,
        "BUILD_STRING" => Op::BuildString,
        "IMPORT_NAME" => Op::ImportName,
        "IMPORT_FROM" => Op::ImportFrom,
        "BUILD_SET" => Op::BuildSet,
        "SET_ADD" => Op::SetAdd,
        "SET_UPDATE" => Op::SetUpdate,
        "MAP_ADD" => Op::MapAdd,
        "RETURN_GENERATOR" => Op::ReturnGenerator,
        "YIELD_VALUE" => Op::YieldValue,
        _ => Op::Unsupported,
    }
}

/// Decodes a live code object for the interpreter.
pub fn decode(py: Python<'_>, code: &Bound<'_, PyAny>) -> Result<Vec<Ins>, TraceError> {
    let version = crate::version::current(py)?;
    let co_code: Vec<u8> = code.getattr("co_code")?.extract()?;
    let linetable: Vec<u8> = code.getattr("co_linetable")?.extract()?;
    let firstlineno: i32 = code.getattr("co_firstlineno")?.extract()?;
    let decoded = bytecode::decode(version, &co_code)
        .map_err(|e| TraceError::internal(format!("cannot decode bytecode: {e}")))?;
    let entries = bytecode::line_table::parse(&linetable, firstlineno)
        .map_err(|e| TraceError::internal(format!("cannot parse the line table: {e}")))?;
    let positions = bytecode::line_table::positions_by_unit(&entries);
    Ok(decoded
        .iter()
        .map(|ins| {
            let name = ins.opcode.name().to_string();
            let unit = (ins.opcode_offset() / bytecode::UNIT) as usize;
            let line = positions.get(unit).and_then(|p| p.line).map(|l| l as u32);
            Ins {
                op: op_of(ins),
                arg: ins.arg,
                offset: ins.opcode_offset() as usize,
                target: ins.target,
                line,
                name_index: ins.name_index(),
                pushes_null: ins.pushes_null(),
                comparison: ins.comparison(),
                loop_exit: ins.for_iter_exit(),
                name,
            }
        })
        .collect())
}
