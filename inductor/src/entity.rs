//! Typed entity ids and the vectors indexed by them (Cranelift's `entity_impl!` and
//! `PrimaryMap`/`SecondaryMap`, rustc's `IndexVec`).
//!
//! Buffers, body values, IR nodes, kernels and schedule steps are all numbered from zero, and
//! side tables (`materialized`, `reuse`, `in_place`, `producer_kernel`, …) are indexed by those
//! numbers. As plain `usize`s a buffer number could index a kernel table and the compiler would
//! not notice; each kind gets its own id type here, and [`EntityVec<K, V>`] can only be indexed
//! by its `K`. Ids print as their number, so generated names (`buf3`, `b3`, `kernel2`) are
//! unchanged.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// A dense id: a number from zero that indexes an [`EntityVec`].
pub trait EntityId:
    Copy + Eq + Ord + std::hash::Hash + fmt::Debug + fmt::Display + 'static
{
    fn new(index: usize) -> Self;
    fn index(self) -> usize;
}

/// Declares `pub struct $name(u32)` as an [`EntityId`], printed (also by `{:?}`) as its bare
/// number, as the `usize` ids it replaces were: reasons and dumps read the same.
macro_rules! entity_id {
    ($(#[$attr:meta])* $name:ident) => {
        $(#[$attr])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(u32);

        impl $crate::entity::EntityId for $name {
            #[inline]
            fn new(index: usize) -> Self {
                $name(u32::try_from(index).expect(concat!(stringify!($name), " overflows u32")))
            }
            #[inline]
            fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl $name {
            /// The id numbered `index`.
            #[inline]
            pub fn new(index: usize) -> Self {
                <Self as $crate::entity::EntityId>::new(index)
            }
            /// The id's number.
            #[inline]
            pub fn index(self) -> usize {
                <Self as $crate::entity::EntityId>::index(self)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.0, f)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&self.0, f)
            }
        }
    };
}
pub(crate) use entity_id;

/// A vector indexed by `K` only: the primary table of an entity (`push` hands out the next id)
/// or a side table over it (`filled`, sized to the primary one).
#[derive(Clone, PartialEq, Eq)]
pub struct EntityVec<K, V> {
    items: Vec<V>,
    _key: PhantomData<fn(K) -> K>,
}

impl<K: EntityId, V> EntityVec<K, V> {
    pub fn new() -> Self {
        EntityVec {
            items: Vec::new(),
            _key: PhantomData,
        }
    }

    pub fn with_capacity(n: usize) -> Self {
        EntityVec {
            items: Vec::with_capacity(n),
            _key: PhantomData,
        }
    }

    /// A side table of `n` copies of `value`.
    pub fn filled(value: V, n: usize) -> Self
    where
        V: Clone,
    {
        EntityVec {
            items: vec![value; n],
            _key: PhantomData,
        }
    }

    /// Appends `value`; returns its id.
    pub fn push(&mut self, value: V) -> K {
        let k = K::new(self.items.len());
        self.items.push(value);
        k
    }

    /// The id the next [`EntityVec::push`] returns.
    pub fn next_key(&self) -> K {
        K::new(self.items.len())
    }

    /// Drops every entry from id `first` on (undoing pushes made after [`EntityVec::next_key`]
    /// returned `first`).
    pub fn truncate(&mut self, first: K) {
        self.items.truncate(first.index());
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get(&self, k: K) -> Option<&V> {
        self.items.get(k.index())
    }

    pub fn last(&self) -> Option<&V> {
        self.items.last()
    }

    /// Values in id order.
    pub fn iter(&self) -> std::slice::Iter<'_, V> {
        self.items.iter()
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, V> {
        self.items.iter_mut()
    }

    /// `(id, value)` pairs in id order.
    pub fn iter_enumerated(&self) -> impl DoubleEndedIterator<Item = (K, &V)> + '_ {
        self.items.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }

    /// Every id, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = K> + 'static {
        (0..self.items.len()).map(K::new)
    }

    /// The values as a plain slice (for code that only iterates).
    pub fn as_slice(&self) -> &[V] {
        &self.items
    }
}

impl<K: EntityId, V> Default for EntityVec<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: EntityId, V: fmt::Debug> fmt::Debug for EntityVec<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.items).finish()
    }
}

impl<K: EntityId, V> Index<K> for EntityVec<K, V> {
    type Output = V;
    #[inline]
    fn index(&self, k: K) -> &V {
        &self.items[k.index()]
    }
}

impl<K: EntityId, V> IndexMut<K> for EntityVec<K, V> {
    #[inline]
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.items[k.index()]
    }
}

impl<K: EntityId, V> FromIterator<V> for EntityVec<K, V> {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        EntityVec {
            items: iter.into_iter().collect(),
            _key: PhantomData,
        }
    }
}

impl<K: EntityId, V> From<Vec<V>> for EntityVec<K, V> {
    fn from(items: Vec<V>) -> Self {
        EntityVec {
            items,
            _key: PhantomData,
        }
    }
}

impl<'a, K: EntityId, V> IntoIterator for &'a EntityVec<K, V> {
    type Item = &'a V;
    type IntoIter = std::slice::Iter<'a, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<K: EntityId, V> IntoIterator for EntityVec<K, V> {
    type Item = V;
    type IntoIter = std::vec::IntoIter<V>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    entity_id!(A);

    #[test]
    fn push_index_and_print() {
        let mut v: EntityVec<A, &str> = EntityVec::new();
        let a = v.push("x");
        let b = v.push("y");
        assert_eq!((a.index(), b.index()), (0, 1));
        assert_eq!(A::new(1), b);
        assert_eq!(v[b], "y");
        assert_eq!(format!("buf{b}"), "buf1");
        assert_eq!(format!("{b:?}"), "1");
        let keys: Vec<A> = v.keys().collect();
        assert_eq!(keys, vec![a, b]);
        let side: EntityVec<A, bool> = EntityVec::filled(false, v.len());
        assert!(!side[a]);
    }
}
