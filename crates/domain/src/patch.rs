//! What a partial update asks of one nullable field.

/// A nullable field of a PATCH: left as it is, cleared, or set. On create, `Keep` and `Clear`
/// both leave the field at its default (`None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Patch<T> {
    /// The field was not sent.
    #[default]
    Keep,
    /// The field was sent as `null`.
    Clear,
    Set(T),
}

impl<T> Patch<T> {
    pub fn as_ref(&self) -> Patch<&T> {
        match self {
            Self::Keep => Patch::Keep,
            Self::Clear => Patch::Clear,
            Self::Set(value) => Patch::Set(value),
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Patch<U> {
        match self {
            Self::Keep => Patch::Keep,
            Self::Clear => Patch::Clear,
            Self::Set(value) => Patch::Set(f(value)),
        }
    }

    /// `Set` with `f`'s value, or the error `f` returned.
    pub fn try_map<U, E>(self, f: impl FnOnce(T) -> Result<U, E>) -> Result<Patch<U>, E> {
        Ok(match self {
            Self::Keep => Patch::Keep,
            Self::Clear => Patch::Clear,
            Self::Set(value) => Patch::Set(f(value)?),
        })
    }

    /// The value a new record gets: the one set, or none.
    pub fn into_value(self) -> Option<T> {
        self.applied_to(None)
    }

    /// The field's value after the change: `current` when kept.
    pub fn applied_to(self, current: Option<T>) -> Option<T> {
        match self {
            Self::Keep => current,
            Self::Clear => None,
            Self::Set(value) => Some(value),
        }
    }
}

impl<T: Clone> Patch<T> {
    /// Writes the change into `field`; `Keep` leaves it alone.
    pub fn apply_to(&self, field: &mut Option<T>) {
        *field = self.clone().applied_to(field.take());
    }
}

/// The wire form of a nullable field: absent (`None`) keeps, `null` (`Some(None)`) clears.
impl<T> From<Option<Option<T>>> for Patch<T> {
    fn from(wire: Option<Option<T>>) -> Self {
        match wire {
            None => Self::Keep,
            Some(None) => Self::Clear,
            Some(Some(value)) => Self::Set(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_keeps_null_clears_a_value_sets() {
        let mut field = Some(1);
        Patch::from(None).apply_to(&mut field);
        assert_eq!(field, Some(1));
        Patch::from(Some(Some(2))).apply_to(&mut field);
        assert_eq!(field, Some(2));
        Patch::from(Some(None)).apply_to(&mut field);
        assert_eq!(field, None);
        assert_eq!(Patch::<i32>::Keep.applied_to(Some(1)), Some(1));
        assert_eq!(Patch::Clear.applied_to(Some(1)), None);
        assert_eq!(Patch::Set(2).applied_to(None), Some(2));
    }

    #[test]
    fn a_new_record_gets_only_a_set_value() {
        assert_eq!(Patch::Set(3).into_value(), Some(3));
        assert_eq!(Patch::<i32>::Clear.into_value(), None);
        assert_eq!(Patch::<i32>::Keep.into_value(), None);
    }

    #[test]
    fn mapping_keeps_keep_and_clear() {
        assert_eq!(Patch::Set(2).map(|n| n * 2), Patch::Set(4));
        assert_eq!(Patch::<i32>::Clear.map(|n| n * 2), Patch::Clear);
        assert_eq!(
            Patch::Set("x").try_map(|_| Err::<i32, _>("bad")),
            Err("bad")
        );
        assert_eq!(
            Patch::<&str>::Keep.try_map(|_| Err::<i32, _>("bad")),
            Ok(Patch::Keep)
        );
    }
}
