//! Lists addressed by their own index types, so a session index can never
//! read a visitor.

use std::{
    marker::PhantomData,
    ops::{Index, IndexMut},
};

/// A position in one of the batch's lists; the type says which list.
pub(super) trait SlotIndex: Copy {
    fn new(index: usize) -> Self;
    fn get(self) -> usize;
}

macro_rules! slot_index {
    ($($name:ident),*) => {$(
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub(super) struct $name(usize);

        impl SlotIndex for $name {
            fn new(index: usize) -> Self {
                Self(index)
            }
            fn get(self) -> usize {
                self.0
            }
        }
    )*};
}

slot_index!(VisitorIx, SessionIx, ClickIx);

/// A list addressed only by its own index type, so a session index can never
/// read a visitor.
pub(super) struct Slots<I, T> {
    items: Vec<T>,
    index: PhantomData<I>,
}

impl<I: SlotIndex, T> Slots<I, T> {
    pub fn new() -> Self {
        Self { items: Vec::new(), index: PhantomData }
    }

    pub fn push(&mut self, item: T) -> I {
        self.items.push(item);
        I::new(self.items.len() - 1)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.items.iter_mut()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }
}

impl<I: SlotIndex, T> Index<I> for Slots<I, T> {
    type Output = T;
    fn index(&self, index: I) -> &T {
        &self.items[index.get()]
    }
}

impl<I: SlotIndex, T> IndexMut<I> for Slots<I, T> {
    fn index_mut(&mut self, index: I) -> &mut T {
        &mut self.items[index.get()]
    }
}
