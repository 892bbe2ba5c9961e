//! [`OneOrMany`]: a list that holds one item inline. A step's tool calls are most often one,
//! and the lists of a step (the calls still waiting, their outcomes) then allocate nothing.

/// One item inline, or a `Vec` of any number (an empty `Vec` allocates nothing either).
pub(super) enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    /// The items of `items`, inline if there is exactly one.
    pub(super) fn collect(mut items: impl Iterator<Item = T>) -> Self {
        let Some(first) = items.next() else {
            return OneOrMany::Many(Vec::new());
        };
        match items.next() {
            None => OneOrMany::One(first),
            Some(second) => {
                let mut all = vec![first, second];
                all.extend(items);
                OneOrMany::Many(all)
            }
        }
    }

    pub(super) fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(item) => std::slice::from_ref(item),
            OneOrMany::Many(items) => items,
        }
    }
}

impl<T> IntoIterator for OneOrMany<T> {
    type Item = T;
    type IntoIter = std::iter::Chain<std::option::IntoIter<T>, std::vec::IntoIter<T>>;

    fn into_iter(self) -> Self::IntoIter {
        let (one, many) = match self {
            OneOrMany::One(item) => (Some(item), Vec::new()),
            OneOrMany::Many(items) => (None, items),
        };
        one.into_iter().chain(many)
    }
}

#[cfg(test)]
mod tests {
    use super::OneOrMany;

    #[test]
    fn holds_one_item_inline_and_keeps_the_order_of_many() {
        let none = OneOrMany::collect(std::iter::empty::<u8>());
        assert!(matches!(&none, OneOrMany::Many(items) if items.capacity() == 0));
        assert_eq!(none.into_iter().count(), 0);

        let one = OneOrMany::collect([7].into_iter());
        assert!(matches!(one, OneOrMany::One(7)));
        assert_eq!(one.as_slice(), &[7]);
        assert_eq!(one.into_iter().collect::<Vec<_>>(), [7]);

        let many = OneOrMany::collect([1, 2, 3].into_iter());
        assert_eq!(many.as_slice(), &[1, 2, 3]);
        assert_eq!(many.into_iter().collect::<Vec<_>>(), [1, 2, 3]);
    }
}
