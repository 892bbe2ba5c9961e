//! [`Shared`]: a value shared by reference counting and copied only when written.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value shared between its clones, copied when one of them is written to (copy on write).
///
/// The conversation history and the tool specs are held this way: every model request shares
/// them with the run instead of copying them, so a step costs the same at 10 or 1,000 messages.
/// Reading goes through `Deref` (`request.messages.len()`, `request.messages[0]`); writing
/// through `DerefMut` (`request.messages.push(..)`) first makes the value this clone's own —
/// a copy only when another clone still holds it, so an edit to a request's messages never
/// reaches the run's history. It serializes as the value itself.
///
/// ```
/// use hookchain::Shared;
///
/// let history: Shared<Vec<u32>> = Shared::new(vec![1, 2]);
/// let mut request = history.clone(); // no copy
/// request.push(3); // copies once: the history is unchanged
/// assert_eq!(*history, [1, 2]);
/// assert_eq!(*request, [1, 2, 3]);
/// ```
pub struct Shared<T>(Arc<T>);

impl<T> Shared<T> {
    /// `value`, shared.
    pub fn new(value: T) -> Self {
        Shared(Arc::new(value))
    }

    /// Whether `self` and `other` share one value (no copy was made between them).
    #[must_use]
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T: Clone> Shared<T> {
    /// The value, without a copy if this is its only holder.
    #[must_use]
    pub fn into_inner(self) -> T {
        Arc::unwrap_or_clone(self.0)
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<T: Default> Default for Shared<T> {
    fn default() -> Self {
        Shared::new(T::default())
    }
}

impl<T> From<T> for Shared<T> {
    fn from(value: T) -> Self {
        Shared::new(value)
    }
}

impl<'a, T> IntoIterator for &'a Shared<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        (&**self).into_iter()
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other) || **self == **other
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Shared<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Shared::new)
    }
}

#[cfg(test)]
mod tests {
    use super::Shared;

    #[test]
    fn a_clone_shares_until_written() {
        let first = Shared::new(vec![1]);
        let mut second = first.clone();
        assert!(first.ptr_eq(&second));
        second.push(2);
        assert!(!first.ptr_eq(&second));
        assert_eq!((first.len(), second.len()), (1, 2));
        // The only holder writes in place.
        let before = second.as_ptr();
        second.push(3);
        assert_eq!(second.as_ptr(), before);
    }

    #[test]
    fn it_serializes_as_the_value() {
        let shared = Shared::new(vec!["a".to_owned()]);
        let json = serde_json::to_string(&shared).unwrap();
        assert_eq!(json, r#"["a"]"#);
        let back: Shared<Vec<String>> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, shared);
    }
}
