//! Memory layout facts: broadcasting, contiguity predicates and the strides torch gives newly
//! allocated outputs.
//!
//! Strides are observable (a user can print them, and `view` succeeds or fails because of them), so
//! a compiled graph must reproduce eager's layouts exactly. Elementwise ops do not simply return
//! contiguous tensors: their output keeps the dimension order of the inputs (a transposed input
//! gives a transposed output), which `elementwise_strides` reproduces.

use super::InferError;

/// Row-major strides. Dimensions of size 0 or 1 count as 1 so strides stay positive.
pub fn contiguous_strides(sizes: &[i64]) -> Vec<i64> {
    let mut strides = vec![0; sizes.len()];
    let mut acc = 1i64;
    for i in (0..sizes.len()).rev() {
        strides[i] = acc;
        acc *= sizes[i].max(1);
    }
    strides
}

/// Dense strides of `sizes` laid out in `order` (outermost dimension first): the innermost
/// has stride 1, each outer one the product of the sizes inside it (a size of 0 or 1 counts as
/// 1, as in [`contiguous_strides`]). The identity order gives the contiguous strides.
pub fn dense_strides(sizes: &[i64], order: &[usize]) -> Vec<i64> {
    let mut strides = vec![0; sizes.len()];
    let mut acc = 1i64;
    for &d in order.iter().rev() {
        strides[d] = acc;
        acc *= sizes[d].max(1);
    }
    strides
}

/// The order of dimensions (outermost first) in which `strides` are the dense strides of
/// `sizes` ([`dense_strides`]), the contiguous order where it fits: a transposed, permuted or
/// channels-last tensor is dense in another order. A size-1 dimension's stride is not
/// compared (torch's contiguity ignores it too). `None` where no order fits: a slice of a
/// wider tensor, an expanded or overlapping view.
pub fn dense_order(sizes: &[i64], strides: &[i64]) -> Option<Vec<usize>> {
    if sizes.len() != strides.len() {
        return None;
    }
    let fits = |order: &[usize]| {
        dense_strides(sizes, order)
            .iter()
            .zip(strides)
            .zip(sizes)
            .all(|((e, a), s)| e == a || *s == 1)
    };
    let identity: Vec<usize> = (0..sizes.len()).collect();
    if fits(&identity) {
        return Some(identity);
    }
    let mut order = identity;
    // Larger strides outside; a tie (only a size-1 dimension can tie and fit) in index order.
    order.sort_by(|&a, &b| strides[b].cmp(&strides[a]).then(a.cmp(&b)));
    fits(&order).then_some(order)
}

/// How one stride of a dynamic input dense in no order (a column slice of a wider tensor, a
/// transposed slice, an expanded view) is written in a graph's metadata ([`stride_rules`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrideRule {
    /// The constant 0 or 1 (an expanded dimension, the innermost of a slice).
    Const(i64),
    /// The size times the stride of dimension `j` (a dimension laid out densely outside `j`).
    Times(usize),
    /// A symbol of its own, read from the tensor per call (the row stride of a column slice
    /// of a parent whose width moves), at least 2 and equal to no `Times` candidate.
    Free,
}

/// The rule of each stride of `sizes`/`strides`, as torch's `_compute_symbolic_stride`: strides
/// in increasing order (a tie: the later dimension first); a stride of 0 or 1 that is not its
/// next dimension's size times stride is a constant; one equal to a product `size[j] *
/// stride[j]` of a dimension already written is that product (the last such `j`); any other
/// is a symbol of its own (one below 2 stays a constant). A call's tensor takes the same graph exactly when its rules are the
/// trace's: then each free stride differs from every product the layout facts (contiguity,
/// density) compare it to, as at the trace.
pub fn stride_rules(sizes: &[i64], strides: &[i64]) -> Vec<StrideRule> {
    let n = sizes.len().min(strides.len());
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| strides[a].cmp(&strides[b]).then(b.cmp(&a)));
    let mut rules = vec![StrideRule::Const(0); n];
    let mut candidates: Vec<(i64, usize)> = Vec::new();
    for i in order {
        let v = strides[i];
        let next_dense = i + 1 < n && v == sizes[i + 1] * strides[i + 1];
        rules[i] = if (v == 0 || v == 1) && !next_dense {
            StrideRule::Const(v)
        } else if let Some(&(_, j)) = candidates.iter().rev().find(|(c, _)| *c == v) {
            StrideRule::Times(j)
        } else if v < 2 {
            // (torch makes a symbol here too; a constant keeps every symbol at least 2.)
            StrideRule::Const(v)
        } else {
            StrideRule::Free
        };
        candidates.push((sizes[i] * v, i));
    }
    rules
}

/// Strides of a 4-d tensor in channels-last order (N, H, W, C fastest-last).
pub fn channels_last_strides(sizes: &[i64]) -> Vec<i64> {
    debug_assert_eq!(sizes.len(), 4);
    let c = sizes[1].max(1);
    let w = sizes[3].max(1);
    let h = sizes[2].max(1);
    vec![c * w * h, 1, c * w, c]
}

pub fn numel(sizes: &[i64]) -> i64 {
    sizes.iter().product()
}

/// Row-major layout, ignoring size-1 dimensions; an empty tensor is contiguous whatever its strides.
pub fn is_contiguous(sizes: &[i64], strides: &[i64]) -> bool {
    if numel(sizes) == 0 {
        return true;
    }
    let mut expected = 1;
    for (&size, &stride) in sizes.iter().zip(strides).rev() {
        if size != 1 {
            if stride != expected {
                return false;
            }
            expected *= size;
        }
    }
    true
}

/// Channels-last layout of a 4-d tensor (the only rank torch checks for this format).
pub fn is_channels_last_contiguous(sizes: &[i64], strides: &[i64]) -> bool {
    if sizes.len() != 4 {
        return false;
    }
    let mut expected = 1;
    for d in [1, 3, 2, 0] {
        if sizes[d] != 1 {
            if strides[d] != expected {
                return false;
            }
            expected *= sizes[d];
        }
    }
    true
}

/// Some permutation of the dimensions is row-major: every element has its own storage slot and
/// no slot is skipped. Such tensors can be copied layout-for-layout. (Empty tensors count, being
/// contiguous.)
pub fn is_non_overlapping_and_dense(sizes: &[i64], strides: &[i64]) -> bool {
    if is_contiguous(sizes, strides) {
        return true;
    }
    if sizes.len() == 1 {
        return sizes[0] < 2 || strides[0] == 1;
    }
    let mut dims: Vec<usize> = (0..sizes.len()).filter(|&d| sizes[d] >= 2).collect();
    dims.sort_by_key(|&d| strides[d]);
    let mut expected = 1;
    for d in dims {
        if strides[d] != expected {
            return false;
        }
        expected *= sizes[d];
    }
    true
}

/// Whether some element is reachable through two different indices (a dimension of size > 1
/// with stride 0, as `expand` makes). Writing in place to such a tensor is an error in torch.
pub fn has_internal_overlap(sizes: &[i64], strides: &[i64]) -> bool {
    !is_non_overlapping_and_dense(sizes, strides)
        && sizes.iter().zip(strides).any(|(&s, &st)| s > 1 && st == 0)
}

/// NumPy-style broadcasting of two shapes, aligned at the trailing dimension.
pub fn broadcast_shapes(a: &[i64], b: &[i64]) -> Result<Vec<i64>, InferError> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let offset = n - 1 - i;
        let sa = if offset < a.len() {
            a[a.len() - 1 - offset]
        } else {
            1
        };
        let sb = if offset < b.len() {
            b[b.len() - 1 - offset]
        } else {
            1
        };
        out.push(if sa == sb || sb == 1 {
            sa
        } else if sa == 1 {
            sb
        } else {
            return Err(InferError::Invalid(format!(
                "The size of tensor a ({sa}) must match the size of tensor b ({sb}) at \
                 non-singleton dimension {i}"
            )));
        });
    }
    Ok(out)
}

/// Broadcasts every shape in turn, as an elementwise op with several inputs does.
pub fn broadcast_all<'a>(
    shapes: impl IntoIterator<Item = &'a [i64]>,
) -> Result<Vec<i64>, InferError> {
    let mut out: Vec<i64> = Vec::new();
    for s in shapes {
        out = broadcast_shapes(&out, s)?;
    }
    Ok(out)
}

/// Strides of the output of an elementwise op over `inputs` (sizes, strides), broadcast to
/// `shape`, in torch's operand order.
///
/// When all inputs share one shape and are all row-major, all channels-last, or all the same
/// dense layout, the output copies that layout. Otherwise the output's dimensions are ordered as
/// the inputs' strides order them (the first input that has an opinion on a pair of dimensions
/// decides it; broadcast dimensions have no opinion; equal strides put the smaller dimension
/// innermost), and the output is dense in that order.
pub fn elementwise_strides(shape: &[i64], inputs: &[(&[i64], &[i64])]) -> Vec<i64> {
    let same_shape = inputs.iter().all(|(s, _)| *s == shape);
    if same_shape && !inputs.is_empty() {
        if inputs.iter().all(|(s, st)| is_contiguous(s, st)) {
            return contiguous_strides(shape);
        }
        if inputs
            .iter()
            .all(|(s, st)| is_channels_last_contiguous(s, st))
        {
            return channels_last_strides(shape);
        }
        if inputs
            .iter()
            .all(|(s, st)| is_non_overlapping_and_dense(s, st))
            && inputs.windows(2).all(|w| w[0].1 == w[1].1)
        {
            return inputs[inputs.len() - 1].1.to_vec();
        }
    }
    let ndim = shape.len();
    if ndim <= 1 {
        return contiguous_strides(shape);
    }
    // Strides of each input seen at the output's rank: 0 where the input is broadcast.
    let aligned: Vec<Vec<i64>> = inputs
        .iter()
        .map(|(sizes, strides)| {
            let offset = ndim - sizes.len();
            let mut out = vec![0; ndim];
            for i in 0..sizes.len() {
                if !(sizes[i] == 1 && shape[offset + i] != 1) {
                    out[offset + i] = strides[i];
                }
            }
            out
        })
        .collect();
    let perm = dim_order(shape, &aligned);
    if perm.iter().enumerate().all(|(j, &p)| p == ndim - 1 - j) {
        return contiguous_strides(shape);
    }
    // Dense in `perm` order; unlike `contiguous_strides`, a size-0 dimension zeroes the strides
    // of every dimension outside it.
    let mut strides = vec![0; ndim];
    let mut next = 1i64;
    for &d in &perm {
        strides[d] = next;
        next *= shape[d];
    }
    strides
}

/// The order of dimensions, innermost first, that the strides of `inputs` (aligned to `shape`, 0
/// where broadcast) suggest.
///
/// Starts from row-major and insertion-sorts: the first input that orders a pair of dimensions
/// decides it, broadcast (0) strides have no opinion, and equal strides put the smaller
/// dimension inside. A pair nobody orders is stepped over, so it does not block a decided pair
/// further out.
fn dim_order(shape: &[i64], inputs: &[Vec<i64>]) -> Vec<usize> {
    let ndim = shape.len();
    // 1: d0 belongs outside d1; -1: inside; 0: undecided.
    let order = |d0: usize, d1: usize| -> i32 {
        for st in inputs {
            let (s0, s1) = (st[d0], st[d1]);
            if s0 == 0 || s1 == 0 {
                continue;
            }
            if s0 < s1 {
                return -1;
            }
            if s0 > s1 {
                return 1;
            }
            if shape[d0] > shape[d1] {
                return 1;
            }
        }
        0
    };
    let mut perm: Vec<usize> = (0..ndim).rev().collect();
    for i in 1..ndim {
        let mut d1 = i;
        for d0 in (0..i).rev() {
            match order(perm[d0], perm[d1]) {
                c if c > 0 => {
                    perm.swap(d0, d1);
                    d1 = d0;
                }
                c if c < 0 => break,
                _ => {}
            }
        }
    }
    perm
}

/// Dense strides in the dimension order of (`sizes`, `strides`): the layout torch gives a copy
/// of a tensor whose own layout has gaps or overlaps.
pub fn dense_strides_like(sizes: &[i64], strides: &[i64]) -> Vec<i64> {
    let perm = dim_order(sizes, &[strides.to_vec()]);
    let mut out = vec![0; sizes.len()];
    let mut next = 1i64;
    for d in perm {
        out[d] = next;
        next *= sizes[d].max(1);
    }
    out
}

/// Strides of a copy made with `memory_format=torch.preserve_format` (`clone`, `empty_like`,
/// `.to(dtype)`): dense inputs keep their layout exactly, others get dense strides in the same
/// dimension order.
pub fn preserved_strides(sizes: &[i64], strides: &[i64]) -> Vec<i64> {
    if is_non_overlapping_and_dense(sizes, strides) {
        strides.to_vec()
    } else {
        dense_strides_like(sizes, strides)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguity() {
        assert!(is_contiguous(&[2, 3], &[3, 1]));
        assert!(!is_contiguous(&[2, 3], &[1, 2]));
        assert!(is_contiguous(&[2, 1, 3], &[3, 99, 1]));
        assert!(is_contiguous(&[0, 3], &[7, 7]));
        assert!(is_non_overlapping_and_dense(&[2, 3], &[1, 2]));
        assert!(!is_non_overlapping_and_dense(&[2, 3], &[6, 2]));
        assert!(!is_non_overlapping_and_dense(&[2, 3], &[0, 1]));
        assert!(has_internal_overlap(&[2, 3], &[0, 1]));
        assert!(!has_internal_overlap(&[1, 3], &[0, 1]));
    }

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shapes(&[2, 1], &[3]).unwrap(), vec![2, 3]);
        assert_eq!(broadcast_shapes(&[1], &[0]).unwrap(), vec![0]);
        assert!(broadcast_shapes(&[2], &[3]).is_err());
    }

    #[test]
    fn elementwise_layout() {
        // A transposed input gives a transposed output.
        assert_eq!(
            elementwise_strides(&[3, 2], &[(&[3, 2], &[1, 3])]),
            vec![1, 3]
        );
        // Row-major beats column-major when the first input is row-major.
        assert_eq!(
            elementwise_strides(&[3, 2], &[(&[3, 2], &[2, 1]), (&[3, 2], &[1, 3])]),
            vec![2, 1]
        );
        // A sliced (non-dense) input is compacted in its own order.
        assert_eq!(
            elementwise_strides(&[4, 3], &[(&[4, 3], &[6, 2])]),
            vec![3, 1]
        );
    }

    /// torch's symbolic strides of inputs dense in no order: the row stride of a column slice
    /// is free; a 3-d slice's outer stride is a product of it; an expanded dimension and the
    /// innermost stride are constants; a stride equal to the product it would be free of is
    /// that product (so a call whose row stride equals the width has other rules).
    #[test]
    fn stride_rules_of_views() {
        use StrideRule::*;
        // randn(5, 9)[:, :3]
        assert_eq!(stride_rules(&[5, 3], &[9, 1]), [Free, Const(1)]);
        // ... of a parent whose width is the slice's: contiguous, a product.
        assert_eq!(stride_rules(&[5, 3], &[3, 1]), [Times(1), Const(1)]);
        // randn(2, 5, 9)[:, :, :3]
        assert_eq!(
            stride_rules(&[2, 5, 3], &[45, 9, 1]),
            [Times(1), Free, Const(1)]
        );
        // randn(3, 9)[:, :5].t()
        assert_eq!(stride_rules(&[5, 3], &[1, 9]), [Const(1), Free]);
        // randn(1, 3).expand(5, 3)
        assert_eq!(stride_rules(&[5, 3], &[0, 1]), [Const(0), Const(1)]);
        // randn(10, 3)[::2]
        assert_eq!(stride_rules(&[5, 3], &[6, 1]), [Free, Const(1)]);
    }
}
