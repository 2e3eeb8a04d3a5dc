//! A small bounded cache of what perception keeps per document or per page
//! (isolated worlds, node registries), most recently put last.

use std::sync::Mutex;

/// Up to `capacity` entries by key; putting past it drops the oldest. A
/// poisoned lock reads as empty: the caches only save work.
pub(crate) struct Recent<K, V> {
    entries: Mutex<Vec<(K, V)>>,
    capacity: usize,
}

impl<K: PartialEq, V> Recent<K, V> {
    /// An empty cache of at most `capacity` entries.
    pub const fn new(capacity: usize) -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
            capacity,
        }
    }

    /// Removes and returns the value kept for `key`.
    pub fn take(&self, key: &K) -> Option<V> {
        let mut entries = self.entries.lock().ok()?;
        let i = entries.iter().position(|(k, _)| k == key)?;
        Some(entries.remove(i).1)
    }

    /// Whether a value is kept for `key`.
    pub fn contains(&self, key: &K) -> bool {
        self.entries
            .lock()
            .is_ok_and(|entries| entries.iter().any(|(k, _)| k == key))
    }

    /// Keeps `value` for `key`, in place of an earlier one.
    pub fn put(&self, key: K, value: V) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|(k, _)| *k != key);
            entries.push((key, value));
            let excess = entries.len().saturating_sub(self.capacity);
            entries.drain(..excess);
        }
    }
}

impl<K: PartialEq, V: Copy> Recent<K, V> {
    /// The value kept for `key`, left in place.
    pub fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.lock().ok()?;
        entries.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn putting_past_the_capacity_drops_the_oldest_and_a_key_is_kept_once() {
        let cache = Recent::new(2);
        cache.put("a", 1);
        cache.put("b", 2);
        cache.put("a", 3);
        assert_eq!(cache.get(&"a"), Some(3));
        assert!(cache.contains(&"b"));
        cache.put("c", 4);
        assert_eq!(cache.get(&"b"), None, "b was the oldest");
        assert!(!cache.contains(&"b"));
        assert_eq!(cache.take(&"a"), Some(3));
        assert_eq!(cache.take(&"a"), None);
        assert_eq!(cache.get(&"c"), Some(4));
    }
}
