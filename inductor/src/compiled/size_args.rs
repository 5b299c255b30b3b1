//! What a launch over symbolic sizes takes besides the buffers, shared by the C and CUDA
//! kernel modules (its own module so neither imports the other for it).

/// The sizes a launch of a kernel over symbolic sizes takes besides its buffers (see
/// [`KernelModule::launch`]): the symbols' values, and for a CUDA kernel the blocks its grid
/// rule gives for them (`None`: its constant grid).
#[derive(Clone, Copy, Default)]
pub(crate) struct SizeArgs<'a> {
    pub syms: &'a [i64],
    pub grid: Option<u32>,
}
