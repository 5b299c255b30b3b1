//! One assembler helper per source-level construct, spelled for the assembler's version.
//!
//! The same construct is written differently by each CPython minor version: a call is
//! `PRECALL n; CALL n` on 3.11 and `CALL n` on 3.12, a method load is `LOAD_METHOD` on 3.11 and
//! `LOAD_ATTR` with its low bit set on 3.12, a slice read is `BUILD_SLICE 2; BINARY_SUBSCR` on
//! 3.11 and `BINARY_SLICE` on 3.12. Code that generates bytecode (the tracer's transformed code
//! and resume functions) calls these helpers and never looks at the version itself; what differs
//! is written once, as data, in [`Spelling`], so a new version is a new table row plus the
//! helpers whose shape really changes.
//!
//! Every helper appends to the [`Assembler`] and returns an error rather than emitting code that
//! would mean something else: a construct a version cannot express ([`Error::NotInVersion`]) is
//! reported, never approximated.
//!
//! The reverse direction, reading a construct's operands out of decoded code without looking at
//! the version, is [`Instruction::name_index`], [`Instruction::pushes_null`],
//! [`Instruction::comparison`], [`Instruction::intrinsic_1`] and [`Instruction::for_iter_exit`].

use crate::assemble::{Assembler, Label};
use crate::decode::Instruction;
use crate::error::{Error, Result};
use crate::opcode::Version;

/// How a version spells the constructs whose bytecode differs between versions: the facts the
/// helpers below consult instead of comparing versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelling {
    /// `PRECALL n` precedes every `CALL n` (3.11).
    pub precall: bool,
    /// A method load is `LOAD_ATTR (name << 1) | 1` (3.12) rather than `LOAD_METHOD name`.
    pub load_attr_method_bit: bool,
    /// `COMPARE_OP`'s oparg is `(op << shift) | mask[op]`: 3.12 keeps the comparison in the high
    /// bits and, in the low four, the outcomes (unordered 1, less 2, greater 4, equal 8) for
    /// which the comparison is true, which its specializations read.
    pub compare_shift: u32,
    pub compare_masks: [u8; 6],
    /// `RETURN_CONST k` exists (3.12); otherwise `LOAD_CONST k; RETURN_VALUE`.
    pub return_const: bool,
    /// `BINARY_SLICE` / `STORE_SLICE` exist (3.12); otherwise a two-item `BUILD_SLICE` followed
    /// by `BINARY_SUBSCR` / `STORE_SUBSCR`.
    pub slice_ops: bool,
    /// `LOAD_SUPER_ATTR` exists (3.12).
    pub load_super_attr: bool,
    /// `LOAD_FAST_CHECK` exists (3.12: plain `LOAD_FAST` there assumes the local is bound).
    /// On 3.11 every `LOAD_FAST` checks.
    pub load_fast_check: bool,
    /// `LOAD_FAST_AND_CLEAR` exists (3.12, for inlined comprehensions).
    pub load_fast_and_clear: bool,
    /// A `for` loop's exit is an `END_FOR` that the exhausted `FOR_ITER` jumps to (3.12; the
    /// iterator pops itself and skips it at run time, but the compiler's stack accounting and
    /// the jump target include it). On 3.11 `FOR_ITER` pops the iterator and jumps past.
    pub end_for: bool,
    /// `CALL_INTRINSIC_1` replaces `UNARY_POSITIVE`, `LIST_TO_TUPLE`, `PRINT_EXPR`,
    /// `IMPORT_STAR` and `ASYNC_GEN_WRAP` (3.12).
    pub intrinsics: bool,
    /// Conditional jumps are spelled with a direction (`POP_JUMP_FORWARD_IF_TRUE`, 3.11);
    /// 3.12 has forward `POP_JUMP_IF_*` only.
    pub directional_conditional_jumps: bool,
    /// `JUMP_IF_TRUE_OR_POP` / `JUMP_IF_FALSE_OR_POP` exist (3.11); 3.12 spells the construct
    /// `COPY 1; POP_JUMP_IF_*; POP_TOP`.
    pub jump_if_or_pop: bool,
    /// `LOAD_CLOSURE` is a real opcode in 3.11 and 3.12 (3.13 makes it a pseudo-op).
    pub load_closure: bool,
}

const SPELLING_3_11: Spelling = Spelling {
    precall: true,
    load_attr_method_bit: false,
    compare_shift: 0,
    compare_masks: [0; 6],
    return_const: false,
    slice_ops: false,
    load_super_attr: false,
    load_fast_check: false,
    load_fast_and_clear: false,
    end_for: false,
    intrinsics: false,
    directional_conditional_jumps: true,
    jump_if_or_pop: true,
    load_closure: true,
};

/// Outcome bits of 3.12's `COMPARE_OP` mask.
const UNORDERED: u8 = 1;
const LESS: u8 = 2;
const GREATER: u8 = 4;
const EQUAL: u8 = 8;

const SPELLING_3_12: Spelling = Spelling {
    precall: false,
    load_attr_method_bit: true,
    compare_shift: 4,
    // <, <=, ==, !=, >, >= (in `cmp_op` order).
    compare_masks: [
        LESS,
        LESS | EQUAL,
        EQUAL,
        UNORDERED | LESS | GREATER,
        GREATER,
        GREATER | EQUAL,
    ],
    return_const: true,
    slice_ops: true,
    load_super_attr: true,
    load_fast_check: true,
    load_fast_and_clear: true,
    end_for: true,
    intrinsics: true,
    directional_conditional_jumps: false,
    jump_if_or_pop: false,
    load_closure: true,
};

impl Version {
    /// How this version spells the constructs that differ between versions.
    pub fn spelling(self) -> &'static Spelling {
        match self {
            Version::V3_11 => &SPELLING_3_11,
            Version::V3_12 => &SPELLING_3_12,
        }
    }
}

/// A rich comparison, in `cmp_op` order (`COMPARE_OP`'s operation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Comparison {
    Lt,
    Le,
    Eq,
    Ne,
    Gt,
    Ge,
}

impl Comparison {
    pub const ALL: [Comparison; 6] = [
        Comparison::Lt,
        Comparison::Le,
        Comparison::Eq,
        Comparison::Ne,
        Comparison::Gt,
        Comparison::Ge,
    ];

    /// The operator as Python writes it (`"<="`).
    pub fn symbol(self) -> &'static str {
        ["<", "<=", "==", "!=", ">", ">="][self as usize]
    }
}

/// The condition of a conditional jump that pops its operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JumpIf {
    True,
    False,
    None,
    NotNone,
}

/// A one-argument intrinsic: an opcode of its own on 3.11, `CALL_INTRINSIC_1 n` on 3.12
/// (numbers from CPython 3.12's `pycore_intrinsics.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Intrinsic1 {
    Print = 1,
    ImportStar = 2,
    StopIterationError = 3,
    AsyncGenWrap = 4,
    UnaryPositive = 5,
    ListToTuple = 6,
}

impl Intrinsic1 {
    pub const ALL: [Intrinsic1; 6] = [
        Intrinsic1::Print,
        Intrinsic1::ImportStar,
        Intrinsic1::StopIterationError,
        Intrinsic1::AsyncGenWrap,
        Intrinsic1::UnaryPositive,
        Intrinsic1::ListToTuple,
    ];

    /// The name CPython gives it (`dis` shows it as `CALL_INTRINSIC_1`'s argument).
    pub fn name(self) -> &'static str {
        match self {
            Intrinsic1::Print => "INTRINSIC_PRINT",
            Intrinsic1::ImportStar => "INTRINSIC_IMPORT_STAR",
            Intrinsic1::StopIterationError => "INTRINSIC_STOPITERATION_ERROR",
            Intrinsic1::AsyncGenWrap => "INTRINSIC_ASYNC_GEN_WRAP",
            Intrinsic1::UnaryPositive => "INTRINSIC_UNARY_POSITIVE",
            Intrinsic1::ListToTuple => "INTRINSIC_LIST_TO_TUPLE",
        }
    }

    /// The 3.11 opcode that did the same, if there was one (`StopIterationError` was part of
    /// the generator's exception handling, not an instruction).
    fn opcode_3_11(self) -> Option<&'static str> {
        match self {
            Intrinsic1::Print => Some("PRINT_EXPR"),
            Intrinsic1::ImportStar => Some("IMPORT_STAR"),
            Intrinsic1::StopIterationError => None,
            Intrinsic1::AsyncGenWrap => Some("ASYNC_GEN_WRAP"),
            Intrinsic1::UnaryPositive => Some("UNARY_POSITIVE"),
            Intrinsic1::ListToTuple => Some("LIST_TO_TUPLE"),
        }
    }
}

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unary {
    Positive,
    Negative,
    Not,
    Invert,
}

/// `RESUME`'s oparg: where the frame is (re)entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResumeAt {
    Start = 0,
    AfterYield = 1,
    AfterYieldFrom = 2,
    AfterAwait = 3,
}

/// `MAKE_FUNCTION`'s flags: which optional parts lie on the stack under the code object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FunctionParts {
    pub defaults: bool,
    pub kwdefaults: bool,
    pub annotations: bool,
    pub closure: bool,
}

impl FunctionParts {
    pub const CLOSURE: FunctionParts = FunctionParts {
        defaults: false,
        kwdefaults: false,
        annotations: false,
        closure: true,
    };

    fn flags(self) -> u32 {
        u32::from(self.defaults)
            | u32::from(self.kwdefaults) << 1
            | u32::from(self.annotations) << 2
            | u32::from(self.closure) << 3
    }
}

impl Assembler {
    fn spelling(&self) -> &'static Spelling {
        self.version().spelling()
    }

    fn not_in_version(&self, construct: &'static str) -> Error {
        Error::NotInVersion {
            construct,
            version: self.version(),
        }
    }

    // --- frame entry and exit -------------------------------------------------------------

    /// `RESUME`: the start of a frame's body (after `COPY_FREE_VARS`/`MAKE_CELL`).
    pub fn resume(&mut self, at: ResumeAt) -> Result<()> {
        self.emit("RESUME", at as u32)
    }

    /// Copies the closure's `n` cells into the frame's free-variable slots (first instruction
    /// of a closure's code).
    pub fn copy_free_vars(&mut self, n: u32) -> Result<()> {
        self.emit("COPY_FREE_VARS", n)
    }

    /// Replaces local `i` with a new cell holding its value.
    pub fn make_cell(&mut self, i: u32) -> Result<()> {
        self.emit("MAKE_CELL", i)
    }

    /// `return <top of stack>`.
    pub fn return_value(&mut self) -> Result<()> {
        self.emit("RETURN_VALUE", 0)
    }

    /// `return co_consts[k]`.
    pub fn return_const(&mut self, k: u32) -> Result<()> {
        if self.spelling().return_const {
            self.emit("RETURN_CONST", k)
        } else {
            self.emit("LOAD_CONST", k)?;
            self.emit("RETURN_VALUE", 0)
        }
    }

    // --- locals, cells, constants, globals ------------------------------------------------

    pub fn load_const(&mut self, k: u32) -> Result<()> {
        self.emit("LOAD_CONST", k)
    }

    /// Pushes local `i`, which the compiler proved bound.
    pub fn load_fast(&mut self, i: u32) -> Result<()> {
        self.emit("LOAD_FAST", i)
    }

    /// Pushes local `i`, raising `UnboundLocalError` if it is unbound.
    pub fn load_fast_check(&mut self, i: u32) -> Result<()> {
        if self.spelling().load_fast_check {
            self.emit("LOAD_FAST_CHECK", i)
        } else {
            self.emit("LOAD_FAST", i)
        }
    }

    /// Pushes local `i` (NULL if unbound) and unbinds it: how 3.12 saves a variable an inlined
    /// comprehension shadows. 3.11 has no such instruction.
    pub fn load_fast_and_clear(&mut self, i: u32) -> Result<()> {
        if !self.spelling().load_fast_and_clear {
            return Err(self.not_in_version("LOAD_FAST_AND_CLEAR"));
        }
        self.emit("LOAD_FAST_AND_CLEAR", i)
    }

    pub fn store_fast(&mut self, i: u32) -> Result<()> {
        self.emit("STORE_FAST", i)
    }

    pub fn delete_fast(&mut self, i: u32) -> Result<()> {
        self.emit("DELETE_FAST", i)
    }

    /// Pushes the cell object in slot `i` (to build a closure tuple).
    pub fn load_closure(&mut self, i: u32) -> Result<()> {
        if self.spelling().load_closure {
            self.emit("LOAD_CLOSURE", i)
        } else {
            self.emit("LOAD_FAST", i)
        }
    }

    pub fn load_deref(&mut self, i: u32) -> Result<()> {
        self.emit("LOAD_DEREF", i)
    }

    pub fn store_deref(&mut self, i: u32) -> Result<()> {
        self.emit("STORE_DEREF", i)
    }

    /// Pushes global `co_names[name]`, with a NULL under it when `push_null` (the callable of a
    /// plain call).
    pub fn load_global(&mut self, name: u32, push_null: bool) -> Result<()> {
        self.emit("LOAD_GLOBAL", name << 1 | u32::from(push_null))
    }

    pub fn store_global(&mut self, name: u32) -> Result<()> {
        self.emit("STORE_GLOBAL", name)
    }

    // --- attributes -------------------------------------------------------------------------

    /// `obj.name`. With `method`, a method load for an immediately following call: it pushes
    /// either `(function, obj)` or `(NULL, bound attribute)`, the two slots [`call`] expects.
    ///
    /// [`call`]: Assembler::call
    pub fn load_attr(&mut self, name: u32, method: bool) -> Result<()> {
        match (method, self.spelling().load_attr_method_bit) {
            (false, false) => self.emit("LOAD_ATTR", name),
            (true, false) => self.emit("LOAD_METHOD", name),
            (_, true) => self.emit("LOAD_ATTR", name << 1 | u32::from(method)),
        }
    }

    /// `super(cls, self).name` from a stack of `[super, cls, self]` (3.12; `two_args` is false
    /// for the compiler's zero-argument `super()`). 3.11 calls `super` and loads the attribute
    /// from the result: build that with [`call`](Self::call) and [`load_attr`](Self::load_attr).
    pub fn load_super_attr(&mut self, name: u32, method: bool, two_args: bool) -> Result<()> {
        if !self.spelling().load_super_attr {
            return Err(self.not_in_version("LOAD_SUPER_ATTR"));
        }
        self.emit(
            "LOAD_SUPER_ATTR",
            name << 2 | u32::from(two_args) << 1 | u32::from(method),
        )
    }

    pub fn store_attr(&mut self, name: u32) -> Result<()> {
        self.emit("STORE_ATTR", name)
    }

    pub fn delete_attr(&mut self, name: u32) -> Result<()> {
        self.emit("DELETE_ATTR", name)
    }

    // --- calls ------------------------------------------------------------------------------

    /// Pushes the NULL that stands for "no self" under a callable.
    pub fn push_null(&mut self) -> Result<()> {
        self.emit("PUSH_NULL", 0)
    }

    /// Calls the callable under `n` positional arguments: the stack is
    /// `[NULL or method, callable or self, args...]`, as left by [`push_null`],
    /// [`load_global`] with `push_null` or [`load_attr`] with `method`.
    ///
    /// [`push_null`]: Assembler::push_null
    /// [`load_global`]: Assembler::load_global
    /// [`load_attr`]: Assembler::load_attr
    pub fn call(&mut self, n: u32) -> Result<()> {
        if self.spelling().precall {
            self.emit("PRECALL", n)?;
        }
        self.emit("CALL", n)
    }

    /// Like [`call`](Self::call), the last `len(co_consts[names])` of the `n` arguments being
    /// passed by the keywords in the tuple `co_consts[names]`.
    pub fn call_kw(&mut self, n: u32, names: u32) -> Result<()> {
        self.emit("KW_NAMES", names)?;
        self.call(n)
    }

    /// `f(*args)` or, with `kwargs`, `f(*args, **kwargs)` from `[NULL, f, args(, kwargs)]`.
    pub fn call_function_ex(&mut self, kwargs: bool) -> Result<()> {
        self.emit("CALL_FUNCTION_EX", u32::from(kwargs))
    }

    /// Makes a function from the code object on top, with the optional parts under it.
    pub fn make_function(&mut self, parts: FunctionParts) -> Result<()> {
        self.emit("MAKE_FUNCTION", parts.flags())
    }

    /// A one-argument intrinsic function of the interpreter.
    pub fn intrinsic_1(&mut self, f: Intrinsic1) -> Result<()> {
        if self.spelling().intrinsics {
            return self.emit("CALL_INTRINSIC_1", f as u32);
        }
        match f.opcode_3_11() {
            Some(name) => self.emit(name, 0),
            None => Err(self.not_in_version("CALL_INTRINSIC_1 INTRINSIC_STOPITERATION_ERROR")),
        }
    }

    // --- operators --------------------------------------------------------------------------

    /// `BINARY_OP` by its `dis` symbol: `"+"`, `"+="`, `"@"`, ...
    pub fn binary_op(&mut self, symbol: &str) -> Result<()> {
        let k = self
            .version()
            .binary_ops()
            .iter()
            .position(|s| *s == symbol)
            .ok_or_else(|| Error::UnknownOperator {
                symbol: symbol.to_owned(),
            })?;
        self.emit("BINARY_OP", k as u32)
    }

    pub fn compare_op(&mut self, op: Comparison) -> Result<()> {
        let s = self.spelling();
        let k = op as usize;
        self.emit(
            "COMPARE_OP",
            (k as u32) << s.compare_shift | u32::from(s.compare_masks[k]),
        )
    }

    /// `is` (`is not` when `invert`).
    pub fn is_op(&mut self, invert: bool) -> Result<()> {
        self.emit("IS_OP", u32::from(invert))
    }

    /// `in` (`not in` when `invert`).
    pub fn contains_op(&mut self, invert: bool) -> Result<()> {
        self.emit("CONTAINS_OP", u32::from(invert))
    }

    pub fn unary(&mut self, op: Unary) -> Result<()> {
        match op {
            Unary::Positive => self.intrinsic_1(Intrinsic1::UnaryPositive),
            Unary::Negative => self.emit("UNARY_NEGATIVE", 0),
            Unary::Not => self.emit("UNARY_NOT", 0),
            Unary::Invert => self.emit("UNARY_INVERT", 0),
        }
    }

    // --- subscripts and slices --------------------------------------------------------------

    /// `container[key]` from `[container, key]`.
    pub fn binary_subscr(&mut self) -> Result<()> {
        self.emit("BINARY_SUBSCR", 0)
    }

    /// `container[key] = value` from `[value, container, key]`.
    pub fn store_subscr(&mut self) -> Result<()> {
        self.emit("STORE_SUBSCR", 0)
    }

    pub fn delete_subscr(&mut self) -> Result<()> {
        self.emit("DELETE_SUBSCR", 0)
    }

    /// A slice object from `[start, stop]` or, with `step`, `[start, stop, step]`.
    pub fn build_slice(&mut self, step: bool) -> Result<()> {
        self.emit("BUILD_SLICE", if step { 3 } else { 2 })
    }

    /// `container[start:stop]` from `[container, start, stop]`.
    pub fn binary_slice(&mut self) -> Result<()> {
        if self.spelling().slice_ops {
            self.emit("BINARY_SLICE", 0)
        } else {
            self.build_slice(false)?;
            self.binary_subscr()
        }
    }

    /// `container[start:stop] = value` from `[value, container, start, stop]`.
    pub fn store_slice(&mut self) -> Result<()> {
        if self.spelling().slice_ops {
            self.emit("STORE_SLICE", 0)
        } else {
            self.build_slice(false)?;
            self.store_subscr()
        }
    }

    // --- the stack --------------------------------------------------------------------------

    pub fn pop_top(&mut self) -> Result<()> {
        self.emit("POP_TOP", 0)
    }

    /// Pushes a copy of the `n`-th item from the top (`copy(1)` duplicates the top).
    pub fn copy(&mut self, n: u32) -> Result<()> {
        self.emit("COPY", n)
    }

    /// Swaps the top with the `n`-th item from the top.
    pub fn swap(&mut self, n: u32) -> Result<()> {
        self.emit("SWAP", n)
    }

    /// Moves the top item `n - 1` places down (the old `ROT_N`): `SWAP n, SWAP n-1, ..., SWAP 2`.
    pub fn rot_n(&mut self, n: u32) -> Result<()> {
        for k in (2..=n).rev() {
            self.swap(k)?;
        }
        Ok(())
    }

    // --- containers ---------------------------------------------------------------------------

    pub fn build_tuple(&mut self, n: u32) -> Result<()> {
        self.emit("BUILD_TUPLE", n)
    }

    pub fn build_list(&mut self, n: u32) -> Result<()> {
        self.emit("BUILD_LIST", n)
    }

    pub fn build_set(&mut self, n: u32) -> Result<()> {
        self.emit("BUILD_SET", n)
    }

    /// A dict from `n` key/value pairs.
    pub fn build_map(&mut self, n: u32) -> Result<()> {
        self.emit("BUILD_MAP", n)
    }

    /// A dict from `n` values and the tuple of their keys on top.
    pub fn build_const_key_map(&mut self, n: u32) -> Result<()> {
        self.emit("BUILD_CONST_KEY_MAP", n)
    }

    /// Extends the list `n` items down with the iterable on top.
    pub fn list_extend(&mut self, n: u32) -> Result<()> {
        self.emit("LIST_EXTEND", n)
    }

    pub fn list_append(&mut self, n: u32) -> Result<()> {
        self.emit("LIST_APPEND", n)
    }

    /// `tuple(list)` for the list on top (the end of a starred tuple display).
    pub fn list_to_tuple(&mut self) -> Result<()> {
        self.intrinsic_1(Intrinsic1::ListToTuple)
    }

    pub fn dict_update(&mut self, n: u32) -> Result<()> {
        self.emit("DICT_UPDATE", n)
    }

    /// Like [`dict_update`](Self::dict_update), raising on a repeated key (`f(**a, **b)`).
    pub fn dict_merge(&mut self, n: u32) -> Result<()> {
        self.emit("DICT_MERGE", n)
    }

    pub fn unpack_sequence(&mut self, n: u32) -> Result<()> {
        self.emit("UNPACK_SEQUENCE", n)
    }

    /// `a, *rest, b = ...` with `before` targets before the starred one and `after` after it.
    pub fn unpack_ex(&mut self, before: u8, after: u8) -> Result<()> {
        self.emit("UNPACK_EX", u32::from(after) << 8 | u32::from(before))
    }

    // --- control flow -------------------------------------------------------------------------

    /// An unconditional jump; the assembler picks the direction from where `target` lands.
    pub fn jump(&mut self, target: Label) -> Result<()> {
        self.emit_jump("JUMP_FORWARD", target)
    }

    /// Pops the top and jumps to `target` if the condition holds. 3.11 picks the direction
    /// from where `target` lands; 3.12 has forward conditional jumps only, and a backward
    /// `target` is reported at [`assemble`](Assembler::assemble)
    /// ([`Error::NoJumpInDirection`]): jump forward to a `jump` back instead.
    pub fn pop_jump_if(&mut self, cond: JumpIf, target: Label) -> Result<()> {
        let directional = self.spelling().directional_conditional_jumps;
        let name = match (cond, directional) {
            (JumpIf::True, true) => "POP_JUMP_FORWARD_IF_TRUE",
            (JumpIf::False, true) => "POP_JUMP_FORWARD_IF_FALSE",
            (JumpIf::None, true) => "POP_JUMP_FORWARD_IF_NONE",
            (JumpIf::NotNone, true) => "POP_JUMP_FORWARD_IF_NOT_NONE",
            (JumpIf::True, false) => "POP_JUMP_IF_TRUE",
            (JumpIf::False, false) => "POP_JUMP_IF_FALSE",
            (JumpIf::None, false) => "POP_JUMP_IF_NONE",
            (JumpIf::NotNone, false) => "POP_JUMP_IF_NOT_NONE",
        };
        self.emit_jump(name, target)
    }

    /// `a or b` / `a and b`: jumps to `target` keeping the top if its truth is `when`, else
    /// pops it and falls through. Forward only.
    pub fn jump_if_or_pop(&mut self, when: bool, target: Label) -> Result<()> {
        if self.spelling().jump_if_or_pop {
            let name = if when {
                "JUMP_IF_TRUE_OR_POP"
            } else {
                "JUMP_IF_FALSE_OR_POP"
            };
            return self.emit_jump(name, target);
        }
        self.copy(1)?;
        let cond = if when { JumpIf::True } else { JumpIf::False };
        self.pop_jump_if(cond, target)?;
        self.pop_top()
    }

    pub fn get_iter(&mut self) -> Result<()> {
        self.emit("GET_ITER", 0)
    }

    /// The head of a `for` loop over the iterator on top: pushes the next item, or leaves the
    /// loop to `exit` when the iterator is exhausted. Bind `exit` right before
    /// [`end_for`](Self::end_for), which both versions then read correctly.
    pub fn for_iter(&mut self, exit: Label) -> Result<()> {
        self.emit_jump("FOR_ITER", exit)
    }

    /// The end of a `for` loop: `END_FOR` on 3.12, nothing on 3.11 (whose `FOR_ITER` pops the
    /// iterator itself).
    pub fn end_for(&mut self) -> Result<()> {
        if self.spelling().end_for {
            self.emit("END_FOR", 0)
        } else {
            Ok(())
        }
    }

    /// `raise` with `n` (0, 1 or 2: `raise exc from cause`) operands.
    pub fn raise_varargs(&mut self, n: u32) -> Result<()> {
        self.emit("RAISE_VARARGS", n)
    }

    /// Re-raises the exception on top; with `set_lasti`, the frame's last instruction is
    /// restored from the offset under it.
    pub fn reraise(&mut self, set_lasti: bool) -> Result<()> {
        self.emit("RERAISE", u32::from(set_lasti))
    }

    /// Enters the context manager on top: pushes its `__exit__` and the `__enter__` result.
    pub fn before_with(&mut self) -> Result<()> {
        self.emit("BEFORE_WITH", 0)
    }

    pub fn nop(&mut self) -> Result<()> {
        self.emit("NOP", 0)
    }
}

impl Instruction {
    /// The `co_names` index an instruction names, with the flag bits of its version's spelling
    /// removed: `LOAD_GLOBAL` (both versions) and 3.12's `LOAD_ATTR` keep a flag in the low bit,
    /// `LOAD_SUPER_ATTR` two. `None` for instructions that name nothing.
    pub fn name_index(&self) -> Option<u32> {
        if self.opcode.info().arg_kind != crate::opcode::ArgKind::Name {
            return None;
        }
        let spelling = self.opcode.version().spelling();
        Some(match self.opcode.name() {
            "LOAD_GLOBAL" => self.arg >> 1,
            "LOAD_ATTR" if spelling.load_attr_method_bit => self.arg >> 1,
            "LOAD_SUPER_ATTR" => self.arg >> 2,
            _ => self.arg,
        })
    }

    /// Whether the instruction pushes the two call slots (a NULL or a method under the value):
    /// `LOAD_GLOBAL` with its low bit, a method load (`LOAD_METHOD`, 3.12 `LOAD_ATTR` or
    /// `LOAD_SUPER_ATTR` with the low bit) and `PUSH_NULL` itself.
    pub fn pushes_null(&self) -> bool {
        let spelling = self.opcode.version().spelling();
        match self.opcode.name() {
            "PUSH_NULL" | "LOAD_METHOD" => true,
            "LOAD_GLOBAL" | "LOAD_SUPER_ATTR" => self.arg & 1 == 1,
            "LOAD_ATTR" => spelling.load_attr_method_bit && self.arg & 1 == 1,
            _ => false,
        }
    }

    /// The one-argument intrinsic an instruction runs: `CALL_INTRINSIC_1 n` on 3.12, or the
    /// 3.11 opcode that did the same (`UNARY_POSITIVE`, `LIST_TO_TUPLE`, ...).
    pub fn intrinsic_1(&self) -> Option<Intrinsic1> {
        let name = self.opcode.name();
        if name == "CALL_INTRINSIC_1" {
            return Intrinsic1::ALL.into_iter().find(|f| *f as u32 == self.arg);
        }
        if self.opcode.version().spelling().intrinsics {
            return None;
        }
        Intrinsic1::ALL
            .into_iter()
            .find(|f| f.opcode_3_11() == Some(name))
    }

    /// For a `FOR_ITER`, the index of the instruction that runs once the iterator is exhausted
    /// (the iterator popped): 3.12 jumps to the loop's `END_FOR` but skips it at run time, 3.11
    /// runs its target. `None` for other instructions or an unresolved jump.
    pub fn for_iter_exit(&self) -> Option<usize> {
        if self.opcode.name() != "FOR_ITER" {
            return None;
        }
        let skip = usize::from(self.opcode.version().spelling().end_for);
        self.target.map(|t| t + skip)
    }

    /// The comparison of a `COMPARE_OP`, whatever the version packs around it.
    pub fn comparison(&self) -> Option<Comparison> {
        if self.opcode.name() != "COMPARE_OP" {
            return None;
        }
        let shift = self.opcode.version().spelling().compare_shift;
        Comparison::ALL.get((self.arg >> shift) as usize).copied()
    }
}
