//! `Few`: a short list kept in place, spilling into a vector only past its room. A command's
//! options and operands are nearly always a handful, and a vector for each list read was an
//! allocation and a free for every command.

/// Up to `N` items in place, more in a vector. Reads as a slice.
#[derive(Debug, Clone)]
pub struct Few<T: Copy + Default, const N: usize> {
    len: usize,
    inline: [T; N],
    /// Every item, once there are more than `N`.
    spill: Vec<T>,
}

impl<T: Copy + Default, const N: usize> Default for Few<T, N> {
    fn default() -> Self {
        Few { len: 0, inline: [T::default(); N], spill: Vec::new() }
    }
}

impl<T: Copy + Default, const N: usize> Few<T, N> {
    pub fn push(&mut self, item: T) {
        if self.spill.is_empty() {
            if self.len < N {
                self.inline[self.len] = item;
                self.len += 1;
                return;
            }
            self.spill.reserve(2 * N);
            self.spill.extend_from_slice(&self.inline[..self.len]);
        }
        self.spill.push(item);
    }
}

impl<T: Copy + Default, const N: usize> std::ops::Deref for Few<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        if self.spill.is_empty() { &self.inline[..self.len] } else { &self.spill }
    }
}

impl<T: Copy + Default, const N: usize> Extend<T> for Few<T, N> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        items.into_iter().for_each(|item| self.push(item));
    }
}

#[cfg(test)]
mod tests {
    use super::Few;

    #[test]
    fn reads_as_the_items_pushed() {
        let mut few: Few<usize, 2> = Few::default();
        assert!(few.is_empty());
        few.extend(0..2);
        assert_eq!(&*few, [0, 1]);
        few.extend(2..5);
        assert_eq!(&*few, [0, 1, 2, 3, 4]);
    }
}
