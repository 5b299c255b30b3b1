//! Maximum value-stack depth (`co_stacksize`) by dataflow over the control-flow edges.
//!
//! Edges are fall-through (unless the opcode is terminal), the taken side of jumps (with the
//! opcode's jump-edge stack effect) and, for instructions covered by the exception table, the
//! handler, entered at `depth + lasti + 1`: the stack is unwound to `depth`, then lasti (when
//! asked for) and the exception are pushed. CPython requires every instruction to be reached
//! with one depth; we check that rather than merge, since a mismatch means broken code.
//! Handlers are entered from the start, whether or not their protected code is reachable,
//! because that is what CPython's `co_stacksize` accounts for.

use crate::decode::Instruction;
use crate::error::{Error, Result};
use crate::exception_table::ExceptionTableEntry;
use crate::opcode::Opcode;

/// Where an exception raised by an instruction goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handler {
    /// Index of the handler's first instruction.
    pub target: usize,
    /// Stack depth the handler unwinds to.
    pub depth: u32,
    /// Whether the raising instruction's offset is pushed too.
    pub lasti: bool,
}

impl Handler {
    /// Depth at the handler's first instruction: unwound to `depth`, then lasti (when asked
    /// for) and the exception pushed.
    pub fn entry_depth(&self) -> i64 {
        i64::from(self.depth) + i64::from(self.lasti) + 1
    }
}

/// What the analysis needs of one instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowInstruction {
    pub opcode: Opcode,
    pub arg: u32,
    /// Index of the jump target, for jumps.
    pub target: Option<usize>,
    pub handler: Option<Handler>,
}

/// Maximum stack depth over every instruction reachable from the first one.
pub fn max_stack_depth(code: &[FlowInstruction]) -> Result<u32> {
    if code.is_empty() {
        return Ok(0);
    }
    let mut walk = Walk {
        code,
        depth_at: vec![None; code.len()],
        work: Vec::new(),
        max: 0,
    };
    walk.reach(0, 0, 0)?;
    // Every handler counts, even one whose protected code is unreachable: CPython sizes the
    // stack before dropping dead code, and its co_stacksize still covers such handlers.
    for (i, inst) in code.iter().enumerate() {
        if let Some(h) = inst.handler {
            walk.reach(h.target, h.entry_depth(), i)?;
        }
    }
    while let Some(i) = walk.work.pop() {
        let inst = &code[i];
        let depth = i64::from(walk.depth_at[i].unwrap_or_default());
        if let Some(target) = inst.target {
            let effect = inst.opcode.stack_effect(inst.arg, true)?;
            walk.reach(target, depth + effect, i)?;
        }
        let after = depth + inst.opcode.stack_effect(inst.arg, false)?;
        if inst.opcode.is_terminal() {
            // Nothing follows, but a return or raise still must not pop what is not there.
            walk.check(after, i)?;
        } else {
            walk.reach(i + 1, after, i)?;
        }
    }
    Ok(walk.max)
}

struct Walk<'a> {
    code: &'a [FlowInstruction],
    depth_at: Vec<Option<u32>>,
    work: Vec<usize>,
    max: u32,
}

impl Walk<'_> {
    /// Validates a depth reached after instruction `from` and records it in the maximum.
    fn check(&mut self, depth: i64, from: usize) -> Result<u32> {
        let depth = u32::try_from(depth).map_err(|_| Error::StackUnderflow {
            index: from,
            name: self.code[from].opcode.name(),
            depth,
        })?;
        self.max = self.max.max(depth);
        Ok(depth)
    }

    /// Records that instruction `index` is entered with `depth`, coming from `from`.
    fn reach(&mut self, index: usize, depth: i64, from: usize) -> Result<()> {
        let depth = self.check(depth, from)?;
        let Some(slot) = self.depth_at.get_mut(index) else {
            return Err(Error::FallsOffEnd {
                index: from,
                name: self.code[from].opcode.name(),
            });
        };
        match *slot {
            None => {
                *slot = Some(depth);
                self.work.push(index);
            }
            Some(first) if first != depth => {
                return Err(Error::InconsistentStackDepth {
                    index,
                    first,
                    second: depth,
                })
            }
            Some(_) => {}
        }
        Ok(())
    }
}

/// Flow view of decoded `co_code` plus its parsed exception table.
pub fn flow_of_decoded(
    instructions: &[Instruction],
    exception_table: &[ExceptionTableEntry],
) -> Result<Vec<FlowInstruction>> {
    let mut flow: Vec<FlowInstruction> = instructions
        .iter()
        .map(|i| FlowInstruction {
            opcode: i.opcode,
            arg: i.arg,
            target: i.target,
            handler: None,
        })
        .collect();
    for entry in exception_table {
        let target = crate::decode::index_at_offset(instructions, entry.target).ok_or(
            Error::MisalignedExceptionEntry {
                offset: entry.target,
            },
        )?;
        let handler = Handler {
            target,
            depth: entry.depth,
            lasti: entry.lasti,
        };
        let first = instructions.partition_point(|i| i.offset < entry.start);
        for (f, i) in flow[first..].iter_mut().zip(&instructions[first..]) {
            if i.offset >= entry.end {
                break;
            }
            f.handler = Some(handler);
        }
    }
    Ok(flow)
}

/// `co_stacksize` of decoded code with its exception table.
pub fn stack_depth(
    instructions: &[Instruction],
    exception_table: &[ExceptionTableEntry],
) -> Result<u32> {
    max_stack_depth(&flow_of_decoded(instructions, exception_table)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opcode::Version;

    fn flow(v: Version, ops: &[(&str, u32, Option<usize>)]) -> Vec<FlowInstruction> {
        ops.iter()
            .map(|&(name, arg, target)| FlowInstruction {
                opcode: v.opcode(name).unwrap(),
                arg,
                target,
                handler: None,
            })
            .collect()
    }

    #[test]
    fn follows_jumps_and_handlers() {
        let v = Version::V3_11;
        let mut code = flow(
            v,
            &[
                ("LOAD_CONST", 0, None),
                ("POP_JUMP_FORWARD_IF_FALSE", 0, Some(3)),
                ("JUMP_FORWARD", 0, Some(3)),
                ("LOAD_CONST", 0, None),
                ("RETURN_VALUE", 0, None),
                ("PUSH_EXC_INFO", 0, None),
                ("POP_TOP", 0, None),
                ("POP_EXCEPT", 0, None),
                ("RERAISE", 0, None),
            ],
        );
        assert_eq!(max_stack_depth(&code).unwrap(), 1);
        code[3].handler = Some(Handler {
            target: 5,
            depth: 0,
            lasti: true,
        });
        // handler entered at 2, PUSH_EXC_INFO makes it 3
        assert_eq!(max_stack_depth(&code).unwrap(), 3);
    }

    #[test]
    fn reports_broken_code() {
        let v = Version::V3_12;
        let under = flow(v, &[("POP_TOP", 0, None), ("RETURN_CONST", 0, None)]);
        assert!(matches!(
            max_stack_depth(&under),
            Err(Error::StackUnderflow { index: 0, .. })
        ));
        let off_end = flow(v, &[("NOP", 0, None)]);
        assert!(matches!(
            max_stack_depth(&off_end),
            Err(Error::FallsOffEnd { .. })
        ));
        let mismatch = flow(
            v,
            &[
                ("LOAD_CONST", 0, None),
                ("LOAD_CONST", 0, None),
                ("POP_JUMP_IF_TRUE", 0, Some(4)),
                ("LOAD_CONST", 0, None),
                ("RETURN_VALUE", 0, None),
            ],
        );
        assert!(matches!(
            max_stack_depth(&mismatch),
            Err(Error::InconsistentStackDepth { index: 4, .. })
        ));
    }
}
